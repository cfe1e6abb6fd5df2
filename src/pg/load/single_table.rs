//! The conversation's first read as statements of one table each
//! (`pgprompt.citus`: this server is a Citus node): each reads one conversation-scoped table
//! by the conversation's key, with no join and no subquery, which Citus plans by its
//! fast path for one shard (docs/scale-out.md), where the loader's joined `CONVERSATION`
//! (`mod.rs`) takes its router planner at every call on a worker. The same rows
//! give the same [`First`], and an error names the same row (every statement here is
//! "the conversation row", as the joined one is). On one node the joined read is one
//! statement where this runs one to seven (a sealed compile: four), which is why it is
//! a setting: one server keeps a sealed compile at 2 statements (SPEC 15.5).
//!
//! What differs: the reads are not one snapshot in a read-committed transaction (a seal
//! committed between them is read by the core from the seal itself, the same bytes);
//! and a role without `SELECT` on one of the tables is refused only by a statement that
//! reads it, where the joined statement names all four on every call.

use std::sync::LazyLock;

use pgrx::datum::DatumWithOid;
use pgrx::datum::TimestampWithTimeZone;
use pgrx::pg_sys::{BOOLOID, TIMESTAMPTZOID};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use super::captures::{capture_columns, conversation_row, CAPTURE_COLUMNS, CONVERSATION_COLUMNS};
use super::history::SUMMARY_FLOOR;
use super::rows::{self, TURN};
use crate::pg::seals::{self, StoredSeal};
use crate::pg::spi::{first, pg_uuid, run, Query};
use pgprompt_core::{Error, First, Result, Turn};

/// The conversation `$1`'s row and its capture.
static CONVERSATION_ROW: LazyLock<Query> = LazyLock::new(|| {
    let mut columns = CONVERSATION_COLUMNS.to_vec();
    columns.extend(CAPTURE_COLUMNS);
    Query::new(
        "the conversation row",
        format!(
            "SELECT c.workspace_id, c.kind AS conversation_kind, c.answerer_id AS conversation_answerer_id, \
             c.creator_id, c.origin_channel, {} FROM prompt.conversations c WHERE c.id = $1",
            capture_columns("c.")
        ),
        &columns,
    )
});

/// The seal of turn `$2` whose frozen record is not stateful (`$3`), its digest where
/// `$4`: [`seals::STORED_JOIN`]'s seal, without its conditions on the turn.
static SEAL_ROW: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the conversation row",
        format!(
            "SELECT {} FROM prompt.seals s WHERE s.conversation_id = $1 AND s.turn_id = $2 AND NOT s.frozen @> $3",
            seals::STORED_POINTERS
        ),
        &seals::STORED_COLUMNS,
    )
});

/// Whether turn `$2` is sealed, and when it was created: the rest of
/// [`seals::STORED_JOIN`]'s conditions, with [`TURN_ROUNDS`].
static TURN_SEALED: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the conversation row",
        "SELECT t.sealed_at IS NOT NULL AS sealed, t.created_at AS turn_created_at \
         FROM prompt.turns t WHERE t.conversation_id = $1 AND t.id = $2",
        &[("sealed", BOOLOID), ("turn_created_at", TIMESTAMPTZOID)],
    )
});

/// Whether turn `$2` has a round.
static TURN_ROUNDS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the conversation row",
        "SELECT true AS found FROM prompt.rounds r WHERE r.conversation_id = $1 AND r.turn_id = $2 LIMIT 1",
        &[("found", BOOLOID)],
    )
});

/// Turn `$2`'s row, its day left to the workspace's read.
static TURN_ROW: LazyLock<Query> = LazyLock::new(|| {
    let mut columns = TURN.to_vec();
    columns.push(("turn_created_at", TIMESTAMPTZOID));
    Query::new(
        "the conversation row",
        format!(
            "SELECT {}, t.created_at AS turn_created_at FROM prompt.turns t \
             WHERE t.conversation_id = $1 AND t.id = $2",
            rows::turn_select("NULL::date")
        ),
        &columns,
    )
});

/// Whether any turn of the conversation has a round.
static CONVERSATION_ROUNDS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the conversation row",
        "SELECT true AS found FROM prompt.rounds r WHERE r.conversation_id = $1 LIMIT 1",
        &[("found", BOOLOID)],
    )
});

/// What the loader's `CONVERSATION` (`mod.rs`) reads for turn `turn` of conversation `conv`, one table
/// a statement: `seal` are its arguments `$3` and `$4` (`StoredSeal::args`), `wanted`
/// whether the read takes the stored body (`$4`).
pub(super) fn first_row(
    client: &SpiClient<'_>,
    (conv, turn): (Uuid, Uuid),
    wanted: bool,
    seal: [DatumWithOid<'_>; 2],
) -> Result<Option<First<StoredSeal, TimestampWithTimeZone>>> {
    let keys = || [pg_uuid(conv).into(), pg_uuid(turn).into()];
    let Some((conversation, capture)) = run(client, &CONVERSATION_ROW, &[pg_uuid(conv).into()], |c| {
        conversation_row(c, conv).map(Some)
    })?
    .pop() else {
        return Ok(None);
    };
    let mut created_at = None;
    let mut stored = None;
    if wanted {
        let [stateful, wanted] = seal;
        let [c, t] = keys();
        if let Some(seal) = run(client, &SEAL_ROW, &[c, t, stateful, wanted], |c| {
            Ok::<_, Error>(StoredSeal::read(c))
        })?
        .pop()
        {
            // The seal is the turn's stored body where the turn is visible and sealed and
            // has no round (seals::STORED_JOIN).
            let turn = run(client, &TURN_SEALED, &keys(), |c| {
                Ok::<_, Error>(Some((c.need::<bool>("sealed")?, c.get("turn_created_at"))))
            })?;
            if let Some((true, at)) = turn.into_iter().next() {
                if first::<bool>(client, &TURN_ROUNDS, &keys()).is_none() {
                    created_at = at;
                    stored = Some(seal);
                }
            }
        }
    }
    if stored.as_ref().is_some_and(|s| !s.pruned()) {
        return Ok(Some(First {
            conversation,
            capture,
            stored,
            turn: None,
            created_at,
            summary_floor: None,
            conversation_rounds: true,
        }));
    }
    let rows = run(client, &TURN_ROW, &keys(), |c| {
        Ok::<_, Error>(Some((Turn::from_columns(c, false)?, c.get("turn_created_at"))))
    })?;
    let (turn, created_at) = rows.into_iter().next().unwrap_or((None, None));
    let summary_floor = match &turn {
        Some((t, _)) => first::<i64>(client, &SUMMARY_FLOOR, &[pg_uuid(conv).into(), t.seq.into()]),
        None => None,
    };
    let conversation_rounds = first::<bool>(client, &CONVERSATION_ROUNDS, &[pg_uuid(conv).into()]).is_some();
    Ok(Some(First {
        conversation,
        capture,
        stored,
        turn,
        created_at,
        summary_floor,
        conversation_rounds,
    }))
}
