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

/// This database's pgprompt version as `pg_extension` records it (`None`: not installed),
/// read from the catalog by its name index as PostgreSQL's own extension code reads it:
/// no statement to parse and plan in a backend's first call (a statement of its own cost
/// 0.4 ms of planning there, bench/NOTES.md).
fn installed_version() -> Option<String> {
    // SAFETY: a catalog read in a transaction (every caller runs inside a function call):
    // pg_extension opened and closed with AccessShareLock, one scan key on its name index
    // (a `name` compared with F_NAMEEQ, as get_extension_oid does), the tuple read while
    // the scan holds it, its text copied out before the scan ends.
    unsafe {
        let rel = pg_sys::table_open(pg_sys::ExtensionRelationId, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        let mut key: pg_sys::ScanKeyData = std::mem::zeroed();
        pg_sys::ScanKeyInit(
            &mut key,
            pg_sys::Anum_pg_extension_extname as pg_sys::AttrNumber,
            pg_sys::BTEqualStrategyNumber as pg_sys::StrategyNumber,
            pg_sys::Oid::from(pg_sys::F_NAMEEQ),
            pg_sys::Datum::from(c"pgprompt".as_ptr()),
        );
        let scan = pg_sys::systable_beginscan(
            rel,
            pg_sys::Oid::from(pg_sys::ExtensionNameIndexId),
            true,
            std::ptr::null_mut(),
            1,
            &mut key,
        );
        let tuple = pg_sys::systable_getnext(scan);
        let version = if tuple.is_null() {
            None
        } else {
            let mut null = false;
            let datum = pg_sys::heap_getattr(
                tuple,
                pg_sys::Anum_pg_extension_extversion as i32,
                (*rel).rd_att,
                &mut null,
            );
            (!null).then(|| {
                let text = pg_sys::text_to_cstring(datum.cast_mut_ptr());
                std::ffi::CStr::from_ptr(text).to_string_lossy().into_owned()
            })
        };
        pg_sys::systable_endscan(scan);
        pg_sys::table_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        version
    }
}

/// Refuses to work while this database's extension is older (or newer) than the library
/// the server loaded — between installing a new library and `ALTER EXTENSION pgprompt
/// UPDATE`, the tables are not what this code reads. Checked once per backend.
pub(super) fn require_updated() {
    if UPDATED.with(std::cell::Cell::get) {
        return;
    }
    let installed = installed_version().unwrap_or_default();
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
