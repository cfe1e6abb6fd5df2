//! What a backend keeps for its sessions: the memo of token counts (scoped to the current
//! role, so no role reads another's counts), and whether the session can write.

use std::cell::RefCell;

use pgprompt_core::Memo;
use pgrx::pg_sys;

thread_local! {
    /// Counts of texts that have no stored count, kept for the backend's life.
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// Runs `f` with the backend's memo of counts, scoped to the current role.
pub(super) fn with_memo<T>(f: impl FnOnce(&mut Memo) -> T) -> T {
    MEMO.with(|m| {
        let mut memo = m.borrow_mut();
        memo.configure(role_scope(), super::settings::memo_capacity());
        f(&mut memo)
    })
}

/// The calling role's share of the memo: its entries, the capacity, its hits and misses.
pub(super) fn memo_stats() -> (usize, usize, (u64, u64)) {
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        m.configure(role_scope(), super::settings::memo_capacity());
        m.stats()
    })
}

/// The memo's scope (and what else a backend keeps for a role): the current role.
pub(super) fn role_scope() -> u32 {
    // SAFETY: a read of the backend's current user id, from its own thread.
    unsafe { pg_sys::GetUserId() }.to_u32()
}

/// Whether this session can write (not a hot standby, not a READ ONLY transaction).
pub(super) fn writable() -> bool {
    // SAFETY: reads of two backend-global flags, in a backend, on its own thread.
    !unsafe { pg_sys::RecoveryInProgress() || pg_sys::XactReadOnly }
}

thread_local! {
    /// This database's extension was found at the library's version (checked once).
    static UPDATED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Refuses to work while this database's extension is older (or newer) than the library
/// the server loaded — between installing a new library and `ALTER EXTENSION pgprompt
/// UPDATE`, the tables are not what this code reads. Checked once per backend: one query.
pub(super) fn require_updated() {
    if UPDATED.with(std::cell::Cell::get) {
        return;
    }
    let installed = super::spi::read_one::<String>(
        "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'pgprompt'",
        &[],
    )
    .unwrap_or_default();
    let library = env!("CARGO_PKG_VERSION");
    if installed == library {
        UPDATED.with(|u| u.set(true));
        return;
    }
    super::errors::raise(
        pgprompt_core::Error::new(
            pgprompt_core::Code::ExtensionNotUpdated,
            format!("the pgprompt library is {library} and this database's extension is {installed}"),
        )
        .detail("The server loaded a new library; the extension's tables and functions in this database are still the old version's.")
        .hint("Run ALTER EXTENSION pgprompt UPDATE in this database."),
    )
}
