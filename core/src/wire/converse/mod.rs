//! The Amazon Bedrock Converse wire (`POST /model/{modelId}/converse`; the body names no
//! model, the URL does, as on gemini), as botocore's `bedrock-runtime` service model
//! spells the operation `Converse`: leading system items lifted into `system` (text
//! blocks), everything that is not the assistant's spoken on the user side, same-role
//! neighbours merged into one `Message` (except across a round's start, whose bytes a
//! continuation already sent: two messages of a role meeting there are refused, as Bedrock
//! refuses them — [`alternation`]), tool results first in the user message that answers
//! the calls, a breakpoint as a `cachePoint` block right after the block it closes, the
//! tools under `toolConfig`.
//!
//! This folder holds what the wire decides, as every wire's does: the body, its elements
//! and its `Form` here, its options' checks and spelling in `options.rs`, its response
//! shape in `response.rs`.

mod options;
mod response;

use super::json::{self, Obj};
use super::shape::{list_of, merged, role_elements, system_in_place, Pos, Rendered, Request, ToolSpelling};
use crate::items::{Message, PartKind};
use crate::kinds::{CacheTtl, Role, Wire};
use crate::options::Options;

/// The `cachePoint` block closing the block before it, at its TTL: Bedrock's TTLs are 5m
/// and 1h (a long TTL of another provider is its 1h); the short one is not spelled.
fn cache_point(ttl: CacheTtl, out: &mut String) {
    out.push_str(if ttl.is_long() {
        r#",{"cachePoint":{"type":"default","ttl":"1h"}}"#
    } else {
        r#",{"cachePoint":{"type":"default"}}"#
    });
}

/// The image format Converse names for a media type (`image/png` is `png`); the four
/// types pgprompt sends natively are the four Converse takes.
fn image_format(media_type: &str) -> &str {
    media_type.strip_prefix("image/").unwrap_or(media_type)
}

/// A tool call or result as the text a request without a `toolConfig` carries it in:
/// Bedrock takes `toolUse` and `toolResult` blocks only beside one ("The toolConfig field
/// must be defined when using toolUse and toolResult content blocks"), and a tool-less
/// turn after a run (a Side of it, a later reply) declares none. The history's rounds are
/// read whole, as text: the call's name, id and input, the result's call id and content.
/// `None`: any other part, spelled as it is.
fn as_text(kind: &PartKind) -> Option<String> {
    match kind {
        PartKind::ToolCall { id, name, input, .. } => Some(format!("[tool call {id}: {name} {}]", &**input)),
        PartKind::ToolResult {
            call_id,
            content,
            is_error,
        } => Some(format!(
            "[tool {} {call_id}]\n{content}",
            if *is_error { "error" } else { "result" }
        )),
        PartKind::Text(_) | PartKind::Said { .. } | PartKind::Opaque { .. } | PartKind::Image { .. } => None,
    }
}

/// How a request spells tool calls and results: as `toolUse` and `toolResult` blocks
/// beside its `toolConfig`, or as text when it has none ([`as_text`]). A continuation's
/// rounds are spelled as its sealed request spelled its calls: blocks where the turn
/// declared a tool (its `toolConfig`), text where every tool it names is deferred (Converse
/// declares none of those).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Calls {
    Blocks,
    Text,
}

impl Calls {
    /// Blocks beside a `toolConfig`: where a tool is declared (none deferred is).
    fn of(tools: &[crate::fields::Tool]) -> Calls {
        match tools.iter().any(|t| !t.deferred) {
            true => Calls::Blocks,
            false => Calls::Text,
        }
    }
}

/// One content block, then its `cachePoint` when it closes a breakpoint.
fn block(req: &Request<'_>, messages: &[Message], pos: Pos, calls: Calls, out: &mut String) {
    let kind = messages[pos.0].parts[pos.1].kind.on(Wire::Converse);
    let text = (calls == Calls::Text).then(|| as_text(&kind)).flatten();
    let kind = match text {
        Some(text) => std::borrow::Cow::Owned(PartKind::Text(text)),
        None => kind,
    };
    match &*kind {
        PartKind::Text(text) | PartKind::Said { text, .. } => {
            out.push_str(r#"{"text":"#);
            json::string(out, text);
            out.push('}');
        }
        PartKind::Opaque { json, .. } => {
            // Reasoning blocks are replayed verbatim, and close no breakpoint.
            out.push_str(json);
            return;
        }
        PartKind::ToolCall { id, name, input, .. } => {
            out.push_str(r#"{"toolUse":{"toolUseId":"#);
            json::string(out, id);
            out.push_str(r#","name":"#);
            json::string(out, name);
            out.push_str(r#","input":"#);
            json::raw(out, input);
            out.push_str("}}");
        }
        PartKind::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            out.push_str(r#"{"toolResult":{"toolUseId":"#);
            json::string(out, call_id);
            out.push_str(r#","content":[{"text":"#);
            json::string(out, content);
            out.push_str(if *is_error {
                r#"}],"status":"error"}}"#
            } else {
                r#"}],"status":"success"}}"#
            });
        }
        PartKind::Image { media_type, data } => {
            out.push_str(r#"{"image":{"format":"#);
            json::string(out, image_format(media_type));
            out.push_str(r#","source":{"bytes":"#);
            json::string(out, data);
            out.push_str("}}}");
        }
    }
    if req.marked(pos) {
        // The TTL the model's profile takes nearest (Nova: 5 minutes only).
        let ttl = req.ttl_at(pos);
        let profile = req.model.and_then(|m| m.profile.as_ref());
        cache_point(profile.map_or(ttl, |p| p.ttl(ttl)), out);
    }
}

fn blocks(req: &Request<'_>, messages: &[Message], positions: &[Pos], calls: Calls, out: &mut String) {
    list_of(positions, out, |pos, out| block(req, messages, pos, calls, out));
}

/// The messages from `start` on, as element texts, with the parts each carries.
fn elements(req: &Request<'_>, start: usize, calls: Calls) -> super::shape::Elements {
    role_elements(req, start, Wire::Converse, |req, out, positions, _| {
        blocks(req, req.messages, positions, calls, out)
    })
}

/// Tool specifications (`toolConfig.tools`; `toolConfig` itself is written by
/// [`render`], around them and the tool choice). Converse has no tool search: a
/// deferred tool is left out.
pub(super) const TOOLS: ToolSpelling = ToolSpelling {
    list: ("[", "]"),
    open: r#"{"toolSpec":{"name":"#,
    schema: r#","inputSchema":{"json":"#,
    after_schema: "}}",
    search: None,
};

/// What Bedrock refuses though botocore's shapes take it, refused before a body is
/// rendered (fail closed, with what to do): a leading system item that is not a
/// non-empty text (`system` takes text blocks of at least one character), and messages
/// that do not alternate from a user's ([`alternation`]). Tool calls and results in a
/// request that declares no tool are not refused: they are read as text ([`as_text`]).
pub(super) fn check(req: &Request<'_>, turn: &str) -> crate::error::Result<()> {
    use crate::error::{Code, Error};
    let refuse = |what: String, hint: &str| Err(Error::new(Code::TurnNotCompilable, what).hint(hint.to_string()));
    let (leading, system) = super::shape::leading_system(req.messages);
    let bad_system = system.iter().any(|&(m, p)| {
        req.messages[m].parts[p]
            .kind
            .on(Wire::Converse)
            .text()
            .is_none_or(str::is_empty)
    });
    if bad_system {
        return refuse(
            format!("turn {turn} is not compilable on the converse wire: a leading system item is empty or not text"),
            "Bedrock's system field takes non-empty text blocks: give the system entry its text.",
        );
    }
    let hint = "Bedrock takes messages that alternate between user and assistant: a run in history recorded two responses in a row; summarize it (a summary turn after it), or keep it out of the window.";
    alternation(
        None,
        &roles(req.messages, leading, system_in_place(req.model)),
        turn,
        hint,
    )?;
    Ok(())
}

/// The roles of the messages from `start` on as they are sent (merged), system messages in
/// place left out.
fn roles(messages: &[Message], start: usize, in_place: bool) -> Vec<Role> {
    merged(messages, start, Wire::Converse, in_place)
        .into_iter()
        .map(|(role, _, _)| role)
        .filter(|&r| r != Role::System)
        .collect()
}

/// Bedrock: "A conversation must start with a user message" and "must alternate between
/// user and assistant roles". Same-role neighbours merge, except where the later one opens
/// a round (merging would change bytes already sent), so two messages of a role can meet
/// there (a round without calls followed by another response). `before`: the role of the
/// message already sent before `roles` (`None`: they open the conversation).
fn alternation(before: Option<Role>, roles: &[Role], turn: &str, hint: &str) -> crate::error::Result<()> {
    use crate::error::{Code, Error};
    if before.is_none() && roles.first() == Some(&Role::Assistant) {
        return Err(Error::new(
            Code::TurnNotCompilable,
            format!("turn {turn} is not compilable on the converse wire: its first message is the assistant's"),
        )
        .hint("Bedrock takes a conversation that starts with a user message: give the agent's template a user-side block before history, or let the conversation open with a user's turn.".to_string()));
    }
    // A system message in place is neither side's: the messages around it must alternate.
    let all: Vec<Role> = before
        .into_iter()
        .chain(roles.iter().copied())
        .filter(|&r| r != Role::System)
        .collect();
    match all.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(Error::new(
            Code::TurnNotCompilable,
            format!(
                "turn {turn} is not compilable on the converse wire: two {} messages in a row",
                if w[0] == Role::Assistant { "assistant" } else { "user" }
            ),
        )
        .hint(hint.to_string())),
        None => Ok(()),
    }
}

/// The rule of [`alternation`] for a continuation: `messages` (a turn's rounds) follow the
/// sealed element `last` (`None`: none).
pub(super) fn check_rounds(
    last: Option<&str>,
    messages: &[Message],
    model: Option<&crate::rows::Model>,
    turn: &str,
) -> crate::error::Result<()> {
    // A system message in place is left out by `alternation`: the rounds after it are
    // checked among themselves.
    let before = last.map(|e| {
        if e.starts_with(r#"{"role":"assistant""#) {
            Role::Assistant
        } else if e.starts_with(r#"{"role":"system""#) {
            Role::System
        } else {
            Role::User
        }
    });
    let hint = "Bedrock takes messages that alternate between user and assistant: between two responses of a run the user side must say something: the tool results of the first, or a steer.";
    alternation(before, &roles(messages, 0, system_in_place(model)), turn, hint)
}

pub(super) fn render(req: &Request<'_>) -> Rendered {
    let messages = req.messages;
    let (leading, system) = super::shape::leading_system(messages);
    // Converse has no tool search: a deferred tool is not declared.
    let tools = super::shape::tool_list(&TOOLS, req.tools, true);
    let calls = Calls::of(req.tools);
    let mut head = Obj::new();
    if !system.is_empty() {
        let mut text = String::new();
        blocks(req, messages, &system, calls, &mut text);
        head.raw("system", &text);
    }
    let head = head.open_list("messages");
    let elements = elements(req, leading, calls);
    let fields = options::fields(req.options);
    let mut tail = Obj::after("]");
    let mut inference = format!(r#"{{"maxTokens":{}"#, req.max_tokens());
    for f in &fields.inference {
        inference.push(',');
        inference.push_str(f);
    }
    inference.push('}');
    tail.raw("inferenceConfig", &inference);
    if let Some(tools) = tools {
        // A tool choice needs tools to choose from: without them there is no toolConfig.
        let choice = fields
            .tool_choice
            .as_ref()
            .map_or(String::new(), |c| format!(r#","toolChoice":{c}"#));
        tail.raw("toolConfig", &format!(r#"{{"tools":{tools}{choice}}}"#));
    }
    if let Some(a) = &fields.additional {
        tail.raw("additionalModelRequestFields", a);
    }
    if let Some(m) = &fields.metadata {
        tail.raw("requestMetadata", m);
    }
    if let Some(o) = &fields.output {
        tail.raw("outputConfig", o);
    }
    Rendered::new(head, elements, tail, system)
}

/// What `POST /model/{modelId}/count-tokens` takes of a body, under `input.converse`.
const COUNTED: &[&str] = &["messages", "system", "toolConfig", "additionalModelRequestFields"];

/// The converse wire (Amazon Bedrock's `POST /model/{modelId}/converse`).
pub(crate) struct Converse;

impl super::form::Form for Converse {
    /// "A conversation must start with a user message."
    fn opens_with_user(&self) -> bool {
        true
    }

    /// Amazon Bedrock's Converse API, whoever made the model.
    fn maker(&self) -> crate::kinds::Provider {
        crate::kinds::Provider::Amazon
    }

    fn render(&self, req: &Request<'_>) -> Rendered {
        render(req)
    }

    fn elements(&self, req: &Request<'_>) -> super::shape::Elements {
        elements(req, 0, Calls::of(req.tools))
    }

    fn system_in_place(&self, model: Option<&crate::rows::Model>) -> bool {
        system_in_place(model)
    }

    fn read_response(&self, o: &crate::json_at::Obj<'_>) -> Option<crate::error::Result<crate::response::Response>> {
        response::recognize(o)
    }

    fn check_options(&self, o: &Options, max_tokens: i32) -> Result<(), crate::options::Refusal> {
        options::check(o, max_tokens)
    }

    /// `POST /model/{modelId}/count-tokens` (the URL names the model): the Converse
    /// body's messages, system, toolConfig and additionalModelRequestFields under
    /// `input.converse` (botocore's `CountTokensRequest`).
    fn count_body(
        &self,
        _model: Option<&str>,
        _body: &super::shape::Body,
        members: &super::count::Members,
    ) -> crate::error::Result<String> {
        Ok(format!(r#"{{"input":{{"converse":{}}}}}"#, members.keep(COUNTED)))
    }

    fn keys(&self) -> &'static super::form::Keys {
        &super::form::Keys {
            system: "system",
            list: "messages",
            parts: "content",
            tools: &["toolConfig", "tools"],
            mark_block: Some("cachePoint"),
            mark_key: None,
        }
    }

    fn cache_rules(&self, profile: Option<&crate::profile::Profile>) -> super::form::CacheRules {
        super::form::CacheRules {
            // Bedrock caches at its cachePoints only.
            at_marks_only: true,
            lookback: Some(profile.and_then(|p| p.cache_lookback).unwrap_or(20).max(1) as usize),
            step: None,
            unnamed_five_minutes: true,
        }
    }

    fn tools(&self) -> &'static ToolSpelling {
        &TOOLS
    }

    /// Bedrock refuses a cachePoint for a model that caches nothing: only a profile that
    /// names breakpoints places them.
    fn marking(&self, profile: Option<&crate::profile::Profile>) -> super::form::Marking {
        if profile.is_some_and(|p| p.cache_breakpoints.is_some()) {
            super::form::Marking::Blocks
        } else {
            super::form::Marking::Unmarked
        }
    }

    fn check(&self, req: &Request<'_>, turn: &str) -> crate::error::Result<()> {
        check(req, turn)
    }

    fn check_rounds(
        &self,
        last: Option<&str>,
        messages: &[Message],
        model: Option<&crate::rows::Model>,
        turn: &str,
    ) -> crate::error::Result<()> {
        check_rounds(last, messages, model, turn)
    }
}

impl crate::items::Merging for Converse {
    fn wire(&self) -> crate::kinds::Wire {
        crate::kinds::Wire::Converse
    }

    /// Every part of a message rides its one element (its `content` blocks).
    fn unit(&self, kind: &PartKind, _role: crate::kinds::Role) -> crate::items::Unit {
        crate::items::Unit::in_its_message(kind)
    }

    fn merges_sides(&self) -> bool {
        true
    }
}
