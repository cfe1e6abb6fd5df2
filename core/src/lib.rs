#![forbid(unsafe_code)]
#![deny(unreachable_pub)]
#![deny(missing_docs)]
//! The pgprompt compiler core: rows in, the exact request body out. No PostgreSQL, no
//! `unsafe`; the extension (the crate at the repository's top) loads rows, calls
//! [`compile`], stores seals and maps [`Error`]s to SQLSTATEs.
//!
//! The face is what this file re-exports; every module is private. The stages, in the
//! order data flows (docs/design.md; ARCHITECTURE.md is the map):
//! - `reads`: which rows a compile reads, step by step ([`load`]; the extension runs the
//!   queries, a [`Store`]);
//! - `rows`: the typed rows a compile reads, read from the extension's [`Columns`] by
//!   `columns` and parsed once at the edge by `fields` (a turn's JSON columns), `rounds`
//!   and `template`; `checks`: the same parsers as the write triggers run them;
//! - `blocks`, `macros`, `voice`, `envelope`: what each block renders;
//! - `history` and `budget`: the entries of history and how many fit;
//! - `compile`: the pipeline — floors, selection, assembly, the gate, continuations;
//! - `wire`: the body on the provider's wire; `estimate` its count;
//! - `seal`: what a seal freezes; `storage`: how sealed bodies share their nodes;
//!   `cache`: the prompt-cache replay; `tokens`: counting and the memo.

pub(crate) mod blocks;
pub(crate) mod bounds;
pub(crate) mod budget;
pub(crate) mod cache;
mod checks;
pub(crate) mod clearing;
mod columns;
mod compile;
pub(crate) mod context;
mod encoder;
pub(crate) mod envelope;
mod error;
pub(crate) mod estimate;
pub(crate) mod fields;
pub(crate) mod history;
pub(crate) mod items;
pub(crate) mod json_at;
pub(crate) mod json_input;
pub(crate) mod kinds;
pub(crate) mod laid;
pub(crate) mod macros;
pub(crate) mod options;
pub(crate) mod part_json;
pub(crate) mod profile;
pub(crate) mod reads;
pub(crate) mod response;
pub(crate) mod rounds;
pub(crate) mod rows;
pub(crate) mod seal;
mod storage;
pub(crate) mod template;
pub(crate) mod tokens;
pub(crate) mod transcript;
pub(crate) mod vocab_layout;
pub(crate) mod voice;
mod wire;

// The write-time checks: one call, a variant per trigger.
pub use crate::{
    checks::{check, own_entries, row_tokens, template_problems, Write},
    template::Problem as TemplateProblem,
};
// What a compile reads: the steps that read it (a Store runs each statement), the rows
// read from the extension's Columns, their kinds, the context they make, history's source.
pub use crate::{
    columns::Columns,
    context::{CaptureState, Captured, Context, HistoryTurn, Host},
    history::{HistorySource, StoredCount},
    kinds::{CacheTtl, Mechanism, Mode, Provider, Role, TurnKind, UserKind, Wire},
    reads::{load, AnswererRows, First, Loaded, ModelRows, PreviousRequest, Read, References, Store},
    rounds::Round,
    rows::{Conversation, Document, Memory, Model, Skill, Turn, TurnSkill, User, Workspace},
};
// The compile and what it returns: the body, its count and reading, what the seal keeps
// and how its body is stored over the conversation's nodes.
pub use crate::{
    cache::{
        layout_matches as cache_layout_matches, replay as replay_cache, ttl_seconds as cache_ttl_seconds,
        Laid as CacheLaid, Request as CacheRequest, Row as CacheRow, Sent as SentRequest,
    },
    compile::{
        compile,
        compiler::{Output, Purpose},
        skills::skills_for_turn,
    },
    laid::Catalog as CacheCatalog,
    seal::{
        convert_02 as convert_seal_02, model_02 as model_of_seal_02, Frozen, Pieces as CachePieces, SealDraft, Sealed,
        Stateful,
    },
    storage::{
        continued_requests, dead_seal_nodes, lay_next_request, lay_out_seal, read_frozen, read_sealed_body,
        read_sealed_layouts, read_sealed_pieces, sent_pieces, LaidSeal, SealLayout, SealNode, SealNodes, SealPointers,
    },
    wire::{json::pretty, read_response, shape::Body, speaks},
};
// A provider's response, the summarizer's transcript, the errors, and the host's side:
// bounded work and the envelope's escaping.
pub use crate::{
    bounds::set_interrupt_check,
    clearing::Record as ClearedRecord,
    envelope::{escape as escape_envelope, unescape as unescape_envelope},
    error::{Code, Error, Result},
    response::{Response, Usage},
    tokens::{count as count_tokens, warm as warm_tokenizers, Memo},
    transcript::{transcript, TranscriptRows},
};

#[cfg(test)]
mod testing;

// The crate's suites (tests/: golden, property, fuzz), compiled into its own test build:
// they set what the crate keeps to itself (a turn's columns, a model's lifecycle)
// without widening its public face, and name it as a client would (`pgprompt_core::`).
#[cfg(test)]
extern crate self as pgprompt_core;
#[cfg(test)]
#[path = "../tests/clearing.rs"]
mod suite_clearing;
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
