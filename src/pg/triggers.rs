//! The write-time checks (README, "A first compile, the minimum"), called by the triggers in
//! `sql/finalize.sql`. Each raises the first problem with its SQLSTATE; a refused write
//! writes nothing.

use pgrx::prelude::*;

use super::api::refuse;
use super::errors::OrRaise;
use super::jsonb::JsonbArg;
use super::spi::core_uuid;
use pgprompt_core::{check, Code, Error, Provider, Wire, Write};

/// Internal: whether `wire` names a wire of the core's (`Wire::ALL`, the one list): the
/// CHECK of `models.wire` and `responses.shape`. A new wire is its folder in the core,
/// never a list in the schema.
#[pg_extern(immutable, parallel_safe, strict)]
#[search_path(pg_catalog, pg_temp)]
fn _wire_known(wire: &str) -> bool {
    Wire::parse(wire).is_some()
}

/// Internal: whether every entry of `wires` names a wire of the core's (a NULL entry does
/// not): the CHECK of `model_profiles.wires`.
#[pg_extern(immutable, parallel_safe, strict)]
#[search_path(pg_catalog, pg_temp)]
fn _wires_known(wires: Vec<Option<String>>) -> bool {
    wires.iter().all(|w| w.as_deref().and_then(Wire::parse).is_some())
}

/// Internal: whether `provider` names a provider of the core's (`Provider`, the one
/// list): the CHECK of `model_profiles.provider`.
#[pg_extern(immutable, parallel_safe, strict)]
#[search_path(pg_catalog, pg_temp)]
fn _provider_known(provider: &str) -> bool {
    Provider::parse(provider).is_some()
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_document(name: &str, body: &str) {
    check(Write::Document { name, body }).or_raise();
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_template(handle: Option<&str>, mechanism: Option<&str>, template: Option<JsonbArg>) {
    check(Write::Template {
        handle,
        mechanism,
        template: template.as_ref().map(|t| t.0.as_str()),
    })
    .or_raise();
}

#[pg_extern(immutable, parallel_safe, name = "_check_turn")]
#[search_path(pg_catalog, pg_temp)]
fn _check_turn_v3(
    inline: Option<&str>,
    variables: Option<&str>,
    history: Option<&str>,
    input: Option<&str>,
    tools: Option<&str>,
    callables: Option<&str>,
    request_options: Option<&str>,
) {
    check(Write::TurnColumns {
        inline,
        variables,
        history,
        input,
        tools,
        callables,
        request_options,
    })
    .or_raise();
}

/// The six-column check the 0.1.0 and 0.2.0 triggers call (kept so their SQL runs
/// against this library until the extension is updated).
#[pg_extern(sql = false)]
fn _check_turn(
    inline: Option<&str>,
    variables: Option<&str>,
    history: Option<&str>,
    input: Option<&str>,
    tools: Option<&str>,
    callables: Option<&str>,
) {
    _check_turn_v3(inline, variables, history, input, tools, callables, None);
}

/// Kept for the 0.1.0 and 0.2.0 triggers: refuses an update of a sealed column.
#[pg_extern(sql = false)]
fn _refuse_sealed_update(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid) {
    _refuse_sealed(conversation_id, turn_id, "sealed_request", false);
}

/// A turn's shape: a reply needs its poster, a message its role, and a turn with rounds
/// stays a run.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_turn_shape(
    id: Option<pgrx::Uuid>,
    kind: Option<&str>,
    role: Option<&str>,
    poster_id: Option<pgrx::Uuid>,
    mode: Option<&str>,
    leaves_run_with_rounds: Option<bool>,
) {
    check(Write::TurnShape {
        id: id.map(core_uuid).unwrap_or_default(),
        kind,
        role,
        has_poster: poster_id.is_some(),
        mode,
        leaves_run_with_rounds: leaves_run_with_rounds.unwrap_or(false),
    })
    .or_raise();
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_request_options(table: Option<&str>, options: Option<&str>) {
    check(Write::RequestOptions { table, options }).or_raise();
}

/// One level's request options (`model`, `agent` or `turn`) against the wire, token
/// limit and profile of the model it names, when the row is written: a model's own, an
/// agent's with a model, a turn's with a model. The merged options meet their wire and
/// profile again when a turn compiles.
#[pg_extern(immutable, parallel_safe, name = "_check_options_wire")]
#[search_path(pg_catalog, pg_temp)]
fn _check_options_wire_v4(
    level: Option<&str>,
    options: Option<&str>,
    wire: Option<&str>,
    max_output_tokens: Option<i32>,
    model: Option<&str>,
    profile: Option<&str>,
) {
    _check_options_wire_v6(level, options, wire, max_output_tokens, model, profile, None, None);
}

/// [`_check_options_wire_v4`] with the dialect of the model's provider (`models.provider`,
/// NULL: its profile's, else the wire's maker) and its `native_images`: what 0.6's
/// triggers call.
#[pg_extern(immutable, parallel_safe, name = "_check_options_wire")]
#[search_path(pg_catalog, pg_temp)]
#[allow(clippy::too_many_arguments)]
fn _check_options_wire_v6(
    level: Option<&str>,
    options: Option<&str>,
    wire: Option<&str>,
    max_output_tokens: Option<i32>,
    model: Option<&str>,
    profile: Option<&str>,
    provider: Option<&str>,
    native_images: Option<bool>,
) {
    check(Write::OptionsWire {
        level,
        options,
        wire,
        max_output_tokens,
        model,
        profile,
        provider,
        native_images: native_images.unwrap_or(false),
    })
    .or_raise();
}

/// Whether `wire` has a dialect of `provider` (`Form::speaks`): the CHECK of
/// `models.provider`.
#[pg_extern(immutable, parallel_safe, strict)]
#[search_path(pg_catalog, pg_temp)]
fn _dialect_known(wire: &str, provider: &str) -> bool {
    Wire::parse(wire)
        .zip(Provider::parse(provider))
        .is_some_and(|(w, p)| pgprompt_core::speaks(w, p))
}

/// The four-argument check the 0.3.0 triggers call (kept so their SQL runs against this
/// library until the extension is updated): the wire's rules, no profile.
#[pg_extern(sql = false)]
fn _check_options_wire(level: Option<&str>, options: Option<&str>, wire: Option<&str>, max_output_tokens: Option<i32>) {
    _check_options_wire_v4(level, options, wire, max_output_tokens, None, None);
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_round(turn_id: pgrx::Uuid, n: i32, assistant: &str, results: &str, steers: &str) {
    check(Write::Round {
        turn: core_uuid(turn_id),
        n,
        assistant,
        results,
        steers,
    })
    .or_raise();
}

/// Where a round sits: on a run reply turn, after the round before it.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_round_place(
    turn_id: Option<pgrx::Uuid>,
    n: Option<i32>,
    kind: Option<&str>,
    mode: Option<&str>,
    previous_exists: Option<bool>,
) {
    check(Write::RoundPlace {
        turn: turn_id.map(core_uuid).unwrap_or_default(),
        n: n.unwrap_or(0),
        kind,
        mode,
        previous_exists: previous_exists.unwrap_or(false),
    })
    .or_raise();
}

/// The stored counts of a turn text as history renders it bare: a summary turn's
/// content with its header, anything else as written.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _row_tokens(
    kind: Option<&str>,
    body: Option<&str>,
    tokenizers: Option<Vec<Option<String>>>,
) -> Option<Vec<Option<i32>>> {
    let which: Vec<String> = tokenizers.unwrap_or_default().into_iter().flatten().collect();
    Some(pgprompt_core::row_tokens(kind, body?, &which))
}

/// The entry count of a reply turn read by its own answerer (the core's `own_entries`).
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _own_entries(
    summary: Option<&str>,
    summary_round: Option<i32>,
    content: Option<&str>,
    round_ns: Option<Vec<Option<i32>>>,
) -> i32 {
    let ns: Vec<i32> = round_ns.unwrap_or_default().into_iter().flatten().collect();
    pgprompt_core::own_entries(summary, summary_round, content, &ns)
}

/// Refuses a change to a sealed turn: `what` is the column, `delete`, `delete_replayed` or
/// `sent:<column>` (a column of a turn a later seal sent); `rewritable` says whether
/// `pgprompt.allow_history_rewrite` would allow it.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _refuse_sealed(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid, what: &str, rewritable: bool) {
    if rewritable {
        // The rewrite was asked for by a role that may not: that is the refusal.
        super::guard::raise_if_refused_attempt();
    }
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    let message = match what {
        "delete" => format!("turn {turn} of conversation {conv} is sealed and cannot be deleted"),
        "delete_replayed" => {
            format!("turn {turn} of conversation {conv} was replayed by a later sealed turn and cannot be deleted")
        }
        sent if sent.starts_with("sent:") => format!(
            "turn {turn} of conversation {conv} was sent by a later sealed turn: {} cannot change",
            &sent["sent:".len()..]
        ),
        column => format!("turn {turn} of conversation {conv} is sealed: {column} cannot change"),
    };
    let e = Error::new(Code::SealedTurnImmutable, message).detail(if what.starts_with("sent:") {
        "A later sealed turn sent this turn as it stood; later requests extend that byte for byte. Only what was not sent yet (an answer or an in-turn summary that came after) may be filled in."
    } else if rewritable {
        "A sealed turn is what was sent; later requests extend it byte for byte. Its answer (content) and an in-turn summary stay writable."
    } else {
        "The sealed columns (sealed_at, sealed_preface, sealed_catalog, sealed_mechanism, sealed_versions) never change once set."
    });
    refuse(if rewritable {
        e.hint("To erase or rewrite history on purpose: SET LOCAL pgprompt.allow_history_rewrite = on, as a role an administrator named (GRANT SET ON PARAMETER); later requests will no longer extend what was sent. Deleting the whole conversation needs no setting.")
    } else {
        e.hint("A sealed turn is what was sent; post a new turn instead.")
    });
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _refuse_sent_round(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid, n: i32, op: &str) {
    super::guard::raise_if_refused_attempt();
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    refuse(
        Error::new(
            Code::SealedTurnImmutable,
            format!("round {n} of turn {turn} of conversation {conv} was sent and cannot {}", if op == "delete" { "be deleted" } else { "change" }),
        )
        .detail("A round a continuation carried is part of what was sent; rounds of a sealed turn are append-only.")
        .hint("Write the next round instead, or SET LOCAL pgprompt.allow_history_rewrite = on (as a role an administrator named) to rewrite history on purpose."),
    );
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _refuse_timezone(timezone: &str) {
    check(Write::Timezone {
        name: timezone,
        known: false,
    })
    .or_raise();
}
