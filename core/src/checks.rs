//! The write-time checks, one call per trigger of `sql/finalize.sql`: what a row must be
//! before it is written, and the refusal a write gets. The extension forwards the
//! trigger's columns as they are (NULL as `None`) and raises what comes back; the
//! defaults, the composition and the wording are the core's.

use uuid::Uuid;

use crate::error::{Code, Error, Result};
use crate::kinds::Wire;
use crate::options::{RequestOptions, Rules};
use crate::profile::Profile;
use crate::rounds::{self, RoundRow};
use crate::template::{self, Problem};
use crate::wire::options::parse_request_options;
use crate::{fields, history, macros, tokens};

/// A row as a write trigger hands it over: the columns its check reads, NULL as `None`.
/// Each variant is one trigger's check; [`check`] runs it.
#[derive(Debug, Clone, Copy)]
pub enum Write<'a> {
    /// A document (`prompt.documents`): within the text bound, its macros well formed (a
    /// document names no variables).
    Document {
        /// Its name, as refusals name it.
        name: &'a str,
        /// Its body.
        body: &'a str,
    },
    /// A user's `prompt_template` (JSON text): a template that parses, and one wherever
    /// the mechanism is `assembly`. The first problem is the refusal.
    Template {
        /// The user's handle, as refusals name it.
        handle: Option<&'a str>,
        /// `prompt_mechanism`.
        mechanism: Option<&'a str>,
        /// `prompt_template`.
        template: Option<&'a str>,
    },
    /// A turn's JSON columns, each parsed as a compile reads it.
    TurnColumns {
        /// `inline` (`[]` when NULL).
        inline: Option<&'a str>,
        /// `variables` (`{}` when NULL).
        variables: Option<&'a str>,
        /// `history`.
        history: Option<&'a str>,
        /// `input`.
        input: Option<&'a str>,
        /// `tools`.
        tools: Option<&'a str>,
        /// `callables` (`[]` when NULL).
        callables: Option<&'a str>,
        /// `request_options` (`{}` when NULL).
        request_options: Option<&'a str>,
    },
    /// A turn's shape: a reply needs its poster, a message its role, and a turn with
    /// rounds stays a run.
    TurnShape {
        /// The turn's id.
        id: Uuid,
        /// `kind`.
        kind: Option<&'a str>,
        /// `role`.
        role: Option<&'a str>,
        /// Whether `poster_id` is set.
        has_poster: bool,
        /// `mode` (`direct_reply` when NULL).
        mode: Option<&'a str>,
        /// Whether the write takes a turn that has rounds out of `run`.
        leaves_run_with_rounds: bool,
    },
    /// A row's `request_options` on their own: an object of known options, each well
    /// formed.
    RequestOptions {
        /// The table, as the refusal's detail names it (`request_options` when NULL).
        table: Option<&'a str>,
        /// `request_options` (`{}` when NULL).
        options: Option<&'a str>,
    },
    /// One level's request options against the wire, output limit and profile of the
    /// model it names.
    OptionsWire {
        /// `model`, `agent` or `turn` (another reads as `model`).
        level: Option<&'a str>,
        /// The level's `request_options` (`{}` when NULL).
        options: Option<&'a str>,
        /// The model's wire.
        wire: Option<&'a str>,
        /// The model's `max_output_tokens` (the default when NULL).
        max_output_tokens: Option<i32>,
        /// The model's name, as refusals name it (the profile's name when NULL).
        model: Option<&'a str>,
        /// Its profile's row as `row_to_json` spells it (empty or `null`: none).
        profile: Option<&'a str>,
        /// The model row's `provider` (NULL: its profile's where the wire speaks it, else
        /// the wire's maker).
        provider: Option<&'a str>,
        /// The model row's `native_images`.
        native_images: bool,
    },
    /// A round as it is written: its assistant parts, results and steers.
    Round {
        /// Its turn.
        turn: Uuid,
        /// Its number.
        n: i32,
        /// `assistant`.
        assistant: &'a str,
        /// `results`.
        results: &'a str,
        /// `steers`.
        steers: &'a str,
    },
    /// A workspace's time zone: one the server knows (`known`: `now() AT TIME ZONE` took
    /// it, as only the server can tell).
    Timezone {
        /// `timezone`.
        name: &'a str,
        /// Whether the server knows it.
        known: bool,
    },
    /// Where a round sits: on a run reply turn, numbered right after the round before it.
    RoundPlace {
        /// Its turn.
        turn: Uuid,
        /// Its number.
        n: i32,
        /// The turn's `kind`.
        kind: Option<&'a str>,
        /// The turn's `mode`.
        mode: Option<&'a str>,
        /// Whether round `n - 1` exists.
        previous_exists: bool,
    },
}

/// Runs a write trigger's check: `Err` is the refusal the write gets, and nothing of the
/// row is written.
pub fn check(row: Write<'_>) -> Result<()> {
    match row {
        Write::Document { name, body } => check_document(name, body),
        Write::Template {
            handle,
            mechanism,
            template,
        } => check_template(handle, mechanism, template),
        Write::TurnColumns {
            inline,
            variables,
            history,
            input,
            tools,
            callables,
            request_options,
        } => fields::check_turn(
            inline.unwrap_or("[]"),
            variables.unwrap_or("{}"),
            history,
            input,
            tools,
            callables.unwrap_or("[]"),
        )
        .and_then(|()| parse_request_options(request_options.unwrap_or("{}")).map(drop)),
        Write::TurnShape {
            id,
            kind,
            role,
            has_poster,
            mode,
            leaves_run_with_rounds,
        } => fields::check_shape(
            id,
            kind.unwrap_or(""),
            role,
            has_poster,
            mode.unwrap_or("direct_reply"),
            leaves_run_with_rounds,
        ),
        Write::RequestOptions { table, options } => check_request_options(table, options),
        Write::OptionsWire {
            level,
            options,
            wire,
            max_output_tokens,
            model,
            profile,
            provider,
            native_images,
        } => check_options_wire(
            level,
            options,
            wire,
            max_output_tokens,
            (model, profile),
            (provider, native_images),
        ),
        Write::Round {
            turn,
            n,
            assistant,
            results,
            steers,
        } => check_round(turn, n, assistant, results, steers),
        Write::RoundPlace {
            turn,
            n,
            kind,
            mode,
            previous_exists,
        } => rounds::check_place(turn, n, kind, mode, previous_exists),
        Write::Timezone { known: true, .. } => Ok(()),
        Write::Timezone { name, known: false } => Err(Error::new(
            Code::TimezoneInvalid,
            format!("time zone {} is not recognized", crate::error::quote(name)),
        )
        .hint("Use a name from pg_timezone_names, such as 'UTC' or 'Europe/Paris'.")),
    }
}

/// A document's body: within the text bound, its macros well formed (a document names
/// no variables).
fn check_document(name: &str, body: &str) -> Result<()> {
    let what = format!("document \"{name}\"");
    fields::check_size(body, &format!("the body of {what}"))?;
    macros::check(body, &|_| false, &what)
}

/// A user's `prompt_template`: a template that parses, and one wherever the mechanism is
/// `assembly`. The first problem is the refusal.
fn check_template(handle: Option<&str>, mechanism: Option<&str>, template: Option<&str>) -> Result<()> {
    let handle = handle.unwrap_or("");
    let Some(template) = template else {
        return match mechanism {
            Some("assembly") => Err(Error::new(
                Code::TemplateInvalid,
                format!("user @{handle} has prompt_mechanism 'assembly' and no prompt_template"),
            )
            .detail("path: ")
            .hint("Write the template and the mechanism in one statement.")),
            _ => Ok(()),
        };
    };
    match template::parse_text(template).1 {
        problems if problems.is_empty() => Ok(()),
        problems => Err(template::error(&problems, &format!("prompt_template of @{handle}"))),
    }
}

/// Every problem of a template, in order (`validate_template`): none for a valid one.
pub fn template_problems(template: &str) -> Vec<Problem> {
    template::parse_text(template).1
}

/// A row's `request_options` on their own (`table` names the column in the refusal's
/// detail): an object of known options, each well formed.
fn check_request_options(table: Option<&str>, options: Option<&str>) -> Result<()> {
    let table = table.unwrap_or("request_options");
    parse_request_options(options.unwrap_or("{}"))
        .map(drop)
        .map_err(|e| e.detail(format!("The value of {table}.request_options is not valid.")))
}

/// One level's request options (`model`, `agent` or `turn`; another reads as `model`)
/// against the wire, output limit and profile of the model it names, when the row is
/// written. `profile` is the profile's row as `row_to_json` spells it (empty or `null`:
/// none); `model` names the model in refusals (by default, the profile's name).
fn check_options_wire(
    level: Option<&str>,
    options: Option<&str>,
    wire: Option<&str>,
    max_output_tokens: Option<i32>,
    (model, profile): (Option<&str>, Option<&str>),
    (provider, native_images): (Option<&str>, bool),
) -> Result<()> {
    let level = level.unwrap_or("model");
    let own = parse_request_options(options.unwrap_or("{}"))
        .map_err(|e| e.detail(format!("The value of the {level}'s request_options is not valid.")))?;
    let wire = Wire::from_column("models.wire", wire.unwrap_or(""))?;
    let max_tokens = max_output_tokens.unwrap_or(crate::wire::DEFAULT_MAX_TOKENS);
    let profile = Profile::from_json(profile.unwrap_or(""))?;
    let none = RequestOptions::default();
    let levels = match level {
        "agent" => [("model", &none), ("agent", &own), ("turn", &none)],
        "turn" => [("model", &none), ("agent", &none), ("turn", &own)],
        _ => [("model", &own), ("agent", &none), ("turn", &none)],
    };
    let rules = profile.as_ref().map(|profile| Rules {
        model: model.unwrap_or(&profile.name),
        profile,
    });
    // A provider the library does not know is the column's CHECK to refuse (23514), after
    // this trigger: read here as none.
    let named = provider.and_then(crate::kinds::Provider::parse);
    let dialect = crate::wire::options::Dialect {
        provider: crate::wire::dialect_of(wire, named, profile.as_ref()),
        native_images,
    };
    crate::wire::options::resolve_options(levels, wire, max_tokens, rules, dialect).map(drop)
}

/// A round of turn `turn` as it is written: its assistant parts, results and steers.
fn check_round(turn: Uuid, n: i32, assistant: &str, results: &str, steers: &str) -> Result<()> {
    let row = RoundRow {
        n,
        assistant: assistant.into(),
        results: results.into(),
        steers: steers.into(),
        aborted: false,
    };
    rounds::parse(&row, Some(turn), crate::wire::replay::part).map(drop)
}

/// The stored token counts of a turn's text as history renders it bare (a summary turn's
/// content under its header), one slot per name of `tokenizers` (`None`: not a tokenizer
/// pgprompt counts with).
pub fn row_tokens(kind: Option<&str>, body: &str, tokenizers: &[String]) -> Vec<Option<i32>> {
    match kind {
        Some("summary") => tokens::row_counts(&format!("{}{body}", history::SUMMARY_HEADER), tokenizers),
        _ => tokens::row_counts(body, tokenizers),
    }
}

/// How many entries a reply turn makes when its own answerer reads it, from its shape
/// alone (`turns.own_entries`): what counting history sums instead of reading the text.
pub fn own_entries(summary: Option<&str>, summary_round: Option<i32>, content: Option<&str>, round_ns: &[i32]) -> i32 {
    let has = |s: Option<&str>| s.is_some_and(|s| !s.is_empty());
    let plan = history::own_plan(has(summary), summary_round, round_ns, has(content));
    i32::try_from(plan.len()).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trigger_gets_the_refusal_its_columns_earn() {
        let e = check_template(Some("ada"), Some("assembly"), None).unwrap_err();
        assert_eq!((e.code, e.detail.as_deref()), (Code::TemplateInvalid, Some("path: ")));
        assert_eq!(
            e.message,
            "template_invalid: user @ada has prompt_mechanism 'assembly' and no prompt_template"
        );
        assert!(check_template(Some("ada"), Some("direct"), None).is_ok());
        let e = check_template(None, None, Some(r#"{"blocks":[{"type":"nope"}]}"#)).unwrap_err();
        assert!(
            e.message.starts_with("template_invalid: prompt_template of @: "),
            "{}",
            e.message
        );

        let e = check_document("d", &"x".repeat(64 * 1024 + 1)).unwrap_err();
        assert_eq!(e.code, Code::DocumentTooLarge);
        assert!(
            e.message
                .starts_with("document_too_large: the body of document \"d\" is "),
            "{}",
            e.message
        );
        assert_eq!(
            check_document("d", "{{nope}}").unwrap_err().message,
            "prompt_document_macro_unknown: unknown macro {{nope}} in document \"d\""
        );

        let e = check_request_options(None, Some("[]")).unwrap_err();
        assert_eq!(
            e.detail.as_deref(),
            Some("The value of request_options.request_options is not valid.")
        );
        let e = check_options_wire(
            Some("agent"),
            Some("{"),
            Some("chat"),
            None,
            (None, None),
            (None, false),
        )
        .unwrap_err();
        assert_eq!(
            e.detail.as_deref(),
            Some("The value of the agent's request_options is not valid.")
        );
        assert_eq!(
            check_options_wire(None, None, Some("telegraph"), None, (None, None), (None, false))
                .unwrap_err()
                .code,
            Code::TurnNotCompilable
        );
        assert!(check_options_wire(None, None, Some("chat"), None, (None, Some("null")), (None, false)).is_ok());
    }

    #[test]
    fn each_trigger_reads_its_columns_with_their_defaults() {
        // A turn's NULL JSON columns read as empty ones.
        let turn = Write::TurnColumns {
            inline: None,
            variables: None,
            history: None,
            input: None,
            tools: None,
            callables: None,
            request_options: None,
        };
        assert!(check(turn).is_ok());
        // A turn with rounds leaving `run` by a NULL mode is named as a direct reply.
        let shape = Write::TurnShape {
            id: Uuid::nil(),
            kind: Some("reply"),
            role: None,
            has_poster: true,
            mode: None,
            leaves_run_with_rounds: true,
        };
        let e = check(shape).unwrap_err();
        assert!(e.message.contains("cannot become \"direct_reply\""), "{}", e.message);
        let e = check(Write::Document {
            name: "d",
            body: "{{nope}}",
        })
        .unwrap_err();
        assert!(e.message.ends_with("in document \"d\""), "{}", e.message);
        let e = check(Write::RoundPlace {
            turn: Uuid::nil(),
            n: 1,
            kind: Some("message"),
            mode: None,
            previous_exists: false,
        });
        assert_eq!(e.unwrap_err().code, Code::RoundInvalid);
        let round = Write::Round {
            turn: Uuid::nil(),
            n: 1,
            assistant: "[]",
            results: "[]",
            steers: "[]",
        };
        assert!(check(round).is_ok());
        let wire = Write::OptionsWire {
            level: Some("turn"),
            options: Some("[]"),
            wire: Some("chat"),
            max_output_tokens: None,
            model: None,
            profile: None,
            provider: None,
            native_images: false,
        };
        let e = check(wire).unwrap_err();
        assert_eq!(
            e.detail.as_deref(),
            Some("The value of the turn's request_options is not valid.")
        );
        let template = Write::Template {
            handle: Some("ada"),
            mechanism: Some("assembly"),
            template: None,
        };
        assert_eq!(check(template).unwrap_err().code, Code::TemplateInvalid);
        let e = check(Write::Timezone {
            name: "Mars/Olympus",
            known: false,
        })
        .unwrap_err();
        assert_eq!(
            e.message,
            "timezone_invalid: time zone \"Mars/Olympus\" is not recognized"
        );
        assert!(check(Write::Timezone {
            name: "UTC",
            known: true
        })
        .is_ok());
        let e = check(Write::RequestOptions {
            table: Some("models"),
            options: Some("1"),
        })
        .unwrap_err();
        assert_eq!(
            e.detail.as_deref(),
            Some("The value of models.request_options is not valid.")
        );
    }

    #[test]
    fn stored_counts_follow_what_history_renders() {
        let names = ["cl100k_base".to_string(), "nope".to_string()];
        let bare = row_tokens(Some("message"), "hello", &names);
        let summary = row_tokens(Some("summary"), "hello", &names);
        assert_eq!(bare[1], None);
        assert!(summary[0] > bare[0], "{summary:?} {bare:?}");
        assert_eq!(own_entries(None, None, Some("answer"), &[]), 2);
        assert_eq!(own_entries(None, None, None, &[1, 2]), 3);
        assert_eq!(own_entries(Some("s"), Some(2), None, &[1, 2]), 2);
    }
}
