//! Seal storage (docs/design.md, "Seals"): how a sealed body is laid out over its
//! conversation's nodes, and how it is read back and checked against its digests. The
//! host runs the statements ([`SealNodes`], over one conversation's `prompt.seal_nodes`) and
//! keeps the seal row ([`SealPointers`]); what to read, what to write and whether it fits are
//! decided here.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use uuid::Uuid;

use crate::cache::{Laid, Piece};
use crate::error::{Code, Error, Result};
use crate::laid::{Catalog, Cut};
use crate::seal::{
    apply, body_digest, digest, frozen_for, pieces_digest, plan_chain, verify, walk_chain, Frozen, Patch, PieceReader,
    Pieces, PiecesDigests, SealDraft, StoredPieces,
};
use crate::tokens::Memo;
use crate::wire::Body;

/// How many nodes a chain may have: a seal row's `chain_length` is checked against it
/// and against its id range before it sizes anything.
const MAX_CHAIN: i64 = 10_000_000;

/// A seal row's pointers to its body (`prompt.seals`: the node ids of its pieces), and
/// what the body must be: its size and digest. A NULL where a body needs a value is
/// given as what the checks refuse (a negative size or length, no patch list, an empty
/// digest), never as a default that reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SealPointers {
    /// `pruned_at IS NOT NULL`: the body was dropped (its digest and size stay).
    pub pruned: bool,
    /// `patches`, as JSON text.
    pub patches: String,
    /// `head`.
    pub head: Option<i64>,
    /// `lead`.
    pub lead: Vec<Option<i64>>,
    /// `chain`: the chain's newest node.
    pub chain: Option<i64>,
    /// `chain_length` (-1 for NULL).
    pub chain_length: i32,
    /// `chain_low`: the chain's lowest node id.
    pub chain_low: Option<i64>,
    /// `tail`.
    pub tail: Option<i64>,
    /// `digest`: the SHA-256 of the body's bytes.
    pub digest: Vec<u8>,
    /// `bytes`: the body's size (-1 for NULL).
    pub bytes: i32,
}

/// A node of `prompt.seal_nodes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealNode {
    /// `id`.
    pub id: i64,
    /// `parent`: the older node of its chain (`None`: a chain's oldest, or a node stored
    /// on its own).
    pub parent: Option<i64>,
    /// `body`: its text (`None` where the statement read digests alone).
    pub text: Option<String>,
    /// `digest`: the SHA-256 of its text.
    pub digest: Vec<u8>,
    /// `layout`: an element node's cache blocks as its seal cut them (`crate::laid`);
    /// `None` for the text around a list, a node written before 0.6, or where the
    /// statement did not read it.
    pub layout: Option<Vec<u8>>,
}

/// The reads of seal storage over one conversation's nodes, run by the host. What is
/// written is returned ([`LaidSeal`]) for the host to write, under the conversation's
/// storage lock.
pub trait SealNodes {
    /// The nodes whose id is in `low..=high` or in `singles`, with their texts when
    /// `texts` (else their digests alone).
    fn read(&mut self, low: i64, high: i64, singles: &[i64], texts: bool) -> Result<Vec<SealNode>>;
    /// The same nodes with their digests and layouts, never their texts.
    fn layouts(&mut self, low: i64, high: i64, singles: &[i64]) -> Result<Vec<SealNode>>;
    /// The chain of the conversation's live seal most like the new one: the newest seal
    /// whose frozen record contains `like` first, else the newest (its `chain`,
    /// `chain_length` and `chain_low`; `None`: no live seal has a chain).
    fn previous(&mut self, like: &serde_json::Value) -> Result<Option<(i64, i32, i64)>>;
    /// The node under `parent` whose digest is `digest`: its id and text.
    fn find(&mut self, parent: Option<i64>, digest: &[u8]) -> Result<Option<(i64, String)>>;
    /// The conversation's largest node id (0: none yet).
    fn newest(&mut self) -> Result<i64>;
}

/// Checks a seal row's pointers before they size anything: the range of chain ids.
fn span(p: &SealPointers) -> std::result::Result<(i64, i64), &'static str> {
    if p.bytes < 0 || usize::try_from(p.bytes).map_or(true, |b| b > crate::bounds::MAX_TEXT) {
        return Err("records a size out of range");
    }
    if p.lead.iter().any(Option::is_none) || p.lead.len() > MAX_CHAIN as usize {
        return Err("has a lead list that does not fit");
    }
    let length = i64::from(p.chain_length);
    match (p.chain_low, p.chain) {
        (Some(low), Some(high))
            if (1..=MAX_CHAIN).contains(&length) && high.checked_sub(low).is_some_and(|span| span >= length - 1) =>
        {
            Ok((low, high))
        }
        (None, None) if length == 0 => Ok((1, 0)),
        _ => Err("has chain pointers that do not fit together"),
    }
}

/// The node ids a seal names outside its chain: its head, its tail and its lead.
fn singles(p: &SealPointers) -> impl Iterator<Item = i64> + '_ {
    p.head.into_iter().chain(p.tail).chain(p.lead.iter().flatten().copied())
}

fn patches_of(p: &SealPointers) -> std::result::Result<Vec<Patch>, &'static str> {
    serde_json::from_str(&p.patches).map_err(|_| "has a patch list that cannot be read")
}

/// What a seal froze, from its `frozen` text once checked against its stored digest.
/// `Err` says why it is refused.
pub fn read_frozen(text: &str, stored_digest: Option<&[u8]>) -> std::result::Result<Frozen, String> {
    if stored_digest != Some(&digest(text)[..]) {
        return Err("has a frozen record that does not match its digest".into());
    }
    serde_json::from_str(text).map_err(|e| format!("has a frozen record that cannot be read ({e})"))
}

/// The request a seal's turn sent first, from its sealed pieces: a stateful turn's chained
/// form (its frame written again from the sealed one, the elements before its cut left
/// out; its frame is keyed by no node); any other turn's, as sealed. `Err`: a sealed frame
/// that does not read as one JSON object.
pub fn sent_pieces(frozen: &Frozen, pieces: Pieces) -> Result<Pieces> {
    if frozen.stateful.is_none() {
        return Ok(pieces);
    }
    // The chained form is written from the frame's text, head and tail read as one.
    let sealed = Body {
        head: pieces.frame.1.to_string(),
        elements: pieces.elements.iter().map(|(_, e)| e.to_string()).collect(),
        tail: String::new(),
    };
    let (frame, from) = crate::laid::first_sent_frame(frozen, &sealed)?;
    Ok(Pieces {
        frame: (None, Rc::from(frame)),
        elements: pieces.elements.get(from..).unwrap_or_default().to_vec(),
    })
}

/// A sealed body read back from its nodes, checked against its size and digest. `Err`
/// says which piece is missing or does not fit.
pub fn read_sealed_body(nodes: &mut impl SealNodes, p: &SealPointers) -> std::result::Result<Body, &'static str> {
    let (low, high) = span(p)?;
    let patches = patches_of(p)?;
    let ids: Vec<i64> = singles(p).collect();
    let read = nodes
        .read(low, high, &ids, true)
        .map_err(|_| "has a node without its text")?;
    let mut texts: HashMap<i64, (Option<i64>, String)> = HashMap::with_capacity(read.len());
    for n in read {
        texts.insert(n.id, (n.parent, n.text.ok_or("has a node without its text")?));
    }
    let text = |id: Option<i64>| id.and_then(|id| texts.get(&id)).map(|(_, t)| t.clone());
    let mut elements: Vec<String> = p
        .lead
        .iter()
        .map(|id| text(*id))
        .collect::<Option<_>>()
        .ok_or("lost a node")?;
    elements.extend(
        walk_chain(&texts, p.chain, p.chain_length)
            .ok_or("lost a node")?
            .into_iter()
            .map(|(_, t)| t),
    );
    if patches.len() > elements.len() {
        return Err("has more patches than elements");
    }
    apply(&mut elements, &patches).ok_or("has patches that do not fit its elements")?;
    let body = Body {
        head: text(p.head).ok_or("lost a node")?,
        elements,
        tail: text(p.tail).ok_or("lost a node")?,
    };
    verify(&body, usize::try_from(p.bytes).unwrap_or(usize::MAX), &p.digest)?;
    Ok(body)
}

/// The bodies of several seals in pieces, as they were sent (`None`: pruned), each
/// checked against its pieces digest (a seal written before 0.5 has none: against its
/// body's): one read of the nodes they name, each node decompressed and checked once
/// however many seals share it. `Err` names the first seal (its index) that does not
/// read back, and why.
pub fn read_sealed_pieces(
    nodes: &mut impl SealNodes,
    seals: &[(&SealPointers, Option<&[u8]>)],
) -> Result<std::result::Result<Vec<Option<Pieces>>, Failed>> {
    let (mut low, mut high, mut ids) = (i64::MAX, i64::MIN, Vec::new());
    for (i, (p, _)) in seals.iter().enumerate() {
        if p.pruned {
            continue;
        }
        let (l, h) = match span(p) {
            Ok(span) => span,
            Err(why) => return Ok(Err((i, why))),
        };
        if l <= h {
            (low, high) = (low.min(l), high.max(h));
        }
        ids.extend(singles(p));
    }
    let read = match seals.iter().any(|(p, _)| !p.pruned) {
        true => nodes.read(low, high, &ids, true)?,
        false => Vec::new(),
    };
    let mut stored: Stored = Stored::with_capacity_and_hasher(read.len(), Default::default());
    for n in read {
        let Some(text) = n.text else {
            return Err(Error::new(
                Code::DataCorrupted,
                format!("seal node {} has no text", n.id),
            ));
        };
        let d = <[u8; 32]>::try_from(n.digest.as_slice()).unwrap_or([0; 32]);
        stored.insert(n.id, (n.parent, (Rc::from(text), d)));
    }
    let mut reader = PieceReader::default();
    let mut out = Vec::with_capacity(seals.len());
    for (i, (p, pieces_digest)) in seals.iter().enumerate() {
        out.push(match p.pruned {
            true => None,
            false => match pieces(&stored, p, *pieces_digest, &mut reader) {
                Ok(pieces) => Some(pieces),
                Err(why) => return Ok(Err((i, why))),
            },
        });
    }
    Ok(Ok(out))
}

/// The seal (its index) that does not read back, and why.
type Failed = (usize, &'static str);

/// Seal nodes read back: each one's parent, text and stored digest, by id.
type Stored = foldhash::HashMap<i64, (Option<i64>, (Rc<str>, [u8; 32]))>;

/// A seal's body in pieces from the nodes read, checked by `reader`.
fn pieces(
    nodes: &Stored,
    p: &SealPointers,
    pieces_digest: Option<&[u8]>,
    reader: &mut PieceReader,
) -> std::result::Result<Pieces, &'static str> {
    let patches = patches_of(p)?;
    let node = |id: Option<i64>| id.and_then(|id| nodes.get(&id).map(|(_, (t, _))| (id, t.clone())));
    let node_digest = |id: i64| nodes.get(&id).map(|(_, (_, d))| *d);
    let mut elements: Vec<(i64, Rc<str>)> = p
        .lead
        .iter()
        .map(|id| node(*id))
        .collect::<Option<_>>()
        .ok_or("lost a node")?;
    let lead = elements.len();
    let chain = walk_chain(nodes, p.chain, p.chain_length).ok_or("lost a node")?;
    elements.extend(chain.into_iter().map(|(id, (t, _))| (id, t)));
    reader.read(&StoredPieces {
        head: node(p.head).ok_or("lost a node")?,
        tail: node(p.tail).ok_or("lost a node")?,
        elements,
        lead,
        patches: &patches,
        bytes: usize::try_from(p.bytes).map_err(|_| "records a size out of range")?,
        digest: &p.digest,
        pieces: pieces_digest.map(|d| (d, &node_digest as &crate::seal::NodeDigest<'_>)),
    })
}

/// What [`lay_out_seal`] decided to store of a body: the new nodes, and the seal row's
/// pointers, digests and records (`prompt.seals`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaidSeal {
    /// The new nodes, written first (into `prompt.seal_nodes`).
    pub nodes: Vec<SealNode>,
    /// `head`.
    pub head: i64,
    /// `lead`.
    pub lead: Vec<i64>,
    /// `chain` (`None`: no chain).
    pub chain: Option<i64>,
    /// `chain_length`.
    pub chain_length: i32,
    /// `chain_low`.
    pub chain_low: Option<i64>,
    /// `tail`.
    pub tail: i64,
    /// `digest`: the SHA-256 of the body's bytes.
    pub digest: Vec<u8>,
    /// `bytes`: the body's size.
    pub bytes: i32,
    /// `patches`, as JSON text.
    pub patches: String,
    /// `pieces_digest`.
    pub pieces_digest: Vec<u8>,
    /// `frozen`, as JSON text (`frozen_digest` is its SHA-256, of jsonb's own text).
    pub frozen: String,
    /// `layout`: the seal's own cache blocks (`crate::laid::seal_layout`).
    pub layout: Vec<u8>,
}

/// How a seal's layouts are cut: its wire, and its model's tokenizer (the cache model's
/// default without one).
fn cut_of(frozen: &Frozen) -> Cut {
    Cut::of(frozen.wire, frozen.model.as_ref())
}

/// What a seal row holds beside its pointers for its layout: its pieces digest, its own
/// layout, and what it froze.
pub struct SealLayout<'a> {
    /// The row's pointers.
    pub pointers: &'a SealPointers,
    /// `pieces_digest` (`None`: written before 0.5; its layout is not read).
    pub pieces_digest: Option<&'a [u8]>,
    /// `layout` (`None`: written before 0.6).
    pub layout: Option<&'a [u8]>,
    /// What it froze (its wire and model say how its layouts were cut).
    pub frozen: &'a Frozen,
}

/// The first requests of several seals as their layouts (SPEC §16.5: what was stored when
/// they were sent, never their texts): one read of the nodes they name (digests and
/// layouts), each seal checked against its pieces digest. `None` for a seal whose layouts
/// are not all there or were cut otherwise (written before 0.6, a node shared with a seal
/// of another model): its caller reads its text. `Err` names the first seal (its index)
/// whose pointers or pieces do not fit, and why.
pub fn read_sealed_layouts(
    nodes: &mut impl SealNodes,
    seals: &[SealLayout<'_>],
    catalog: &mut Catalog,
) -> Result<std::result::Result<Vec<Option<Laid>>, Failed>> {
    let readable = |s: &SealLayout<'_>| !s.pointers.pruned && s.pieces_digest.is_some() && s.layout.is_some();
    let (mut low, mut high, mut ids) = (i64::MAX, i64::MIN, Vec::new());
    for (i, s) in seals.iter().enumerate().filter(|(_, s)| readable(s)) {
        let (l, h) = match span(s.pointers) {
            Ok(span) => span,
            Err(why) => return Ok(Err((i, why))),
        };
        if l <= h {
            (low, high) = (low.min(l), high.max(h));
        }
        ids.extend(singles(s.pointers));
    }
    let read = match seals.iter().any(readable) {
        true => nodes.layouts(low, high, &ids)?,
        false => Vec::new(),
    };
    let mut stored = LaidNodes::with_capacity_and_hasher(read.len(), Default::default());
    for n in read {
        let d = <[u8; 32]>::try_from(n.digest.as_slice()).unwrap_or([0; 32]);
        stored.insert(n.id, (n.parent, (d, n.layout.map(Rc::from))));
    }
    let mut reading = Reading {
        stored,
        decoded: Default::default(),
        walked: Default::default(),
        digests: PiecesDigests::default(),
        catalog,
    };
    // Shorter chains first: a longer one then walks only what it adds.
    let mut order: Vec<usize> = (0..seals.len()).filter(|&i| readable(&seals[i])).collect();
    order.sort_by_key(|&i| seals[i].pointers.chain_length);
    let mut out = vec![None; seals.len()];
    for i in order {
        match reading.seal(&seals[i]) {
            Ok(laid) => out[i] = laid,
            Err(why) => return Ok(Err((i, why))),
        }
    }
    Ok(Ok(out))
}

/// Seal nodes read for their layouts: each one's parent, digest and layout, by id.
type LaidNodes = foldhash::HashMap<i64, (Option<i64>, ([u8; 32], Option<Rc<[u8]>>))>;

/// An element as a seal's layout reads it: its node, its digest, its blocks (`None`: its
/// node has no layout for the cut).
type LaidElement = (i64, [u8; 32], Option<Rc<Vec<Piece>>>);

/// A chain as walked: its newest node, its length, the cut its layouts are read with.
type ChainKey = (i64, i32, Cut);

/// The seals of one read, read in turn: what one seal's chain walked and decoded, the next
/// reads again only where it goes further (a chain extends a chain).
struct Reading<'c> {
    stored: LaidNodes,
    /// Each node's blocks, decoded once a cut.
    decoded: foldhash::HashMap<(i64, Cut), Option<Rc<Vec<Piece>>>>,
    /// The last chains walked (a few: seals are read shorter first, and one extends one
    /// read just before it), by their newest node, length and cut: their elements, oldest
    /// first.
    walked: std::collections::VecDeque<(ChainKey, Rc<Vec<LaidElement>>)>,
    digests: PiecesDigests,
    catalog: &'c mut Catalog,
}

impl Reading<'_> {
    /// One element's node, digest and blocks.
    fn element(&mut self, id: i64, cut: Cut) -> Option<LaidElement> {
        let (_, (d, layout)) = self.stored.get(&id)?;
        let d = *d;
        let catalog = &mut *self.catalog;
        let pieces = self
            .decoded
            .entry((id, cut))
            .or_insert_with(|| {
                let read = Rc::new(crate::laid::read_element(cut, layout.as_deref()?)?);
                catalog.keep_element(cut, d, read.clone());
                Some(read)
            })
            .clone();
        Some((id, d, pieces))
    }

    /// The chain of `length` nodes whose newest is `newest`, oldest first (`None`: a node is
    /// missing or the chain is shorter), from the longest chain walked before that ends
    /// within it.
    fn chain(&mut self, newest: Option<i64>, length: i32, cut: Cut) -> Option<Rc<Vec<LaidElement>>> {
        let total = usize::try_from(length).ok()?;
        if total > self.stored.len() {
            return None;
        }
        let Some(top) = newest else {
            return (total == 0).then(|| Rc::new(Vec::new()));
        };
        if let Some(w) = self.walked_to((top, length, cut)) {
            return Some(w);
        }
        let (mut fresh, mut base, mut at) = (Vec::new(), None, Some(top));
        for t in 0..total {
            let id = at?;
            let left = length - i32::try_from(t).ok()?;
            if let Some(w) = self.walked_to((id, left, cut)).filter(|_| t > 0) {
                base = Some(w);
                break;
            }
            fresh.push(self.element(id, cut)?);
            at = self.stored.get(&id)?.0;
        }
        let mut list = base.map(|b| b.as_ref().clone()).unwrap_or_default();
        list.extend(fresh.into_iter().rev());
        let list = Rc::new(list);
        if self.walked.len() == 4 {
            self.walked.pop_front();
        }
        self.walked.push_back(((top, length, cut), list.clone()));
        Some(list)
    }

    fn walked_to(&self, key: ChainKey) -> Option<Rc<Vec<LaidElement>>> {
        self.walked.iter().find(|(k, _)| *k == key).map(|(_, w)| w.clone())
    }

    /// One seal's first request from the nodes read: `Ok(None)` when a layout is missing
    /// or was cut otherwise.
    fn seal(&mut self, s: &SealLayout<'_>) -> std::result::Result<Option<Laid>, &'static str> {
        let p = s.pointers;
        let patches = patches_of(p)?;
        let cut = cut_of(s.frozen);
        let digest_of = |id: Option<i64>| id.and_then(|id| self.stored.get(&id)).map(|(_, (d, _))| *d);
        let head = digest_of(p.head).ok_or("lost a node")?;
        let tail = digest_of(p.tail).ok_or("lost a node")?;
        // Each element in order: the lead, then the chain.
        // Sized by what was read, never by what a row claims.
        let claimed = p
            .lead
            .len()
            .saturating_add(usize::try_from(p.chain_length).unwrap_or(0));
        let mut elements = Vec::with_capacity(claimed.min(self.stored.len()));
        for id in &p.lead {
            elements.push(self.element(id.ok_or("lost a node")?, cut).ok_or("lost a node")?);
        }
        let chain = self.chain(p.chain, p.chain_length, cut).ok_or("lost a node")?;
        elements.extend(chain.iter().cloned());
        let ids: Vec<(i64, [u8; 32])> = elements.iter().map(|(id, d, _)| (*id, *d)).collect();
        let (head_id, tail_id) = (p.head.unwrap_or_default(), p.tail.unwrap_or_default());
        let checked = self
            .digests
            .of((head_id, &head), (tail_id, &tail), &ids, p.lead.len(), &patches);
        if Some(&checked[..]) != s.pieces_digest {
            return Err("has pieces that do not match their digest");
        }
        // Only a stateful turn's first request leaves sealed elements out: any other
        // layout that says so is not read (its text is).
        let Some(read) = s
            .layout
            .and_then(|l| crate::laid::read_seal(cut, l))
            .filter(|r| r.from == 0 || s.frozen.stateful.is_some())
        else {
            return Ok(None);
        };
        let Some(pieces) = elements.into_iter().map(|(_, _, p)| p).collect::<Option<Vec<_>>>() else {
            return Ok(None);
        };
        // A stateful turn's frame is its chained form's, not the one its head and tail
        // name: it is not lent to a request that repeats them.
        let lends = s.frozen.stateful.is_none();
        let laid = crate::laid::laid(read, pieces);
        if let Some(l) = laid.as_ref().filter(|_| lends) {
            self.catalog.keep_frame(cut, head, tail, l.frame.clone());
        }
        Ok(laid)
    }
}

/// A request about to be sent on `wire` for `model`, as the cache model reads it: what it
/// repeats of the requests read before it (`catalog`) from their stored layouts, the rest
/// cut from its text.
pub fn lay_next_request(
    wire: crate::kinds::Wire,
    model: Option<&crate::rows::Model>,
    body: &Body,
    catalog: &mut Catalog,
    memo: &mut Memo,
) -> Laid {
    crate::laid::lay_request(Cut::of(wire, model), body, catalog, memo)
}

/// The requests a sealed turn's continuations sent, in order, from the layout of its first
/// request (`first`, as its seal stored it) and the layouts each stored (`None`: none
/// stored, a request sent before 0.6): `None` for one that cannot be read from them (its
/// layout missing, cut otherwise, or not following the one before).
pub fn continued_requests(
    wire: crate::kinds::Wire,
    model: Option<&crate::rows::Model>,
    first: &Laid,
    layouts: &[Option<&[u8]>],
) -> Vec<Option<Laid>> {
    crate::laid::continued(first, Cut::of(wire, model), layouts)
}

/// Lays a sealed body out over its conversation's nodes, sharing the longest run of
/// elements it repeats from the chain of the conversation's seal most like it (same
/// answerer and wire, newest), and reusing any node that holds the same text under the
/// same parent: the nodes to write and the seal row that names them. Its draft says what
/// it froze and which edits mark its elements (stored unmarked: what consecutive seals
/// share). A node whose text is not what its digest names is `data_corrupted`.
pub fn lay_out_seal(
    nodes: &mut impl SealNodes,
    conv: Uuid,
    body: &Body,
    draft: &SealDraft,
    memo: &mut Memo,
) -> Result<LaidSeal> {
    let (frozen, plain, patches) = (&draft.frozen, draft.plain(body), &draft.patches[..]);
    let cut = cut_of(frozen);
    let prev = previous_chain(nodes, frozen);
    let digests: Vec<[u8; 32]> = plain.iter().map(|e| digest(e)).collect();
    let prev_digests: Vec<[u8; 32]> = prev
        .iter()
        .map(|(_, d)| <[u8; 32]>::try_from(d.as_slice()).unwrap_or([0; 32]))
        .collect();
    let plan = plan_chain(&prev_digests, &digests);
    let mut w = Writer {
        nodes,
        conv,
        next_id: 0,
        queued: Vec::new(),
        cut,
        memo,
    };
    w.next_id = w.nodes.newest()?;
    let head = w.node(None, &body.head, false, false)?.0;
    let tail = w.node(None, &body.tail, false, false)?.0;
    let lead: Vec<i64> = plain[..plan.lead]
        .iter()
        .map(|e| w.node(None, e, false, true).map(|(id, _)| id))
        .collect::<Result<_>>()?;
    let reused = &prev[plan.at..plan.at + plan.len];
    let mut parent = reused.last().map(|(id, _)| *id);
    let mut chain: Vec<i64> = reused.iter().map(|(id, _)| *id).collect();
    let mut fresh = false;
    for e in &plain[plan.lead + plan.len..] {
        let (id, queued) = w.node(parent, e, fresh, true)?;
        fresh = queued;
        parent = Some(id);
        chain.push(id);
    }
    // The seal's own layout: the text around its list, and the elements its patches mark
    // as they were sent.
    let mut marked: Vec<usize> = patches.iter().map(|p| p.at).collect();
    marked.sort_unstable();
    marked.dedup();
    let marked: Vec<(usize, &str)> = marked
        .into_iter()
        .filter_map(|i| body.elements.get(i).map(|e| (i, e.as_str())))
        .collect();
    let (frame_text, from) = crate::laid::first_sent_frame(frozen, body)?;
    let layout = crate::laid::seal_layout(cut, &frame_text, from, &marked, w.memo);
    Ok(LaidSeal {
        layout,
        nodes: w.queued,
        head,
        lead,
        chain: chain.last().copied(),
        chain_length: i32::try_from(chain.len()).unwrap_or(i32::MAX),
        chain_low: chain.iter().min().copied(),
        tail,
        digest: body_digest(body).to_vec(),
        bytes: i32::try_from(body.len()).unwrap_or(i32::MAX),
        patches: serde_json::to_string(patches).unwrap_or_else(|_| "[]".into()),
        pieces_digest: pieces_digest(&digest(&body.head), &digest(&body.tail), &digests, patches).to_vec(),
        frozen: serde_json::to_string(frozen).unwrap_or_else(|_| "{}".into()),
    })
}

/// The chain of the conversation's seal most like `frozen`: its node ids and digests,
/// oldest first. Nothing to share (every element is written anew) when there is none or
/// it does not read back whole.
fn previous_chain(nodes: &mut impl SealNodes, frozen: &Frozen) -> Vec<(i64, Vec<u8>)> {
    let like = frozen_for(frozen.answerer_id, Some(frozen.wire));
    let Ok(Some((chain, length, low))) = nodes.previous(&like) else {
        return Vec::new();
    };
    let read = nodes.read(low, chain, &[], false).unwrap_or_default();
    let digests: HashMap<i64, (Option<i64>, Vec<u8>)> =
        read.into_iter().map(|n| (n.id, (n.parent, n.digest))).collect();
    walk_chain(&digests, Some(chain), length).unwrap_or_default()
}

/// Allocates node ids and queues new nodes, reusing any node with the same parent and
/// text.
struct Writer<'n, 'm, N> {
    nodes: &'n mut N,
    conv: Uuid,
    next_id: i64,
    queued: Vec<SealNode>,
    /// How an element node's layout is cut and counted.
    cut: Cut,
    memo: &'m mut Memo,
}

impl<N: SealNodes> Writer<'_, '_, N> {
    /// The node of `text` under `parent`: an existing one (holding exactly this text), or
    /// a new one queued (with its layout when it is an `element` of the list). `fresh_parent`:
    /// the parent was queued here, so no existing node can match.
    fn node(&mut self, parent: Option<i64>, text: &str, fresh_parent: bool, element: bool) -> Result<(i64, bool)> {
        let d = digest(text).to_vec();
        if !fresh_parent {
            if let Some((id, stored)) = self.nodes.find(parent, &d)? {
                if stored != text {
                    return Err(Error::new(
                        Code::DataCorrupted,
                        format!("seal node {id} of conversation {} does not hold the text its digest names", self.conv),
                    )
                    .hint("Seal storage changes only through pgprompt; SELECT * FROM prompt.verify_seals(conversation_id) lists the seals it breaks."));
                }
                return Ok((id, false));
            }
        }
        if let Some(n) = self.queued.iter().find(|n| n.digest == d && n.parent == parent) {
            return Ok((n.id, true));
        }
        self.next_id += 1;
        let layout = element.then(|| crate::laid::element_layout(self.cut, text, self.memo));
        self.queued.push(SealNode {
            id: self.next_id,
            parent,
            text: Some(text.to_string()),
            digest: d,
            layout,
        });
        Ok((self.next_id, true))
    }
}

/// The nodes no live seal uses any more, of `parents` (every node's parent by id), given
/// the live seals' pointers: what pruning deletes. `Err` names a live seal whose chain is
/// broken (then nothing it might still reach may go).
pub fn dead_seal_nodes(
    live: &[(Uuid, SealPointers)],
    parents: &HashMap<i64, Option<i64>>,
) -> std::result::Result<Vec<i64>, Uuid> {
    let nodes: HashMap<i64, (Option<i64>, ())> = parents.iter().map(|(id, p)| (*id, (*p, ()))).collect();
    let mut keep: HashSet<i64> = HashSet::new();
    for (turn, p) in live {
        keep.extend(singles(p));
        let chain = walk_chain(&nodes, p.chain, p.chain_length).ok_or(*turn)?;
        keep.extend(chain.into_iter().map(|(id, _)| id));
    }
    let mut dead: Vec<i64> = parents.keys().filter(|id| !keep.contains(id)).copied().collect();
    dead.sort_unstable();
    Ok(dead)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Scenario;

    /// One conversation's nodes in memory, as the host keeps them, and the seals written
    /// (their pointers and the frozen record each contains).
    #[derive(Default)]
    struct Memory {
        nodes: HashMap<i64, SealNode>,
        seals: Vec<(SealPointers, serde_json::Value)>,
    }

    impl SealNodes for Memory {
        fn read(&mut self, low: i64, high: i64, singles: &[i64], texts: bool) -> Result<Vec<SealNode>> {
            let mut out: Vec<SealNode> = self
                .nodes
                .values()
                .filter(|n| (low..=high).contains(&n.id) || singles.contains(&n.id))
                .cloned()
                .map(|n| SealNode {
                    text: n.text.filter(|_| texts),
                    ..n
                })
                .collect();
            out.sort_by_key(|n| n.id);
            Ok(out)
        }

        fn layouts(&mut self, low: i64, high: i64, singles: &[i64]) -> Result<Vec<SealNode>> {
            self.read(low, high, singles, false)
        }

        fn previous(&mut self, like: &serde_json::Value) -> Result<Option<(i64, i32, i64)>> {
            let contains = |v: &serde_json::Value| like.as_object().unwrap().iter().all(|(k, x)| v.get(k) == Some(x));
            let newest = self.seals.iter().rev().filter(|(p, _)| !p.pruned && p.chain.is_some());
            let best = newest
                .clone()
                .find(|(_, f)| contains(f))
                .or_else(|| newest.clone().next());
            Ok(best.map(|(p, _)| (p.chain.unwrap(), p.chain_length, p.chain_low.unwrap())))
        }

        fn find(&mut self, parent: Option<i64>, digest: &[u8]) -> Result<Option<(i64, String)>> {
            let n = self.nodes.values().find(|n| n.parent == parent && n.digest == digest);
            Ok(n.map(|n| (n.id, n.text.clone().unwrap())))
        }

        fn newest(&mut self) -> Result<i64> {
            Ok(self.nodes.keys().max().copied().unwrap_or(0))
        }
    }

    impl Memory {
        /// Lays `body` out and stores what the host would: its new nodes and its row.
        fn seal(&mut self, draft: &SealDraft, body: &Body) -> SealPointers {
            let laid = lay_out_seal(self, Uuid::nil(), body, draft, &mut Memo::default()).unwrap();
            self.store(&laid)
        }

        /// Stores what the host would of a seal laid out: its new nodes and its row.
        fn store(&mut self, laid: &LaidSeal) -> SealPointers {
            for n in laid.nodes.iter().cloned() {
                assert!(self.nodes.insert(n.id, n).is_none(), "a node id is written twice");
            }
            let p = SealPointers {
                pruned: false,
                patches: laid.patches.clone(),
                head: Some(laid.head),
                lead: laid.lead.iter().copied().map(Some).collect(),
                chain: laid.chain,
                chain_length: laid.chain_length,
                chain_low: laid.chain_low,
                tail: Some(laid.tail),
                digest: laid.digest.clone(),
                bytes: laid.bytes,
            };
            self.seals
                .push((p.clone(), serde_json::from_str(&laid.frozen).unwrap()));
            p
        }
    }

    /// The requests of two seals of a conversation on every wire, replayed through the cache
    /// model from their layouts as stored and from their texts: the same rows (SPEC §16.5:
    /// the report reads what was stored when a request was sent, and reads it as the text
    /// would read).
    #[test]
    fn a_seals_layout_replays_as_its_text_on_every_wire() {
        use crate::cache::{replay, Request, Sent};
        use crate::rows::Role;
        for &wire in crate::kinds::Wire::ALL {
            let long = "The refund policy reads as follows, clause by clause. ".repeat(120);
            let mut s = Scenario::new("Which clause applies?")
                .doc(crate::testing::LARK, "system_prompt", &long)
                .message(Role::User, crate::testing::ADA, &long)
                .message(Role::Assistant, crate::testing::LARK, "Clause four.");
            s.model_mut("claude").wire = wire;
            let mut store = Memory::default();
            let mut sent = Vec::new();
            let mut rows = Vec::new();
            for step in 0..3 {
                let out = s.run(crate::Purpose::Compile).unwrap();
                let draft = out.seal.clone().unwrap();
                if wire == crate::kinds::Wire::Anthropic {
                    assert!(!draft.patches.is_empty(), "the seal marks breakpoints in its elements");
                }
                let laid = lay_out_seal(&mut store, Uuid::nil(), &out.body, &draft, &mut Memo::default()).unwrap();
                let p = store.store(&laid);
                let pieces = read_sealed_pieces(&mut store, &[(&p, Some(&laid.pieces_digest[..]))])
                    .unwrap()
                    .unwrap();
                let layouts = [SealLayout {
                    pointers: &p,
                    pieces_digest: Some(&laid.pieces_digest),
                    layout: Some(&laid.layout),
                    frozen: &draft.frozen,
                }];
                let read = read_sealed_layouts(&mut store, &layouts, &mut Catalog::default())
                    .unwrap()
                    .unwrap();
                let request = |body| Sent {
                    turn_id: Uuid::nil(),
                    step,
                    at: f64::from(step) * 30.0,
                    wire,
                    model: draft.frozen.model.clone(),
                    body,
                    billed: None,
                    billed_miss: None,
                };
                rows.push((
                    p.clone(),
                    laid.pieces_digest.clone(),
                    laid.layout.clone(),
                    draft.frozen.clone(),
                ));
                let laid_request = read[0].clone().unwrap_or_else(|| panic!("{wire:?}: no layout read"));
                sent.push((
                    request(Request::Pieces(pieces[0].clone().unwrap())),
                    request(Request::Laid(laid_request)),
                ));
                // The next request: this one's prompt answered, then the same question.
                s = s
                    .message(Role::User, crate::testing::ADA, "Which clause applies?")
                    .message(Role::Assistant, crate::testing::LARK, "Clause five.");
            }
            let (texts, mut laid): (Vec<Sent>, Vec<Sent>) = sent.into_iter().unzip();
            let (from_text, from_layout) = (
                replay(&texts, &mut Memo::default()),
                replay(&laid, &mut Memo::default()),
            );
            assert_eq!(from_text, from_layout, "{wire:?}");
            // The seals read together (what one walked, the next reads again only where it
            // goes further), newest first: the same requests.
            let together: Vec<SealLayout<'_>> = rows
                .iter()
                .rev()
                .map(|(p, pieces, layout, frozen)| SealLayout {
                    pointers: p,
                    pieces_digest: Some(pieces),
                    layout: Some(layout),
                    frozen,
                })
                .collect();
            let read = read_sealed_layouts(&mut store, &together, &mut Catalog::default())
                .unwrap()
                .unwrap();
            for (sent, read) in laid.iter_mut().zip(read.into_iter().rev()) {
                sent.body = Request::Laid(read.expect("a layout"));
            }
            assert_eq!(
                replay(&laid, &mut Memo::default()),
                from_text,
                "{wire:?}: read together"
            );
            assert!(
                from_text[1].shared_prefix_tokens > 0,
                "{wire:?}: the second extends the first"
            );
        }
    }

    /// A stateful turn sends its seal's chained form: the seal's layout and its text read
    /// back as that request (its frame written again, the elements before its cut left out),
    /// never as the full body sealed; its frame is not lent by the head and tail it shares
    /// with the full body.
    #[test]
    fn a_stateful_seal_reads_back_as_the_chained_request_it_sent() {
        use crate::rows::Role;
        let out = Scenario::new("And now?")
            .doc(crate::testing::LARK, "system_prompt", "Be brief.")
            .message(Role::User, crate::testing::ADA, "Hello.")
            .message(Role::Assistant, crate::testing::LARK, "Hi.")
            .turn(|t| {
                t.model = Some("resp".into());
                t.request_options = crate::testing::request_options(r#"{"stateful": true}"#);
            })
            .run(crate::Purpose::Compile)
            .unwrap();
        let (sealed, draft) = out.sealed_body().expect("a seal");
        assert!(
            out.body.elements.len() < sealed.elements.len(),
            "the chained form leaves out its system element"
        );
        let mut store = Memory::default();
        let laid = lay_out_seal(&mut store, Uuid::nil(), sealed, draft, &mut Memo::default()).unwrap();
        let p = store.store(&laid);
        let cut = cut_of(&draft.frozen);
        let mut catalog = Catalog::default();
        let layouts = [SealLayout {
            pointers: &p,
            pieces_digest: Some(&laid.pieces_digest),
            layout: Some(&laid.layout),
            frozen: &draft.frozen,
        }];
        // Read as another turn's, it leaves out what no request but a stateful one does:
        // not read (its text is).
        let mut plain = draft.frozen.clone();
        plain.stateful = None;
        let as_plain = [SealLayout {
            pointers: &p,
            pieces_digest: Some(&laid.pieces_digest),
            layout: Some(&laid.layout),
            frozen: &plain,
        }];
        let read = read_sealed_layouts(&mut store, &as_plain, &mut catalog)
            .unwrap()
            .unwrap();
        assert!(
            read[0].is_none(),
            "a layout leaving elements out is a stateful turn's alone"
        );
        let read = read_sealed_layouts(&mut store, &layouts, &mut catalog)
            .unwrap()
            .unwrap();
        let read = read[0].clone().expect("a layout");
        let sent = crate::laid::lay_request(cut, &out.body, &mut Catalog::default(), &mut Memo::default());
        assert_eq!(*read.frame, *sent.frame);
        assert_eq!(read.elements, sent.elements);
        assert!(
            catalog.frames.is_empty(),
            "a chained frame is not lent by the full body's head and tail"
        );
        // Its text, read as sent.
        let pieces = read_sealed_pieces(&mut store, &[(&p, Some(&laid.pieces_digest[..]))])
            .unwrap()
            .unwrap();
        let pieces = sent_pieces(&draft.frozen, pieces[0].clone().unwrap()).unwrap();
        assert_eq!(*pieces.frame.1, *out.body.frame_text());
        let texts: Vec<&str> = pieces.elements.iter().map(|(_, e)| &**e).collect();
        assert_eq!(texts, out.body.elements.iter().map(String::as_str).collect::<Vec<_>>());
    }

    /// A compile's seal draft, its elements unmarked.
    fn draft() -> SealDraft {
        let out = Scenario::new("hello").run(crate::Purpose::Compile).unwrap();
        SealDraft {
            seed: None,
            unmarked: Vec::new(),
            patches: Vec::new(),
            ..out.seal.unwrap()
        }
    }

    fn body(elements: &[&str]) -> Body {
        Body {
            head: "{\"messages\":[".into(),
            elements: elements.iter().map(|e| e.to_string()).collect(),
            tail: "]}".into(),
        }
    }

    #[test]
    fn a_body_is_laid_out_over_shared_nodes_and_reads_back_checked() {
        let frozen = draft();
        let mut store = Memory::default();
        let first = body(&["\"s\"", "\"a\"", "\"b\""]);
        let p1 = store.seal(&frozen, &first);
        let written = store.nodes.len();
        // The next request repeats the first's elements and adds two: only they are new.
        let second = body(&["\"s\"", "\"a\"", "\"b\"", "\"c\"", "\"d\""]);
        let p2 = store.seal(&frozen, &second);
        assert_eq!(store.nodes.len(), written + 2, "storage grows with what is new");
        assert_eq!(read_sealed_body(&mut store, &p1).unwrap(), first);
        assert_eq!(read_sealed_body(&mut store, &p2).unwrap(), second);

        // A marked element is stored plain, with its patch.
        let plain = body(&["\"s\"", "\"a\"", "\"b\"", "\"c\"", "\"d\"", "\"e\""]);
        let unmarked = vec![(2, plain.elements[2].clone())];
        let patch = crate::seal::patches(
            &unmarked,
            &["\"s\"", "\"a\"", "\"b!\"", "\"c\"", "\"d\"", "\"e\""].map(String::from),
        );
        let marked = body(&["\"s\"", "\"a\"", "\"b!\"", "\"c\"", "\"d\"", "\"e\""]);
        let marking = SealDraft {
            unmarked,
            patches: patch,
            ..frozen.clone()
        };
        let laid = lay_out_seal(&mut store, Uuid::nil(), &marked, &marking, &mut Memo::default()).unwrap();
        assert_eq!(laid.nodes.len(), 1, "the marked element is shared unmarked");

        // Pieces read back for several seals at once, each checked.
        let seals = [(&p1, None), (&p2, None)];
        let pieces = read_sealed_pieces(&mut store, &seals).unwrap().unwrap();
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[1].as_ref().unwrap().elements.len(), 5);

        // Pruning the first seal frees nothing the second still uses.
        let live = [(Uuid::nil(), p2.clone())];
        let parents: HashMap<i64, Option<i64>> = store.nodes.values().map(|n| (n.id, n.parent)).collect();
        assert_eq!(dead_seal_nodes(&live, &parents).unwrap(), Vec::<i64>::new());
        assert_eq!(dead_seal_nodes(&[], &parents).unwrap().len(), store.nodes.len());
    }

    #[test]
    fn a_body_that_does_not_read_back_is_refused() {
        let frozen = draft();
        let mut store = Memory::default();
        let p = store.seal(&frozen, &body(&["\"s\"", "\"a\""]));
        let chain = p.chain.unwrap();

        let mut altered = store.nodes.clone();
        altered.get_mut(&chain).unwrap().text = Some("\"z\"".into());
        let mut bad = Memory {
            nodes: altered,
            seals: Vec::new(),
        };
        assert_eq!(
            read_sealed_body(&mut bad, &p),
            Err("has a body that does not match its digest")
        );
        let refused = read_sealed_pieces(&mut bad, &[(&p, None)]).unwrap();
        assert_eq!(refused.err(), Some((0, "has a body that does not match its digest")));
        // Writing over a node whose text is not what its digest names is data_corrupted.
        let e = lay_out_seal(
            &mut bad,
            Uuid::nil(),
            &body(&["\"s\"", "\"a\""]),
            &frozen,
            &mut Memo::default(),
        );
        assert_eq!(e.unwrap_err().code, Code::DataCorrupted);

        let mut lost = Memory {
            nodes: store.nodes.clone(),
            ..Memory::default()
        };
        lost.nodes.remove(&chain);
        assert_eq!(read_sealed_body(&mut lost, &p), Err("lost a node"));
        let parents: HashMap<i64, Option<i64>> = lost.nodes.values().map(|n| (n.id, n.parent)).collect();
        assert_eq!(dead_seal_nodes(&[(Uuid::max(), p.clone())], &parents), Err(Uuid::max()));

        let short = SealPointers { bytes: -1, ..p.clone() };
        assert_eq!(read_sealed_body(&mut store, &short), Err("records a size out of range"));
        let unfit = SealPointers {
            chain_length: 5,
            ..p.clone()
        };
        assert_eq!(
            read_sealed_body(&mut store, &unfit),
            Err("has chain pointers that do not fit together")
        );
        assert_eq!(
            frozen_of_text("{}", None),
            Err("has a frozen record that does not match its digest".to_string())
        );
    }

    fn frozen_of_text(text: &str, d: Option<&[u8]>) -> std::result::Result<(), String> {
        read_frozen(text, d).map(drop)
    }
}
