//! A sealed turn: the sealed body as it was stored, plus the rounds written since, each
//! rendered on the wire and for the model the seal froze. What is appended never merges
//! into the sealed body, so each request of a run is a byte prefix of the next — until
//! an in-turn summary replaces the seed and the rounds before it.

use super::clearing;
use super::compiler::{explain, Output, Purpose};
use super::gate;
use crate::budget::Window;
use crate::clearing::{Cleared, ClearedResult, Record};
use crate::context::Context;
use crate::error::{Code, Error, Result};
use crate::estimate::BlockEstimate;
use crate::history::ROUNDS_SUMMARY_HEADER;
use crate::items::{counted, merge, Item};
use crate::kinds::Role;
use crate::rounds;
use crate::rounds::cleared_by;
use crate::seal::{Frozen, Sealed};
use crate::tokens::{Counter, Memo};
use crate::voice::Voices;
use crate::wire::{self, Body};

pub(super) fn continue_sealed(ctx: &Context, sealed: &Sealed, memo: &mut Memo, purpose: Purpose) -> Result<Output> {
    let mut counter = Counter::new(sealed.frozen.estimate.window.tokenizer, memo);
    extend(ctx, sealed, &mut counter, purpose)
}

/// A sealed turn's request in its full form (what a stateful turn's chain compares):
/// its seal plus its rounds (`None`: not sealed, or pruned).
pub(crate) fn full_request(ctx: &Context, memo: &mut Memo) -> Result<Option<Body>> {
    let Some(sealed) = &ctx.seal else {
        return Ok(None);
    };
    let out = continue_sealed(ctx, sealed, memo, Purpose::Estimate)?;
    Ok(Some(out.body).filter(|b| !b.head.is_empty()))
}

fn pruned(ctx: &Context) -> Error {
    Error::new(
        Code::SealedRequestPruned,
        format!(
            "turn {} of conversation {} was sealed, and prune_seals dropped its body",
            ctx.turn.id, ctx.conversation.id
        ),
    )
    .detail("Its digest, size and estimate are kept in prompt.seals.")
    .hint("A pruned turn cannot be sent again; post a new turn.")
}

/// The items the summary case starts with: the history parts that shared an element
/// with the seed, then the summary itself.
fn summary_items(sealed: &Sealed, summary: &str, counter: &mut Counter<'_>) -> Result<Vec<Item>> {
    let mut items: Vec<Item> = sealed
        .frozen
        .seed_cut
        .carried()?
        .into_iter()
        .map(|e| Item::new(e.role, e.parts.into_iter().map(|k| counted(k, counter)).collect(), 0))
        .collect();
    let text = format!("{ROUNDS_SUMMARY_HEADER}{summary}");
    let tokens = counter.count(&text);
    items.push(Item::text(Role::User, text, tokens, 0));
    Ok(items)
}

/// The sealed body of `sealed`, extended by the turn's rounds.
pub(super) fn extend(ctx: &Context, sealed: &Sealed, counter: &mut Counter<'_>, purpose: Purpose) -> Result<Output> {
    let frozen = &sealed.frozen;
    let Some(body) = &sealed.body else {
        if purpose.raises() {
            return Err(pruned(ctx));
        }
        // Explained, not sent: what the seal froze is still there.
        let nothing = Body {
            head: String::new(),
            elements: Vec::new(),
            tail: String::new(),
        };
        return Ok(as_sealed(ctx, frozen, nothing));
    };
    if ctx.rounds.is_empty() {
        return Ok(as_sealed(ctx, frozen, body.clone()));
    }
    let t = &ctx.turn;
    let summary = t.summary.as_deref().filter(|s| !s.is_empty() && summarizable(frozen));
    let (kept, base_total, first_round) = match summary {
        Some(_) => (
            &body.elements[..frozen.seed_cut.keep.min(body.elements.len())],
            frozen.estimate.total.saturating_sub(frozen.seed_cut.tokens),
            t.summary_round.unwrap_or(i32::MIN),
        ),
        None => (&body.elements[..], frozen.estimate.total, i32::MIN),
    };
    let at = Appending {
        kept,
        sent: body.len(),
        base_total,
        summary,
        first_round,
    };
    let (tail, step) = cleared_appended(ctx, sealed, &at, counter)?;
    let total = tail.total;
    let window: Window = frozen.estimate.window.window;
    let mut estimate = frozen.estimate.clone();
    estimate.blocks.push(BlockEstimate {
        block: "rounds".into(),
        role: None,
        tokens: tail.tokens,
        floor_unmet: !window.fits(total),
    });
    estimate.total = total;
    // History's, as the seal froze them, then the run's own.
    estimate.cleared.extend(tail.cleared);
    if purpose.raises() {
        let model = super::compiler::model_name(frozen.model.as_ref());
        gate::gate(ctx, &model, &window, &estimate)?;
    }
    let mut explain = explain(ctx, frozen, None, true);
    explain.estimate = estimate;
    Ok(Output {
        body: Body {
            head: body.head.clone(),
            elements: kept.iter().cloned().chain(tail.elements).collect(),
            tail: continuing_tail(frozen, &body.tail, total),
        },
        explain,
        seal: None,
        last_round: ctx.rounds.iter().map(|r| r.n).max(),
        cleared: step,
        notice: None,
        continuing: continuing(frozen, kept.len()),
    })
}

/// A sealed turn's `body` as its seal holds it (no round to append).
fn as_sealed(ctx: &Context, frozen: &Frozen, body: Body) -> Output {
    Output {
        body,
        explain: explain(ctx, frozen, None, true),
        seal: None,
        last_round: None,
        cleared: None,
        notice: None,
        continuing: None,
    }
}

/// What a continuation's layout is cut with and how many sealed elements it keeps (a
/// stateful turn's, of this full body: `compile` counts them in the chained form it sends).
fn continuing(frozen: &Frozen, kept: usize) -> Option<crate::laid::Continuing> {
    Some(crate::laid::Continuing {
        cut: crate::laid::Cut::of(frozen.wire, frozen.model.as_ref()),
        kept,
    })
}

/// Where a continuation appends: after the sealed elements it keeps (`kept`, of `sent`
/// bytes, `base_total` tokens), the in-turn summary if any, then the rounds from
/// `first_round` on.
struct Appending<'a> {
    kept: &'a [String],
    sent: usize,
    base_total: u32,
    summary: Option<&'a str>,
    first_round: i32,
}

/// What a continuation appends, rendered and checked: its elements, their tokens, and
/// the request's total.
struct Appended {
    elements: Vec<String>,
    tokens: u32,
    total: u32,
    /// The results it sends cleared, as the estimate lists them.
    cleared: Vec<ClearedResult>,
}

/// What a continuation appends, with what the rounds' records cleared and the step this
/// request takes under the seal's clearing rule, if any (`crate::clearing`).
fn cleared_appended(
    ctx: &Context,
    sealed: &Sealed,
    at: &Appending<'_>,
    counter: &mut Counter<'_>,
) -> Result<(Appended, Option<Record>)> {
    let frozen = &sealed.frozen;
    let mut cleared = recorded(ctx, frozen.clear_tool_results.as_ref());
    let mut tail = appended(ctx, sealed, at, &cleared, counter)?;
    let native = frozen.model.as_ref().is_some_and(|m| m.native_images);
    let carried: Vec<&rounds::Round> = ctx.rounds.iter().filter(|r| r.n >= at.first_round).collect();
    let step = frozen
        .clear_tool_results
        .as_ref()
        .and_then(|rule| clearing::step(rule, tail.total, &carried, &cleared, counter));
    if let Some(step) = &step {
        cleared = cleared.with(step);
        tail = appended(ctx, sealed, at, &cleared, counter)?;
    }
    tail.cleared = clearing::listed(&cleared, &carried, native, counter);
    Ok((tail, step))
}

/// The summary and the rounds appended after the sealed elements, with `cleared`
/// results sent as their placeholders.
fn appended(
    ctx: &Context,
    sealed: &Sealed,
    at: &Appending<'_>,
    cleared: &Cleared,
    counter: &mut Counter<'_>,
) -> Result<Appended> {
    let frozen = &sealed.frozen;
    let mut items = match at.summary {
        Some(s) => summary_items(sealed, s, counter)?,
        None => Vec::new(),
    };
    items.extend(round_items(ctx, frozen, at.first_round, cleared, counter));
    if let Some(first) = items.first_mut() {
        // Whatever follows the sealed elements starts an element of its own.
        first.boundary = true;
    }
    let messages = merge(items);
    checked(frozen, at.kept, &messages, at.sent, &ctx.turn.id.to_string())?;
    let (elements, layout) = rendered_rounds_marked(ctx, frozen, &messages, at.base_total);
    let tokens = wire::elements_cost(&messages, &layout);
    Ok(Appended {
        elements,
        tokens,
        total: at.base_total + tokens,
        cleared: Vec::new(),
    })
}

/// What the wire refuses of the rounds appended after the sealed elements `kept` (`sent`
/// bytes): too large a request, or what the provider would refuse ([`wire::check_rounds`]).
fn checked(
    frozen: &Frozen,
    kept: &[String],
    messages: &[crate::items::Message],
    sent: usize,
    turn: &str,
) -> Result<()> {
    wire::check_size(messages, &[], sent)?;
    wire::check_rounds(
        frozen.wire,
        kept.last().map(String::as_str),
        messages,
        frozen.model.as_ref(),
        turn,
    )
}

/// The appended messages rendered, with the run's breakpoints (none on a stateful
/// chain, whose context the provider caches): rendered once to find where the rounds'
/// blocks fall, again only when a round takes a mark.
fn rendered_rounds_marked(
    ctx: &Context,
    frozen: &Frozen,
    messages: &[crate::items::Message],
    base: u32,
) -> (Vec<String>, Vec<Vec<wire::Pos>>) {
    let model = frozen.model.as_ref();
    // The turn's tools, as its sealed request declared them (a sealed turn's columns
    // never change): a wire spells its rounds' calls as that request could take them.
    let tools = ctx.turn.tools.as_deref().unwrap_or_default();
    let (elements, layout) = wire::render_elements(frozen.wire, messages, (model, tools), &[]);
    if frozen.stateful.is_some() {
        return (elements, layout);
    }
    let appended = super::marks::Appended {
        messages,
        layout: &layout,
        base_tokens: base,
        sealed_marks: frozen.cache_breakpoints.len(),
    };
    let marks = super::marks::run_breakpoints(frozen.wire, model.and_then(|m| m.profile.as_ref()), &appended);
    match marks.is_empty() {
        true => (elements, layout),
        false => wire::render_elements(frozen.wire, messages, (model, tools), &marks),
    }
}

/// A continuation's tail: the request-level cache marker where the wire takes one and
/// the request reaches the model's minimum cacheable length.
fn continuing_tail(frozen: &Frozen, tail: &str, total: u32) -> String {
    let model = frozen.model.as_ref();
    let minimum = model
        .and_then(|m| m.profile.as_ref())
        .map_or(0, |p| u32::try_from(p.min_cache_tokens).unwrap_or(0));
    match total >= minimum {
        true => wire::continuing_tail(frozen.wire, tail, model),
        false => tail.to_string(),
    }
}

/// Whether an in-turn summary can replace the turn's seed and rounds: always, but on a
/// stateful chain whose provider holds part of the seed (its cut falls after where the
/// seed begins; the seed is new since the previous response, so it never does). A
/// chained turn sends its seed and rounds as input after the previous response's id, so
/// the summary replaces them there as it does in a full body.
fn summarizable(frozen: &Frozen) -> bool {
    frozen
        .stateful
        .as_ref()
        .is_none_or(|s| s.previous_response_id.is_none() || s.cut <= frozen.seed_cut.keep)
}

/// The items of the turn's rounds from `first_round` on, rendered as the seal froze
/// the answerer and the model's image support.
fn round_items(
    ctx: &Context,
    frozen: &Frozen,
    first_round: i32,
    cleared: &Cleared,
    counter: &mut Counter<'_>,
) -> Vec<Item> {
    let native = frozen.model.as_ref().is_some_and(|m| m.native_images);
    rendered_rounds(ctx, frozen.answerer_id, native, first_round, cleared, counter)
}

/// What the turn's rounds' records cleared, under the turn's rule (a turn without one
/// clears nothing, whatever a record says).
fn recorded(ctx: &Context, rule: Option<&crate::clearing::Rule>) -> Cleared {
    rule.map_or_else(Cleared::default, |r| cleared_by(&ctx.rounds, Some(&r.placeholder)))
}

/// What a first compile's floors may fall short of its rendered request by, in tokens,
/// before a clearing step is taken as certain ([`rounds_floor`]).
const CERTAIN_MARGIN: u32 = 64;

/// What the rounds a turn already holds add after its seed, when its first compile
/// finds them (history is funded after them): the in-turn summary, if any, and the
/// rounds it does not replace, as [`extend`] appends them. Never less than what is
/// appended (the seed's parts a summary keeps are already counted in the seed).
/// Clearing runs before history is funded: where the request is above the trigger of
/// `rule` without any history (`others`: every other floor), the step [`extend`] will
/// take is certain, and the rounds count as it leaves them.
pub(super) fn rounds_floor(
    ctx: &Context,
    (answerer, native, wire): (uuid::Uuid, bool, crate::kinds::Wire),
    (rule, others): (Option<&crate::clearing::Rule>, u32),
    counter: &mut Counter<'_>,
) -> u32 {
    if ctx.rounds.is_empty() {
        return 0;
    }
    let t = &ctx.turn;
    let mut first_round = i32::MIN;
    let summary = t.summary.as_deref().filter(|s| !s.is_empty()).map(|s| {
        first_round = t.summary_round.unwrap_or(i32::MIN);
        format!("{ROUNDS_SUMMARY_HEADER}{s}")
    });
    let cost = |cleared: &Cleared, counter: &mut Counter<'_>| {
        let mut items = Vec::new();
        if let Some(text) = &summary {
            let tokens = counter.count(text);
            items.push(Item::text(Role::User, text.clone(), tokens, 0));
        }
        items.extend(rendered_rounds(ctx, answerer, native, first_round, cleared, counter));
        if let Some(first) = items.first_mut() {
            first.boundary = true;
        }
        crate::items::marginal_cost(&items, None, wire.form()).0
    };
    let cleared = recorded(ctx, rule);
    let whole = cost(&cleared, counter);
    let carried: Vec<&rounds::Round> = ctx.rounds.iter().filter(|r| r.n >= first_round).collect();
    // Certain only with room to spare: the request's estimate is rendered, these floors
    // are summed (their joins differ by a few tokens a message).
    let step = rule.and_then(|rule| {
        let total = crate::tokens::add(others, whole).saturating_sub(CERTAIN_MARGIN);
        clearing::step(rule, total, &carried, &cleared, counter)
    });
    match step {
        Some(step) => cost(&cleared.with(&step), counter),
        None => whole,
    }
}

fn rendered_rounds(
    ctx: &Context,
    answerer: uuid::Uuid,
    native: bool,
    first_round: i32,
    cleared: &Cleared,
    counter: &mut Counter<'_>,
) -> Vec<Item> {
    let voices = Voices {
        users: &ctx.users,
        creator: ctx.conversation.creator_id,
    };
    let how = rounds::Reading {
        answerer: ctx.users.get(&answerer),
        native_images: native,
        thinking: rounds::Thinking::Keep,
        cleared,
        block: 0,
    };
    ctx.rounds
        .iter()
        .filter(|r| r.n >= first_round)
        .flat_map(|round| rounds::render(round, &voices, &how, counter))
        .collect()
}
