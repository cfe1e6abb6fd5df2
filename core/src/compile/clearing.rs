//! A continuation's clearing step (docs/design.md, "Clearing tool results"): what the
//! rounds' records cleared, the step a request takes under the seal's rule, and the
//! cleared results as the estimate lists them. The rule and the record are
//! `crate::clearing`'s.

use crate::clearing::{Cleared, ClearedResult, Key, Record, Rule};
use crate::rounds::{Round, NATIVE_IMAGE_TYPES};
use crate::tokens::{Counter, IMAGE_TOKENS};

/// The clearing rule a fresh compile's request takes (its request options merged, turn
/// over agent over model; `None`: none, or options the compile refuses later).
pub(super) fn rule_of(ctx: &crate::context::Context, on: &super::compiler::Answering) -> Option<Rule> {
    let none = crate::options::RequestOptions::default();
    let (merged, _) = crate::options::merge(super::compiler::option_levels(ctx, on, &none));
    let v = merged.get("clear_tool_results").filter(|v| !v.is_null())?;
    crate::clearing::read(&crate::json_at::At::root(v, "")).ok()
}

/// Every result the rounds carry, oldest first, with its content's tokens.
fn results(rounds: &[&Round], counter: &mut Counter<'_>) -> Vec<ClearedResult> {
    let mut out = Vec::new();
    for round in rounds {
        for r in &round.results {
            out.push(ClearedResult {
                turn_id: None,
                round: round.n,
                call_id: r.call_id.clone(),
                tool: round.tool_of(&r.call_id).unwrap_or_default().to_string(),
                tokens: counter.count(&r.content),
            });
        }
    }
    out
}

/// The step a request of `total` tokens takes under `rule`, given what its rounds'
/// records cleared already: every result but the newest `keep` (and any other result of
/// their calls) and the excluded tools', when the request is above the trigger and the
/// step saves at least `clear_at_least` tokens; `None` otherwise. A result no larger than
/// its placeholder is left whole: a step never makes a request larger. Only a request
/// that carries a round no request sent yet takes a step (`newest_unsent`): the step is
/// stored with that round, and a request that could not store it would clear what the
/// next one brings back.
pub(super) fn step(
    rule: &Rule,
    total: u32,
    rounds: &[&Round],
    cleared: &Cleared,
    counter: &mut Counter<'_>,
) -> Option<Record> {
    let newest_unsent = rounds.last().is_some_and(|r| !r.sent);
    if total <= rule.trigger || !newest_unsent {
        return None;
    }
    let placeholder = counter.count(&rule.placeholder);
    let all = results(rounds, counter);
    let protected = all
        .len()
        .saturating_sub(usize::try_from(rule.keep).unwrap_or(usize::MAX));
    let kept = &all[protected..];
    let now: Vec<&ClearedResult> = all[..protected]
        .iter()
        .filter(|r| cleared.placeholder(r.round, &r.call_id).is_none())
        .filter(|r| !rule.exclude_tools.contains(&r.tool))
        .filter(|r| r.tokens > placeholder)
        // A call answered twice is kept whole while one of its answers is.
        .filter(|r| !kept.iter().any(|k| k.round == r.round && k.call_id == r.call_id))
        .collect();
    let saved = crate::tokens::sum(now.iter().map(|r| r.tokens - placeholder));
    if now.is_empty() || saved < rule.clear_at_least.max(1) {
        return None;
    }
    let mut results: Vec<Key> = Vec::new();
    for r in now {
        let key = Key {
            round: r.round,
            call_id: r.call_id.clone(),
        };
        if !results.contains(&key) {
            results.push(key);
        }
    }
    Some(Record {
        placeholder: rule.placeholder.clone(),
        results,
    })
}

/// The results the rounds carry that `cleared` sends cleared, as the estimate lists them:
/// each with its content's tokens and its pictures' that no result the request keeps
/// sends (a round sends each distinct picture once).
pub(super) fn listed(
    cleared: &Cleared,
    rounds: &[&Round],
    native_images: bool,
    counter: &mut Counter<'_>,
) -> Vec<ClearedResult> {
    let mut out = Vec::new();
    if cleared.is_empty() {
        return out;
    }
    for round in rounds {
        let is_cleared = |id: &str| cleared.placeholder(round.n, id).is_some();
        let kept: Vec<&[u8]> = round
            .results
            .iter()
            .filter(|r| !is_cleared(&r.call_id))
            .flat_map(|r| r.captures.iter().filter(|c| c.eligible).map(|c| c.bytes.as_slice()))
            .collect();
        let mut seen: Vec<&[u8]> = Vec::new();
        for r in round.results.iter().filter(|r| is_cleared(&r.call_id)) {
            let mut tokens = counter.count(&r.content);
            for c in r.captures.iter().filter(|c| c.eligible) {
                if kept.contains(&c.bytes.as_slice()) || seen.contains(&c.bytes.as_slice()) {
                    continue;
                }
                seen.push(&c.bytes);
                if native_images && NATIVE_IMAGE_TYPES.contains(&c.media_type.as_str()) {
                    tokens = tokens.saturating_add(IMAGE_TOKENS);
                }
            }
            out.push(ClearedResult {
                turn_id: None,
                round: round.n,
                call_id: r.call_id.clone(),
                tool: round.tool_of(&r.call_id).unwrap_or_default().to_string(),
                tokens,
            });
        }
    }
    out
}
