//! The compiler (docs/design.md, "Compiling a turn"): rows in, the body out. One pipeline
//! serves every mechanism — `default` is the fixed template, `assembly` reads the
//! answerer's, `raw` sends the turn's entries — and every purpose. The stages, one
//! module each: the floors (every block but history), history selection, assembly and
//! the estimate, the gate, and the continuation of a sealed turn.

mod assemble;
pub(crate) mod clearing;
pub(crate) mod compiler;
mod continuation;
pub(crate) mod finish;
mod floors;
mod gate;
mod marks;
mod raw;
mod select;
pub(crate) mod skills;
pub(crate) mod stateful;

use crate::budget::Window;
use crate::context::Context;
use crate::error::{quote, Result};
use crate::history::HistorySource;
use crate::kinds::{Mechanism, TurnKind, Wire};
use crate::tokens::{Counter, Memo, Tokenizer};

pub(crate) use compiler::{Output, Purpose};

/// Compiles the turn `ctx.turn`, reading history newest first from `history`. A
/// stateful turn's body is sent in its stateful form (the seal keeps the full one).
pub fn compile(ctx: &Context, history: &mut dyn HistorySource, memo: &mut Memo, purpose: Purpose) -> Result<Output> {
    let mut out = compile_full(ctx, history, memo, purpose)?;
    // A deprecated model still compiles; the caller hears of it once per fresh compile.
    if ctx.seal.is_none() && purpose.raises() {
        let name = out.explain.model.as_deref().map(|q| q.trim_matches('"'));
        out.notice = name
            .and_then(|n| ctx.models.get(n))
            .and_then(crate::rows::Model::deprecation);
    }
    if let Some(s) = &out.explain.stateful {
        if !out.body.head.is_empty() {
            let chained = out
                .explain
                .wire
                .form()
                .chained(&out.body, s.previous_response_id.as_deref(), s.cut)?;
            out.continuing = match out.continuing {
                Some(c) => chained_continuing(ctx, c, (&out.body, &chained)),
                None => None,
            };
            let full = std::mem::replace(&mut out.body, chained);
            // A fresh compile seals the full form: it becomes the draft's seed (moved).
            if let Some(draft) = out.seal.as_mut().filter(|d| d.seed.is_none()) {
                draft.seed = Some(full);
            }
        }
    }
    Ok(out)
}

/// A stateful continuation's layout is of the chained form it sends (`bodies`: its full
/// form, then its chained form): the seal's elements it keeps, counted past those the
/// chained form leaves out, where that form's frame and cut are its seal's first request's
/// (the reader takes its frame and first elements from there). Otherwise `None`:
/// it is not stored, and the report compiles it again. Never an error: the layout is
/// bookkeeping, not what is sent.
fn chained_continuing(
    ctx: &Context,
    c: crate::laid::Continuing,
    (full, chained): (&crate::wire::Body, &crate::wire::Body),
) -> Option<crate::laid::Continuing> {
    let seal = ctx.seal.as_ref()?;
    // The seal's first request as its layout was stored (`laid::first_sent_frame`).
    let (frame, from) = crate::laid::first_sent_frame(&seal.frozen, seal.body.as_ref()?).ok()?;
    let left_out = full.elements.len().saturating_sub(chained.elements.len());
    let same = frame == chained.frame_text() && from == left_out;
    let kept = c.kept.checked_sub(left_out).filter(|_| same)?;
    Some(crate::laid::Continuing { kept, ..c })
}

fn compile_full(ctx: &Context, history: &mut dyn HistorySource, memo: &mut Memo, purpose: Purpose) -> Result<Output> {
    let t = &ctx.turn;
    if t.kind != TurnKind::Reply {
        return Err(compiler::not_compilable(t, "is not a reply turn"));
    }
    if let Some(sealed) = &ctx.seal {
        return continuation::continue_sealed(ctx, sealed, memo, purpose);
    }
    let a = compiler::answerer(ctx)?;
    let model = match t.model.as_deref().or(a.model.as_deref()) {
        None => None,
        Some(name) => Some(ctx.models.get(name).ok_or_else(|| {
            compiler::not_compilable(t, &format!("names model {}, which does not exist", quote(name)))
        })?),
    };
    if let (Some(m), true) = (model, purpose.raises()) {
        m.check_lifecycle(match t.model {
            Some(_) => crate::rows::ModelChosenBy::Turn(t.id),
            None => crate::rows::ModelChosenBy::Answerer(a.id),
        })?;
    }
    let on = compiler::Answering {
        a,
        model,
        wire: model.map_or(Wire::DEFAULT, |m| m.wire),
        tools: t.tools.clone().unwrap_or_default(),
        window: Window::of(model, a.reasoning_replay),
        purpose,
    };
    let mut tally = compiler::Tally {
        counter: Counter::new(model.map_or(Tokenizer::Cl100kBase, |m| m.tokenizer), memo),
        users: ctx.users.clone(),
        known: ctx.users.keys().copied().collect(),
        built: 0,
    };
    let fresh = match a.prompt_mechanism {
        Mechanism::Raw => raw::raw(ctx, &mut tally)?,
        mechanism => assemble::assembled(ctx, &on, &mut tally, mechanism, history)?,
    };
    finish::finish(ctx, &on, &mut tally, fresh)
}
