//! The OpenAI Chat Completions wire: one message per compiled message (system and
//! developer messages in their own roles), tool calls as `tool_calls` on the assistant
//! message, each result as a `tool` message, images as data URLs, `prompt_cache_key`.

use serde::Serialize;

use super::json::{to_text, Obj, Raw};
use super::{Body, Layout, Pos, Rendered, Request};
use crate::items::{Message, PartKind};
use crate::rows::Role;

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentPart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Parts(Vec<ContentPart<'a>>),
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct ToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<ToolCall<'a>>>,
}

#[derive(Serialize)]
struct ToolMessage<'a> {
    role: &'static str,
    tool_call_id: &'a str,
    content: &'a str,
}

/// The text (and image) parts of a message as content: a string for a raw entry stored
/// as one, else a list. The positions it carries are added to `carried`.
fn content<'a>(m: &'a Message, mi: usize, carried: &mut Vec<Pos>) -> Option<Content<'a>> {
    if let (true, [part]) = (m.plain, m.parts.as_slice()) {
        if let PartKind::Text(t) = &part.kind {
            carried.push((mi, 0));
            return Some(Content::Text(t));
        }
    }
    let mut parts = Vec::new();
    for (pi, p) in m.parts.iter().enumerate() {
        let part = match &p.kind {
            PartKind::Text(text) => ContentPart::Text { text },
            PartKind::Image { media_type, data } if m.role == Role::User => ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: format!("data:{media_type};base64,{data}"),
                },
            },
            _ => continue,
        };
        carried.push((mi, pi));
        parts.push(part);
    }
    (!parts.is_empty()).then_some(Content::Parts(parts))
}

fn message(m: &Message, mi: usize, texts: &mut Vec<String>, layout: &mut Vec<Vec<Pos>>) {
    let mut carried = Vec::new();
    match m.role {
        Role::System | Role::Developer | Role::User => {
            for (pi, p) in m.parts.iter().enumerate() {
                if let PartKind::ToolResult { call_id, content, .. } = &p.kind {
                    texts.push(to_text(&ToolMessage {
                        role: "tool",
                        tool_call_id: call_id,
                        content,
                    }));
                    layout.push(vec![(mi, pi)]);
                }
            }
            if let Some(content) = content(m, mi, &mut carried) {
                texts.push(to_text(&WireMessage {
                    role: m.role.as_str(),
                    content: Some(content),
                    tool_calls: None,
                }));
                layout.push(carried);
            }
        }
        Role::Assistant => {
            let content = content(m, mi, &mut carried);
            let mut calls = Vec::new();
            for (pi, p) in m.parts.iter().enumerate() {
                if let PartKind::ToolCall { id, name, input } = &p.kind {
                    carried.push((mi, pi));
                    calls.push(ToolCall {
                        id,
                        kind: "function",
                        function: Function { name, arguments: input },
                    });
                }
            }
            if content.is_some() || !calls.is_empty() {
                texts.push(to_text(&WireMessage {
                    role: "assistant",
                    content,
                    tool_calls: (!calls.is_empty()).then_some(calls),
                }));
                layout.push(carried);
            }
        }
    }
}

pub(super) fn elements(req: &Request<'_>) -> (Vec<String>, Vec<Vec<Pos>>) {
    let mut texts = Vec::new();
    let mut layout = Vec::new();
    for (mi, m) in req.messages.iter().enumerate() {
        message(m, mi, &mut texts, &mut layout);
    }
    (texts, layout)
}

pub(super) fn tools_text(req: &Request<'_>) -> Option<String> {
    #[derive(Serialize)]
    struct FunctionDef<'a> {
        name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a str>,
        parameters: Raw<'a>,
    }
    #[derive(Serialize)]
    struct ToolDef<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        function: FunctionDef<'a>,
    }
    (!req.tools.is_empty()).then(|| {
        let defs: Vec<ToolDef<'_>> = req
            .tools
            .iter()
            .map(|t| ToolDef {
                kind: "function",
                function: FunctionDef {
                    name: &t.name,
                    description: t.description.as_deref(),
                    parameters: Raw(&t.input_schema),
                },
            })
            .collect();
        to_text(&defs)
    })
}

pub(super) fn render(req: &Request<'_>) -> Rendered {
    let mut head = Obj::new();
    if let Some(m) = req.model {
        head.field("model", &m.name);
    }
    head.field("max_completion_tokens", &req.max_tokens());
    let head = head.open_list("messages");
    let (elements, element_layout) = elements(req);
    let tools_text = tools_text(req);
    let mut tail = Obj::after("]");
    if let Some(t) = &tools_text {
        tail.raw("tools", t);
    }
    tail.field("prompt_cache_key", req.cache_key);
    Rendered {
        body: Body {
            head,
            elements,
            tail: tail.close(),
        },
        layout: Layout {
            system: Vec::new(),
            elements: element_layout,
        },
        tools_text,
    }
}
