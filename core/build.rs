//! Writes each vocabulary's tables for the encoder to read in place (`src/encoder.rs`):
//! nothing is decoded, built or allocated when a backend first counts.
//!
//! For each of cl100k_base and o200k_base, into `OUT_DIR`:
//! - `<name>.bytes`: every token's bytes, in rank order, end to end;
//! - `<name>.ends`: for each rank, where its bytes end (u32, little endian);
//! - `<name>.slots`: an open-addressing table of `1 << bits` u32 slots (rank + 1, or 0
//!   for empty), at most 40% full, searched linearly from `first_slot(token_hash(..))`;
//! - `<name>.dfa`: the pre-tokenizer, tiktoken's pattern as a minimized dense DFA
//!   (regex-automata's little-endian serialization), matched anchored, leftmost first.
//!
//! The vocabularies are bpe-openai's (the files OpenAI publishes for tiktoken,
//! THIRD-PARTY-NOTICES.md); the ranks are their lines' order, as tiktoken's are.

use std::path::Path;

use regex_automata::dfa::{dense, StartKind};
use regex_automata::MatchKind;

#[path = "src/vocab_layout.rs"]
mod layout;

/// tiktoken's pre-tokenizer patterns, spelt as bpe-openai spells them for a regex engine
/// without look-ahead: `\s+(?!\S)` becomes `\s+$` in the first pattern and `\s+\s`
/// (whose match gives back its last character) as the second.
const CL100K: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+$"
);
const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+$"
);

fn main() {
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    write_vocabulary(out, "cl100k_base", &bpe_openai::cl100k_base().bpe, CL100K);
    write_vocabulary(out, "o200k_base", &bpe_openai::o200k_base().bpe, O200K);
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/vocab_layout.rs");
}

fn write_vocabulary(out: &Path, name: &str, bpe: &bpe_openai::byte_pair_encoding::BytePairEncoding, pattern: &str) {
    let n = bpe.num_tokens();
    let tokens: Vec<&[u8]> = (0..n as u32).map(|rank| bpe.token_bytes(rank)).collect();
    let mut bytes = Vec::new();
    let mut ends = Vec::with_capacity(4 * n);
    for token in &tokens {
        bytes.extend_from_slice(token);
        ends.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    }
    let bits = (n * 5 / 2).next_power_of_two().trailing_zeros();
    let mask = (1usize << bits) - 1;
    let mut slots = vec![0u32; 1 << bits];
    let mut longest = 0;
    for (rank, token) in tokens.iter().enumerate() {
        let mut slot = layout::first_slot(layout::token_hash(token), bits);
        let mut probes = 1;
        while slots[slot] != 0 {
            assert!(tokens[slots[slot] as usize - 1] != *token, "{name}: token {rank} twice");
            slot = (slot + 1) & mask;
            probes += 1;
        }
        slots[slot] = rank as u32 + 1;
        longest = longest.max(probes);
    }
    assert!(longest <= 48, "{name}: a search of {longest} slots; change the hash");
    let slots: Vec<u8> = slots.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(out.join(format!("{name}.bytes")), bytes).expect("writes OUT_DIR");
    std::fs::write(out.join(format!("{name}.ends")), ends).expect("writes OUT_DIR");
    std::fs::write(out.join(format!("{name}.slots")), slots).expect("writes OUT_DIR");
    let patterns = [pattern, r"\s+\s", r"\s+"];
    assert_eq!(patterns[layout::LOOKAHEAD_PATTERN], r"\s+\s");
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::LeftmostFirst)
                .start_kind(StartKind::Anchored)
                .minimize(true),
        )
        .build_many(&patterns)
        .expect("tiktoken's patterns compile");
    let (serialized, pad) = dfa.to_bytes_little_endian();
    std::fs::write(out.join(format!("{name}.dfa")), &serialized[pad..]).expect("writes OUT_DIR");
}
