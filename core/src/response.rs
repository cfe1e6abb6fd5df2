//! A provider's response body, as its API returned it, read into what the next compile
//! needs (docs/design.md, "The response loop"): the assistant's parts in the round
//! format (text, tool calls, thinking and reasoning verbatim), the stop reason, and the
//! usage as billed. Five shapes: Anthropic `Message`, OpenAI `ChatCompletion`, OpenAI
//! Responses `Response`, Gemini `GenerateContentResponse`, Bedrock `ConverseResponse`. Anything else, or a part of
//! none of them, is refused as `response_invalid` with its JSON pointer.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::error::{Code, Error, Result};
use crate::json_at::{At, Items, Obj, Refusal};
use crate::kinds::Wire;

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

fn invalid(path: &str, what: impl AsRef<str>) -> Error {
    Error::new(
        Code::ResponseInvalid,
        format!("the response {} at {}", what.as_ref(), if path.is_empty() { "/" } else { path }),
    )
    .detail(format!("The value at {} is not valid.", if path.is_empty() { "/" } else { path }))
    .hint("record_response takes a response body as the provider's API returned it: an Anthropic Message, an OpenAI ChatCompletion or Response, a Gemini GenerateContentResponse or a Bedrock ConverseResponse.")
}

fn refused(r: Refusal) -> Error {
    invalid(&r.path, r.message)
}

fn obj<'v>(at: &At<'v>) -> Result<Obj<'v>> {
    at.object("is not an object").map_err(refused)
}

fn list<'v>(at: &At<'v>) -> Result<Items<'v>> {
    if at.is_absent() {
        return Err(refused(at.refuse("is missing")));
    }
    at.list("is not a list").map_err(refused)
}

fn string(o: &Obj<'_>, key: &str) -> Result<String> {
    let at = o.at(key);
    if at.is_absent() {
        return Err(refused(at.refuse("is missing")));
    }
    at.str("is not a string").map(str::to_string).map_err(refused)
}

fn opt_string(o: &Map<String, Value>, key: &str) -> Option<String> {
    o.get(key).and_then(Value::as_str).map(str::to_string)
}

fn int(o: Option<&Value>, key: &str) -> i64 {
    o.and_then(|u| u.get(key)).and_then(Value::as_i64).unwrap_or(0)
}

/// A tool call's arguments: an object (JSON text on the OpenAI wires).
fn arguments(at: &At<'_>) -> Result<Value> {
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

/// Reads a response body of any of the five shapes.
pub fn parse(v: &Value) -> Result<Response> {
    let o = obj(&At::root(v, ""))?;
    let tag = |key: &str| o.map.get(key).and_then(Value::as_str);
    if tag("type") == Some("message") && o.map.contains_key("content") {
        counts(&o.at("usage"))?;
        anthropic(&o)
    } else if tag("object") == Some("chat.completion") {
        counts(&o.at("usage"))?;
        chat(&o)
    } else if tag("object") == Some("response") {
        counts(&o.at("usage"))?;
        responses(&o)
    } else if o.map.contains_key("candidates") {
        counts(&o.at("usageMetadata"))?;
        gemini(&o)
    } else if o.map.contains_key("output") && o.map.contains_key("stopReason") {
        counts(&o.at("usage"))?;
        converse(&o)
    } else {
        Err(invalid("", "is of no known shape"))
    }
}

/// The largest token count a usage may hold (what `prompt.responses` stores).
const MAX_COUNT: u64 = i32::MAX as u64;

/// Every number of a usage object (at any depth) is a token count: a whole number from 0
/// to `MAX_COUNT`; anything else is refused at its pointer, never stored as another
/// number.
fn counts(at: &At<'_>) -> Result<()> {
    match at.value {
        Value::Number(n) if n.as_u64().is_some_and(|n| n <= MAX_COUNT) => Ok(()),
        Value::Number(_) => Err(refused(at.refuse(format_args!(
            "is not a token count (a whole number from 0 to {MAX_COUNT})"
        )))),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| counts(&at.child(v, k))),
        Value::Array(items) => items.iter().enumerate().try_for_each(|(i, v)| counts(&at.child(v, i))),
        _ => Ok(()),
    }
}

/// Parts and the running text, with where the first tool call was.
#[derive(Default)]
struct Parts {
    assistant: Vec<Value>,
    text: String,
    first_call: Option<String>,
}

impl Parts {
    fn text(&mut self, t: String) {
        self.said(t, &[]);
    }

    /// Text with what its wire needs to replay it (a Responses message's `item_id` and
    /// `phase`, a Gemini `signature`).
    fn said(&mut self, t: String, native: &[(&str, Option<String>)]) {
        self.text.push_str(&t);
        let mut part = json!({"type": "text", "text": t});
        for (key, value) in native {
            if let Some(v) = value {
                part[*key] = Value::String(v.clone());
            }
        }
        self.assistant.push(part);
    }

    fn call(&mut self, path: String, id: String, name: String, input: Value, native: &[(&str, Option<String>)]) {
        self.first_call.get_or_insert(path);
        let mut call = json!({"type": "tool_call", "id": id, "name": name, "input": input});
        for (key, value) in native {
            if let Some(v) = value {
                call[*key] = Value::String(v.clone());
            }
        }
        self.assistant.push(call);
    }

    /// A block or item pgprompt does not interpret, kept verbatim for its wire.
    fn provider(&mut self, wire: Wire, block: &Map<String, Value>) {
        self.assistant
            .push(json!({"type": "provider", "wire": wire.as_str(), "block": Value::Object(block.clone())}));
    }

    fn done(self, shape: Wire, o: &Map<String, Value>, stop: Option<String>, usage: Option<Usage>) -> Response {
        Response {
            shape,
            id: match shape {
                Wire::Gemini => opt_string(o, "responseId"),
                // A Converse response has no id (nor model: the request's URL named it).
                Wire::Converse => None,
                Wire::Anthropic | Wire::Chat | Wire::Responses => opt_string(o, "id"),
            },
            model: match shape {
                Wire::Gemini => opt_string(o, "modelVersion"),
                Wire::Converse => None,
                Wire::Anthropic | Wire::Chat | Wire::Responses => opt_string(o, "model"),
            },
            assistant: self.assistant,
            text: self.text,
            first_call: self.first_call,
            stop_reason: stop,
            usage,
            cache_miss: match shape {
                Wire::Anthropic => o.get("diagnostics"),
                Wire::Responses => o.get("prompt_cache_diagnostics"),
                Wire::Chat | Wire::Gemini | Wire::Converse => None,
            }
            .filter(|v| v.is_object())
            .cloned(),
        }
    }
}

fn anthropic(o: &Obj<'_>) -> Result<Response> {
    let mut parts = Parts::default();
    for b in list(&o.at("content"))? {
        let path = b.path().to_string();
        let b = obj(&b)?;
        match b.at("type").value.as_str() {
            Some("text") => parts.text(string(&b, "text")?),
            Some("tool_use") => {
                let input = arguments(&b.at("input"))?;
                parts.call(path, string(&b, "id")?, string(&b, "name")?, input, &[]);
            }
            Some("thinking") => parts.assistant.push(json!({"type": "thinking",
                "thinking": string(&b, "thinking")?, "signature": string(&b, "signature")?})),
            Some("redacted_thinking") => parts
                .assistant
                .push(json!({"type": "redacted_thinking", "data": string(&b, "data")?})),
            // Server tools' calls and results (tool search, web search, code execution,
            // ...): replayed as they came, in place.
            Some(_) => parts.provider(Wire::Anthropic, b.map),
            None => return Err(refused(b.at("type").refuse("is missing"))),
        }
    }
    let o = o.map;
    let usage = o.get("usage").map(|u| {
        let (input, creation, read) = (
            int(Some(u), "input_tokens"),
            int(Some(u), "cache_creation_input_tokens"),
            int(Some(u), "cache_read_input_tokens"),
        );
        let split = u.get("cache_creation");
        Usage {
            input_tokens: input,
            cache_creation_tokens: creation,
            cache_read_tokens: read,
            output_tokens: int(Some(u), "output_tokens"),
            billed_input_tokens: sum(&[input, creation, read]),
            cache_creation_by_ttl: by_ttl(
                split,
                &[("5m", "ephemeral_5m_input_tokens"), ("1h", "ephemeral_1h_input_tokens")],
            ),
        }
    });
    Ok(parts.done(Wire::Anthropic, o, opt_string(o, "stop_reason"), usage))
}

/// Token figures added without overflow.
fn sum(values: &[i64]) -> i64 {
    values.iter().fold(0i64, |a, b| a.saturating_add(*b))
}

/// The cache writes a provider listed by TTL (Converse's `cacheDetails`:
/// `[{"ttl": "5m", "inputTokens": N}, ...]`).
fn by_ttl_list(list: Option<&Value>) -> std::collections::BTreeMap<String, i64> {
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
fn by_ttl(split: Option<&Value>, keys: &[(&str, &str)]) -> std::collections::BTreeMap<String, i64> {
    let Some(split) = split.filter(|s| s.is_object()) else {
        return Default::default();
    };
    keys.iter()
        .filter(|(_, key)| split.get(*key).is_some())
        .map(|(ttl, key)| (ttl.to_string(), int(Some(split), key)))
        .collect()
}

fn chat(o: &Obj<'_>) -> Result<Response> {
    let choices = o.at("choices");
    let first = list(&choices)?
        .next()
        .ok_or_else(|| refused(choices.refuse("is empty")))?;
    let choice = obj(&first)?;
    let message = obj(&choice.at("message"))?;
    let mut parts = Parts::default();
    if let Some(Value::String(t)) = message.map.get("content") {
        if !t.is_empty() {
            parts.text(t.clone());
        }
    }
    let calls = message.at("tool_calls");
    if !calls.is_null() {
        for c in list(&calls)? {
            let path = c.path().to_string();
            let c = obj(&c)?;
            let f = obj(&c.at("function"))?;
            let input = arguments(&f.at("arguments"))?;
            parts.call(path, string(&c, "id")?, string(&f, "name")?, input, &[]);
        }
    }
    let (o, choice) = (o.map, choice.map);
    let usage = o.get("usage").filter(|u| u.is_object()).map(|u| {
        let prompt = int(Some(u), "prompt_tokens");
        let cached = int(u.get("prompt_tokens_details"), "cached_tokens");
        let written = int(u.get("prompt_tokens_details"), "cache_write_tokens");
        Usage {
            input_tokens: prompt.saturating_sub(cached).saturating_sub(written),
            cache_creation_tokens: written,
            cache_read_tokens: cached,
            output_tokens: int(Some(u), "completion_tokens"),
            billed_input_tokens: prompt,
            cache_creation_by_ttl: Default::default(),
        }
    });
    Ok(parts.done(Wire::Chat, o, opt_string(choice, "finish_reason"), usage))
}

/// The texts and refusals of a Responses `message` item, joined.
fn message_text(item: &Obj<'_>) -> Result<String> {
    let mut text = String::new();
    for c in list(&item.at("content"))? {
        let c = obj(&c)?;
        match c.at("type").value.as_str() {
            Some("output_text") => text.push_str(&string(&c, "text")?),
            Some("refusal") => text.push_str(&string(&c, "refusal")?),
            _ => {
                return Err(refused(
                    c.at("type").refuse("is a content part pgprompt does not record"),
                ))
            }
        }
    }
    Ok(text)
}

fn responses(o: &Obj<'_>) -> Result<Response> {
    let mut parts = Parts::default();
    for item in list(&o.at("output"))? {
        let path = item.path().to_string();
        let item = obj(&item)?;
        let m = item.map;
        match item.at("type").value.as_str() {
            Some("message") => {
                // One text per message (its texts and refusals joined), with the item's
                // id and phase: the message is replayed as the item it was.
                let text = message_text(&item)?;
                parts.said(
                    text,
                    &[("item_id", opt_string(m, "id")), ("phase", opt_string(m, "phase"))],
                );
            }
            Some("function_call") => {
                let input = arguments(&item.at("arguments"))?;
                parts.call(
                    path,
                    string(&item, "call_id")?,
                    string(&item, "name")?,
                    input,
                    &[("item_id", opt_string(m, "id"))],
                );
            }
            Some("reasoning") => {
                let mut r = json!({"type": "reasoning", "id": string(&item, "id")?,
                    "summary": m.get("summary").cloned().unwrap_or(json!([]))});
                if let Some(e) = m.get("encrypted_content").filter(|e| e.is_string()) {
                    r["encrypted_content"] = e.clone();
                }
                parts.assistant.push(r);
            }
            // Tool search calls and outputs, hosted tools' calls, compaction items, ...:
            // replayed as they came, in place.
            Some(_) => parts.provider(Wire::Responses, m),
            None => return Err(refused(item.at("type").refuse("is missing"))),
        }
    }
    let o = o.map;
    let usage = o.get("usage").filter(|u| u.is_object()).map(|u| {
        let input = int(Some(u), "input_tokens");
        let details = u.get("input_tokens_details");
        let cached = int(details, "cached_tokens");
        let written = int(details, "cache_write_tokens");
        let split = details.and_then(|d| d.get("cache_write_tokens_details"));
        Usage {
            input_tokens: input.saturating_sub(cached).saturating_sub(written),
            cache_creation_tokens: written,
            cache_read_tokens: cached,
            output_tokens: int(Some(u), "output_tokens"),
            billed_input_tokens: input,
            cache_creation_by_ttl: by_ttl(split, &[("30m", "ttl_30m_tokens"), ("12h", "ttl_12h_tokens")]),
        }
    });
    let stop = match o
        .get("incomplete_details")
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str)
    {
        Some(reason) => Some(reason.to_string()),
        None => opt_string(o, "status"),
    };
    Ok(parts.done(Wire::Responses, o, stop, usage))
}

fn gemini(o: &Obj<'_>) -> Result<Response> {
    let candidates = o.at("candidates");
    let first = list(&candidates)?
        .next()
        .ok_or_else(|| refused(candidates.refuse("is empty")))?;
    let first = obj(&first)?;
    let content = obj(&first.at("content"))?;
    let mut parts = Parts::default();
    let listed = content.at("parts");
    let listed: Vec<At<'_>> = if listed.is_absent() {
        Vec::new()
    } else {
        list(&listed)?.collect()
    };
    for (i, p) in listed.iter().enumerate() {
        let path = p.path().to_string();
        let p = obj(p)?;
        let signature = opt_string(p.map, "thoughtSignature");
        if let Some(call) = p.get("functionCall") {
            let c = obj(&call)?;
            let input = arguments(&c.at("args"))?;
            // Older models give no call id: one is made from the part's place.
            let id = opt_string(c.map, "id").unwrap_or_else(|| format!("call_{i}"));
            parts.call(path, id, string(&c, "name")?, input, &[("signature", signature)]);
        } else if p.at("thought").value.as_bool() == Some(true) {
            let mut t = json!({"type": "thought", "text": string(&p, "text")?});
            if let Some(sig) = signature {
                t["signature"] = Value::String(sig);
            }
            parts.assistant.push(t);
        } else if p.map.contains_key("text") {
            // Gemini 3 signs text parts too: the signature rides back with the text.
            parts.said(string(&p, "text")?, &[("signature", signature)]);
        } else {
            // Code execution, a server-side tool call or response, ...: kept verbatim.
            parts.provider(Wire::Gemini, p.map);
        }
    }
    let (o, first) = (o.map, first.map);
    let usage = o.get("usageMetadata").filter(|u| u.is_object()).map(|u| {
        let prompt = int(Some(u), "promptTokenCount");
        let cached = int(Some(u), "cachedContentTokenCount");
        Usage {
            input_tokens: prompt.saturating_sub(cached),
            cache_creation_tokens: 0,
            cache_read_tokens: cached,
            output_tokens: sum(&[int(Some(u), "candidatesTokenCount"), int(Some(u), "thoughtsTokenCount")]),
            billed_input_tokens: prompt,
            cache_creation_by_ttl: Default::default(),
        }
    });
    Ok(parts.done(Wire::Gemini, o, opt_string(first, "finishReason"), usage))
}

/// A Converse response (botocore's `ConverseResponse`): `output.message.content` read
/// into round parts — `text`, `toolUse` as a tool call, anything else (`reasoningContent`,
/// a server tool's block, ...) kept verbatim for this wire —, `stopReason`, and `usage`:
/// `inputTokens` is the uncached input, beside `cacheReadInputTokens` and
/// `cacheWriteInputTokens` (split by TTL in `cacheDetails`). A response carries no id
/// and no model: `record_response` knows it again by its digest.
fn converse(o: &Obj<'_>) -> Result<Response> {
    let output = obj(&o.at("output"))?;
    let message = obj(&output.at("message"))?;
    let mut parts = Parts::default();
    for b in list(&message.at("content"))? {
        let path = b.path().to_string();
        let b = obj(&b)?;
        if b.map.len() != 1 {
            return Err(refused(
                b.refuse("is not one content block (a ContentBlock has exactly one key)"),
            ));
        }
        if b.map.contains_key("text") {
            parts.text(string(&b, "text")?);
        } else if b.map.contains_key("toolUse") {
            let c = obj(&b.at("toolUse"))?;
            let input = arguments(&c.at("input"))?;
            parts.call(path, string(&c, "toolUseId")?, string(&c, "name")?, input, &[]);
        } else {
            // reasoningContent, citationsContent, a server tool's block, ...: replayed as it
            // came, in place, on this wire only.
            parts.provider(Wire::Converse, b.map);
        }
    }
    let o = o.map;
    let usage = o.get("usage").filter(|u| u.is_object()).map(|u| {
        let (input, written, read) = (
            int(Some(u), "inputTokens"),
            int(Some(u), "cacheWriteInputTokens"),
            int(Some(u), "cacheReadInputTokens"),
        );
        Usage {
            input_tokens: input,
            cache_creation_tokens: written,
            cache_read_tokens: read,
            output_tokens: int(Some(u), "outputTokens"),
            billed_input_tokens: sum(&[input, written, read]),
            cache_creation_by_ttl: by_ttl_list(u.get("cacheDetails")),
        }
    });
    Ok(parts.done(Wire::Converse, o, opt_string(o, "stopReason"), usage))
}

#[cfg(test)]
mod tests {
    use super::*;

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
