//! A request's cache layout as it is stored when the request is sent (SPEC §16.5: the cache
//! report and `explain_turn`'s prediction read what was stored, never a body pgprompt
//! rendered). A seal stores its elements' blocks with their nodes (each node's, as the node
//! holds it: unmarked, shared by every seal that repeats it) and its own with its row: the
//! blocks around its list and those of the elements its patches mark. Each is cut and
//! counted as the cache model cuts and counts a body (`cache::element`, `cache::frame`),
//! once, and carries the wire and tokenizer it was cut and counted with: read under
//! another, or written by another version, it is not read (the text is).
//!
//! The bytes: a version, the wire's and the tokenizer's places in their lists, then
//! counted lists of pieces. Every read is bounded by the bytes it is given and answers
//! `None` for anything it does not recognize.

use std::rc::Rc;

use serde_json::Value;

use crate::cache::{element, frame, Frame, Laid, Piece, Zone};
use crate::kinds::Wire;
use crate::tokens::{Counter, Memo, Tokenizer};

/// The layout's format, and what its blocks were cut with: a layout of another version is
/// not read (its text is). Bump it when what a block stores would read otherwise: the
/// encoding, how the cache model cuts a body into blocks (`cache::element`, `cache::frame`)
/// or hashes one, or a tokenizer's counts.
const VERSION: u8 = 2;

/// What a layout was cut with: the wire that says how to read a body into blocks, and the
/// tokenizer its blocks were counted with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Cut {
    pub(crate) wire: Wire,
    pub(crate) tokenizer: Tokenizer,
}

impl Cut {
    /// The cut of a request on `wire` for `model`: its tokenizer as the cache model counts.
    pub(crate) fn of(wire: Wire, model: Option<&crate::rows::Model>) -> Cut {
        Cut {
            wire,
            tokenizer: crate::cache::tokenizer_of(model),
        }
    }

    fn header(self, out: &mut Vec<u8>) {
        out.push(VERSION);
        out.push(code(self.wire.as_str()));
        out.push(code(self.tokenizer.name()));
    }

    fn matches(self, r: &mut Reader<'_>) -> Option<()> {
        let ok = r.u8()? == VERSION && r.u8()? == code(self.wire.as_str()) && r.u8()? == code(self.tokenizer.name());
        ok.then_some(())
    }
}

/// A wire's or a tokenizer's byte in a layout: of its name (as the catalog spells it),
/// never of its place in a list a new variant could shift (a test holds them apart).
fn code(name: &str) -> u8 {
    use sha2::Digest as _;
    sha2::Sha256::digest(name.as_bytes())[0]
}

fn parse(text: &str) -> Value {
    serde_json::from_str::<Value>(text).unwrap_or(Value::Null)
}

/// The layout of one element of a body's list, from its text (as its node holds it).
pub(crate) fn element_layout(cut: Cut, text: &str, memo: &mut Memo) -> Vec<u8> {
    let mut counter = Counter::new(cut.tokenizer, memo);
    let pieces = element(cut.wire, &parse(text), &mut counter);
    let mut out = Vec::with_capacity(3 + 4 + pieces.len() * 24);
    cut.header(&mut out);
    write_pieces(&pieces, &mut out);
    out
}

/// A seal's own layout, of the request its turn sent first: how many of the sealed
/// body's leading elements that request left out (`from`: a stateful turn sends its
/// chained form, the elements from its cut on; 0 for any other), the blocks around its
/// list (`frame_text`: its head, then its tail, as sent) and those of the elements its
/// patches mark (`marked`: index in the sealed body, text as sent).
pub(crate) fn seal_layout(
    cut: Cut,
    frame_text: &str,
    from: usize,
    marked: &[(usize, &str)],
    memo: &mut Memo,
) -> Vec<u8> {
    let mut counter = Counter::new(cut.tokenizer, memo);
    let f = frame(cut.wire, &parse(frame_text), &mut counter);
    let mut out = Vec::new();
    cut.header(&mut out);
    write_u32(&mut out, from);
    write_automatic(f.automatic, &mut out);
    write_pieces(&f.pieces, &mut out);
    write_u32(&mut out, marked.len());
    for (i, text) in marked {
        write_u32(&mut out, *i);
        write_pieces(&element(cut.wire, &parse(text), &mut counter), &mut out);
    }
    out
}

/// The frame of the request a seal's turn sends first, and how many of the sealed body's
/// leading elements it leaves out: a stateful turn's chained form (which places no
/// breakpoint), any other's body as sealed.
pub(crate) fn first_sent_frame(
    frozen: &crate::seal::Frozen,
    body: &crate::wire::Body,
) -> crate::error::Result<(String, usize)> {
    let Some(s) = &frozen.stateful else {
        return Ok((body.frame_text(), 0));
    };
    let chained = frozen
        .wire
        .form()
        .chained(body, s.previous_response_id.as_deref(), s.cut)?;
    let from = body.elements.len().saturating_sub(chained.elements.len());
    Ok((chained.frame_text(), from))
}

/// An element's blocks from its stored layout; `None` when it was cut otherwise or does
/// not read.
pub(crate) fn read_element(cut: Cut, bytes: &[u8]) -> Option<Vec<Piece>> {
    let mut r = Reader { b: bytes, at: 0 };
    cut.matches(&mut r)?;
    let pieces = r.pieces()?;
    r.done()?;
    Some(pieces)
}

/// The elements a seal's patches mark, by index, each with its blocks.
pub(crate) type Marked = Vec<(usize, Vec<Piece>)>;

/// What a seal's stored layout holds of the request its turn sent first: how many of the
/// sealed elements it left out, its frame, and its marked elements (by index).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SealRead {
    pub(crate) from: usize,
    pub(crate) frame: Frame,
    pub(crate) marked: Marked,
}

/// A seal's first request as its stored layout holds it.
pub(crate) fn read_seal(cut: Cut, bytes: &[u8]) -> Option<SealRead> {
    let mut r = Reader { b: bytes, at: 0 };
    cut.matches(&mut r)?;
    let from = r.u32()? as usize;
    let automatic = r.automatic()?;
    let pieces = r.pieces()?;
    let n = r.count()?;
    let mut marked = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        let i = r.u32()? as usize;
        marked.push((i, r.pieces()?));
    }
    r.done()?;
    Some(SealRead {
        from,
        frame: Frame { pieces, automatic },
        marked,
    })
}

/// The request a seal's turn sent first, from the seal's layout and its elements'
/// (`elements`: each sealed element's blocks, in order, before the seal's marked ones
/// replace theirs): those from `seal.from` on. `None` when a marked index is not an
/// element's, or the seal leaves out more elements than it holds.
pub(crate) fn laid(seal: SealRead, mut elements: Vec<Rc<Vec<Piece>>>) -> Option<Laid> {
    for (i, pieces) in seal.marked {
        *elements.get_mut(i)? = Rc::new(pieces);
    }
    if seal.from > elements.len() {
        return None;
    }
    elements.drain(..seal.from);
    Some(Laid::new(Rc::new(seal.frame), elements))
}

/// What a continuation's layout is cut with, and how many of its body's leading elements
/// are its seal's as sealed (the rest it appends: an in-turn summary, then its rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Continuing {
    pub(crate) cut: Cut,
    pub(crate) kept: usize,
}

/// A continuation's layout as stored with the newest round it carried
/// (`rounds.sent_layout`): how many of its seal's elements it keeps, how many it appends
/// and their digest, how many of those it shares with the turn's previous continuation
/// (`from`: that one's, when it appended the same first elements to as many of the
/// seal's), its request-level marker, and the blocks of the elements it appends past
/// them. Its frame's other blocks are its seal's: a continuation sends the seal's head,
/// and its tail with at most the wire's marker added (`Form::continuing_tail`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Continuation {
    kept: usize,
    count: usize,
    digest: [u8; 32],
    from: usize,
    /// The digest of the elements it shares with the previous continuation (that one's
    /// `digest`), where it shares any: which layout it extends, checked by its reader.
    shares: Option<[u8; 32]>,
    automatic: Option<Option<f64>>,
    own: Vec<Vec<Piece>>,
}

/// The digest of a list of elements: of their digests, in order.
fn list_digest(digests: &[[u8; 32]]) -> [u8; 32] {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    for d in digests {
        h.update(d);
    }
    h.finalize().into()
}

/// The layout to store with a continuation about to be sent (`body`, cut and kept as
/// `continuing` says), given the layout the turn's previous continuation stored: the
/// elements both append alike are named by their count, not cut and stored again (what a
/// run stores grows with what each request adds). `None`: the body does not hold as many
/// elements as it keeps.
pub(crate) fn continuation_layout(
    continuing: Continuing,
    body: &crate::wire::Body,
    previous: Option<&[u8]>,
    memo: &mut Memo,
) -> Option<Vec<u8>> {
    let Continuing { cut, kept } = continuing;
    let appended = body.elements.get(kept..)?;
    let digests: Vec<[u8; 32]> = appended.iter().map(|e| crate::seal::digest(e)).collect();
    let shared = previous
        .and_then(|p| continuation_head(cut, &mut Reader { b: p, at: 0 }))
        .filter(|p| p.0 == kept && p.1 <= digests.len() && p.2 == list_digest(&digests[..p.1]))
        .map_or(0, |p| p.1);
    // The tail alone holds the marker: read as the frame of an empty list.
    let automatic = crate::cache::automatic(cut.wire, &parse(&format!("{{\"_\":[{}", body.tail)));
    let mut counter = Counter::new(cut.tokenizer, memo);
    let mut out = Vec::new();
    cut.header(&mut out);
    write_u32(&mut out, kept);
    write_u32(&mut out, digests.len());
    out.extend(list_digest(&digests));
    write_u32(&mut out, shared);
    if shared > 0 {
        out.extend(list_digest(&digests[..shared]));
    }
    write_automatic(automatic, &mut out);
    for e in &appended[shared..] {
        write_pieces(&element(cut.wire, &parse(e), &mut counter), &mut out);
    }
    Some(out)
}

/// A continuation layout's kept, count and digest.
fn continuation_head(cut: Cut, r: &mut Reader<'_>) -> Option<(usize, usize, [u8; 32])> {
    cut.matches(r)?;
    let kept = r.u32()? as usize;
    let count = r.u32()? as usize;
    Some((kept, count, r.take::<32>()?))
}

/// A continuation from its stored layout; `None` when it was cut otherwise or does not
/// read.
pub(crate) fn read_continuation(cut: Cut, bytes: &[u8]) -> Option<Continuation> {
    let mut r = Reader { b: bytes, at: 0 };
    let (kept, count, digest) = continuation_head(cut, &mut r)?;
    let from = r.u32()? as usize;
    let shares = match from {
        0 => None,
        _ => Some(r.take::<32>()?),
    };
    let automatic = r.automatic()?;
    let own_count = count.checked_sub(from)?;
    let mut own = Vec::with_capacity(own_count.min(4096));
    for _ in 0..own_count {
        own.push(r.pieces()?);
    }
    r.done()?;
    Some(Continuation {
        kept,
        count,
        digest,
        from,
        shares,
        automatic,
        own,
    })
}

/// The requests of a sealed turn's continuations, in order, from its first request's
/// layout (`first`, as sent) and the layouts they stored: each keeps the first's leading
/// elements, appends what the one before appended as far as it shares it, then its own,
/// and takes the first's frame with its own marker. `None` for one whose layout does not
/// read, or that shares elements with a layout other than the one before it here (the one
/// it was written against, by its kept, count and digest: two requests sent in one
/// transaction are read as one, and the second's layout extends the first's).
pub(crate) fn continued(first: &Laid, cut: Cut, layouts: &[Option<&[u8]>]) -> Vec<Option<Laid>> {
    let mut appended: Vec<Rc<Vec<Piece>>> = Vec::new();
    // The layout read before, as one that extends it names it: (kept, count, digest).
    let mut before: Option<(usize, usize, [u8; 32])> = None;
    let mut frames: Vec<Rc<Frame>> = Vec::new();
    let mut out = Vec::with_capacity(layouts.len());
    for layout in layouts {
        let read = layout
            .and_then(|b| read_continuation(cut, b))
            .filter(|c| c.kept <= first.elements.len())
            .filter(|c| c.shares.is_none_or(|d| before == Some((c.kept, c.from, d))));
        let Some(c) = read else {
            appended.clear();
            before = None;
            out.push(None);
            continue;
        };
        before = Some((c.kept, c.count, c.digest));
        appended.truncate(c.from);
        appended.extend(c.own.into_iter().map(Rc::new));
        let frame = match frames.iter().find(|f| f.automatic == c.automatic) {
            Some(f) => f.clone(),
            None => {
                let f = Rc::new(Frame {
                    pieces: first.frame.pieces.clone(),
                    automatic: c.automatic,
                });
                frames.push(f.clone());
                f
            }
        };
        let elements = first.elements[..c.kept].iter().chain(&appended).cloned().collect();
        out.push(Some(Laid::new(frame, elements)));
    }
    out
}

/// The blocks stored layouts hold, by the digest of the text they were cut from (an
/// element's node; a seal's head and tail): a request about to be sent reads the blocks of
/// what it repeats from them, and cuts only what is new.
#[derive(Debug, Default)]
pub struct Catalog {
    pub(crate) elements: foldhash::HashMap<(Cut, [u8; 32]), Rc<Vec<Piece>>>,
    pub(crate) frames: foldhash::HashMap<(Cut, [u8; 32], [u8; 32]), Rc<Frame>>,
    /// The SHA-256 of each text a request laid out held, by the text itself (a request
    /// repeats most of the one laid before it: found by equality, not hashed again),
    /// [`DIGESTED_BYTES`] of text at most.
    digested: foldhash::HashMap<Rc<str>, [u8; 32]>,
    digested_bytes: usize,
    /// The blocks its layouts hold, together (what bounds it: an element's layout holds
    /// one block per part).
    pieces: usize,
}

/// The text whose digests a catalog keeps, at most (past it, it starts again).
const DIGESTED_BYTES: usize = 16 << 20;

impl Catalog {
    /// The blocks its element and frame layouts hold, together.
    pub fn pieces(&self) -> usize {
        self.pieces
    }

    /// Keeps an element's blocks, cut under `cut` from the text whose digest is `d`.
    pub(crate) fn keep_element(&mut self, cut: Cut, d: [u8; 32], pieces: Rc<Vec<Piece>>) {
        let added = pieces.len();
        if let Some(old) = self.elements.insert((cut, d), pieces) {
            self.pieces = self.pieces.saturating_sub(old.len());
        }
        self.pieces += added;
    }

    /// Keeps a frame's blocks, cut under `cut` from the head and tail these digests name.
    pub(crate) fn keep_frame(&mut self, cut: Cut, head: [u8; 32], tail: [u8; 32], frame: Rc<Frame>) {
        let added = frame.pieces.len();
        if let Some(old) = self.frames.insert((cut, head, tail), frame) {
            self.pieces = self.pieces.saturating_sub(old.pieces.len());
        }
        self.pieces += added;
    }

    /// The SHA-256 of `text`: kept from a request laid before, or hashed and kept.
    fn digest(&mut self, text: &str) -> [u8; 32] {
        if let Some(d) = self.digested.get(text) {
            return *d;
        }
        let d = crate::seal::digest(text);
        // A text of more than a sixteenth of the bound is hashed each time, never kept.
        if text.len() > DIGESTED_BYTES / 16 {
            return d;
        }
        if self.digested_bytes + text.len() > DIGESTED_BYTES {
            self.digested.clear();
            self.digested_bytes = 0;
        }
        self.digested_bytes += text.len();
        self.digested.insert(Rc::from(text), d);
        d
    }
}

/// A request not sent yet, as the cache model reads it: each element the catalog holds
/// (by its text's digest) read from it, any other cut from its text and kept in the
/// catalog (an element's blocks are its text's: the next request laid reads them there).
pub(crate) fn lay_request(cut: Cut, body: &crate::wire::Body, catalog: &mut Catalog, memo: &mut Memo) -> Laid {
    let mut counter = Counter::new(cut.tokenizer, memo);
    let (head, tail) = (catalog.digest(&body.head), catalog.digest(&body.tail));
    let frame = match catalog.frames.get(&(cut, head, tail)) {
        Some(f) => f.clone(),
        None => {
            let f = Rc::new(frame(cut.wire, &parse(&body.frame_text()), &mut counter));
            catalog.keep_frame(cut, head, tail, f.clone());
            f
        }
    };
    let elements = body
        .elements
        .iter()
        .map(|e| {
            let d = catalog.digest(e);
            match catalog.elements.get(&(cut, d)) {
                Some(pieces) => pieces.clone(),
                None => {
                    let pieces = Rc::new(element(cut.wire, &parse(e), &mut counter));
                    catalog.keep_element(cut, d, pieces.clone());
                    pieces
                }
            }
        })
        .collect();
    Laid::new(frame, elements)
}

/// A count, a token number or an index, LEB128 (a node's layout is a few dozen bytes
/// beside its text: most of these take one).
fn write_u32(out: &mut Vec<u8>, n: usize) {
    let mut n = u32::try_from(n).unwrap_or(u32::MAX);
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A frame's request-level marker: none, one at the default TTL, or one at its own.
fn write_automatic(automatic: Option<Option<f64>>, out: &mut Vec<u8>) {
    match automatic {
        None => out.push(0),
        Some(None) => out.push(1),
        Some(Some(ttl)) => {
            out.push(2);
            out.extend(ttl.to_le_bytes());
        }
    }
}

fn write_ttl(flags: u8, ttl: Option<f64>, out: &mut Vec<u8>) {
    out.push(flags | if ttl.is_some() { 4 } else { 0 });
    if let Some(t) = ttl {
        out.extend(t.to_le_bytes());
    }
}

fn write_pieces(pieces: &[Piece], out: &mut Vec<u8>) {
    write_u32(out, pieces.len());
    for p in pieces {
        match p {
            Piece::Block {
                own,
                tokens,
                marked,
                ttl,
                zone,
                thinking,
            } => {
                out.push(0);
                out.extend(own.to_le_bytes());
                write_u32(out, *tokens as usize);
                write_ttl(u8::from(*marked) | (u8::from(*thinking) << 1), *ttl, out);
                match zone {
                    Zone::Tools => out.push(0),
                    Zone::System => out.push(1),
                    Zone::Message(m, p) => {
                        out.push(2);
                        write_u32(out, *m);
                        write_u32(out, *p);
                    }
                }
            }
            Piece::Mark { ttl } => {
                out.push(1);
                write_ttl(0, *ttl, out);
            }
        }
    }
}

/// Reads what `write_*` wrote, never past its bytes.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let end = self.at.checked_add(N)?;
        let bytes = self.b.get(self.at..end)?.try_into().ok()?;
        self.at = end;
        Some(bytes)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }

    fn u32(&mut self) -> Option<u32> {
        let mut n: u32 = 0;
        for shift in (0..35).step_by(7) {
            let b = self.u8()?;
            n |= u32::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                // One spelling per number: no byte that adds nothing, nothing past 32 bits.
                let last = shift > 0 && b == 0;
                return (!last && (shift < 28 || b < 0x10)).then_some(n);
            }
        }
        None
    }

    fn f64(&mut self) -> Option<f64> {
        self.take::<8>().map(f64::from_le_bytes)
    }

    /// A list's length, no longer than the bytes left could hold (a piece takes two at
    /// least): a count never sizes more than the layout's own length.
    fn count(&mut self) -> Option<usize> {
        let n = self.u32()? as usize;
        (n <= (self.b.len() - self.at) / 2).then_some(n)
    }

    fn automatic(&mut self) -> Option<Option<Option<f64>>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(None)),
            2 => Some(Some(Some(self.f64()?))),
            _ => None,
        }
    }

    fn ttl(&mut self, flags: u8) -> Option<Option<f64>> {
        match flags & 4 {
            0 => Some(None),
            _ => self.f64().map(Some),
        }
    }

    fn pieces(&mut self) -> Option<Vec<Piece>> {
        let n = self.count()?;
        let mut out = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            out.push(match self.u8()? {
                0 => {
                    let own = u64::from_le_bytes(self.take::<8>()?);
                    let tokens = self.u32()?;
                    let flags = self.u8()?;
                    let ttl = self.ttl(flags)?;
                    let zone = match self.u8()? {
                        0 => Zone::Tools,
                        1 => Zone::System,
                        2 => Zone::Message(self.u32()? as usize, self.u32()? as usize),
                        _ => return None,
                    };
                    Piece::Block {
                        own,
                        tokens,
                        marked: flags & 1 != 0,
                        ttl,
                        zone,
                        thinking: flags & 2 != 0,
                    }
                }
                1 => {
                    let flags = self.u8()?;
                    Piece::Mark { ttl: self.ttl(flags)? }
                }
                _ => return None,
            });
        }
        Some(out)
    }

    fn done(&self) -> Option<()> {
        (self.at == self.b.len()).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE: Cut = Cut {
        wire: Wire::Anthropic,
        tokenizer: Tokenizer::Cl100kBase,
    };

    #[test]
    fn an_element_reads_back_as_the_cache_model_cuts_it() {
        let mut memo = Memo::default();
        let text = r#"{"role":"user","content":[{"type":"text","text":"Hello there"},{"type":"text","text":"more","cache_control":{"type":"ephemeral","ttl":"1h"}}]}"#;
        let stored = element_layout(CLAUDE, text, &mut memo);
        let mut counter = Counter::new(Tokenizer::Cl100kBase, &mut memo);
        let cut = element(Wire::Anthropic, &parse(text), &mut counter);
        assert_eq!(read_element(CLAUDE, &stored), Some(cut));
    }

    #[test]
    fn a_layout_cut_otherwise_or_cut_short_is_not_read() {
        let mut memo = Memo::default();
        let stored = element_layout(CLAUDE, r#"{"role":"user","content":"hi"}"#, &mut memo);
        let o200k = Cut {
            tokenizer: Tokenizer::O200kBase,
            ..CLAUDE
        };
        let chat = Cut {
            wire: Wire::Chat,
            ..CLAUDE
        };
        assert_eq!(read_element(o200k, &stored), None);
        assert_eq!(read_element(chat, &stored), None);
        for n in 0..stored.len() {
            assert_eq!(read_element(CLAUDE, &stored[..n]), None, "cut at {n}");
        }
        let mut longer = stored.clone();
        longer.push(0);
        assert_eq!(read_element(CLAUDE, &longer), None);
        // A count that would size more than the bytes hold.
        let mut huge = stored[..3].to_vec();
        write_u32(&mut huge, u32::MAX as usize);
        huge.extend([0; 64]);
        assert_eq!(read_element(CLAUDE, &huge), None);
    }

    /// A request laid out keeps in the catalog what it cut from text: laid again, under
    /// its cut or another tokenizer's, each reads what a fresh catalog reads, on every wire.
    #[test]
    fn a_request_laid_again_reads_what_it_cut_under_its_own_cut_alone() {
        use crate::rows::Role;
        use crate::testing::{Scenario, ADA, LARK};
        let seen = |l: &Laid| {
            (
                (*l.frame).clone(),
                l.elements.iter().map(|e| (**e).clone()).collect::<Vec<_>>(),
            )
        };
        for &wire in Wire::ALL {
            let mut s = Scenario::new("Which clause applies, and since when?")
                .message(Role::User, ADA, "The refund policy, clause by clause.")
                .message(Role::Assistant, LARK, "Clause four, since March.");
            s.model_mut("claude").wire = wire;
            let body = s.run(crate::Purpose::Preview).unwrap().body;
            let mut memo = Memo::default();
            let mut catalog = Catalog::default();
            for tokenizer in [Tokenizer::O200kBase, Tokenizer::Cl100kBase, Tokenizer::O200kBase] {
                let cut = Cut { wire, tokenizer };
                let fresh = seen(&lay_request(cut, &body, &mut Catalog::default(), &mut memo));
                let kept = seen(&lay_request(cut, &body, &mut catalog, &mut memo));
                assert_eq!(kept, fresh, "{wire:?} {tokenizer:?}");
                assert!(
                    catalog.elements.len() + catalog.frames.len() > body.elements.len().min(1),
                    "{wire:?}: what was cut is kept"
                );
            }
        }
    }

    /// A request sent: its body, the layout it stored, and whether it took a clearing step.
    type Request = (crate::wire::Body, Vec<u8>, bool);

    /// A run on every wire, sent request by request as `compile_turn` sends it: its seal,
    /// then each continuation with the layout it stores (given the one before), through a
    /// clearing step that rewrites earlier rounds and an in-turn summary that replaces the
    /// seed. Returns the seal's first request as laid, the cut, and each continuation's
    /// body and layout.
    fn a_run_sent(wire: Wire, memo: &mut Memo) -> (Laid, Cut, Vec<Request>) {
        a_run_sent_with(wire, r#"{"clear_tool_results": {"trigger": 450, "keep": 1}}"#, memo)
    }

    /// [`a_run_sent`] with the turn's `options`: its first request as sent (a stateful
    /// turn's chained form).
    fn a_run_sent_with(wire: Wire, options: &str, memo: &mut Memo) -> (Laid, Cut, Vec<Request>) {
        use crate::rows::{Mode, Role};
        use crate::testing::{request_options, round, tools, Scenario, ADA, LARK};
        let mut s = Scenario::new("Find the double charge.")
            .doc(LARK, "system_prompt", "You are {{agent}}.")
            .message(Role::User, ADA, "It happened twice.")
            .turn(|t| {
                t.mode = Mode::Run;
                t.tools = Some(tools(r#"[{"name":"read","input_schema":{"type":"object"}}]"#));
                t.request_options = request_options(options);
            });
        s.model_mut("claude").wire = wire;
        let sealed = s.seal();
        let frozen = s.ctx.seal.as_ref().expect("sealed").frozen.clone();
        let cut = Cut::of(wire, frozen.model.as_ref());
        let first = lay_request(cut, &sealed.body, &mut Catalog::default(), memo);
        let mut sent: Vec<Request> = Vec::new();
        for n in 1..=7 {
            let assistant = serde_json::json!([{"type": "text", "text": format!("Reading part {n}.")},
                {"type": "tool_call", "id": format!("c{n}"), "name": "read", "input": {"part": n}}]);
            let results = serde_json::json!([{"call_id": format!("c{n}"),
                "content": format!("part {n}: {}", "a ledger line with an amount and a date. ".repeat(10))}]);
            s.ctx
                .rounds
                .push(round(n, &assistant.to_string(), &results.to_string(), "[]", false));
            if n == 6 {
                s.ctx.turn.summary = Some("Two charges of 40 on the 3rd.".into());
                s.ctx.turn.summary_round = Some(6);
            }
            let out = s.run(crate::Purpose::Compile).expect("a continuation compiles");
            let newest = out.last_round.expect("a continuation");
            for r in s.ctx.rounds.iter_mut() {
                if r.n == newest {
                    r.cleared = out.cleared.clone();
                }
                r.sent |= r.n <= newest;
            }
            let previous = sent.last().map(|(_, l, _)| l.as_slice());
            let layout = out
                .continuation_layout(previous, memo)
                .unwrap_or_else(|| panic!("a continuation's layout at round {n}"));
            sent.push((out.body, layout, out.cleared.is_some()));
        }
        (first, cut, sent)
    }

    fn seen(l: &Laid) -> (Frame, Vec<Vec<Piece>>) {
        ((*l.frame).clone(), l.elements.iter().map(|e| (**e).clone()).collect())
    }

    /// Reads a run's requests from the layouts each stored (`what` names the run), checks
    /// each is the cache model's cut of the body it sent, and returns each layout's `from`.
    fn read_as_sent(first: &Laid, cut: Cut, sent: &[Request], memo: &mut Memo, what: &str) -> Vec<usize> {
        let layouts: Vec<Option<&[u8]>> = sent.iter().map(|(_, l, _)| Some(l.as_slice())).collect();
        let read = continued(first, cut, &layouts);
        assert_eq!(read.len(), sent.len(), "{what}");
        for (k, (laid, (body, _, _))) in read.iter().zip(sent).enumerate() {
            let cut_from_text = lay_request(cut, body, &mut Catalog::default(), memo);
            let laid = laid.as_ref().unwrap_or_else(|| panic!("{what}: request {k} reads"));
            assert_eq!(seen(laid), seen(&cut_from_text), "{what}: request {k}");
        }
        sent.iter()
            .map(|(_, l, _)| read_continuation(cut, l).expect("reads").from)
            .collect()
    }

    /// What a run's requests stored when sent reads as the cache model cuts the bodies
    /// they sent, on every wire; each stores only what it adds where it extends the one
    /// before, and one that does not read, or does not follow, reads as none.
    #[test]
    fn a_runs_requests_read_from_what_each_stored_are_the_bodies_it_sent() {
        let mut memo = Memo::default();
        for &wire in Wire::ALL {
            let (first, cut, sent) = a_run_sent(wire, &mut memo);
            let froms = read_as_sent(&first, cut, &sent, &mut memo, &format!("{wire:?}"));
            let layouts: Vec<Option<&[u8]>> = sent.iter().map(|(_, l, _)| Some(l.as_slice())).collect();
            // The second request extends the first; a clearing step's does not extend the
            // one before it, nor does the summary's (it replaces the seed and the rounds
            // before 6).
            let steps: Vec<usize> = (0..sent.len()).filter(|&k| sent[k].2).collect();
            assert!(
                !steps.is_empty() && steps.iter().all(|&k| k < 5),
                "{wire:?}: steps at {steps:?}"
            );
            assert!(froms[1] > 0 && froms[6] > 0, "{wire:?}: {froms:?}");
            assert!(
                steps.iter().all(|&k| froms[k] == 0),
                "{wire:?}: {froms:?}, steps at {steps:?}"
            );
            assert_eq!(froms[5], 0, "{wire:?}: {froms:?}");
            assert!(
                sent[1].1.len() < sent[0].1.len() + 64,
                "{wire:?}: the second stores what it adds"
            );
            // A layout missing, cut otherwise or cut short reads as none, and the one after
            // it, which shares what it appended, too.
            let other = Cut {
                tokenizer: match cut.tokenizer {
                    Tokenizer::O200kBase => Tokenizer::Cl100kBase,
                    Tokenizer::Cl100kBase => Tokenizer::O200kBase,
                },
                ..cut
            };
            assert!(
                continued(&first, other, &layouts).iter().all(Option::is_none),
                "{wire:?}"
            );
            // A chain that leaves out the request a layout extends (two sent in one
            // transaction are read as one) reads that layout as none, never over the
            // request before it there: request 7 extends the summary's, not request 5's.
            let mut skipping = layouts[..5].to_vec();
            skipping.push(layouts[6]);
            let read = continued(&first, cut, &skipping);
            assert!(read[4].is_some() && read[5].is_none(), "{wire:?}");
            let short = &sent[0].1[..sent[0].1.len() - 1];
            for broken in [None, Some(short)] {
                let mut with = layouts.clone();
                with[0] = broken;
                let read = continued(&first, cut, &with);
                assert!(read[0].is_none() && read[1].is_none(), "{wire:?}");
            }
        }
    }

    /// A stateful run sends each request in its chained form: what each stored reads as
    /// the cache model cuts the chained body it sent (its frame written again, the
    /// elements before its cut left out), through an in-turn summary.
    #[test]
    fn a_stateful_runs_requests_read_from_what_each_stored_are_the_chained_bodies_it_sent() {
        let mut memo = Memo::default();
        let (first, cut, sent) = a_run_sent_with(Wire::Responses, r#"{"stateful": true}"#, &mut memo);
        assert!(
            sent[0].0.head.contains("\"instructions\""),
            "the chained form is sent: {}",
            sent[0].0.head
        );
        let froms = read_as_sent(&first, cut, &sent, &mut memo, "stateful");
        assert!(froms[1] > 0 && froms[5] == 0, "{froms:?}");
    }

    #[test]
    fn every_wire_and_tokenizer_has_a_code_of_its_own() {
        let wires: std::collections::HashSet<u8> = Wire::ALL.iter().map(|w| code(w.as_str())).collect();
        assert_eq!(wires.len(), Wire::ALL.len());
        let tokenizers: std::collections::HashSet<u8> = Tokenizer::ALL.iter().map(|t| code(t.name())).collect();
        assert_eq!(tokenizers.len(), Tokenizer::ALL.len());
    }

    #[test]
    fn numbers_read_back_in_one_spelling() {
        for n in [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 28, u32::MAX as usize] {
            let mut b = Vec::new();
            write_u32(&mut b, n);
            let mut r = Reader { b: &b, at: 0 };
            assert_eq!(r.u32(), Some(n as u32), "{n}");
            assert_eq!(r.done(), Some(()));
        }
        // A byte that adds nothing, or bits past 32, is not a number.
        for bad in [
            &[0x80, 0x00][..],
            &[0xff, 0xff, 0xff, 0xff, 0x1f],
            &[0x80, 0x80, 0x80, 0x80, 0x80],
        ] {
            assert_eq!(Reader { b: bad, at: 0 }.u32(), None, "{bad:?}");
        }
    }

    #[test]
    fn a_seal_reads_back_its_frame_and_marked_elements() {
        let mut memo = Memo::default();
        let frame_text = r#"{"model":"claude","system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"messages":[],"cache_control":{"type":"ephemeral","ttl":"1h"}}"#;
        let marked = r#"{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}"#;
        let stored = seal_layout(CLAUDE, frame_text, 0, &[(3, marked)], &mut memo);
        let read = read_seal(CLAUDE, &stored).expect("a seal layout");
        let mut counter = Counter::new(Tokenizer::Cl100kBase, &mut memo);
        assert_eq!(read.frame, frame(Wire::Anthropic, &parse(frame_text), &mut counter));
        assert_eq!(read.frame.automatic, Some(Some(3600.0)));
        assert_eq!(
            read.marked,
            vec![(3, element(Wire::Anthropic, &parse(marked), &mut counter))]
        );
        let empty = |n: usize| (0..n).map(|_| Rc::new(Vec::new())).collect::<Vec<_>>();
        assert!(laid(read.clone(), empty(3)).is_none(), "index 3 of 3 elements");
        assert_eq!(laid(read.clone(), empty(4)).map(|l| l.elements.len()), Some(4));
        // A stateful seal's first request leaves out its elements before the cut.
        let chained = seal_layout(CLAUDE, frame_text, 2, &[(3, marked)], &mut memo);
        let read = read_seal(CLAUDE, &chained).expect("a seal layout");
        assert_eq!(read.from, 2);
        let sent = laid(read.clone(), empty(4)).expect("two of four elements");
        assert_eq!(sent.elements.len(), 2);
        let mut counter = Counter::new(Tokenizer::Cl100kBase, &mut memo);
        assert_eq!(
            *sent.elements[1],
            element(Wire::Anthropic, &parse(marked), &mut counter)
        );
        assert!(
            laid(SealRead { from: 5, ..read }, empty(4)).is_none(),
            "more left out than held"
        );
    }
}
