//! The Anthropic Messages wire: leading system items lifted into `system`, everything
//! that is not the assistant's spoken on the user side, same-role neighbours merged
//! (except across a round's start), tool results first in the user message that answers
//! the calls, `cache_control` on each breakpoint's block.

use serde::Serialize;

use super::json::{to_text, Obj, Raw};
use super::{Body, Layout, Pos, Rendered, Request};
use crate::items::{Message, PartKind};
use crate::rows::{CacheTtl, Role};

#[derive(Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<&'static str>,
}

#[derive(Serialize)]
struct Source<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Raw<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Content<'a>,
}

fn cache_control(req: &Request<'_>, pos: Pos) -> Option<CacheControl> {
    req.marked(pos).then(|| CacheControl {
        kind: "ephemeral",
        ttl: match req.ttl() {
            CacheTtl::FiveMinutes => None,
            CacheTtl::OneHour => Some("1h"),
        },
    })
}

fn block<'a>(req: &Request<'_>, messages: &'a [Message], pos: Pos) -> Block<'a> {
    let cache_control = cache_control(req, pos);
    match &messages[pos.0].parts[pos.1].kind {
        PartKind::Text(text) => Block::Text { text, cache_control },
        PartKind::ToolCall { id, name, input } => Block::ToolUse {
            id,
            name,
            input: Raw(input),
            cache_control,
        },
        PartKind::ToolResult {
            call_id,
            content,
            is_error,
        } => Block::ToolResult {
            tool_use_id: call_id,
            content,
            is_error: *is_error,
            cache_control,
        },
        PartKind::Image { media_type, data } => Block::Image {
            source: Source {
                kind: "base64",
                media_type,
                data,
            },
            cache_control,
        },
    }
}

/// The messages from `start` on as wire messages: user or assistant, same-role
/// neighbours merged unless the later one is a boundary.
fn group(messages: &[Message], start: usize) -> Vec<(Role, Vec<Pos>, bool)> {
    let mut out: Vec<(Role, Vec<Pos>, bool)> = Vec::new();
    for (mi, m) in messages.iter().enumerate().skip(start) {
        let role = if m.role == Role::Assistant {
            Role::Assistant
        } else {
            Role::User
        };
        let parts = (0..m.parts.len()).map(|pi| (mi, pi));
        match out.last_mut() {
            Some((r, positions, plain)) if *r == role && !m.boundary => {
                positions.extend(parts);
                *plain = false;
            }
            _ => out.push((role, parts.collect(), m.plain)),
        }
    }
    out
}

/// The wire messages from `start` on, as element texts, with the parts each carries.
pub(super) fn elements(req: &Request<'_>, start: usize) -> (Vec<String>, Vec<Vec<Pos>>) {
    let messages = req.messages;
    let mut texts = Vec::new();
    let mut layout = Vec::new();
    for (role, mut positions, plain) in group(messages, start) {
        // A raw entry stored as a string, alone in its message, stays a string.
        let plain_text = match positions.as_slice() {
            [pos] if plain && !req.marked(*pos) => match &messages[pos.0].parts[pos.1].kind {
                PartKind::Text(t) => Some(t.as_str()),
                _ => None,
            },
            _ => None,
        };
        let content = match plain_text {
            Some(t) => Content::Text(t),
            None => {
                if role == Role::User {
                    // Tool results lead the user message that answers the calls.
                    positions.sort_by_key(|&(m, p)| !matches!(messages[m].parts[p].kind, PartKind::ToolResult { .. }));
                }
                Content::Blocks(positions.iter().map(|&pos| block(req, messages, pos)).collect())
            }
        };
        let role = if role == Role::Assistant { "assistant" } else { "user" };
        texts.push(to_text(&WireMessage { role, content }));
        layout.push(positions);
    }
    (texts, layout)
}

pub(super) fn tools_text(req: &Request<'_>) -> Option<String> {
    #[derive(Serialize)]
    struct ToolDef<'a> {
        name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a str>,
        input_schema: Raw<'a>,
    }
    (!req.tools.is_empty()).then(|| {
        let defs: Vec<ToolDef<'_>> = req
            .tools
            .iter()
            .map(|t| ToolDef {
                name: &t.name,
                description: t.description.as_deref(),
                input_schema: Raw(&t.input_schema),
            })
            .collect();
        to_text(&defs)
    })
}

pub(super) fn render(req: &Request<'_>) -> Rendered {
    let messages = req.messages;
    let leading = messages.iter().take_while(|m| m.role == Role::System).count();
    let system: Vec<Pos> = (0..leading)
        .flat_map(|mi| (0..messages[mi].parts.len()).map(move |pi| (mi, pi)))
        .collect();
    let mut head = Obj::new();
    if let Some(m) = req.model {
        head.field("model", &m.name);
    }
    head.field("max_tokens", &req.max_tokens());
    if !system.is_empty() {
        let blocks: Vec<Block<'_>> = system.iter().map(|&pos| block(req, messages, pos)).collect();
        head.field("system", &blocks);
    }
    let head = head.open_list("messages");
    let (elements, element_layout) = elements(req, leading);
    let tools_text = tools_text(req);
    let mut tail = Obj::after("]");
    if let Some(t) = &tools_text {
        tail.raw("tools", t);
    }
    Rendered {
        body: Body {
            head,
            elements,
            tail: tail.close(),
        },
        layout: Layout {
            system,
            elements: element_layout,
        },
        tools_text,
    }
}
