//! Seals (docs/design.md, "Seals"): what the first compile of a turn freezes, and how
//! sealed bodies share their storage.
//!
//! A sealed body is a head, the elements of its list and a tail. Consecutive requests of
//! a conversation share almost all their elements, so elements are stored as nodes of a
//! persistent newest-to-oldest list: a seal is a few leading elements stored on their
//! own, then a pointer to the newest node of its chain and a count, then the tail. A new
//! seal reuses the longest run of the previous seal's chain it repeats and adds a node
//! per element after it, so storage grows with what is new, never with what is repeated.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use std::hash::{BuildHasher, Hasher};

use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::estimate::Estimate;
use crate::fields::RawEntry;
use crate::kinds::{Mechanism, PrefaceItem, Wire};
use crate::rows::Model;
use crate::wire::{Body, Breakpoint};

/// What a seal freezes besides the body: a continuation renders from this alone, never
/// from current rows (the model row, the answerer's model and the turn's tools may all
/// have changed since).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frozen {
    /// The answerer's mechanism the turn was compiled by (`default`, `assembly` or `raw`).
    pub mechanism: Mechanism,
    /// The wire the body was rendered on: the model's (`anthropic` without a model).
    pub wire: Wire,
    /// The model row compiled for, as it was then (`None`: neither the turn nor its
    /// answerer names a model).
    pub model: Option<Model>,
    /// The answerer the turn was compiled for (steers are read for it).
    pub answerer_id: Uuid,
    pub(crate) cache_marker: usize,
    pub(crate) cache_breakpoints: Vec<Breakpoint>,
    pub(crate) preface: Vec<PrefaceItem>,
    /// The sealed body's token estimate (a continuation adds its rounds to its total).
    pub(crate) estimate: Estimate,
    /// Where an in-turn summary cuts the body.
    pub(crate) seed_cut: SeedCut,
    /// Where the body's history began: the answerer's next turn under stable trimming
    /// keeps it while it fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) history_from: Option<crate::kinds::EntryAt>,
    /// What the turn deferred: kept for a tool search over it.
    #[serde(default, skip_serializing_if = "Deferred::is_empty")]
    pub(crate) deferred: Deferred,
    /// Compiled in stateful mode (`request_options.stateful`): the body the turn sends is
    /// the stored one in its stateful form (docs/design.md, "Stateful responses").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stateful: Option<Stateful>,
    /// The turn's effective skill set when it was sealed (`skills_for_turn` of a sealed
    /// turn): empty for a turn that declares no callable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) skills: Vec<crate::rows::TurnSkill>,
    /// The tool-result clearing rule the turn's requests clear by (its request options'
    /// `clear_tool_results` when it was sealed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) clear_tool_results: Option<crate::clearing::Rule>,
}

impl Frozen {
    /// The estimate of the sealed request (its total input tokens).
    pub fn estimated_total(&self) -> u32 {
        self.estimate.total
    }
}

/// A stateful turn's chain, frozen with its seal: the seal stores the full request, and
/// every request of the turn is sent as its system text in `instructions`, then, when
/// the chain holds, `previous_response_id` and the elements from `cut` on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stateful {
    /// The response this turn continues (`None`: the full body, the chain starts here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) previous_response_id: Option<String>,
    /// The first element of the full body's list sent after `previous_response_id`
    /// (what the provider does not hold yet); the leading system elements are never sent.
    #[serde(default)]
    pub(crate) cut: usize,
    /// What the provider holds, from the previous response's recorded usage (input and
    /// output tokens, less the previous instructions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) held_tokens: Option<u32>,
}

/// How the extension picks seals by what they froze, without knowing the record's
/// layout: the part of a stored [`Frozen`] record (`prompt.seals.frozen`) that every seal
/// compiled for answerer `a` contains, and on `wire` too when given. A query matches it
/// by containment (`frozen @> $n`).
pub(crate) fn frozen_for(a: Uuid, wire: Option<Wire>) -> serde_json::Value {
    /// Frozen's own keys and spellings (a test holds them to a real record).
    #[derive(Serialize)]
    struct For {
        answerer_id: Uuid,
        #[serde(skip_serializing_if = "Option::is_none")]
        wire: Option<Wire>,
    }
    serde_json::to_value(For { answerer_id: a, wire }).unwrap_or_default()
}

/// The part every stored record of a stateful seal ([`Frozen::stateful`]) contains, for
/// a query's `frozen @> $n`.
pub(crate) fn frozen_stateful() -> serde_json::Value {
    serde_json::json!({ "stateful": {} })
}

/// The key of a stored [`Frozen`] record that says where its body's history began
/// ([`Frozen::history_from`]): a query reads that part alone (`frozen -> $n`), the
/// rest of the record (a deferred tool's schema, carried parts) unread.
pub(crate) const HISTORY_FROM: &str = "history_from";

/// Where the body of a stored [`Frozen`] record began its history, from the record's
/// value at [`HISTORY_FROM`] (`None`, or `null`: from the start). A value that does not
/// read is `data_corrupted`, never a history from the start.
pub(crate) fn history_from(value: Option<&serde_json::Value>) -> crate::error::Result<Option<crate::kinds::EntryAt>> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    crate::kinds::EntryAt::deserialize(value).map(Some).map_err(|e| {
        crate::error::Error::new(
            crate::error::Code::DataCorrupted,
            "a previous seal's frozen record does not say where its history began",
        )
        .detail(format!("prompt.seals.frozen -> {HISTORY_FROM}: {e}"))
        .hint("Seal storage changes only through pgprompt; SELECT * FROM prompt.verify_seals(conversation_id) checks every seal's body.")
    })
}

/// The callables and tools a turn marked deferred, frozen with its seal: the catalog
/// lines the eager catalog leaves out, and the tool definitions the request does not
/// load (`defer_loading` on `anthropic` and `responses`; absent on `chat` and `gemini`).
/// `prompt.search_deferred` searches them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Deferred {
    /// `- CALLABLE / NAME [EXECUTOR_ID]: DESCRIPTION`, as the catalog would list them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub catalog: Vec<String>,
    /// `{name, description?, input_schema}`, as the turn declared them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<serde_json::Value>,
}

impl Deferred {
    pub(crate) fn is_empty(&self) -> bool {
        self.catalog.is_empty() && self.tools.is_empty()
    }

    /// What matches `query`: every whitespace-separated term, case-insensitively, in a
    /// catalog line, or in a tool's name or description. An empty query matches all.
    pub(crate) fn search(&self, query: &str) -> Deferred {
        let terms: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let hit = |text: &str| {
            let text = text.to_lowercase();
            terms.iter().all(|t| text.contains(t.as_str()))
        };
        Deferred {
            catalog: self.catalog.iter().filter(|l| hit(l)).cloned().collect(),
            tools: self
                .tools
                .iter()
                .filter(|t| {
                    let name = t.get("name").and_then(serde_json::Value::as_str).unwrap_or("");
                    let description = t.get("description").and_then(serde_json::Value::as_str).unwrap_or("");
                    hit(&format!("{name}\n{description}"))
                })
                .cloned()
                .collect(),
        }
    }
}

/// An in-turn summary replaces the seed (preface and opening words) and the rounds
/// before it: the body keeps its first `keep` elements, and the history parts that
/// shared an element with the seed (`carry`, as raw entries) render again before the
/// summary. `tokens` is what the elements from `keep` on cost in the sealed total.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SeedCut {
    pub(crate) keep: usize,
    pub(crate) carry: serde_json::Value,
    pub(crate) tokens: u32,
}

impl SeedCut {
    /// The carried history parts, as raw entries (they were written by the seal). Parts
    /// that do not read back are `data_corrupted`, never none: an empty carry would
    /// return other bytes than the seal froze.
    pub(crate) fn carried(&self) -> crate::error::Result<Vec<RawEntry>> {
        if self.carry.is_null() {
            return Ok(Vec::new());
        }
        crate::fields::parse_carried(&self.carry).map_err(|e| {
            crate::error::Error::new(
                crate::error::Code::DataCorrupted,
                "the seal's carried parts (seed_cut.carry) do not read back",
            )
            .detail(format!("Read as raw entries: {}", e.message))
            .hint("The seal was altered outside pgprompt; restore prompt.seals from a backup.")
        })
    }
}

/// A body as pieces: the text around its list (its head, then its tail: the body with
/// an empty list), then its list's elements. A key names a piece's text among the
/// requests replayed together (the same key, the same text); `None`: read on its own.
#[derive(Debug, Clone)]
pub struct Pieces {
    /// The body with an empty list, keyed by its head's and its tail's.
    pub frame: (Option<(i64, i64)>, Rc<str>),
    /// The list's elements, in order.
    pub elements: Vec<(Option<i64>, Rc<str>)>,
}

/// What a fresh compile stores (docs/design.md, "Seals"), and what a 0.2 seal converts to.
#[derive(Debug, Clone, PartialEq)]
pub struct SealDraft {
    /// The sealed body when it is not the output's own: rounds were already stored at the
    /// first compile, and the output continues this seed; or the output is its stateful
    /// form. `None`: the output's body is the one sealed (it is not copied;
    /// `Output::sealed_body` reads either).
    pub(crate) seed: Option<Body>,
    /// The text without cache breakpoints of each element of the sealed body a breakpoint
    /// marks, by index (with the others, what storage shares between seals); empty when
    /// none is marked.
    pub(crate) unmarked: Vec<(usize, String)>,
    /// The edits that turn the plain elements into the body's elements (empty when they are
    /// the same).
    pub(crate) patches: Vec<Patch>,
    /// What the seal freezes besides the body (mechanism, wire, model, estimate, ...).
    pub frozen: Frozen,
    /// The turn's preface (what it laid between history and its input), as the JSON the
    /// turn's `sealed_preface` stores.
    pub preface: String,
    /// The skills catalog text, stored as the turn's `sealed_catalog` (`None`: the turn
    /// lists no skills).
    pub catalog: Option<String>,
    /// The row versions the compile read (JSON text).
    pub versions: String,
}

impl SealDraft {
    /// The elements storage shares of `body` (the sealed body): its elements without cache
    /// breakpoints.
    pub(crate) fn plain<'b>(&'b self, body: &'b Body) -> Vec<&'b str> {
        let mut plain: Vec<&str> = body.elements.iter().map(String::as_str).collect();
        for (i, text) in self.unmarked.iter().filter(|_| !self.patches.is_empty()) {
            if let Some(e) = plain.get_mut(*i) {
                *e = text;
            }
        }
        plain
    }
}

/// A sealed turn as a compile sees it: what was frozen, and the body unless
/// `prune_seals` dropped it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sealed {
    /// What the seal froze besides the body.
    pub frozen: Frozen,
    /// The sealed body (`None`: `prune_seals` dropped it).
    pub body: Option<Body>,
}

/// An edit of one stored element: bytes `offset..offset + cut` become `insert`. A cache
/// breakpoint marks the newest history element of one request and not the next, so
/// elements are stored unmarked (shared by every seal that repeats them) and each seal
/// keeps the few edits that mark its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Patch {
    pub(crate) at: usize,
    pub(crate) offset: usize,
    pub(crate) cut: usize,
    pub(crate) insert: String,
}

/// The edits that turn the unmarked texts of elements (`unmarked`: index, text) into
/// the `marked` elements at those indexes (a single region of difference per element).
pub(crate) fn patches(unmarked: &[(usize, String)], marked: &[String]) -> Vec<Patch> {
    unmarked
        .iter()
        .filter_map(|(at, p)| Some((*at, (p, marked.get(*at)?))))
        .filter(|(_, (p, m))| p != m)
        .map(|(at, (p, m))| {
            let prefix = p
                .char_indices()
                .zip(m.chars())
                .take_while(|((_, a), b)| a == b)
                .last()
                .map_or(0, |((i, c), _)| i + c.len_utf8());
            let suffix = p[prefix..]
                .chars()
                .rev()
                .zip(m[prefix..].chars().rev())
                .take_while(|(a, b)| a == b)
                .map(|(c, _)| c.len_utf8())
                .sum::<usize>();
            Patch {
                at,
                offset: prefix,
                cut: p.len() - prefix - suffix,
                insert: m[prefix..m.len() - suffix].to_string(),
            }
        })
        .collect()
}

/// Applies `patches` to stored elements. `None` when one does not fit (storage was
/// altered).
pub(crate) fn apply(elements: &mut [String], patches: &[Patch]) -> Option<()> {
    for p in patches {
        p.apply_to(elements.get_mut(p.at)?)?;
    }
    Some(())
}

impl Patch {
    /// Applies this edit to its element `e`. `None` when it does not fit.
    fn apply_to(&self, e: &mut String) -> Option<()> {
        let end = self.offset.checked_add(self.cut)?;
        if end > e.len() || !e.is_char_boundary(self.offset) || !e.is_char_boundary(end) {
            return None;
        }
        e.replace_range(self.offset..end, &self.insert);
        Some(())
    }
}

/// The SHA-256 of a text (defined beside the body whose bytes it digests).
pub(crate) use crate::wire::sha256 as digest;

/// The SHA-256 of a body's bytes (`Body::text`), without joining them first.
pub(crate) fn body_digest(body: &Body) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(body.head.as_bytes());
    for (i, e) in body.elements.iter().enumerate() {
        if i > 0 {
            h.update(b",");
        }
        h.update(e.as_bytes());
    }
    h.update(body.tail.as_bytes());
    h.finalize().into()
}

/// Whether a body read back from storage is the one sealed: its length and its digest
/// are the ones stored with it. `Err` says which does not match.
pub(crate) fn verify(body: &Body, bytes: usize, stored_digest: &[u8]) -> std::result::Result<(), &'static str> {
    if body.len() != bytes {
        return Err("has a body of another size than it recorded");
    }
    if body_digest(body).as_slice() != stored_digest {
        return Err("has a body that does not match its digest");
    }
    Ok(())
}

/// A stored body's pieces, as its nodes hold them: its head and tail, its elements (the
/// lead's, then the chain's, oldest first) each with its node's id, the edits that mark
/// them, and the size and digest it was sealed with.
pub(crate) struct StoredPieces<'a> {
    /// The head node's id and text.
    pub head: (i64, Rc<str>),
    /// The tail node's id and text.
    pub tail: (i64, Rc<str>),
    /// The elements' nodes, lead first.
    pub elements: Vec<(i64, Rc<str>)>,
    /// How many of `elements` are the lead's.
    pub lead: usize,
    /// The seal's patches.
    pub patches: &'a [Patch],
    /// The body's size in bytes, as sealed.
    pub bytes: usize,
    /// The body's SHA-256, as sealed.
    pub digest: &'a [u8],
    /// The seal's [`pieces_digest`] and each node's stored digest by id. `None` for a
    /// seal written before 0.5, which has none: its body is hashed whole.
    pub pieces: Option<(&'a [u8], &'a NodeDigest<'a>)>,
}

/// A node's stored digest by its id (`None`: no such node was read).
pub(crate) type NodeDigest<'a> = dyn Fn(i64) -> Option<[u8; 32]> + 'a;

/// The digest of a body's pieces as storage keeps them (`prompt.seals.pieces_digest`):
/// the SHA-256 of its head node's, its tail node's and each element node's digest in
/// order, then of its patch list as JSON. With every node checked against its own
/// digest it covers the body's bytes as the body's digest does, and checking it costs
/// 32 bytes an element instead of the body.
pub(crate) fn pieces_digest<'d>(
    head: &[u8; 32],
    tail: &[u8; 32],
    elements: impl IntoIterator<Item = &'d [u8; 32]>,
    patches: &[Patch],
) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(head);
    h.update(tail);
    for e in elements {
        h.update(e);
    }
    h.update(serde_json::to_string(patches).unwrap_or_default().as_bytes());
    h.finalize().into()
}

/// [`pieces_digest`] of several seals, each hashed from where a seal it extends ended: the
/// hash's state after a seal's last element is kept under the nodes that make that prefix
/// (its head, tail, lead, the chain's oldest node and that element's: a chain node's
/// parents fix the rest), so a seal that extends another costs what it adds.
#[derive(Default)]
pub(crate) struct PiecesDigests {
    states: foldhash::HashMap<(i64, i64, u64, i64, i64), Sha256>,
}

impl PiecesDigests {
    /// The pieces digest of a seal whose head and tail are `head` and `tail`, whose
    /// elements are `elements` (node id and digest, in order), the first `lead` of them
    /// stored on their own.
    pub(crate) fn of(
        &mut self,
        head: (i64, &[u8; 32]),
        tail: (i64, &[u8; 32]),
        elements: &[(i64, [u8; 32])],
        lead: usize,
        patches: &[Patch],
    ) -> [u8; 32] {
        let lead_ids = {
            let mut h = foldhash::fast::FixedState::with_seed(0).build_hasher();
            for (id, _) in &elements[..lead.min(elements.len())] {
                h.write_i64(*id);
            }
            h.write_usize(lead);
            h.finish()
        };
        let first = elements.get(lead).map_or(0, |e| e.0);
        let key = |k: usize| (head.0, tail.0, lead_ids, first, elements[k].0);
        let cached = (lead..elements.len())
            .rev()
            .find_map(|k| self.states.get(&key(k)).map(|h| (h.clone(), k + 1)));
        let (mut h, from) = cached.unwrap_or_else(|| {
            let mut h = Sha256::new();
            h.update(head.1);
            h.update(tail.1);
            (h, 0)
        });
        for (_, d) in elements.iter().skip(from) {
            h.update(d);
        }
        // Kept after the last element alone: a later seal that extends this one starts
        // there (one state a seal, however long its chain).
        if elements.len() > lead {
            self.states.insert(key(elements.len() - 1), h.clone());
        }
        h.update(serde_json::to_string(patches).unwrap_or_default().as_bytes());
        h.finalize().into()
    }
}

/// Reads stored bodies back as [`Pieces`] without joining them, checking
/// each against its size and digest: the leading elements that bodies share (the same
/// head, lead and chain nodes) are hashed once, so reading a conversation's requests
/// costs what they add, not what they repeat.
#[derive(Default)]
pub(crate) struct PieceReader {
    /// The digest's state after a shared prefix, keyed by the nodes that make it.
    states: foldhash::HashMap<Vec<i64>, Sha256>,
    /// The nodes checked against their own digests.
    checked: foldhash::HashSet<i64>,
    frames: foldhash::HashMap<(i64, i64), Rc<str>>,
}

impl PieceReader {
    /// The body's pieces, or why it does not read back as sealed.
    pub(crate) fn read(&mut self, s: &StoredPieces<'_>) -> std::result::Result<Pieces, &'static str> {
        let n = s.elements.len();
        let mut patched = std::collections::BTreeMap::<usize, String>::new();
        for p in s.patches {
            let unfit = "has patches that do not fit its elements";
            let (_, text) = s.elements.get(p.at).ok_or(unfit)?;
            let e = patched.entry(p.at).or_insert_with(|| text.to_string());
            p.apply_to(e).ok_or(unfit)?;
        }
        let text = |i: usize| patched.get(&i).map_or(&*s.elements[i].1, String::as_str);
        let len = s.head.1.len() + s.tail.1.len() + (0..n).map(|i| text(i).len()).sum::<usize>() + n.saturating_sub(1);
        if len != s.bytes {
            return Err("has a body of another size than it recorded");
        }
        match s.pieces {
            Some((pieces, node_digest)) => self.check_pieces(s, pieces, node_digest)?,
            None => self.check_body(s, &patched)?,
        }
        let frame = self
            .frames
            .entry((s.head.0, s.tail.0))
            .or_insert_with(|| Rc::from(format!("{}{}", s.head.1, s.tail.1)))
            .clone();
        let elements = (0..n)
            .map(|i| match patched.remove(&i) {
                Some(t) => (None, Rc::from(t)),
                None => (Some(s.elements[i].0), s.elements[i].1.clone()),
            })
            .collect();
        Ok(Pieces {
            frame: (Some((s.head.0, s.tail.0)), frame),
            elements,
        })
    }

    /// Checks every node against its own digest (once a reader) and the seal's pieces
    /// against its [`pieces_digest`].
    fn check_pieces(
        &mut self,
        s: &StoredPieces<'_>,
        pieces: &[u8],
        node_digest: &NodeDigest<'_>,
    ) -> std::result::Result<(), &'static str> {
        let nodes = [&s.head, &s.tail].into_iter().chain(&s.elements);
        let mut digests = Vec::with_capacity(s.elements.len() + 2);
        for (id, text) in nodes {
            let d = node_digest(*id).ok_or("lost a node")?;
            if !self.checked.contains(id) {
                if digest(text) != d {
                    return Err("has a node that does not match its digest");
                }
                self.checked.insert(*id);
            }
            digests.push(d);
        }
        if pieces_digest(&digests[0], &digests[1], &digests[2..], s.patches).as_slice() != pieces {
            return Err("has pieces that do not match their digest");
        }
        Ok(())
    }

    /// Checks the body against its digest, hashing from the longest prefix read before.
    fn check_body(
        &mut self,
        s: &StoredPieces<'_>,
        patched: &std::collections::BTreeMap<usize, String>,
    ) -> std::result::Result<(), &'static str> {
        let n = s.elements.len();
        let text = |i: usize| patched.get(&i).map_or(&*s.elements[i].1, String::as_str);
        // The prefix up to chain element k, named by its nodes: the head, the lead, and
        // the chain's oldest and k-th nodes (a chain node's parents fix the rest).
        let lead = &s.elements[..s.lead.min(n)];
        let key = |k: usize| -> Vec<i64> {
            let mut v = vec![s.head.0, lead.len() as i64];
            v.extend(lead.iter().map(|e| e.0));
            v.extend([s.elements[s.lead].0, s.elements[k].0]);
            v
        };
        let shared = patched.keys().next().copied().unwrap_or(n).min(n);
        let cached = (s.lead..shared)
            .rev()
            .find_map(|k| self.states.get(&key(k)).map(|h| (h.clone(), k + 1)));
        let (mut h, from) = cached.unwrap_or_else(|| {
            let mut h = Sha256::new();
            h.update(s.head.1.as_bytes());
            (h, 0)
        });
        for i in from..n {
            if i > 0 {
                h.update(b",");
            }
            h.update(text(i).as_bytes());
            if i >= s.lead && i < shared {
                self.states.insert(key(i), h.clone());
            }
        }
        h.update(s.tail.1.as_bytes());
        if h.finalize().as_slice() != s.digest {
            return Err("has a body that does not match its digest");
        }
        Ok(())
    }
}

/// Reads a stored chain back (the other half of [`plan_chain`]): each node names its
/// parent; from the newest node, `length` nodes, oldest first. `None` when a node
/// is missing or the chain is shorter.
pub(crate) fn walk_chain<T: Clone, S: std::hash::BuildHasher>(
    nodes: &std::collections::HashMap<i64, (Option<i64>, T), S>,
    newest: Option<i64>,
    length: i32,
) -> Option<Vec<(i64, T)>> {
    let length = usize::try_from(length).ok()?;
    if length > nodes.len() {
        return None;
    }
    let mut out = Vec::with_capacity(length);
    let mut at = newest;
    for _ in 0..length {
        let id = at?;
        let (parent, value) = nodes.get(&id)?;
        out.push((id, value.clone()));
        at = *parent;
    }
    out.reverse();
    Some(out)
}

/// How a new seal's elements are stored against the previous seal's chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChainPlan {
    /// `elements[..lead]` are stored on their own (before the chain).
    pub lead: usize,
    /// `elements[lead..lead + len]` are the previous chain's `prev[at..at + len]`.
    pub at: usize,
    /// How many elements are shared with the previous chain (0: none, every element is new).
    pub len: usize,
}

/// Finds the longest run of the previous chain (`prev`, oldest first) that the new
/// elements repeat, preferring the run that starts earliest among the new elements.
/// Only the first few new elements are tried as starts (what leads a chain is the
/// system part of a chat request, or an oldest message trimming cut short), and only a
/// few places per start, so planning stays linear; a miss costs storage, never bytes.
pub(crate) fn plan_chain(prev: &[[u8; 32]], elements: &[[u8; 32]]) -> ChainPlan {
    const STARTS: usize = 16;
    const PLACES: usize = 8;
    let mut best = ChainPlan { lead: 0, at: 0, len: 0 };
    for i in 0..elements.len().min(STARTS) {
        let places = prev
            .iter()
            .enumerate()
            .filter(|(_, d)| **d == elements[i])
            .map(|(j, _)| j);
        for j in places.take(PLACES) {
            let len = elements[i..].iter().zip(&prev[j..]).take_while(|(a, b)| a == b).count();
            if len > best.len {
                best = ChainPlan { lead: i, at: j, len };
            }
        }
    }
    if best.len == 0 {
        // Nothing repeats: every element is a new node, none is led.
        return ChainPlan { lead: 0, at: 0, len: 0 };
    }
    best
}

/// Keys in the order the providers' references list them; a key not listed follows
/// them, alphabetically. The arguments of a call and a tool's schema keep their order.
const KEY_ORDER: [&str; 27] = [
    "model",
    "max_tokens",
    "max_completion_tokens",
    "system",
    "messages",
    "role",
    "type",
    "id",
    "tool_use_id",
    "tool_call_id",
    "name",
    "description",
    "text",
    "content",
    "tool_calls",
    "function",
    "arguments",
    "input",
    "input_schema",
    "parameters",
    "is_error",
    "source",
    "media_type",
    "data",
    "image_url",
    "url",
    "cache_control",
];

/// Writes `value` as compact JSON, object keys in [`KEY_ORDER`].
fn ordered(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by_key(|k| {
                (
                    KEY_ORDER.iter().position(|o| o == k).unwrap_or(KEY_ORDER.len()),
                    k.as_str(),
                )
            });
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&crate::wire::json_text(k));
                out.push(':');
                match k.as_str() {
                    // Opaque JSON: as its value spells it.
                    "input" | "input_schema" | "parameters" => out.push_str(&crate::wire::json_text(&map[k])),
                    _ => ordered(&map[k], out),
                }
            }
            out.push('}');
        }
        Value::Array(list) => {
            out.push('[');
            for (i, v) in list.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ordered(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&crate::wire::json_text(other)),
    }
}

fn key_rank(k: &str) -> usize {
    KEY_ORDER.iter().position(|o| *o == k).unwrap_or(KEY_ORDER.len())
}

/// A 0.2 request (jsonb, no key order) as a body in the providers' order.
fn body_02(request: &serde_json::Map<String, serde_json::Value>) -> Body {
    let mut keys: Vec<&String> = request.keys().filter(|k| *k != "messages").collect();
    keys.sort_by_key(|k| (key_rank(k), k.as_str()));
    let field = |out: &mut String, k: &String| {
        out.push_str(&crate::wire::json_text(k));
        out.push(':');
        ordered(&request[k.as_str()], out);
    };
    let mut head = String::from("{");
    let mut tail = String::from("]");
    for k in keys {
        if key_rank(k) < key_rank("messages") {
            field(&mut head, k);
            head.push(',');
        } else {
            tail.push(',');
            field(&mut tail, k);
        }
    }
    head.push_str("\"messages\":[");
    tail.push('}');
    let elements = request
        .get("messages")
        .and_then(|m| m.as_array())
        .map(|list| {
            list.iter()
                .map(|m| {
                    let mut e = String::new();
                    ordered(m, &mut e);
                    e
                })
                .collect()
        })
        .unwrap_or_default();
    Body { head, elements, tail }
}

/// The compiled list a 0.2 result recorded (`messages`), counted again.
fn messages_02(
    old: &serde_json::Value,
    counter: &mut crate::tokens::Counter<'_>,
) -> crate::error::Result<Vec<crate::items::Message>> {
    let entries: Vec<serde_json::Value> = old
        .get("messages")
        .and_then(|m| m.as_array())
        .map(|list| {
            list.iter()
                .map(|m| serde_json::json!({"role": m["role"], "content": m["parts"]}))
                .collect()
        })
        .unwrap_or_default();
    let entries = crate::fields::parse_raw_input(&serde_json::Value::Array(entries))?;
    Ok(entries
        .into_iter()
        .map(|e| {
            let parts: Vec<crate::items::Part> =
                e.parts.into_iter().map(|k| crate::items::counted(k, counter)).collect();
            crate::items::Message {
                role: e.role,
                blocks: vec![0; parts.len()],
                parts,
                plain: false,
                boundary: false,
            }
        })
        .collect())
}

/// Where an in-turn summary cuts a 0.2 body: its seed is the list's last parts (the
/// preface's, then the opening words).
fn seed_cut_02(neutral: &[crate::items::Message], wire: Wire, model: Option<&Model>, seed_parts: usize) -> SeedCut {
    let total: usize = neutral.iter().map(|m| m.parts.len()).sum();
    let first_seed = total.saturating_sub(seed_parts);
    let offsets: Vec<usize> = neutral
        .iter()
        .scan(0, |acc, m| {
            let at = *acc;
            *acc += m.parts.len();
            Some(at)
        })
        .collect();
    let layout = crate::wire::render(
        wire,
        &crate::wire::Request {
            messages: neutral,
            model,
            tools: &[],
            breakpoints: &[],
            options: &crate::options::Options::default(),
            cache_key: "",
            diagnose: None,
        },
    )
    .layout;
    seed_cut(neutral, &layout, |m, p| offsets[m] + p >= first_seed)
}

/// The model a 0.2 seal (the whole 0.2 result) was compiled for: its model row is what
/// [`convert_02`] takes, if it still exists.
pub fn model_02(old: &serde_json::Value) -> Option<&str> {
    old.get("model").and_then(serde_json::Value::as_str)
}

/// A 0.2 seal (`turns.sealed_request`: the whole 0.2 result, whose `request` held the
/// wire body as jsonb) as a 0.3 seal. jsonb kept no key order, so the body is written in
/// the providers' order, compactly; everything else the 0.2 result recorded is frozen
/// as it was. `model` is the model row of that name, if it still exists; `had_prompt`
/// says whether the turn's input was a message (for where an in-turn summary cuts).
pub fn convert_02(
    old: &serde_json::Value,
    model: Option<Model>,
    answerer_id: Uuid,
    had_prompt: bool,
    memo: &mut crate::tokens::Memo,
) -> crate::error::Result<(Body, SealDraft)> {
    use crate::error::{Code, Error};
    let bad = |why: &str| {
        Error::new(
            Code::TurnNotCompilable,
            format!("a 0.2 seal cannot be converted: {why}"),
        )
    };
    let request = old
        .get("request")
        .and_then(|r| r.as_object())
        .ok_or_else(|| bad("it has no request"))?;
    let wire = old
        .get("wire")
        .and_then(|w| w.as_str())
        .and_then(Wire::parse)
        .ok_or_else(|| bad("no wire"))?;
    let mechanism = old
        .get("mechanism")
        .and_then(|m| m.as_str())
        .and_then(Mechanism::parse)
        .unwrap_or(Mechanism::Default);
    let estimate: Estimate = serde_json::from_value(old.get("estimate").cloned().unwrap_or_default())
        .map_err(|e| bad(&format!("its estimate cannot be read ({e})")))?;
    let preface: Vec<PrefaceItem> =
        crate::fields::parse_preface(old.get("preface").unwrap_or(&serde_json::Value::Null)).unwrap_or_default();
    let cache_marker = old.get("cache_marker").and_then(|c| c.as_u64()).unwrap_or(0) as usize;
    let mut counter = crate::tokens::Counter::new(estimate.window.tokenizer, memo);
    let neutral = messages_02(old, &mut counter).map_err(|e| bad(&e.message))?;
    let cache_breakpoints: Vec<Breakpoint> = cache_marker
        .checked_sub(1)
        .and_then(|m| neutral.get(m).map(|msg| (m, msg.parts.len().saturating_sub(1))))
        .map(|(message, part)| Breakpoint {
            message,
            part,
            after: crate::wire::Stretch::StablePrefix,
        })
        .into_iter()
        .collect();
    let seed_parts = preface.iter().map(|p| p.texts.len()).sum::<usize>() + usize::from(had_prompt);
    let seed_cut = seed_cut_02(&neutral, wire, model.as_ref(), seed_parts);
    let frozen = Frozen {
        mechanism,
        wire,
        model,
        answerer_id,
        cache_marker,
        cache_breakpoints,
        preface,
        estimate,
        seed_cut,
        history_from: None,
        deferred: Deferred::default(),
        stateful: None,
        skills: Vec::new(),
        clear_tool_results: None,
    };
    let draft = SealDraft {
        seed: None,
        unmarked: Vec::new(),
        patches: Vec::new(),
        preface: crate::fields::preface_json(&frozen.preface),
        catalog: None,
        versions: "{}".into(),
        frozen,
    };
    Ok((body_02(request), draft))
}

/// Where an in-turn summary cuts this body: the first element carrying a part of the
/// seed (the blocks after history; everything under `raw`), the history parts that
/// share it, and what the elements from there on cost.
pub(crate) fn seed_cut(
    messages: &[crate::items::Message],
    layout: &crate::wire::Layout,
    is_seed: impl Fn(usize, usize) -> bool,
) -> SeedCut {
    let keep = layout
        .elements
        .iter()
        .position(|e| e.iter().any(|&(m, p)| is_seed(m, p)))
        .unwrap_or(layout.elements.len());
    let mut carry: Vec<(usize, Vec<&crate::items::Part>)> = Vec::new();
    if let Some(first) = layout.elements.get(keep) {
        for &(m, p) in first.iter().filter(|&&(m, p)| !is_seed(m, p)) {
            match carry.last_mut() {
                Some((last, parts)) if *last == m => parts.push(&messages[m].parts[p]),
                _ => carry.push((m, vec![&messages[m].parts[p]])),
            }
        }
    }
    let carry_json = if carry.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::Value::Array(
            carry
                .iter()
                .map(|(m, parts)| serde_json::json!({"role": messages[*m].role.as_str(), "content": parts}))
                .collect(),
        )
    };
    let tokens = layout.elements[keep.min(layout.elements.len())..]
        .iter()
        .filter(|e| !e.is_empty())
        .map(|e| {
            crate::tokens::MESSAGE_OVERHEAD + crate::tokens::sum(e.iter().map(|&(m, p)| messages[m].parts[p].tokens))
        })
        .fold(0, crate::tokens::add);
    SeedCut {
        keep,
        carry: carry_json,
        tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Several seals' pieces digests computed with their shared prefixes hashed once are
    /// each seal's own: chains that extend, a lead or a tail that differs, patches.
    #[test]
    fn pieces_digests_that_share_prefixes_are_each_seals_own() {
        let d = |n: u8| [n; 32];
        let e = |ids: &[i64]| ids.iter().map(|&i| (i, d(i as u8))).collect::<Vec<_>>();
        let patch = Patch {
            at: 1,
            offset: 0,
            cut: 0,
            insert: "x".into(),
        };
        type Case = (
            (i64, [u8; 32]),
            (i64, [u8; 32]),
            Vec<(i64, [u8; 32])>,
            usize,
            Vec<Patch>,
        );
        let seals: Vec<Case> = vec![
            ((1, d(1)), (2, d(2)), e(&[10, 11, 12]), 0, vec![]),
            ((1, d(1)), (2, d(2)), e(&[10, 11, 12, 13]), 0, vec![patch.clone()]),
            ((1, d(1)), (2, d(2)), e(&[10, 11, 12, 13, 14]), 0, vec![]),
            ((1, d(1)), (3, d(3)), e(&[10, 11, 12, 13, 14]), 0, vec![]),
            ((1, d(1)), (2, d(2)), e(&[9, 10, 11, 12]), 1, vec![]),
            ((1, d(1)), (2, d(2)), e(&[8, 10, 11, 12]), 1, vec![]),
            ((1, d(1)), (2, d(2)), e(&[]), 0, vec![]),
        ];
        let mut shared = PiecesDigests::default();
        for (head, tail, elements, lead, patches) in &seals {
            let alone = pieces_digest(&head.1, &tail.1, elements.iter().map(|(_, d)| d), patches);
            let got = shared.of((head.0, &head.1), (tail.0, &tail.1), elements, *lead, patches);
            assert_eq!(got, alone, "{elements:?} lead {lead}");
        }
    }

    /// Stored bodies read back as pieces: the same bytes, checked against the digest
    /// (a changed node, a patch that does not fit, another size are refused), a body
    /// that repeats another's leading elements hashed from where they end.
    #[test]
    fn stored_bodies_read_back_as_pieces_checked_against_their_digests() {
        fn node(id: i64, t: &str) -> (i64, Rc<str>) {
            (id, Rc::from(t))
        }
        fn read(
            reader: &mut PieceReader,
            elements: &[(i64, Rc<str>)],
            patches: &[Patch],
            body: &Body,
        ) -> std::result::Result<Pieces, &'static str> {
            reader.read(&StoredPieces {
                head: node(1, &body.head),
                tail: node(2, &body.tail),
                elements: elements.to_vec(),
                lead: 0,
                patches,
                bytes: body.len(),
                digest: &body_digest(body),
                pieces: None,
            })
        }
        let plain = ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"].map(String::from);
        let mut marked = plain.clone();
        marked[2] = "{\"c\":3,\"mark\":true}".into();
        let p = patches(&every(&plain), &marked);
        let body = Body {
            head: "{\"m\":[".into(),
            elements: marked.to_vec(),
            tail: "]}".into(),
        };
        let elements = [node(10, &plain[0]), node(11, &plain[1]), node(12, &plain[2])];
        let mut reader = PieceReader::default();
        let pieces = read(&mut reader, &elements, &p, &body).unwrap();
        let texts: Vec<String> = pieces.elements.iter().map(|(_, t)| t.to_string()).collect();
        assert_eq!(texts, marked);
        let keys: Vec<Option<i64>> = pieces.elements.iter().map(|e| e.0).collect();
        assert_eq!(keys, [Some(10), Some(11), None], "a patched element is its own");
        assert_eq!(&*pieces.frame.1, "{\"m\":[]}");
        assert_eq!(reader.states.len(), 2, "the two unmarked elements' prefixes are kept");
        // A longer body repeating the first two elements, read from their state.
        let mut longer = body.clone();
        longer.elements = vec![plain[0].clone(), plain[1].clone(), "{\"d\":4}".into()];
        let mut e2 = elements.to_vec();
        e2[2] = node(13, "{\"d\":4}");
        assert!(read(&mut reader, &e2, &[], &longer).is_ok());
        // A node whose text changed since it was sealed.
        let mut bad = elements.to_vec();
        bad[1] = node(11, "{\"b\":9}");
        let mut fresh = PieceReader::default();
        let digest = body_digest(&body);
        let stored = |elements: Vec<(i64, Rc<str>)>, patches: &[Patch], bytes: usize| {
            PieceReader::default().read(&StoredPieces {
                head: node(1, &body.head),
                tail: node(2, &body.tail),
                elements,
                lead: 0,
                patches,
                bytes,
                digest: &digest,
                pieces: None,
            })
        };
        assert_eq!(
            stored(bad, &p, body.len()).err(),
            Some("has a body that does not match its digest")
        );
        let unfit = [Patch {
            at: 7,
            offset: 0,
            cut: 0,
            insert: "x".into(),
        }];
        assert!(stored(elements.to_vec(), &unfit, body.len()).is_err());
        assert_eq!(
            stored(elements.to_vec(), &p, body.len() + 1).err(),
            Some("has a body of another size than it recorded")
        );
        assert!(read(&mut fresh, &elements, &p, &body).is_ok());

        // A seal of 0.5 is checked by its pieces, its body never hashed whole: each node
        // against its own digest, the pieces against the seal's pieces digest.
        let nodes: std::collections::HashMap<i64, [u8; 32]> = [
            (1, &body.head),
            (2, &body.tail),
            (10, &plain[0]),
            (11, &plain[1]),
            (12, &plain[2]),
        ]
        .into_iter()
        .map(|(id, t)| (id, super::digest(t)))
        .collect();
        let lookup = |id: i64| nodes.get(&id).copied();
        let listed = [10, 11, 12].map(|id| nodes[&id]);
        let sealed = pieces_digest(&nodes[&1], &nodes[&2], &listed, &p);
        let by_pieces = |elements: Vec<(i64, Rc<str>)>, pieces: &[u8]| {
            PieceReader::default().read(&StoredPieces {
                head: node(1, &body.head),
                tail: node(2, &body.tail),
                elements,
                lead: 0,
                patches: &p,
                bytes: body.len(),
                digest: &[0; 32],
                pieces: Some((pieces, &lookup)),
            })
        };
        let pieces = by_pieces(elements.to_vec(), &sealed).unwrap();
        assert_eq!(pieces.elements[2].1.as_ref(), marked[2]);
        let unmarked = pieces_digest(&nodes[&1], &nodes[&2], &listed, &[]);
        assert_eq!(
            by_pieces(elements.to_vec(), &unmarked).err(),
            Some("has pieces that do not match their digest")
        );
        let mut bad = elements.to_vec();
        bad[0] = node(10, "{\"a\":2}");
        assert_eq!(
            by_pieces(bad, &sealed).err(),
            Some("has a node that does not match its digest")
        );
    }

    /// What the extension's queries match and read in a stored record is the record
    /// itself: a real seal's `frozen`, as stored, contains its own answerer's (and
    /// wire's) part and not another's, contains the stateful part only when stateful,
    /// and gives back its history start; a start that does not read is refused.
    #[test]
    fn the_queries_parts_are_the_stored_records_own() {
        use crate::testing::{id, Scenario, ADA, LARK};
        fn contains(a: &serde_json::Value, b: &serde_json::Value) -> bool {
            match (a, b) {
                (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                    b.iter().all(|(k, v)| a.get(k).is_some_and(|x| contains(x, v)))
                }
                _ => a == b,
            }
        }
        let out = Scenario::new("hello").run(crate::Purpose::Compile).unwrap();
        let mut frozen = out.seal.unwrap().frozen;
        let cut = crate::kinds::EntryAt {
            depth: 1,
            seq: 7,
            entry: 2,
        };
        frozen.history_from = Some(cut);
        let stored = serde_json::to_value(&frozen).unwrap();
        let (lark, wire) = (id(LARK), frozen.wire);
        assert_eq!(frozen.answerer_id, lark);
        assert!(contains(&stored, &frozen_for(lark, None)));
        assert!(contains(&stored, &frozen_for(lark, Some(wire))));
        assert!(!contains(&stored, &frozen_for(id(ADA), None)));
        assert!(!contains(&stored, &frozen_for(lark, Some(Wire::Gemini))));
        assert!(!contains(&stored, &frozen_stateful()));
        assert_eq!(history_from(stored.get(HISTORY_FROM)).unwrap(), Some(cut));

        frozen.stateful = Some(Stateful::default());
        frozen.history_from = None;
        let stored = serde_json::to_value(&frozen).unwrap();
        assert!(contains(&stored, &frozen_stateful()));
        assert_eq!(history_from(stored.get(HISTORY_FROM)).unwrap(), None);

        let mut bad = stored.clone();
        bad["history_from"] = serde_json::json!({"seq": 3, "entry": -1});
        let e = history_from(bad.get(HISTORY_FROM)).unwrap_err();
        assert_eq!(e.code, crate::error::Code::DataCorrupted);
        assert!(e.detail.unwrap_or_default().contains("history_from"));
    }

    /// Every part a seal can carry past its seed reads back as the part it was, a
    /// provider's block (a kept thinking block before an assistant-role lead entry) too.
    #[test]
    fn carried_parts_read_back_as_they_were() {
        use crate::items::{Message, Part, PartKind};
        use crate::json_at::JsonText;
        let part = |kind| Part { kind, tokens: 1 };
        let thinking: JsonText = r#"{"type":"thinking","thinking":"x","signature":"s"}"#.into();
        let history = vec![
            PartKind::Opaque {
                wire: Wire::Anthropic,
                json: thinking.clone(),
                text: "x".into(),
            },
            PartKind::ToolCall {
                id: "c1".into(),
                name: "read".into(),
                input: r#"{"b":[1,2],"a":"x"}"#.into(),
                recorded: Default::default(),
            },
            PartKind::Text("answer".into()),
        ];
        let message = |parts: Vec<PartKind>| Message {
            role: crate::kinds::Role::Assistant,
            blocks: vec![0; parts.len()],
            parts: parts.into_iter().map(part).collect(),
            plain: false,
            boundary: false,
        };
        let messages = [message(history.clone()), message(vec![PartKind::Text("lead".into())])];
        let layout = crate::wire::Layout {
            system: Vec::new(),
            elements: vec![vec![(0, 0), (0, 1), (0, 2), (1, 0)]],
        };
        let cut = seed_cut(&messages, &layout, |m, _| m == 1);
        // As the seal stores it: through its record's text.
        let stored: SeedCut = serde_json::from_str(&serde_json::to_string(&cut).unwrap()).unwrap();
        let carried = stored.carried().unwrap();
        assert_eq!(carried.len(), 1);
        // A block's keys come back in the record's order (jsonb keeps none); the same value.
        let value = |k: &PartKind| match k {
            PartKind::Opaque { json, .. } => serde_json::from_str::<serde_json::Value>(json).unwrap(),
            PartKind::ToolCall { input, .. } => serde_json::from_str(input).unwrap(),
            PartKind::Text(t) => serde_json::Value::String(t.clone()),
            _ => unreachable!(),
        };
        assert_eq!(
            carried[0].parts.iter().map(value).collect::<Vec<_>>(),
            history.iter().map(value).collect::<Vec<_>>()
        );
        assert!(matches!(
            carried[0].parts[0],
            PartKind::Opaque {
                wire: Wire::Anthropic,
                ..
            }
        ));
        // turns.input itself takes no provider block.
        let e = crate::fields::parse_raw_input(&stored.carry).unwrap_err();
        assert!(e.message.contains("unknown part type \"provider\""), "{}", e.message);
    }

    #[test]
    fn carried_parts_that_do_not_read_back_are_data_corrupted_not_none() {
        let cut = |carry| SeedCut {
            keep: 1,
            carry,
            tokens: 0,
        };
        assert_eq!(cut(serde_json::Value::Null).carried().unwrap(), Vec::new());
        let ok = cut(serde_json::json!([{"role": "user", "content": [{"type": "text", "text": "a"}]}]));
        assert_eq!(ok.carried().unwrap().len(), 1);
        let e = cut(serde_json::json!([{"role": "user", "content": [{"type": "audio"}]}]))
            .carried()
            .unwrap_err();
        assert_eq!(
            (e.code, e.code.sqlstate()),
            (crate::error::Code::DataCorrupted, "XX001")
        );
        assert!(e.message.contains("seed_cut.carry"), "{}", e.message);
        assert!(e.detail.unwrap_or_default().contains("unknown part type"));
    }

    #[test]
    fn a_chain_reads_back_oldest_first_and_a_lost_node_or_a_short_chain_is_none() {
        let nodes: std::collections::HashMap<i64, (Option<i64>, &str)> =
            [(1, (None, "a")), (2, (Some(1), "b")), (5, (Some(2), "c"))]
                .into_iter()
                .collect();
        assert_eq!(walk_chain(&nodes, Some(5), 3), Some(vec![(1, "a"), (2, "b"), (5, "c")]));
        assert_eq!(walk_chain(&nodes, Some(5), 2), Some(vec![(2, "b"), (5, "c")]));
        assert_eq!(walk_chain(&nodes, Some(2), 3), None, "the chain is shorter");
        assert_eq!(walk_chain(&nodes, Some(7), 1), None, "a node is missing");
        assert_eq!(walk_chain(&nodes, Some(5), -1), None);
        assert_eq!(walk_chain(&nodes, Some(5), 4), None, "more than the nodes read");
    }

    fn ds(xs: &[&str]) -> Vec<[u8; 32]> {
        xs.iter().map(|x| digest(x)).collect()
    }

    #[test]
    fn a_request_that_extends_the_previous_one_reuses_all_but_its_last_element() {
        let prev = ds(&["a", "b", "c*"]);
        let new = ds(&["a", "b", "c", "d", "e"]);
        assert_eq!(plan_chain(&prev, &new), ChainPlan { lead: 0, at: 0, len: 2 });
    }

    #[test]
    fn trimming_the_oldest_entries_reuses_the_rest() {
        let prev = ds(&["a", "b", "c", "d"]);
        let new = ds(&["c", "d", "e"]);
        assert_eq!(plan_chain(&prev, &new), ChainPlan { lead: 0, at: 2, len: 2 });
    }

    #[test]
    fn a_changed_first_element_is_led() {
        // Chat: the system message leads; trimming cut the oldest message short.
        let prev = ds(&["sys", "a1", "b", "c"]);
        let new = ds(&["sys", "a2", "b", "c", "d"]);
        assert_eq!(plan_chain(&prev, &new), ChainPlan { lead: 2, at: 2, len: 2 });
    }

    /// Every element of `plain`, by index (what `patches` compares).
    fn every(plain: &[String]) -> Vec<(usize, String)> {
        plain.iter().cloned().enumerate().collect()
    }

    #[test]
    fn patches_mark_and_apply_exactly() {
        let plain = vec![r#"{"a":"é"}"#.to_string(), "x".to_string()];
        let marked = vec![
            r#"{"a":"é","cache_control":{"type":"ephemeral"}}"#.to_string(),
            "x".to_string(),
        ];
        let ps = patches(&every(&plain), &marked);
        assert_eq!(ps.len(), 1);
        assert_eq!(ps[0].insert, r#","cache_control":{"type":"ephemeral"}"#);
        let mut stored = plain.clone();
        apply(&mut stored, &ps).unwrap();
        assert_eq!(stored, marked);
        // Any single difference, at any place.
        let ps = patches(&[(0, "aéb".into())], &["aXYb".into()]);
        let mut s = vec!["aéb".to_string()];
        apply(&mut s, &ps).unwrap();
        assert_eq!(s, ["aXYb"]);
        assert!(apply(
            &mut s,
            &[Patch {
                at: 0,
                offset: 1,
                cut: 99,
                insert: String::new()
            }]
        )
        .is_none());
    }

    #[test]
    fn a_body_verifies_against_its_own_digest_only() {
        let body = Body {
            head: "{\"messages\":[".into(),
            elements: vec!["\"a\"".into(), "\"b\"".into()],
            tail: "]}".into(),
        };
        assert_eq!(body_digest(&body), digest(&body.text()));
        assert!(verify(&body, body.len(), &digest(&body.text())).is_ok());
        let mut forged = body.clone();
        forged.elements[1] = "\"c\"".into();
        assert_eq!(
            verify(&forged, body.len(), &digest(&body.text())),
            Err("has a body that does not match its digest")
        );
        assert_eq!(
            verify(&body, body.len() + 1, &digest(&body.text())),
            Err("has a body of another size than it recorded")
        );
    }

    #[test]
    fn nothing_in_common_is_all_new() {
        assert_eq!(
            plan_chain(&ds(&["a"]), &ds(&["b"])),
            ChainPlan { lead: 0, at: 0, len: 0 }
        );
        assert_eq!(plan_chain(&[], &ds(&["b"])), ChainPlan { lead: 0, at: 0, len: 0 });
    }
}
