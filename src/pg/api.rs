//! The SQL surface (SPEC §10). Each function loads rows, calls the core, maps errors.

use std::cell::RefCell;

use pgrx::prelude::*;
use uuid::Uuid;

use super::errors::{raise, OrRaise};
use super::jsonb::{self, Jsonb};
use super::load::{self, SpiHistory};
use pgprompt_core::compiler::Rendered;
use pgprompt_core::tokens::{Memo, Tokenizer};
use pgprompt_core::{self as compile, envelope, template, Output, Purpose};

thread_local! {
    /// Counts of texts that have no stored count, kept for the backend's life.
    static MEMO: RefCell<Memo> = RefCell::new(Memo::new());
}

/// Builds the encoders now: at `shared_preload_libraries` load, so every backend
/// inherits them instead of building its own on first use.
pub fn warm_tokenizers() {
    for t in Tokenizer::ALL {
        t.warm();
    }
}

fn core_uuid(u: pgrx::Uuid) -> Uuid {
    Uuid::from_bytes(*u.as_bytes())
}

#[pg_extern(immutable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn count_tokens(body: &str, tokenizer: default!(&str, "'cl100k_base'")) -> i32 {
    let t = Tokenizer::parse(tokenizer).or_raise();
    i32::try_from(t.count(body)).unwrap_or(i32::MAX)
}

#[pg_extern(immutable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn escape_envelope(body: &str) -> String {
    envelope::escape(body)
}

#[pg_extern(immutable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn unescape_envelope(body: &str) -> String {
    envelope::unescape(body)
}

#[pg_extern(immutable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn validate_template(
    template: jsonb::JsonbArg,
) -> TableIterator<'static, (name!(path, String), name!(code, String), name!(message, String))> {
    let (_, problems) = template::parse_text(&template.0);
    TableIterator::new(problems.into_iter().map(|p| (p.path, p.code.to_string(), p.message)))
}

/// Loads the turn's rows in one SPI connection (one snapshot) and compiles them.
fn compile_now(conv: Uuid, turn: Uuid, purpose: Purpose) -> Output {
    Spi::connect(|client| {
        let ctx = load::context(client, conv, turn).or_raise();
        let mut history = SpiHistory::new(client, &ctx);
        MEMO.with(|m| compile::compile(&ctx, &mut history, &mut m.borrow_mut(), purpose))
            .or_raise()
    })
}

/// A result as jsonb, in the caller's memory context.
fn as_jsonb(r: &Rendered) -> Jsonb {
    match r {
        Rendered::Doc(doc) => jsonb::to_jsonb(doc),
        Rendered::Stored(text) => jsonb::from_text(text),
    }
}

/// A sealed turn without rounds since: its stored result, untouched.
fn stored(conv: Uuid, turn: Uuid) -> Option<Jsonb> {
    Spi::connect(|client| load::stored_seal(client, conv, turn))
}

#[pg_extern(volatile, strict, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn compile_turn(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid) -> Jsonb {
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    if let Some(sealed) = stored(conv, turn) {
        return sealed;
    }
    let out = compile_now(conv, turn, Purpose::Compile);
    let result = as_jsonb(&out.result);
    let Some(seal) = &out.seal else { return result };
    if unsafe { pg_sys::RecoveryInProgress() || pg_sys::XactReadOnly } {
        raise(
            compile::Error::new(
                compile::Code::SealReadOnly,
                format!("turn {turn} is not sealed yet, and this session cannot write its seal"),
            )
            .detail("The first compile_turn of a turn stores what was sent; a hot standby or a READ ONLY transaction cannot.")
            .hint("Use prompt.preview_turn here, or compile on the primary in a read-write transaction."),
        );
    }
    let request = seal.request.as_ref().map_or(result, as_jsonb);
    if Spi::connect_mut(|client| load::seal(client, conv, turn, seal, request)) {
        return result;
    }
    // Another session sealed the turn first: its seal is the turn's.
    stored(conv, turn).unwrap_or_else(|| as_jsonb(&compile_now(conv, turn, Purpose::Compile).result))
}

#[pg_extern(stable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn preview_turn(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid) -> Jsonb {
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    stored(conv, turn).unwrap_or_else(|| as_jsonb(&compile_now(conv, turn, Purpose::Preview).result))
}

#[pg_extern(stable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
#[allow(clippy::type_complexity)]
fn estimate_turn(
    conversation_id: pgrx::Uuid,
    turn_id: pgrx::Uuid,
) -> TableIterator<
    'static,
    (
        name!(block, String),
        name!(role, Option<String>),
        name!(tokens, i32),
        name!(floor_unmet, bool),
        name!(selected, Option<i32>),
        name!(available, Option<i32>),
        name!(skipped_reason, Option<String>),
    ),
> {
    let e = compile_now(core_uuid(conversation_id), core_uuid(turn_id), Purpose::Estimate).estimate;
    let int = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    let rows: Vec<_> = e
        .blocks
        .iter()
        .map(|b| {
            let history = b.block == "history";
            (
                b.block.clone(),
                b.role.map(str::to_string),
                int(b.tokens),
                b.floor_unmet,
                history.then(|| int(e.history.selected)),
                history.then(|| int(e.history.available)),
                if history {
                    e.history.skipped_reason.clone()
                } else {
                    None
                },
            )
        })
        .collect();
    TableIterator::new(rows)
}

/// Raises the first problem of a write as the trigger's error.
pub(crate) fn refuse(e: compile::Error) -> ! {
    raise(e)
}
