//! tiktoken's byte-pair encoding, counted over tables read where they lie: the library's
//! read-only data, written at build time (`core/build.rs`). A backend's first count
//! decodes nothing and allocates no table; it touches the pages its texts need, which
//! every backend shares through the page cache.
//!
//! A text is split by tiktoken's pre-tokenizer (a dense DFA, validated once per process)
//! and each piece counted as tiktoken counts it: one token when the piece is one, else
//! the merge of the lowest-ranked adjacent pair, leftmost first, until no pair is a token
//! (a heap keeps this O(n log n) where tiktoken's scan is quadratic, asking the host every
//! 65,536 steps whether to stop; a piece over [`MAX_PIECE`] is merged in chunks). The
//! parity tests in `tokens.rs` hold it to tiktoken-rs and to the reference Python tiktoken.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::LazyLock;

use regex_automata::dfa::{dense, Automaton};
use regex_automata::{Anchored, Input};

use crate::vocab_layout as layout;

// The tables and the DFA are written little-endian (core/build.rs).
#[cfg(target_endian = "big")]
compile_error!("pgprompt's tokenizer tables are little-endian");

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
            splitter: LazyLock::new(|| Splitter::load(&DFA.bytes)),
        }
    }};
}

/// One vocabulary's tables (layout in `core/build.rs`) and its pre-tokenizer, checked
/// once per process on first use.
pub(crate) struct Vocabulary {
    bytes: &'static [u8],
    ends: &'static [u8],
    slots: &'static [u8],
    splitter: LazyLock<Splitter>,
}

pub(crate) static CL100K_BASE: Vocabulary = vocabulary!("cl100k_base");
pub(crate) static O200K_BASE: Vocabulary = vocabulary!("o200k_base");

/// The pre-tokenizer, read in place from the library.
struct Splitter(dense::DFA<&'static [u32]>);

impl Splitter {
    fn load(serialized: &'static [u8]) -> Splitter {
        // The DFA was written by this crate's build script for this layout; checking it
        // reads every page once, per process.
        let (dfa, _) = dense::DFA::from_bytes(serialized).expect("the build script's DFA loads");
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
    /// Checks the pre-tokenizer now (it is otherwise checked on first use).
    pub(crate) fn warm(&self) {
        LazyLock::force(&self.splitter);
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
        let dfa = &self.splitter.0;
        let mut at = 0;
        std::iter::from_fn(move || {
            if at >= text.len() {
                return None;
            }
            let rest = &text[at..];
            let input = Input::new(rest).anchored(Anchored::Yes);
            // Every character starts a match of one of the patterns (the look-ahead one
            // matches two or more); a text the DFA could not split (none exists) would be
            // left as one piece, counted exactly.
            let end = match dfa.try_search_fwd(&input) {
                Ok(Some(m)) if m.pattern().as_usize() == layout::LOOKAHEAD_PATTERN => {
                    let end = m.offset();
                    end - rest[..end].chars().next_back().map_or(0, char::len_utf8)
                }
                Ok(Some(m)) => m.offset(),
                _ => 0,
            };
            let end = if end == 0 { rest.len() } else { end };
            at += end;
            Some(&rest[..end])
        })
    }

    /// The number of tokens tiktoken encodes `piece` (one pre-tokenized piece) into. A
    /// piece longer than [`MAX_PIECE`] (a run of one class of characters with no break:
    /// no text of any real shape) is counted in chunks of that length, cut at character
    /// boundaries: its count may then differ from tiktoken's by a few tokens a chunk,
    /// where tiktoken itself would take quadratic time, and the merge's memory stays
    /// bounded (about 20 bytes a byte of the chunk).
    pub(crate) fn count_piece(&self, piece: &[u8]) -> usize {
        let mut rest = piece;
        let mut n = 0usize;
        while rest.len() > MAX_PIECE {
            let mut cut = MAX_PIECE;
            while cut > 0 && rest[cut] & 0xC0 == 0x80 {
                cut -= 1;
            }
            n = n.saturating_add(self.merge_count(&rest[..cut]));
            rest = &rest[cut..];
        }
        n.saturating_add(self.merge_count(rest))
    }

    /// tiktoken's count of one piece: one token when the piece is one, else its merge.
    fn merge_count(&self, piece: &[u8]) -> usize {
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
        // Positions are u32: a piece is at most MAX_PIECE bytes.
        let end = n as u32;
        let mut next: Vec<u32> = (1..=end).collect();
        let mut prev: Vec<u32> = (0..end).map(|i| i.wrapping_sub(1)).collect();
        let mut pair = vec![u32::MAX; n];
        let mut heap = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            if let Some(r) = self.rank(&piece[i..i + 2]) {
                pair[i] = r;
                heap.push(Reverse((r, i as u32)));
            }
        }
        let mut parts = n;
        let mut popped = 0u32;
        while let Some(Reverse((r, i))) = heap.pop() {
            popped = popped.wrapping_add(1);
            if popped.is_multiple_of(1 << 16) {
                crate::bounds::interrupt();
            }
            let i = i as usize;
            if pair[i] != r {
                continue; // a pair since merged away or re-ranked
            }
            let j = next[i] as usize;
            let k = next[j];
            next[i] = k;
            if k < end {
                prev[k as usize] = i as u32;
            }
            pair[j] = u32::MAX;
            parts -= 1;
            pair[i] = match k < end {
                true => self.pair_rank(piece, i, next[k as usize] as usize, &mut heap),
                false => u32::MAX,
            };
            if i > 0 {
                let p = prev[i] as usize;
                pair[p] = self.pair_rank(piece, p, k as usize, &mut heap);
            }
        }
        parts
    }

    /// The rank of `piece[start..end]` as a pair to merge, queued when it is a token.
    fn pair_rank(&self, piece: &[u8], start: usize, end: usize, heap: &mut BinaryHeap<Reverse<(u32, u32)>>) -> u32 {
        match self.rank(&piece[start..end]) {
            Some(r) => {
                heap.push(Reverse((r, start as u32)));
                r
            }
            None => u32::MAX,
        }
    }
}

/// The longest piece merged whole (see [`Vocabulary::count_piece`]).
pub(crate) const MAX_PIECE: usize = 1 << 20;

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
