//! The write-time checks (SPEC §2), called by the triggers in `sql/finalize.sql`.
//! Each raises the first problem with its SQLSTATE; a refused write writes nothing.

use pgrx::prelude::*;

use super::errors::OrRaise;
use pgprompt_core::error::{Code, Error};
use pgprompt_core::tokens::{row_counts, Tokenizer};
use pgprompt_core::{compiler, fields, history, macros, rounds, template};

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_document(name: &str, body: &str) {
    fields::check_size(body, &format!("the body of document \"{name}\"")).or_raise();
    macros::check(body, &|_| false, &format!("document \"{name}\"")).or_raise();
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_template(handle: Option<&str>, mechanism: Option<&str>, template: Option<super::jsonb::JsonbArg>) {
    let handle = handle.unwrap_or("");
    let Some(template) = template else {
        if mechanism == Some("assembly") {
            Err::<(), _>(
                Error::new(
                    Code::TemplateInvalid,
                    format!("user @{handle} has prompt_mechanism 'assembly' and no prompt_template"),
                )
                .detail("path: ")
                .hint("Write the template and the mechanism in one statement."),
            )
            .or_raise();
        }
        return;
    };
    let (_, problems) = template::parse_text(&template.0);
    if !problems.is_empty() {
        Err::<(), _>(compiler::template_error(
            &problems,
            &format!("prompt_template of @{handle}"),
        ))
        .or_raise();
    }
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_turn(
    inline: Option<&str>,
    variables: Option<&str>,
    history: Option<&str>,
    input: Option<&str>,
    tools: Option<&str>,
    callables: Option<&str>,
) {
    fields::check_turn(
        inline.unwrap_or("[]"),
        variables.unwrap_or("{}"),
        history,
        input,
        tools,
        callables.unwrap_or("[]"),
    )
    .or_raise();
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_round(turn_id: pgrx::Uuid, n: i32, assistant: &str, results: &str, steers: &str) {
    let row = pgprompt_core::context::RoundRow {
        n,
        assistant: assistant.into(),
        results: results.into(),
        steers: steers.into(),
        aborted: false,
    };
    rounds::parse(&row, Some(uuid::Uuid::from_bytes(*turn_id.as_bytes()))).or_raise();
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
    let body = body?;
    let which: Vec<Tokenizer> = tokenizers
        .unwrap_or_default()
        .iter()
        .flatten()
        .filter_map(|t| Tokenizer::parse(t).ok())
        .collect();
    Some(if kind == Some("summary") {
        row_counts(&format!("{}{body}", history::SUMMARY_HEADER), &which)
    } else {
        row_counts(body, &which)
    })
}

/// The entry count of a reply turn read by its own answerer (`history::own_plan`).
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _own_entries(
    summary: Option<&str>,
    summary_round: Option<i32>,
    content: Option<&str>,
    round_ns: Option<Vec<Option<i32>>>,
) -> i32 {
    let has = |s: Option<&str>| s.is_some_and(|s| !s.is_empty());
    let ns: Vec<i32> = round_ns.unwrap_or_default().into_iter().flatten().collect();
    history::own_plan(has(summary), summary_round, &ns, has(content)).len() as i32
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _refuse_sealed_update(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid) {
    let turn = uuid::Uuid::from_bytes(*turn_id.as_bytes());
    let conv = uuid::Uuid::from_bytes(*conversation_id.as_bytes());
    super::api::refuse(
        Error::new(Code::SealedTurnImmutable, format!("turn {turn} of conversation {conv} is sealed"))
            .detail("sealed_at, sealed_request, sealed_preface, sealed_catalog, sealed_mechanism and sealed_versions never change once set.")
            .hint("A sealed turn is what was sent; post a new turn instead."),
    );
}

#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _refuse_timezone(timezone: &str) {
    super::api::refuse(
        Error::new(
            Code::TimezoneInvalid,
            format!("time zone {} is not recognized", pgprompt_core::error::quote(timezone)),
        )
        .hint("Use a name from pg_timezone_names, such as 'UTC' or 'Europe/Paris'."),
    );
}
