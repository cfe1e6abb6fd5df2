//! Maintenance the update scripts run: converting 0.2 seals (`turns.sealed_request`)
//! into 0.3 seals. Not part of the SQL surface: `ALTER EXTENSION pgprompt UPDATE`
//! creates the function, runs it and drops it.

use std::sync::LazyLock;

use pgrx::pg_sys::{BOOLOID, TEXTOID, TIMESTAMPTZOID, UUIDOID};
use pgrx::prelude::*;

use super::errors::OrRaise;
use super::seals;
use super::spi::{run, Query};
use pgprompt_core::rows::{Model, Wire};
use pgprompt_core::tokens::{Memo, Tokenizer};

static OLD_SEALS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "SELECT t.conversation_id, t.id, t.sealed_request::text, coalesce(t.answerer_id, c.answerer_id), \
         coalesce(t.prompt, '') <> '', t.sealed_at, row_to_json(m)::text \
         FROM prompt.turns t JOIN prompt.conversations c ON c.id = t.conversation_id \
         LEFT JOIN prompt.models m ON m.name = t.sealed_request->>'model' \
         WHERE t.sealed_request IS NOT NULL ORDER BY t.conversation_id, t.seq",
        &[UUIDOID, UUIDOID, TEXTOID, UUIDOID, BOOLOID, TIMESTAMPTZOID, TEXTOID],
    )
});

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

/// Converts every 0.2 seal, reporting progress every 500 turns. Returns how many.
#[pg_extern(sql = false)]
fn _convert_seals_02() -> i64 {
    let rows = Spi::connect(|client| {
        run(client, &OLD_SEALS, &[], |c| {
            Ok::<_, std::convert::Infallible>(Some((
                c.uuid(),
                c.uuid(),
                c.text_or("{}"),
                c.uuid(),
                c.bool(),
                c.next::<pgrx::datum::TimestampWithTimeZone>(),
                c.text(),
            )))
        })
        .unwrap_or_default()
    });
    let total = rows.len();
    let mut memo = Memo::new();
    for (i, (conv, turn, old, answerer, had_prompt, sealed_at, model)) in rows.into_iter().enumerate() {
        let (Some(conv), Some(turn)) = (conv, turn) else {
            continue;
        };
        let old: serde_json::Value = serde_json::from_str(&old).unwrap_or_default();
        let model = model.as_deref().and_then(model_of);
        let (body, frozen, _) =
            pgprompt_core::seal::convert_02(&old, model, answerer.unwrap_or_default(), had_prompt, &mut memo)
                .or_raise();
        let stored = seals::Stored {
            head: &body.head,
            elements: &body.elements,
            tail: &body.tail,
            patches: &[],
            text: &body.text(),
        };
        Spi::connect_mut(|client| seals::store(client, conv, turn, &stored, &frozen, sealed_at));
        if (i + 1) % 500 == 0 || i + 1 == total {
            pgrx::notice!("pgprompt: converted {} of {total} sealed turns", i + 1);
        }
    }
    i64::try_from(total).unwrap_or(i64::MAX)
}
