//! What keeps sealed history as it was sent (README, "Security"): who may rewrite it,
//! and the guard on seal storage.
//!
//! - **Rewriting sealed history is a privilege.** `pgprompt.allow_history_rewrite` turns
//!   on only for a superuser or a role an administrator granted it to
//!   (`GRANT SET ON PARAMETER pgprompt.allow_history_rewrite TO role`, PostgreSQL's own
//!   per-setting privilege): the setting's check refuses anyone else when it is set, and
//!   [`rewrite_allowed`] again when a trigger relies on it.
//! - **Seal storage changes only through pgprompt.** `prompt.seals`, `prompt.seal_nodes`
//!   and `prompt.seals_02` refuse `UPDATE`, `DELETE` and `TRUNCATE` unless pgprompt's own
//!   writer holds them open ([`Open`]: sealing, `prune_seals`, the 0.2 conversion) or the
//!   delete is a foreign-key cascade (deleting a conversation, or a turn its own trigger
//!   let go).
//! - **The guards see every row.** Whether a later seal replayed a turn is looked up as
//!   the table's owner, as PostgreSQL's foreign-key checks do, so row-level security
//!   cannot hide the seal that protects it.

use std::cell::Cell;
use std::ffi::{c_void, CStr};

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::PgXactCallbackEvent;

use super::errors::raise;
use super::spi::{core_uuid, pg_uuid};
use pgprompt_core::{Code, Error};

/// Lets a transaction rewrite what a seal was compiled from, on purpose
/// (`pgprompt.allow_history_rewrite`, registered with the other settings; its check hook
/// is [`check_rewrite`]).
pub static ALLOW_HISTORY_REWRITE: pgrx::guc::GucSetting<bool> = pgrx::guc::GucSetting::<bool>::new(false);

const SETTING: &CStr = c"pgprompt.allow_history_rewrite";

thread_local! {
    /// Nesting depth of pgprompt's own writers of seal storage in this backend.
    static OPEN: Cell<u32> = const { Cell::new(0) };
    /// This transaction tried to turn the rewrite on for a role that may not: the
    /// refusal it leads to says so (a value set before the library was loaded is set
    /// aside at load, with only a WARNING).
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

/// Holds seal storage open for pgprompt's own writer while it lives.
pub struct Open(());

impl Open {
    pub fn hold() -> Open {
        OPEN.with(|o| o.set(o.get() + 1));
        Open(())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        OPEN.with(|o| o.set(o.get().saturating_sub(1)));
    }
}

/// Whether the current role may rewrite sealed history: a superuser, or a role granted
/// SET on the setting.
fn permitted() -> bool {
    // SAFETY: plain calls into the backend from its own thread, in a transaction (the
    // callers check IsTransactionState or run inside a statement); the name is a valid C
    // string that outlives the call.
    unsafe {
        pg_sys::superuser()
            || pg_sys::pg_parameter_aclcheck(
                SETTING.as_ptr(),
                pg_sys::GetUserId(),
                pg_sys::ACL_SET as pg_sys::AclMode,
            ) == pg_sys::AclResult::ACLCHECK_OK
    }
}

fn role_name() -> String {
    // SAFETY: GetUserNameFromId returns a palloc'd C string for a role that exists (the
    // current one), or raises.
    unsafe {
        let name = pg_sys::GetUserNameFromId(pg_sys::GetUserId(), false);
        CStr::from_ptr(name).to_string_lossy().into_owned()
    }
}

fn not_permitted_hint(role: &str) -> String {
    format!(
        "An administrator names the roles that may: GRANT SET ON PARAMETER pgprompt.allow_history_rewrite TO {role};"
    )
}

/// The setting's check: turning it on in a session (SET, SET LOCAL, a function's SET
/// clause, ALTER ROLE ... SET) needs the privilege. Values from the server's files, the
/// connection or a role's stored settings are checked where they are used instead.
///
/// # Safety
/// Called by PostgreSQL's GUC machinery with a valid `newval`.
#[pg_guard]
pub unsafe extern "C-unwind" fn check_rewrite(
    newval: *mut bool,
    _extra: *mut *mut c_void,
    source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: the GUC machinery passes a valid pointer to the proposed value.
    let on = unsafe { *newval };
    // SAFETY: a read of a backend-global flag from the backend's own thread.
    let in_transaction = unsafe { pg_sys::IsTransactionState() };
    if !on || source < pg_sys::GucSource::PGC_S_INTERACTIVE || !in_transaction {
        return true;
    }
    if permitted() {
        REFUSED.with(|r| r.set(false));
        return true;
    }
    // Remembered for this transaction (a value set aside at library load is refused by
    // the trigger that finds it gone, in the transaction that set it).
    if !REFUSED.with(|r| r.replace(true)) {
        for event in [PgXactCallbackEvent::Commit, PgXactCallbackEvent::Abort] {
            pgrx::register_xact_callback(event, || REFUSED.with(|r| r.set(false)));
        }
    }
    let role = role_name();
    let message = format!(
        "{}: role \"{role}\" may not turn on pgprompt.allow_history_rewrite",
        Code::HistoryRewriteNotPermitted.name()
    );
    // SAFETY: GUC_check_errcode and the message globals are the hook's documented way to
    // report; pstrdup copies each text into the current memory context, as they require.
    unsafe {
        pg_sys::GUC_check_errcode(pgrx::PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE as i32);
        let msg = std::ffi::CString::new(message).unwrap_or_default();
        pg_sys::GUC_check_errmsg_string = pg_sys::pstrdup(msg.as_ptr());
        let hint = std::ffi::CString::new(not_permitted_hint(&role)).unwrap_or_default();
        pg_sys::GUC_check_errhint_string = pg_sys::pstrdup(hint.as_ptr());
    }
    false
}

fn not_permitted() -> ! {
    let role = role_name();
    raise(
        Error::new(
            Code::HistoryRewriteNotPermitted,
            format!("role \"{role}\" may not rewrite sealed history"),
        )
        .detail("pgprompt.allow_history_rewrite is on, or was set before pgprompt was loaded, for a role an administrator has not named.")
        .hint(not_permitted_hint(&role)),
    )
}

/// Whether this transaction rewrites sealed history on purpose: the setting is on and
/// the role may. On for a role that may not, it is refused (42501).
pub fn rewrite_allowed() -> bool {
    if !ALLOW_HISTORY_REWRITE.get() {
        return false;
    }
    if !permitted() {
        not_permitted();
    }
    true
}

/// Whether this statement runs as a foreign-key action (PostgreSQL runs a cascade as the
/// referencing table's owner with `SECURITY_NOFORCE_RLS`, which nothing else sets): the
/// delete of a conversation reaching its turns and seal storage, or of a turn its own
/// trigger let go reaching its rounds and seal.
fn in_cascade() -> bool {
    let mut user = pg_sys::Oid::INVALID;
    let mut context = 0;
    // SAFETY: writes the current user and security context into the two locals.
    unsafe { pg_sys::GetUserIdAndSecContext(&mut user, &mut context) };
    context & pg_sys::SECURITY_NOFORCE_RLS as i32 != 0
}

/// Internal: the rewrite setting as the triggers rely on it (42501 for a role that may
/// not).
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _history_rewrite_allowed() -> bool {
    rewrite_allowed()
}

/// Internal: whether a delete is a foreign-key cascade (see [`in_cascade`]).
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _in_cascade() -> bool {
    in_cascade()
}

/// Internal: whether a change to seal storage (`op`: UPDATE, DELETE, TRUNCATE) may go on.
/// Refused otherwise, naming the table.
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _seal_storage_guard(table: &str, op: &str) {
    let open = OPEN.with(Cell::get) > 0;
    if open || (op == "DELETE" && in_cascade()) || (op == "TRUNCATE" && rewrite_allowed()) {
        return;
    }
    raise(
        Error::new(
            Code::SealedTurnImmutable,
            format!("prompt.{table} is what was sent: {op} is refused"),
        )
        .detail("Seal storage changes only through pgprompt: compile_turn writes it, prune_seals drops old bodies, deleting a conversation (or a sealed turn, with a permitted history rewrite) takes its seals along.")
        .hint("SELECT prompt.prune_seals(conversation_id, before) drops old bodies; SELECT * FROM prompt.verify_seals() lists seals that no longer match their digest."),
    );
}

/// The owner of the extension's tables, as whom a guard looks rows up.
fn tables_owner() -> pg_sys::Oid {
    let owner = Spi::get_one::<pg_sys::Oid>(
        "SELECT relowner FROM pg_catalog.pg_class WHERE oid = 'prompt.turns'::pg_catalog.regclass",
    );
    match owner {
        Ok(Some(o)) => o,
        _ => pgrx::error!("pgprompt: internal error: prompt.turns has no owner"),
    }
}

/// Runs `f` as the tables' owner with row-level security out of the way, as a
/// foreign-key check runs its query; the caller's identity is back afterwards (and on an
/// error, the transaction's abort restores it).
fn as_owner<T>(f: impl FnOnce() -> T) -> T {
    let owner = tables_owner();
    let mut user = pg_sys::Oid::INVALID;
    let mut context = 0;
    // SAFETY: GetUserIdAndSecContext fills the two locals; SetUserIdAndSecContext takes a
    // role that exists (the owner read above) and the caller's context with the flags a
    // foreign-key check adds (a local user change, no forced row security).
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut user, &mut context);
        pg_sys::SetUserIdAndSecContext(
            owner,
            context | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32 | pg_sys::SECURITY_NOFORCE_RLS as i32,
        );
    }
    let out = f();
    // SAFETY: restores exactly what was read above.
    unsafe { pg_sys::SetUserIdAndSecContext(user, context) };
    out
}

/// Internal: whether a seal later in the conversation than `seq` replayed the turn (a
/// later sealed turn), looked up whatever the caller may see.
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _replayed_by_later_seal(conversation_id: pgrx::Uuid, seq: i64) -> bool {
    let conv = pg_uuid(core_uuid(conversation_id));
    as_owner(|| {
        Spi::get_one_with_args::<bool>(
            "SELECT EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = $1 AND t.seq > $2 \
             AND t.sealed_at IS NOT NULL)",
            &[conv.into(), seq.into()],
        )
    })
    .ok()
    .flatten()
    .unwrap_or(true)
}

/// When this session's attempt to turn the rewrite on was set aside for a role that may
/// not (a value set before the library was loaded), the refusal a trigger is about to
/// raise is that one (42501).
pub fn raise_if_refused_attempt() {
    if REFUSED.with(Cell::get) && !permitted() {
        not_permitted();
    }
}

/// Internal (the tenancy policies, README "Security"): whether the current role, a
/// tenant, may write the rows of user `user_id` — the user belongs to one of its
/// workspaces and to no other workspace, so no other tenant's compile reads them.
/// Looked up as the tables' owner: a tenant cannot see the other workspaces' members.
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _tenant_writes_user(user_id: Option<pgrx::Uuid>) -> bool {
    let Some(user) = user_id else { return false };
    let role = role_name();
    as_owner(|| {
        Spi::get_one_with_args::<bool>(
            "SELECT count(*) > 0 AND bool_and(m.workspace_id IN (SELECT t.workspace_id FROM prompt.tenants t \
             WHERE t.role_name = $2)) FROM prompt.workspace_members m WHERE m.user_id = $1",
            &[user.into(), role.into()],
        )
    })
    .ok()
    .flatten()
    .unwrap_or(false)
}
