//! Whether this server is a node of a Citus cluster (`pgprompt.citus`, registered with the
//! other settings in `settings.rs`): a compile's statements then take the forms Citus plans
//! well (docs/scale-out.md): its first read one distributed table a statement
//! (`load/single_table.rs`), every statement planned with its arguments (`spi.rs`).

use pgrx::guc::GucSetting;

/// The setting itself.
pub static CITUS: GucSetting<bool> = GucSetting::<bool>::new(false);

/// Whether the setting is on.
pub fn on() -> bool {
    CITUS.get()
}
