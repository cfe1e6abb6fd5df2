//! Maps the core's errors onto ereport: the SQLSTATE, the message, DETAIL and HINT.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

use pgprompt_core::{Code, Error};

/// The SQLSTATE of each error (README, "Errors"): exhaustive, so a new code cannot be
/// added without deciding its state.
pub fn sqlstate(code: Code) -> PgSqlErrorCode {
    use PgSqlErrorCode::*;
    match code {
        Code::DocumentTooLarge | Code::EstimatedInputExceedsModelLimit | Code::TextTooLarge => {
            ERRCODE_PROGRAM_LIMIT_EXCEEDED
        }
        Code::DataCorrupted => ERRCODE_DATA_CORRUPTED,
        Code::HistoryRewriteNotPermitted | Code::TenantWriteRefused => ERRCODE_INSUFFICIENT_PRIVILEGE,
        Code::ConversationNotFound | Code::TurnNotFound => ERRCODE_NO_DATA_FOUND,
        Code::TurnNotCompilable
        | Code::SealedTurnImmutable
        | Code::SealedRequestPruned
        | Code::SealConversionPending
        | Code::ExtensionNotUpdated => ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        Code::SealReadOnly => ERRCODE_READ_ONLY_SQL_TRANSACTION,
        Code::CountUnavailable => ERRCODE_FEATURE_NOT_SUPPORTED,
        Code::MacroUnknown
        | Code::TemplateInvalid
        | Code::HistoryBudgetUnavailable
        | Code::InlineSystemOutsideLeadingRun
        | Code::InlinePositionUnavailable
        | Code::InlineEntryInvalid
        | Code::TurnFieldInvalid
        | Code::TurnInvalid
        | Code::RawInputInvalid
        | Code::RoundInvalid
        | Code::RequestOptionsInvalid
        | Code::ModelInvalid
        | Code::ModelRetired
        | Code::TokenizerUnknown
        | Code::TimezoneInvalid
        | Code::ResponseInvalid => ERRCODE_INVALID_PARAMETER_VALUE,
    }
}

/// Raises `e` as a PostgreSQL ERROR. Never returns.
pub fn raise(e: Error) -> ! {
    let mut report = ErrorReport::new(sqlstate(e.code), e.message, "pgprompt");
    if let Some(d) = e.detail {
        report = report.set_detail(d);
    }
    if let Some(h) = e.hint {
        report = report.set_hint(h);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}

pub trait OrRaise<T> {
    fn or_raise(self) -> T;
}

impl<T> OrRaise<T> for Result<T, Error> {
    fn or_raise(self) -> T {
        match self {
            Ok(v) => v,
            Err(e) => raise(e),
        }
    }
}
