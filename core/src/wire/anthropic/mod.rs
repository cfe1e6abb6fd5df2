//! The Anthropic Messages wire: leading system items lifted into `system`, everything
//! that is not the assistant's spoken on the user side, same-role neighbours merged
//! (except across a round's start), tool results first in the user message that answers
//! the calls, `cache_control` on each breakpoint's block.
//!
//! Elements are written by hand with [`json::string`]: a body is mostly text, and its
//! escaping is the renderer's one heavy step (see `json::string`).

mod dialect;
pub(super) mod options;
pub(super) mod replay;
mod response;

use super::json::{self, Obj};
use super::shape::{list_of, role_elements, Pos, Rendered, Request, ToolSpelling};
use crate::items::{Message, PartKind};
use crate::kinds::Wire;
use crate::options::Options;

/// The breakpoint at `pos`, at its TTL (the stable prefix's, or history's).
fn cache_control(req: &Request<'_>, pos: Pos, out: &mut String) {
    out.push_str(r#","cache_control":"#);
    out.push_str(ephemeral(req.ttl_at(pos)));
}

/// The cache marker at a TTL. Anthropic's TTLs are 5m and 1h: a long TTL of another
/// provider (12h) is its 1h.
fn ephemeral(ttl: crate::kinds::CacheTtl) -> &'static str {
    if ttl.is_long() {
        r#"{"type":"ephemeral","ttl":"1h"}"#
    } else {
        r#"{"type":"ephemeral"}"#
    }
}

/// A run's continuation's tail: the request-level `cache_control`, with which the API
/// marks the request's last cacheable block, so each round of a run is cached for the
/// next model call (one of the request's four breakpoints, beside the two a sealed body
/// places at most). The sealed body (the run's first request, the tool-less request plus
/// its tools) has none; every continuation extends it.
pub(super) fn automatic_cache(tail: &str, ttl: crate::kinds::CacheTtl) -> String {
    let Some(body) = tail.strip_suffix('}') else {
        return tail.to_string();
    };
    format!(r#"{body},"cache_control":{}}}"#, ephemeral(ttl))
}

/// One content block: `{"type": ..., ...}`, with `cache_control` last when marked.
fn block(req: &Request<'_>, messages: &[Message], pos: Pos, out: &mut String) {
    match &*messages[pos.0].parts[pos.1].kind.on(Wire::Anthropic) {
        PartKind::Text(text) | PartKind::Said { text, .. } => {
            out.push_str(r#"{"type":"text","text":"#);
            json::string(out, text);
        }
        PartKind::Opaque { json, .. } => {
            // Thinking and server-tool blocks are replayed verbatim, with no cache_control.
            out.push_str(json);
            return;
        }
        PartKind::ToolCall { id, name, input, .. } => {
            out.push_str(r#"{"type":"tool_use","id":"#);
            json::string(out, id);
            out.push_str(r#","name":"#);
            json::string(out, name);
            out.push_str(r#","input":"#);
            json::raw(out, input);
        }
        PartKind::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            out.push_str(r#"{"type":"tool_result","tool_use_id":"#);
            json::string(out, call_id);
            out.push_str(r#","content":"#);
            json::string(out, content);
            out.push_str(if *is_error {
                r#","is_error":true"#
            } else {
                r#","is_error":false"#
            });
        }
        PartKind::Image { media_type, data } => {
            out.push_str(r#"{"type":"image","source":{"type":"base64","media_type":"#);
            json::string(out, media_type);
            out.push_str(r#","data":"#);
            json::string(out, data);
            out.push('}');
        }
    }
    if req.marked(pos) {
        cache_control(req, pos, out);
    }
    out.push('}');
}

fn blocks(req: &Request<'_>, messages: &[Message], positions: &[Pos], out: &mut String) {
    list_of(positions, out, |pos, out| block(req, messages, pos, out));
}

/// The wire messages from `start` on, as element texts, with the parts each carries.
pub(super) fn elements(req: &Request<'_>, start: usize) -> super::shape::Elements {
    let messages = req.messages;
    role_elements(req, start, Wire::Anthropic, |req, out, positions, plain| {
        // A raw entry stored as a string, alone in its message, stays a string.
        let plain_text = match positions {
            [pos] if plain && !req.marked(*pos) => match &messages[pos.0].parts[pos.1].kind {
                PartKind::Text(t) => Some(t.as_str()),
                PartKind::Said { .. }
                | PartKind::ToolCall { .. }
                | PartKind::ToolResult { .. }
                | PartKind::Image { .. }
                | PartKind::Opaque { .. } => None,
            },
            _ => None,
        };
        match plain_text {
            Some(t) => json::string(out, t),
            None => blocks(req, messages, positions, out),
        }
    })
}

/// Anthropic's tools; its tool search tool is sent when a tool is deferred: the model
/// searches the deferred tools' names and descriptions with a pattern, and the API loads
/// what it finds.
pub(super) const TOOLS: ToolSpelling = ToolSpelling {
    list: ("[", "]"),
    open: r#"{"name":"#,
    schema: r#","input_schema":"#,
    after_schema: "",
    search: Some(r#"{"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"}"#),
};

pub(super) fn render(req: &Request<'_>) -> Rendered {
    let messages = req.messages;
    let (leading, system) = super::shape::leading_system(messages);
    let vertex = dialect::vertex(req.model);
    let mut head = Obj::new();
    if let Some(m) = req.model.filter(|_| !vertex) {
        head.field("model", &m.name);
    }
    head.field("max_tokens", &req.max_tokens());
    if !system.is_empty() {
        let mut text = String::new();
        blocks(req, messages, &system, &mut text);
        head.raw("system", &text);
    }
    let head = head.open_list("messages");
    let elements = elements(req, leading);
    let mut tail = super::shape::tail_with_tools(req, &TOOLS);
    for (key, value) in options::fields(req.options) {
        tail.raw(key, &value);
    }
    if let Some(previous) = req.diagnose {
        // The previous response a cache miss is explained against (null: none yet, the
        // request opts in all the same).
        let id = previous.map_or_else(|| "null".to_string(), json::to_text);
        tail.raw("diagnostics", &format!(r#"{{"previous_message_id":{id}}}"#));
    }
    if vertex {
        tail.field(dialect::VERSION_KEY, dialect::VERTEX_VERSION);
    }
    Rendered::new(head, elements, tail, system)
}

/// What `POST /v1/messages/count_tokens` takes of a body.
const COUNTED: &[&str] = &[
    "model",
    "messages",
    "system",
    "thinking",
    "tool_choice",
    "tools",
    "output_config",
    "cache_control",
    "speed",
];

/// The anthropic wire (`POST /v1/messages`).
pub(crate) struct Anthropic;

impl super::form::Form for Anthropic {
    fn maker(&self) -> crate::kinds::Provider {
        crate::kinds::Provider::Anthropic
    }

    /// Anthropic's API, and Claude on Google Cloud's Vertex AI (`dialect.rs`).
    fn speaks(&self, provider: crate::kinds::Provider) -> bool {
        dialect::speaks(provider)
    }

    fn render(&self, req: &Request<'_>) -> Rendered {
        render(req)
    }

    /// Nothing beyond its request type: no rule of the Messages API across fields is known to
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
        elements(req, 0)
    }

    fn system_in_place(&self, model: Option<&crate::rows::Model>) -> bool {
        super::shape::system_in_place(model)
    }

    fn read_response(&self, o: &crate::json_at::Obj<'_>) -> Option<crate::error::Result<crate::response::Response>> {
        response::recognize(o)
    }

    fn recorded_types(&self) -> &'static [&'static crate::part_json::RecordedType] {
        &[&replay::THINKING, &replay::REDACTED_THINKING]
    }

    fn check_options(&self, o: &Options, max_tokens: i32) -> Result<(), crate::options::Refusal> {
        options::check(o, max_tokens)
    }

    fn check_unprofiled(&self, o: &Options) -> Result<(), crate::options::Refusal> {
        options::check_unprofiled(o)
    }

    fn takes_cache_diagnostics(&self) -> bool {
        true
    }

    /// `POST /v1/messages/count_tokens` (anthropic's `MessageCountTokensParams`); on
    /// Vertex AI (a body with its `anthropic_version`) `count-tokens:rawPredict`, which
    /// takes the model in the body, first, and the version last.
    fn count_body(
        &self,
        model: Option<&str>,
        _body: &super::shape::Body,
        members: &super::count::Members,
    ) -> crate::error::Result<String> {
        let Some(model) = model else {
            return Err(super::count::unavailable(
                "the request names no model, and Anthropic's count endpoint needs one".into(),
            ));
        };
        if !members.has(dialect::VERSION_KEY) {
            return Ok(members.keep(COUNTED));
        }
        let mut keys = COUNTED.to_vec();
        keys.push(dialect::VERSION_KEY);
        let kept = members.keep(&keys);
        Ok(format!(
            r#"{{"model":{},{}"#,
            json::to_text(model),
            kept.strip_prefix('{').unwrap_or(&kept)
        ))
    }

    fn keys(&self) -> &'static super::form::Keys {
        &super::form::Keys {
            system: "system",
            list: "messages",
            parts: "content",
            tools: &["tools"],
            mark_block: None,
            mark_key: Some("cache_control"),
        }
    }

    fn cache_rules(&self, profile: Option<&crate::profile::Profile>) -> super::form::CacheRules {
        super::form::CacheRules {
            at_marks_only: true,
            lookback: Some(profile.and_then(|p| p.cache_lookback).unwrap_or(20).max(1) as usize),
            step: None,
            unnamed_five_minutes: true,
        }
    }

    fn tools(&self) -> &'static ToolSpelling {
        &TOOLS
    }

    fn marking(&self, _profile: Option<&crate::profile::Profile>) -> super::form::Marking {
        super::form::Marking::Blocks
    }

    fn request_marker(&self) -> bool {
        true
    }

    /// A run's continuation carries the request-level cache marker, at history's TTL.
    fn continuing_tail(&self, tail: &str, model: Option<&crate::rows::Model>) -> String {
        automatic_cache(
            tail,
            model.map_or(crate::kinds::CacheTtl::FiveMinutes, |m| m.history_ttl()),
        )
    }
}

impl crate::items::Merging for Anthropic {
    fn wire(&self) -> crate::kinds::Wire {
        crate::kinds::Wire::Anthropic
    }

    /// Every part of a message rides its one element (its `content` blocks).
    fn unit(&self, kind: &PartKind, _role: crate::kinds::Role) -> crate::items::Unit {
        crate::items::Unit::in_its_message(kind)
    }

    fn merges_sides(&self) -> bool {
        true
    }
}
