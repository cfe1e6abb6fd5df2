//! The SQL surface (README, "SQL reference"). Each function loads rows, calls the core,
//! maps errors; sealing and seal reads are in [`super::seals`].

use pgrx::prelude::*;
use uuid::Uuid;

use super::errors::{raise, OrRaise};
use super::jsonb::{JsonArg, JsonBody, JsonbArg, JsonbDatum, JsonbOut};
use super::load::{self, SpiHistory};
use super::seals;
use super::session::{self, writable};
use super::spi::core_uuid;
use pgprompt_core::{self as compiler, Code, Error, Output, Purpose};

/// Builds the encoders now: at `shared_preload_libraries` load, so every backend
/// inherits them instead of building its own on first use.
pub fn warm_tokenizers() {
    pgprompt_core::warm_tokenizers();
}

#[pg_extern(immutable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn count_tokens(body: &str, tokenizer: default!(&str, "'cl100k_base'")) -> i32 {
    let n = pgprompt_core::count_tokens(body, tokenizer).or_raise();
    i32::try_from(n).unwrap_or(i32::MAX)
}

#[pg_extern(immutable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn escape_envelope(body: &str) -> String {
    compiler::escape_envelope(body)
}

#[pg_extern(immutable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn unescape_envelope(body: &str) -> String {
    compiler::unescape_envelope(body)
}

#[pg_extern(immutable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn validate_template(
    template: JsonbArg,
) -> TableIterator<'static, (name!(path, String), name!(code, String), name!(message, String))> {
    let problems = compiler::template_problems(&template.0);
    TableIterator::new(problems.into_iter().map(|p| (p.path, p.code.to_string(), p.message)))
}

/// The backend's token-count memo, as the calling role sees its share: its entries, the
/// capacity (pgprompt.memo_capacity, shared), its lookups answered from the memo and its
/// lookups that counted.
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn memo_stats() -> TableIterator<
    'static,
    (
        name!(entries, i64),
        name!(capacity, i64),
        name!(hits, i64),
        name!(misses, i64),
    ),
> {
    let (entries, capacity, (hits, misses)) = session::memo_stats();
    let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    TableIterator::once((n(entries as u64), n(capacity as u64), n(hits), n(misses)))
}

/// A body (or any JSON) indented for reading, its keys in their order: what `jsonb_pretty`
/// would reorder.
#[pg_extern(immutable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn pretty(body: JsonArg) -> String {
    pgprompt_core::pretty(&body.0).or_raise()
}

/// What a compile produced: a sealed turn's stored body as it is, or a compile's output;
/// or the turn's seal is a 0.2 seal not converted yet (which `compile_turn` converts).
enum Compiled {
    Stored(pgprompt_core::Body),
    /// A compile's output, with what it read of history that no seal marked sent yet (empty
    /// unless it compiled to seal).
    Output(Box<Output>, seals::Unsent),
    Pending(Error),
}

impl Compiled {
    fn body(self) -> pgprompt_core::Body {
        match self {
            Compiled::Stored(body) => body,
            Compiled::Output(out, _) => out.body,
            Compiled::Pending(e) => raise(e),
        }
    }
}

/// Loads the turn's rows in one SPI connection (one snapshot) and compiles them; a
/// sealed turn with nothing to add is its stored body, unless `purpose` explains.
fn compile_now(conv: Uuid, turn: Uuid, purpose: Purpose) -> Compiled {
    let started = std::time::Instant::now();
    let compiled = compile_in_snapshot(conv, turn, purpose);
    if let Some(limit) = super::settings::compile_time_warning() {
        let took = started.elapsed();
        if took > limit {
            pgrx::warning!(
                "pgprompt: compiling turn {turn} took {:.1} ms (pgprompt.compile_time_warning = {} ms)",
                took.as_secs_f64() * 1000.0,
                limit.as_millis()
            );
        }
    }
    compiled
}

fn compile_in_snapshot(conv: Uuid, turn: Uuid, purpose: Purpose) -> Compiled {
    session::require_updated();
    Spi::connect(|client| {
        let read = if purpose == Purpose::Estimate {
            load::Read::Explain
        } else {
            load::Read::Body
        };
        let ctx = match load::context(client, conv, turn, read) {
            Ok(load::Loaded::Stored(body)) => return Compiled::Stored(body),
            Ok(load::Loaded::Context(ctx)) => ctx,
            Err(e) if e.code == Code::SealConversionPending => return Compiled::Pending(e),
            Err(e) => raise(e),
        };
        // A compile that seals reads, with the history it renders, what no seal marked
        // sent yet and how it reads now: the seal marks those sent where they still read so.
        let (out, unsent) = session::with_memo(|memo| {
            let mut history = match purpose == Purpose::Compile && writable() {
                true => SpiHistory::marking(client, &ctx),
                false => SpiHistory::new(client, &ctx),
            };
            let out = compiler::compile(&ctx, &mut history, memo, purpose);
            out.map(|out| (out, history.unsent()))
        })
        .or_raise();
        if let Some(notice) = &out.notice {
            pgrx::notice!("{notice}");
        }
        Compiled::Output(Box::new(out), unsent)
    })
}

/// Compiles; when the turn was sealed by 0.2 and its seal waits in `seals_02`, a session
/// that can write converts the conversation's 0.2 seals first (`compile_turn` and
/// `record_response` do; the read-only functions refuse such a turn instead).
fn compile_converting(conv: Uuid, turn: Uuid, purpose: Purpose) -> Compiled {
    match compile_now(conv, turn, purpose) {
        Compiled::Pending(_) if writable() => {
            super::upgrade::convert_conversation(conv);
            compile_now(conv, turn, purpose)
        }
        compiled => compiled,
    }
}

/// `explain_now` for a writer: a turn sealed by 0.2 is converted first.
pub(super) fn explain_converting(conv: Uuid, turn: Uuid) -> Output {
    explained(compile_converting(conv, turn, Purpose::Estimate))
}

/// What `explain_turn` and `estimate_turn` read: always a compile's output.
pub(super) fn explain_now(conv: Uuid, turn: Uuid) -> Output {
    explained(compile_now(conv, turn, Purpose::Estimate))
}

/// The output of an estimate's compile (a turn whose 0.2 seal waits is refused).
fn explained(compiled: Compiled) -> Output {
    match compiled {
        Compiled::Output(out, _) => *out,
        Compiled::Pending(e) => raise(e),
        Compiled::Stored(_) => unreachable!("an estimate always compiles"),
    }
}

#[pg_extern(volatile, strict, parallel_unsafe, name = "compile_turn")]
#[search_path(pg_catalog, pg_temp)]
fn compile_turn_json(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid) -> JsonBody {
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    let (out, unsent) = match compile_converting(conv, turn, Purpose::Compile) {
        Compiled::Stored(body) => return JsonBody(body),
        Compiled::Output(out, unsent) => (out, unsent),
        Compiled::Pending(e) => raise(e),
    };
    if out.seal.is_some() {
        if !writable() {
            raise(
                Error::new(
                    Code::SealReadOnly,
                    format!("turn {turn} is not sealed yet, and this session cannot write its seal"),
                )
                .detail("The first compile_turn of a turn stores what was sent; a hot standby or a READ ONLY transaction cannot.")
                .hint("Use prompt.preview_turn here, or compile on the primary in a read-write transaction."),
            );
        }
        if !Spi::connect_mut(|client| seals::write(client, conv, turn, &out, &unsent)).or_raise() {
            // Another session sealed the turn first: its seal is the turn's.
            return JsonBody(compile_now(conv, turn, Purpose::Compile).body());
        }
    }
    if out.cleared.is_some() && !writable() {
        // A clearing step is stored with the round it first carries, or not taken: a
        // request that cleared what no record keeps would have its results sent whole again.
        raise(
            Error::new(
                Code::SealReadOnly,
                format!("turn {turn}'s next request clears tool results, and this session cannot store that"),
            )
            .detail("compile_turn stores a clearing step with the newest round it sends; a hot standby or a READ ONLY transaction cannot.")
            .hint("Use prompt.preview_turn here, or compile on the primary in a read-write transaction."),
        );
    }
    if let (Some(n), true) = (out.last_round, writable()) {
        let estimate = i32::try_from(out.explain.estimate.total).unwrap_or(i32::MAX);
        let lay = |previous: Option<&[u8]>| session::with_memo(|memo| out.continuation_layout(previous, memo));
        Spi::connect_mut(|client| seals::mark_sent(client, conv, turn, (n, estimate), out.cleared.as_ref(), lay));
    }
    JsonBody(out.body)
}

#[pg_extern(stable, strict, parallel_safe, name = "preview_turn")]
#[search_path(pg_catalog, pg_temp)]
fn preview_turn_json(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid) -> JsonBody {
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    JsonBody(compile_now(conv, turn, Purpose::Preview).body())
}

/// The body a turn's seal stored (without the rounds written since): what its first
/// compile sent. NULL for a turn that is not sealed.
#[pg_extern(stable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn sealed_body(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid) -> Option<JsonBody> {
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    session::require_updated();
    Spi::connect(|client| seals::sealed_body(client, conv, turn))
        .or_raise()
        .map(JsonBody)
}

#[pg_extern(stable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn explain_turn(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid) -> JsonbDatum {
    let out = explain_now(core_uuid(conversation_id), core_uuid(turn_id));
    let explained = Explained {
        explain: &out.explain,
        // What the provider's cache should do with this request, sent now.
        cache: super::cache::predict(&out),
        documents: documents_compiled(&out, conversation_id, turn_id),
    };
    JsonbDatum(super::jsonb_ser::to_jsonb(&explained))
}

/// `explain_turn`'s document: the compile's explanation, its cache prediction (none for a
/// body not kept) and the document versions it read.
#[derive(serde::Serialize)]
struct Explained<'o, E: serde::Serialize> {
    #[serde(flatten)]
    explain: &'o E,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache: Option<serde_json::Value>,
    documents: serde_json::Value,
}

/// The document versions each slot and document block compiled from (`explain_turn`'s
/// `documents`: `[{"block", "document_id", "version"}]`, their text in
/// `prompt.document_versions`): a sealed turn's as its seal recorded them
/// (`turns.sealed_versions`), an unsealed turn's as it would compile now.
fn documents_compiled(out: &Output, conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid) -> serde_json::Value {
    let slots = |versions: &serde_json::Value| versions.get("slots").cloned().unwrap_or_else(|| serde_json::json!([]));
    match &out.seal {
        Some(draft) => slots(&serde_json::from_str(&draft.versions).unwrap_or_default()),
        None => {
            let stored = super::spi::read_one::<String>(
                "SELECT sealed_versions::text FROM prompt.turns WHERE conversation_id = $1 AND id = $2",
                &[conversation_id.into(), turn_id.into()],
            );
            slots(&stored.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default())
        }
    }
}

/// The complete effective skill set of a turn's callables (seed 003's skill_view): what
/// its catalog lists, then the recall-only skills, each with its callable and source,
/// as the skills stand now.
#[pg_extern(stable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
#[allow(clippy::type_complexity)]
fn skills_for_turn(
    conversation_id: pgrx::Uuid,
    turn_id: pgrx::Uuid,
) -> TableIterator<
    'static,
    (
        name!(callable, String),
        name!(source, String),
        name!(name, String),
        name!(description, String),
        name!(recall_only, bool),
    ),
> {
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    session::require_updated();
    let ctx = match Spi::connect(|client| load::context(client, conv, turn, load::Read::Skills)).or_raise() {
        load::Loaded::Context(ctx) => ctx,
        load::Loaded::Stored(_) => unreachable!("a skills read never takes the stored body"),
    };
    let rows: Vec<_> = compiler::skills_for_turn(&ctx)
        .or_raise()
        .into_iter()
        .map(|s| (s.callable, s.source, s.name, s.description, s.recall_only))
        .collect();
    TableIterator::new(rows)
}

/// The tool-search backend of a turn's deferred callables and tools: what matches
/// `query` (every whitespace-separated term, case-insensitively) among the catalog lines
/// and tool definitions the turn deferred, as its seal froze them (an unsealed turn: as
/// it would compile now).
#[pg_extern(stable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn search_deferred(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid, query: default!(&str, "''")) -> JsonbOut {
    let out = explain_now(core_uuid(conversation_id), core_uuid(turn_id));
    JsonbOut(out.explain.search_deferred(query))
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
    let out = explain_now(core_uuid(conversation_id), core_uuid(turn_id));
    let e = &out.explain.estimate;
    let int = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    let rows: Vec<_> = e
        .blocks
        .iter()
        .map(|b| {
            let history = b.block == "history";
            (
                b.block.clone(),
                b.role.map(|r| r.as_str().to_string()),
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
        // Each tool result the request sends cleared (request_options.clear_tool_results):
        // the tokens it would have cost, its round in `selected`, its call and tool.
        .chain(e.cleared.iter().map(|c| {
            (
                "cleared_tool_result".to_string(),
                None,
                int(c.tokens),
                false,
                Some(c.round),
                None,
                Some(match c.turn_id {
                    None => format!("call {} of tool {} cleared", c.call_id, c.tool),
                    Some(t) => format!("call {} of tool {} cleared, in turn {t}", c.call_id, c.tool),
                }),
            )
        }))
        .collect();
    TableIterator::new(rows)
}

#[pg_extern(volatile, strict, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn prune_seals(conversation_id: pgrx::Uuid, before: pgrx::datum::TimestampWithTimeZone) -> i64 {
    let conv = core_uuid(conversation_id);
    session::require_updated();
    Spi::connect_mut(|client| seals::prune(client, conv, before.into())).or_raise()
}

/// Every seal (of one conversation, or of every conversation the caller can see) whose
/// bytes do not read back as they were sealed, with what is wrong: for an auditor.
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn verify_seals(
    conversation_id: default!(Option<pgrx::Uuid>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(conversation_id, pgrx::Uuid),
        name!(turn_id, pgrx::Uuid),
        name!(problem, String),
    ),
> {
    let conv = conversation_id.map(core_uuid);
    session::require_updated();
    let problems = Spi::connect(|client| seals::verify(client, conv)).or_raise();
    TableIterator::new(
        problems
            .into_iter()
            .map(|(c, t, why)| (super::spi::pg_uuid(c), super::spi::pg_uuid(t), why)),
    )
}

/// The entry points older releases' SQL binds (`compile_turn` and `preview_turn` returned
/// jsonb before 0.3.0): with this library installed and the extension not yet updated,
/// they say so instead of returning a body the old declaration would misread.
fn not_updated() -> ! {
    raise(
        Error::new(
            Code::TurnNotCompilable,
            format!(
                "the pgprompt library is {} and this database's extension is older than 0.3.0",
                env!("CARGO_PKG_VERSION")
            ),
        )
        .hint("Run ALTER EXTENSION pgprompt UPDATE in this database."),
    )
}

#[pg_extern(sql = false)]
fn compile_turn(_conversation_id: pgrx::Uuid, _turn_id: pgrx::Uuid) -> bool {
    not_updated()
}

#[pg_extern(sql = false)]
fn preview_turn(_conversation_id: pgrx::Uuid, _turn_id: pgrx::Uuid) -> bool {
    not_updated()
}

/// Raises the first problem of a write as the trigger's error.
pub(crate) fn refuse(e: Error) -> ! {
    raise(e)
}
