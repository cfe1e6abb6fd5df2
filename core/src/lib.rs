#![forbid(unsafe_code)]
#![deny(unreachable_pub)]
#![deny(missing_docs)]
//! The pgprompt compiler core: rows in, the exact request body out. No PostgreSQL, no
//! `unsafe`; the extension (the crate at the repository's top) loads rows, calls
//! [`compile`], stores seals and maps [`Error`]s to SQLSTATEs.
//!
//! The stages, in the order data flows (docs/design.md; ARCHITECTURE.md is the map):
//! - [`reads`]: which rows a compile reads, step by step ([`reads::load`]; the extension
//!   runs the queries, a [`reads::Store`]);
//! - [`rows`]: the typed rows a compile reads, read from the extension's [`Columns`] by
//!   `columns` and parsed once at the edge by [`fields`] (a turn's JSON columns),
//!   [`rounds`] and [`template`];
//! - [`blocks`], [`macros`], [`voice`], [`envelope`]: what each block renders;
//! - [`history`] and [`budget`]: the entries of history and how many fit;
//! - [`compile`]: the pipeline — floors, selection, assembly, the gate, continuations;
//! - [`wire`]: the body on the provider's wire; [`estimate`] its count;
//! - [`seal`]: what a seal freezes, and how sealed bodies share storage.

pub(crate) mod blocks;
pub mod bounds;
pub(crate) mod budget;
pub mod cache;
mod checks;
mod columns;
mod compile;
pub mod context;
pub mod envelope;
mod error;
pub(crate) mod estimate;
pub(crate) mod fields;
pub(crate) mod history;
pub(crate) mod items;
pub(crate) mod json_at;
pub(crate) mod json_input;
pub mod kinds;
pub(crate) mod macros;
pub(crate) mod options;
pub(crate) mod part_json;
pub(crate) mod profile;
pub mod reads;
pub mod response;
pub(crate) mod rounds;
pub mod rows;
pub mod seal;
pub(crate) mod template;
pub mod tokens;
pub mod transcript;
pub(crate) mod voice;
mod wire;

pub use checks::{
    check_document, check_options_wire, check_request_options, check_round, check_template, own_entries, row_tokens,
    template_problems,
};
pub use columns::Columns;
pub use compile::{
    compile,
    compiler::{Output, Purpose, SealDraft},
    full_request,
    skills::skills_for_turn,
    stateful::answerer as stateful_answerer,
};
pub use error::{quote, Code, Error, Result};
pub use fields::{check_shape, check_turn, preface_json};
pub use history::{stored_entries, HistorySource, StoredCount};
pub use rounds::{check_place as check_round_place, Round};
pub use template::Problem as TemplateProblem;
pub use wire::{count::count_body, json::pretty, read_response, shape::Body};

#[cfg(test)]
mod testing;

// The crate's suites (tests/: golden, property, fuzz), compiled into its own test build:
// they set what the crate keeps to itself (a turn's columns, a model's lifecycle)
// without widening its public face, and name it as a client would (`pgprompt_core::`).
#[cfg(test)]
extern crate self as pgprompt_core;
#[cfg(test)]
#[path = "../tests/fuzz.rs"]
mod suite_fuzz;
#[cfg(test)]
#[path = "../tests/golden.rs"]
mod suite_golden;
#[cfg(test)]
#[path = "../tests/golden_assembly.rs"]
mod suite_golden_assembly;
#[cfg(test)]
#[path = "../tests/golden_budget.rs"]
mod suite_golden_budget;
#[cfg(test)]
#[path = "../tests/golden_refusals.rs"]
mod suite_golden_refusals;
#[cfg(test)]
#[path = "../tests/golden_voices.rs"]
mod suite_golden_voices;
#[cfg(test)]
#[path = "../tests/one_cost.rs"]
mod suite_one_cost;
#[cfg(test)]
#[path = "../tests/sealed_prefix.rs"]
mod suite_sealed_prefix;
#[cfg(test)]
#[path = "../tests/seed_rules.rs"]
mod suite_seed_rules;
#[cfg(test)]
#[path = "../tests/stable_trim.rs"]
mod suite_stable_trim;
#[cfg(test)]
#[path = "../tests/thinking.rs"]
mod suite_thinking;

#[cfg(test)]
mod suites {
    /// Every file of tests/ is one of the suites above: with `autotests = false`, a suite
    /// left out of lib.rs would never run.
    #[test]
    fn every_suite_in_tests_is_compiled_into_the_crate() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("lib.rs");
        let mut files: Vec<String> = std::fs::read_dir(root.join("tests"))
            .expect("tests/")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".rs"))
            .collect();
        files.sort();
        assert!(!files.is_empty());
        for f in files {
            assert!(
                lib.contains(&format!("#[path = \"../tests/{f}\"]")),
                "tests/{f} is not compiled into the crate's tests (src/lib.rs)"
            );
        }
    }
}
