//! Cache breakpoints inside a run: the marks a continuation places
//! on the rounds it appends to a sealed body. Each mark depends only on its round and the
//! rounds before it, so a round renders the same bytes in every later request of the run
//! and each request stays a byte prefix of the next.
//!
//! - **Anthropic**: every continuation carries the request-level marker (the last
//!   cacheable block; see `anthropic::automatic_cache`), which reads the previous request's
//!   entry only when it ends within the provider's lookback (20 blocks). A round that adds
//!   more blocks than that (a dozen parallel calls) gets one intermediate breakpoint, on
//!   its last block the lookback still reaches from the previous request's end — while
//!   the request's breakpoints, the sealed ones and the marker included, stay within the
//!   profile's `max_breakpoints` (a mark once placed stays in every later request).
//! - **Converse** (Bedrock's cachePoint blocks; no request-level marker): a cachePoint
//!   after each round's last input part, while the request's breakpoints last.
//! - **OpenAI's explicit breakpoints** (a profile that takes `prompt_cache_breakpoint`,
//!   which caches nothing it is not told to): a breakpoint on each round's last input
//!   part (a tool result or a text), so every request reads the one before it; OpenAI
//!   writes a request's latest four and matches the latest 80, without a lookback.
//!
//! None where the request ending with the round is below the model's minimum cacheable
//! length (the marker's own rule, `continuation::continuing_tail`).

use crate::items::{Message, PartKind};
use crate::kinds::{Role, Wire};
use crate::profile::Profile;
use crate::wire::{Breakpoint, Marking, Pos, Stretch};

/// The rounds a continuation appends, as the wire rendered them.
pub(super) struct Appended<'a> {
    pub(super) messages: &'a [Message],
    /// Each element's parts, in the order the wire writes them (one block each on
    /// anthropic).
    pub(super) layout: &'a [Vec<Pos>],
    /// The tokens of the sealed body the rounds follow (what the request totals start at).
    pub(super) base_tokens: u32,
    /// The breakpoints the sealed body carries.
    pub(super) sealed_marks: usize,
}

/// The breakpoints to place on the appended rounds of a run on `wire`.
pub(super) fn run_breakpoints(wire: Wire, profile: Option<&Profile>, appended: &Appended<'_>) -> Vec<Breakpoint> {
    let minimum = profile.map_or(0, |p| u32::try_from(p.min_cache_tokens).unwrap_or(0));
    let rounds = segments(appended);
    let form = wire.form();
    match form.marking(profile) {
        // The request-level marker (Anthropic's) reads back within the lookback.
        Marking::Blocks if form.request_marker() => {
            // The wire says how far back its marker reads (none: any distance, so no
            // intermediate mark is needed).
            let lookback = form.cache_rules(profile).lookback.unwrap_or(usize::MAX);
            let limit = profile.map_or(4, |p| usize::try_from(p.max_breakpoints).unwrap_or(0));
            // The request-level marker takes one of the request's breakpoints.
            let slots = limit.saturating_sub(appended.sealed_marks + 1);
            intermediate(wire, appended, &rounds, minimum, lookback, slots)
        }
        Marking::Blocks => {
            // No request-level marker: a mark on each round's last input part while the
            // request's breakpoints last (a mark once placed stays in every later
            // request, so a run longer than that caches up to its last mark).
            let limit = profile.map_or(4, |p| usize::try_from(p.max_breakpoints).unwrap_or(0));
            let mut marks = each_round(appended, &rounds, minimum);
            marks.truncate(limit.saturating_sub(appended.sealed_marks));
            marks
        }
        Marking::InputParts => each_round(appended, &rounds, minimum),
        Marking::Unmarked => Vec::new(),
    }
}

/// A round as the request that first carried it saw it: its blocks (indexes into the
/// flattened layout) and the request's tokens once it was appended.
struct Round {
    blocks: std::ops::Range<usize>,
    tokens: u32,
}

/// The appended elements grouped into rounds (a message that starts a round starts an
/// element, so no element spans two).
fn segments(appended: &Appended<'_>) -> Vec<Round> {
    let mut out: Vec<Round> = Vec::new();
    let mut block = 0;
    let mut tokens = appended.base_tokens;
    let mut round_of_previous: Option<usize> = None;
    let round_of: Vec<usize> = appended
        .messages
        .iter()
        .scan(0, |n, msg| {
            *n += usize::from(msg.boundary);
            Some(*n)
        })
        .collect();
    for (e, parts) in appended.layout.iter().enumerate() {
        let Some(&(m, _)) = parts.first() else {
            continue;
        };
        let round = round_of[m];
        tokens = crate::tokens::add(
            tokens,
            crate::wire::elements_cost(appended.messages, &appended.layout[e..=e]),
        );
        match out.last_mut() {
            Some(last) if round_of_previous == Some(round) => {
                last.blocks.end = block + parts.len();
                last.tokens = tokens;
            }
            _ => out.push(Round {
                blocks: block..block + parts.len(),
                tokens,
            }),
        }
        round_of_previous = Some(round);
        block += parts.len();
    }
    out
}

fn blocks(appended: &Appended<'_>) -> Vec<Pos> {
    appended.layout.iter().flatten().copied().collect()
}

fn breakpoint((message, part): Pos) -> Breakpoint {
    Breakpoint {
        message,
        part,
        after: Stretch::Round,
    }
}

/// Anthropic: an intermediate breakpoint in each round the lookback cannot cross.
fn intermediate(
    wire: Wire,
    appended: &Appended<'_>,
    rounds: &[Round],
    minimum: u32,
    lookback: usize,
    mut slots: usize,
) -> Vec<Breakpoint> {
    let blocks = blocks(appended);
    let kind = |b: usize| &appended.messages[blocks[b].0].parts[blocks[b].1].kind;
    // A thinking or server-tool block takes no mark (the marker skips it too).
    let markable = |b: usize| kind(b).markable_on(wire);
    let mut out = Vec::new();
    // The newest block the previous request's marker wrote (none before the first round:
    // the sealed body's own breakpoints are read by themselves).
    let mut entry: Option<usize> = None;
    for round in rounds {
        let end = round.blocks.clone().rev().find(|&b| markable(b));
        if let (Some(from), Some(end), true) = (entry, end, slots > 0) {
            if end - from >= lookback {
                let reach = (from + lookback - 1).min(round.blocks.end - 1);
                if let Some(b) = (round.blocks.start..=reach).rev().find(|&b| markable(b)) {
                    out.push(breakpoint(blocks[b]));
                    slots -= 1;
                }
            }
        }
        if round.tokens >= minimum {
            entry = end.or(entry);
        }
    }
    out
}

/// OpenAI's explicit breakpoints: one on each round's last input part.
fn each_round(appended: &Appended<'_>, rounds: &[Round], minimum: u32) -> Vec<Breakpoint> {
    let blocks = blocks(appended);
    let markable = |b: usize| {
        let (m, p) = blocks[b];
        let msg = &appended.messages[m];
        msg.role != Role::Assistant
            && match &msg.parts[p].kind {
                PartKind::ToolResult { .. } => true,
                PartKind::Text(_) | PartKind::Image { .. } => !msg.plain,
                PartKind::ToolCall { .. } | PartKind::Said { .. } | PartKind::Opaque { .. } => false,
            }
    };
    rounds
        .iter()
        .filter(|r| r.tokens >= minimum)
        .filter_map(|r| r.blocks.clone().rev().find(|&b| markable(b)))
        .map(|b| breakpoint(blocks[b]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::Part;

    fn part(kind: PartKind) -> Part {
        Part { kind, tokens: 10 }
    }

    fn call(id: usize) -> PartKind {
        PartKind::ToolCall {
            id: format!("call_{id}"),
            name: "get_weather".into(),
            input: "{}".into(),
            recorded: Default::default(),
        }
    }

    fn result(id: usize) -> PartKind {
        PartKind::ToolResult {
            call_id: format!("call_{id}"),
            content: "15".into(),
            is_error: false,
        }
    }

    fn message(role: Role, parts: Vec<PartKind>, boundary: bool) -> Message {
        let n = parts.len();
        Message {
            role,
            parts: parts.into_iter().map(part).collect(),
            blocks: vec![0; n],
            plain: false,
            boundary,
        }
    }

    /// Rounds of `calls[i]` parallel calls each: the assistant's calls, the user's results.
    fn rounds(calls: &[usize]) -> Vec<Message> {
        let mut id = 0;
        let mut out = Vec::new();
        for &n in calls {
            out.push(message(Role::Assistant, (id..id + n).map(call).collect(), true));
            out.push(message(Role::User, (id..id + n).map(result).collect(), false));
            id += n;
        }
        out
    }

    fn marks(wire: Wire, profile: &Profile, messages: &[Message], base: u32, sealed: usize) -> Vec<Pos> {
        let (_, layout) = crate::wire::render_elements(wire, messages, (None, &[]), &[]);
        let appended = Appended {
            messages,
            layout: &layout,
            base_tokens: base,
            sealed_marks: sealed,
        };
        run_breakpoints(wire, Some(profile), &appended)
            .iter()
            .map(|b| (b.message, b.part))
            .collect()
    }

    #[test]
    fn a_round_the_lookback_cannot_cross_gets_one_breakpoint_the_previous_end_reaches() {
        let claude = crate::profile::tests::adaptive_only();
        // Rounds of 1, 12 and 1 calls: the second adds 24 blocks after the first's end
        // (block 1), so its marker (block 25) cannot look back to it; the mark goes on
        // block 1 + 19 = 20, the 9th result of the 12 (blocks 2..13 calls, 14..25 results).
        let messages = rounds(&[1, 12, 1]);
        assert_eq!(marks(Wire::Anthropic, &claude, &messages, 10_000, 2), vec![(3, 6)]);
        // Small rounds need none.
        assert!(marks(Wire::Anthropic, &claude, &rounds(&[1, 3, 5]), 10_000, 2).is_empty());
        // Each mark stays in later requests: a request with fewer rounds places the same.
        assert_eq!(marks(Wire::Anthropic, &claude, &messages[..4], 10_000, 2), vec![(3, 6)]);
        // Within the four breakpoints: two sealed, the marker, one intermediate at most.
        let many = rounds(&[1, 12, 12, 12]);
        assert_eq!(marks(Wire::Anthropic, &claude, &many, 10_000, 2), vec![(3, 6)]);
        assert_eq!(marks(Wire::Anthropic, &claude, &many, 10_000, 0).len(), 3);
        assert!(marks(Wire::Anthropic, &claude, &many, 10_000, 3).is_empty());
        // Below the minimum, no request wrote an entry to reach.
        assert!(marks(Wire::Anthropic, &claude, &messages, 100, 2).is_empty());
    }

    #[test]
    fn openai_explicit_breakpoints_close_each_round_on_its_last_result() {
        let mut gpt = crate::profile::tests::adaptive_only();
        gpt.cache_breakpoints = Some(crate::kinds::Breakpoints::PromptCacheBreakpoint);
        gpt.cache_lookback = None;
        gpt.min_cache_tokens = 1024;
        let messages = rounds(&[1, 2, 1]);
        for wire in [Wire::Chat, Wire::Responses] {
            assert_eq!(marks(wire, &gpt, &messages, 2_000, 2), vec![(1, 0), (3, 1), (5, 0)]);
            // The first rounds' requests are below the minimum: only the later ones.
            assert_eq!(marks(wire, &gpt, &messages, 985, 2), vec![(3, 1), (5, 0)]);
        }
        // A profile without explicit breakpoints caches by key alone.
        gpt.cache_breakpoints = None;
        assert!(marks(Wire::Responses, &gpt, &messages, 2_000, 2).is_empty());
    }
}
