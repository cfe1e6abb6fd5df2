//! The rows more than one read takes, each query declared once with its columns by name
//! (the core reads them: `core/src/columns.rs`): a turn (the compiled one and history's), a
//! user, a model, a round.

use std::collections::HashMap;
use std::sync::LazyLock;

use pgrx::pg_sys::{BOOLOID, DATEOID, FLOAT4OID, INT4ARRAYOID, INT4OID, INT8OID, JSONBOID, TEXTOID, UUIDOID};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use crate::pg::spi::{pg_uuid, run, Column, Query};
use pgprompt_core::{Error, Result};
use pgprompt_core::{Model, User};

/// The turn columns `Turn::from_columns` takes, as the SQL names them, its creation day in the
/// time zone `tz`.
pub(crate) fn turn_columns(tz: &str) -> String {
    turn_select(&format!("(t.created_at AT TIME ZONE {tz})::date"))
}

/// The turn columns with `created_on` the SQL expression `day` (`NULL::date` where the
/// day is read later, with the workspace: `Turn::from_columns` undated).
pub(super) fn turn_select(day: &str) -> String {
    format!(
        "t.id, t.seq, t.kind, t.author_id, t.answerer_id, t.poster_id, t.content, t.prompt, t.origin, \
         t.sender_conversation_id, t.role, t.mode, t.inline, t.variables, t.input, t.tools, \
         t.callables, t.model, t.history, t.memory_user_id, t.summary, t.summary_round, \
         t.request_options, t.content_tokens, t.prompt_tokens, t.sealed_preface, \
         {day} AS created_on, t.sealed_at IS NOT NULL AS sealed"
    )
}

/// The columns of [`turn_columns`], declared by name beside the reader that takes them,
/// in the order `Turn::from_columns` reads them (a read in order is one comparison: see
/// `Cols::at`).
pub(crate) const TURN: [Column; 28] = [
    ("id", UUIDOID),
    ("seq", INT8OID),
    ("kind", TEXTOID),
    ("author_id", UUIDOID),
    ("answerer_id", UUIDOID),
    ("poster_id", UUIDOID),
    ("content", TEXTOID),
    ("prompt", TEXTOID),
    ("origin", TEXTOID),
    ("sender_conversation_id", UUIDOID),
    ("role", TEXTOID),
    ("mode", TEXTOID),
    ("inline", JSONBOID),
    ("variables", JSONBOID),
    ("input", JSONBOID),
    ("tools", JSONBOID),
    ("callables", JSONBOID),
    ("model", TEXTOID),
    ("history", JSONBOID),
    ("memory_user_id", UUIDOID),
    ("summary", TEXTOID),
    ("summary_round", INT4OID),
    ("request_options", JSONBOID),
    ("content_tokens", INT4ARRAYOID),
    ("prompt_tokens", INT4ARRAYOID),
    ("sealed_preface", JSONBOID),
    ("created_on", DATEOID),
    ("sealed", BOOLOID),
];

/// The user rows whose ids are the array `ids` (an SQL parameter), and their stewards.
pub(super) fn users_sql(ids: &str) -> String {
    format!(
        "SELECT id, handle, display_name, kind, steward_id, prompt_mechanism, prompt_template, \
         model, reasoning_replay, application, request_options FROM prompt.users \
         WHERE id = ANY({ids}) OR id IN (SELECT steward_id FROM prompt.users WHERE id = ANY({ids}))"
    )
}

/// The columns of [`users_sql`], read by `User::from_columns`.
pub(super) const USER: [Column; 11] = [
    ("id", UUIDOID),
    ("handle", TEXTOID),
    ("display_name", TEXTOID),
    ("kind", TEXTOID),
    ("steward_id", UUIDOID),
    ("prompt_mechanism", TEXTOID),
    ("prompt_template", JSONBOID),
    ("model", TEXTOID),
    ("reasoning_replay", BOOLOID),
    ("application", TEXTOID),
    ("request_options", JSONBOID),
];

static USERS: LazyLock<Query> = LazyLock::new(|| Query::new("a user row", users_sql("$1"), &USER));

pub(crate) fn load_users(client: &SpiClient<'_>, ids: &[Uuid]) -> Result<Vec<User>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<pgrx::Uuid> = ids.iter().copied().map(pg_uuid).collect();
    run(client, &USERS, &[ids.into()], |c| User::from_columns(c).map(Some))
}

/// The model rows `filter` (an SQL condition on `m`) keeps, each with its profile and
/// lifecycle. The calibration is read apart, for a model with token_margin_auto only
/// ([`with_calibration`]): it aggregates prompt.responses across conversations, which on
/// Citus is a distributed subplan, planned even where a CASE would skip it. Lifecycle is
/// the day's: the profile's dates against the transaction's date (a seal never freezes
/// it; the core reads no clock); a retirement no source gives retires nothing (a NOTICE). The profile's lookup, `prompt._model_profile_of`, is
/// inlined by the planner: no statement of its own.
pub(super) fn models_sql(filter: &str) -> String {
    format!(
        "SELECT m.name, m.wire, m.tokenizer, m.advisory_window, m.hard_window, m.native_images, \
         m.token_margin, m.token_margin_auto, \
         m.max_output_tokens, m.cache_ttl, m.history_cache_ttl, m.request_options, m.provider, p.profile, \
         coalesce((p.j ->> 'retires_at')::date <= current_date AND (p.j ->> 'lifecycle_source') IS NOT NULL, false) AS retired, \
         coalesce((p.j ->> 'deprecated_at')::date <= current_date, false) \
           OR (p.j ->> 'retires_at') IS NOT NULL AS deprecated \
         FROM prompt.models m LEFT JOIN LATERAL \
           (SELECT f.profile, f.profile::jsonb AS j FROM prompt._model_profile_of(m.name, m.profile) f OFFSET 0) p ON true \
         WHERE {filter}"
    )
}

/// The columns of [`models_sql`], read by `Model::from_columns`.
pub(super) const MODEL: [Column; 16] = [
    ("name", TEXTOID),
    ("wire", TEXTOID),
    ("tokenizer", TEXTOID),
    ("advisory_window", INT4OID),
    ("hard_window", INT4OID),
    ("native_images", BOOLOID),
    ("token_margin", FLOAT4OID),
    ("token_margin_auto", BOOLOID),
    ("max_output_tokens", INT4OID),
    ("cache_ttl", TEXTOID),
    ("history_cache_ttl", TEXTOID),
    ("request_options", JSONBOID),
    ("provider", TEXTOID),
    ("profile", TEXTOID),
    ("retired", BOOLOID),
    ("deprecated", BOOLOID),
];

static MODELS: LazyLock<Query> = LazyLock::new(|| Query::new("a model row", models_sql("m.name = ANY($1)"), &MODEL));

/// The model rows named `names`, by name (the 0.2 conversion of the model a 0.2 seal
/// names; a compile reads its models with its users, `super::context`).
pub(crate) fn models(client: &SpiClient<'_>, names: &[String]) -> Result<HashMap<String, Model>> {
    if names.is_empty() {
        return Ok(HashMap::new());
    }
    let models = run(client, &MODELS, &[names.to_vec().into()], |c| {
        Model::from_columns(c).map(Some)
    })?;
    with_calibration(client, models)
}

/// The models read, by name, each with token_margin_auto at least its calibration.
pub(super) fn with_calibration(client: &SpiClient<'_>, models: Vec<(Model, bool)>) -> Result<HashMap<String, Model>> {
    let mut out = HashMap::with_capacity(models.len());
    for (mut m, auto) in models {
        if auto {
            m.token_margin = m.token_margin.max(calibrated(client, &m.name)?);
        }
        out.insert(m.name.clone(), m);
    }
    Ok(out)
}

/// With token_margin_auto, a model's margin is at least its calibration's p95 of billed
/// over estimated input, less 1 (0 without responses); the seal freezes the model row
/// with the margin read here.
static CALIBRATION: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a model's calibration",
        "SELECT (c.p95_ratio - 1)::float4 AS margin FROM prompt.model_calibration c WHERE c.model = $1",
        &[("margin", FLOAT4OID)],
    )
});

fn calibrated(client: &SpiClient<'_>, model: &str) -> Result<f32> {
    let rows = run(client, &CALIBRATION, &[model.into()], |c| {
        Ok::<_, Error>(c.get::<f32>("margin"))
    })?;
    // The view keeps ratios from 0.1 to 10; the margin stays within what models.token_margin
    // may hold.
    Ok(rows.into_iter().next().unwrap_or(0.0).clamp(0.0, 10.0))
}

/// The columns `Round::from_columns` takes.
pub(super) const ROUND: [Column; 7] = [
    ("n", INT4OID),
    ("assistant", JSONBOID),
    ("results", JSONBOID),
    ("steers", JSONBOID),
    ("aborted", BOOLOID),
    ("cleared", JSONBOID),
    ("sent", BOOLOID),
];
