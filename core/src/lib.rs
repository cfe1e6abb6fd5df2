#![forbid(unsafe_code)]
#![deny(unreachable_pub)]
#![deny(missing_docs)]
//! The pgprompt compiler core: rows in, the exact request body out. No PostgreSQL, no
//! `unsafe`; the extension (the crate at the repository's top) loads rows, calls
//! [`compile`], stores seals and maps [`Error`]s to SQLSTATEs.
//!
//! The stages, in the order data flows (docs/design.md; ARCHITECTURE.md is the map):
//! - [`reads`]: which rows a compile reads, step by step (the extension runs the queries);
//! - [`rows`]: the typed rows a compile reads, parsed once at the edge by [`fields`]
//!   (a turn's JSON columns), [`rounds`] and [`template`];
//! - [`blocks`], [`macros`], [`voice`], [`envelope`]: what each block renders;
//! - [`history`] and [`budget`]: the entries of history and how many fit;
//! - [`compile`]: the pipeline — floors, selection, assembly, the gate, continuations;
//! - [`wire`]: the body on the provider's wire; [`estimate`] its count;
//! - [`seal`]: what a seal freezes, and how sealed bodies share storage.

pub(crate) mod blocks;
pub mod bounds;
pub(crate) mod budget;
pub mod cache;
pub mod compile;
pub mod context;
pub mod envelope;
pub mod error;
pub(crate) mod estimate;
pub mod fields;
pub mod history;
pub(crate) mod items;
pub(crate) mod json_at;
pub(crate) mod json_input;
pub mod kinds;
pub mod macros;
pub mod options;
pub(crate) mod part_json;
pub mod profile;
pub mod reads;
pub mod response;
pub mod rounds;
pub mod rows;
pub mod seal;
pub mod template;
pub mod tokens;
pub mod transcript;
pub(crate) mod voice;
pub mod wire;

pub use compile::{compile, Explain, Output, Purpose, SealDraft};
pub use error::{Code, Error, Result};

#[cfg(any(test, feature = "testing"))]
pub mod testing;
