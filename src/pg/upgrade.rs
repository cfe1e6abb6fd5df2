//! Maintenance the update scripts run: converting 0.2 seals (`turns.sealed_request`)
//! into 0.3 seals. Not part of the SQL surface: `ALTER EXTENSION pgprompt UPDATE`
//! creates the function, runs it and drops it.

use std::sync::LazyLock;

use pgrx::pg_sys::{BOOLOID, INT8OID, TEXTOID, TIMESTAMPTZOID, UUIDOID};
use pgrx::prelude::*;

use super::errors::OrRaise;
use super::seals;
use super::spi::{pg_uuid, run, Query};
use pgprompt_core::rows::{Model, Wire};
use pgprompt_core::tokens::{Memo, Tokenizer};

/// The next batch of 0.2 seals after the turn at (conversation, seq), in order: a
/// conversation's seals in timeline order, so each shares the previous one's elements.
static OLD_SEALS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "SELECT t.conversation_id, t.id, t.seq, t.sealed_request::text, coalesce(t.answerer_id, c.answerer_id), \
         coalesce(t.prompt, '') <> '', t.sealed_at, row_to_json(m)::text \
         FROM prompt.turns t JOIN prompt.conversations c ON c.id = t.conversation_id \
         LEFT JOIN prompt.models m ON m.name = t.sealed_request->>'model' \
         WHERE t.sealed_request IS NOT NULL AND (t.conversation_id, t.seq) > ($1, $2) \
         ORDER BY t.conversation_id, t.seq LIMIT $3",
        &[
            UUIDOID,
            UUIDOID,
            INT8OID,
            TEXTOID,
            UUIDOID,
            BOOLOID,
            TIMESTAMPTZOID,
            TEXTOID,
        ],
    )
});

/// How many 0.2 seals are read at a time: memory stays bounded by a batch (a 0.2 seal is
/// the whole request, up to megabytes), not by the database.
const BATCH: i64 = 100;

/// A model row as `row_to_json` spells it (0.2 columns).
fn model_of(row: &str) -> Option<Model> {
    let v: serde_json::Value = serde_json::from_str(row).ok()?;
    let mut m = Model::new(v["name"].as_str()?, Wire::parse(v["wire"].as_str()?)?);
    m.tokenizer = Tokenizer::parse(v["tokenizer"].as_str().unwrap_or("cl100k_base")).ok()?;
    let int = |k: &str| v[k].as_i64().and_then(|n| i32::try_from(n).ok());
    m.advisory_window = int("advisory_window");
    m.hard_window = int("hard_window");
    m.native_images = v["native_images"].as_bool().unwrap_or(false);
    m.token_margin = v["token_margin"].as_f64().unwrap_or(0.0) as f32;
    m.max_output_tokens = int("max_output_tokens").unwrap_or(4096);
    Some(m)
}

/// Converts every 0.2 seal, in batches, reporting progress every 500 turns. Returns how
/// many. It runs inside `ALTER EXTENSION pgprompt UPDATE`: all or nothing (an interrupted
/// update leaves 0.2 as it was, and running it again starts over).
#[pg_extern(sql = false)]
fn _convert_seals_02() -> i64 {
    let total = Spi::get_one::<i64>("SELECT count(*) FROM prompt.turns WHERE sealed_request IS NOT NULL")
        .ok()
        .flatten()
        .unwrap_or(0);
    let mut memo = Memo::new();
    let mut after = (uuid::Uuid::nil(), i64::MIN);
    let mut done = 0i64;
    loop {
        // `run` raises on an SPI error: a batch is never mistaken for the last one.
        let rows = Spi::connect(|client| {
            run(
                client,
                &OLD_SEALS,
                &[pg_uuid(after.0).into(), after.1.into(), BATCH.into()],
                |c| Ok::<_, std::convert::Infallible>(Some(OldSeal::read(c))),
            )
        })
        .unwrap_or_else(|e| match e {});
        let Some(last) = rows.last() else {
            break;
        };
        after = (last.conv.unwrap_or_default(), last.seq);
        for old in rows {
            convert(old, &mut memo);
            done += 1;
            if done % 500 == 0 || done == total {
                pgrx::notice!("pgprompt: converted {done} of {total} sealed turns");
            }
        }
    }
    if done != total {
        // The update drops turns.sealed_request next: never with a seal left behind.
        pgrx::error!("pgprompt: converted {done} of {total} sealed turns; the update stops, nothing is changed");
    }
    done
}

/// A 0.2 seal as [`OLD_SEALS`] reads it.
struct OldSeal {
    conv: Option<uuid::Uuid>,
    turn: Option<uuid::Uuid>,
    seq: i64,
    request: String,
    answerer: Option<uuid::Uuid>,
    had_prompt: bool,
    sealed_at: Option<pgrx::datum::TimestampWithTimeZone>,
    model: Option<String>,
}

impl OldSeal {
    fn read(c: &mut super::spi::Cols<'_>) -> OldSeal {
        OldSeal {
            conv: c.uuid(),
            turn: c.uuid(),
            seq: c.next::<i64>().unwrap_or_default(),
            request: c.text_or("{}"),
            answerer: c.uuid(),
            had_prompt: c.bool(),
            sealed_at: c.next::<pgrx::datum::TimestampWithTimeZone>(),
            model: c.text(),
        }
    }
}

/// Stores one 0.2 seal as a 0.3 seal.
fn convert(old: OldSeal, memo: &mut Memo) {
    let (Some(conv), Some(turn)) = (old.conv, old.turn) else {
        return;
    };
    let request: serde_json::Value = serde_json::from_str(&old.request).unwrap_or_default();
    let model = old.model.as_deref().and_then(model_of);
    let (body, frozen, _) =
        pgprompt_core::seal::convert_02(&request, model, old.answerer.unwrap_or_default(), old.had_prompt, memo)
            .or_raise();
    let stored = seals::Stored {
        head: &body.head,
        elements: &body.elements,
        tail: &body.tail,
        patches: &[],
        text: &body.text(),
    };
    Spi::connect_mut(|client| seals::store(client, conv, turn, &stored, &frozen, old.sealed_at));
}
