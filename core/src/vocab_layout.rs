//! The layout of a vocabulary's tables, shared word for word by the build script that
//! writes them (`core/build.rs`, as its module `layout`) and the encoder that reads them in
//! place (`encoder.rs`): a token's hash and where its search starts.
//!
//! The build script compiles this file too: it names nothing of the crate.

/// The pattern of the pre-tokenizer that stands for tiktoken's `\s+(?!\S)`: a match of
/// it gives back its last character (regex-automata has no look-ahead).
pub(crate) const LOOKAHEAD_PATTERN: usize = 1;

/// A token's hash: a multiply-rotate over its bytes eight at a time, with its length
/// (the same on every platform, so the table written at build time is read at run time).
pub(crate) fn token_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    h ^ (h >> 31)
}

/// The first slot a token's search reads, in a table of `1 << bits` slots: the hash's
/// high bits (where the multiplications leave the most mixed ones).
pub(crate) fn first_slot(hash: u64, bits: u32) -> usize {
    (hash >> (64 - bits)) as usize
}
