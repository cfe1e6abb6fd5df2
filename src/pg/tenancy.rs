//! Tenancy (README, "Security"; the policies are sql/finalize.sql's): who row-level
//! security confines, decided so that it fails closed.
//!
//! - Tenancy is declared: on because an administrator turned it on
//!   ([`set_tenancy`], a row of `prompt.tenancy`), off only when one turns it off. With it
//!   off, nobody is confined; grants decide.
//! - With it on, every role is confined to the workspaces it is a tenant of (rows of
//!   `prompt.tenants`) — none for a role that is listed nowhere (the group role tenants are
//!   granted, a renamed or new role, a tenant whose workspaces were deleted, every role once
//!   `prompt.tenants` is emptied) — unless it administers the extension: the extension's
//!   owner, a role listed in `prompt.administrators`, or one that bypasses row-level
//!   security anyway (a superuser, `BYPASSRLS`, the tables' owner).
//! - A role is a tenant by its OID (`tenants.role_oid`, stamped from `role_name` when the
//!   row is written, restored included), so renaming a role keeps what it is, and a
//!   new role that takes an old name gains nothing.
//!
//! What a role is, is looked up as the tables' owner (every tenant row, whatever the
//! caller may see) once per statement, and kept for the rest of it.

use std::cell::RefCell;

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::PgXactCallbackEvent;

use super::guard::as_owner;
use super::spi::{core_uuid, pg_uuid};

/// What row-level security makes of a role: unconfined, or confined to these workspaces
/// (none at all for a role that is listed nowhere).
#[derive(Clone)]
enum Reach {
    Unconfined,
    Confined(Vec<pgrx::Uuid>),
}

thread_local! {
    /// The reach of (role, command) last looked up in this transaction.
    static KNOWN: RefCell<Option<((pg_sys::Oid, u32), Reach)>> = const { RefCell::new(None) };
}

fn current_role() -> pg_sys::Oid {
    // SAFETY: a read of the backend's current user id, from its own thread.
    unsafe { pg_sys::GetUserId() }
}

/// The reach of the current role, for this statement.
fn reach() -> Reach {
    let role = current_role();
    // SAFETY: the current command id of the running transaction (policies are evaluated
    // inside one); false: the call does not mark it used.
    let command = unsafe { pg_sys::GetCurrentCommandId(false) };
    let key = (role, command);
    if let Some(r) = KNOWN.with(|k| k.borrow().as_ref().filter(|(at, _)| *at == key).map(|(_, r)| r.clone())) {
        return r;
    }
    let r = look_up(role);
    let first = KNOWN.with(|k| k.borrow_mut().replace((key, r.clone())).is_none());
    if first {
        // What is known holds for this transaction at most: a tenant row written by
        // another session shows in the next.
        for event in [PgXactCallbackEvent::Commit, PgXactCallbackEvent::Abort] {
            pgrx::register_xact_callback(event, || {
                KNOWN.with(|k| k.borrow_mut().take());
            });
        }
    }
    r
}

/// Whether role `$1` administers the extension (SQL, read as the tables' owner): listed in
/// `prompt.administrators`, the extension's owner, a superuser or a `BYPASSRLS` role (the
/// tables' owner bypasses row-level security too, and is one of the last two or the
/// extension's owner).
const ADMINISTERS: &str = "(EXISTS (SELECT 1 FROM prompt.administrators a WHERE a.role_oid = $1) \
     OR EXISTS (SELECT 1 FROM pg_catalog.pg_extension e WHERE e.extname = 'pgprompt' AND e.extowner = $1) \
     OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid = $1 AND (r.rolsuper OR r.rolbypassrls)) \
     OR EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = 'prompt.turns'::pg_catalog.regclass AND c.relowner = $1))";

/// Whether the current role administers the extension ([`ADMINISTERS`]).
pub(super) fn administers() -> bool {
    let role = current_role();
    as_owner(|| super::spi::read_one::<bool>(&format!("SELECT {ADMINISTERS}"), &[role.into()])).unwrap_or(false)
}

/// The reach of `role` (not the current one), looked up now.
fn reach_of(role: pg_sys::Oid) -> Reach {
    look_up(role)
}

/// Reads what the current role is, past row-level security.
fn look_up(role: pg_sys::Oid) -> Reach {
    let found = as_owner(|| {
        super::spi::read_two::<bool, Vec<pgrx::Uuid>>(
            &format!(
                "SELECT NOT EXISTS (SELECT 1 FROM prompt.tenancy) OR {ADMINISTERS}, \
                        ARRAY(SELECT t.workspace_id FROM prompt.tenants t WHERE t.role_oid = $1 ORDER BY 1)"
            ),
            &[role.into()],
        )
    });
    match found {
        Ok((Some(true), _)) => Reach::Unconfined,
        Ok((_, workspaces)) => Reach::Confined(workspaces.unwrap_or_default()),
        // Cannot tell: confined to nothing.
        Err(_) => Reach::Confined(Vec::new()),
    }
}

/// Internal (the tenancy policies): whether row-level security leaves the current role
/// unconfined — no tenant is listed, or it administers the extension.
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, pg_temp)]
fn _unconfined() -> bool {
    matches!(reach(), Reach::Unconfined)
}

/// Internal (the tenancy policies): the workspaces the current role is a tenant of
/// (empty when it is none's, or unconfined).
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, pg_temp)]
fn _my_workspaces() -> Vec<pgrx::Uuid> {
    match reach() {
        Reach::Unconfined => Vec::new(),
        Reach::Confined(w) => w,
    }
}

/// Internal: the current role's OID (what `prompt.tenants.role_oid` holds).
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _role() -> pg_sys::Oid {
    current_role()
}

/// Internal (the tenancy policies, README "Security"): whether the current role, a
/// tenant, may write the rows of user `user_id` — the user belongs to one of its
/// workspaces and to no other workspace, so no other tenant's compile reads them.
/// Looked up as the tables' owner: a tenant cannot see the other workspaces' members.
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, pg_temp)]
fn _tenant_writes_user(user_id: Option<pgrx::Uuid>) -> bool {
    let Some(user) = user_id else { return false };
    let mine = match reach() {
        Reach::Unconfined => return true,
        Reach::Confined(w) if w.is_empty() => return false,
        Reach::Confined(w) => w,
    };
    as_owner(|| {
        Spi::get_one_with_args::<bool>(
            "SELECT count(*) > 0 AND bool_and(m.workspace_id = ANY ($2)) FROM prompt.workspace_members m WHERE m.user_id = $1",
            &[user.into(), mine.into()],
        )
    })
    .ok()
    .flatten()
    .unwrap_or(false)
}

/// Internal (the tenancy policies of conversations): whether the current role, a tenant,
/// may write a conversation row of conversation `conversation_id`'s workspace — what a
/// Side names as its parent must be a conversation of the tenant's own workspaces, or
/// another tenant could no longer delete its own. Looked up as the tables' owner.
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, pg_temp)]
fn _tenant_writes_conversation(conversation_id: Option<pgrx::Uuid>) -> bool {
    let Some(conv) = conversation_id else { return true };
    let mine = match reach() {
        Reach::Unconfined => return true,
        Reach::Confined(w) if w.is_empty() => return false,
        Reach::Confined(w) => w,
    };
    as_owner(|| {
        Spi::get_one_with_args::<bool>(
            "SELECT c.workspace_id = ANY ($2) FROM prompt.conversations c WHERE c.id = $1",
            &[conv.into(), mine.into()],
        )
    })
    .ok()
    .flatten()
    .unwrap_or(false)
}

/// Internal (the delete triggers of users and conversations): refuses, for a confined
/// role, a delete whose foreign-key action would change a row it may not write — a
/// shared agent whose steward is the user (`ON DELETE SET NULL`), or a conversation of
/// another workspace captured from the conversation. PostgreSQL runs those actions as
/// the tables' owner, past the policies; this check runs before them, as the caller.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _tenant_delete_guard(table: &str, id: pgrx::Uuid) {
    // A delete a foreign-key action runs (a workspace's deletion cascading to its
    // conversations) runs as the tables' owner: whose delete it is, is the role outside.
    // SAFETY: reads of backend-global identity state from the backend's thread.
    let outer = unsafe { pg_sys::InLocalUserIdChange().then(|| pg_sys::GetOuterUserId()) };
    let mine = match outer.map_or_else(reach, reach_of) {
        Reach::Unconfined => return,
        Reach::Confined(w) => w,
    };
    let key = pg_uuid(core_uuid(id));
    let blocked = match table {
        // An agent whose steward is the user, and that is not the confined role's alone
        // to write (a member of another workspace, or of none).
        "users" => as_owner(|| {
            Spi::get_one_with_args::<String>(
                "SELECT u.id::text FROM prompt.users u WHERE u.steward_id = $1 AND NOT ( \
                   EXISTS (SELECT 1 FROM prompt.workspace_members m WHERE m.user_id = u.id) \
                   AND NOT EXISTS (SELECT 1 FROM prompt.workspace_members m WHERE m.user_id = u.id \
                                   AND NOT m.workspace_id = ANY ($2))) LIMIT 1",
                &[key.into(), mine.clone().into()],
            )
        }),
        "conversations" => as_owner(|| {
            Spi::get_one_with_args::<String>(
                "SELECT c.id::text FROM prompt.conversations c WHERE c.parent_id = $1 AND NOT c.workspace_id = ANY ($2) LIMIT 1",
                &[key.into(), mine.clone().into()],
            )
        }),
        _ => Ok(None),
    };
    let Ok(Some(other)) = blocked else { return };
    let what = if table == "users" {
        format!("user {id} is the steward of agent {other}, which another tenant reads")
    } else {
        format!("conversation {id} is the parent of conversation {other}, of another tenant's workspace")
    };
    super::errors::raise(
        pgprompt_core::Error::new(pgprompt_core::Code::TenantWriteRefused, what)
            .detail("Deleting it would change a row that another tenant's compile reads (PostgreSQL's foreign-key actions run past row-level security).")
            .hint("An administrator (the extension's owner, or a role listed in prompt.administrators) can change shared rows."),
    );
}

/// Internal (the write policies of `prompt.tenants` and `prompt.administrators`, the guard
/// of `prompt.tenancy`): whether the current role administers the extension, whether
/// tenancy is on or off. Tenancy rows are an administrator's to write: a role that lists
/// itself as a tenant would choose what it reads once tenancy is on.
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, pg_temp)]
fn _administers() -> bool {
    administers()
}

/// Internal trigger helper: refuses a write of `prompt.tenancy` (`op`) by a role that does
/// not administer the extension (`administrator_required`, 42501).
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _tenancy_guard(op: Option<&str>) {
    if !administers() {
        refuse_not_administrator(&format!("{} of prompt.tenancy", op.unwrap_or("a write")));
    }
}

fn refuse_not_administrator(what: &str) -> ! {
    super::errors::raise(
        pgprompt_core::Error::new(
            pgprompt_core::Code::AdministratorRequired,
            format!("{what} is an administrator's"),
        )
        .detail("Tenancy is turned on and off by an administrator: the extension's owner, a role listed in prompt.administrators, a superuser or a BYPASSRLS role.")
        .hint("Ask an administrator to run SELECT prompt.set_tenancy(true) (or false)."),
    )
}

/// Turns tenancy on (`enabled`) or off, as an administrator; returns whether it is on. On,
/// every role that does not administer the extension reads and writes only the rows of the
/// workspaces `prompt.tenants` lists it for — nothing at all when it is listed nowhere.
/// The row is written as the tables' owner (the caller needs no grant on it), after the
/// table is checked for code pgprompt did not create.
#[pg_extern(volatile, strict, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn set_tenancy(enabled: bool) -> bool {
    super::session::require_updated();
    if !administers() {
        refuse_not_administrator(if enabled {
            "turning tenancy on"
        } else {
            "turning tenancy off"
        });
    }
    super::guard::refuse_foreign_code(&[c"tenancy"]);
    let role = current_role();
    as_owner(|| {
        let sql = if enabled {
            "INSERT INTO prompt.tenancy (enabled_by) SELECT pg_catalog.pg_get_userbyid($1) \
             WHERE NOT EXISTS (SELECT 1 FROM prompt.tenancy)"
        } else {
            "DELETE FROM prompt.tenancy WHERE $1 IS NOT NULL"
        };
        super::spi::spi(Spi::run_with_args(sql, &[role.into()]));
    });
    KNOWN.with(|k| k.borrow_mut().take());
    enabled
}
