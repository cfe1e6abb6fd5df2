//! Settings (`pgprompt.*`): only what is operational. Nothing here changes what a
//! compile returns — output depends on rows alone (README, "Operate").

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

/// Entries the backend's token-count memo holds (across both generations and both
/// tokenizers) before its oldest generation goes.
pub static MEMO_CAPACITY: GucSetting<i32> = GucSetting::<i32>::new(200_000);

/// A compile taking longer than this (milliseconds) raises a WARNING; 0 is off.
pub static COMPILE_TIME_WARNING: GucSetting<i32> = GucSetting::<i32>::new(0);

pub fn register() {
    GucRegistry::define_int_guc(
        c"pgprompt.memo_capacity",
        c"Entries of the backend's token-count memo.",
        c"Counts of texts without a stored count are memoized per backend; past this many entries the older half goes (gradually, never all at once).",
        &MEMO_CAPACITY,
        2,
        50_000_000,
        // Memory a backend keeps: for the administrator to size, not every session.
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pgprompt.compile_time_warning",
        c"Warn when a compile takes longer than this.",
        c"compile_turn, preview_turn, explain_turn and estimate_turn raise a WARNING with the time taken past this threshold; 0 turns it off.",
        &COMPILE_TIME_WARNING,
        0,
        i32::MAX,
        GucContext::Userset,
        GucFlags::UNIT_MS,
    );
    GucRegistry::define_bool_guc(
        c"pgprompt.citus",
        c"This server is a node of a Citus cluster: run a compile's statements in the forms Citus plans well.",
        c"On (docs/scale-out.md): a compile reads its conversation, seal and turn one distributed table a statement, by the conversation's key (Citus's fast path, where the joined statement is planned again at every call), and plans every statement with its arguments (a kept plan makes Citus 13.2 keep a plan of its shard query at every execution: unbounded memory). Off, a single server keeps a sealed compile at 2 statements on kept plans. Either way a compile reads the same rows and returns the same bytes.",
        &super::citus::CITUS,
        // Which statements the server runs: the operator's, set in postgresql.conf.
        GucContext::Suset,
        GucFlags::default(),
    );
    // SAFETY: the check hook is a #[pg_guard] function of the GUC machinery's signature.
    unsafe {
        GucRegistry::define_bool_guc_with_hooks(
            c"pgprompt.allow_history_rewrite",
            c"Allow changing what a sealed turn was compiled from (a superuser, or a role granted SET on it).",
            c"Sealed turns, turns a later seal replayed and sent rounds refuse updates and deletes unless this is on (SET LOCAL, for one transaction). Only a superuser or a role an administrator named with GRANT SET ON PARAMETER pgprompt.allow_history_rewrite may turn it on.",
            &super::guard::ALLOW_HISTORY_REWRITE,
            GucContext::Userset,
            GucFlags::default(),
            Some(super::guard::check_rewrite),
            None,
            None,
        );
    }
}

/// The memo capacity setting, as a size.
pub fn memo_capacity() -> usize {
    usize::try_from(MEMO_CAPACITY.get()).unwrap_or(2)
}

/// The compile time warning threshold, if on.
pub fn compile_time_warning() -> Option<std::time::Duration> {
    let ms = COMPILE_TIME_WARNING.get();
    (ms > 0).then(|| std::time::Duration::from_millis(ms as u64))
}
