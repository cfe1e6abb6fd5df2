//! pgprompt: compiles the exact request a language model gets for a conversation turn,
//! inside PostgreSQL, next to the rows it reads.
//!
//! The compiler is the `pgprompt-core` crate (`core/`: no pgrx, no unsafe); `pg` is the thin database layer that loads
//! rows, calls the core and maps errors. The schema is `sql/schema.sql`, the shipped
//! model profiles `sql/profiles.sql`; triggers and comments are `sql/finalize.sql`.

pub mod pg;

::pgrx::pg_module_magic!(name, version);

pgrx::extension_sql_file!("../sql/schema.sql", name = "schema", bootstrap);
pgrx::extension_sql_file!("../sql/profiles.sql", name = "profiles", requires = ["schema"]);
pgrx::extension_sql_file!("../sql/finalize.sql", name = "finalize", finalize);

/// With `shared_preload_libraries = 'pgprompt'`, the tokenizers' pre-tokenizers are
/// checked once in the postmaster and every backend inherits them; otherwise each backend
/// checks the one it needs on first use (about 1 ms: their tables are read in place).
#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // An error's DETAIL says what the user did; a Rust backtrace (captured when
    // RUST_BACKTRACE is set in the server's environment) says what the code did, and is
    // no user's to read. std reads RUST_LIB_BACKTRACE first, once, at the first capture.
    std::env::set_var("RUST_LIB_BACKTRACE", "0");
    pg::settings::register();
    // Long work in the core (counting, rendering, pretty printing) asks here whether the
    // statement was cancelled or timed out: CHECK_FOR_INTERRUPTS raises 57014 then.
    pgprompt_core::set_interrupt_check(check_for_interrupts);
    // SAFETY: a plain read of a PostgreSQL global from the backend's (only) thread,
    // during library load.
    if unsafe { pgrx::pg_sys::process_shared_preload_libraries_in_progress } {
        pg::api::warm_tokenizers();
    }
}

/// CHECK_FOR_INTERRUPTS: raises 57014 when the statement was cancelled or timed out.
fn check_for_interrupts() {
    pgrx::check_for_interrupts!();
}

#[cfg(feature = "pg_test")]
#[pgrx::pg_schema]
mod tests {
    include!("../pgrx-tests/sql_surface.rs");
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
