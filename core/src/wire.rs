//! Wire rendering (SPEC §3.3): the kernel-neutral message list as the body a provider
//! takes — Anthropic Messages or OpenAI Chat Completions.

use serde_json::{json, Map, Value};

use super::context::{Model, Role, Wire};
use super::fields::Tool;
use super::items::{Message, PartKind};

/// Anthropic's default when no model row names `max_output_tokens`.
pub const DEFAULT_MAX_TOKENS: i32 = 4096;

/// Where the stable prefix ends: the last part of it, as (message, part).
pub type CachePoint = Option<(usize, usize)>;

pub fn render(wire: Wire, messages: &[Message], cache: CachePoint, model: Option<&Model>, tools: &[Tool]) -> Value {
    match wire {
        Wire::Anthropic => anthropic(messages, cache, model, tools),
        Wire::Chat => chat(messages, model, tools),
    }
}

fn anthropic_block(kind: &PartKind) -> Value {
    match kind {
        PartKind::Text(t) => json!({"type": "text", "text": t}),
        PartKind::ToolCall { id, name, input } => {
            let input: Value = serde_json::from_str(input).unwrap_or_else(|_| json!({}));
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        PartKind::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error})
        }
        PartKind::Image { media_type, data } => {
            json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        }
    }
}

fn anthropic(messages: &[Message], cache: CachePoint, model: Option<&Model>, tools: &[Tool]) -> Value {
    let mark = |block: &mut Value, mi: usize, pi: usize| {
        if cache == Some((mi, pi)) {
            block["cache_control"] = json!({"type": "ephemeral"});
        }
    };
    let leading = messages.iter().take_while(|m| m.role == Role::System).count();
    let mut system = Vec::new();
    for (mi, m) in messages[..leading].iter().enumerate() {
        for (pi, p) in m.parts.iter().enumerate() {
            let mut b = anthropic_block(&p.kind);
            mark(&mut b, mi, pi);
            system.push(b);
        }
    }
    // Anthropic takes user and assistant only, alternating: everything that is not
    // the assistant's speaks on the user side, and same-role neighbours merge.
    let mut wire_messages: Vec<(&'static str, Vec<Value>, bool)> = Vec::new();
    for (mi, m) in messages.iter().enumerate().skip(leading) {
        let role = if m.role == Role::Assistant { "assistant" } else { "user" };
        let blocks = m.parts.iter().enumerate().map(|(pi, p)| {
            let mut b = anthropic_block(&p.kind);
            mark(&mut b, mi, pi);
            b
        });
        match wire_messages.last_mut() {
            Some((r, content, plain)) if *r == role => {
                content.extend(blocks);
                *plain = false;
            }
            _ => wire_messages.push((role, blocks.collect(), m.plain)),
        }
    }
    let messages: Vec<Value> = wire_messages
        .into_iter()
        .map(|(role, mut content, plain)| {
            // A raw entry stored as a string, alone in its message, stays a string.
            if plain && content.len() == 1 && content[0].get("cache_control").is_none() {
                if let Some(text) = content[0]["text"].as_str() {
                    return json!({"role": role, "content": text});
                }
            }
            if role == "user" {
                // Tool results lead the user message that answers the calls.
                content.sort_by_key(|b| b["type"] != "tool_result");
            }
            json!({"role": role, "content": content})
        })
        .collect();
    let mut body = Map::new();
    if let Some(m) = model {
        body.insert("model".into(), json!(m.name));
    }
    body.insert(
        "max_tokens".into(),
        json!(model.map(|m| m.max_output_tokens).unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| {
                let mut o = Map::new();
                o.insert("name".into(), json!(t.name));
                if let Some(d) = &t.description {
                    o.insert("description".into(), json!(d));
                }
                o.insert(
                    "input_schema".into(),
                    serde_json::from_str(&t.input_schema).unwrap_or(json!({})),
                );
                Value::Object(o)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}

/// A message's text parts; a raw entry stored as a string stays a string.
fn chat_text_parts(m: &Message) -> Value {
    if m.plain && m.parts.len() == 1 {
        if let Some(t) = m.parts[0].kind.text() {
            return json!(t);
        }
    }
    Value::Array(
        m.parts
            .iter()
            .filter_map(|p| p.kind.text().map(|t| json!({"type": "text", "text": t})))
            .collect(),
    )
}

fn chat(messages: &[Message], model: Option<&Model>, tools: &[Tool]) -> Value {
    let mut out = Vec::new();
    for m in messages {
        match m.role {
            Role::System | Role::Developer => {
                out.push(json!({"role": m.role.as_str(), "content": chat_text_parts(m)}));
            }
            Role::Assistant => {
                let mut o = Map::new();
                o.insert("role".into(), json!("assistant"));
                let text = chat_text_parts(m);
                if text.as_array().is_none_or(|a| !a.is_empty()) {
                    o.insert("content".into(), text);
                }
                let calls: Vec<Value> = m
                    .parts
                    .iter()
                    .filter_map(|p| match &p.kind {
                        PartKind::ToolCall { id, name, input } => Some(json!({
                            "id": id, "type": "function",
                            "function": {"name": name, "arguments": input}
                        })),
                        _ => None,
                    })
                    .collect();
                if !calls.is_empty() {
                    o.insert("tool_calls".into(), Value::Array(calls));
                }
                out.push(Value::Object(o));
            }
            Role::User if m.plain && m.parts.len() == 1 && m.parts[0].kind.text().is_some() => {
                out.push(json!({"role": "user", "content": chat_text_parts(m)}));
            }
            Role::User => {
                let mut content = Vec::new();
                for p in &m.parts {
                    match &p.kind {
                        PartKind::ToolResult {
                            call_id, content: c, ..
                        } => {
                            out.push(json!({"role": "tool", "tool_call_id": call_id, "content": c}));
                        }
                        PartKind::Text(t) => content.push(json!({"type": "text", "text": t})),
                        PartKind::Image { media_type, data } => content.push(json!({
                            "type": "image_url",
                            "image_url": {"url": format!("data:{media_type};base64,{data}")}
                        })),
                        PartKind::ToolCall { .. } => {}
                    }
                }
                if !content.is_empty() {
                    out.push(json!({"role": "user", "content": content}));
                }
            }
        }
    }
    let mut body = Map::new();
    if let Some(m) = model {
        body.insert("model".into(), json!(m.name));
    }
    body.insert(
        "max_completion_tokens".into(),
        json!(model.map(|m| m.max_output_tokens).unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    body.insert("messages".into(), Value::Array(out));
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| {
                let mut f = Map::new();
                f.insert("name".into(), json!(t.name));
                if let Some(d) = &t.description {
                    f.insert("description".into(), json!(d));
                }
                f.insert(
                    "parameters".into(),
                    serde_json::from_str(&t.input_schema).unwrap_or(json!({})),
                );
                json!({"type": "function", "function": f})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}
