//! Reading a sealed result back: its messages and preface, its cache marker, and the
//! un-merging of its seed when an in-turn summary replaces it.

use serde_json::{json, Value};

use super::context::Role;
use super::error::{Code, Error, Result};
use super::items::{Item, Message, Part, PartKind};
use super::tokens::{Counter, IMAGE_TOKENS};

/// Puts the sealed request's `cache_control` marker on the same block of a continued
/// Anthropic request: the sealed part renders identically, so the place is the same.
pub fn copy_cache_marker(sealed_request: &Value, request: &mut Value) {
    if let Some(k) = sealed_request["system"]
        .as_array()
        .and_then(|s| s.iter().position(|b| b.get("cache_control").is_some()))
    {
        if let Some(b) = request["system"].get_mut(k) {
            b["cache_control"] = json!({"type": "ephemeral"});
        }
        return;
    }
    let Some(ms) = sealed_request["messages"].as_array() else {
        return;
    };
    for (i, m) in ms.iter().enumerate() {
        let Some(blocks) = m["content"].as_array() else {
            continue;
        };
        if let Some(j) = blocks.iter().position(|b| b.get("cache_control").is_some()) {
            if let Some(b) = request["messages"].get_mut(i).and_then(|m| m["content"].get_mut(j)) {
                b["cache_control"] = json!({"type": "ephemeral"});
            }
            return;
        }
    }
}

/// Removes the last `n` parts of a message list (un-merging the seed), returning
/// their tokens.
pub fn cut_parts(messages: &mut Vec<Message>, mut n: usize, counter: &mut Counter<'_>) -> u32 {
    let mut tokens = 0;
    while n > 0 {
        let Some(last) = messages.last_mut() else {
            break;
        };
        while n > 0 {
            let Some(p) = last.parts.pop() else { break };
            last.blocks.pop();
            tokens += part_tokens(&p.kind, counter);
            n -= 1;
        }
        if last.parts.is_empty() {
            messages.pop();
        }
    }
    tokens
}

pub fn part_tokens(kind: &PartKind, counter: &mut Counter<'_>) -> u32 {
    match kind {
        PartKind::Text(t) => counter.count(t),
        PartKind::ToolCall { name, input, .. } => counter.count(name) + counter.count(input),
        PartKind::ToolResult { content, .. } => counter.count(content),
        PartKind::Image { .. } => IMAGE_TOKENS,
    }
}

fn parse_part(v: &Value) -> Result<PartKind> {
    let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
    Ok(match v["type"].as_str() {
        Some("text") => PartKind::Text(s("text")),
        Some("tool_call") => PartKind::ToolCall {
            id: s("id"),
            name: s("name"),
            input: v["input"].to_string(),
        },
        Some("tool_result") => PartKind::ToolResult {
            call_id: s("call_id"),
            content: s("content"),
            is_error: v["is_error"].as_bool().unwrap_or(false),
        },
        Some("image") => PartKind::Image {
            media_type: s("media_type"),
            data: s("data"),
        },
        _ => {
            return Err(Error::new(
                Code::TurnNotCompilable,
                format!("a sealed part has an unknown type: {v}"),
            ))
        }
    })
}

/// Messages of a sealed result (token counts unknown: zero).
pub fn parse_messages(v: &Value) -> Result<Vec<Message>> {
    let mut out = Vec::new();
    for m in v.as_array().map(Vec::as_slice).unwrap_or(&[]) {
        let role = m["role"].as_str().and_then(Role::parse).unwrap_or(Role::User);
        let mut parts = Vec::new();
        for p in m["parts"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            parts.push(Part {
                kind: parse_part(p)?,
                tokens: 0,
            });
        }
        out.push(Message {
            role,
            blocks: vec![0; parts.len()],
            parts,
            plain: false,
        });
    }
    Ok(out)
}

/// Items stored as `[{role, parts}]` (a sealed preface), counted.
pub fn parse_items(text: &str, block: usize, counter: &mut Counter<'_>) -> Result<Vec<Item>> {
    let v: Value = serde_json::from_str(text).unwrap_or(Value::Array(Vec::new()));
    let mut out = Vec::new();
    for m in parse_messages(&v)? {
        let parts = m
            .parts
            .into_iter()
            .map(|p| {
                let tokens = part_tokens(&p.kind, counter);
                Part { kind: p.kind, tokens }
            })
            .collect();
        out.push(Item::new(m.role, parts, block));
    }
    Ok(out)
}
