//! The errors a user can cause, each with its SQLSTATE (README, "Errors").
//!
//! Every message starts with the error's name, then names the offending value;
//! `detail` and `hint` add what helps. The pg layer maps `sqlstate` to an ereport.

use std::fmt;

/// One kind of refusal. `name()` starts every message; `sqlstate()` is its code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// A document body, an inline entry or a variable value names a `{{word}}` outside the
    /// macro registry (or `{{history}}`).
    MacroUnknown,
    /// A `prompt_template` fails a rule (DETAIL: its JSON-pointer path), or an assembly
    /// answerer has none.
    TemplateInvalid,
    /// A document body, an inline entry or a `prompt_template` is over 64 KiB.
    DocumentTooLarge,
    /// The gate: the compiled request, tools included, exceeds the model's window.
    EstimatedInputExceedsModelLimit,
    /// A history budget asks for a `share` of the window, and the model has none.
    HistoryBudgetUnavailable,
    /// A system inline entry would land after the leading run of system items.
    InlineSystemOutsideLeadingRun,
    /// An inline entry's position names a lead or tail block the template does not have.
    InlinePositionUnavailable,
    /// The conversation does not exist or row-level security hides it.
    ConversationNotFound,
    /// The turn does not exist in the conversation, or is hidden (also a Side's captured turn).
    TurnNotFound,
    /// The turn is not a reply, is of another conversation or has no answerer, or a row
    /// holds a value this version does not know.
    TurnNotCompilable,
    /// A change to a sealed turn, to what it was compiled from or its seal storage, or to a
    /// sent round.
    SealedTurnImmutable,
    /// A turn's `inline` is not a list of valid entries (path in the message).
    InlineEntryInvalid,
    /// Malformed `variables`, `history`, `tools` or `callables`, an undeclared variable,
    /// or a `memory_user_id` that is not a Human.
    TurnFieldInvalid,
    /// Malformed raw `input` entries, or a raw turn without them.
    RawInputInvalid,
    /// A round whose JSON is not a valid round, of a turn that is not a run, or after a gap.
    RoundInvalid,
    /// A tokenizer other than cl100k_base and o200k_base.
    TokenizerUnknown,
    /// A workspace timezone PostgreSQL does not know.
    TimezoneInvalid,
    /// A seal must be written (a first `compile_turn`, converting 0.2 seals) and the session
    /// cannot write: a hot standby or a READ ONLY transaction.
    SealReadOnly,
    /// `compile_turn` of a sealed turn whose body `prune_seals` dropped.
    SealedRequestPruned,
    /// `record_response` of a body of no known shape, or one that does not fit the turn.
    ResponseInvalid,
    /// A reply without `poster_id`, a message without `role`, or a turn with rounds leaving `run`.
    TurnInvalid,
    /// `request_options` that are not a valid options object, or that the wire or the model's
    /// profile refuses (path in the message); also an unreadable profile row.
    RequestOptionsInvalid,
    /// A turn sealed by 0.2 whose seal `convert_seals_02` has not converted yet, met by a
    /// read-only function or in a session that cannot write.
    SealConversionPending,
    /// A sealed body does not match its digest, or its storage rows do not fit together.
    DataCorrupted,
    /// A text the compiler would build is over its bound (`bounds::MAX_TEXT`).
    TextTooLarge,
    /// A role an administrator has not named tried to rewrite sealed history.
    HistoryRewriteNotPermitted,
    /// A model row its profile does not serve (another wire, more output tokens).
    ModelInvalid,
    /// A compile for a model whose profile's `retires_at` has passed (the message names
    /// the replacement).
    ModelRetired,
    /// A confined role's delete whose foreign-key action would change a row another
    /// tenant reads.
    TenantWriteRefused,
    /// The library is newer than the extension's SQL in this database: `ALTER EXTENSION
    /// pgprompt UPDATE` has not run yet.
    ExtensionNotUpdated,
    /// `count_body` of a request whose wire has no token-count endpoint (chat), or that
    /// names no model.
    CountUnavailable,
    /// A write of pgprompt's while a trigger it did not create stands on a table it writes.
    ForeignCodeRefused,
    /// An `UPDATE` of a row's key (its id, `conversation_id`, `turn_id`, `seq`, a round's
    /// number, ...): identities never change.
    KeyImmutable,
    /// What only an administrator may do (turning tenancy on or off), by a role that is none.
    AdministratorRequired,
    /// A grant of `TRIGGER`, `TRUNCATE`, `REFERENCES` or `MAINTAIN` on a `prompt` table,
    /// which nobody but the tables' owner holds.
    PrivilegeRefused,
}

impl Code {
    /// The error's name: the text every message starts with (README, "Errors").
    pub(crate) fn name(self) -> &'static str {
        match self {
            Code::MacroUnknown => "prompt_document_macro_unknown",
            Code::TemplateInvalid => "template_invalid",
            Code::DocumentTooLarge => "document_too_large",
            Code::EstimatedInputExceedsModelLimit => "estimated_input_exceeds_model_limit",
            Code::HistoryBudgetUnavailable => "history_budget_unavailable",
            Code::InlineSystemOutsideLeadingRun => "inline_system_outside_leading_run",
            Code::InlinePositionUnavailable => "inline_position_unavailable",
            Code::ConversationNotFound => "conversation_not_found",
            Code::TurnNotFound => "turn_not_found",
            Code::TurnNotCompilable => "turn_not_compilable",
            Code::SealedTurnImmutable => "sealed_turn_immutable",
            Code::InlineEntryInvalid => "inline_entry_invalid",
            Code::TurnFieldInvalid => "turn_field_invalid",
            Code::RawInputInvalid => "raw_input_invalid",
            Code::RoundInvalid => "round_invalid",
            Code::TokenizerUnknown => "tokenizer_unknown",
            Code::TimezoneInvalid => "timezone_invalid",
            Code::SealReadOnly => "seal_read_only",
            Code::SealedRequestPruned => "sealed_request_pruned",
            Code::ResponseInvalid => "response_invalid",
            Code::TurnInvalid => "turn_invalid",
            Code::RequestOptionsInvalid => "request_options_invalid",
            Code::SealConversionPending => "seal_conversion_pending",
            Code::DataCorrupted => "data_corrupted",
            Code::TextTooLarge => "text_too_large",
            Code::HistoryRewriteNotPermitted => "history_rewrite_not_permitted",
            Code::ModelInvalid => "model_invalid",
            Code::ModelRetired => "model_retired",
            Code::TenantWriteRefused => "tenant_write_refused",
            Code::ExtensionNotUpdated => "extension_not_updated",
            Code::CountUnavailable => "count_unavailable",
            Code::ForeignCodeRefused => "foreign_code_refused",
            Code::KeyImmutable => "key_immutable",
            Code::AdministratorRequired => "administrator_required",
            Code::PrivilegeRefused => "privilege_refused",
        }
    }

    /// The five-character SQLSTATE the extension raises (README, "Errors"): exhaustive, so
    /// a new code cannot be added without deciding its state; never XX000.
    pub fn sqlstate(self) -> &'static str {
        match self {
            Code::DocumentTooLarge | Code::EstimatedInputExceedsModelLimit | Code::TextTooLarge => "54000",
            Code::DataCorrupted => "XX001",
            Code::HistoryRewriteNotPermitted
            | Code::TenantWriteRefused
            | Code::ForeignCodeRefused
            | Code::AdministratorRequired
            | Code::PrivilegeRefused => "42501",
            Code::ConversationNotFound | Code::TurnNotFound => "P0002",
            Code::TurnNotCompilable
            | Code::SealedTurnImmutable
            | Code::SealedRequestPruned
            | Code::SealConversionPending
            | Code::ExtensionNotUpdated => "55000",
            Code::SealReadOnly => "25006",
            Code::CountUnavailable => "0A000",
            Code::MacroUnknown
            | Code::TemplateInvalid
            | Code::HistoryBudgetUnavailable
            | Code::InlineSystemOutsideLeadingRun
            | Code::InlinePositionUnavailable
            | Code::InlineEntryInvalid
            | Code::TurnFieldInvalid
            | Code::RawInputInvalid
            | Code::RoundInvalid
            | Code::TokenizerUnknown
            | Code::TimezoneInvalid
            | Code::ResponseInvalid
            | Code::TurnInvalid
            | Code::RequestOptionsInvalid
            | Code::ModelInvalid
            | Code::ModelRetired
            | Code::KeyImmutable => "22023",
        }
    }

    /// Every code, for the README's error table and its test.
    #[cfg(test)]
    pub(crate) const ALL: [Code; 35] = [
        Code::MacroUnknown,
        Code::TemplateInvalid,
        Code::DocumentTooLarge,
        Code::EstimatedInputExceedsModelLimit,
        Code::HistoryBudgetUnavailable,
        Code::InlineSystemOutsideLeadingRun,
        Code::InlinePositionUnavailable,
        Code::ConversationNotFound,
        Code::TurnNotFound,
        Code::TurnNotCompilable,
        Code::SealedTurnImmutable,
        Code::InlineEntryInvalid,
        Code::TurnFieldInvalid,
        Code::RawInputInvalid,
        Code::RoundInvalid,
        Code::TokenizerUnknown,
        Code::TimezoneInvalid,
        Code::SealReadOnly,
        Code::SealedRequestPruned,
        Code::ResponseInvalid,
        Code::TurnInvalid,
        Code::RequestOptionsInvalid,
        Code::SealConversionPending,
        Code::DataCorrupted,
        Code::TextTooLarge,
        Code::HistoryRewriteNotPermitted,
        Code::ModelInvalid,
        Code::ModelRetired,
        Code::TenantWriteRefused,
        Code::ExtensionNotUpdated,
        Code::CountUnavailable,
        Code::ForeignCodeRefused,
        Code::KeyImmutable,
        Code::AdministratorRequired,
        Code::PrivilegeRefused,
    ];
}

/// A refusal: `message` already starts with `code.name()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The kind of refusal, which gives the SQLSTATE.
    pub code: Code,
    /// The name, then the offending value: the ereport's message.
    pub message: String,
    /// What helps understand it: the ereport's DETAIL.
    pub detail: Option<String>,
    /// What to do about it: the ereport's HINT.
    pub hint: Option<String>,
}

impl Error {
    /// `rest` follows the name: `Error::new(Code::TurnNotFound, "turn 1 ...")`
    /// has the message `turn_not_found: turn 1 ...`.
    pub fn new(code: Code, rest: impl AsRef<str>) -> Self {
        Error {
            code,
            message: format!("{}: {}", code.name(), rest.as_ref()),
            detail: None,
            hint: None,
        }
    }

    /// Sets the DETAIL.
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Sets the HINT.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// `conversation_not_found`: no such conversation, or one whose row (or workspace)
    /// row-level security hides from the caller (a compile's load, `transcript`).
    pub(crate) fn conversation_not_found(conv: uuid::Uuid) -> Self {
        Error::new(
            Code::ConversationNotFound,
            format!("conversation {conv} does not exist"),
        )
        .hint("The id may be wrong, or row-level security may hide the conversation from this role.")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(d) = &self.detail {
            write!(f, "\nDETAIL: {d}")?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\nHINT: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// A result whose error is a refusal.
pub type Result<T> = std::result::Result<T, Error>;

/// Shortens a value for quoting in a message.
pub(crate) fn quote(value: &str) -> String {
    const MAX: usize = 60;
    if value.chars().count() <= MAX {
        format!("\"{value}\"")
    } else {
        let cut: String = value.chars().take(MAX).collect();
        format!("\"{cut}…\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_starts_with_its_name() {
        for code in Code::ALL {
            let e = Error::new(code, "x");
            assert!(e.message.starts_with(code.name()));
            assert_eq!(e.message, format!("{}: x", code.name()));
            assert_eq!(code.sqlstate().len(), 5);
            assert_ne!(code.sqlstate(), "XX000");
            // PostgreSQL's states the README's table names (the extension packs the
            // spelling; a state PostgreSQL does not know would be raised as XX000).
            assert!(
                ["22023", "25006", "42501", "54000", "55000", "0A000", "P0002", "XX001"].contains(&code.sqlstate()),
                "{:?}: {}",
                code,
                code.sqlstate()
            );
        }
    }

    #[test]
    fn sqlstates_match_the_spec_table() {
        assert_eq!(Code::MacroUnknown.sqlstate(), "22023");
        assert_eq!(Code::TemplateInvalid.sqlstate(), "22023");
        assert_eq!(Code::DocumentTooLarge.sqlstate(), "54000");
        assert_eq!(Code::EstimatedInputExceedsModelLimit.sqlstate(), "54000");
        assert_eq!(Code::HistoryBudgetUnavailable.sqlstate(), "22023");
        assert_eq!(Code::InlineSystemOutsideLeadingRun.sqlstate(), "22023");
        assert_eq!(Code::InlinePositionUnavailable.sqlstate(), "22023");
        assert_eq!(Code::ConversationNotFound.sqlstate(), "P0002");
        assert_eq!(Code::TurnNotFound.sqlstate(), "P0002");
        assert_eq!(Code::TurnNotCompilable.sqlstate(), "55000");
        assert_eq!(Code::SealedTurnImmutable.sqlstate(), "55000");
    }

    #[test]
    fn quote_shortens_long_values() {
        assert_eq!(quote("abc"), "\"abc\"");
        let long = "x".repeat(100);
        assert_eq!(quote(&long).chars().count(), 63);
    }
}
