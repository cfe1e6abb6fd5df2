//! Assembly under `default` and `assembly`: the floors, history funded from what they
//! leave, everything merged into the compiled list, and where the cache breakpoints go.

use super::compiler::{Answering, Fresh, Tally};
use crate::budget::{self, Unavailable};
use crate::context::Context;
use crate::error::{Code, Error, Result};
use crate::estimate::HistoryEstimate;
use crate::history::HistorySource;
use crate::items::{self, merge, Item, Message};
use crate::kinds::{Mechanism, PrefaceItem};
use crate::template::{Block, HistoryKnobs, Template};
use crate::wire::{Breakpoint, Stretch};

/// The compiled list under `default` or `assembly`: the floors, then history from what
/// they leave, merged.
pub(super) fn assembled(
    ctx: &Context,
    on: &Answering,
    tally: &mut Tally,
    mechanism: Mechanism,
    source: &mut dyn HistorySource,
) -> Result<Fresh> {
    let t = &ctx.turn;
    let template = match mechanism {
        Mechanism::Assembly => super::floors::answerer_template(on.a)?,
        _ => Template::default_order(),
    };
    super::floors::check_placement(&template, &t.inline, t)?;
    check_variables(&template, t, mechanism)?;
    let hist_ix = template.history_index();
    let knobs = match &template.blocks[hist_ix] {
        Block::History(k) => *k,
        _ => HistoryKnobs::default(),
    };
    let knobs = t.history.map_or(knobs, |h| knobs.overridden_by(h));
    let values = super::compiler::values(ctx, on.a, &tally.users, t.poster_id, &t.date);
    let floors = super::floors::floors(ctx, on, tally, &template, &values)?;
    let rendered = floors.rendered;
    let input_ix = template.blocks.len() - 1;

    // The floors: the blocks on either side of history, each side costed on its own
    // (history may come between them), the request and the tool definitions, in the
    // wire's own units (`items::Unit`).
    let pre: Vec<Item> = rendered[..hist_ix].iter().flatten().cloned().collect();
    let post: Vec<Item> = rendered[hist_ix + 1..].iter().flatten().cloned().collect();
    let (floors_raw, after_history) = floors_raw(ctx, on, tally, (&pre, &post));
    let before = super::select::Preceding {
        items: &pre,
        floors_raw,
        floors: on.window.inflate(floors_raw),
    };

    // History: funded from what remains, newest entry first.
    let laid = (&template, hist_ix);
    let (selection, budget_problem) = funded_history(ctx, on, tally, source, laid, &knobs, (&before, after_history))?;
    let mut versions = floors.versions;
    versions.history = Some(selection.estimate.selected);

    let preface = preface(&rendered[hist_ix + 1..input_ix]);
    let pre_parts: usize = pre.iter().map(|i| i.parts.len()).sum();
    let history_parts: usize = selection.items.iter().map(|i| i.parts.len()).sum();
    let messages = merge(pre.into_iter().chain(selection.items).chain(post));
    let cache_marker = cache_marker(&messages, pre_parts);
    let breakpoints = breakpoints(&messages, pre_parts, history_parts);
    Ok(Fresh {
        mechanism,
        messages,
        blocks: template.blocks.iter().map(Block::name).collect(),
        rendered,
        history_block: Some(hist_ix),
        seed_block: hist_ix + 1,
        cache_marker,
        breakpoints,
        preface,
        catalog: floors.catalog,
        deferred_catalog: floors.deferred_catalog,
        history: selection.estimate,
        history_cleared: selection.cleared,
        history_from: selection.from,
        versions: versions.to_json(),
        budget_problem,
    })
}

/// The floors' tokens, in the wire's own units (`items::Unit`): the blocks on either side
/// of history, each side costed on its own, the request, the tool definitions, and the
/// rounds the turn holds already (appended after the seed, as a step of clearing that is
/// certain leaves them); with what follows history.
fn floors_raw(
    ctx: &Context,
    on: &Answering,
    tally: &mut Tally,
    (pre, post): (&[Item], &[Item]),
) -> (u32, Option<items::Follower>) {
    let tools_tokens = super::compiler::tools_tokens(on, tally);
    let (post_cost, after_history) = items::marginal_cost(post, None, on.wire.form());
    let native = on.model.is_some_and(|m| m.native_images);
    let others = crate::tokens::sum([
        items::marginal_cost(pre, None, on.wire.form()).0,
        post_cost,
        crate::tokens::REQUEST_OVERHEAD,
        tools_tokens,
    ]);
    let rule = super::clearing::rule_of(ctx, on);
    let rounds = super::continuation::rounds_floor(
        ctx,
        (on.a.id, native, on.wire),
        (rule.as_ref(), others),
        &mut tally.counter,
    );
    (crate::tokens::add(others, rounds), after_history)
}

/// History funded from what the floors leave; on a windowless model asked for a share,
/// no history and the problem (which the gate reports, the estimate shows).
fn funded_history(
    ctx: &Context,
    on: &Answering,
    tally: &mut Tally,
    source: &mut dyn HistorySource,
    laid: super::select::Laid<'_>,
    knobs: &HistoryKnobs,
    around: (&super::select::Preceding<'_>, Option<items::Follower>),
) -> Result<(super::select::Selection, Option<Error>)> {
    match budget::allowance(&on.window, around.0.floors, knobs) {
        Ok(allowance) => Ok((
            super::select::select(ctx, on, tally, source, laid, allowance, around)?,
            None,
        )),
        Err(Unavailable::ShareWithoutWindow) => {
            let mut none = HistoryEstimate::none(Some("history_budget_unavailable"));
            none.available = crate::history::count_rest(source, on.a.id, ctx.conversation.answerer_id)?;
            let selection = super::select::Selection {
                items: Vec::new(),
                estimate: none,
                cleared: Vec::new(),
                from: None,
            };
            Ok((selection, Some(share_without_window(ctx, on, knobs))))
        }
    }
}

/// History asked for as a share of a window the model does not have.
fn share_without_window(ctx: &Context, on: &Answering, knobs: &HistoryKnobs) -> Error {
    Error::new(
        Code::HistoryBudgetUnavailable,
        format!(
            "the history budget of turn {} asks for a share of the window, and model {} has no window",
            ctx.turn.id,
            super::compiler::model_name(on.model)
        ),
    )
    .detail(format!("budget.share = {}", knobs.share.unwrap_or_default()))
    .hint("Give the model an advisory_window or hard_window, or use max_tokens instead of share.")
}

/// Refuses a turn variable its answerer's template does not declare (a typo would
/// otherwise vanish silently).
fn check_variables(template: &Template, t: &crate::rows::Turn, mechanism: Mechanism) -> Result<()> {
    let Some(name) = t.variables.keys().find(|k| !template.variables.contains_key(*k)) else {
        return Ok(());
    };
    let declared: Vec<&str> = template.variables.keys().map(String::as_str).collect();
    let path = format!("/variables/{}", crate::json_at::pointer_token(name));
    Err(Error::new(
        Code::TurnFieldInvalid,
        format!(
            "turn {} sets variable {} at {path}, and its answerer's template does not declare it",
            t.id,
            crate::error::quote(name)
        ),
    )
    .detail(if mechanism == Mechanism::Assembly {
        format!(
            "The template declares: {}.",
            if declared.is_empty() {
                "(none)".to_string()
            } else {
                declared.join(", ")
            }
        )
    } else {
        "The default mechanism's fixed order declares no variables.".to_string()
    })
    .hint("Declare the variable in the template's \"variables\", or remove it from the turn."))
}

/// The number of messages holding the stable prefix's parts.
fn cache_marker(messages: &[Message], prefix_parts: usize) -> usize {
    position_of_part(messages, prefix_parts).map_or(if prefix_parts == 0 { 0 } else { messages.len() }, |(m, _)| m + 1)
}

/// The (message, part) of the `n`-th part (1-based) of the compiled list.
fn position_of_part(messages: &[Message], n: usize) -> Option<(usize, usize)> {
    if n == 0 {
        return None;
    }
    let mut seen = 0;
    for (mi, m) in messages.iter().enumerate() {
        if seen + m.parts.len() >= n {
            return Some((mi, n - seen - 1));
        }
        seen += m.parts.len();
    }
    None
}

/// Where the cache breakpoints go: the end of the stable prefix, and the end of the
/// newest history entry — never in what follows history (the preface and the input;
/// `wire::placed` adds the request's end where OpenAI's explicit breakpoints cache
/// nothing unmarked), never on a part a provider cannot mark.
fn breakpoints(messages: &[Message], prefix_parts: usize, history_parts: usize) -> Vec<Breakpoint> {
    let mut out = Vec::new();
    let mut mark = |n: usize, after: Stretch| {
        if let Some((message, part)) = position_of_part(messages, n) {
            out.push(Breakpoint { message, part, after });
        }
    };
    mark(prefix_parts, Stretch::StablePrefix);
    if history_parts > 0 {
        mark(prefix_parts + history_parts, Stretch::History);
    }
    out
}

/// What the turn lays between history and its input (later turns replay it as its seed).
fn preface(rendered: &[Vec<Item>]) -> Vec<PrefaceItem> {
    rendered
        .iter()
        .flatten()
        .map(|i| PrefaceItem {
            role: i.role,
            texts: i
                .parts
                .iter()
                .filter_map(|p| p.kind.text().map(str::to_string))
                .collect(),
        })
        .collect()
}
