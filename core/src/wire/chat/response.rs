//! Reading a response of this wire: OpenAI's `ChatCompletion`, as the compatible providers
//! return it too (their reasoning, Mistral's content chunks, DeepSeek's cache counts).

use serde_json::Value;

use crate::error::Result;
use crate::json_at::Obj;
use crate::kinds::Wire;
use crate::response::{arguments, int, list, obj, opt_string, refused, string, Heading, Parts, Response, Usage};

/// Where the response keeps its id, model and cache diagnostics.
const HEADING: Heading = Heading {
    id: Some("id"),
    model: Some("model"),
    diagnostics: None,
};

/// The response, if `o` is of this wire's shape (its usage's numbers checked first).
pub(super) fn recognize(o: &Obj<'_>) -> Option<Result<Response>> {
    if o.map.get("object").and_then(Value::as_str) != Some("chat.completion") {
        return None;
    }
    Some(crate::response::counts(&o.at("usage")).and_then(|()| read(o)))
}

fn read(o: &Obj<'_>) -> Result<Response> {
    let choices = o.at("choices");
    let first = list(&choices)?
        .next()
        .ok_or_else(|| refused(choices.refuse("is empty")))?;
    let choice = obj(&first)?;
    let message = obj(&choice.at("message"))?;
    let mut parts = Parts::default();
    // The reasoning a compatible provider returns beside the answer (DeepSeek, xAI,
    // Fireworks, vLLM): recorded as the chat wire's block, sent back with the message.
    if let Some(Value::String(r)) = message.map.get("reasoning_content") {
        if !r.is_empty() {
            let mut block = serde_json::Map::new();
            block.insert("reasoning_content".into(), Value::String(r.clone()));
            parts.provider(Wire::Chat, &block);
        }
    }
    match message.map.get("content") {
        Some(Value::String(t)) if !t.is_empty() => parts.text(t.clone()),
        // Mistral's content chunks: the text ones are the answer (a reasoning model's
        // thinking chunks are its own).
        Some(Value::Array(chunks)) => {
            let text: String = chunks
                .iter()
                .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|c| c.get("text").and_then(Value::as_str))
                .collect();
            if !text.is_empty() {
                parts.text(text);
            }
        }
        _ => {}
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
        // DeepSeek names the cached prompt tokens prompt_cache_hit_tokens.
        let cached = match int(u.get("prompt_tokens_details"), "cached_tokens") {
            0 => int(Some(u), "prompt_cache_hit_tokens"),
            n => n,
        };
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
    Ok(parts.done(Wire::Chat, &HEADING, o, opt_string(choice, "finish_reason"), usage))
}
