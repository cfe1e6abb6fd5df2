//! Count bodies and counts (docs/guide.md, "Count bodies"): the body a provider's token-count
//! endpoint takes for the request `compile_turn` returns, and the count it answered,
//! recorded as calibration beside billed usage (`prompt.counts`, read by
//! `prompt.model_calibration` and so by `token_margin_auto`).

use pgrx::prelude::*;
use serde_json::json;

use super::api::explain_now;
use super::errors::{raise, OrRaise};
use super::jsonb::{JsonBody, JsonbOut};
use super::spi::{core_uuid, nullable, pg_uuid, run_write};
use pgprompt_core::{Code, Error};

/// The body a provider's token-count endpoint takes for the turn's request as
/// `compile_turn` returns it (sealed, with the rounds written since; or as it would seal).
#[pg_extern(stable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn count_body(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid) -> JsonBody {
    let out = explain_now(core_uuid(conversation_id), core_uuid(turn_id));
    let text = out.count_body().or_raise();
    JsonBody(pgprompt_core::Body {
        head: text,
        elements: Vec::new(),
        tail: String::new(),
    })
}

/// Records the input tokens a provider's count endpoint answered for the turn's request
/// as it stands (its newest round carried: `step`), beside the request's estimate; a
/// count of the same request again replaces it. Returns what was written.
#[pg_extern(volatile, strict, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn record_count(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid, input_tokens: i32) -> JsonbOut {
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    if input_tokens < 0 {
        raise(
            Error::new(
                Code::ResponseInvalid,
                format!("a count of {input_tokens} input tokens is no count"),
            )
            .hint("Pass input_tokens as the provider's count endpoint answered it."),
        );
    }
    // What the turn's compile stored of its next request; a compile only where nothing
    // stored says it (an unsealed turn, a round no request carried yet).
    let stored =
        Spi::connect(|client| super::responses::stored_request(client, conv, turn)).and_then(|s| s.next_request());
    let (step, estimated, model) = stored.unwrap_or_else(|| {
        let out = explain_now(conv, turn);
        let estimated = i32::try_from(out.explain.estimate.total).unwrap_or(i32::MAX);
        (out.last_round.unwrap_or(0), estimated, out.explain.model)
    });
    Spi::connect_mut(|client| {
        super::guard::refuse_foreign_code(&[c"counts"]);
        run_write(client, "INSERT INTO prompt.counts (conversation_id, turn_id, step, input_tokens, estimated_input_tokens, compiled_model) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (conversation_id, turn_id, step) DO UPDATE \
             SET input_tokens = EXCLUDED.input_tokens, estimated_input_tokens = EXCLUDED.estimated_input_tokens, \
                 compiled_model = EXCLUDED.compiled_model, counted_at = now()",
            &[
                pg_uuid(conv).into(),
                pg_uuid(turn).into(),
                step.into(),
                input_tokens.into(),
                estimated.into(),
                nullable(model.clone()),
            ],
        );
    });
    JsonbOut(json!({
        "turn_id": turn,
        "step": step,
        "input_tokens": input_tokens,
        "estimated_input_tokens": estimated,
        "model": model,
    }))
}
