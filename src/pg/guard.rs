//! What keeps sealed history as it was sent (README, "Security"): who may rewrite it,
//! and the guard on what only pgprompt writes.
//!
//! - **Rewriting sealed history is a privilege.** `pgprompt.allow_history_rewrite` turns
//!   on only for a superuser or a role an administrator granted it to
//!   (`GRANT SET ON PARAMETER pgprompt.allow_history_rewrite TO role`, PostgreSQL's own
//!   per-setting privilege): the setting's check refuses anyone else when it is set, and
//!   [`rewrite_allowed`] again when a trigger relies on it.
//! - **What was sent changes only through pgprompt's own writer.** Seal storage
//!   (`prompt.seals`, `prompt.seal_nodes`, `prompt.seals_02`), a turn's seal columns and a
//!   round's `sent_at` are written by sealing, `mark_sent`, `prune_seals` and the 0.2
//!   conversion, each holding [`Open`] around its own statements. Whether the writer is
//!   running is a backend-local value only this library's Rust code sets, together with
//!   the trigger depth its statements fire their triggers at: a trigger of the caller's
//!   that pgprompt's statement fired runs one level deeper, and its writes are refused
//!   (no security-context flag, setting, temporary object or trigger can make it true).
//!   Besides the writer: a delete of rows whose conversation (or turn) is already gone —
//!   the foreign-key cascade of deleting a whole conversation, or a turn a permitted
//!   rewrite deleted —, an `INSERT` by an administrator (superuser, the extension's or
//!   the tables' owner: a restore), and `TRUNCATE` under a permitted rewrite.
//! - **The guards see every row.** Whether a later seal replayed a turn, or a parent is
//!   gone, is looked up as the table's owner, as PostgreSQL's foreign-key checks do, so
//!   row-level security cannot hide the row that protects another.

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
    /// The trigger depth at which the statements of pgprompt's own writer fire their
    /// triggers, while one runs (`None`: none does). Set only by [`Open`].
    static WRITER: Cell<Option<i32>> = const { Cell::new(None) };
    /// This transaction tried to turn the rewrite on for a role that may not: the
    /// refusal it leads to says so (a value set before the library was loaded is set
    /// aside at load, with only a WARNING).
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

/// The current trigger nesting level (`pg_trigger_depth()`): 0 in a statement a client
/// sent, one more inside each trigger.
fn trigger_depth() -> i32 {
    // SAFETY: pg_trigger_depth takes no argument and returns a backend global as an
    // int4; direct_function_call builds the call frame it is given.
    unsafe { pgrx::direct_function_call::<i32>(pg_sys::pg_trigger_depth, &[]) }.unwrap_or(i32::MIN)
}

/// pgprompt's own writer, running while this lives: the statements this code runs next
/// (and only those, not the triggers of others they fire) may write what was sent.
/// Nested writers restore the outer one when they end; unwinding from an error ends
/// them too.
pub struct Open(Option<i32>);

impl Open {
    pub fn hold() -> Open {
        let depth = trigger_depth().saturating_add(1);
        Open(WRITER.with(|w| w.replace(Some(depth))))
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        WRITER.with(|w| w.set(self.0));
    }
}

impl Open {
    /// [`Open::hold`] for a write of `tables` (prompt's tables the writer's statements
    /// write, their triggers included): refused first while code pgprompt did not create
    /// stands on one of them ([`refuse_foreign_code`]).
    pub fn hold_for(tables: &[&CStr]) -> Open {
        refuse_foreign_code(tables);
        Open::hold()
    }
}

thread_local! {
    /// The trigger OIDs (with their functions) found pgprompt's in this backend: a trigger
    /// is looked up once, then known by its OID and function.
    static OWN_TRIGGERS: std::cell::RefCell<std::collections::HashSet<(pg_sys::Oid, pg_sys::Oid)>> =
        std::cell::RefCell::new(std::collections::HashSet::new());
}

/// Refuses (`foreign_code_refused`, 42501) while a trigger pgprompt did not create stands
/// on one of `tables` (schema `prompt`): a write of pgprompt's runs no code of another's
/// (README, "Security"). Each table is locked as a write locks it (`ROW EXCLUSIVE`) before
/// its triggers are read, so none can be added before the write runs: `CREATE TRIGGER`
/// waits for the transaction. A trigger is pgprompt's when its function is one of the
/// extension's and it carries the comment the extension's script gave it (only the tables'
/// owner comments on a trigger: one another role made with pgprompt's function, and a WHEN
/// of its own, has none); a foreign key's internal trigger, when the other table of the key
/// is one of the extension's too (a key from another table to pgprompt's runs that table's
/// actions, and their triggers, inside the write).
pub fn refuse_foreign_code(tables: &[&CStr]) {
    for table in tables {
        if let Some(foreign) = foreign_trigger(table) {
            raise(foreign);
        }
    }
}

/// The refusal for the first trigger on `prompt.<table>` that is not pgprompt's.
fn foreign_trigger(table: &CStr) -> Option<Error> {
    // SAFETY: makeRangeVar copies nothing and keeps the pointers, which are 'static C
    // strings here (the schema literal and a table name the caller passes as &CStr that
    // outlives this call); RangeVarGetRelidExtended raises for a missing table (flags 0)
    // and returns with the lock taken. RelationIdGetRelation returns the relcache entry
    // of a locked relation, valid until RelationClose; its trigdesc, when not NULL, points
    // to numtriggers Trigger structs that live as long as the entry.
    unsafe {
        let rv = pg_sys::makeRangeVar(c"prompt".as_ptr().cast_mut(), table.as_ptr().cast_mut(), -1);
        let relid = pg_sys::RangeVarGetRelidExtended(
            rv,
            pg_sys::RowExclusiveLock as pg_sys::LOCKMODE,
            0,
            None,
            std::ptr::null_mut(),
        );
        let rel = pg_sys::RelationIdGetRelation(relid);
        let mut found = None;
        let desc = (*rel).trigdesc;
        if !desc.is_null() {
            for i in 0..usize::try_from((*desc).numtriggers).unwrap_or(0) {
                let t = &*(*desc).triggers.add(i);
                if !own_trigger(t) {
                    found = Some(foreign_refusal(table, t));
                    break;
                }
            }
        }
        pg_sys::RelationClose(rel);
        found
    }
}

/// Whether trigger `t` is pgprompt's (remembered once found so).
fn own_trigger(t: &pg_sys::Trigger) -> bool {
    let key = (t.tgoid, t.tgfoid);
    if OWN_TRIGGERS.with(|k| k.borrow().contains(&key)) {
        return true;
    }
    // SAFETY: catalog lookups from the backend's thread inside a transaction; the
    // extension's name is a valid C string.
    let own = unsafe {
        let ext = pg_sys::get_extension_oid(c"pgprompt".as_ptr(), true);
        if t.tgisinternal {
            // A foreign key's trigger: the key's other table is pgprompt's (or the key is
            // the table's own, as only its owner makes them).
            t.tgconstrrelid == pg_sys::InvalidOid
                || pg_sys::getExtensionOfObject(pg_sys::RelationRelationId, t.tgconstrrelid) == ext
        } else {
            pg_sys::getExtensionOfObject(pg_sys::ProcedureRelationId, t.tgfoid) == ext && marked(t.tgoid)
        }
    };
    if own {
        OWN_TRIGGERS.with(|k| k.borrow_mut().insert(key));
    }
    own
}

/// Whether trigger `tgoid` carries the comment the extension's script gives its own
/// triggers (`pgprompt: ...`, sql/finalize.sql).
fn marked(tgoid: pg_sys::Oid) -> bool {
    // SAFETY: GetComment reads pg_description from the backend's thread inside a
    // transaction and returns a palloc'd NUL-terminated string or NULL.
    unsafe {
        let comment = pg_sys::GetComment(tgoid, pg_sys::TriggerRelationId, 0);
        !comment.is_null() && CStr::from_ptr(comment).to_bytes().starts_with(b"pgprompt: ")
    }
}

fn foreign_refusal(table: &CStr, t: &pg_sys::Trigger) -> Error {
    let table = table.to_string_lossy();
    // SAFETY: tgname is the trigger's NUL-terminated name in its relcache entry, alive
    // while the caller holds the entry.
    let name = unsafe { CStr::from_ptr(t.tgname) }.to_string_lossy().into_owned();
    let (what, fix) = if t.tgisinternal {
        let other = relation_name(t.tgconstrrelid);
        (
            format!("a foreign key of {other} on prompt.{table} runs that table's actions inside pgprompt's write"),
            format!("Its owner drops the key from {other} (ALTER TABLE {other} DROP CONSTRAINT ...)."),
        )
    } else {
        (
            format!("trigger \"{name}\" on prompt.{table} is not pgprompt's"),
            format!(
                "The tables' owner drops it: DROP TRIGGER {} ON prompt.{table};",
                quote_ident(&name)
            ),
        )
    };
    Error::new(Code::ForeignCodeRefused, what)
        .detail("pgprompt writes what was sent, and what its functions record, only where no code it did not create runs inside the write: a trigger of another's would run with the caller's rights and could change what is written after every check.")
        .hint(format!("{fix} SELECT * FROM prompt.security_check() lists every such weakening."))
}

/// A relation's qualified name, for a message (its OID where it has none).
fn relation_name(relid: pg_sys::Oid) -> String {
    super::spi::read_one::<String>("SELECT $1::pg_catalog.regclass::text", &[relid.into()])
        .unwrap_or_else(|| format!("relation {}", relid.to_u32()))
}

/// An identifier quoted where SQL needs it.
fn quote_ident(name: &str) -> String {
    super::spi::read_one::<String>("SELECT pg_catalog.quote_ident($1)", &[name.into()])
        .unwrap_or_else(|| format!("\"{name}\""))
}

/// Whether the statement whose trigger runs now is pgprompt's own writer's.
fn writer_running() -> bool {
    WRITER.with(Cell::get).is_some_and(|d| d == trigger_depth())
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
    let message = Error::new(
        Code::HistoryRewriteNotPermitted,
        format!("role \"{role}\" may not turn on pgprompt.allow_history_rewrite"),
    )
    .message;
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

/// Internal: the rewrite setting as the triggers rely on it (42501 for a role that may
/// not).
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _history_rewrite_allowed() -> bool {
    rewrite_allowed()
}

/// Whether the current role administers the extension: a superuser, the extension's
/// owner or the tables' owner (the roles a dump is restored as).
fn administrator() -> bool {
    // SAFETY: plain calls into the backend from its own thread, inside a statement.
    let (me, superuser) = unsafe { (pg_sys::GetUserId(), pg_sys::superuser()) };
    if superuser || me == tables_owner() {
        return true;
    }
    Spi::get_one::<pg_sys::Oid>("SELECT extowner FROM pg_catalog.pg_extension WHERE extname = 'pgprompt'")
        .ok()
        .flatten()
        .is_some_and(|owner| owner == me)
}

/// Internal: whether a write of what was sent (`op`: INSERT, UPDATE, DELETE, TRUNCATE)
/// may go on: pgprompt's own writer runs it, an administrator inserts (a restore), or a
/// permitted rewrite truncates. Refused otherwise (55000), naming `subject`.
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _storage_guard(subject: &str, op: &str) {
    if writer_running() || (op == "INSERT" && administrator()) || (op == "TRUNCATE" && rewrite_allowed()) {
        return;
    }
    raise(
        Error::new(
            Code::SealedTurnImmutable,
            format!("{subject} is what was sent: {op} is refused"),
        )
        .detail("What was sent changes only through pgprompt: compile_turn seals a turn and marks the rounds it sends, prune_seals drops old bodies, deleting a conversation (or a sealed turn, with a permitted history rewrite) takes its seals along, and an administrator restores a dump.")
        .hint("SELECT prompt.prune_seals(conversation_id, before) drops old bodies; SELECT * FROM prompt.verify_seals() lists seals that no longer match what was sent."),
    );
}

/// Internal: whether conversation `conversation_id` (or, given `turn_id`, that turn of
/// it) no longer exists — its rows are going with it, by the cascade of its delete.
/// Looked up as the tables' owner, whatever the caller may see.
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _parent_gone(conversation_id: Option<pgrx::Uuid>, turn_id: Option<pgrx::Uuid>) -> bool {
    // A row without a conversation has no parent to be gone: nothing goes with it.
    let Some(conversation_id) = conversation_id else {
        return false;
    };
    let conv = pg_uuid(core_uuid(conversation_id));
    as_owner(|| match turn_id {
        None => Spi::get_one_with_args::<bool>(
            "SELECT NOT EXISTS (SELECT 1 FROM prompt.conversations c WHERE c.id = $1)",
            &[conv.into()],
        ),
        Some(turn) => Spi::get_one_with_args::<bool>(
            "SELECT NOT EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = $1 AND t.id = $2)",
            &[conv.into(), pg_uuid(core_uuid(turn)).into()],
        ),
    })
    .ok()
    .flatten()
    .unwrap_or(false)
}

/// Internal (the documents trigger, on INSERT): the version a new document starts at and
/// the day it is written. A document's history outlives it: a document written again
/// under the id of one deleted continues that id's history (one past its newest recorded
/// version, looked up past row-level security), so the version a seal names is never
/// written a second time; its day is now. An administrator's insert (a restore) keeps its
/// own version and day.
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _document_first_version(document_id: Option<pgrx::Uuid>, version: Option<i32>) -> Option<i32> {
    if administrator() {
        return version;
    }
    let Some(id) = document_id else { return Some(1) };
    let newest = as_owner(|| {
        Spi::get_one_with_args::<i32>(
            "SELECT max(v.version) FROM prompt.document_versions v WHERE v.document_id = $1",
            &[id.into()],
        )
    })
    .ok()
    .flatten();
    Some(newest.map_or(1, |n| n.saturating_add(1)))
}

/// Internal: whether the current role's insert keeps its own version and day (an
/// administrator's: a restore).
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _restores() -> bool {
    administrator()
}

/// Internal (the documents trigger): records document `document_id`'s version as it now
/// stands in `prompt.document_versions`, as pgprompt's own write (what only it writes):
/// read from the row, never from arguments, so a direct call records nothing a write did
/// not leave. Nothing when that version is recorded already.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _document_version(document_id: Option<pgrx::Uuid>) {
    let Some(id) = document_id else { return };
    let _open = Open::hold_for(&[c"document_versions"]);
    // The role by its OID: a name read back as a role would fold its case and refuse its
    // dots (and name another role).
    // SAFETY: a plain call into the backend from its own thread, inside a statement.
    let me = unsafe { pg_sys::GetUserId() };
    super::spi::spi(Spi::run_with_args(
        "INSERT INTO prompt.document_versions (document_id, version, role, body, written_at, written_by) \
         SELECT d.id, d.version, d.role, d.body, d.updated_at, $2::pg_catalog.oid::pg_catalog.regrole \
           FROM prompt.documents d WHERE d.id = $1 \
         ON CONFLICT (document_id, version) DO NOTHING",
        &[id.into(), me.into()],
    ));
}

/// Internal (the document versions' guard, on INSERT): whether the version inserted is
/// recorded already, and so goes in no second time. A restore writes a document before its
/// versions, and the document's row records its version as it comes in, as written by the
/// restoring role: the dump's row of that version then brings back who wrote it
/// (`written_by`, `written_at`), when it is the same version (role and body), an
/// administrator restores it, and the recorded row names that administrator (a version
/// someone else wrote is never rewritten). Any other insert of a recorded version is left
/// to the primary key to refuse; pgprompt's own writer records a version once.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _document_version_recorded(
    document_id: Option<pgrx::Uuid>,
    version: Option<i32>,
    role: Option<&str>,
    body: Option<&str>,
    written_at: Option<pgrx::datum::TimestampWithTimeZone>,
    written_by: Option<pg_sys::Oid>,
) -> bool {
    let (Some(id), Some(version)) = (document_id, version) else {
        return false;
    };
    // SAFETY: a plain call into the backend from its own thread, inside a statement.
    let me = unsafe { pg_sys::GetUserId() };
    let same = as_owner(|| {
        Spi::get_one_with_args::<bool>(
            "SELECT v.role IS NOT DISTINCT FROM $3 AND v.body IS NOT DISTINCT FROM $4 \
                    AND v.written_by IS NOT DISTINCT FROM $5::pg_catalog.oid::pg_catalog.regrole \
               FROM prompt.document_versions v WHERE v.document_id = $1 AND v.version = $2",
            &[id.into(), version.into(), role.into(), body.into(), me.into()],
        )
    })
    .ok()
    .flatten();
    match same {
        None => false,
        Some(_) if writer_running() => true,
        Some(true) if administrator() => {
            let _open = Open::hold_for(&[c"document_versions"]);
            super::spi::spi(Spi::run_with_args(
                "UPDATE prompt.document_versions SET written_at = coalesce($3, written_at), \
                        written_by = $4::pg_catalog.oid::pg_catalog.regrole \
                  WHERE document_id = $1 AND version = $2",
                &[id.into(), version.into(), written_at.into(), written_by.into()],
            ));
            true
        }
        Some(_) => false,
    }
}

/// Internal: refuses a `TRUNCATE` of `prompt.turns` or `prompt.rounds` while they hold a
/// sealed turn or a sent round (looked up past row-level security), unless a permitted
/// rewrite is on.
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _truncate_guard(table: &str) {
    let query = match table {
        "turns" => "SELECT EXISTS (SELECT 1 FROM prompt.turns WHERE sealed_at IS NOT NULL)",
        "rounds" => "SELECT EXISTS (SELECT 1 FROM prompt.rounds WHERE sent_at IS NOT NULL OR sent_digest IS NOT NULL)",
        _ => "SELECT true",
    };
    let holds = as_owner(|| Spi::get_one::<bool>(query)).ok().flatten().unwrap_or(true);
    if holds && !rewrite_allowed() {
        _storage_guard(&format!("prompt.{table}"), "TRUNCATE");
    }
}

/// The owner of the extension's tables, as whom a guard looks rows up.
pub(super) fn tables_owner() -> pg_sys::Oid {
    let owner = super::spi::read_one::<pg_sys::Oid>(
        "SELECT relowner FROM pg_catalog.pg_class WHERE oid = 'prompt.turns'::pg_catalog.regclass",
        &[],
    );
    match owner {
        Some(o) => o,
        None => pgrx::error!("pgprompt: internal error: prompt.turns has no owner"),
    }
}

/// Runs `f` as the tables' owner with row-level security out of the way, as a
/// foreign-key check runs its query; the caller's identity is back afterwards (and on an
/// error, the transaction's abort restores it).
pub(super) fn as_owner<T>(f: impl FnOnce() -> T) -> T {
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

/// When this session's attempt to turn the rewrite on was set aside for a role that may
/// not (a value set before the library was loaded), the refusal a trigger is about to
/// raise is that one (42501).
pub fn raise_if_refused_attempt() {
    if REFUSED.with(Cell::get) && !permitted() {
        not_permitted();
    }
}

/// Internal (the turns write trigger): takes the conversation's row lock, so one writer
/// at a time numbers its next turn. Taken as the tables' owner when the caller may insert
/// turns and can see the conversation (what it could lock itself, given the privilege); a
/// conversation the caller cannot see is not locked — its write is refused by row-level
/// security — nor one a role that writes no turns asks for.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _lock_conversation(conversation_id: pgrx::Uuid) {
    let conv = pg_uuid(core_uuid(conversation_id));
    // Only for a role that may write turns (the trigger's caller does): a reader calling it
    // takes no lock it could not take itself.
    let visible = Spi::get_one_with_args::<bool>(
        "SELECT pg_catalog.has_table_privilege('prompt.turns', 'INSERT') \
                AND EXISTS (SELECT 1 FROM prompt.conversations c WHERE c.id = $1)",
        &[conv.into()],
    )
    .ok()
    .flatten()
    .unwrap_or(false);
    if visible {
        let _ = as_owner(|| {
            Spi::get_one_with_args::<i32>(
                "SELECT 1 FROM prompt.conversations c WHERE c.id = $1 FOR NO KEY UPDATE",
                &[conv.into()],
            )
        });
    }
}

/// 0.4's triggers call these (`_in_cascade`, `_seal_storage_guard`); 0.5 replaced them.
/// With this library installed and the extension not yet updated, they say so instead of
/// deciding with a rule the new tables do not follow.
fn replaced() -> ! {
    raise(
        Error::new(
            Code::ExtensionNotUpdated,
            format!(
                "the pgprompt library is {} and this database's extension is older",
                env!("CARGO_PKG_VERSION")
            ),
        )
        .detail("A trigger of the old version called a check the new library replaced.")
        .hint("Run ALTER EXTENSION pgprompt UPDATE in this database."),
    )
}

#[pg_extern(sql = false)]
fn _in_cascade() -> bool {
    replaced()
}

#[pg_extern(sql = false)]
fn _seal_storage_guard(_table: &str, _op: &str) {
    replaced()
}

/// 0.5's turns delete trigger calls this; 0.6 reads the turn's own sent mark instead.
#[pg_extern(sql = false)]
fn _replayed_by_later_seal(_conversation_id: pgrx::Uuid, _seq: i64) -> bool {
    replaced()
}
