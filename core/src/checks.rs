//! The write-time checks, one call per trigger of `sql/finalize.sql`: what a row must be
//! before it is written, and the refusal a write gets. The extension forwards the
//! trigger's columns as they are (NULL as `None`) and raises what comes back; the
//! defaults, the composition and the wording are the core's.

use uuid::Uuid;

use crate::error::{Code, Error, Result};
use crate::kinds::Wire;
use crate::options::{parse_request_options, RequestOptions, Rules};
use crate::profile::Profile;
use crate::rounds::{self, RoundRow};
use crate::template::{self, Problem};
use crate::{fields, history, macros, tokens};

/// A document's body: within the text bound, its macros well formed (a document names
/// no variables).
pub fn check_document(name: &str, body: &str) -> Result<()> {
    let what = format!("document \"{name}\"");
    fields::check_size(body, &format!("the body of {what}"))?;
    macros::check(body, &|_| false, &what)
}

/// A user's `prompt_template`: a template that parses, and one wherever the mechanism is
/// `assembly`. The first problem is the refusal.
pub fn check_template(handle: Option<&str>, mechanism: Option<&str>, template: Option<&str>) -> Result<()> {
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
        problems => Err(crate::compile::finish::template_error(
            &problems,
            &format!("prompt_template of @{handle}"),
        )),
    }
}

/// Every problem of a template, in order (`validate_template`): none for a valid one.
pub fn template_problems(template: &str) -> Vec<Problem> {
    template::parse_text(template).1
}

/// A row's `request_options` on their own (`table` names the column in the refusal's
/// detail): an object of known options, each well formed.
pub fn check_request_options(table: Option<&str>, options: Option<&str>) -> Result<()> {
    let table = table.unwrap_or("request_options");
    parse_request_options(options.unwrap_or("{}"))
        .map(drop)
        .map_err(|e| e.detail(format!("The value of {table}.request_options is not valid.")))
}

/// One level's request options (`model`, `agent` or `turn`; another reads as `model`)
/// against the wire, output limit and profile of the model it names, when the row is
/// written. `profile` is the profile's row as `row_to_json` spells it (empty or `null`:
/// none); `model` names the model in refusals (by default, the profile's name).
pub fn check_options_wire(
    level: Option<&str>,
    options: Option<&str>,
    wire: Option<&str>,
    max_output_tokens: Option<i32>,
    model: Option<&str>,
    profile: Option<&str>,
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
    crate::wire::options::resolve_options(levels, wire, max_tokens, rules).map(drop)
}

/// A round of turn `turn` as it is written: its assistant parts, results and steers.
pub fn check_round(turn: Uuid, n: i32, assistant: &str, results: &str, steers: &str) -> Result<()> {
    let row = RoundRow {
        n,
        assistant: assistant.into(),
        results: results.into(),
        steers: steers.into(),
        aborted: false,
    };
    rounds::parse(&row, Some(turn)).map(drop)
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
        let e = check_options_wire(Some("agent"), Some("{"), Some("chat"), None, None, None).unwrap_err();
        assert_eq!(
            e.detail.as_deref(),
            Some("The value of the agent's request_options is not valid.")
        );
        assert_eq!(
            check_options_wire(None, None, Some("telegraph"), None, None, None)
                .unwrap_err()
                .code,
            Code::TurnNotCompilable
        );
        assert!(check_options_wire(None, None, Some("chat"), None, None, Some("null")).is_ok());
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
