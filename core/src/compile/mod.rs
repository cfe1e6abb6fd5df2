//! The compiler (docs/design.md, "Compiling a turn"): rows in, the body out. One pipeline
//! serves every mechanism — `default` is the fixed template, `assembly` reads the
//! answerer's, `raw` sends the turn's entries — and every purpose. The stages, one
//! module each: the floors (every block but history), history selection, assembly and
//! the estimate, the gate, and the continuation of a sealed turn.

mod assemble;
mod continuation;
mod finish;
mod floors;
mod gate;
mod raw;
mod select;
mod stateful;

use std::collections::HashMap;

use serde::Serialize;
use uuid::Uuid;

use crate::blocks;
use crate::budget::Window;
use crate::context::Context;
use crate::error::{quote, Code, Error, Result};
use crate::estimate::Estimate;
use crate::fields::Tool;
use crate::history::HistorySource;
use crate::items::{Item, Message};
use crate::kinds::{Mechanism, PrefaceItem, Role, TurnKind, Wire};
use crate::macros::Values;
use crate::rows::{Model, Turn, User};
use crate::seal::Frozen;
use crate::tokens::{Counter, Memo, Tokenizer};
use crate::wire::{Body, Breakpoint};

pub use finish::template_error;
pub use stateful::answerer as stateful_answerer;

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
    fn raises(self) -> bool {
        self != Purpose::Estimate
    }
}

/// How a body was made (`explain_turn`): everything but the body itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explain {
    pub version: u32,
    pub conversation_id: Uuid,
    pub turn_id: Uuid,
    pub mechanism: Mechanism,
    pub model: Option<String>,
    pub wire: Wire,
    pub sealed: bool,
    /// The compiled, kernel-neutral list; `None` for a sealed turn (its body is what
    /// was sent, and the list it was rendered from is not kept).
    pub messages: Option<Vec<Message>>,
    pub cache_marker: usize,
    pub cache_breakpoints: Vec<Breakpoint>,
    pub preface: Vec<PrefaceItem>,
    pub estimate: Estimate,
    /// The deferred callables' catalog lines and tool definitions (when any).
    #[serde(skip_serializing_if = "crate::seal::Deferred::is_empty")]
    pub deferred: crate::seal::Deferred,
    /// A stateful turn's chain (the body sent is the stored one's stateful form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stateful: Option<crate::seal::Stateful>,
    /// The model row the body was compiled for (its cache rules; not shown).
    #[serde(skip)]
    pub model_row: Option<Model>,
}

/// What a fresh compile stores (docs/design.md, "Seals").
#[derive(Debug, Clone, PartialEq)]
pub struct SealDraft {
    /// The sealed body: the request for the turn's first model call.
    pub body: Body,
    /// The body's elements without cache breakpoints (what storage shares between
    /// seals), and the edits that mark them.
    pub plain_elements: Vec<String>,
    pub patches: Vec<crate::seal::Patch>,
    pub frozen: Frozen,
    pub preface: Vec<PrefaceItem>,
    pub catalog: Option<String>,
    /// The row versions the compile read (JSON text).
    pub versions: String,
}

/// A compile's result.
#[derive(Debug, Clone)]
pub struct Output {
    /// The request body for the turn's next model call: the sealed body, plus the
    /// rounds written since for a continuation.
    pub body: Body,
    pub explain: Explain,
    /// Present when this was a fresh compile (the turn had no seal).
    pub seal: Option<SealDraft>,
    /// The number of the newest round the body carries (a continuation): the rounds up
    /// to it were sent, and never change again.
    pub last_round: Option<i32>,
}

impl Output {
    pub fn estimate(&self) -> &Estimate {
        &self.explain.estimate
    }
}

fn not_compilable(t: &Turn, why: &str) -> Error {
    Error::new(Code::TurnNotCompilable, format!("turn {} {why}", t.id))
        .hint("compile_turn compiles reply turns (kind = 'reply') of the conversation it is given.")
}

/// The agent that answers the turn: its own answerer, else its conversation's.
fn answerer(ctx: &Context) -> Result<&User> {
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

/// A skill of a turn's effective set (`prompt.skills_for_turn`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnSkill {
    pub callable: String,
    pub source: String,
    pub name: String,
    pub description: String,
    pub recall_only: bool,
}

/// The complete effective skill set of the turn's callables (seed 003's skill_view):
/// what its catalog lists, then each callable's recall-only skills, with their sources;
/// deferred callables too. The skills are read as they are now (a sealed turn's
/// catalog stays as it was sealed).
pub fn skills_for_turn(ctx: &Context) -> Result<Vec<TurnSkill>> {
    let a = answerer(ctx)?;
    let t = &ctx.turn;
    let bindings = blocks::Bindings {
        agent: a.id,
        workspace: ctx.workspace.id,
        speaker: t.poster_id,
        selected_human: floors::selected_human(ctx)?,
        conversation: ctx.conversation.id,
    };
    let mut skills = ctx.skills.clone();
    skills.extend(blocks::memory_skills(&ctx.memories, &bindings));
    let found = blocks::resolve(&skills, &t.callables, &bindings, a.application.as_deref(), true);
    Ok(found
        .into_iter()
        .map(|(callable, s)| TurnSkill {
            callable: callable.to_string(),
            source: s.source.clone(),
            name: s.name.clone(),
            description: s.description.clone(),
            recall_only: s.recall_only,
        })
        .collect())
}

/// Compiles the turn `ctx.turn`, reading history newest first from `history`. A
/// stateful turn's body is sent in its stateful form (the seal keeps the full one).
pub fn compile(ctx: &Context, history: &mut dyn HistorySource, memo: &mut Memo, purpose: Purpose) -> Result<Output> {
    let mut out = compile_full(ctx, history, memo, purpose)?;
    if let Some(s) = &out.explain.stateful {
        if !out.body.head.is_empty() {
            out.body = crate::wire::responses::stateful(&out.body, s.previous_response_id.as_deref(), s.cut);
        }
    }
    Ok(out)
}

/// A sealed turn's request in its full form (what a stateful turn's chain compares):
/// its seal plus its rounds (`None`: not sealed, or pruned).
pub fn full_request(ctx: &Context, memo: &mut Memo) -> Result<Option<crate::wire::Body>> {
    let Some(sealed) = &ctx.seal else {
        return Ok(None);
    };
    let out = continuation::continue_sealed(ctx, sealed, memo, Purpose::Estimate)?;
    Ok(Some(out.body).filter(|b| !b.head.is_empty()))
}

fn compile_full(ctx: &Context, history: &mut dyn HistorySource, memo: &mut Memo, purpose: Purpose) -> Result<Output> {
    let t = &ctx.turn;
    if t.kind != TurnKind::Reply {
        return Err(not_compilable(t, "is not a reply turn"));
    }
    if let Some(sealed) = &ctx.seal {
        return continuation::continue_sealed(ctx, sealed, memo, purpose);
    }
    let a = answerer(ctx)?;
    let model = match t.model.as_deref().or(a.model.as_deref()) {
        None => None,
        Some(name) => Some(
            ctx.models
                .get(name)
                .ok_or_else(|| not_compilable(t, &format!("names model {}, which does not exist", quote(name))))?,
        ),
    };
    let mut c = Compiler {
        ctx,
        a,
        model,
        wire: model.map_or(Wire::Anthropic, |m| m.wire),
        tools: t.tools.clone().unwrap_or_default(),
        window: Window::of(model, a.reasoning_replay),
        counter: Counter::new(model.map_or(Tokenizer::Cl100kBase, |m| m.tokenizer), memo),
        users: ctx.users.clone(),
        purpose,
        built: 0,
    };
    let fresh = match a.prompt_mechanism {
        Mechanism::Raw => c.raw()?,
        mechanism => c.assembled(mechanism, history)?,
    };
    c.finish(fresh)
}

struct Compiler<'a, 'm> {
    ctx: &'a Context,
    a: &'a User,
    model: Option<&'a Model>,
    wire: Wire,
    tools: Vec<Tool>,
    window: Window,
    counter: Counter<'m>,
    /// The context's users and those history batches named.
    users: HashMap<Uuid, User>,
    purpose: Purpose,
    /// Bytes of text the blocks built so far: what is left of `bounds::MAX_TEXT` bounds
    /// the next substitution.
    built: usize,
}

/// A fresh compile before the wire, the gate and the result.
struct Fresh {
    mechanism: Mechanism,
    messages: Vec<Message>,
    /// The estimate's block names, in order (the tools block follows them).
    blocks: Vec<String>,
    /// The items each block rendered (roles and floors), history's left empty.
    rendered: Vec<Vec<Item>>,
    /// The index of the history block, when there is one.
    history_block: Option<usize>,
    /// The first block of the seed: what follows history (the preface and the input).
    seed_block: usize,
    cache_marker: usize,
    breakpoints: Vec<Breakpoint>,
    preface: Vec<PrefaceItem>,
    catalog: Option<String>,
    /// The deferred callables' catalog lines (left out of `catalog`).
    deferred_catalog: Vec<String>,
    history: crate::estimate::HistoryEstimate,
    /// Where the history taken begins (frozen into the seal for stable trimming).
    history_from: Option<crate::history::EntryAt>,
    versions: serde_json::Value,
    budget_problem: Option<Error>,
}

impl Compiler<'_, '_> {
    /// The macro values of a turn posted by `poster`, dated `date`.
    fn values(&self, poster: Option<Uuid>, date: &str) -> Values {
        let human = poster
            .and_then(|p| self.users.get(&p))
            .and_then(User::controlling_human);
        Values {
            agent: self.a.display_name.clone(),
            user: human
                .and_then(|h| self.users.get(&h))
                .and_then(|u| u.display_name.clone()),
            workspace: self.ctx.workspace.name.clone(),
            date: Some(date.to_string()).filter(|d| !d.is_empty()),
            conversation_kind: Some(self.ctx.conversation.kind.clone()),
        }
    }

    fn text_item(&mut self, role: Role, text: String, block: usize) -> Option<Item> {
        if text.is_empty() {
            return None;
        }
        self.built = self.built.saturating_add(text.len());
        let tokens = self.counter.count(&text);
        Some(Item::text(role, text, tokens, block))
    }

    /// What is left of the bound on the texts a compile builds.
    fn room(&self) -> usize {
        crate::bounds::MAX_TEXT.saturating_sub(self.built)
    }

    fn model_name(&self) -> String {
        model_name(self.model)
    }
}

fn model_name(model: Option<&Model>) -> String {
    model.map(|m| quote(&m.name)).unwrap_or_else(|| "(none)".into())
}

fn uniform_role(mut roles: impl Iterator<Item = Role>) -> Option<Role> {
    let first = roles.next()?;
    roles.all(|r| r == first).then_some(first)
}
