#![forbid(unsafe_code)]
//! The compiler core: pure Rust, no pgrx. Rows in (a [`context::Context`] and a
//! [`context::HistorySource`]), the request out. Tested with plain `cargo test`.

pub mod blocks;
pub mod budget;
pub mod compiler;
pub mod context;
pub mod envelope;
pub mod error;
pub mod estimate;
pub mod fields;
pub mod history;
pub mod items;
pub mod macros;
pub mod result;
pub mod rounds;
pub mod sealed;
pub mod template;
pub mod tokens;
pub mod voice;
pub mod wire;

pub use compiler::{compile, Estimate, Output, Purpose, Seal};
pub use error::{Code, Error, Result};

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod golden;
#[cfg(test)]
mod golden_assembly;
#[cfg(test)]
mod golden_budget;
#[cfg(test)]
mod golden_voices;
#[cfg(test)]
pub mod scenario;
