//! History read through SPI (docs/design.md, "History"): newest first, in batches sized
//! to what the budget has left, over a Side's stretches; what the budget leaves out is
//! counted from the stored entry counts, by the core's rule.

use std::collections::HashMap;
use std::sync::LazyLock;

use pgrx::pg_sys::{BYTEAOID, INT8OID, JSONBOID, TEXTOID, UUIDOID};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use crate::pg::jsonb::JsonbOut;
use crate::pg::seals::Unsent;
use crate::pg::spi::{first, pg_uuid, run, Query};
use pgprompt_core::Round;
use pgprompt_core::{Context, HistoryTurn, Host};
use pgprompt_core::{Error, Result};
use pgprompt_core::{HistorySource, StoredCount};
use pgprompt_core::{Turn, TurnKind, User};

use super::rows::{load_users, turn_columns, ROUND, TURN};
use pgprompt_core::Columns as _;

/// The seq of conversation `conv`'s newest summary turn before seq `before` (SQL
/// expressions), where its history starts, as a subquery: the compiled turn's own with
/// the conversation row (`super::CONVERSATION`).
pub(super) fn summary_floor(conv: &str, before: &str) -> String {
    format!("({})", summary_floor_select(conv, before))
}

/// [`summary_floor`] as a statement of one table, no subquery (Citus's fast path).
fn summary_floor_select(conv: &str, before: &str) -> String {
    format!(
        "SELECT max(f.seq) AS seq FROM prompt.turns f WHERE f.conversation_id = {conv} AND f.kind = 'summary' \
         AND f.seq < {before}"
    )
}

/// The seq of conversation `$1`'s newest summary turn below seq `$2`: a parent's stretch
/// here, the compiled turn's with `pgprompt.citus` (`single_table.rs`).
pub(super) static SUMMARY_FLOOR: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a conversation's newest summary",
        summary_floor_select("$1", "$2"),
        &[("seq", INT8OID)],
    )
});

/// A batch of history: the turns of conversation `$1` below seq `$2` from `$3` on, newest
/// first, `$4` at most (their creation day in the time zone `$5`). One statement; the rounds
/// of its replies, where the conversation has rounds at all (read with the turn), are a
/// second ([`HISTORY_ROUNDS`]; under READ COMMITTED it may see a round committed after
/// the batch's turns were read, as a later batch always could). They were one
/// `UNION ALL` statement: its executor start, its subquery scans and its rows padded with the
/// other part's columns cost a 200-turn preview 0.2 ms, 7%, with no round to read
/// (bench/NOTES.md).
static HISTORY: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a batch of history",
        format!(
            "SELECT {} FROM prompt.turns t \
             WHERE t.conversation_id = $1 AND t.seq < $2 AND t.seq >= $3 ORDER BY t.seq DESC LIMIT $4",
            turn_columns("$5")
        ),
        &TURN,
    )
});

/// [`HISTORY`] for a compile that seals: each turn no seal marked sent yet comes with the
/// digest of what it reads now (`fresh`), so the seal marks it sent as it was read
/// ([`Unsent`]).
static HISTORY_UNSENT: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a batch of history",
        format!(
            "SELECT {}, CASE WHEN t.sent_digest IS NULL THEN {} END AS fresh FROM prompt.turns t \
             WHERE t.conversation_id = $1 AND t.seq < $2 AND t.seq >= $3 ORDER BY t.seq DESC LIMIT $4",
            turn_columns("$5"),
            crate::pg::seals::turn_digest("t")
        ),
        &[&TURN[..], &[("fresh", BYTEAOID)]].concat(),
    )
});

/// The rounds of conversation `$1`'s turns `$2` (a batch's replies, [`Turn::reads_rounds`]).
static HISTORY_ROUNDS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a batch of history's rounds",
        "SELECT r.turn_id, r.n, r.assistant, r.results, r.steers, r.aborted, r.cleared, \
         r.sent_at IS NOT NULL AS sent FROM prompt.rounds r \
         WHERE r.conversation_id = $1 AND r.turn_id = ANY($2)",
        &[&[("turn_id", UUIDOID)][..], &ROUND].concat(),
    )
});

/// [`HISTORY_ROUNDS`] for a compile that seals, as [`HISTORY_UNSENT`] reads turns.
static HISTORY_ROUNDS_UNSENT: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a batch of history's rounds",
        format!(
            "SELECT r.turn_id, r.n, r.assistant, r.results, r.steers, r.aborted, r.cleared, \
                    r.sent_at IS NOT NULL AS sent, CASE WHEN r.sent_digest IS NULL THEN {} END AS fresh FROM prompt.rounds r \
             WHERE r.conversation_id = $1 AND r.turn_id = ANY($2)",
            crate::pg::seals::round_digest("r")
        ),
        &[&[("turn_id", UUIDOID)][..], &ROUND, &[("fresh", BYTEAOID)]].concat(),
    )
});

static COUNT_REST: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a stretch's entry count",
        // The sums the core's rule reads (its stored_entries): per kind and stored
        // answerer, the turns and their own_entries.
        "SELECT t.kind, t.answerer_id, count(*)::int8 AS turns, sum(t.own_entries)::int8 AS own_entries \
         FROM prompt.turns t WHERE t.conversation_id = $1 AND t.seq < $2 AND t.seq >= $3 \
         GROUP BY t.kind, t.answerer_id",
        &[
            ("kind", TEXTOID),
            ("answerer_id", UUIDOID),
            ("turns", INT8OID),
            ("own_entries", INT8OID),
        ],
    )
});

/// A part of the frozen record of the newest sealed reply before the turn whose record
/// contains `$3` (`HistorySource::previous_frozen`: where an answerer's previous sealed
/// request began its history, for stable trimming). The core names what to match and
/// which part to read, and reads it: no path into the record is spelled here, and the
/// rest of the record is not read.
static PREVIOUS_CUT: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a previous seal's history start",
        "SELECT s.frozen -> $4 AS part \
         FROM prompt.turns t JOIN prompt.seals s ON s.conversation_id = t.conversation_id AND s.turn_id = t.id \
         WHERE t.conversation_id = $1 AND t.seq < $2 AND t.kind = 'reply' AND t.sealed_at IS NOT NULL \
           AND s.frozen @> $3 \
         ORDER BY t.seq DESC LIMIT 1",
        &[("part", JSONBOID)],
    )
});

/// One conversation's stretch of the history a turn reads: its own conversation's turns
/// before it, then, for a Side, each parent's through the captured turn.
struct Segment {
    conv: Uuid,
    /// The next batch reads turns with `seq` below this.
    before: i64,
    /// This stretch starts at its newest summary turn (its seq), or the beginning.
    floor: i64,
    host: Option<Host>,
    /// Whether its conversation may have rounds (known for the turn's own, read with the
    /// turn; a parent's are asked for).
    rounds: bool,
}

/// History read newest first through SPI, from the newest summary turn on.
pub struct SpiHistory<'c, 'conn> {
    client: &'c SpiClient<'conn>,
    conv: Uuid,
    /// The compiled turn's seq.
    turn_seq: i64,
    timezone: String,
    /// The stretches left to read, the current first.
    segments: std::collections::VecDeque<Segment>,
    /// For a compile that seals: what it read that no seal marked sent yet.
    unsent: Option<Unsent>,
}

impl<'c, 'conn> SpiHistory<'c, 'conn> {
    pub fn new(client: &'c SpiClient<'conn>, ctx: &Context) -> Self {
        let floor = |conv: Uuid, before: i64| {
            first::<i64>(client, &SUMMARY_FLOOR, &[pg_uuid(conv).into(), before.into()]).unwrap_or(i64::MIN)
        };
        let mut segments = std::collections::VecDeque::new();
        segments.push_back(Segment {
            conv: ctx.conversation.id,
            before: ctx.turn.seq,
            // Read with the turn.
            floor: ctx.summary_floor.unwrap_or(i64::MIN),
            host: None,
            rounds: ctx.conversation_rounds,
        });
        // A summary turn of the Side's own covers what came before it, the parents too.
        if segments[0].floor == i64::MIN {
            for c in &ctx.captured {
                let before = c.seq.saturating_add(1);
                let seg = Segment {
                    conv: c.conversation_id,
                    before,
                    floor: floor(c.conversation_id, before),
                    host: Some(c.host),
                    rounds: true,
                };
                let summarized = seg.floor != i64::MIN;
                segments.push_back(seg);
                if summarized {
                    break;
                }
            }
        }
        SpiHistory {
            client,
            conv: ctx.conversation.id,
            turn_seq: ctx.turn.seq,
            timezone: ctx.workspace.timezone.clone(),
            segments,
            unsent: None,
        }
    }

    /// History for a compile that seals: its own conversation's turns and rounds no seal
    /// marked sent yet are read with their digests ([`SpiHistory::unsent`]).
    pub fn marking(client: &'c SpiClient<'conn>, ctx: &Context) -> Self {
        SpiHistory {
            unsent: Some(Unsent::default()),
            ..SpiHistory::new(client, ctx)
        }
    }

    /// What the compile read that no seal marked sent yet (empty unless [`SpiHistory::marking`]).
    pub fn unsent(self) -> Unsent {
        self.unsent.unwrap_or_default()
    }

    /// The current stretch, past any that are read through.
    fn current(&mut self) -> Option<&mut Segment> {
        while self.segments.front().is_some_and(|s| s.before <= s.floor) {
            self.segments.pop_front();
        }
        self.segments.front_mut()
    }
}

/// Reads the rounds of `turns`' replies into them, each turn's in order of `n` (nothing is
/// read when the batch has no reply); with `unsent`, each round no seal marked sent yet
/// with its digest.
fn read_rounds(
    client: &SpiClient<'_>,
    conv: pgrx::Uuid,
    turns: &mut [HistoryTurn],
    mut unsent: Option<&mut Unsent>,
) -> Result<()> {
    let ids: Vec<pgrx::Uuid> = turns
        .iter()
        .filter(|h| h.turn.reads_rounds())
        .map(|h| pg_uuid(h.turn.id))
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    let query = if unsent.is_some() {
        &*HISTORY_ROUNDS_UNSENT
    } else {
        &*HISTORY_ROUNDS
    };
    let mut rounds: HashMap<Uuid, Vec<Round>> = HashMap::new();
    run(client, query, &[conv.into(), ids.into()], |c| {
        let turn = c.need_uuid("turn_id")?;
        let round = Round::from_columns(c, turn)?;
        if let Some(u) = unsent.as_deref_mut() {
            if let Some(fresh) = c.get::<Vec<u8>>("fresh") {
                u.rounds.push((pg_uuid(turn), round.n, fresh));
            }
        }
        rounds.entry(turn).or_default().push(round);
        Ok::<_, Error>(None::<()>)
    })?;
    for h in turns.iter_mut() {
        if let Some(mut r) = rounds.remove(&h.turn.id) {
            r.sort_by_key(|r| r.n);
            h.rounds = r;
        }
    }
    Ok(())
}

impl SpiHistory<'_, '_> {
    /// The next batch of history ([`HistorySource::next_batch`]), what no seal marked sent
    /// yet noted in `unsent`.
    fn read_batch(&mut self, want: usize, mut unsent: Option<&mut Unsent>) -> Result<Vec<HistoryTurn>> {
        let limit = want.clamp(1, 1024);
        let mut turns: Vec<HistoryTurn> = Vec::new();
        // The first stretch with turns left (a Side's first turn has none of its own).
        while turns.is_empty() {
            let (client, timezone) = (self.client, self.timezone.clone());
            let Some(seg) = self.current() else {
                return Ok(Vec::new());
            };
            let (host, rounds) = (seg.host, seg.rounds);
            let conv = pg_uuid(seg.conv);
            // Only the conversation's own turns are marked by its seal (a Side's parents
            // are their own conversations').
            let mut unsent = unsent.as_deref_mut().filter(|_| host.is_none());
            let query = if unsent.is_some() { &*HISTORY_UNSENT } else { &*HISTORY };
            turns = run(
                client,
                query,
                &[
                    conv.into(),
                    seg.before.into(),
                    seg.floor.into(),
                    (limit as i64).into(),
                    timezone.into(),
                ],
                |c| {
                    let read = Turn::from_columns(c, true)?;
                    if let (Some(u), Some((turn, _))) = (unsent.as_deref_mut(), &read) {
                        // Read only where the query returns it.
                        if let Some(fresh) = c.get::<Vec<u8>>("fresh") {
                            u.turns.push((pg_uuid(turn.id), fresh));
                        }
                    }
                    Ok::<_, Error>(read.map(|(turn, _)| HistoryTurn {
                        turn,
                        rounds: Vec::new(),
                        host,
                    }))
                },
            )?;
            if rounds {
                read_rounds(client, conv, &mut turns, unsent)?;
            }
            // A short batch was the stretch's last: nothing older is left in it.
            seg.before = match turns.last() {
                Some(last) if turns.len() == limit => last.turn.seq,
                _ => seg.floor,
            };
        }
        Ok(turns)
    }
}

impl HistorySource for SpiHistory<'_, '_> {
    fn next_batch(&mut self, want: usize) -> Result<Vec<HistoryTurn>> {
        // Taken out while a stretch is borrowed, put back whatever happens.
        let mut unsent = self.unsent.take();
        let batch = self.read_batch(want, unsent.as_mut());
        self.unsent = unsent;
        batch
    }

    fn users(&mut self, ids: &[Uuid]) -> Result<Vec<User>> {
        load_users(self.client, ids)
    }

    /// Reads the entry counts the write triggers store (`own_entries`, the core's
    /// `own_entries`), stretch by stretch: an index-only scan of (conversation_id, seq)
    /// INCLUDE (kind, answerer_id, own_entries) per stretch left, no turn text read.
    fn rest(&mut self) -> Result<Vec<(Option<Host>, Vec<StoredCount>)>> {
        let mut out = Vec::new();
        while let Some(seg) = self.current() {
            let (conv, before, floor, host) = (seg.conv, seg.before, seg.floor, seg.host);
            seg.before = seg.floor;
            let groups = run(
                self.client,
                &COUNT_REST,
                &[pg_uuid(conv).into(), before.into(), floor.into()],
                |c| {
                    Ok(Some(StoredCount {
                        kind: TurnKind::from_column("turns.kind", &c.need_text("kind")?)?,
                        answerer_id: c.uuid("answerer_id"),
                        turns: c.need::<i64>("turns")?,
                        own_entries: c.need::<i64>("own_entries")?,
                    }))
                },
            )?;
            out.push((host, groups));
        }
        Ok(out)
    }

    fn previous_frozen(&mut self, like: &serde_json::Value, key: &str) -> Result<Option<serde_json::Value>> {
        let args = [
            pg_uuid(self.conv).into(),
            self.turn_seq.into(),
            JsonbOut(like.clone()).into(),
            key.into(),
        ];
        let rows = run(self.client, &PREVIOUS_CUT, &args, |c| {
            Ok::<_, Error>(Some(c.json("part")?))
        })?;
        Ok(rows.into_iter().next().flatten())
    }
}
