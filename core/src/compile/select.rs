//! History selection: entries read newest first, each costed as it lands before what
//! follows it, taken while it fits what the budget left (docs/design.md, "Budget").

use super::compiler::{Answering, Tally};
use crate::budget::{Allowance, Selector, Stop};
use crate::context::Context;
use crate::context::HistoryTurn;
use crate::error::Result;
use crate::estimate::HistoryEstimate;
use crate::history::{self, EntryAt, HistorySource, Plan, Reader};
use crate::items::{self, Follower, Item};
use crate::kinds::{Role, TurnKind};
use crate::rounds::Thinking;
use crate::rows::User;
use crate::template::Template;
use crate::voice::{Row, Voices};
use uuid::Uuid;

/// What selection took: the items, oldest first, and how it went.
pub(super) struct Selection {
    pub(super) items: Vec<Item>,
    pub(super) estimate: HistoryEstimate,
    /// The tool results the entries taken send cleared, oldest first.
    pub(super) cleared: Vec<crate::clearing::ClearedResult>,
    /// Where the oldest entry taken stands (a later turn's stable trimming keeps it).
    pub(super) from: Option<EntryAt>,
}

/// The blocks before history, as the floors were charged for them: costed alone (no
/// follower), within `floors` (inflated from `floors_raw`).
pub(super) struct Preceding<'p> {
    pub(super) items: &'p [Item],
    pub(super) floors_raw: u32,
    pub(super) floors: u32,
}

impl Preceding<'_> {
    /// What the floors were charged and do not cost when history's oldest entry is
    /// `oldest` (its oldest item, as `items::marginal_cost` describes it): the overhead
    /// of the last block's message, when the entry joins it (a user-side block before
    /// a user-side entry, on a wire that merges them), inflated as the floors are.
    fn saved(&self, oldest: Option<Follower>, wire: crate::kinds::Wire, window: &crate::budget::Window) -> u32 {
        let alone = items::marginal_cost(self.items, None, wire.form()).0;
        let joined = items::marginal_cost(self.items, oldest, wire.form()).0;
        match alone.saturating_sub(joined) {
            0 => 0,
            d => self
                .floors
                .saturating_sub(window.inflate(self.floors_raw.saturating_sub(d))),
        }
    }
}

/// An entry taken: where it stands, what it cost, its items.
struct Taken {
    at: EntryAt,
    cost: u32,
    items: Vec<Item>,
    /// The tool results the entry sends cleared (a run's round, as its requests cleared it).
    cleared: Vec<crate::clearing::ClearedResult>,
}

/// The stored answerer of the conversation `ht` belongs to (a Side's parent's for its
/// captured history).
fn host_answerer(ctx: &Context, ht: &HistoryTurn) -> Option<Uuid> {
    ht.host.map_or(ctx.conversation.answerer_id, |h| h.answerer_id)
}

/// The creator of the conversation `ht` belongs to.
fn host_creator(ctx: &Context, ht: &HistoryTurn) -> Option<Uuid> {
    ht.host.map_or(ctx.conversation.creator_id, |h| h.creator_id)
}

/// Where history lies: the template and the index of its history block.
pub(super) type Laid<'t> = (&'t Template, usize);

/// The seed of an own reply turn: its preface, then its opening words (moved out of
/// the turn, which is done with them).
fn seed(
    ctx: &Context,
    a: &User,
    tally: &mut Tally,
    ht: &mut HistoryTurn,
    (template, block): Laid<'_>,
) -> Result<Vec<Item>> {
    let prompt = ht.turn.prompt.take().filter(|p| !p.is_empty());
    let t = &ht.turn;
    let mut items = match &t.sealed_preface {
        Some(preface) => preface
            .iter()
            .map(|p| {
                let parts = p
                    .texts
                    .iter()
                    .map(|text| items::text_part(text.clone(), tally.counter.count(text)))
                    .collect();
                Item::new(p.role, parts, block)
            })
            .collect(),
        None => {
            // Never sealed: lay its preface down as this template would have.
            let values = super::compiler::values(ctx, a, &tally.users, t.poster_id, &t.date);
            let hist_ix = template.history_index();
            let mut out = Vec::new();
            for b in &template.blocks[hist_ix + 1..] {
                out.extend(super::floors::per_turn_block(
                    tally,
                    b,
                    block,
                    template,
                    &t.inline,
                    &t.variables,
                    &values,
                )?);
            }
            out
        }
    };
    if let Some(text) = prompt {
        let voices = Voices {
            users: &tally.users,
            creator: host_creator(ctx, ht),
        };
        let part = voices.words(Row::opening(t, text.into()), Some(a), &mut tally.counter);
        items.push(Item::new(Role::User, vec![part], block));
    }
    Ok(items)
}

/// The items of one history entry, as `plan` says it is read.
fn render_entry(
    ctx: &Context,
    on: &Answering,
    tally: &mut Tally,
    ht: &mut HistoryTurn,
    (plan, thinking, cleared): (Plan, Thinking, &crate::clearing::Cleared),
    (template, block): Laid<'_>,
) -> Result<Vec<Item>> {
    if plan == Plan::Seed {
        return seed(ctx, on.a, tally, ht, (template, block));
    }
    let conv_answerer_id = host_answerer(ctx, ht);
    let reader = Reader {
        a: on.a,
        conv_answerer: conv_answerer_id.and_then(|id| tally.users.get(&id)),
        conv_answerer_id,
        voices: Voices {
            users: &tally.users,
            creator: host_creator(ctx, ht),
        },
        native_images: on.model.is_some_and(|m| m.native_images),
        thinking,
        block,
        cleared,
    };
    Ok(reader.render(plan, ht, &mut tally.counter))
}

impl Tally<'_> {
    /// The next batch of history (a Side's captured turns as they stood), its users met.
    fn read_batch(&mut self, ctx: &Context, source: &mut dyn HistorySource, want: usize) -> Result<Vec<HistoryTurn>> {
        let (batch, users) = history::next_batch(source, want, &ctx.captured, &mut self.known)?;
        for u in users {
            self.users.entry(u.id).or_insert(u);
        }
        Ok(batch)
    }

    /// Counts the texts of an entry taken against the bound on what a compile builds (a
    /// model without a window funds all history).
    fn take_text(&mut self, items: &[Item]) -> Result<()> {
        self.built = self.built.saturating_add(items::text_size(items));
        crate::bounds::check(self.built, "the history a compile takes")
    }
}

/// Selects history newest first. `after` is what follows the newest entry, `before`
/// the blocks before the oldest (an entry at the boundary fits when it does less
/// what joining them saves). Under
/// stable trimming (`allowance.low_water`), entries older than where the answerer's
/// previous sealed request began are not taken while the rest fits; once history
/// does not fit, it is cut down to the low water.
pub(super) fn select(
    ctx: &Context,
    on: &Answering,
    tally: &mut Tally,
    source: &mut dyn HistorySource,
    laid: Laid<'_>,
    allowance: Allowance,
    (before, after): (&Preceding<'_>, Option<Follower>),
) -> Result<Selection> {
    let cut = match allowance.low_water {
        Some(_) => history::previous_cut(source, on.a.id)?,
        None => None,
    };
    let mut selector = Selector::new(allowance);
    let mut following = after;
    let mut taken: Vec<Taken> = Vec::new();
    let mut available = 0u32;
    // Under reasoning replay, the answerer's newest earlier run keeps its thinking.
    let mut replay = on.a.reasoning_replay;
    'batches: loop {
        crate::bounds::interrupt();
        let batch = tally.read_batch(ctx, source, batch_size(&selector, &allowance))?;
        if batch.is_empty() {
            break;
        }
        for mut ht in batch {
            let ht = &mut ht;
            let plans = history::plan(ht, on.a.id, host_answerer(ctx, ht));
            available += plans.len() as u32;
            let thinking = thinking_of(&mut replay, &plans);
            // What the turn's run cleared, read once for all its rounds.
            let cleared = crate::rounds::cleared_by(&ht.rounds, None);
            for (entry, plan) in plans.into_iter().enumerate().rev() {
                let at = EntryAt {
                    depth: ht.host.map_or(0, |h| h.depth),
                    seq: ht.turn.seq,
                    entry: entry as u32,
                };
                if cut.is_some_and(|c| at < c) {
                    selector.stop(Stop::StableCut);
                }
                if selector.stopped.is_some() {
                    continue;
                }
                let items = render_entry(ctx, on, tally, ht, (plan, thinking, &cleared), laid)?;
                let (cost, oldest) = items::marginal_cost(&items, following, on.wire.form());
                let cost = on.window.inflate(cost);
                if selector.offer_saving(cost, || before.saved(oldest, on.wire, &on.window)) {
                    tally.take_text(&items)?;
                    following = oldest;
                    let cleared = cleared_in(on, ht, plan, &cleared, &mut tally.counter);
                    taken.push(Taken {
                        at,
                        cost,
                        items,
                        cleared,
                    });
                }
            }
            if ht.turn.kind == TurnKind::Summary {
                // History starts at the newest summary turn.
                break 'batches;
            }
        }
        if selector.stopped.is_some() {
            // Selection is over: the rest is only counted (for the estimate; a
            // preview returns the body alone and skips it).
            if on.purpose != super::compiler::Purpose::Preview {
                available += history::count_rest(source, on.a.id, ctx.conversation.answerer_id)?;
            }
            break;
        }
    }
    cut_to_low_water(&allowance, &mut selector, &mut taken);
    open_with_the_user(on, before, &mut selector, &mut taken);
    Ok(selection(taken, &selector, available, &allowance))
}

/// What selection took, oldest first, and the history estimate.
fn selection(taken: Vec<Taken>, selector: &Selector, available: u32, allowance: &Allowance) -> Selection {
    let cleared = taken.iter().rev().flat_map(|t| t.cleared.iter().cloned()).collect();
    Selection {
        from: taken.last().map(|t| t.at),
        items: taken.into_iter().rev().flat_map(|t| t.items).collect(),
        cleared,
        estimate: HistoryEstimate {
            selected: selector.selected,
            available,
            tokens: 0,
            budget: allowance.tokens,
            skipped_reason: selector.stopped.map(|s| s.as_str().to_string()),
        },
    }
}

/// The tool results a history entry sends cleared: a round of a run, as the run's own
/// requests cleared it (`rounds::cleared_by`).
fn cleared_in(
    on: &Answering,
    ht: &HistoryTurn,
    plan: Plan,
    cleared: &crate::clearing::Cleared,
    counter: &mut crate::tokens::Counter<'_>,
) -> Vec<crate::clearing::ClearedResult> {
    let Plan::Round(i) = plan else {
        return Vec::new();
    };
    let Some(round) = ht.rounds.get(i) else {
        return Vec::new();
    };
    let native = on.model.is_some_and(|m| m.native_images);
    let mut listed = super::clearing::listed(cleared, &[round], native, counter);
    for c in &mut listed {
        c.turn_id = Some(ht.turn.id);
    }
    listed
}

/// Whether a turn's rounds keep their thinking: the first own run met (newest first)
/// while reasoning replay is still pending.
fn thinking_of(replay: &mut bool, plans: &[Plan]) -> Thinking {
    if *replay && plans.iter().any(|p| matches!(p, Plan::Round(_))) {
        *replay = false;
        Thinking::Keep
    } else {
        Thinking::Drop
    }
}

/// Under stable trimming, history that no longer fits (from the kept entry, or at all)
/// is cut down to its low water.
fn cut_to_low_water(allowance: &Allowance, selector: &mut Selector, taken: &mut Vec<Taken>) {
    let Some(low_water) = allowance.low_water else {
        return;
    };
    if matches!(selector.stopped, Some(Stop::BudgetExceeded | Stop::MaxEntries)) {
        let costs: Vec<u32> = taken.iter().map(|t| t.cost).collect();
        let keep = selector.low_water_keep(&costs, low_water);
        taken.truncate(keep);
        selector.keep_newest(&costs, keep);
    }
}

/// On a wire whose conversation opens with the user (Bedrock's Converse), history that a
/// trim left opening with an answer — a turn's rounds outlive its opening words under a
/// tight budget — loses its oldest entries until it opens on the user's side (a block
/// before history that speaks there counts). Untrimmed history is left as it is: a
/// conversation that opens with the assistant is the wire's check to refuse.
fn open_with_the_user(on: &Answering, before: &Preceding<'_>, selector: &mut Selector, taken: &mut Vec<Taken>) {
    if selector.stopped.is_none() || !on.wire.form().opens_with_user() {
        return;
    }
    let opens_with_answer = |taken: &[Taken]| {
        // The leading system run is lifted out: the first other item opens the messages.
        let mut roles = before
            .items
            .iter()
            .chain(taken.iter().rev().flat_map(|t| &t.items))
            .map(|i| i.role);
        roles.find(|r| *r != Role::System) == Some(Role::Assistant)
    };
    while opens_with_answer(taken) {
        let Some(oldest) = taken.pop() else { break };
        selector.drop_oldest(oldest.cost);
    }
}

/// How many turns to read next: as many as the budget left is likely to take (from the
/// entries taken so far), a few more, and not more than max_entries allows.
fn batch_size(selector: &Selector, allowance: &Allowance) -> usize {
    const FIRST: usize = 64;
    let by_entries = allowance
        .max_entries
        .map(|m| m.saturating_sub(selector.selected) as usize + 1);
    let by_tokens = match allowance.tokens {
        None => None,
        Some(_) if selector.selected == 0 => Some(FIRST),
        Some(t) => {
            let avg = (selector.used / selector.selected).max(1);
            Some((t.saturating_sub(selector.used) / avg) as usize + 8)
        }
    };
    match (by_entries, by_tokens) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => 256,
    }
    .clamp(8, 1024)
}
