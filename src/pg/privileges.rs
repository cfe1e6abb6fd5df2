//! Who holds what (README, "Security", the privilege matrix): nobody but the tables' owner
//! holds `TRIGGER`, `TRUNCATE`, `REFERENCES` or `MAINTAIN` on a `prompt` table. The install
//! and each update take them back (sql/finalize.sql); these two functions, run by the
//! extension's event triggers around every `GRANT` in the database, refuse one that gives
//! one of them again: the privileges standing before the statement are remembered, and
//! the statement is undone (`privilege_refused`, 42501) when it added one. A privilege
//! already standing (given with the event triggers disabled, a superuser's act) does not
//! block other grants; `prompt.security_check()` lists it.

use std::cell::RefCell;
use std::collections::BTreeSet;

use pgrx::prelude::*;

use super::errors::raise;
use pgprompt_core::{Code, Error};

/// The four privileges, as `aclexplode` spells them, held on a `prompt` table by a role
/// other than its owner: (table, role, privilege); and `REFERENCES` on one of its columns
/// (`table(column)`), which lets a foreign key reach the table as the table's does.
const STANDING: &str = "SELECT c.relname::text, \
       CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END, \
       a.privilege_type \
  FROM pg_catalog.pg_class c, LATERAL pg_catalog.aclexplode(c.relacl) a \
 WHERE c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = 'prompt') \
   AND a.grantee <> c.relowner AND a.privilege_type IN ('TRIGGER', 'TRUNCATE', 'REFERENCES', 'MAINTAIN') \
 UNION ALL \
SELECT c.relname::text || '(' || pg_catalog.quote_ident(t.attname) || ')', \
       CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END, \
       a.privilege_type \
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute t ON t.attrelid = c.oid AND t.attacl IS NOT NULL, \
       LATERAL pg_catalog.aclexplode(t.attacl) a \
 WHERE c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = 'prompt') \
   AND a.grantee <> c.relowner AND a.privilege_type = 'REFERENCES'";

type Standing = BTreeSet<(String, String, String)>;

thread_local! {
    /// What stood when the running `GRANT` started (set by [`_grants_before`]).
    static BEFORE: RefCell<Option<Standing>> = const { RefCell::new(None) };
}

/// What stands now; `None` when it could not be read (the guard then refuses: it fails
/// closed).
fn standing() -> Option<Standing> {
    Spi::connect(|client| {
        let rows = client.select(STANDING, None, &[])?;
        let mut out = Standing::new();
        for row in rows {
            let get = |i: usize| row.get::<String>(i).ok().flatten().unwrap_or_default();
            out.insert((get(1), get(2), get(3)));
        }
        Ok::<_, pgrx::spi::SpiError>(out)
    })
    .ok()
}

/// Whether this statement's start remembered what stood (`_grants_snapshot` sets the
/// setting, local to the transaction, so a failed `GRANT` leaves nothing a later one reads).
fn started() -> bool {
    Spi::get_one::<String>("SELECT pg_catalog.current_setting('pgprompt_grants.pending', true)")
        .ok()
        .flatten()
        .is_some_and(|v| v == "on")
}

/// Internal (the event trigger `pgprompt_privileges_before`, at the start of a `GRANT`):
/// remembers the owner's privileges others hold now.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _grants_before() {
    let now = standing();
    BEFORE.with(|b| b.replace(now));
}

/// Internal (the event trigger `pgprompt_privileges`, at the end of a `GRANT`): refuses
/// the statement when it gave one of the owner's privileges to another role
/// (`privilege_refused`, 42501); nothing it did stays.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _grants_after() {
    // Remembered by this statement's start, or nothing (a start skipped, or one whose read
    // failed): then every standing privilege counts as added.
    let remembered = BEFORE.with(|b| b.take()).filter(|_| started());
    let before = remembered.unwrap_or_default();
    let Some(now) = standing() else {
        raise(Error::new(
            Code::PrivilegeRefused,
            "the privileges on pgprompt's tables could not be read; the GRANT is refused",
        ));
    };
    let Some((table, who, privilege)) = now.difference(&before).next().cloned() else {
        return;
    };
    raise(
        Error::new(
            Code::PrivilegeRefused,
            format!("{privilege} on prompt.{table} is the tables' owner's alone, not {who}'s"),
        )
        .detail("A trigger or a foreign key of another role's would run inside pgprompt's writes, and TRUNCATE passes row-level security by.")
        .hint("Grant what a writer needs by name: GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO role;"),
    );
}
