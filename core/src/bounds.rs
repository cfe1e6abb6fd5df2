//! Bounded work (docs/design.md, "Bounded work"): every text the compiler builds is
//! measured against [`MAX_TEXT`] before it is allocated, and long loops ask the host
//! whether the statement was cancelled.
//!
//! The core knows nothing of PostgreSQL: the extension installs its interrupt check
//! (`CHECK_FOR_INTERRUPTS`, which raises `57014` on a cancel or a `statement_timeout`)
//! with [`set_interrupt_check`]; without one, [`interrupt`] does nothing.

use std::sync::OnceLock;

use crate::error::{Code, Error, Result};

/// The largest text the compiler builds: a body, a pretty print, a rendered macro or
/// variable, a transcript, an envelope. PostgreSQL's own limit for a value is 1 GB; this
/// one is lower so that the copies a result takes on its way out stay well inside a
/// backend's memory.
pub(crate) const MAX_TEXT: usize = 256 * 1024 * 1024;

/// Refuses a text of `len` bytes before it is built: `text_too_large` (54000) naming
/// `what`.
pub(crate) fn check(len: usize, what: &str) -> Result<()> {
    if len <= MAX_TEXT {
        return Ok(());
    }
    Err(too_large(len, what))
}

/// The refusal of a text of `len` bytes (at least: a measure may stop once over).
pub(crate) fn too_large(len: usize, what: &str) -> Error {
    Error::new(
        Code::TextTooLarge,
        format!("{what} would be {len} bytes or more, over the bound of {MAX_TEXT} bytes"),
    )
    .detail("pgprompt measures every text it builds before building it (README, \"Security\").")
    .hint("Shorten the row that grew it: a long value substituted many times, or a history a model without a window funds in full.")
}

static INTERRUPT: OnceLock<fn()> = OnceLock::new();

/// Installs the host's interrupt check (once; later calls change nothing).
pub fn set_interrupt_check(check: fn()) {
    let _ = INTERRUPT.set(check);
}

/// Gives the host a chance to cancel the work (a long loop calls this every so often).
pub(crate) fn interrupt() {
    if let Some(check) = INTERRUPT.get() {
        check();
    }
}

/// Work done between two interrupt checks, in bytes of text handled.
pub(crate) const INTERRUPT_EVERY: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_inclusive_and_names_what_grew() {
        assert!(check(MAX_TEXT, "x").is_ok());
        let e = check(MAX_TEXT + 1, "the pretty print").unwrap_err();
        assert_eq!(e.code, Code::TextTooLarge);
        assert!(
            e.message.starts_with("text_too_large: the pretty print would be"),
            "{}",
            e.message
        );
    }
}
