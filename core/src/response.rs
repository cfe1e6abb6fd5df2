//! A provider's response body, as its API returned it, read into what the next compile
//! needs (docs/design.md, "The response loop"): the assistant's parts in the round
//! format (text, tool calls, thinking and reasoning verbatim), the stop reason, and the
//! usage as billed. Five shapes, each read in its wire's folder (`wire/<wire>/response.rs`,
//! tried by `wire::read_response`: the turn's wire first, then each in turn): Anthropic
//! `Message`, OpenAI `ChatCompletion`,
//! OpenAI Responses `Response`, Gemini `GenerateContentResponse`, Bedrock
//! `ConverseResponse`. Anything else, or a part of none of them, is refused as
//! `response_invalid` with its JSON pointer. This file holds the response, its usage and
//! what the readers share.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::error::{Code, Error, Result};
use crate::json_at::{At, Items, Obj, Refusal};
use crate::kinds::Wire;
use crate::part_json::write;

/// Input and output tokens as the provider billed them. `input` is the uncached
/// input; `billed_input` everything the prompt was billed for (input, cache writes and
/// cache reads), which the calibration compares with the estimate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// The input tokens neither read from nor written to cache.
    pub input_tokens: i64,
    /// The input tokens written to cache (0 on Gemini, which bills no writes).
    pub cache_creation_tokens: i64,
    /// The input tokens read from cache.
    pub cache_read_tokens: i64,
    /// The output tokens (on Gemini, candidates plus thoughts).
    pub output_tokens: i64,
    /// Everything the prompt was billed for: input, cache writes and cache reads.
    pub billed_input_tokens: i64,
    /// Cache writes by TTL, as the provider split them (`{"5m": N, "1h": M}` on
    /// Anthropic, `{"30m": N, "12h": M}` on Responses); empty when it did not.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub cache_creation_by_ttl: std::collections::BTreeMap<String, i64>,
}

/// A response, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The wire whose response shape it was read as.
    pub shape: Wire,
    /// The provider's id of the response (idempotency).
    pub id: Option<String>,
    /// The model the provider names (`model`; Gemini's `modelVersion`); `None` when absent.
    pub model: Option<String>,
    /// The assistant's parts in the round format (`rounds.assistant`).
    pub assistant: Vec<Value>,
    /// The text parts, concatenated: a direct reply's content.
    pub text: String,
    /// The pointer of the first tool call, if any.
    pub first_call: Option<String>,
    /// Why the output stopped, as the provider spells it (`stop_reason`, `finish_reason`,
    /// `incomplete_details.reason` else `status`, `finishReason`); `None` when absent.
    pub stop_reason: Option<String>,
    /// The usage as billed; `None` when the response carries no usage object.
    pub usage: Option<Usage>,
    /// What the provider said about the prompt cache against the previous response a
    /// request named (`request_options.cache_diagnostics`): Anthropic's `diagnostics`,
    /// OpenAI's `prompt_cache_diagnostics`, as they came; `None` when it said nothing.
    pub cache_miss: Option<Value>,
}

pub(crate) fn invalid(path: &str, what: impl AsRef<str>) -> Error {
    Error::new(
        Code::ResponseInvalid,
        format!("the response {} at {}", what.as_ref(), if path.is_empty() { "/" } else { path }),
    )
    .detail(format!("The value at {} is not valid.", if path.is_empty() { "/" } else { path }))
    .hint("record_response takes a response body as the provider's API returned it: an Anthropic Message, an OpenAI ChatCompletion or Response, a Gemini GenerateContentResponse or a Bedrock ConverseResponse.")
}

pub(crate) fn refused(r: Refusal) -> Error {
    invalid(&r.path, r.message)
}

pub(crate) fn obj<'v>(at: &At<'v>) -> Result<Obj<'v>> {
    at.object("is not an object").map_err(refused)
}

pub(crate) fn list<'v>(at: &At<'v>) -> Result<Items<'v>> {
    if at.is_absent() {
        return Err(refused(at.refuse("is missing")));
    }
    at.list("is not a list").map_err(refused)
}

pub(crate) fn string(o: &Obj<'_>, key: &str) -> Result<String> {
    let at = o.at(key);
    if at.is_absent() {
        return Err(refused(at.refuse("is missing")));
    }
    at.str("is not a string").map(str::to_string).map_err(refused)
}

pub(crate) fn opt_string(o: &Map<String, Value>, key: &str) -> Option<String> {
    o.get(key).and_then(Value::as_str).map(str::to_string)
}

pub(crate) fn int(o: Option<&Value>, key: &str) -> i64 {
    o.and_then(|u| u.get(key)).and_then(Value::as_i64).unwrap_or(0)
}

/// A tool call's arguments: an object (JSON text on the OpenAI wires).
pub(crate) fn arguments(at: &At<'_>) -> Result<Value> {
    match at.value {
        Value::Null => Ok(json!({})),
        Value::Object(_) => Ok(at.value.clone()),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(parsed @ Value::Object(_)) => Ok(parsed),
            _ => Err(refused(at.refuse("is not a JSON object"))),
        },
        _ => Err(refused(at.refuse("is not an object"))),
    }
}

/// The largest token count a usage may hold (what `prompt.responses` stores).
const MAX_COUNT: u64 = i32::MAX as u64;

/// Every number of a usage object (at any depth) is a token count: a whole number from 0
/// to `MAX_COUNT`; anything else is refused at its pointer, never stored as another
/// number. What is not a count, by its key, is not read: a cost (OpenRouter's `cost` and
/// `cost_details`, xAI's `cost_in_usd_ticks`), a time (Groq's `queue_time`, Mistral's
/// `prompt_audio_seconds`), xAI's `num_sources_used`.
pub(crate) fn counts(at: &At<'_>) -> Result<()> {
    token_counts(at, true)
}

/// Whether a usage key names something else than tokens.
fn not_a_count(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["cost", "time", "seconds"].iter().any(|k| key.contains(k)) || key == "num_sources_used"
}

fn token_counts(at: &At<'_>, counted: bool) -> Result<()> {
    match at.value {
        Value::Number(n) if !counted || n.as_u64().is_some_and(|n| n <= MAX_COUNT) => Ok(()),
        Value::Number(_) => Err(refused(at.refuse(format_args!(
            "is not a token count (a whole number from 0 to {MAX_COUNT})"
        )))),
        Value::Object(map) => map
            .iter()
            .try_for_each(|(k, v)| token_counts(&at.child(v, k), counted && !not_a_count(k))),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| token_counts(&at.child(v, i), counted)),
        _ => Ok(()),
    }
}

/// Parts and the running text, with where the first tool call was.
#[derive(Default)]
pub(crate) struct Parts {
    pub(crate) assistant: Vec<Value>,
    text: String,
    first_call: Option<String>,
}

impl Parts {
    pub(crate) fn text(&mut self, t: String) {
        self.said(t, &[]);
    }

    /// Text with what its wire needs to replay it (a Responses message's `item_id` and
    /// `phase`, a Gemini `signature`).
    pub(crate) fn said(&mut self, t: String, native: &[(&str, Option<String>)]) {
        self.assistant.push(write::text(&t, native));
        self.text.push_str(&t);
    }

    pub(crate) fn call(
        &mut self,
        path: String,
        id: String,
        name: String,
        input: Value,
        native: &[(&str, Option<String>)],
    ) {
        self.first_call.get_or_insert(path);
        self.assistant.push(write::tool_call(&id, &name, input, native));
    }

    /// A block or item pgprompt does not interpret, kept verbatim for its wire.
    pub(crate) fn provider(&mut self, wire: Wire, block: &Map<String, Value>) {
        self.assistant.push(write::provider(wire, block));
    }

    /// The response: the parts read, the stop reason and usage, and the id, model and
    /// cache diagnostics read at the keys `heading` names.
    pub(crate) fn done(
        self,
        shape: Wire,
        heading: &Heading,
        o: &Map<String, Value>,
        stop: Option<String>,
        usage: Option<Usage>,
    ) -> Response {
        Response {
            shape,
            id: heading.id.and_then(|k| opt_string(o, k)),
            model: heading.model.and_then(|k| opt_string(o, k)),
            assistant: self.assistant,
            text: self.text,
            first_call: self.first_call,
            stop_reason: stop,
            usage,
            cache_miss: heading
                .diagnostics
                .and_then(|k| o.get(k))
                .filter(|v| v.is_object())
                .cloned(),
        }
    }
}

/// Where a wire's response keeps its id, its model and the provider's cache diagnostics
/// (`None`: it has none).
pub(crate) struct Heading {
    /// The response's id.
    pub(crate) id: Option<&'static str>,
    /// The model the provider names.
    pub(crate) model: Option<&'static str>,
    /// What the provider said about the prompt cache.
    pub(crate) diagnostics: Option<&'static str>,
}

/// Token figures added without overflow.
pub(crate) fn sum(values: &[i64]) -> i64 {
    values.iter().fold(0i64, |a, b| a.saturating_add(*b))
}

/// The cache writes a provider listed by TTL (Converse's `cacheDetails`:
/// `[{"ttl": "5m", "inputTokens": N}, ...]`).
pub(crate) fn by_ttl_list(list: Option<&Value>) -> std::collections::BTreeMap<String, i64> {
    let mut out = std::collections::BTreeMap::new();
    for d in list.and_then(Value::as_array).into_iter().flatten() {
        if let Some(ttl) = d.get("ttl").and_then(Value::as_str) {
            let n = out.entry(ttl.to_string()).or_insert(0i64);
            *n = n.saturating_add(int(Some(d), "inputTokens"));
        }
    }
    out
}

/// The cache writes a provider split by TTL: (our name, its key) pairs present.
pub(crate) fn by_ttl(split: Option<&Value>, keys: &[(&str, &str)]) -> std::collections::BTreeMap<String, i64> {
    let Some(split) = split.filter(|s| s.is_object()) else {
        return Default::default();
    };
    keys.iter()
        .filter(|(_, key)| split.get(*key).is_some())
        .map(|(ttl, key)| (ttl.to_string(), int(Some(split), key)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::read_response_value;

    fn parse(v: &Value) -> Result<Response> {
        read_response_value(v, None)
    }

    /// A shape two wires share is read as the turn's wire (a body both Anthropic's and
    /// Chat's readers claim, contrived: no two of today's wires share one); with no wire,
    /// or a wire whose shape it is not, as the first wire declared whose shape it is.
    #[test]
    fn a_shape_two_wires_share_is_read_as_the_turns() {
        let both = json!({"id": "r1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "as anthropic"}],
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "as chat"}}]});
        let text = both.to_string();
        let read = |wire| crate::wire::read_response(&text, wire).unwrap().0;
        assert_eq!(read(Some(Wire::Chat)).shape, Wire::Chat);
        assert_eq!(read(Some(Wire::Chat)).text, "as chat");
        assert_eq!(read(None).shape, Wire::Anthropic);
        assert_eq!(read(Some(Wire::Gemini)).text, "as anthropic");
        assert_eq!(
            crate::wire::read_response(&text, None).unwrap().1,
            crate::seal::digest(&text)
        );
    }

    #[test]
    fn each_shape_reads_into_round_parts() {
        let a = parse(
            &json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
            "content": [{"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "text", "text": "Hi"},
                        {"type": "tool_use", "id": "tu1", "name": "f", "input": {"a": 1}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5,
            "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000}}),
        )
        .unwrap();
        assert_eq!(a.shape, Wire::Anthropic);
        assert_eq!(a.id.as_deref(), Some("msg_1"));
        assert_eq!(a.assistant.len(), 3);
        assert_eq!(a.first_call.as_deref(), Some("/content/2"));
        assert_eq!(a.usage.unwrap().billed_input_tokens, 1110);

        let c = parse(
            &json!({"id": "cc", "object": "chat.completion", "choices": [{"index": 0,
            "finish_reason": "stop", "message": {"role": "assistant", "content": "Hello"}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 20}}}),
        )
        .unwrap();
        assert_eq!((c.text.as_str(), c.first_call.is_none()), ("Hello", true));
        assert_eq!(c.usage.unwrap().input_tokens, 30);

        let bad = parse(
            &json!({"object": "chat.completion", "choices": [{"message": {"role": "assistant",
            "tool_calls": [{"id": "x", "type": "function", "function": {"name": "f", "arguments": "[1]"}}]}}]}),
        )
        .unwrap_err();
        assert_eq!(
            bad.message,
            "response_invalid: the response is not a JSON object at /choices/0/message/tool_calls/0/function/arguments"
        );
        assert!(parse(&json!({"hello": 1}))
            .unwrap_err()
            .message
            .contains("no known shape"));
    }
}
