//! tiktoken's byte-pair encoding, counted over tables read where they lie: the library's
//! read-only data, written at build time (`core/build.rs`). A backend's first count
//! decodes nothing and allocates no table; it touches the pages its texts need, which
//! every backend shares through the page cache.
//!
//! A text is split by tiktoken's pre-tokenizer (a dense DFA, validated once per process)
//! and each piece counted as tiktoken counts it: one token when the piece is one, else
//! the merge of the lowest-ranked adjacent pair, leftmost first, until no pair is a token
//! (a heap keeps this O(n log n) over a piece of a million spaces, where tiktoken's scan
//! is quadratic). The parity tests in `tokens.rs` hold it to tiktoken-rs and to the
//! reference Python tiktoken.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::LazyLock;

use regex_automata::dfa::{dense, Automaton};
use regex_automata::{Anchored, Input};

use crate::vocab_layout as layout;

/// Bytes aligned for a `u32` read in place (a serialized DFA's transitions).
#[repr(C)]
struct Aligned<B: ?Sized> {
    _align: [u32; 0],
    bytes: B,
}

macro_rules! vocabulary {
    ($name:literal) => {{
        static DFA: &Aligned<[u8]> = &Aligned {
            _align: [],
            bytes: *include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".dfa")),
        };
        Vocabulary {
            bytes: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".bytes")),
            ends: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".ends")),
            slots: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".slots")),
            dfa: &DFA.bytes,
        }
    }};
}

/// One vocabulary's tables (layout in `core/build.rs`).
pub(crate) struct Vocabulary {
    bytes: &'static [u8],
    ends: &'static [u8],
    slots: &'static [u8],
    dfa: &'static [u8],
}

pub(crate) static CL100K_BASE: Vocabulary = vocabulary!("cl100k_base");
pub(crate) static O200K_BASE: Vocabulary = vocabulary!("o200k_base");

static CL100K_SPLITTER: LazyLock<Splitter> = LazyLock::new(|| Splitter::load(&CL100K_BASE));
static O200K_SPLITTER: LazyLock<Splitter> = LazyLock::new(|| Splitter::load(&O200K_BASE));

/// The pre-tokenizer, read in place from the library.
struct Splitter(dense::DFA<&'static [u32]>);

impl Splitter {
    fn load(vocabulary: &'static Vocabulary) -> Splitter {
        // The DFA was written by this crate's build script for this layout; checking it
        // reads every page once, per process.
        let (dfa, _) = dense::DFA::from_bytes(vocabulary.dfa).expect("the build script's DFA loads");
        Splitter(dfa)
    }
}

/// The little-endian `u32` at `index` of `words`.
fn word(words: &[u8], index: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&words[4 * index..4 * index + 4]);
    u32::from_le_bytes(w)
}

impl Vocabulary {
    fn splitter(&'static self) -> &'static Splitter {
        if std::ptr::eq(self, &CL100K_BASE) {
            &CL100K_SPLITTER
        } else {
            &O200K_SPLITTER
        }
    }

    /// Validates the pre-tokenizer now (it is otherwise validated on first use).
    pub(crate) fn warm(&'static self) {
        let _ = self.splitter();
    }

    /// The bytes of the token ranked `rank`.
    fn token(&self, rank: u32) -> &'static [u8] {
        let r = rank as usize;
        let start = if r == 0 { 0 } else { word(self.ends, r - 1) as usize };
        &self.bytes[start..word(self.ends, r) as usize]
    }

    /// The rank of the token spelt `bytes`, if one is.
    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let size = self.slots.len() / 4;
        let mut slot = layout::first_slot(layout::token_hash(bytes), size.trailing_zeros());
        loop {
            let entry = word(self.slots, slot);
            if entry == 0 {
                return None;
            }
            if self.token(entry - 1) == bytes {
                return Some(entry - 1);
            }
            slot = (slot + 1) & (size - 1);
        }
    }

    /// The pieces tiktoken's pre-tokenizer splits `text` into, in order.
    pub(crate) fn pieces<'t>(&'static self, text: &'t str) -> impl Iterator<Item = &'t str> {
        let dfa = &self.splitter().0;
        let mut at = 0;
        std::iter::from_fn(move || {
            if at >= text.len() {
                return None;
            }
            let rest = &text[at..];
            let input = Input::new(rest).anchored(Anchored::Yes);
            // Every character starts a match of one of the patterns; a text the DFA
            // could not split (none exists) is left as one piece, counted exactly.
            let mut end = match dfa.try_search_fwd(&input) {
                Ok(Some(m)) if m.offset() > 0 => {
                    let mut end = m.offset();
                    if m.pattern().as_usize() == layout::LOOKAHEAD_PATTERN {
                        end -= rest[..end].chars().next_back().map_or(0, char::len_utf8);
                    }
                    end
                }
                _ => rest.len(),
            };
            if end == 0 {
                end = rest.len();
            }
            at += end;
            Some(&rest[..end])
        })
    }

    /// The number of tokens tiktoken encodes `piece` (one pre-tokenized piece) into.
    pub(crate) fn count_piece(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        if n <= 1 {
            return n;
        }
        if self.rank(piece).is_some() {
            return 1;
        }
        // Parts start at every byte; `next[i]` is where the part starting at `i` ends,
        // `prev[i]` where the one before it starts, `pair[i]` the rank of the part at `i`
        // merged with the next (u32::MAX when that is no token, or `i` starts no part).
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut pair = vec![u32::MAX; n];
        let mut heap = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            if let Some(r) = self.rank(&piece[i..i + 2]) {
                pair[i] = r;
                heap.push(Reverse((r, i)));
            }
        }
        let mut parts = n;
        while let Some(Reverse((r, i))) = heap.pop() {
            if pair[i] != r {
                continue; // a pair since merged away or re-ranked
            }
            let j = next[i];
            let k = next[j];
            next[i] = k;
            if k < n {
                prev[k] = i;
            }
            pair[j] = u32::MAX;
            parts -= 1;
            pair[i] = if k < n {
                self.pair_rank(piece, i, next[k], &mut heap)
            } else {
                u32::MAX
            };
            if i > 0 {
                let p = prev[i];
                pair[p] = self.pair_rank(piece, p, k, &mut heap);
            }
        }
        parts
    }

    /// The rank of `piece[start..end]` as a pair to merge, queued when it is a token.
    fn pair_rank(&self, piece: &[u8], start: usize, end: usize, heap: &mut BinaryHeap<Reverse<(u32, usize)>>) -> u32 {
        match self.rank(&piece[start..end]) {
            Some(r) => {
                heap.push(Reverse((r, start)));
                r
            }
            None => u32::MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_is_found_at_its_rank() {
        for vocabulary in [&CL100K_BASE, &O200K_BASE] {
            let n = vocabulary.ends.len() / 4;
            assert!(n > 100_000);
            for rank in 0..n as u32 {
                assert_eq!(vocabulary.rank(vocabulary.token(rank)), Some(rank));
            }
            assert_eq!(vocabulary.rank(b"no such token, surely not one"), None);
        }
    }

    #[test]
    fn every_byte_is_a_token() {
        for vocabulary in [&CL100K_BASE, &O200K_BASE] {
            for b in 0..=255u8 {
                assert!(vocabulary.rank(&[b]).is_some(), "byte {b}");
            }
        }
    }
}
