//! The OpenAI Chat Completions wire: one message per compiled message (system and
//! developer messages in their own roles), tool calls as `tool_calls` on the assistant
//! message, each result as a `tool` message, images as data URLs, `prompt_cache_key`;
//! spelled in the dialect of the provider the model row names (`dialect.rs`: OpenAI's,
//! Azure's and the compatible providers'). Elements are written by hand with
//! [`json::string`], as on the Anthropic wire.

mod dialect;
mod options;
mod response;

use super::json;
use super::shape::{Pos, Rendered, Request, ToolSpelling};
use crate::items::{Message, PartKind, Unit};
use crate::kinds::{Role, Wire};
use crate::options::Options;
use dialect::Dialect;

/// The dialect a request speaks: its model row's provider's (OpenAI's without a model).
fn dialect_of(req: &Request<'_>) -> &'static Dialect {
    dialect::of(super::dialect::provider_of(req.model, Wire::Chat)).unwrap_or_else(dialect::openai)
}

/// The text (and, for a user, image) parts of a message as `"content":...`: a string
/// for a raw entry stored as one, or where the dialect takes one string (the texts joined
/// by a blank line), else a list. Writes nothing when there are none. The positions it
/// carries are added to `carried`.
fn content(req: &Request<'_>, d: &Dialect, m: &Message, mi: usize, carried: &mut Vec<Pos>, out: &mut String) {
    if let (true, [part]) = (m.plain, m.parts.as_slice()) {
        if let PartKind::Text(t) = &part.kind {
            carried.push((mi, 0));
            out.push_str(r#","content":"#);
            json::string(out, t);
            return;
        }
    }
    if d.string_content(m.role) {
        let mut text: Option<String> = None;
        for (pi, p) in m.parts.iter().enumerate() {
            if let Some(t) = p.kind.text() {
                carried.push((mi, pi));
                match &mut text {
                    Some(joined) => {
                        joined.push_str("\n\n");
                        joined.push_str(t);
                    }
                    None => text = Some(t.to_string()),
                }
            }
        }
        if let Some(text) = text {
            out.push_str(r#","content":"#);
            json::string(out, &text);
        }
        return;
    }
    let mut first = true;
    for (pi, p) in m.parts.iter().enumerate() {
        let is_content = match &p.kind {
            PartKind::Text(_) | PartKind::Said { .. } => true,
            PartKind::Image { .. } => m.role == Role::User,
            PartKind::ToolCall { .. } | PartKind::ToolResult { .. } | PartKind::Opaque { .. } => false,
        };
        if !is_content {
            continue;
        }
        out.push_str(if first { r#","content":["# } else { "," });
        first = false;
        carried.push((mi, pi));
        match &p.kind {
            PartKind::Text(text) | PartKind::Said { text, .. } => {
                out.push_str(r#"{"type":"text","text":"#);
                json::string(out, text);
            }
            PartKind::Image { media_type, data } => {
                out.push_str(r#"{"type":"image_url","image_url":{"url":"#);
                json::string(out, &format!("data:{media_type};base64,{data}"));
                out.push('}');
            }
            // Not content: left out above.
            PartKind::ToolCall { .. } | PartKind::ToolResult { .. } | PartKind::Opaque { .. } => {}
        }
        if let Some(mark) = req.explicit_mark((mi, pi), REQUEST_TTL) {
            out.push_str(mark);
        }
        out.push('}');
    }
    if !first {
        out.push(']');
    }
}

fn user_side(req: &Request<'_>, m: &Message, mi: usize, texts: &mut Vec<String>, layout: &mut Vec<Vec<Pos>>) {
    let d = dialect_of(req);
    for (pi, p) in m.parts.iter().enumerate() {
        if let PartKind::ToolResult { call_id, content, .. } = &p.kind {
            let mut out = String::with_capacity(content.len() + 64);
            out.push_str(r#"{"role":"tool","tool_call_id":"#);
            json::string(&mut out, call_id);
            out.push_str(r#","content":"#);
            super::shape::tool_output(
                &mut out,
                "text",
                content,
                super::shape::explicit(req.model.and_then(|m| m.profile.as_ref())),
                req.explicit_mark((mi, pi), REQUEST_TTL),
            );
            out.push('}');
            texts.push(out);
            layout.push(vec![(mi, pi)]);
        }
    }
    let mut carried = Vec::new();
    let mut body = String::new();
    content(req, d, m, mi, &mut carried, &mut body);
    if !carried.is_empty() {
        let mut out = String::with_capacity(body.len() + 24);
        out.push_str(r#"{"role":"#);
        json::string(&mut out, d.role(m.role));
        out.push_str(&body);
        out.push('}');
        texts.push(out);
        layout.push(carried);
    }
}

/// The reasoning a provider returned with an assistant message (`reasoning_content`,
/// recorded as the chat wire's provider block), as the message sends it back: DeepSeek
/// refuses a tool-call chain whose assistant messages lack it.
fn reasoning(block: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(block).ok()?;
    v.get("reasoning_content")?.as_str().map(str::to_string)
}

fn assistant(req: &Request<'_>, m: &Message, mi: usize, texts: &mut Vec<String>, layout: &mut Vec<Vec<Pos>>) {
    let d = dialect_of(req);
    let mut carried = Vec::new();
    let mut out = String::from(r#"{"role":"assistant""#);
    content(req, d, m, mi, &mut carried, &mut out);
    for (pi, p) in m.parts.iter().enumerate() {
        if let PartKind::Opaque {
            wire: Wire::Chat, json, ..
        } = &p.kind
        {
            carried.push((mi, pi));
            if let Some(text) = reasoning(json) {
                out.push_str(r#","reasoning_content":"#);
                json::string(&mut out, &text);
            }
        }
    }
    let mut calls = 0;
    for (pi, p) in m.parts.iter().enumerate() {
        if let PartKind::ToolCall { id, name, input, .. } = &p.kind {
            carried.push((mi, pi));
            out.push_str(if calls == 0 { r#","tool_calls":["# } else { "," });
            out.push_str(r#"{"id":"#);
            json::string(&mut out, id);
            if d.call_index {
                out.push_str(&format!(r#","index":{calls}"#));
            }
            calls += 1;
            out.push_str(r#","type":"function","function":{"name":"#);
            json::string(&mut out, name);
            out.push_str(r#","arguments":"#);
            json::string(&mut out, input);
            out.push_str("}}");
        }
    }
    if calls > 0 {
        out.push(']');
    }
    if !carried.is_empty() {
        out.push('}');
        texts.push(out);
        layout.push(carried);
    }
}

pub(super) fn elements(req: &Request<'_>) -> super::shape::Elements {
    super::shape::each_message(req, user_side, assistant)
}

/// Function tools; chat has no tool search, so a deferred tool is left out (its
/// definition is frozen with the seal for the application's own search).
pub(super) const TOOLS: ToolSpelling = ToolSpelling {
    list: ("[", "]"),
    open: r#"{"type":"function","function":{"name":"#,
    schema: r#","parameters":"#,
    after_schema: "}",
    search: None,
};

/// The request-level TTL of explicit caching on Chat Completions: 30m alone, whatever the
/// model's (`prompt_cache_options.ttl`).
const REQUEST_TTL: Option<crate::kinds::CacheTtl> = Some(crate::kinds::CacheTtl::ThirtyMinutes);

pub(super) fn render(req: &Request<'_>) -> Rendered {
    let d = dialect_of(req);
    let cache_key = if d.cache_key { req.cache_key } else { "" };
    super::shape::openai_body(
        &Request { cache_key, ..*req },
        REQUEST_TTL,
        d.limit,
        "messages",
        &TOOLS,
        options::fields(req.options),
        elements(req),
    )
}

/// The chat wire (OpenAI's `POST /v1/chat/completions`).
pub(crate) struct Chat;

impl super::form::Form for Chat {
    fn maker(&self) -> crate::kinds::Provider {
        crate::kinds::Provider::OpenAi
    }

    /// OpenAI's Chat Completions and the compatible providers' (`dialect.rs`).
    fn speaks(&self, provider: crate::kinds::Provider) -> bool {
        dialect::of(provider).is_some()
    }

    fn check_dialect(
        &self,
        o: &Options,
        provider: crate::kinds::Provider,
        native_images: bool,
    ) -> Result<(), crate::options::Refusal> {
        let Some(d) = dialect::of(provider) else {
            return Ok(());
        };
        if native_images && !d.takes_images() {
            return Err((
                "",
                format!(
                    "the chat wire to {} takes no image parts: native_images must be false",
                    provider.as_str()
                ),
            ));
        }
        d.check(o)
    }

    fn render(&self, req: &Request<'_>) -> Rendered {
        render(req)
    }

    /// An image where the dialect takes text alone (DeepSeek): a raw entry's or a tool
    /// round's image part, which `native_images` does not govern.
    fn check(&self, req: &Request<'_>, turn: &str) -> crate::error::Result<()> {
        let d = dialect_of(req);
        let image = req.messages.iter().any(|m| m.parts.iter().any(|p| p.kind.is_image()));
        if image && !d.takes_images() {
            return Err(crate::error::Error::new(
                crate::error::Code::TurnNotCompilable,
                format!(
                    "turn {turn} is not compilable on the chat wire to {}: its request holds an image part, and the provider takes text alone",
                    d.provider.as_str()
                ),
            )
            .hint("Send the image as text (a raw entry's text part), or answer with a model that takes images."));
        }
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

    fn read_response(&self, o: &crate::json_at::Obj<'_>) -> Option<crate::error::Result<crate::response::Response>> {
        response::recognize(o)
    }

    fn check_options(&self, o: &Options, _max_tokens: i32) -> Result<(), crate::options::Refusal> {
        options::check(o)
    }

    /// OpenAI's Chat Completions has no token-count endpoint.
    fn count_body(
        &self,
        model: Option<&str>,
        _body: &super::shape::Body,
        _members: &super::count::Members,
    ) -> crate::error::Result<String> {
        Err(super::count::unavailable(format!(
            "the chat wire has no token-count endpoint (OpenAI's Chat Completions), and the request is for {}",
            crate::error::quote(model.unwrap_or("no model"))
        )))
    }

    fn keys(&self) -> &'static super::form::Keys {
        &super::form::Keys {
            system: "",
            list: "messages",
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

impl crate::items::Merging for Chat {
    fn wire(&self) -> crate::kinds::Wire {
        crate::kinds::Wire::Chat
    }

    fn unit(&self, kind: &PartKind, role: Role) -> Unit {
        let assistant = role == Role::Assistant;
        match kind {
            PartKind::ToolResult { .. } if !assistant => Unit::Own,
            PartKind::Image { .. } if role == Role::User => Unit::Shared,
            PartKind::Text(_) | PartKind::Said { .. } => Unit::Shared,
            PartKind::ToolCall { .. } if assistant => Unit::Shared,
            // The chat wire's own provider block: the reasoning sent back on its message.
            PartKind::Opaque { .. } if assistant => Unit::Shared,
            PartKind::ToolResult { .. }
            | PartKind::Image { .. }
            | PartKind::ToolCall { .. }
            | PartKind::Opaque { .. } => Unit::Dropped,
        }
    }

    fn merges_sides(&self) -> bool {
        false
    }
}
