//! Loading a compile's rows in a few set-based queries, into the core's typed rows.
//! Every query runs through SPI as the caller, so row-level security decides what a
//! compile reads. The core takes the steps (`core/src/reads.rs`, `load`); this folder
//! runs the statement each step asks of its `Store`, each declaring its columns by name
//! beside the reader that takes them (`super::spi::Query`):
//!
//! - `mod.rs`: the face: everything but history for one turn ([`context`]), from the
//!   conversation, its workspace and the turn; a stateful turn's previous request's row;
//! - `rows.rs`: the rows more than one read takes (a turn, a user, a model, a round);
//! - `captures.rs`: a Side's captures, up its chain of parents;
//! - `answerer.rs`: the answerer's documents, memory and skills;
//! - `history.rs`: history, newest first, in batches sized to what the budget has left
//!   ([`SpiHistory`]), so a compile reads the rows it renders, not the whole conversation.

mod answerer;
mod captures;
mod history;
mod rows;
mod single_table;

use std::collections::HashMap;
use std::sync::LazyLock;

use pgrx::pg_sys::{BOOLOID, DATEOID, INT4OID, INT8OID, TEXTARRAYOID, TEXTOID, TIMESTAMPTZOID, UUIDOID};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use super::seals;
use super::spi::{core_uuid, first, pg_uuid, run, Cols, Query};
use pgprompt_core::Body;
use pgprompt_core::Round;
use pgprompt_core::Sealed;
use pgprompt_core::{AnswererRows, First, ModelRows, PreviousRequest, References, Store};
use pgprompt_core::{CaptureState, Captured};
use pgprompt_core::{Code, Error, Result};
use pgprompt_core::{Conversation, Document, Memory, Model, Skill, Turn, User, Workspace};
use pgrx::datum::TimestampWithTimeZone;

use answerer::answerer_rows;
use captures::{capture_columns, conversation_row, side_captures, CAPTURE_COLUMNS, CONVERSATION_COLUMNS};
use pgprompt_core::Columns as _;
use rows::ROUND;

pub use history::SpiHistory;
pub(crate) use rows::TURN;
pub(super) use rows::{load_users, models};
// The turn row's reader is the crate's for a #[pg_test] that swaps its columns.
#[cfg(any(test, feature = "pg_test"))]
pub(crate) use rows::turn_columns;

/// The conversation `$1` and its capture; for a compile, with the seal's pointers where
/// the turn is its stored body (`seals::STORED_JOIN`); the turn `$2` (its creation day is
/// read with the workspace), the seq of the newest summary turn before it and whether the
/// conversation has any round (the turn not parsed, nor the summary or the rounds looked
/// up, where the stored body is all a compile reads). One shard's
/// rows (a router query to Citus): the workspace is a reference table's row, read in the
/// next statement, as a call Citus delegates with `force_delegation` may run
/// (docs/scale-out.md, "In a transaction"): a join of a distributed table with a
/// reference table is refused there.
static CONVERSATION: LazyLock<Query> = LazyLock::new(|| {
    let mut columns = CONVERSATION_COLUMNS.to_vec();
    columns.extend(CAPTURE_COLUMNS);
    columns.extend(seals::STORED_COLUMNS);
    columns.extend(TURN);
    columns.extend([
        ("turn_created_at", TIMESTAMPTZOID),
        ("summary_floor", INT8OID),
        ("conversation_rounds", BOOLOID),
    ]);
    // What only a compile that reads more than the stored body needs.
    let full = "NOT $4 OR s.digest IS NULL OR s.pruned_at IS NOT NULL";
    Query::new(
        "the conversation row",
        format!(
            "SELECT c.workspace_id, c.kind AS conversation_kind, c.answerer_id AS conversation_answerer_id, \
             c.creator_id, c.origin_channel, {}, {}, {}, t.created_at AS turn_created_at, \
             CASE WHEN {full} THEN {} END AS summary_floor, \
             CASE WHEN {full} THEN EXISTS (SELECT 1 FROM prompt.rounds r WHERE r.conversation_id = $1) END \
               AS conversation_rounds \
             FROM prompt.conversations c \
             LEFT JOIN prompt.seals s ON {} \
             LEFT JOIN prompt.turns t ON t.conversation_id = $1 AND t.id = $2 \
             WHERE c.id = $1",
            capture_columns("c."),
            seals::STORED_POINTERS,
            rows::turn_select("NULL::date"),
            history::summary_floor("$1", "t.seq"),
            seals::STORED_JOIN
        ),
        &columns,
    )
});

/// The conversation's workspace `$1` (with the turn's creation day, `$2`, in its time
/// zone), the users `$3` and their stewards, and, when `$6`, the models `$4` and the model
/// of the answerer `$5`: reference tables' rows, one statement.
static WORKSPACE_USERS_MODELS: LazyLock<Query> = LazyLock::new(|| {
    // The plan cache always found a custom plan cheaper than the generic one, so it
    // planned this statement again at every call: 0.5 ms of a 3.9 ms warm preview, the
    // profile lookup inlined each time; its generic plan runs in 0.09 ms (bench/NOTES.md).
    Query::parts(
        "the workspace, users and models",
        &[
            (
                "workspace",
                "SELECT id, name, timezone, paths, ($2::timestamptz AT TIME ZONE timezone)::date AS created_on \
                 FROM prompt.workspaces WHERE id = $1"
                    .into(),
                &[
                    ("id", UUIDOID),
                    ("name", TEXTOID),
                    ("timezone", TEXTOID),
                    ("paths", TEXTARRAYOID),
                    ("created_on", DATEOID),
                ],
            ),
            ("user", rows::users_sql("$3"), &rows::USER),
            (
                "model",
                rows::models_sql(
                    "$6 AND (m.name = ANY($4) OR m.name = (SELECT u.model FROM prompt.users u WHERE u.id = $5))",
                ),
                &rows::MODEL,
            ),
        ],
    )
    .generic_plan()
});

pub use pgprompt_core::{Loaded, Read};

/// The conversation's row as [`CONVERSATION`] reads it: the turn is parsed only where a
/// compile reads more than the stored body (none stored, or it was pruned).
fn first_row(c: &Cols<'_>, conv: Uuid) -> Result<First<seals::StoredSeal, TimestampWithTimeZone>> {
    let (conversation, capture) = conversation_row(c, conv)?;
    let stored = seals::StoredSeal::read(c);
    let turn = match stored.as_ref().is_none_or(seals::StoredSeal::pruned) {
        true => Turn::from_columns(c, false)?,
        false => None,
    };
    Ok(First {
        conversation,
        capture,
        stored,
        turn,
        created_at: c.get("turn_created_at"),
        summary_floor: c.get::<i64>("summary_floor"),
        conversation_rounds: c.get::<bool>("conversation_rounds").unwrap_or(true),
    })
}

/// Loads everything but history for turn `turn` of conversation `conv`: the core decides
/// what to read ([`pgprompt_core::load`]), [`SpiStore`] runs each statement.
pub fn context(client: &SpiClient<'_>, conv: Uuid, turn: Uuid, read: Read) -> Result<Loaded> {
    pgprompt_core::load(&mut SpiStore { client }, conv, turn, read)
}

/// The load's statements over SPI, as the caller.
struct SpiStore<'a, 'c> {
    client: &'a SpiClient<'c>,
}

impl Store for SpiStore<'_, '_> {
    type Stored = seals::StoredSeal;
    type Instant = TimestampWithTimeZone;

    fn first(
        &mut self,
        conv: Uuid,
        turn: Uuid,
        stored_first: bool,
        stateful: &serde_json::Value,
    ) -> Result<Option<First<seals::StoredSeal, TimestampWithTimeZone>>> {
        let [stateful, wanted] = seals::StoredSeal::args(stateful, stored_first);
        if super::citus::on() {
            return single_table::first_row(self.client, (conv, turn), stored_first, [stateful, wanted]);
        }
        let args = [pg_uuid(conv).into(), pg_uuid(turn).into(), stateful, wanted];
        let rows = run(self.client, &CONVERSATION, &args, |c| first_row(c, conv).map(Some))?;
        Ok(rows.into_iter().next())
    }

    fn stored_body(&mut self, stored: seals::StoredSeal, conv: Uuid, turn: Uuid) -> Result<Option<Body>> {
        stored.body(self.client, conv, turn)
    }

    fn missing_turn(&mut self, conv: Uuid, turn: Uuid) -> Error {
        missing_turn(self.client, conv, turn)
    }

    fn rounds(&mut self, conv: Uuid, turn: Uuid) -> Result<Vec<Round>> {
        current_rounds(self.client, conv, turn)
    }

    fn seal(&mut self, conv: Uuid, turn: &Turn) -> Result<Sealed> {
        seals::load(self.client, conv, turn.id)
    }

    fn captures(
        &mut self,
        conv: Uuid,
        parent: Option<Uuid>,
        captured_turn: Uuid,
        state: CaptureState,
    ) -> Result<Vec<Captured>> {
        side_captures(self.client, conv, parent, captured_turn, state)
    }

    fn references(
        &mut self,
        conversation: &Conversation,
        created_at: Option<TimestampWithTimeZone>,
        users: &[Uuid],
        models: Option<ModelRows>,
    ) -> Result<Option<References>> {
        workspace_users_models(self.client, conversation, created_at, users, models)
    }

    fn previous_response(&mut self, conversation: &Conversation, turn: &Turn) -> Result<Option<String>> {
        previous_response(self.client, conversation, turn)
    }

    fn answerer_rows(
        &mut self,
        wanted: &AnswererRows,
        workspace: Uuid,
        conv: Uuid,
    ) -> Result<(Vec<Document>, Vec<Memory>, Vec<Skill>)> {
        answerer_rows(self.client, wanted, workspace, conv)
    }

    fn previous_request(&mut self, conv: Uuid, seq: i64, answerer: Uuid) -> Result<Option<PreviousRequest>> {
        previous_request(self.client, conv, seq, answerer)
    }
}

/// The workspace (and the turn's creation day in its time zone), the users `ids` and the
/// models `models` names, in one statement (`None`: the workspace row is not visible).
fn workspace_users_models(
    client: &SpiClient<'_>,
    conversation: &Conversation,
    created_at: Option<TimestampWithTimeZone>,
    ids: &[Uuid],
    models: Option<ModelRows>,
) -> Result<Option<References>> {
    let read_models = models.is_some();
    let (names, answerer) = models.map(|m| (m.names, m.answerer)).unwrap_or_default();
    let ids: Vec<pgrx::Uuid> = ids.iter().copied().map(pg_uuid).collect();
    let args = [
        pg_uuid(conversation.workspace_id).into(),
        super::spi::nullable(created_at),
        ids.into(),
        names.into(),
        super::spi::nullable(answerer.map(pg_uuid)),
        read_models.into(),
    ];
    let (mut workspace, mut users, mut models) = (None, HashMap::new(), Vec::new());
    run(client, &WORKSPACE_USERS_MODELS, &args, |c| {
        match c.need_text("row_of")?.as_str() {
            "workspace" => workspace = Some((workspace_row(c)?, c.date("created_on")?)),
            "user" => {
                let u = User::from_columns(c)?;
                users.insert(u.id, u);
            }
            "model" => models.push(Model::from_columns(c)?),
            other => c.unread_part(other),
        }
        Ok::<Option<()>, Error>(None)
    })?;
    let Some((workspace, day)) = workspace else {
        return Ok(None);
    };
    Ok(Some(References {
        workspace,
        day,
        users,
        models: rows::with_calibration(client, models)?,
    }))
}

/// The workspace, from its row of [`WORKSPACE_USERS_MODELS`].
fn workspace_row(c: &Cols<'_>) -> Result<Workspace> {
    Ok(Workspace {
        id: c.need_uuid("id")?,
        name: c.text("name"),
        timezone: c.need_text("timezone")?,
        paths: c
            .get::<Vec<Option<String>>>("paths")
            .unwrap_or_default()
            .into_iter()
            .flatten()
            .collect(),
    })
}

static TURN_ELSEWHERE: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a turn's conversation",
        "SELECT conversation_id FROM prompt.turns WHERE id = $1 LIMIT 1",
        &[("conversation_id", UUIDOID)],
    )
});

pub(super) fn missing_turn(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Error {
    match first::<pgrx::Uuid>(client, &TURN_ELSEWHERE, &[pg_uuid(turn).into()]) {
        Some(elsewhere) => Error::new(
            Code::TurnNotCompilable,
            format!(
                "turn {turn} belongs to conversation {}, not {conv}",
                core_uuid(elsewhere)
            ),
        )
        .hint("Pass the turn's own conversation_id."),
        None => Error::new(
            Code::TurnNotFound,
            format!("turn {turn} does not exist in conversation {conv}"),
        )
        .hint("The id may be wrong, or row-level security may hide the turn from this role."),
    }
}

static CURRENT_ROUNDS: LazyLock<Query> = LazyLock::new(|| {
    let mut columns = ROUND.to_vec();
    columns.push(("intact", BOOLOID));
    Query::new(
        "a round row",
        format!(
            "SELECT r.n, r.assistant, r.results, r.steers, r.aborted, r.cleared, r.sent_at IS NOT NULL AS sent, \
             ((r.sent_at IS NULL AND r.sent_digest IS NULL) OR r.sent_digest IS NOT DISTINCT FROM {}) \
             AS intact FROM prompt.rounds r WHERE r.conversation_id = $1 AND r.turn_id = $2 ORDER BY r.n",
            crate::pg::seals::round_digest("r")
        ),
        &columns,
    )
});

/// The turn's rounds: each round a request already carried is checked against the
/// digest of what was sent (`data_corrupted` when it no longer matches). The load leaves
/// out a newest round whose calls still await their results (`pgprompt_core::load`: the request
/// it answered is what the provider can take).
fn current_rounds(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Result<Vec<Round>> {
    let rounds = run(
        client,
        &CURRENT_ROUNDS,
        &[pg_uuid(conv).into(), pg_uuid(turn).into()],
        |c| {
            let round = Round::from_columns(c, turn)?;
            if !c.need::<bool>("intact")? {
                return Err(Error::new(
                    Code::DataCorrupted,
                    format!(
                        "round {} of turn {turn} of conversation {conv} was sent and no longer matches what was sent",
                        round.n
                    ),
                )
                .detail("Its bytes are not returned: the round's assistant, results, steers or abort differ from the digest written when a request first carried it.")
                .hint("Rounds a request carried change only through pgprompt; was it edited with the guards off? SELECT * FROM prompt.verify_seals(conversation_id) lists what no longer matches."));
            }
            Ok(Some(round))
        },
    )?;
    Ok(rounds)
}

/// The newest response recorded for an earlier turn of the answerer in the conversation
/// (what cache diagnostics compare a request with).
static PREVIOUS_RESPONSE: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the previous response",
        "SELECT r.response_id FROM prompt.turns t JOIN prompt.responses r \
           ON r.conversation_id = t.conversation_id AND r.turn_id = t.id \
         WHERE t.conversation_id = $1 AND t.seq < $2 AND t.kind = 'reply' AND r.response_id IS NOT NULL \
           AND coalesce(t.answerer_id, $4) IS NOT DISTINCT FROM $3 \
         ORDER BY t.seq DESC, r.step DESC LIMIT 1",
        &[("response_id", TEXTOID)],
    )
});

fn previous_response(client: &SpiClient<'_>, c: &Conversation, t: &pgprompt_core::Turn) -> Result<Option<String>> {
    let answerer = t.answerer_id.or(c.answerer_id);
    let rows = run(
        client,
        &PREVIOUS_RESPONSE,
        &[
            pg_uuid(c.id).into(),
            t.seq.into(),
            super::spi::nullable(answerer.map(pg_uuid)),
            super::spi::nullable(c.answerer_id.map(pg_uuid)),
        ],
        |r| Ok::<_, Error>(r.text("response_id")),
    )?;
    Ok(rows.into_iter().next())
}

/// A stateful turn's previous request: the newest earlier sealed reply turn of its
/// answerer, with the newest response recorded for it (a turn without one breaks the
/// chain).
static PREVIOUS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the previous request",
        "SELECT t.id, r.step, r.response_id, r.compiled_model, r.billed_input_tokens, r.output_tokens, \
                coalesce(r.answer_digest = CASE WHEN r.step = 0 THEN sha256(convert_to(t.content, 'UTF8')) ELSE \
                    (SELECT sha256(convert_to(y.assistant::text, 'UTF8')) FROM prompt.rounds y \
                      WHERE y.conversation_id = $1 AND y.turn_id = t.id AND y.n = r.step) END, false) AS as_recorded \
         FROM prompt.turns t JOIN prompt.conversations c ON c.id = t.conversation_id \
         LEFT JOIN LATERAL (SELECT step, response_id, compiled_model, billed_input_tokens, output_tokens, answer_digest \
                            FROM prompt.responses x \
                            WHERE x.conversation_id = $1 AND x.turn_id = t.id \
                            ORDER BY x.step DESC LIMIT 1) r ON true \
         WHERE t.conversation_id = $1 AND t.seq < $2 AND t.kind = 'reply' AND t.sealed_at IS NOT NULL \
           AND coalesce(t.answerer_id, c.answerer_id) = $3 \
         ORDER BY t.seq DESC LIMIT 1",
        &[
            ("id", UUIDOID),
            ("step", INT4OID),
            ("response_id", TEXTOID),
            ("compiled_model", TEXTOID),
            ("billed_input_tokens", INT4OID),
            ("output_tokens", INT4OID),
            ("as_recorded", BOOLOID),
        ],
    )
});

/// The previous request of answerer `a` before the turn at `seq` and the newest response
/// recorded for it, as [`PREVIOUS`] reads them (the core decides whether the chain can
/// hold, and reads that turn).
fn previous_request(client: &SpiClient<'_>, conv: Uuid, seq: i64, a: Uuid) -> Result<Option<PreviousRequest>> {
    let rows = run(
        client,
        &PREVIOUS,
        &[pg_uuid(conv).into(), seq.into(), pg_uuid(a).into()],
        |c| {
            // The response columns are NULL where the turn has no response (left joined).
            Ok::<_, Error>(Some(PreviousRequest {
                turn: c.need_uuid("id")?,
                step: c.get::<i32>("step"),
                response_id: c.text("response_id"),
                model: c.text("compiled_model"),
                input_tokens: c.get::<i32>("billed_input_tokens"),
                output_tokens: c.get::<i32>("output_tokens"),
                as_recorded: c.get::<bool>("as_recorded") == Some(true),
            }))
        },
    )?;
    Ok(rows.into_iter().next())
}
