//! The Google Gemini wire (`POST /v1beta/models/{model}:generateContent`, the body in
//! the REST API's camelCase): leading system items lifted into `systemInstruction`,
//! everything that is not the model's spoken on the user side, same-role neighbours
//! merged into one `Content` (except across a round's start), function responses first
//! in the user content that answers the calls, tools as `functionDeclarations` with
//! their JSON Schema, `generationConfig.maxOutputTokens`. The model is named by the URL,
//! not the body (`explain_turn(...) ->> 'model'`).
//!
//! A function response names its function: the name of the call with its id, among the
//! messages rendered (a round's results follow its calls).

mod dialect;
mod options;
pub(super) mod replay;
mod response;

use std::collections::HashMap;

use super::json::{self, Obj};
use super::shape::{list_of, merged, Pos, Rendered, Request, ToolSpelling};
use crate::items::{Message, PartKind};
use crate::kinds::{Role, Wire};
use crate::options::Options;

/// Call id -> function name, over the messages being rendered.
fn call_names(messages: &[Message]) -> HashMap<&str, &str> {
    messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match &p.kind {
            PartKind::ToolCall { id, name, .. } => Some((id.as_str(), name.as_str())),
            PartKind::Text(_)
            | PartKind::Said { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Image { .. }
            | PartKind::Opaque { .. } => None,
        })
        .collect()
}

fn part(messages: &[Message], names: &HashMap<&str, &str>, pos: Pos, out: &mut String) {
    match &*messages[pos.0].parts[pos.1].kind.on(Wire::Gemini) {
        PartKind::Said { json, .. } => {
            // A text part with its thought signature, replayed verbatim.
            out.push_str(json);
            return;
        }
        PartKind::Text(text) => {
            out.push_str(r#"{"text":"#);
            json::string(out, text);
        }
        PartKind::Image { media_type, data } => {
            out.push_str(r#"{"inlineData":{"mimeType":"#);
            json::string(out, media_type);
            out.push_str(r#","data":"#);
            json::string(out, data);
            out.push('}');
        }
        PartKind::ToolCall {
            id,
            name,
            input,
            recorded,
        } => {
            out.push_str(r#"{"functionCall":{"id":"#);
            json::string(out, id);
            out.push_str(r#","name":"#);
            json::string(out, name);
            out.push_str(r#","args":"#);
            json::raw(out, input);
            out.push('}');
            if let Some(sig) = recorded.get(replay::CALL_SIGNATURE) {
                out.push_str(r#","thoughtSignature":"#);
                json::string(out, sig);
            }
        }
        PartKind::Opaque { json, .. } => {
            // A thought part, replayed verbatim.
            out.push_str(json);
            return;
        }
        PartKind::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            out.push_str(r#"{"functionResponse":{"id":"#);
            json::string(out, call_id);
            out.push_str(r#","name":"#);
            json::string(out, names.get(call_id.as_str()).copied().unwrap_or(call_id));
            out.push_str(if *is_error {
                r#","response":{"error":"#
            } else {
                r#","response":{"output":"#
            });
            json::string(out, content);
            out.push_str("}}");
        }
    }
    out.push('}');
}

fn parts(messages: &[Message], names: &HashMap<&str, &str>, positions: &[Pos], out: &mut String) {
    out.push_str(r#""parts":"#);
    list_of(positions, out, |pos, out| part(messages, names, pos, out));
}

/// The contents from `start` on, as element texts, with the parts each carries.
pub(super) fn elements(req: &Request<'_>, start: usize) -> super::shape::Elements {
    let messages = req.messages;
    let names = call_names(messages);
    let mut texts = Vec::new();
    let mut layout = Vec::new();
    for (role, mut positions, _) in merged(messages, start, Wire::Gemini, false) {
        if role == Role::User {
            // Function responses lead the user content that answers the calls.
            positions.sort_by_key(|&(m, p)| !messages[m].parts[p].kind.is_tool_result());
        }
        let size: usize = positions.iter().map(|&(m, p)| messages[m].parts[p].kind.size()).sum();
        let mut out = String::with_capacity(size + 32 + 48 * positions.len());
        out.push_str(if role == Role::Assistant {
            r#"{"role":"model","#
        } else {
            r#"{"role":"user","#
        });
        parts(messages, &names, &positions, &mut out);
        out.push('}');
        texts.push(out);
        layout.push(positions);
    }
    // Gemini marks nothing in its list (it caches by key): no element has an unmarked form.
    super::shape::Elements {
        texts,
        layout,
        unmarked: Vec::new(),
    }
}

/// Function declarations; Gemini has no tool search, so a deferred tool is left out
/// (its definition is frozen with the seal for the application's own search).
pub(super) const TOOLS: ToolSpelling = ToolSpelling {
    list: (r#"[{"functionDeclarations":["#, "]}]"),
    open: r#"{"name":"#,
    schema: r#","parametersJsonSchema":"#,
    after_schema: "",
    search: None,
};

pub(super) fn render(req: &Request<'_>) -> Rendered {
    let messages = req.messages;
    let (leading, system) = super::shape::leading_system(messages);
    let mut head = Obj::new();
    if !system.is_empty() {
        let mut text = String::from("{");
        parts(messages, &HashMap::new(), &system, &mut text);
        text.push('}');
        head.raw("systemInstruction", &text);
    }
    let head = head.open_list("contents");
    let elements = elements(req, leading);
    let mut tail = super::shape::tail_with_tools(req, &TOOLS);
    let (tool_config, generation) = options::fields(req.options);
    if let Some(c) = &tool_config {
        tail.raw("toolConfig", c);
    }
    let mut config = format!(r#"{{"maxOutputTokens":{}"#, req.max_tokens());
    for field in generation {
        config.push(',');
        config.push_str(&field);
    }
    config.push('}');
    tail.raw("generationConfig", &config);
    Rendered::new(head, elements, tail, system)
}

/// The gemini wire (`POST /v1beta/models/{model}:generateContent`).
pub(crate) struct Gemini;

impl super::form::Form for Gemini {
    fn maker(&self) -> crate::kinds::Provider {
        crate::kinds::Provider::Gemini
    }

    /// Google's Gemini API, and Gemini on Google Cloud's Vertex AI (`dialect.rs`).
    fn speaks(&self, provider: crate::kinds::Provider) -> bool {
        dialect::speaks(provider)
    }

    fn render(&self, req: &Request<'_>) -> Rendered {
        render(req)
    }

    /// Nothing beyond its request type: no rule of `generateContent` across fields is known to
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

    fn system_in_place(&self, _model: Option<&crate::rows::Model>) -> bool {
        false
    }

    fn read_response(&self, o: &crate::json_at::Obj<'_>) -> Option<crate::error::Result<crate::response::Response>> {
        response::recognize(o)
    }

    fn check_options(&self, o: &Options, _max_tokens: i32) -> Result<(), crate::options::Refusal> {
        options::check(o)
    }

    fn recorded_types(&self) -> &'static [&'static crate::part_json::RecordedType] {
        &[&replay::THOUGHT]
    }

    fn recorded_text(&self) -> Option<&'static crate::part_json::RecordedText> {
        Some(&replay::SIGNED_TEXT)
    }

    fn recorded_call_keys(&self) -> &'static [&'static str] {
        &[replay::CALL_SIGNATURE]
    }

    fn own_options(&self) -> &'static [&'static crate::options::OwnOption] {
        &[&options::INCLUDE_THOUGHTS]
    }

    /// `POST /v1beta/models/{model}:countTokens`: the whole `generateContent` request under
    /// `generateContentRequest`, with the model's resource name.
    fn count_body(
        &self,
        model: Option<&str>,
        body: &super::shape::Body,
        _members: &super::count::Members,
    ) -> crate::error::Result<String> {
        let name = model.ok_or_else(|| super::count::unavailable("the request names no model to count for".into()))?;
        let body = body.text();
        let inner = body.trim_start().strip_prefix('{').unwrap_or(&body);
        let resource = json::to_text(&format!("models/{name}"));
        let sep = if inner.trim_start().starts_with('}') { "" } else { "," };
        Ok(format!(
            r#"{{"generateContentRequest":{{"model":{resource}{sep}{inner}}}"#
        ))
    }

    fn keys(&self) -> &'static super::form::Keys {
        &super::form::Keys {
            system: "systemInstruction",
            list: "contents",
            parts: "parts",
            tools: &["tools"],
            mark_block: None,
            mark_key: None,
        }
    }

    /// Gemini's implicit cache.
    fn cache_rules(&self, profile: Option<&crate::profile::Profile>) -> super::form::CacheRules {
        super::form::CacheRules {
            at_marks_only: false,
            lookback: profile.and_then(|p| p.cache_lookback).map(|l| l.max(1) as usize),
            step: None,
            unnamed_five_minutes: false,
        }
    }

    fn tools(&self) -> &'static ToolSpelling {
        &TOOLS
    }

    /// Gemini caches implicitly: a body carries no marks.
    fn marking(&self, _profile: Option<&crate::profile::Profile>) -> super::form::Marking {
        super::form::Marking::Unmarked
    }
}

impl crate::items::Merging for Gemini {
    fn wire(&self) -> crate::kinds::Wire {
        crate::kinds::Wire::Gemini
    }

    /// Every part of a message rides its one element (its `parts`).
    fn unit(&self, kind: &PartKind, _role: crate::kinds::Role) -> crate::items::Unit {
        crate::items::Unit::in_its_message(kind)
    }

    fn merges_sides(&self) -> bool {
        true
    }
}
