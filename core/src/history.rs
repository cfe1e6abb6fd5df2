//! History (docs/design.md, "History"): how each earlier turn becomes entries — the
//! units the budget keeps or drops. [`plan`] decides the entries from a turn's shape
//! alone, so counting the available entries never needs the turns' text; rendering
//! follows the plan. History is read newest first through a [`HistorySource`].

use uuid::Uuid;

use std::collections::HashSet;

use crate::clearing::Cleared;
use crate::context::{Captured, HistoryTurn, Host};
use crate::error::Result;
use crate::items::{self, Item, Part};
pub(crate) use crate::kinds::EntryAt;
use crate::kinds::{Role, TurnKind};
use crate::rounds;
use crate::rows::User;
use crate::tokens::Counter;
use crate::voice::{Row, Voices};

/// Newest-first access to the turns before the compiled one, from the newest summary
/// turn on. The database layer reads them in batches so a compile reads the rows it
/// renders, not the conversation; tests serve them from a vector (`VecHistory`). The
/// source reads; which users to read, what the rest counts and where a previous request
/// began are the core's (`next_batch`, `count_rest`, `previous_cut`).
pub trait HistorySource {
    /// The next older turns (newest first), about `want` of them; empty when done.
    fn next_batch(&mut self, want: usize) -> Result<Vec<HistoryTurn>>;

    /// The users `ids` names that are visible (the authors, answerers, posters and steer
    /// authors of a batch the compile has not read yet).
    fn users(&mut self, ids: &[Uuid]) -> Result<Vec<User>>;

    /// The stored entry counts of every turn not yet returned, stretch by stretch: each
    /// stretch's host (`None`: the compiled turn's own conversation) and its groups (once
    /// selection stops, the rest is only counted).
    fn rest(&mut self) -> Result<Vec<(Option<Host>, Vec<StoredCount>)>>;

    /// The part `key` of the frozen record of the newest sealed reply before the turn
    /// whose record contains `like` (`frozen @> like`, `frozen -> key`): where the
    /// history of an answerer's previous sealed request began, for cache-stable trimming
    /// (read by the core's `previous_cut`). `None` when there is no such reply.
    fn previous_frozen(&mut self, like: &serde_json::Value, key: &str) -> Result<Option<serde_json::Value>>;
}

/// The next batch of history, about `want` turns, each captured turn of a Side's parent
/// as it stood at its capture (`captured`), with the users it names that are not `known`
/// yet (each read once: `known` grows by every id asked for).
pub(crate) fn next_batch(
    source: &mut dyn HistorySource,
    want: usize,
    captured: &[Captured],
    known: &mut HashSet<Uuid>,
) -> Result<(Vec<HistoryTurn>, Vec<User>)> {
    let mut turns = source.next_batch(want)?;
    for c in captured {
        turns.iter_mut().for_each(|h| c.freeze(h));
    }
    let ids = crate::reads::history_users(&turns, known);
    let users = match ids.is_empty() {
        true => Vec::new(),
        false => source.users(&ids)?,
    };
    known.extend(ids);
    Ok((turns, users))
}

/// The entries of every turn the source has not returned, read by answerer `a` in a
/// conversation whose stored answerer is `conv_answerer`: from the stored counts alone.
pub(crate) fn count_rest(source: &mut dyn HistorySource, a: Uuid, conv_answerer: Option<Uuid>) -> Result<u32> {
    Ok(source.rest()?.iter().fold(0u32, |n, (host, groups)| {
        let answerer = host.map_or(conv_answerer, |h| h.answerer_id);
        n.saturating_add(stored_entries(groups, a, answerer))
    }))
}

/// Where the history of answerer `a`'s previous sealed request in this conversation
/// began (its `history_from`); `None` when there is none. The source matches and reads
/// the record's part as this names it, so no host spells its layout.
pub(crate) fn previous_cut(source: &mut dyn HistorySource, a: Uuid) -> Result<Option<EntryAt>> {
    let part = source.previous_frozen(&crate::seal::frozen_for(a, None), crate::seal::HISTORY_FROM)?;
    crate::seal::history_from(part.as_ref())
}

/// A history source over turns held in memory (oldest first, as stored).
#[cfg(test)]
pub(crate) struct VecHistory {
    turns: Vec<HistoryTurn>,
    /// Where [`previous_cut`] finds the previous request's history began.
    pub(crate) previous_cut: Option<EntryAt>,
}

#[cfg(test)]
impl VecHistory {
    /// A source over `oldest_first` (the turns before the compiled one), from the newest
    /// summary turn on; no previous cut.
    pub(crate) fn new(mut oldest_first: Vec<HistoryTurn>) -> Self {
        oldest_first.reverse();
        // History starts at the newest summary turn.
        if let Some(i) = oldest_first.iter().position(|h| h.turn.kind == TurnKind::Summary) {
            oldest_first.truncate(i + 1);
        }
        VecHistory {
            turns: oldest_first,
            previous_cut: None,
        }
    }
}

#[cfg(test)]
impl HistorySource for VecHistory {
    fn next_batch(&mut self, want: usize) -> Result<Vec<HistoryTurn>> {
        let n = want.clamp(1, 64).min(self.turns.len());
        Ok(self.turns.drain(..n).collect())
    }

    fn users(&mut self, _ids: &[Uuid]) -> Result<Vec<User>> {
        Ok(Vec::new())
    }

    /// Each turn left as the database counts it: a group of one under its host, with the
    /// `own_entries` the write trigger stores.
    fn rest(&mut self) -> Result<Vec<(Option<Host>, Vec<StoredCount>)>> {
        let rest = self.turns.drain(..).map(|h| {
            let ns: Vec<i32> = h.rounds.iter().map(|r| r.n).collect();
            let t = &h.turn;
            let own = own_plan(nonempty(&t.summary), t.summary_round, &ns, nonempty(&t.content)).len();
            let group = StoredCount {
                kind: t.kind,
                answerer_id: t.answerer_id,
                turns: 1,
                own_entries: own as i64,
            };
            (h.host, vec![group])
        });
        Ok(rest.collect())
    }

    fn previous_frozen(&mut self, _like: &serde_json::Value, key: &str) -> Result<Option<serde_json::Value>> {
        assert_eq!(key, crate::seal::HISTORY_FROM);
        Ok(self.previous_cut.map(|at| serde_json::to_value(at).unwrap_or_default()))
    }
}

/// The line that opens a summary turn's history item, before its content.
pub(crate) const SUMMARY_HEADER: &str = "[Summary of the earlier conversation]\n";
pub(crate) const ROUNDS_SUMMARY_HEADER: &str = "[Summary of the earlier rounds]\n";

/// One entry of a turn, oldest first within the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    /// A message turn's content in its role.
    Message,
    /// A summary turn.
    Summary,
    /// The answerer's own reply: its preface, then its opening words.
    Seed,
    /// The answerer's own reply with an in-turn summary: the summary in place of the seed
    /// and the rounds before `summary_round`.
    RoundsSummary,
    /// The answerer's own reply: one round (an index into the turn's rounds).
    Round(usize),
    /// The answerer's own direct reply: its text.
    Answer,
    /// A reply another agent answered: its seed under its own voice, then its text in
    /// that agent's envelope.
    Correspondent,
}

fn nonempty(s: &Option<String>) -> bool {
    s.as_deref().is_some_and(|t| !t.is_empty())
}

/// Who answered a reply turn: its own answerer, else the conversation's.
pub(crate) fn answerer_of(ht: &HistoryTurn, conv_answerer: Option<Uuid>) -> Option<Uuid> {
    ht.turn.answerer_id.or(conv_answerer)
}

/// Whether the seed of another agent's turn is shown to `a`: not when `a` posted it,
/// not when it is kernel-origin, not when it has no words.
fn correspondent_seed_shown(ht: &HistoryTurn, a: Uuid) -> bool {
    let t = &ht.turn;
    nonempty(&t.prompt) && t.origin.is_none() && t.words_author() != Some(a)
}

/// The entries of a reply turn read by its own answerer, from its shape alone: the seed
/// (or the in-turn summary in its place), each round from `summary_round` on, and a
/// direct reply's answer (unless a summary replaced it). The write triggers store their number (`turns.own_entries`)
/// through the same function, so counting history never reads its text.
pub(crate) fn own_plan(
    has_summary: bool,
    summary_round: Option<i32>,
    round_ns: &[i32],
    has_content: bool,
) -> Vec<Plan> {
    let mut out = Vec::with_capacity(round_ns.len() + 2);
    let from = if has_summary {
        out.push(Plan::RoundsSummary);
        summary_round.unwrap_or(i32::MIN)
    } else {
        out.push(Plan::Seed);
        i32::MIN
    };
    out.extend(
        round_ns
            .iter()
            .enumerate()
            .filter(|(_, n)| **n >= from)
            .map(|(i, _)| Plan::Round(i)),
    );
    // The in-turn summary stands in place of everything before its round: of a direct
    // reply's preface, opening words and answer alike.
    if round_ns.is_empty() && has_content && !has_summary {
        out.push(Plan::Answer);
    }
    out
}

/// The entries of one history turn, read by answerer `a`: one for a message, a summary
/// or another agent's reply; [`own_plan`] for a reply of `a`'s own. An entry may render
/// nothing (a seed with neither preface nor words); it is still one unit.
pub(crate) fn plan(ht: &HistoryTurn, a: Uuid, conv_answerer: Option<Uuid>) -> Vec<Plan> {
    let t = &ht.turn;
    match t.kind {
        TurnKind::Message => vec![Plan::Message],
        TurnKind::Summary => vec![Plan::Summary],
        TurnKind::Reply if !read_as_own(t.kind, answerer_of(ht, conv_answerer), a) => vec![Plan::Correspondent],
        TurnKind::Reply => {
            let ns: Vec<i32> = ht.rounds.iter().map(|r| r.n).collect();
            own_plan(nonempty(&t.summary), t.summary_round, &ns, nonempty(&t.content))
        }
    }
}

/// Whether `a` reads a turn of `kind` answered by `answerer` as its own reply (its
/// `own_plan`); every other turn is one entry.
fn read_as_own(kind: TurnKind, answerer: Option<Uuid>, a: Uuid) -> bool {
    kind == TurnKind::Reply && answerer == Some(a)
}

/// One group of a stretch's turns as the database sums them (an index-only scan, no
/// turn text read): the turns of one kind and stored answerer, and the sum of the
/// `own_entries` the write triggers stored for them (`own_plan`'s length, [`crate::own_entries`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredCount {
    /// The turns' kind.
    pub kind: TurnKind,
    /// Their stored answerer (`None`: the conversation's).
    pub answerer_id: Option<Uuid>,
    /// How many turns the group holds.
    pub turns: i64,
    /// The sum of their `own_entries`.
    pub own_entries: i64,
}

/// The entries of a stretch's turns read by answerer `a`, from their stored counts
/// ([`StoredCount`]) in a conversation whose stored answerer is `conv_answerer`: the
/// same number [`plan`] gives turn by turn.
pub(crate) fn stored_entries(groups: &[StoredCount], a: Uuid, conv_answerer: Option<Uuid>) -> u32 {
    let n: i64 = groups
        .iter()
        .map(|g| {
            if read_as_own(g.kind, g.answerer_id.or(conv_answerer), a) {
                g.own_entries
            } else {
                g.turns
            }
        })
        .fold(0i64, i64::saturating_add);
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

/// Everything rendering an entry needs besides the turn.
pub(crate) struct Reader<'a> {
    /// The assembling answerer A.
    pub(crate) a: &'a User,
    /// The conversation's stored answerer (message turns are read for it).
    pub(crate) conv_answerer: Option<&'a User>,
    /// Its id, whether or not the compile can see the user.
    pub(crate) conv_answerer_id: Option<Uuid>,
    pub(crate) voices: Voices<'a>,
    pub(crate) native_images: bool,
    /// Whether this turn's rounds keep their thinking (the answerer's newest earlier
    /// run, under reasoning replay).
    pub(crate) thinking: rounds::Thinking,
    /// The history block's index (estimate attribution).
    pub(crate) block: usize,
    /// What the turn's run's own requests cleared (`rounds::cleared_by`, once a turn).
    pub(crate) cleared: &'a Cleared,
}

impl Reader<'_> {
    fn user(&self, id: Option<Uuid>) -> Option<&User> {
        id.and_then(|id| self.voices.users.get(&id))
    }

    /// Renders one planned entry other than `Seed` (whose preface the compiler owns).
    /// Each text the entry renders is moved out of the turn (an entry renders it once).
    pub(crate) fn render(&self, plan: Plan, ht: &mut HistoryTurn, counter: &mut Counter<'_>) -> Vec<Item> {
        let block = self.block;
        let t = &ht.turn;
        match plan {
            Plan::Message => self.message(ht, counter),
            Plan::Summary => {
                let body = format!("{SUMMARY_HEADER}{}", t.content.as_deref().unwrap_or(""));
                let tokens = counter.count_or_stored(&body, &t.content_tokens);
                vec![Item::text(Role::User, body, tokens, block)]
            }
            Plan::RoundsSummary => {
                let body = format!("{ROUNDS_SUMMARY_HEADER}{}", t.summary.as_deref().unwrap_or(""));
                let tokens = counter.count(&body);
                vec![Item::text(Role::User, body, tokens, block)]
            }
            Plan::Round(i) => match ht.rounds.get(i) {
                // What the run's own requests cleared stays cleared (crate::clearing).
                Some(round) => self.round(round, counter),
                None => Vec::new(),
            },
            Plan::Answer => {
                let content = ht.turn.content.take().unwrap_or_default();
                let tokens = counter.count_or_stored(&content, &ht.turn.content_tokens);
                vec![Item::text(Role::Assistant, content, tokens, block)]
            }
            Plan::Correspondent => self.correspondent(ht, counter),
            // The compiler renders seeds (their preface is the template's).
            Plan::Seed => Vec::new(),
        }
    }

    /// A message turn: its words, in its role (a user's in its voice).
    fn message(&self, ht: &mut HistoryTurn, counter: &mut Counter<'_>) -> Vec<Item> {
        let content = ht.turn.content.take().unwrap_or_default();
        let t = &ht.turn;
        if content.is_empty() {
            return Vec::new();
        }
        let role = t.role.unwrap_or(Role::User);
        if role == Role::User {
            let part = self
                .voices
                .words(Row::message(t, content.into()), self.conv_answerer, counter);
            vec![Item::new(Role::User, vec![part], self.block)]
        } else {
            let tokens = counter.count_or_stored(&content, &t.content_tokens);
            vec![Item::text(role, content, tokens, self.block)]
        }
    }

    /// One round of a run. Never a call without its result: a round whose run still waits
    /// for them is carried without its calls.
    fn round(&self, round: &rounds::Round, counter: &mut Counter<'_>) -> Vec<Item> {
        let waiting;
        let round = if round.awaits_results() {
            waiting = round.while_waiting();
            &waiting
        } else {
            round
        };
        let how = rounds::Reading {
            answerer: Some(self.a),
            native_images: self.native_images,
            thinking: self.thinking,
            cleared: self.cleared,
            block: self.block,
        };
        rounds::render(round, &self.voices, &how, counter)
    }

    /// Another agent's reply, read as a correspondent: its opening words where shown, then
    /// its answer in that agent's voice.
    fn correspondent(&self, ht: &mut HistoryTurn, counter: &mut Counter<'_>) -> Vec<Item> {
        let mut parts = Vec::new();
        let answerer = answerer_of(ht, self.conv_answerer_id);
        if correspondent_seed_shown(ht, self.a.id) {
            parts.push(self.opening_words(ht, self.user(answerer), counter));
        }
        let t = &ht.turn;
        if let Some(content) = t.content.as_deref().filter(|c| !c.is_empty()) {
            match answerer {
                Some(b) => parts.push(self.voices.wrapped(Some(b), None, content, counter)),
                None => parts.push(items::text_part(
                    content,
                    counter.count_or_stored(content, &t.content_tokens),
                )),
            }
        }
        if parts.is_empty() {
            Vec::new()
        } else {
            vec![Item::new(Role::User, parts, self.block)]
        }
    }

    /// A reply turn's opening words, read for the turn answered by `answerer`.
    pub(crate) fn opening_words(
        &self,
        ht: &mut HistoryTurn,
        answerer: Option<&User>,
        counter: &mut Counter<'_>,
    ) -> Part {
        let prompt = ht.turn.prompt.take().unwrap_or_default();
        self.voices
            .words(Row::opening(&ht.turn, prompt.into()), answerer, counter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rounds::Round;
    use crate::rows::Turn;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    /// A source of batches of replies answered by the given ids, recording the users asked for.
    struct Asking {
        batches: Vec<Vec<u128>>,
        asked: Vec<Vec<Uuid>>,
    }

    impl HistorySource for Asking {
        fn next_batch(&mut self, _want: usize) -> Result<Vec<HistoryTurn>> {
            Ok(match self.batches.is_empty() {
                true => Vec::new(),
                false => self.batches.remove(0).into_iter().map(|a| reply(Some(a))).collect(),
            })
        }

        fn users(&mut self, ids: &[Uuid]) -> Result<Vec<User>> {
            self.asked.push(ids.to_vec());
            Ok(Vec::new())
        }

        fn rest(&mut self) -> Result<Vec<(Option<Host>, Vec<StoredCount>)>> {
            Ok(Vec::new())
        }

        fn previous_frozen(&mut self, _: &serde_json::Value, _: &str) -> Result<Option<serde_json::Value>> {
            Ok(None)
        }
    }

    #[test]
    fn a_batch_asks_once_for_the_users_the_compile_has_not_read() {
        let mut source = Asking {
            batches: vec![vec![1, 2, 2], vec![2, 3], vec![1]],
            asked: Vec::new(),
        };
        let mut known: HashSet<Uuid> = [id(1)].into();
        while !next_batch(&mut source, 8, &[], &mut known).unwrap().0.is_empty() {}
        // User 1 is the context's; user 2 was asked for once, even though none came back.
        assert_eq!(source.asked, vec![vec![id(2)], vec![id(3)]]);
    }

    #[test]
    fn a_parents_captured_turn_is_read_as_it_stood() {
        let host = Host {
            depth: 1,
            creator_id: None,
            answerer_id: Some(id(7)),
        };
        let mut turn = reply(Some(7));
        turn.turn.content = Some("the answer now".into());
        turn.host = Some(host);
        let mut own = turn.clone();
        own.host = None;
        let captured = Captured {
            conversation_id: id(50),
            seq: turn.turn.seq,
            host,
            state: crate::context::CaptureState {
                content: Some("the answer then".into()),
                ..Default::default()
            },
        };
        let mut source = VecHistory::new(vec![turn, own]);
        let (batch, _) = next_batch(&mut source, 8, &[captured], &mut HashSet::new()).unwrap();
        let contents: Vec<_> = batch.iter().map(|h| h.turn.content.as_deref()).collect();
        // The parent's turn as it stood; the Side's own turn of the same seq as it is.
        assert_eq!(contents, [Some("the answer now"), Some("the answer then")]);
    }

    fn reply(answerer: Option<u128>) -> HistoryTurn {
        let mut t = Turn::new(id(100), 5, TurnKind::Reply);
        t.answerer_id = answerer.map(id);
        HistoryTurn {
            turn: t,
            rounds: Vec::new(),
            host: None,
        }
    }

    fn round(n: i32) -> Round {
        Round {
            n,
            assistant: Vec::new(),
            results: Vec::new(),
            steers: Vec::new(),
            aborted: false,
            cleared: None,
            sent: false,
        }
    }

    #[test]
    fn own_direct_reply_is_seed_then_answer() {
        let mut ht = reply(Some(1));
        ht.turn.prompt = Some("q".into());
        ht.turn.content = Some("a".into());
        assert_eq!(plan(&ht, id(1), None), vec![Plan::Seed, Plan::Answer]);
        ht.turn.prompt = None;
        assert_eq!(
            plan(&ht, id(1), None),
            vec![Plan::Seed, Plan::Answer],
            "a seed is a unit even when empty"
        );
    }

    /// Seed rule: a turn whose in-turn summary arrived renders the summary in place of
    /// everything before its repaired round — on a direct reply, its preface, opening
    /// words and answer: the summary alone.
    #[test]
    fn a_direct_replys_summary_stands_in_for_all_three() {
        let mut ht = reply(Some(1));
        ht.turn.prompt = Some("q".into());
        ht.turn.content = Some("a".into());
        ht.turn.summary = Some("s".into());
        assert_eq!(plan(&ht, id(1), None), vec![Plan::RoundsSummary]);
    }

    #[test]
    fn own_run_is_seed_then_rounds_and_summary_replaces_the_early_ones() {
        let mut ht = reply(None);
        ht.turn.prompt = Some("q".into());
        ht.turn.content = Some("final".into());
        ht.rounds = vec![round(1), round(2), round(3)];
        assert_eq!(
            plan(&ht, id(1), Some(id(1))),
            vec![Plan::Seed, Plan::Round(0), Plan::Round(1), Plan::Round(2)]
        );
        ht.turn.summary = Some("s".into());
        ht.turn.summary_round = Some(3);
        assert_eq!(plan(&ht, id(1), Some(id(1))), vec![Plan::RoundsSummary, Plan::Round(2)]);
    }

    #[test]
    fn another_agents_reply_is_one_entry() {
        let mut ht = reply(Some(2));
        assert_eq!(plan(&ht, id(1), Some(id(1))), vec![Plan::Correspondent]);
        ht.turn.content = Some("b says".into());
        ht.rounds = vec![round(1)];
        assert_eq!(
            plan(&ht, id(1), Some(id(1))),
            vec![Plan::Correspondent],
            "never its rounds"
        );
    }

    /// The database's count (sums of the stored `own_entries` by kind and answerer) is
    /// the plan's, turn by turn, for every reader and conversation answerer.
    #[test]
    fn stored_counts_give_the_plans_entries() {
        let mut turns = Vec::new();
        for (i, answerer) in [None, Some(1), Some(2), Some(1), None, Some(3)].into_iter().enumerate() {
            let mut ht = reply(answerer);
            ht.turn.content = (i % 2 == 0).then(|| "a".to_string());
            ht.turn.summary = (i == 3).then(|| "s".to_string());
            ht.turn.summary_round = (i == 3).then_some(2);
            ht.rounds = (1..=i as i32).map(round).collect();
            turns.push(ht);
        }
        for kind in [TurnKind::Message, TurnKind::Summary] {
            turns.push(HistoryTurn {
                turn: Turn::new(id(7), 1, kind),
                rounds: Vec::new(),
                host: None,
            });
        }
        let mut groups: Vec<StoredCount> = Vec::new();
        for ht in &turns {
            let ns: Vec<i32> = ht.rounds.iter().map(|r| r.n).collect();
            let own = match ht.turn.kind {
                TurnKind::Reply => own_plan(
                    nonempty(&ht.turn.summary),
                    ht.turn.summary_round,
                    &ns,
                    nonempty(&ht.turn.content),
                )
                .len(),
                _ => 1,
            } as i64;
            match groups
                .iter_mut()
                .find(|g| g.kind == ht.turn.kind && g.answerer_id == ht.turn.answerer_id)
            {
                Some(g) => {
                    g.turns += 1;
                    g.own_entries += own;
                }
                None => groups.push(StoredCount {
                    kind: ht.turn.kind,
                    answerer_id: ht.turn.answerer_id,
                    turns: 1,
                    own_entries: own,
                }),
            }
        }
        for a in 1..=4 {
            for conv in [None, Some(id(1)), Some(id(2))] {
                let by_plan: usize = turns.iter().map(|h| plan(h, id(a), conv).len()).sum();
                assert_eq!(
                    stored_entries(&groups, id(a), conv) as usize,
                    by_plan,
                    "reader {a}, conversation {conv:?}"
                );
            }
        }
    }

    #[test]
    fn correspondent_seeds_are_skipped_when_a_posted_them_or_the_kernel_did() {
        let mut ht = reply(Some(2));
        ht.turn.prompt = Some("q".into());
        ht.turn.poster_id = Some(id(3));
        assert!(correspondent_seed_shown(&ht, id(1)));
        ht.turn.poster_id = Some(id(1));
        assert!(!correspondent_seed_shown(&ht, id(1)), "A posted the seed");
        ht.turn.poster_id = Some(id(3));
        ht.turn.origin = Some("task_result".into());
        assert!(!correspondent_seed_shown(&ht, id(1)), "kernel seed");
    }
}
