//! A continuation's clearing step (docs/design.md, "Clearing tool results"): what the
//! rounds' records cleared, the step a request takes under the seal's rule, and the
//! cleared results as the estimate lists them. The rule and the record are
//! `crate::clearing`'s.

use crate::clearing::{Cleared, ClearedResult, Key, Record, Rule};
use crate::rounds::{Round, NATIVE_IMAGE_TYPES};
use crate::tokens::{Counter, IMAGE_TOKENS};

/// Every result the rounds carry, oldest first, with what it costs whole.
fn results(rounds: &[&Round], native_images: bool, counter: &mut Counter<'_>) -> Vec<ClearedResult> {
    let mut out = Vec::new();
    for round in rounds {
        for r in &round.results {
            let pictures = r
                .captures
                .iter()
                .filter(|c| c.eligible && native_images && NATIVE_IMAGE_TYPES.contains(&c.media_type.as_str()))
                .count();
            let pictures = u32::try_from(pictures).unwrap_or(u32::MAX).saturating_mul(IMAGE_TOKENS);
            out.push(ClearedResult {
                round: round.n,
                call_id: r.call_id.clone(),
                tool: round.tool_of(&r.call_id).unwrap_or_default().to_string(),
                tokens: counter.count(&r.content).saturating_add(pictures),
            });
        }
    }
    out
}

/// The step a request of `total` tokens takes under `rule`, given what its rounds'
/// records cleared already: every result but the newest `keep` and the excluded tools',
/// when the request is above the trigger and the step clears at least `clear_at_least`
/// tokens; `None` otherwise.
pub(super) fn step(
    rule: &Rule,
    total: u32,
    rounds: &[&Round],
    cleared: &Cleared,
    native_images: bool,
    counter: &mut Counter<'_>,
) -> Option<Record> {
    if total <= rule.trigger {
        return None;
    }
    let all = results(rounds, native_images, counter);
    let protected = all
        .len()
        .saturating_sub(usize::try_from(rule.keep).unwrap_or(usize::MAX));
    let now: Vec<&ClearedResult> = all[..protected]
        .iter()
        .filter(|r| cleared.placeholder(r.round, &r.call_id).is_none())
        .filter(|r| !rule.exclude_tools.contains(&r.tool))
        .collect();
    let tokens = crate::tokens::sum(now.iter().map(|r| r.tokens));
    if now.is_empty() || tokens < rule.clear_at_least {
        return None;
    }
    Some(Record {
        placeholder: rule.placeholder.clone(),
        results: now
            .into_iter()
            .map(|r| Key {
                round: r.round,
                call_id: r.call_id.clone(),
            })
            .collect(),
    })
}

/// The results the rounds carry that `cleared` sends cleared, as the estimate lists them.
pub(super) fn listed(
    cleared: &Cleared,
    rounds: &[&Round],
    native_images: bool,
    counter: &mut Counter<'_>,
) -> Vec<ClearedResult> {
    if cleared.is_empty() {
        return Vec::new();
    }
    results(rounds, native_images, counter)
        .into_iter()
        .filter(|r| cleared.placeholder(r.round, &r.call_id).is_some())
        .collect()
}
