//! The thin database layer: SQL functions, trigger checks, loading and sealing.
//! It loads rows, calls the core, and maps errors; it decides nothing itself.

pub mod api;
pub mod cache;
pub mod citus;
pub mod counts;
pub mod errors;
pub mod guard;
pub mod jsonb;
pub mod jsonb_ser;
pub mod load;
pub mod privileges;
pub mod responses;
pub mod seals;
pub mod session;
pub mod settings;
pub mod spi;
pub mod tenancy;
pub mod transcript;
pub mod triggers;
pub mod upgrade;
