//! Wire rendering (docs/design.md, "Wires"): the kernel-neutral message list as the body
//! a provider takes, serialized once, with keys in the order of the provider's own
//! reference. A body is a head, the elements of its one list (`messages`, `input` or
//! `contents`) and a tail; seals store the elements once each (see [`crate::seal`]).
//!
//! Every renderer also reports its [`Layout`]: which compiled parts each element carries,
//! so the estimate counts the body the provider receives (3 tokens per element and per
//! lifted system field, 3 for the request, every part, and the tool definitions' JSON).
//!
//! Each wire is a folder of this module implementing [`Form`] (`form.rs`), registered in
//! [`Wire::form`]; this file holds what asks every wire the same question.

mod anthropic;
mod chat;
mod converse;
pub(crate) mod count;
mod dialect;
mod form;
mod gemini;
pub(crate) mod json;
mod openai;
pub(crate) mod options;
pub(crate) mod replay;
mod responses;
pub(crate) mod shape;

use crate::fields::Tool;
use crate::items::Message;
use crate::kinds::Wire;
use crate::options::Options;
use crate::rows::Model;

pub use dialect::speaks;
pub(crate) use dialect::{dialect_of, provider_of};
pub(crate) use form::{Form, Marking};
pub(crate) use json::to_text as json_text;
use shape::tool_list;
pub(crate) use shape::{sha256, Body, DEFAULT_MAX_TOKENS};
pub(crate) use shape::{Breakpoint, Layout, Pos, Rendered, Request, Stretch};

/// Refuses a body that would be over [`crate::bounds::MAX_TEXT`] before it is rendered:
/// `base` bytes already there (a sealed body a continuation extends), then each part of
/// `messages` as a wire writes it at most (its texts escaped, about 160 bytes of keys and
/// quotes around it) and the tool definitions. Measuring is a sum of lengths; only a body
/// near the bound has its texts scanned for what escaping adds.
pub(crate) fn check_size(messages: &[Message], tools: &[Tool], base: usize) -> crate::error::Result<()> {
    const AROUND: usize = 160;
    let parts = || messages.iter().flat_map(|m| &m.parts);
    let tools_size: usize = tools
        .iter()
        .map(|t| t.name.len() + t.description.as_ref().map_or(0, String::len) + t.input_schema.len() + AROUND)
        .fold(0, usize::saturating_add);
    // Escaping writes a byte as at most six (`\u00xx`).
    let rough = parts()
        .map(|p| p.kind.size().saturating_mul(6).saturating_add(AROUND))
        .fold(base.saturating_add(tools_size), usize::saturating_add);
    if rough <= crate::bounds::MAX_TEXT {
        return Ok(());
    }
    let mut exact = base.saturating_add(tools_size);
    for m in messages {
        crate::bounds::interrupt();
        for p in &m.parts {
            exact = exact.saturating_add(escaped_size(&p.kind)).saturating_add(AROUND);
        }
        crate::bounds::check(exact, "the request body")?;
    }
    Ok(())
}

/// What a part's texts take once escaped as JSON strings (at most).
fn escaped_size(kind: &crate::items::PartKind) -> usize {
    use crate::items::PartKind;
    match kind {
        PartKind::Text(t) => json::escaped_len(t),
        PartKind::ToolCall { id, name, input, .. } => {
            json::escaped_len(id) + json::escaped_len(name) + json::escaped_len(input)
        }
        PartKind::ToolResult { call_id, content, .. } => json::escaped_len(call_id) + json::escaped_len(content),
        PartKind::Image { media_type, data } => json::escaped_len(media_type) + data.len() + media_type.len() + 16,
        PartKind::Opaque { json, .. } => json.len(),
        PartKind::Said { text, json, .. } => json::escaped_len(text).max(json.len()),
    }
}

/// The breakpoints a body of `wire` carries, each moved back to the nearest part that can
/// carry one: on `anthropic` and `converse`, any block but a thinking, reasoning or
/// server-tool block; on `chat` and `responses`, for a model whose profile takes OpenAI's
/// explicit breakpoints, a text or image of a system, developer or user message or a
/// tool's output (OpenAI marks input parts only, as a run's rounds are marked:
/// `compile::marks`), and the request's last such part besides: OpenAI caches nothing it
/// is not told to, and the next turn's request holds this one whole (Anthropic's
/// continuations mark their end with the request-level marker); none otherwise.
pub(crate) fn placed(
    wire: Wire,
    profile: Option<&crate::profile::Profile>,
    messages: &[Message],
    breakpoints: &[Breakpoint],
) -> Vec<Breakpoint> {
    use crate::items::PartKind;
    let any_block = match wire.form().marking(profile) {
        Marking::Blocks => true,
        Marking::InputParts => false,
        Marking::Unmarked => return Vec::new(),
    };
    let carries = |m: usize, p: usize| {
        let msg = &messages[m];
        let kind = &msg.parts[p].kind;
        if any_block {
            // A thinking or server-tool block takes no cache_control, nor is a cachePoint
            // put after a reasoning block (nor after a block the wire does not send): the
            // mark goes on the block before it.
            return kind.markable_on(wire);
        }
        msg.role != crate::kinds::Role::Assistant
            && match kind {
                PartKind::ToolResult { .. } => true,
                PartKind::Text(_) | PartKind::Image { .. } => !msg.plain,
                PartKind::ToolCall { .. } | PartKind::Said { .. } | PartKind::Opaque { .. } => false,
            }
    };
    let mut out: Vec<Breakpoint> = Vec::new();
    let positions: Vec<Pos> = messages
        .iter()
        .enumerate()
        .flat_map(|(m, msg)| (0..msg.parts.len()).map(move |p| (m, p)))
        .collect();
    let end = (!any_block).then(|| Breakpoint {
        message: messages.len().saturating_sub(1),
        part: messages.last().map_or(0, |m| m.parts.len().saturating_sub(1)),
        after: Stretch::History,
    });
    for b in breakpoints.iter().chain(end.iter()) {
        let found = positions
            .iter()
            .rev()
            .filter(|&&pos| pos <= (b.message, b.part))
            .find(|&&(m, p)| carries(m, p));
        if let Some(&(message, part)) = found {
            if !out.iter().any(|o| (o.message, o.part) == (message, part)) {
                out.push(Breakpoint {
                    message,
                    part,
                    after: b.after,
                });
            }
        }
    }
    out
}

impl Wire {
    /// The wire's [`Form`]: the one place a wire is registered.
    pub(crate) fn form(self) -> &'static dyn Form {
        match self {
            Wire::Anthropic => &anthropic::Anthropic,
            Wire::Chat => &chat::Chat,
            Wire::Responses => &responses::Responses,
            Wire::Gemini => &gemini::Gemini,
            Wire::Converse => &converse::Converse,
        }
    }
}

/// Reads a provider's response body as it came, its text (docs/design.md, "The response
/// loop"): what it says, and the SHA-256 of its bytes (what recognizes the same response
/// recorded twice). It is read as `wire` (the turn's) when it is of that wire's shape, so
/// a shape two wires share is read as the turn's; else as the first wire, in the order
/// the wires are declared, whose shape it is. A body nesting deeper than it can be read,
/// or of no wire's shape, is refused as `response_invalid`.
pub fn read_response(text: &str, wire: Option<Wire>) -> crate::error::Result<(crate::response::Response, [u8; 32])> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|_| {
        crate::error::Error::new(
            crate::error::Code::ResponseInvalid,
            "the response nests too deeply to read at /",
        )
        .detail("The value at / does not fit the turn.")
        .hint("Pass the provider's response body as it came.")
    })?;
    Ok((read_response_value(&v, wire)?, sha256(text)))
}

/// Reads a provider's response: as `wire` when it is of that wire's shape, else as the
/// first wire, in the order the wires are declared, whose shape it is; a body of no
/// wire's shape is refused as `response_invalid`.
pub(crate) fn read_response_value(
    v: &serde_json::Value,
    wire: Option<Wire>,
) -> crate::error::Result<crate::response::Response> {
    let o = crate::response::obj(&crate::json_at::At::root(v, ""))?;
    wire.into_iter()
        .chain(Wire::ALL.iter().copied())
        .find_map(|w| w.form().read_response(&o))
        .unwrap_or_else(|| Err(crate::response::invalid("", "is of no known shape")))
}

/// Refuses what `wire`'s provider refuses though its request type takes it.
pub(crate) fn check_request(wire: Wire, req: &Request<'_>, turn: &str) -> crate::error::Result<()> {
    wire.form().check(req, turn)
}

/// What [`check_request`] refuses, for a continuation.
pub(crate) fn check_rounds(
    wire: Wire,
    last: Option<&str>,
    messages: &[Message],
    model: Option<&crate::rows::Model>,
    turn: &str,
) -> crate::error::Result<()> {
    wire.form().check_rounds(last, messages, model, turn)
}

/// Renders a whole request for `wire`.
pub(crate) fn render(wire: Wire, req: &Request<'_>) -> Rendered {
    wire.form().render(req)
}

/// Whether `wire` has a tool search (a deferred tool is sent, and found by it).
pub(crate) fn searches(wire: Wire) -> bool {
    wire.form().tools().search.is_some()
}

/// The text of the tool definitions `wire` loads into the model's context (what the
/// estimate counts): a deferred tool is loaded only when the provider's tool search
/// finds it, and the search tool itself is counted.
pub(crate) fn loaded_tools_text(wire: Wire, tools: &[Tool]) -> Option<String> {
    tool_list(wire.form().tools(), tools, false)
}

/// The tail of a run's continuation on `wire` ([`Form::continuing_tail`]).
pub(crate) fn continuing_tail(wire: Wire, tail: &str, model: Option<&Model>) -> String {
    wire.form().continuing_tail(tail, model)
}

/// Renders messages appended after a sealed body (a continuation): elements only, no
/// system field lifted, with a run's breakpoints. Positions in the layout index `messages`.
pub(crate) fn render_elements(
    wire: Wire,
    messages: &[Message],
    (model, tools): (Option<&Model>, &[crate::fields::Tool]),
    breakpoints: &[Breakpoint],
) -> (Vec<String>, Vec<Vec<Pos>>) {
    let req = Request {
        messages,
        model,
        tools,
        breakpoints,
        options: &Options::default(),
        cache_key: "",
        diagnose: None,
    };
    let elements = wire.form().elements(&req);
    (elements.texts, elements.layout)
}

/// Per-block costs and the total of a rendered request: each part's tokens to its block,
/// each element's and the system field's 3 to the block of its first part, the tool
/// definitions to the `tools_block`, and 3 for the request (in the total only).
pub(crate) fn costs(
    messages: &[Message],
    layout: &Layout,
    tools_tokens: u32,
    blocks: usize,
    tools_block: usize,
) -> (Vec<u32>, u32) {
    use crate::tokens::{add, MESSAGE_OVERHEAD, REQUEST_OVERHEAD};
    let mut per_block = vec![0u32; blocks.max(tools_block + 1)];
    let mut total = REQUEST_OVERHEAD;
    let groups = std::iter::once(&layout.system).chain(layout.elements.iter());
    for group in groups.filter(|g| !g.is_empty()) {
        let first = group[0];
        let b = &mut per_block[messages[first.0].blocks[first.1]];
        *b = add(*b, MESSAGE_OVERHEAD);
        total = add(total, MESSAGE_OVERHEAD);
        for &(m, p) in group {
            let tokens = messages[m].parts[p].tokens;
            let b = &mut per_block[messages[m].blocks[p]];
            *b = add(*b, tokens);
            total = add(total, tokens);
        }
    }
    per_block[tools_block] = add(per_block[tools_block], tools_tokens);
    total = add(total, tools_tokens);
    (per_block, total)
}

/// The total of elements alone (a continuation's appended rounds): parts and 3 each.
pub(crate) fn elements_cost(messages: &[Message], elements: &[Vec<Pos>]) -> u32 {
    elements
        .iter()
        .filter(|g| !g.is_empty())
        .map(|g| {
            crate::tokens::MESSAGE_OVERHEAD + crate::tokens::sum(g.iter().map(|&(m, p)| messages[m].parts[p].tokens))
        })
        .fold(0, crate::tokens::add)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::{marginal_cost, merge, Item, Part, PartKind};
    use crate::kinds::Role;

    /// A small deterministic generator (xorshift64).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, m: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % m
        }
    }

    fn part(r: &mut Rng, role: Role, n: usize) -> Part {
        let tokens = 1 + r.below(9) as u32;
        let kind = match (role, r.below(6)) {
            (Role::Assistant, 0) => PartKind::ToolCall {
                id: format!("c{n}"),
                name: "read".into(),
                input: "{}".into(),
                recorded: Default::default(),
            },
            (Role::Assistant, 1) => PartKind::Opaque {
                wire: [Wire::Anthropic, Wire::Responses, Wire::Gemini, Wire::Converse][r.below(4) as usize],
                json: r#"{"type":"thinking","thinking":"x","signature":"s"}"#.into(),
                text: "x".into(),
            },
            (Role::User, 0) => PartKind::ToolResult {
                call_id: format!("c{n}"),
                content: "ok".into(),
                is_error: false,
            },
            (_, 1) => PartKind::Image {
                media_type: "image/png".into(),
                data: "aGk=".into(),
            },
            _ => PartKind::Text(format!("t{n}")),
        };
        Part { kind, tokens }
    }

    /// One to eight items of any role, of one to three parts each, some kept separate, some
    /// boundaries.
    fn items(r: &mut Rng) -> Vec<Item> {
        (0..1 + r.below(8) as usize)
            .map(|i| {
                let role = [Role::System, Role::User, Role::Assistant, Role::Developer][r.below(4) as usize];
                let parts = (0..1 + r.below(3) as usize).map(|p| part(r, role, i * 4 + p)).collect();
                let mut item = Item::new(role, parts, 0);
                item.separate = r.below(4) == 0;
                item.boundary = r.below(5) == 0;
                item
            })
            .collect()
    }

    /// The cost model (`items::Unit`, `marginal_cost`) against the layout each renderer
    /// reports: never less, and equal unless a system item comes right before an item
    /// of another role or a boundary (on anthropic and gemini the model cannot tell
    /// whether that system run is lifted out).
    #[test]
    fn the_cost_model_is_each_renderers_layout() {
        let mut r = Rng(0x1a70_c057);
        for case in 0..4000 {
            let wire = Wire::ALL[case % Wire::ALL.len()];
            let items = items(&mut r);
            let modelled = marginal_cost(&items, None, wire.form()).0 + crate::tokens::REQUEST_OVERHEAD;
            let messages = merge(items.clone());
            let req = Request {
                messages: &messages,
                model: None,
                tools: &[],
                breakpoints: &[],
                options: &Options::default(),
                cache_key: "",
                diagnose: None,
            };
            let (_, exact) = costs(&messages, &render(wire, &req).layout, 0, 1, 0);
            let ambiguous = items
                .windows(2)
                .any(|w| w[0].role == Role::System && (w[1].role != Role::System || w[1].boundary));
            let at = format!("case {case} on {wire:?}: {items:?}");
            assert!(
                modelled >= exact,
                "{at}: modelled {modelled} under the layout's {exact}"
            );
            if !ambiguous || !matches!(wire, Wire::Anthropic | Wire::Gemini | Wire::Converse) {
                assert_eq!(modelled, exact, "{at}");
            }
        }
    }
    /// What a seal stores of a marked body: each element a breakpoint marks, rendered
    /// unmarked with it (`Rendered::unmarked`), is what a render without breakpoints
    /// writes; every other element is the same in both; and the patches turn the unmarked
    /// elements into the body sent. On every wire, for a model whose profile takes marks.
    #[test]
    fn a_marked_elements_unmarked_text_is_the_plain_renders() {
        let mut r = Rng(0x5ea1_0b0d);
        let mut unmarked_differ = 0;
        for case in 0..3000 {
            let wire = Wire::ALL[case % Wire::ALL.len()];
            let mut profile = crate::profile::tests::adaptive_only();
            profile.cache_breakpoints = Some(match wire {
                Wire::Chat | Wire::Responses => crate::kinds::Breakpoints::PromptCacheBreakpoint,
                Wire::Anthropic | Wire::Gemini | Wire::Converse => crate::kinds::Breakpoints::CacheControl,
            });
            let mut model = crate::testing::model("m", wire.as_str(), Some(100_000));
            model.profile = Some(profile);
            let messages = merge(items(&mut r));
            let positions: Vec<Pos> = messages
                .iter()
                .enumerate()
                .flat_map(|(m, msg)| (0..msg.parts.len()).map(move |p| (m, p)))
                .collect();
            let breakpoints: Vec<Breakpoint> = (0..1 + r.below(4))
                .map(|_| {
                    let (message, part) = positions[r.below(positions.len() as u64) as usize];
                    let after = [Stretch::StablePrefix, Stretch::History, Stretch::Round][r.below(3) as usize];
                    Breakpoint { message, part, after }
                })
                .collect();
            let options = Options::default();
            let req = |breakpoints| Request {
                messages: &messages,
                model: Some(&model),
                tools: &[],
                breakpoints,
                options: &options,
                cache_key: "",
                diagnose: None,
            };
            let marked = render(wire, &req(&breakpoints));
            let plain = render(wire, &req(&[]));
            let at = format!("case {case} on {wire:?}: {breakpoints:?} over {messages:?}");
            assert_eq!(marked.body.elements.len(), plain.body.elements.len(), "{at}");
            assert!(plain.unmarked.is_empty(), "{at}");
            let carries_mark = |i: usize| marked.layout.elements[i].iter().any(|p| req(&breakpoints).marked(*p));
            let listed: Vec<usize> = marked.unmarked.iter().map(|(i, _)| *i).collect();
            assert!(listed.windows(2).all(|w| w[0] < w[1]), "{at}: {listed:?}");
            for (i, text) in &marked.unmarked {
                assert!(carries_mark(*i), "{at}: element {i} listed, not marked");
                assert_eq!(text, &plain.body.elements[*i], "{at}: element {i}");
                unmarked_differ += usize::from(*text != marked.body.elements[*i]);
            }
            for i in (0..plain.body.elements.len()).filter(|i| !listed.contains(i)) {
                assert_eq!(marked.body.elements[i], plain.body.elements[i], "{at}: element {i}");
            }
            let mut stored = plain.body.elements.clone();
            crate::seal::apply(
                &mut stored,
                &crate::seal::patches(&marked.unmarked, &marked.body.elements),
            )
            .unwrap();
            assert_eq!(stored, marked.body.elements, "{at}");
        }
        assert!(unmarked_differ > 1000, "marks placed: {unmarked_differ}");
    }
}
