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

use super::shape::Body;
use crate::error::{Code, Error, Result};
use crate::kinds::Wire;

/// A body's members in their order, each value as its text. Read from the body's frame
/// alone (its head and tail, around the list emptied), the list's value spliced back
/// from the elements: the elements, most of a body, are never parsed again.
pub(crate) struct Members(Vec<(String, String)>);

/// A JSON object's members in their order, each value borrowed as its text.
struct Frame<'a>(Vec<(String, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Frame<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Frame<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Frame<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
                    out.push((k, v));
                }
                Ok(Frame(out))
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
pub(crate) fn count_body(wire: Wire, model: Option<&str>, body: &Body) -> Result<String> {
    wire.form().count_body(model, body, &Members::of(body)?)
}

impl Members {
    /// The members of `body`: its frame read as a JSON object, and the member whose value
    /// holds the list (the frame's junction, where the head ends) given its elements.
    /// A frame that does not read, or a list no member holds, is `data_corrupted`.
    fn of(body: &Body) -> Result<Members> {
        let corrupted = |why: String| {
            Error::new(
                Code::DataCorrupted,
                format!("the request body does not read as a JSON object ({why})"),
            )
        };
        let frame = body.frame_text();
        let read: Frame<'_> = serde_json::from_str(&frame).map_err(|e| corrupted(e.to_string()))?;
        let junction = body.head.len();
        let mut spliced = false;
        let members = read
            .0
            .into_iter()
            .map(|(key, value)| {
                // A borrowed RawValue is a slice of `frame`: its place there is its offset.
                let start = value.get().as_ptr() as usize - frame.as_ptr() as usize;
                let end = start + value.get().len();
                if !(start < junction && junction < end) {
                    return (key, value.get().to_string());
                }
                spliced = true;
                let mut text = String::with_capacity(body.len() - frame.len() + value.get().len());
                text.push_str(&frame[start..junction]);
                body.push_elements(&mut text);
                text.push_str(&frame[junction..end]);
                (key, text)
            })
            .collect();
        if !spliced && !body.elements.is_empty() {
            return Err(corrupted("no member holds its list".into()));
        }
        Ok(Members(members))
    }

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
            .map(|(k, v)| format!("{}:{}", super::json::to_text(k), v))
            .collect();
        format!("{{{}}}", kept.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body of `head`, `elements` and `tail`, as a renderer lays one out.
    fn body(head: &str, elements: &[&str], tail: &str) -> Body {
        Body {
            head: head.into(),
            elements: elements.iter().map(|e| e.to_string()).collect(),
            tail: tail.into(),
        }
    }

    #[test]
    fn each_wire_keeps_what_its_endpoint_takes_as_it_was_written() {
        let m = [
            r#"{"role":"user","content":"a, [b]"}"#,
            r#"{"role":"assistant","content":"}"}"#,
        ];
        let a = body(
            r#"{"model":"m","max_tokens":10,"system":[{"type":"text","text":"é\n"}],"messages":["#,
            &m,
            r#"],"metadata":{"user_id":"u"},"stop_sequences":["x"],"tools":[{"name":"t","input_schema":{"b":1.50,"a":2}}]}"#,
        );
        assert_eq!(
            count_body(Wire::Anthropic, Some("m"), &a).unwrap(),
            r#"{"model":"m","system":[{"type":"text","text":"é\n"}],"messages":[{"role":"user","content":"a, [b]"},{"role":"assistant","content":"}"}],"tools":[{"name":"t","input_schema":{"b":1.50,"a":2}}]}"#
        );
        let r = body(
            r#"{"model":"m","max_output_tokens":5,"instructions":"i","input":["#,
            &[r#"{"type":"message","role":"user","content":"q"}"#],
            r#"],"store":false,"prompt_cache_key":"k","reasoning":{"effort":"low"}}"#,
        );
        assert_eq!(
            count_body(Wire::Responses, Some("m"), &r).unwrap(),
            r#"{"model":"m","instructions":"i","input":[{"type":"message","role":"user","content":"q"}],"reasoning":{"effort":"low"}}"#
        );
        let g = body(
            r#"{"contents":["#,
            &[r#"{"role":"user","parts":[{"text":"x"}]}"#],
            r#"],"generationConfig":{"maxOutputTokens":5}}"#,
        );
        assert_eq!(
            count_body(Wire::Gemini, Some("gemini-3.5-flash"), &g).unwrap(),
            r#"{"generateContentRequest":{"model":"models/gemini-3.5-flash","contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"maxOutputTokens":5}}}"#
        );
        let c = body(
            r#"{"system":[{"text":"s"}],"messages":["#,
            &[],
            r#"],"inferenceConfig":{"maxTokens":5},"toolConfig":{"tools":[]}}"#,
        );
        assert_eq!(
            count_body(Wire::Converse, None, &c).unwrap(),
            r#"{"input":{"converse":{"system":[{"text":"s"}],"messages":[],"toolConfig":{"tools":[]}}}}"#
        );
        let e = count_body(
            Wire::Chat,
            Some("gpt-5.5"),
            &body(r#"{"model":"gpt-5.5","messages":["#, &m, "]}"),
        )
        .unwrap_err();
        assert_eq!(e.code, Code::CountUnavailable);
        assert!(
            e.message
                .starts_with("count_unavailable: the chat wire has no token-count endpoint"),
            "{}",
            e.message
        );
        assert_eq!(
            count_body(Wire::Anthropic, None, &a).unwrap_err().code,
            Code::CountUnavailable
        );
    }

    #[test]
    fn a_body_whose_frame_does_not_hold_its_list_is_corrupted_not_counted_short() {
        // Elements after the frame's object, and a frame that does not read: neither is
        // counted without the elements it cannot place.
        for b in [
            body(
                r#"{"model":"m","messages":[]}"#,
                &[r#"{"role":"user","content":"a"}"#],
                "",
            ),
            body(
                r#"{"model":"m","messages":["#,
                &[r#"{"role":"user","content":"a"}"#],
                "]",
            ),
        ] {
            let e = count_body(Wire::Anthropic, Some("m"), &b).unwrap_err();
            assert_eq!(e.code, Code::DataCorrupted, "{}", e.message);
            assert!(e.message.contains("does not read as a JSON object"), "{}", e.message);
        }
    }
}
