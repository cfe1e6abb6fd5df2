//! Count bodies (docs/guide.md, "Count bodies"): what a provider's token-count endpoint takes for
//! the request a body is. The body's own bytes are kept: each key the endpoint takes is
//! copied as the body spells it (its value's text untouched), in the body's order; the
//! keys the endpoint does not take are left out.
//!
//! - `anthropic`: `POST /v1/messages/count_tokens` takes the Messages body less
//!   `max_tokens`, `metadata`, `stop_sequences`, `service_tier`, `container`,
//!   `inference_geo`, `diagnostics` (anthropic's `MessageCountTokensParams`).
//! - `responses`: `POST /v1/responses/input_tokens` takes `model`, `input`,
//!   `instructions`, `previous_response_id`, `reasoning`, `text`, `tool_choice`, `tools`,
//!   `parallel_tool_calls`, `truncation`, `conversation` (openai's `InputTokenCountParams`).
//! - `gemini`: `POST /v1beta/models/{model}:countTokens` takes the whole
//!   `generateContent` request under `generateContentRequest`, with the model's resource
//!   name (what counts the system instruction and the tools beside the contents).
//! - `converse`: `POST /model/{modelId}/count-tokens` takes the Converse body's
//!   `messages`, `system`, `toolConfig` and `additionalModelRequestFields` under
//!   `input.converse` (botocore's `CountTokensRequest`).
//! - `chat`: OpenAI's Chat Completions has no count endpoint: refused.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{Code, Error, Result};
use crate::kinds::Wire;

/// A JSON object's members in their order, each value as its text.
pub(crate) struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Members, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    out.push((k, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

pub(crate) fn unavailable(what: String) -> Error {
    Error::new(Code::CountUnavailable, what)
        .hint("Count bodies exist for the anthropic, responses, gemini and converse wires (their providers' token-count endpoints).")
}

/// The count body of `body`, a request on `wire` for `model` (`None`: the body names no
/// model).
pub(crate) fn count_body(wire: Wire, model: Option<&str>, body: &str) -> Result<String> {
    let members: Members = serde_json::from_str(body).map_err(|e| {
        Error::new(
            Code::DataCorrupted,
            format!("the request body does not read as a JSON object ({e})"),
        )
    })?;
    wire.form().count_body(model, body, &members)
}

impl Members {
    /// Whether the body has a member `key`.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    /// The members named in `keys`, in the body's order, each value's text untouched.
    pub(crate) fn keep(&self, keys: &[&str]) -> String {
        let kept: Vec<String> = self
            .0
            .iter()
            .filter(|(k, _)| keys.contains(&k.as_str()))
            .map(|(k, v)| format!("{}:{}", super::json::to_text(k), v.get()))
            .collect();
        format!("{{{}}}", kept.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_wire_keeps_what_its_endpoint_takes_as_it_was_written() {
        let body = r#"{"model":"m","max_tokens":10,"system":[{"type":"text","text":"é\n"}],"messages":[],"metadata":{"user_id":"u"},"stop_sequences":["x"],"tools":[{"name":"t","input_schema":{"b":1.50,"a":2}}]}"#;
        assert_eq!(
            count_body(Wire::Anthropic, Some("m"), body).unwrap(),
            r#"{"model":"m","system":[{"type":"text","text":"é\n"}],"messages":[],"tools":[{"name":"t","input_schema":{"b":1.50,"a":2}}]}"#
        );
        let r = r#"{"model":"m","max_output_tokens":5,"instructions":"i","input":[],"store":false,"prompt_cache_key":"k","reasoning":{"effort":"low"}}"#;
        assert_eq!(
            count_body(Wire::Responses, Some("m"), r).unwrap(),
            r#"{"model":"m","instructions":"i","input":[],"reasoning":{"effort":"low"}}"#
        );
        let g = r#"{"contents":[],"generationConfig":{"maxOutputTokens":5}}"#;
        assert_eq!(
            count_body(Wire::Gemini, Some("gemini-3.5-flash"), g).unwrap(),
            r#"{"generateContentRequest":{"model":"models/gemini-3.5-flash","contents":[],"generationConfig":{"maxOutputTokens":5}}}"#
        );
        let c =
            r#"{"system":[{"text":"s"}],"messages":[],"inferenceConfig":{"maxTokens":5},"toolConfig":{"tools":[]}}"#;
        assert_eq!(
            count_body(Wire::Converse, None, c).unwrap(),
            r#"{"input":{"converse":{"system":[{"text":"s"}],"messages":[],"toolConfig":{"tools":[]}}}}"#
        );
        let e = count_body(Wire::Chat, Some("gpt-5.5"), r#"{"model":"gpt-5.5"}"#).unwrap_err();
        assert_eq!(e.code, Code::CountUnavailable);
        assert!(
            e.message
                .starts_with("count_unavailable: the chat wire has no token-count endpoint"),
            "{}",
            e.message
        );
        assert_eq!(
            count_body(Wire::Anthropic, None, body).unwrap_err().code,
            Code::CountUnavailable
        );
    }
}
