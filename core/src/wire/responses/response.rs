//! Reading a response of this wire: OpenAI Responses `Response`.

use serde_json::Value;

use crate::error::Result;
use crate::json_at::Obj;
use crate::kinds::Wire;
use crate::response::{
    arguments, by_ttl, int, list, obj, opt_string, refused, string, Heading, Parts, Response, Usage,
};

/// Where the response keeps its id, model and cache diagnostics.
const HEADING: Heading = Heading {
    id: Some("id"),
    model: Some("model"),
    diagnostics: Some("prompt_cache_diagnostics"),
};

/// The response, if `o` is of this wire's shape (its usage's numbers checked first).
pub(super) fn recognize(o: &Obj<'_>) -> Option<Result<Response>> {
    if o.map.get("object").and_then(Value::as_str) != Some("response") {
        return None;
    }
    Some(crate::response::counts(&o.at("usage")).and_then(|()| read(o)))
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

fn read(o: &Obj<'_>) -> Result<Response> {
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
                    &[
                        (super::replay::MESSAGE_TEXT.keys[0], opt_string(m, "id")),
                        (super::replay::MESSAGE_TEXT.keys[1], opt_string(m, "phase")),
                    ],
                );
            }
            Some("function_call") => {
                let input = arguments(&item.at("arguments"))?;
                parts.call(
                    path,
                    string(&item, "call_id")?,
                    string(&item, "name")?,
                    input,
                    &[(super::replay::CALL_ITEM_ID, opt_string(m, "id"))],
                );
            }
            Some("reasoning") => {
                let summary = m.get("summary").cloned().unwrap_or(Value::Array(Vec::new()));
                let encrypted = m.get("encrypted_content").filter(|e| e.is_string());
                parts.assistant.push(super::replay::recorded_reasoning(
                    &string(&item, "id")?,
                    summary,
                    encrypted,
                ));
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
    Ok(parts.done(Wire::Responses, &HEADING, o, stop, usage))
}
