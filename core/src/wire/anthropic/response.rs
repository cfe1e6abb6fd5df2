//! Reading a response of this wire: Anthropic `Message`.

use serde_json::Value;

use crate::error::Result;
use crate::json_at::Obj;
use crate::kinds::Wire;
use crate::response::{
    arguments, by_ttl, int, list, obj, opt_string, refused, string, sum, Heading, Parts, Response, Usage,
};

/// Where the response keeps its id, model and cache diagnostics.
const HEADING: Heading = Heading {
    id: Some("id"),
    model: Some("model"),
    diagnostics: Some("diagnostics"),
};

/// The response, if `o` is of this wire's shape (its usage's numbers checked first).
pub(super) fn recognize(o: &Obj<'_>) -> Option<Result<Response>> {
    if !(o.map.get("type").and_then(Value::as_str) == Some("message") && o.map.contains_key("content")) {
        return None;
    }
    Some(crate::response::counts(&o.at("usage")).and_then(|()| read(o)))
}

fn read(o: &Obj<'_>) -> Result<Response> {
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
            Some("thinking") => parts.assistant.push(super::replay::recorded_thinking(
                &string(&b, "thinking")?,
                &string(&b, "signature")?,
            )),
            Some("redacted_thinking") => parts
                .assistant
                .push(super::replay::recorded_redacted_thinking(&string(&b, "data")?)),
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
    Ok(parts.done(Wire::Anthropic, &HEADING, o, opt_string(o, "stop_reason"), usage))
}
