//! Converting 0.2 seals into 0.3 seals. The update from 0.2 moves each 0.2 seal (its
//! `turns.sealed_request`) into `prompt.seals_02` as it was; `CALL
//! prompt.convert_seals_02()` converts them in committed batches (resumable: a converted
//! seal leaves `seals_02` in the transaction that stores it), and `compile_turn` and
//! `record_response` of a turn whose seal waits convert its conversation's first, so an
//! updated database serves every turn at once.

use std::sync::LazyLock;

use pgrx::pg_sys::{BOOLOID, TEXTOID, TIMESTAMPTZOID, UUIDOID};
use pgrx::prelude::*;

use super::errors::OrRaise;
use super::seals;
use super::spi::{pg_uuid, run, Column, Query};
use pgprompt_core::Columns as _;
use pgprompt_core::Memo;
use pgprompt_core::Model;
use pgprompt_core::{Code, Error};

/// Takes the next 0.2 seals out of `seals_02` (`filter` narrows them to one conversation)
/// and reads what converting them needs: a conversation's seals in timeline order, so each
/// shares the previous one's elements. Taking them is a `DELETE`, so two sessions never
/// convert the same seal (the second waits for the first and finds it gone).
fn claim_sql(filter: &str, lock: &str) -> String {
    format!(
        "WITH pick AS (SELECT p.conversation_id, p.turn_id FROM prompt.seals_02 p \
         JOIN prompt.turns t ON t.conversation_id = p.conversation_id AND t.id = p.turn_id {filter} \
         ORDER BY t.conversation_id, t.seq LIMIT $2 {lock}), \
         gone AS (DELETE FROM prompt.seals_02 p USING pick \
         WHERE p.conversation_id = pick.conversation_id AND p.turn_id = pick.turn_id \
         RETURNING p.conversation_id, p.turn_id, p.request) \
         SELECT t.conversation_id, t.id, g.request::text, coalesce(t.answerer_id, c.answerer_id) AS answerer_id, \
         coalesce(t.prompt, '') <> '' AS had_prompt, t.sealed_at \
         FROM gone g JOIN prompt.turns t ON t.conversation_id = g.conversation_id AND t.id = g.turn_id \
         JOIN prompt.conversations c ON c.id = t.conversation_id \
         ORDER BY t.conversation_id, t.seq"
    )
}

/// The columns of [`claim_sql`], which [`OldSeal::read`] takes.
const CLAIMED: [Column; 6] = [
    ("conversation_id", UUIDOID),
    ("id", UUIDOID),
    ("request", TEXTOID),
    ("answerer_id", UUIDOID),
    ("had_prompt", BOOLOID),
    ("sealed_at", TIMESTAMPTZOID),
];

/// The next batch of every conversation's 0.2 seals that no other session is converting
/// ($1 is unused: one signature). Two `CALL`s at once take different batches.
static CLAIM_ANY: LazyLock<Query> =
    LazyLock::new(|| Query::new("a 0.2 seal", claim_sql("", "FOR UPDATE OF p SKIP LOCKED"), &CLAIMED));

/// The next batch of one conversation's 0.2 seals: seals another session is converting
/// are waited for (and then found gone), so a turn's own seal is never skipped.
static CLAIM_ONE: LazyLock<Query> =
    LazyLock::new(|| Query::new("a 0.2 seal", claim_sql("WHERE p.conversation_id = $1", ""), &CLAIMED));

/// How many 0.2 seals `compile_turn` takes at a time: memory stays bounded by a batch (a
/// 0.2 seal is the whole request, up to megabytes), not by the conversation.
const BATCH: i64 = 100;

/// Converts up to `batch_size` 0.2 seals, of one conversation or of any, oldest first,
/// and returns how many: the work of one transaction of `CALL prompt.convert_seals_02()`.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _convert_seals_02(conversation_id: Option<pgrx::Uuid>, batch_size: default!(Option<i64>, 100)) -> i64 {
    let batch_size = match batch_size {
        Some(n) if n >= 1 => n,
        other => {
            pgrx::ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!(
                    "batch_size must be at least 1, not {}",
                    other.map_or("NULL".into(), |n| n.to_string())
                )
            );
        }
    };
    if !super::session::writable() {
        super::errors::raise(
            Error::new(
                Code::SealReadOnly,
                "converting 0.2 seals writes them, and this session cannot write",
            )
            .hint("Run CALL prompt.convert_seals_02() on the primary, outside a READ ONLY transaction."),
        );
    }
    convert_batch(conversation_id, batch_size)
}

fn convert_batch(conv: Option<pgrx::Uuid>, limit: i64) -> i64 {
    let query = if conv.is_some() { &*CLAIM_ONE } else { &*CLAIM_ANY };
    // SAFETY: asks for this transaction's id, assigning one if it has none (what pgrx's
    // own writes do first), so SPI runs the claiming DELETE as a write, not read-only.
    // Both callers checked `writable()` first: never on a standby, where it would raise.
    unsafe {
        pgrx::pg_sys::GetCurrentTransactionId();
    }
    let conv = conv.unwrap_or_else(|| pgrx::Uuid::from_bytes([0; 16]));
    // Taking a seal out of seals_02 is pgprompt's own write of seal storage (and what a
    // converted seal's write takes).
    let _open = super::guard::Open::hold_for(&[
        c"seals_02",
        c"conversations",
        c"turns",
        c"rounds",
        c"seals",
        c"seal_nodes",
    ]);
    // `run` raises on an SPI error: a batch is never mistaken for the last one.
    let rows = Spi::connect(|client| {
        run(client, query, &[conv.into(), limit.into()], |c| {
            OldSeal::read(c).map(Some)
        })
    })
    .or_raise();
    let done = rows.len() as i64;
    let seals: Vec<(OldSeal, serde_json::Value)> = rows
        .into_iter()
        .map(|old| {
            let request = old.request().or_raise();
            (old, request)
        })
        .collect();
    // The model rows the batch's seals name, read once, as every compile reads them.
    let mut names: Vec<String> = seals
        .iter()
        .filter_map(|(_, r)| pgprompt_core::model_of_seal_02(r))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    let models = Spi::connect(|client| super::load::models(client, &names))
        .map_err(|e| {
            e.detail("The model rows a batch of 0.2 seals (prompt.seals_02) names cannot be read; the batch stops.")
        })
        .or_raise();
    let mut memo = Memo::default();
    for (old, request) in seals {
        let model = pgprompt_core::model_of_seal_02(&request).and_then(|name| models.get(name).cloned());
        convert(old, &request, model, &mut memo);
    }
    done
}

/// When `compile_turn` or `record_response` meets a turn sealed by 0.2: converts its
/// conversation's 0.2 seals, oldest first, until none is left (only on that path: the
/// compiles of other turns never look).
pub(super) fn convert_conversation(conv: uuid::Uuid) {
    while convert_batch(Some(pg_uuid(conv)), BATCH) > 0 {}
}

/// A 0.2 seal as [`claim_sql`] reads it.
struct OldSeal {
    conv: uuid::Uuid,
    turn: uuid::Uuid,
    request: String,
    answerer: Option<uuid::Uuid>,
    had_prompt: bool,
    sealed_at: Option<pgrx::datum::TimestampWithTimeZone>,
}

impl OldSeal {
    /// The row of a 0.2 seal (a NULL where the tables allow none is `data_corrupted`
    /// naming the column; an unreadable request is refused, naming the seal).
    fn read(c: &super::spi::Cols<'_>) -> Result<OldSeal, Error> {
        Ok(OldSeal {
            conv: c.need_uuid("conversation_id")?,
            turn: c.need_uuid("id")?,
            request: c.need_text("request")?,
            answerer: c.uuid("answerer_id"),
            had_prompt: c.need::<bool>("had_prompt")?,
            sealed_at: c.get::<pgrx::datum::TimestampWithTimeZone>("sealed_at"),
        })
    }

    /// Its request (the whole 0.2 result), read once.
    fn request(&self) -> Result<serde_json::Value, Error> {
        serde_json::from_str(&self.request).map_err(|e| {
            self.refused(Error::new(
                Code::TurnNotCompilable,
                format!("a 0.2 seal cannot be converted: its request cannot be read ({e})"),
            ))
        })
    }

    /// A refusal of this seal, naming it.
    fn refused(&self, e: Error) -> Error {
        e.detail(format!(
            "The 0.2 seal of turn {} of conversation {} (prompt.seals_02) cannot be converted; the batch stops at it.",
            self.turn, self.conv
        ))
    }
}

/// Stores one 0.2 seal, whose request is `request`, as a 0.3 seal; `model` is the model
/// row it names, if it still exists.
fn convert(old: OldSeal, request: &serde_json::Value, model: Option<Model>, memo: &mut Memo) {
    let (body, draft) =
        pgprompt_core::convert_seal_02(request, model, old.answerer.unwrap_or_default(), old.had_prompt, memo)
            .map_err(|e| old.refused(e))
            .or_raise();
    Spi::connect_mut(|client| {
        seals::lock_storage(client, old.conv);
        seals::store(client, old.conv, old.turn, &body, &draft, old.sealed_at, memo)
    })
    .or_raise();
}
