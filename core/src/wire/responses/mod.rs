//! The OpenAI Responses wire (`POST /v1/responses`): the compiled list as `input` items,
//! one item per message on the user side (system and developer messages in their own
//! roles), each tool result a `function_call_output` item, each assistant text and each
//! tool call an item of its own (`{"role":"assistant","content":TEXT}`, the replay form
//! the API takes without an output id; `function_call`), images as `input_image` data
//! URLs, tools as flat function tools, `max_output_tokens`, `prompt_cache_key`.
//!
//! Items of the user side that a run round carried on their own (each result, the
//! abort marker, each steer, the captures) stay their own items, so every request of a
//! turn is the earlier one plus its new items.

mod options;
pub(super) mod replay;
mod response;

use super::json;
use super::shape::{Pos, Rendered, Request, ToolSpelling};
use crate::items::{Message, PartKind, Unit};
use crate::kinds::Role;
use crate::options::Options;

fn input_part(out: &mut String, kind: &PartKind, mark: Option<&str>) {
    match kind {
        PartKind::Text(text) => {
            out.push_str(r#"{"type":"input_text","text":"#);
            json::string(out, text);
        }
        PartKind::Image { media_type, data } => {
            out.push_str(r#"{"type":"input_image","detail":"auto","image_url":"#);
            json::string(out, &format!("data:{media_type};base64,{data}"));
        }
        // A message item carries texts and images alone (`user_side` picks them).
        PartKind::Said { .. } | PartKind::ToolCall { .. } | PartKind::ToolResult { .. } | PartKind::Opaque { .. } => {
            return
        }
    }
    if let Some(mark) = mark {
        out.push_str(mark);
    }
    out.push('}');
}

/// A message of the user side: its tool results first, each an item, then one message
/// item with its texts and images (a raw entry stored as a string stays a string).
fn user_side(req: &Request<'_>, m: &Message, mi: usize, texts: &mut Vec<String>, layout: &mut Vec<Vec<Pos>>) {
    for (pi, p) in m.parts.iter().enumerate() {
        if let PartKind::ToolResult { call_id, content, .. } = &p.kind {
            let mut out = String::with_capacity(content.len() + 64);
            out.push_str(r#"{"type":"function_call_output","call_id":"#);
            json::string(&mut out, call_id);
            out.push_str(r#","output":"#);
            super::shape::tool_output(
                &mut out,
                "input_text",
                content,
                super::shape::explicit(req.model.and_then(|m| m.profile.as_ref())),
                req.explicit_mark((mi, pi), REQUEST_TTL),
            );
            out.push('}');
            texts.push(out);
            layout.push(vec![(mi, pi)]);
        }
    }
    let carried: Vec<Pos> = m
        .parts
        .iter()
        .enumerate()
        // A message carries its words and pictures; calls, results and provider items are
        // input items of their own on this wire (rendered beside it).
        .filter(|(_, p)| match p.kind {
            PartKind::Text(_) | PartKind::Image { .. } => true,
            PartKind::ToolCall { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Opaque { .. }
            | PartKind::Said { .. } => false,
        })
        .map(|(pi, _)| (mi, pi))
        .collect();
    if carried.is_empty() {
        return;
    }
    let size: usize = carried.iter().map(|&(_, pi)| m.parts[pi].kind.size()).sum();
    let mut out = String::with_capacity(size + 64 + 32 * carried.len());
    out.push_str(r#"{"type":"message","role":"#);
    json::string(&mut out, m.role.as_str());
    out.push_str(r#","content":"#);
    match (m.plain, m.parts.as_slice()) {
        (
            true,
            [crate::items::Part {
                kind: PartKind::Text(t),
                ..
            }],
        ) => json::string(&mut out, t),
        _ => {
            out.push('[');
            for (i, &(_, pi)) in carried.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                input_part(&mut out, &m.parts[pi].kind, req.explicit_mark((mi, pi), REQUEST_TTL));
            }
            out.push(']');
        }
    }
    out.push('}');
    texts.push(out);
    layout.push(carried);
}

/// An assistant message: each text and each tool call an item, in order.
fn assistant(_req: &Request<'_>, m: &Message, mi: usize, texts: &mut Vec<String>, layout: &mut Vec<Vec<Pos>>) {
    for (pi, p) in m.parts.iter().enumerate() {
        let mut out = String::with_capacity(p.kind.size() + 64);
        match &*p.kind.on(crate::kinds::Wire::Responses) {
            PartKind::Text(text) => {
                out.push_str(r#"{"type":"message","role":"assistant","content":"#);
                json::string(&mut out, text);
            }
            PartKind::Opaque {
                wire: crate::kinds::Wire::Responses,
                json,
                ..
            }
            | PartKind::Said { json, .. } => {
                // A reasoning item, a server tool's item, or a message with its id,
                // replayed verbatim.
                texts.push(json.to_string());
                layout.push(vec![(mi, pi)]);
                continue;
            }
            PartKind::ToolCall {
                id,
                name,
                input,
                recorded,
            } => {
                out.push_str(r#"{"type":"function_call""#);
                if let Some(item) = recorded.get(replay::CALL_ITEM_ID) {
                    out.push_str(r#","id":"#);
                    json::string(&mut out, item);
                }
                out.push_str(r#","call_id":"#);
                json::string(&mut out, id);
                out.push_str(r#","name":"#);
                json::string(&mut out, name);
                out.push_str(r#","arguments":"#);
                json::string(&mut out, input);
            }
            // The model's side sends none of these; another wire's block is not replayed
            // here.
            PartKind::ToolResult { .. } | PartKind::Image { .. } | PartKind::Opaque { .. } => continue,
        }
        out.push('}');
        texts.push(out);
        layout.push(vec![(mi, pi)]);
    }
}

pub(super) fn elements(req: &Request<'_>) -> super::shape::Elements {
    super::shape::each_message(req, user_side, assistant)
}

/// Function tools, flat; `strict` is required by the API's types (an input schema is
/// not necessarily a strict-mode one, so it is false). The hosted tool search is sent
/// when a tool is deferred: the API searches the deferred functions and loads what it
/// finds.
pub(super) const TOOLS: ToolSpelling = ToolSpelling {
    list: ("[", "]"),
    open: r#"{"type":"function","name":"#,
    schema: r#","parameters":"#,
    after_schema: r#","strict":false"#,
    search: Some(r#"{"type":"tool_search"}"#),
};

/// The request-level TTL of explicit caching on Responses: the model's, as its profile
/// takes it (`prompt_cache_options.ttl`).
const REQUEST_TTL: Option<crate::kinds::CacheTtl> = None;

pub(super) fn render(req: &Request<'_>) -> Rendered {
    super::shape::openai_body(
        req,
        REQUEST_TTL,
        "max_output_tokens",
        "input",
        &TOOLS,
        options::fields(req.options),
        elements(req),
    )
}

// Stateful responses (`crate::compile::stateful` decides the chain; this renders it).

const SYSTEM_ROLES: [&str; 2] = [
    r#"{"type":"message","role":"system","content":"#,
    r#"{"type":"message","role":"developer","content":"#,
];

/// The text of a system or developer message element, when it is text only.
fn system_text(element: &str) -> Option<String> {
    if !SYSTEM_ROLES.iter().any(|p| element.starts_with(p)) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(element).ok()?;
    match v.get("content")? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(parts) => {
            let texts: Option<Vec<&str>> = parts
                .iter()
                .map(|p| match p.get("type").and_then(|t| t.as_str()) {
                    Some("input_text") => p.get("text").and_then(|t| t.as_str()),
                    _ => None,
                })
                .collect();
            Some(texts?.join("\n\n"))
        }
        _ => None,
    }
}

/// The leading system and developer elements of a body's `input` (texts only): how
/// many, and their texts joined by a blank line — what a stateful request sends as
/// `instructions`.
fn lead(elements: &[String]) -> (usize, Option<String>) {
    let texts: Vec<String> = elements.iter().map_while(|e| system_text(e)).collect();
    let n = texts.len();
    (n, (n > 0).then(|| texts.join("\n\n")))
}

/// Whether an element is one the model's response adds (an assistant message, a call,
/// reasoning, a server tool's item), not one this side writes (a user, system or
/// developer message, a tool's output).
fn is_output(element: &str) -> bool {
    const INPUT: [&str; 2] = [
        r#"{"type":"message","role":"user","content":"#,
        r#"{"type":"function_call_output","#,
    ];
    !INPUT.iter().chain(SYSTEM_ROLES.iter()).any(|p| element.starts_with(p))
}

/// Whether an element is a reasoning item: the one item of the model's a later request
/// may leave out or replay differently (an earlier turn's reasoning is not replayed;
/// the provider holds it). Every other element a request sent — the model's messages
/// and calls included — is what a chained request's provider holds, byte for byte.
fn is_reasoning(element: &str) -> bool {
    const NOT: [&str; 2] = [r#"{"type":"message","#, r#"{"type":"function_call"#];
    if NOT.iter().any(|p| element.starts_with(p)) {
        return false;
    }
    serde_json::from_str::<serde_json::Value>(element)
        .ok()
        .is_some_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("reasoning"))
}

/// The stateful form of a full responses body, its frame written again by the same
/// writer with the chain as an option: the leading system text as `instructions` and
/// `previous_response_id` (when the chain holds) before `input`, the elements from the
/// chain's cut on, and no `prompt_cache_options` (a stateful request places no
/// breakpoints; the provider caches the chain by its key). The frame's fields are read
/// back in order, each value as the text it was written as; a frame that does not read
/// as one object (it was written by the renderer, or verified against its seal) is
/// refused, never cut by searching its text.
fn stateful(
    body: &super::shape::Body,
    previous_response_id: Option<&str>,
    cut: usize,
) -> crate::error::Result<super::shape::Body> {
    let unreadable = || {
        crate::error::Error::new(
            crate::error::Code::DataCorrupted,
            "the frame of a responses body does not read as one JSON object",
        )
    };
    let frame = json::fields(&body.frame_text()).ok_or_else(unreadable)?;
    let list = frame.iter().position(|(k, _)| k == "input").ok_or_else(unreadable)?;
    let (lead, instructions) = lead(&body.elements);
    let mut head = json::Obj::new();
    for (key, value) in &frame[..list] {
        head.raw(key, value.get());
    }
    if let Some(text) = &instructions {
        head.field("instructions", text);
    }
    if let Some(id) = previous_response_id {
        head.field("previous_response_id", id);
    }
    let mut tail = json::Obj::after("]");
    for (key, value) in frame[list + 1..].iter().filter(|(k, _)| k != "prompt_cache_options") {
        tail.raw(key, value.get());
    }
    let from = cut.max(lead).min(body.elements.len());
    Ok(super::shape::Body {
        head: head.open_list("input"),
        elements: body.elements[from..].to_vec(),
        tail: tail.close(),
    })
}

/// What `POST /v1/responses/input_tokens` takes of a body.
const COUNTED: &[&str] = &[
    "model",
    "input",
    "instructions",
    "previous_response_id",
    "reasoning",
    "text",
    "tool_choice",
    "tools",
    "parallel_tool_calls",
    "truncation",
    "conversation",
];

/// The responses wire (OpenAI's `POST /v1/responses`).
pub(crate) struct Responses;

impl super::form::Form for Responses {
    fn maker(&self) -> crate::kinds::Provider {
        crate::kinds::Provider::OpenAi
    }

    fn render(&self, req: &Request<'_>) -> Rendered {
        render(req)
    }

    /// Nothing beyond its request type: no rule of the Responses API across fields is known to
    /// refuse a body this compile writes.
    fn check(&self, _req: &Request<'_>, _turn: &str) -> crate::error::Result<()> {
        Ok(())
    }

    /// Nothing, as [`Form::check`](super::form::Form::check).
    fn check_rounds(
        &self,
        _last: Option<&str>,
        _messages: &[Message],
        _model: Option<&crate::rows::Model>,
        _turn: &str,
    ) -> crate::error::Result<()> {
        Ok(())
    }

    fn elements(&self, req: &Request<'_>) -> super::shape::Elements {
        elements(req)
    }

    fn system_in_place(&self, _model: Option<&crate::rows::Model>) -> bool {
        true
    }

    fn stores_responses(&self) -> bool {
        true
    }

    fn recorded_types(&self) -> &'static [&'static crate::part_json::RecordedType] {
        &[&replay::REASONING]
    }

    fn recorded_text(&self) -> Option<&'static crate::part_json::RecordedText> {
        Some(&replay::MESSAGE_TEXT)
    }

    fn recorded_call_keys(&self) -> &'static [&'static str] {
        &[replay::CALL_ITEM_ID]
    }

    fn own_options(&self) -> &'static [&'static crate::options::OwnOption] {
        &[&options::STORE, &options::INCLUDE]
    }

    fn replay_reasoning(&self, o: &mut Options) {
        options::replaying_reasoning(o)
    }

    fn chained(
        &self,
        body: &super::shape::Body,
        previous: Option<&str>,
        cut: usize,
    ) -> crate::error::Result<super::shape::Body> {
        stateful(body, previous, cut)
    }

    fn lead(&self, elements: &[String]) -> (usize, Option<String>) {
        lead(elements)
    }

    fn is_output(&self, element: &str) -> bool {
        is_output(element)
    }

    fn is_reasoning(&self, element: &str) -> bool {
        is_reasoning(element)
    }

    fn read_response(&self, o: &crate::json_at::Obj<'_>) -> Option<crate::error::Result<crate::response::Response>> {
        response::recognize(o)
    }

    fn check_options(&self, o: &Options, _max_tokens: i32) -> Result<(), crate::options::Refusal> {
        options::check(o)
    }

    fn takes_cache_diagnostics(&self) -> bool {
        true
    }

    /// `POST /v1/responses/input_tokens` (openai's `InputTokenCountParams`).
    fn count_body(
        &self,
        _model: Option<&str>,
        _body: &super::shape::Body,
        members: &super::count::Members,
    ) -> crate::error::Result<String> {
        Ok(members.keep(COUNTED))
    }

    fn keys(&self) -> &'static super::form::Keys {
        &super::form::Keys {
            system: "instructions",
            list: "input",
            parts: "",
            tools: &["tools"],
            mark_block: None,
            mark_key: Some("prompt_cache_breakpoint"),
        }
    }

    fn cache_rules(&self, profile: Option<&crate::profile::Profile>) -> super::form::CacheRules {
        super::openai::cache_rules(profile)
    }

    fn tools(&self) -> &'static ToolSpelling {
        &TOOLS
    }

    fn marking(&self, profile: Option<&crate::profile::Profile>) -> super::form::Marking {
        super::openai::marking(profile)
    }
}

impl crate::items::Merging for Responses {
    fn wire(&self) -> crate::kinds::Wire {
        crate::kinds::Wire::Responses
    }

    fn unit(&self, kind: &PartKind, role: Role) -> Unit {
        let assistant = role == Role::Assistant;
        match kind {
            PartKind::Text(_) | PartKind::Said { .. } | PartKind::ToolCall { .. } | PartKind::Opaque { .. }
                if assistant =>
            {
                Unit::Own
            }
            PartKind::ToolResult { .. } if !assistant => Unit::Own,
            PartKind::Text(_) | PartKind::Image { .. } if !assistant => Unit::Shared,
            PartKind::Text(_)
            | PartKind::Said { .. }
            | PartKind::ToolCall { .. }
            | PartKind::Opaque { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Image { .. } => Unit::Dropped,
        }
    }

    fn merges_sides(&self) -> bool {
        false
    }
}
