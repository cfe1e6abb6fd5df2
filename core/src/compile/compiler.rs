//! What a compile works with and returns: its purpose, the compiler's state while it
//! builds a fresh body, the result, what `explain_turn` shows and what the seal stores.
//! The stages (`raw`, `assemble`, `floors`, `select`, `finish`, `continuation`) are
//! functions of the context, the [`Answering`] a fresh compile fixed and the [`Tally`]
//! it keeps; they read these, and none of them is read from here.

use std::collections::HashMap;

use serde::Serialize;
use uuid::Uuid;

use crate::budget::Window;
use crate::context::Context;
use crate::error::{quote, Code, Error};
use crate::estimate::Estimate;
use crate::fields::Tool;
use crate::items::{Item, Message};
use crate::kinds::{Mechanism, PrefaceItem, Role, Wire};
use crate::macros::Values;
use crate::rows::{Model, Turn, User};
use crate::seal::{Frozen, SealDraft};
use crate::tokens::Counter;
use crate::wire::{Body, Breakpoint};

/// What the caller does with the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `compile_turn`: raises budget problems; the caller seals a fresh compile.
    Compile,
    /// `preview_turn`: raises like compile, never seals.
    Preview,
    /// `estimate_turn` and `explain_turn`: report budget problems instead of raising.
    Estimate,
}

impl Purpose {
    pub(super) fn raises(self) -> bool {
        self != Purpose::Estimate
    }
}

/// How a body was made (`explain_turn`): everything but the body itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explain {
    pub(crate) version: u32,
    /// The conversation of the turn compiled.
    pub conversation_id: Uuid,
    /// The turn compiled.
    pub turn_id: Uuid,
    pub(crate) mechanism: Mechanism,
    /// The name of the model the body was compiled for (`None`: neither the turn nor its
    /// answerer names one).
    pub model: Option<String>,
    /// The wire the body is rendered on: the model's (`anthropic` when there is none).
    pub wire: Wire,
    /// Whether the body continues a seal (the turn's, or the one this compile drafts when
    /// rounds were already stored); `messages` is then `None`.
    pub sealed: bool,
    /// The compiled, kernel-neutral list; `None` for a sealed turn (its body is what
    /// was sent, and the list it was rendered from is not kept).
    pub(crate) messages: Option<Vec<Message>>,
    pub(crate) cache_marker: usize,
    pub(crate) cache_breakpoints: Vec<Breakpoint>,
    pub(crate) preface: Vec<PrefaceItem>,
    /// The token estimate of the body: per block, history, the window and the total (a
    /// continuation adds a `rounds` block).
    pub estimate: Estimate,
    /// The deferred callables' catalog lines and tool definitions (when any).
    #[serde(skip_serializing_if = "crate::seal::Deferred::is_empty")]
    pub(crate) deferred: crate::seal::Deferred,
    /// A stateful turn's chain (the body sent is the stored one's stateful form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stateful: Option<crate::seal::Stateful>,
    /// The model row the body was compiled for (its cache rules; not shown).
    #[serde(skip)]
    pub model_row: Option<Model>,
}

/// A compile's result.
#[derive(Debug, Clone)]
pub struct Output {
    /// The request body for the turn's next model call: the sealed body, plus the
    /// rounds written since for a continuation.
    pub body: Body,
    /// How the body was made (what `explain_turn` shows).
    pub explain: Explain,
    /// Present when this was a fresh compile (the turn had no seal).
    pub seal: Option<SealDraft>,
    /// The number of the newest round the body carries (a continuation): the rounds up
    /// to it were sent, and never change again.
    pub last_round: Option<i32>,
    /// What this request clears that no round's record did (`crate::clearing`): stored
    /// with `last_round` when the request is sent (`rounds.cleared`).
    pub cleared: Option<crate::clearing::Record>,
    /// What the caller should hear of a fresh compile that is sent (a NOTICE): the model
    /// it compiled for is deprecated, when it retires and what replaces it.
    pub notice: Option<String>,
    /// A continuation's cache layout as it will be stored when sent (`crate::laid`): what
    /// it was cut with, and how many of the body's leading elements are its seal's first
    /// request's (a stateful turn's: of the chained form both send; the rest it appends).
    /// `None`: not a continuation, or a stateful one whose chained form does not extend its
    /// seal's (`compile::chained_continuing`).
    pub(crate) continuing: Option<crate::laid::Continuing>,
}

impl Explain {
    /// The tool search over what the turn deferred (`search_deferred`): the catalog lines
    /// and tool definitions that match `query` (every whitespace-separated term,
    /// case-insensitively; an empty query matches all), as `{"catalog": [...], "tools": [...]}`.
    pub fn search_deferred(&self, query: &str) -> serde_json::Value {
        let found = self.deferred.search(query);
        serde_json::json!({ "catalog": found.catalog, "tools": found.tools })
    }
}

impl Output {
    /// The cache layout to store with this continuation when it is sent, with the newest
    /// round it carries (`rounds.sent_layout`), given the layout the turn's previous
    /// continuation stored (what both append alike is named, not stored again). `None`:
    /// nothing to store (not a continuation, or a stateful one whose chained form does not
    /// extend its seal's).
    pub fn continuation_layout(&self, previous: Option<&[u8]>, memo: &mut crate::tokens::Memo) -> Option<Vec<u8>> {
        crate::laid::continuation_layout(self.continuing?, &self.body, previous, memo)
    }

    /// The body's token estimate (`explain.estimate`), as the suites read it.
    #[cfg(test)]
    pub(crate) fn estimate(&self) -> &Estimate {
        &self.explain.estimate
    }

    /// The body a provider's token-count endpoint takes for this body's request, on its
    /// wire and for its model (`count_body`); `count_unavailable` on a wire without one.
    pub fn count_body(&self) -> crate::error::Result<String> {
        crate::wire::count::count_body(self.explain.wire, self.explain.model.as_deref(), &self.body)
    }

    /// What a fresh compile's seal stores (`None`: the turn was sealed already): the body
    /// sent first — the output's own, or the seed it continues — and its draft.
    pub fn sealed_body(&self) -> Option<(&Body, &SealDraft)> {
        let draft = self.seal.as_ref()?;
        Some((draft.seed.as_ref().unwrap_or(&self.body), draft))
    }
}

pub(super) fn not_compilable(t: &Turn, why: &str) -> Error {
    Error::new(Code::TurnNotCompilable, format!("turn {} {why}", t.id))
        .hint("compile_turn compiles reply turns (kind = 'reply') of the conversation it is given.")
}

/// The agent that answers the turn: its own answerer, else its conversation's.
pub(super) fn answerer(ctx: &Context) -> crate::error::Result<&User> {
    let t = &ctx.turn;
    let a_id = t.answerer_id.or(ctx.conversation.answerer_id).ok_or_else(|| {
        Error::new(
            Code::TurnNotCompilable,
            format!("turn {} has no answerer (nor has its conversation)", t.id),
        )
        .hint("Set the conversation's answerer_id, or the turn's own answerer_id: the agent that replies.")
    })?;
    ctx.users
        .get(&a_id)
        .ok_or_else(|| not_compilable(t, &format!("names answerer {a_id}, which is not visible")))
}

/// What a fresh compile fixed before its first stage: who answers, for which model, on
/// which wire, with which tools, in which window, and for what. Every stage reads it;
/// none changes it.
pub(super) struct Answering<'a> {
    pub(super) a: &'a User,
    pub(super) model: Option<&'a Model>,
    pub(super) wire: Wire,
    pub(super) tools: Vec<Tool>,
    pub(super) window: Window,
    pub(super) purpose: Purpose,
}

/// What the stages spend and learn as they go: tokens counted, the users history
/// batches name (besides the context's), and the bytes of text built.
pub(super) struct Tally<'m> {
    pub(super) counter: Counter<'m>,
    /// The context's users and those history batches named.
    pub(super) users: HashMap<Uuid, User>,
    /// Every user id read or asked for (one a batch names is asked for once).
    pub(super) known: std::collections::HashSet<Uuid>,
    /// Bytes of text the blocks built so far: what is left of `bounds::MAX_TEXT` bounds
    /// the next substitution.
    pub(super) built: usize,
}

/// A fresh compile before the wire, the gate and the result.
pub(super) struct Fresh {
    pub(super) mechanism: Mechanism,
    pub(super) messages: Vec<Message>,
    /// The estimate's block names, in order (the tools block follows them).
    pub(super) blocks: Vec<String>,
    /// The items each block rendered (roles and floors), history's left empty.
    pub(super) rendered: Vec<Vec<Item>>,
    /// The index of the history block, when there is one.
    pub(super) history_block: Option<usize>,
    /// The first block of the seed: what follows history (the preface and the input).
    pub(super) seed_block: usize,
    pub(super) cache_marker: usize,
    pub(super) breakpoints: Vec<Breakpoint>,
    pub(super) preface: Vec<PrefaceItem>,
    pub(super) catalog: Option<String>,
    /// The deferred callables' catalog lines (left out of `catalog`).
    pub(super) deferred_catalog: Vec<String>,
    pub(super) history: crate::estimate::HistoryEstimate,
    /// The tool results history sends cleared (earlier runs, as their requests cleared them).
    pub(super) history_cleared: Vec<crate::clearing::ClearedResult>,
    /// Where the history taken begins (frozen into the seal for stable trimming).
    pub(super) history_from: Option<crate::history::EntryAt>,
    pub(super) versions: serde_json::Value,
    pub(super) budget_problem: Option<Error>,
}

impl Tally<'_> {
    /// An item of `text` in `block`, its tokens counted and its bytes built (none when
    /// the text is empty).
    pub(super) fn text_item(&mut self, role: Role, text: String, block: usize) -> Option<Item> {
        if text.is_empty() {
            return None;
        }
        self.built = self.built.saturating_add(text.len());
        let tokens = self.counter.count(&text);
        Some(Item::text(role, text, tokens, block))
    }

    /// What is left of the bound on the texts a compile builds.
    pub(super) fn room(&self) -> usize {
        crate::bounds::MAX_TEXT.saturating_sub(self.built)
    }
}

/// The tokens of the tool definitions this wire loads into the model's context (the floors
/// and the estimate both charge them).
pub(super) fn tools_tokens(on: &Answering, tally: &mut Tally) -> u32 {
    match crate::wire::loaded_tools_text(on.wire, &on.tools) {
        Some(text) => tally.counter.count(&text),
        None => 0,
    }
}

/// The macro values of a turn of `ctx` posted by `poster`, dated `date`, answered by `a`
/// (`users`: whom a poster may name as its controlling human).
pub(super) fn values(ctx: &Context, a: &User, users: &HashMap<Uuid, User>, poster: Option<Uuid>, date: &str) -> Values {
    let human = poster.and_then(|p| users.get(&p)).and_then(User::controlling_human);
    Values {
        agent: a.display_name.clone(),
        user: human.and_then(|h| users.get(&h)).and_then(|u| u.display_name.clone()),
        workspace: ctx.workspace.name.clone(),
        date: Some(date.to_string()).filter(|d| !d.is_empty()),
        conversation_kind: Some(ctx.conversation.kind.clone()),
    }
}

/// A request's option levels, lowest first: the model's, the agent's, the turn's (`none`
/// where the turn names no model).
pub(super) fn option_levels<'a>(
    ctx: &'a Context,
    on: &'a Answering<'_>,
    none: &'a crate::options::RequestOptions,
) -> [(&'static str, &'a crate::options::RequestOptions); 3] {
    [
        ("model", on.model.map_or(none, |m| &m.request_options)),
        ("agent", &on.a.request_options),
        ("turn", &ctx.turn.request_options),
    ]
}

pub(super) fn model_name(model: Option<&Model>) -> String {
    model.map(|m| quote(&m.name)).unwrap_or_else(|| "(none)".into())
}

pub(super) fn uniform_role(mut roles: impl Iterator<Item = Role>) -> Option<Role> {
    let first = roles.next()?;
    roles.all(|r| r == first).then_some(first)
}

/// What `explain_turn` shows for a compile frozen as `frozen`.
pub(super) fn explain(
    ctx: &crate::context::Context,
    frozen: &Frozen,
    messages: Option<Vec<Message>>,
    sealed: bool,
) -> Explain {
    Explain {
        version: 2,
        conversation_id: ctx.conversation.id,
        turn_id: ctx.turn.id,
        mechanism: frozen.mechanism,
        model: frozen.model.as_ref().map(|m| m.name.clone()),
        wire: frozen.wire,
        sealed,
        messages,
        cache_marker: frozen.cache_marker,
        cache_breakpoints: frozen.cache_breakpoints.clone(),
        preface: frozen.preface.clone(),
        estimate: frozen.estimate.clone(),
        deferred: frozen.deferred.clone(),
        stateful: frozen.stateful.clone(),
        model_row: frozen.model.clone(),
    }
}

/// The Human the turn selects for `user` memory and skills: a Human, or refused (the
/// write trigger refuses another kind; a row written before it is refused here).
pub(super) fn selected_human(ctx: &crate::context::Context) -> crate::error::Result<Option<uuid::Uuid>> {
    let Some(id) = ctx.turn.memory_user_id else {
        return Ok(None);
    };
    match ctx.users.get(&id) {
        Some(u) if u.kind == crate::kinds::UserKind::Human => Ok(Some(id)),
        found => Err(crate::error::Error::new(
            crate::error::Code::TurnFieldInvalid,
            format!(
                "memory_user_id of turn {} names {}, which is not a Human at /memory_user_id",
                ctx.turn.id,
                found.map_or(id.to_string(), |u| format!("@{}", u.handle))
            ),
        )
        .hint("memory_user_id selects a Human whose user memory and skills the turn reads; an agent's are its own.")),
    }
}
