//! What every wire's renderer reads and writes: the request, the body and its layout,
//! the breakpoints, and the helpers the renderers share (the leading system run, the
//! merge of neighbours, the OpenAI wires' body, the tool list). The wires' files read
//! this file; it reads none of them.

use serde::{Deserialize, Serialize};

use super::json;
use crate::fields::Tool;
use crate::items::Message;
use crate::kinds::{CacheTtl, Wire};
use crate::options::Options;
use crate::rows::Model;

/// Whether `wire` carries a part: a provider's own block only rides its own wire.
fn carries(wire: Wire, kind: &crate::items::PartKind) -> bool {
    kind.carried_on(wire)
}

/// The leading run of system messages (what anthropic and gemini lift out of the list):
/// how many, and their parts' positions.
pub(super) fn leading_system(messages: &[Message]) -> (usize, Vec<Pos>) {
    let leading = messages
        .iter()
        .take_while(|m| m.role == crate::kinds::Role::System)
        .count();
    let system = (0..leading)
        .flat_map(|mi| (0..messages[mi].parts.len()).map(move |pi| (mi, pi)))
        .collect();
    (leading, system)
}

/// A body's tail, after its list: the tools as `tools` spells them, when there are any.
pub(super) fn tail_with_tools(req: &Request<'_>, tools: &ToolSpelling) -> json::Obj {
    let mut tail = json::Obj::after("]");
    if let Some(t) = tool_list(tools, req.tools, true) {
        tail.raw("tools", &t);
    }
    tail
}

/// The body of an OpenAI wire (chat, responses): the model, the token limit under
/// `limit`, the list under `list` (every message its own element, no system field
/// lifted), then the tools, the `options` (the wire's fields, as its `options::fields`
/// spells them) and `prompt_cache_key` (when the request has one).
pub(super) fn openai_body(
    req: &Request<'_>,
    own_ttl: Option<CacheTtl>,
    limit: &str,
    list: &str,
    tools: &ToolSpelling,
    options: Vec<(&'static str, String)>,
    elements: Elements,
) -> Rendered {
    let mut head = json::Obj::new();
    if let Some(m) = req.model {
        head.field("model", &m.name);
    }
    head.field(limit, &req.max_tokens());
    let head = head.open_list(list);
    let mut tail = tail_with_tools(req, tools);
    for (key, value) in options {
        tail.raw(key, &value);
    }
    if !req.cache_key.is_empty() {
        // A dialect that takes no prompt_cache_key renders with none (chat/dialect.rs).
        tail.field("prompt_cache_key", req.cache_key);
    }
    let profile = req.model.and_then(|m| m.profile.as_ref());
    let mut cache_options = Vec::new();
    if let (true, Some(p)) = (explicit(profile), profile) {
        // Explicit breakpoints only, at the TTL of the model (Chat takes 30m alone).
        let ttl = request_ttl(own_ttl, Some(p), req.ttl());
        cache_options.push(format!(r#""mode":"explicit","ttl":"{}""#, ttl.as_str()));
    }
    if let Some(Some(previous)) = req.diagnose {
        // The response a cache miss is explained against (Responses only).
        cache_options.push(format!(r#""comparison_response_id":{}"#, json::to_text(previous)));
    }
    if !cache_options.is_empty() {
        tail.raw("prompt_cache_options", &format!("{{{}}}", cache_options.join(",")));
    }
    Rendered::new(head, elements, tail, Vec::new())
}

/// What renders one compiled message of a one-item-per-message wire: its elements and
/// the parts each carries.
pub(super) type Element = fn(&Request<'_>, &Message, usize, &mut Vec<String>, &mut Vec<Vec<Pos>>);

/// The elements of a one-item-per-message wire (chat, responses), message by message:
/// `user_side` for system, developer and user messages, `assistant` for the model's.
pub(super) fn each_message(req: &Request<'_>, user_side: Element, assistant: Element) -> Elements {
    let mut out = Elements::default();
    for (mi, m) in req.messages.iter().enumerate() {
        crate::bounds::interrupt();
        use crate::kinds::Role;
        let element = match m.role {
            Role::Assistant => assistant,
            Role::System | Role::Developer | Role::User => user_side,
        };
        out.push(req, |req, texts, layout| element(req, m, mi, texts, layout));
    }
    out
}

/// The messages from `start` on as the merging wires (anthropic, gemini) group them:
/// user-side or assistant — or system, in place, where the model takes system messages
/// mid-conversation (`system_in_place`) —, same-role neighbours merged unless the later
/// one is a boundary; each with the parts `wire` carries, and whether it is one plain
/// message (a raw entry stored as a string, which Anthropic keeps a string).
pub(super) fn merged(
    messages: &[Message],
    start: usize,
    wire: Wire,
    system_in_place: bool,
) -> Vec<(crate::kinds::Role, Vec<Pos>, bool)> {
    use crate::kinds::Role;
    let mut out: Vec<(Role, Vec<Pos>, bool)> = Vec::new();
    for (mi, m) in messages.iter().enumerate().skip(start) {
        crate::bounds::interrupt();
        let role = match m.role {
            Role::Assistant => Role::Assistant,
            Role::System if system_in_place => Role::System,
            _ => Role::User,
        };
        let parts: Vec<Pos> = (0..m.parts.len())
            .filter(|&pi| carries(wire, &m.parts[pi].kind))
            .map(|pi| (mi, pi))
            .collect();
        if parts.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((r, positions, plain)) if *r == role && !m.boundary => {
                positions.extend(parts);
                *plain = false;
            }
            _ => out.push((role, parts, m.plain)),
        }
    }
    out
}

/// The parts at `positions` as a JSON list, each written by `each`.
pub(super) fn list_of(positions: &[Pos], out: &mut String, mut each: impl FnMut(Pos, &mut String)) {
    out.push('[');
    for (i, &pos) in positions.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(pos, out);
    }
    out.push(']');
}

/// Whether a system entry after the leading run is a system message in place: where the
/// model takes one (its profile's `system_messages`); elsewhere it speaks on the user side.
pub(crate) fn system_in_place(model: Option<&Model>) -> bool {
    model
        .and_then(|m| m.profile.as_ref())
        .is_some_and(|p| p.system_messages)
}

/// The messages from `start` on as the wires that spell a message
/// `{"role":…,"content":…}` write them (anthropic, converse): grouped by [`merged`], tool
/// results leading the user message that answers the calls, each message's content written
/// by `content` (its parts, and whether it is one plain message); with the parts each
/// carries.
pub(super) fn role_elements(
    req: &Request<'_>,
    start: usize,
    wire: Wire,
    mut content: impl FnMut(&Request<'_>, &mut String, &[Pos], bool),
) -> Elements {
    use crate::kinds::Role;
    let messages = req.messages;
    let mut out = Elements::default();
    for (role, mut positions, plain) in merged(messages, start, wire, system_in_place(req.model)) {
        if role == Role::User {
            positions.sort_by_key(|&(m, p)| !messages[m].parts[p].kind.is_tool_result());
        }
        let size: usize = positions.iter().map(|&(m, p)| messages[m].parts[p].kind.size()).sum();
        out.push_one(req, positions, |req, positions| {
            let mut text = String::with_capacity(size + 64 + 48 * positions.len());
            text.push_str(match role {
                Role::Assistant => r#"{"role":"assistant","content":"#,
                Role::System => r#"{"role":"system","content":"#,
                Role::User | Role::Developer => r#"{"role":"user","content":"#,
            });
            content(req, &mut text, positions, plain);
            text.push('}');
            text
        });
    }
    out
}

/// Whether a model's profile takes OpenAI's explicit breakpoints (`prompt_cache_breakpoint`).
pub(crate) fn explicit(profile: Option<&crate::profile::Profile>) -> bool {
    profile.and_then(|p| p.cache_breakpoints) == Some(crate::kinds::Breakpoints::PromptCacheBreakpoint)
}

/// A tool result's text on the OpenAI wires: a string, or, for a model that takes
/// explicit breakpoints (`listed`), a list of one `part` (`input_text` on responses,
/// `text` on chat), marked where a breakpoint falls. One form for every result of such a
/// model, marked or not: a result marked in a run's continuation and unmarked in the next
/// turn's history is the same prefix, which that turn reads from cache.
pub(super) fn tool_output(out: &mut String, part: &str, content: &str, listed: bool, mark: Option<&str>) {
    if !listed {
        json::string(out, content);
        return;
    }
    out.push_str(r#"[{"type":""#);
    out.push_str(part);
    out.push_str(r#"","text":"#);
    json::string(out, content);
    out.push_str(mark.unwrap_or(""));
    out.push_str("}]");
}

/// OpenAI's explicit breakpoint on an input part; its TTL is the request's
/// (`prompt_cache_options.ttl`).
pub(super) const EXPLICIT_BREAKPOINT: &str = r#","prompt_cache_breakpoint":{"mode":"explicit"}"#;
/// The same, at a TTL of its own (a breakpoint after the stable prefix, at the model's
/// `history_cache_ttl`).
const EXPLICIT_BREAKPOINT_30M: &str = r#","prompt_cache_breakpoint":{"mode":"explicit","ttl":"30m"}"#;
const EXPLICIT_BREAKPOINT_12H: &str = r#","prompt_cache_breakpoint":{"mode":"explicit","ttl":"12h"}"#;

/// The request-level TTL of OpenAI's explicit caching (`prompt_cache_options.ttl`): the
/// one the wire takes alone (`own`: Chat's 30m), else the model's, as its profile takes it.
fn request_ttl(own: Option<CacheTtl>, profile: Option<&crate::profile::Profile>, ttl: CacheTtl) -> CacheTtl {
    match (own, profile) {
        (Some(own), _) => own,
        (None, Some(p)) => p.ttl(ttl),
        (None, None) => ttl,
    }
}

/// Anthropic's default when no model row names `max_output_tokens`.
pub(crate) const DEFAULT_MAX_TOKENS: i32 = 4096;

/// A compiled part's position: (message, part) in the compiled list.
pub(crate) type Pos = (usize, usize);

/// What a cache breakpoint closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Stretch {
    /// The slots, documents, memory and catalog: they change only when someone writes them.
    StablePrefix,
    /// The newest history entry: the next turn reads this turn's history from cache.
    History,
    /// A round of a run (a continuation's own; never sealed).
    Round,
}

/// A cache breakpoint: the last part of a stretch of the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Breakpoint {
    pub(crate) message: usize,
    pub(crate) part: usize,
    pub(crate) after: Stretch,
}

/// What a wire renders from.
pub(crate) struct Request<'a> {
    pub(crate) messages: &'a [Message],
    pub(crate) model: Option<&'a Model>,
    pub(crate) tools: &'a [Tool],
    pub(crate) breakpoints: &'a [Breakpoint],
    /// The request's options, merged and checked against the wire.
    pub(crate) options: &'a Options,
    /// `prompt_cache_key` on the wires that take one: the conversation id.
    pub(crate) cache_key: &'a str,
    /// Cache diagnostics asked for (`request_options.cache_diagnostics`), with the
    /// previous response of the answerer to compare with (`Some(None)`: none recorded).
    pub(crate) diagnose: Option<Option<&'a str>>,
}

impl Request<'_> {
    pub(super) fn max_tokens(&self) -> i32 {
        self.model.map_or(DEFAULT_MAX_TOKENS, |m| m.max_output_tokens)
    }

    pub(super) fn ttl(&self) -> CacheTtl {
        self.model.map_or(CacheTtl::FiveMinutes, |m| m.cache_ttl)
    }

    /// The same request without breakpoints.
    fn unmarked(&self) -> Request<'_> {
        Request {
            breakpoints: &[],
            ..*self
        }
    }

    pub(super) fn marked(&self, pos: Pos) -> bool {
        self.breakpoints.iter().any(|b| (b.message, b.part) == pos)
    }

    /// The TTL of the breakpoint at `pos`: the model's `cache_ttl` for the stable prefix,
    /// its `history_cache_ttl` (else `cache_ttl`) for history and a run's rounds.
    pub(super) fn ttl_at(&self, pos: Pos) -> CacheTtl {
        let after = self
            .breakpoints
            .iter()
            .find(|b| (b.message, b.part) == pos)
            .map(|b| b.after);
        match (after, self.model) {
            (Some(Stretch::History | Stretch::Round), Some(m)) => m.history_ttl(),
            _ => self.ttl(),
        }
    }

    /// OpenAI's explicit mark at `pos` (`None`: no breakpoint there): with its own `ttl`
    /// where it is not the request's (`prompt_cache_options.ttl`), as the profile spells it.
    pub(super) fn explicit_mark(&self, pos: Pos, own_ttl: Option<CacheTtl>) -> Option<&'static str> {
        if !self.marked(pos) {
            return None;
        }
        let profile = self.model.and_then(|m| m.profile.as_ref());
        let request = request_ttl(own_ttl, profile, self.ttl());
        let own = profile.map_or(self.ttl_at(pos), |p| p.ttl(self.ttl_at(pos)));
        Some(match own {
            t if t == request => EXPLICIT_BREAKPOINT,
            CacheTtl::TwelveHours | CacheTtl::OneHour => EXPLICIT_BREAKPOINT_12H,
            CacheTtl::ThirtyMinutes | CacheTtl::FiveMinutes => EXPLICIT_BREAKPOINT_30M,
        })
    }
}

/// The SHA-256 of a text: a body's bytes, a seal's records, a response as it came.
pub(crate) fn sha256(text: &str) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes()).into()
}

/// A request body: `head` ends where the list opens (`[`), `tail` starts where it closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    /// The bytes up to and including the list's `[` (`messages`, `input` or `contents`).
    pub head: String,
    /// The list's elements, each its JSON text, without the commas between them.
    pub elements: Vec<String>,
    /// The bytes from the list's closing `]` on.
    pub tail: String,
}

impl Body {
    /// The body's bytes.
    pub(crate) fn text(&self) -> String {
        let mut out = String::with_capacity(self.len());
        out.push_str(&self.head);
        self.push_elements(&mut out);
        out.push_str(&self.tail);
        out
    }

    /// The body with an empty list: its head, then its tail (what the cache model reads
    /// as its frame).
    pub fn frame_text(&self) -> String {
        format!("{}{}", self.head, self.tail)
    }

    /// Appends the list's elements to `out`, with the commas between them.
    pub(crate) fn push_elements(&self, out: &mut String) {
        for (i, e) in self.elements.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(e);
        }
    }

    /// The body's length in bytes (never 0: a body always has its frame, so there is no
    /// `is_empty` to ask).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.head.len()
            + self.tail.len()
            + self.elements.iter().map(String::len).sum::<usize>()
            + self.elements.len().saturating_sub(1)
    }
}

/// Which compiled parts each element, and the lifted system field, carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) system: Vec<Pos>,
    pub(crate) elements: Vec<Vec<Pos>>,
}

/// A list's elements as a wire renders them: each one's text and the parts it carries,
/// and the text without its marks of each element a breakpoint marks (`unmarked`, by
/// index: what storage shares, rendered with the element instead of a second render of
/// the whole body).
#[derive(Debug, Clone, Default)]
pub(crate) struct Elements {
    pub(crate) texts: Vec<String>,
    pub(crate) layout: Vec<Vec<Pos>>,
    pub(crate) unmarked: Vec<(usize, String)>,
}

impl Elements {
    /// Renders the elements `render` writes for one message or group: as `req` marks
    /// them, then, where a breakpoint falls in what they carry, again unmarked.
    fn push(&mut self, req: &Request<'_>, mut render: impl FnMut(&Request<'_>, &mut Vec<String>, &mut Vec<Vec<Pos>>)) {
        let from = self.texts.len();
        render(req, &mut self.texts, &mut self.layout);
        let marked = |positions: &Vec<Pos>| positions.iter().any(|&p| req.marked(p));
        if req.breakpoints.is_empty() || !self.layout[from..].iter().any(marked) {
            return;
        }
        let (mut texts, mut layout) = (Vec::new(), Vec::new());
        render(&req.unmarked(), &mut texts, &mut layout);
        for (i, (text, positions)) in texts.into_iter().zip(&layout).enumerate() {
            if marked(positions) {
                self.unmarked.push((from + i, text));
            }
        }
    }

    /// Renders one element carrying `positions`, as [`Elements::push`] does.
    fn push_one(
        &mut self,
        req: &Request<'_>,
        positions: Vec<Pos>,
        mut render: impl FnMut(&Request<'_>, &[Pos]) -> String,
    ) {
        let text = render(req, &positions);
        if positions.iter().any(|&p| req.marked(p)) {
            self.unmarked
                .push((self.texts.len(), render(&req.unmarked(), &positions)));
        }
        self.texts.push(text);
        self.layout.push(positions);
    }
}

/// A rendered request: its body and its layout, and its marked elements' unmarked text
/// ([`Elements::unmarked`]).
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    pub(crate) body: Body,
    pub(crate) layout: Layout,
    pub(crate) unmarked: Vec<(usize, String)>,
}

impl Rendered {
    /// A body of `head`, the elements, and `tail` closed; `system`: the positions of the
    /// parts the head lifted out of the list.
    pub(super) fn new(head: String, elements: Elements, tail: json::Obj, system: Vec<Pos>) -> Self {
        Rendered {
            body: Body {
                head,
                elements: elements.texts,
                tail: tail.close(),
            },
            layout: Layout {
                system,
                elements: elements.layout,
            },
            unmarked: elements.unmarked,
        }
    }
}

/// How a wire spells its tool list: one renderer for every wire.
pub(crate) struct ToolSpelling {
    /// What opens and closes the list.
    pub(crate) list: (&'static str, &'static str),
    /// A tool, up to its name.
    pub(crate) open: &'static str,
    /// The key of its input schema.
    pub(crate) schema: &'static str,
    /// What follows the schema, before a deferred tool's `defer_loading` and the close.
    pub(crate) after_schema: &'static str,
    /// The wire's tool search, sent when a tool is deferred; `None`: the wire has none,
    /// and a deferred tool is left out.
    pub(crate) search: Option<&'static str>,
}

/// The tool list as `s` spells it (`None` when it lists nothing). A deferred tool is
/// sent with `defer_loading` where the wire has a tool search, and only `with_deferred`
/// (without: what the model's context loads).
pub(super) fn tool_list(s: &ToolSpelling, tools: &[Tool], with_deferred: bool) -> Option<String> {
    let searched = s.search.filter(|_| tools.iter().any(|t| t.deferred));
    let with_deferred = with_deferred && searched.is_some();
    let mut out = String::from(s.list.0);
    let mut listed = 0;
    for t in tools.iter().filter(|t| with_deferred || !t.deferred) {
        if listed > 0 {
            out.push(',');
        }
        listed += 1;
        out.push_str(s.open);
        json::string(&mut out, &t.name);
        if let Some(d) = &t.description {
            out.push_str(r#","description":"#);
            json::string(&mut out, d);
        }
        out.push_str(s.schema);
        json::raw(&mut out, &t.input_schema);
        out.push_str(s.after_schema);
        if t.deferred {
            out.push_str(r#","defer_loading":true"#);
        }
        out.push('}');
    }
    if let Some(search) = searched {
        if listed > 0 {
            out.push(',');
        }
        listed += 1;
        out.push_str(search);
    }
    out.push_str(s.list.1);
    (listed > 0).then_some(out)
}
