//! The cache report (docs/guide.md, "The cache report"): every request a conversation
//! sent, replayed in order through a model of the providers' prompt caches, so a user can
//! see what each request shared with the one before it, where it first differed and why,
//! and what the provider should have read from cache, written and taken uncached — beside
//! what it billed.
//!
//! A request is read as the provider reads it: a sequence of blocks in cache order (tools,
//! then the system text, then each message's content blocks; a message is one block on
//! the wires that take no part-level marks), each known by the hash of everything up to
//! and including it. The rules:
//!
//! - **Explicit breakpoints** (Anthropic's `cache_control`, and OpenAI's explicit
//!   `prompt_cache_breakpoint` for a model whose profile takes them): a breakpoint reads
//!   the longest prefix an earlier breakpoint wrote that ends within the provider's
//!   lookback (20 blocks on Anthropic) before it and is not expired; the request writes the
//!   prefix up to its last breakpoint that reaches the model's minimum cacheable length,
//!   less what it read, and every such breakpoint becomes an entry. Anthropic's request-
//!   level `cache_control` marks the last cacheable block (not a thinking block).
//! - **Implicit caching** (OpenAI otherwise, Gemini): the longest prefix of an earlier
//!   request still cached is read once it reaches the minimum (1024 tokens unless the
//!   profile says otherwise; OpenAI in steps of 128 tokens past it); nothing is billed as a
//!   write.
//! - An entry lives for the model's TTL (its `cache_ttl` as the provider spells it; the
//!   implicit caches five minutes), measured from the time the request was sent (its seal,
//!   or the continuation's `sent_at`), refreshed by each read.
//!
//! Tokens are counted per block with the model's tokenizer (a text block's text, any other
//! block's JSON without its cache marks): the columns of a row add up (read + write +
//! uncached = input), and are a model of the provider's count, not its bill.

use std::hash::{BuildHasher, Hasher};
use std::rc::Rc;

use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::kinds::Wire;
use crate::rows::Model;
use crate::seal::Pieces;
use crate::tokens::{Counter, Memo, Tokenizer};
use crate::wire::Form;

/// A request as it was sent.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The turn whose request it is.
    pub turn_id: Uuid,
    /// The rounds it carried (0: the turn's sealed first request).
    pub step: i32,
    /// When it was sent, in seconds since the epoch.
    pub at: f64,
    /// The wire its seal froze, which says how to read its body into blocks.
    pub wire: Wire,
    /// The model its seal froze.
    pub model: Option<Model>,
    /// Its bytes.
    pub body: Request,
    /// What the provider billed as cache reads and writes (its recorded response).
    pub billed: Option<(Option<i32>, Option<i32>)>,
    /// What the provider said about a cache miss (`prompt.responses.billed_miss`).
    pub billed_miss: Option<Value>,
}

/// A request's bytes: whole, or in the pieces its seal is stored as, which the requests of
/// a conversation share (each piece is read once per replay, however many requests
/// repeat it).
#[derive(Debug, Clone)]
pub enum Request {
    /// The body's bytes.
    Whole(String),
    /// The body as storage keeps it.
    Pieces(Pieces),
    /// The body's cache layout as stored when it was sent (`crate::laid`): its blocks,
    /// never its text.
    Laid(Laid),
}

/// A request's cache layout, read from what was stored when it was sent: the blocks
/// around its list, and each element's (shared between the requests that repeat it).
#[derive(Debug, Clone)]
pub struct Laid {
    pub(crate) frame: Rc<Frame>,
    pub(crate) elements: Vec<Rc<Vec<Piece>>>,
    /// Where it is [`Laid::remembered`] (a seal a backend keeps): its blocks once
    /// assembled for a model, shared by its clones, so a request replayed again is not
    /// assembled again. `None`: assembled on each replay and dropped (what a replay of
    /// every request holds at once stays the requests' elements, not their blocks).
    assembled: Option<Rc<std::cell::OnceCell<Assembled>>>,
}

/// A request's blocks, assembled for the model they were named with.
type Assembled = (Option<String>, Rc<Vec<Block>>);

impl Laid {
    /// A request from its frame's blocks and each element's.
    pub(crate) fn new(frame: Rc<Frame>, elements: Vec<Rc<Vec<Piece>>>) -> Laid {
        Laid {
            frame,
            elements,
            assembled: None,
        }
    }

    /// The same request, its blocks kept once assembled (by it and its clones).
    pub fn remembered(&self) -> Laid {
        Laid {
            assembled: Some(self.assembled.clone().unwrap_or_default()),
            ..self.clone()
        }
    }

    /// How many elements its list holds.
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    /// Whether its list is empty.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// Its blocks for `model`, assembled once.
    fn blocks(&self, model: Option<&str>) -> Rc<Vec<Block>> {
        let kept = self.assembled.as_ref();
        if let Some((named, blocks)) = kept.and_then(|k| k.get()) {
            if named.as_deref() == model {
                return blocks.clone();
            }
        }
        let blocks = Rc::new(assemble(model, &self.frame, self.elements.iter().map(|e| e.as_slice())));
        if let Some(k) = kept {
            // A first assembly stays; another model's (never a seal's own) is not kept.
            let _ = k.set((model.map(str::to_string), blocks.clone()));
        }
        blocks
    }
}

/// A row of `prompt.cache_report`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The turn whose request it is ([`Sent::turn_id`]).
    pub turn_id: Uuid,
    /// The rounds the request carried ([`Sent::step`]; 0: the turn's sealed first request).
    pub step: i32,
    /// The request's tokens, counted per block with the model's tokenizer.
    pub input_tokens: u32,
    /// The tokens of its leading blocks identical to the previous request's (0 for the first).
    pub shared_prefix_tokens: u32,
    /// Where it first differs from the previous request and why (`block`, `in`, `message`,
    /// `part`, `cause`); `None`: it extends the previous one, or is the first.
    pub first_difference: Option<Value>,
    /// The tokens the provider should read from cache.
    pub predicted_cache_read: u32,
    /// The tokens the provider should write to cache (0 on implicit caching).
    pub predicted_cache_write: u32,
    /// The tokens neither read nor written: input less read less write.
    pub predicted_uncached: u32,
    /// The cache reads the provider billed (`prompt.responses.cache_read_tokens`); `None`: none recorded.
    pub billed_cache_read: Option<i32>,
    /// The cache writes the provider billed (`prompt.responses.cache_creation_tokens`); `None`: none recorded.
    pub billed_cache_write: Option<i32>,
    /// What the provider said about the cache against the previous response the request
    /// named (`prompt.responses.billed_miss`); `None`: nothing recorded.
    pub billed_miss: Option<Value>,
}

/// Where a block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Zone {
    Tools,
    System,
    Message(usize, usize),
}

#[derive(Debug, Clone, PartialEq)]
struct Block {
    /// The hash of every block up to and including this one.
    prefix: u64,
    /// This block's own text without cache marks (trim detection).
    own: u64,
    tokens: u32,
    marked: bool,
    /// The TTL its mark names (seconds), if it names one.
    ttl: Option<f64>,
    zone: Zone,
}

/// Replays `requests` in order through a model of the provider's prompt cache, empty
/// at first: a row of the report for each.
pub fn replay(requests: &[Sent], memo: &mut Memo) -> Vec<Row> {
    let mut sim = Simulator::new();
    requests.iter().map(|r| sim.send(r, memo)).collect()
}

/// The provider's cache, as the requests replayed so far left it.
#[derive(Debug, Default)]
pub(crate) struct Simulator {
    /// Prefix hash → when the entry expires.
    entries: foldhash::HashMap<u64, f64>,
    previous: Option<(Option<String>, Rc<Vec<Block>>)>,
    /// The pieces read so far, by key (and the wire and tokenizer they were read with).
    frames: foldhash::HashMap<((i64, i64), Wire, Tokenizer), Rc<Frame>>,
    elements: foldhash::HashMap<(i64, Wire, Tokenizer), Rc<Vec<Piece>>>,
}

impl Simulator {
    /// An empty cache, before any request is replayed.
    pub(crate) fn new() -> Self {
        Simulator::default()
    }

    /// Replays one request: its row of the report.
    pub(crate) fn send(&mut self, sent: &Sent, memo: &mut Memo) -> Row {
        let model_name = sent.model.as_ref().map(|m| m.name.clone());
        let tokenizer = tokenizer_of(sent.model.as_ref());
        let mut counter = Counter::new(tokenizer, memo);
        let blocks = match &sent.body {
            Request::Whole(text) => Rc::new(blocks(sent.wire, text, model_name.as_deref(), &mut counter)),
            Request::Pieces(p) => Rc::new(self.pieces(sent.wire, tokenizer, p, model_name.as_deref(), &mut counter)),
            Request::Laid(l) => l.blocks(model_name.as_deref()),
        };
        let cum: Vec<u32> = blocks
            .iter()
            .scan(0u32, |sum, b| {
                *sum = sum.saturating_add(b.tokens);
                Some(*sum)
            })
            .collect();
        let total = cum.last().copied().unwrap_or(0);
        let (shared, first_difference) = self.difference(&model_name, &blocks, &cum);
        let rules = Rules::of(sent.wire, sent.model.as_ref());
        let (read, write) = match rules.explicit {
            true => self.explicit(&rules, &blocks, &cum, sent.at),
            false => self.implicit(&rules, &blocks, &cum, sent.at),
        };
        self.previous = Some((model_name, blocks));
        Row {
            turn_id: sent.turn_id,
            step: sent.step,
            input_tokens: total,
            shared_prefix_tokens: shared,
            first_difference,
            predicted_cache_read: read,
            predicted_cache_write: write,
            predicted_uncached: total.saturating_sub(read).saturating_sub(write),
            billed_cache_read: sent.billed.and_then(|b| b.0),
            billed_cache_write: sent.billed.and_then(|b| b.1),
            billed_miss: sent.billed_miss.clone(),
        }
    }

    /// The blocks of a body in pieces, each piece with a key read once.
    fn pieces(
        &mut self,
        wire: Wire,
        tokenizer: Tokenizer,
        p: &Pieces,
        model: Option<&str>,
        counter: &mut Counter<'_>,
    ) -> Vec<Block> {
        let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
        let read_frame = |counter: &mut Counter<'_>| Rc::new(frame(wire, &parse(&p.frame.1), counter));
        let f = match p.frame.0 {
            Some(key) => self
                .frames
                .entry((key, wire, tokenizer))
                .or_insert_with(|| read_frame(counter))
                .clone(),
            None => read_frame(counter),
        };
        let mut read = Vec::with_capacity(p.elements.len());
        for (key, text) in &p.elements {
            let read_element = |counter: &mut Counter<'_>| Rc::new(element(wire, &parse(text), counter));
            read.push(match key {
                Some(key) => self
                    .elements
                    .entry((*key, wire, tokenizer))
                    .or_insert_with(|| read_element(counter))
                    .clone(),
                None => read_element(counter),
            });
        }
        assemble(model, &f, read.iter().map(|e| e.as_slice()))
    }

    fn live(&self, prefix: u64, at: f64) -> bool {
        self.entries.get(&prefix).is_some_and(|&until| until >= at)
    }

    fn explicit(&mut self, rules: &Rules, blocks: &[Block], cum: &[u32], at: f64) -> (u32, u32) {
        let marks: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].marked).collect();
        let mut hit: Option<usize> = None;
        for &b in &marks {
            let low = rules.lookback.map_or(0, |l| b.saturating_sub(l.saturating_sub(1)));
            if let Some(j) = (low..=b).rev().find(|&j| self.live(blocks[j].prefix, at)) {
                hit = hit.max(Some(j));
            }
        }
        let read = hit.map_or(0, |j| cum[j]);
        let eligible: Vec<usize> = marks.into_iter().filter(|&b| cum[b] >= rules.min).collect();
        let write = eligible.last().map_or(0, |&b| cum[b].saturating_sub(read));
        for b in eligible.into_iter().chain(hit) {
            // A mark that names its TTL keeps the entry that long; one that does not, the
            // wire's default (Anthropic's 5 minutes, OpenAI's request-level TTL).
            self.entries
                .insert(blocks[b].prefix, at + blocks[b].ttl.unwrap_or(rules.unnamed_ttl));
        }
        (read, write)
    }

    fn implicit(&mut self, rules: &Rules, blocks: &[Block], cum: &[u32], at: f64) -> (u32, u32) {
        let hit = (0..blocks.len()).rev().find(|&j| self.live(blocks[j].prefix, at));
        let mut read = hit.map_or(0, |j| cum[j]);
        if read < rules.min {
            read = 0;
        } else if let Some(step) = rules.step {
            read = rules.min + (read - rules.min) / step * step;
        }
        for (b, &c) in blocks.iter().zip(cum) {
            if c >= rules.min {
                self.entries.insert(b.prefix, at + rules.ttl);
            }
        }
        (read, 0)
    }

    /// What this request shares with the one before it (tokens), and where it first
    /// differs and why (`None`: it extends the previous one, or is the first).
    fn difference(&self, model: &Option<String>, blocks: &[Block], cum: &[u32]) -> (u32, Option<Value>) {
        let Some((previous_model, before)) = &self.previous else {
            return (0, None);
        };
        let same = blocks
            .iter()
            .zip(before.iter())
            .take_while(|(a, b)| a.prefix == b.prefix)
            .count();
        let shared = same.checked_sub(1).map_or(0, |i| cum[i]);
        if same == before.len() {
            return (shared, None);
        }
        let at = blocks.get(same).or(before.get(same)).map_or(Zone::Tools, |b| b.zone);
        let cause = if previous_model != model {
            "model"
        } else {
            match at {
                Zone::Tools => "tools",
                Zone::System => "system",
                Zone::Message(..) => {
                    // History's start moved: this request opens with a block the previous
                    // one had further on.
                    let first = blocks.iter().find(|b| matches!(b.zone, Zone::Message(..)));
                    let trimmed = first.is_some_and(|f| {
                        let theirs = before.iter().filter(|b| matches!(b.zone, Zone::Message(..)));
                        theirs.skip(1).any(|b| b.own == f.own)
                    });
                    if trimmed {
                        "trim"
                    } else {
                        "messages"
                    }
                }
            }
        };
        let mut d = serde_json::Map::new();
        d.insert("block".into(), Value::from(same));
        match at {
            Zone::Tools => d.insert("in".into(), "tools".into()),
            Zone::System => d.insert("in".into(), "system".into()),
            Zone::Message(m, p) => {
                d.insert("message".into(), Value::from(m));
                d.insert("part".into(), Value::from(p));
                d.insert("in".into(), "messages".into())
            }
        };
        d.insert("cause".into(), cause.into());
        (shared, Some(Value::Object(d)))
    }
}

/// The tokenizer the cache model counts a request's blocks with: its model's, else
/// cl100k_base.
pub(crate) fn tokenizer_of(model: Option<&Model>) -> Tokenizer {
    model.map_or(Tokenizer::Cl100kBase, |m| m.tokenizer)
}

/// Whether a sealed request's stored layout reads as its text does: the same blocks, in
/// the same order, with the same tokens and marks (`verify_seals`).
pub fn layout_matches(wire: Wire, model: Option<&Model>, pieces: &Pieces, laid: &Laid, memo: &mut Memo) -> bool {
    let tokenizer = tokenizer_of(model);
    let name = model.map(|m| m.name.as_str());
    let mut counter = Counter::new(tokenizer, memo);
    let from_text = Simulator::new().pieces(wire, tokenizer, pieces, name, &mut counter);
    from_text == assemble(name, &laid.frame, laid.elements.iter().map(|e| e.as_slice()))
}

/// How long (seconds) a cache entry of `model` on `wire` lives unread: what can still be
/// read by a request sent now was written or read that recently.
pub fn ttl_seconds(wire: Wire, model: Option<&Model>) -> f64 {
    Rules::of(wire, model).ttl
}

/// A model's cache rules, from its profile (or its wire's defaults).
struct Rules {
    explicit: bool,
    lookback: Option<usize>,
    min: u32,
    /// OpenAI's implicit cache grows in steps of 128 tokens past the minimum.
    step: Option<u32>,
    ttl: f64,
    /// The TTL of a mark that names none.
    unnamed_ttl: f64,
}

impl Rules {
    fn of(wire: Wire, model: Option<&Model>) -> Rules {
        let profile = model.and_then(|m| m.profile.as_ref());
        let form: &dyn Form = wire.form();
        let form = form.cache_rules(profile);
        let explicit = form.at_marks_only;
        // The model's TTL where it marks breakpoints; an implicit cache keeps five minutes.
        let ttl = match model.filter(|_| explicit) {
            Some(m) => profile.map_or(m.cache_ttl, |p| p.ttl(m.cache_ttl)).seconds() as f64,
            None => 300.0,
        };
        Rules {
            explicit,
            lookback: form.lookback,
            min: profile.map_or(1024, |p| p.min_cache_tokens.max(0) as u32),
            step: form.step,
            unnamed_ttl: if form.unnamed_five_minutes { 300.0 } else { ttl },
            ttl,
        }
    }
}

/// The TTL a block's cache mark (its key `mark`, if the wire has one: `cache_control.ttl`,
/// `prompt_cache_breakpoint.ttl`) names, in seconds; `None` when it names none.
fn mark_ttl(v: &Value, mark: Option<&str>) -> Option<f64> {
    match v {
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            if Some(k.as_str()) == mark {
                v.get("ttl").and_then(Value::as_str).and_then(ttl_seconds_of)
            } else {
                mark_ttl(v, mark)
            }
        }),
        Value::Array(items) => items.iter().find_map(|i| mark_ttl(i, mark)),
        _ => None,
    }
}

fn ttl_seconds_of(ttl: &str) -> Option<f64> {
    crate::kinds::CacheTtl::parse(ttl).map(|t| t.seconds() as f64)
}

/// A JSON value without its cache marks (the key `mark`), and whether it had one.
fn unmarked(v: &Value, mark: Option<&str>) -> (Value, bool) {
    match v {
        Value::Object(map) => {
            let mut marked = false;
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                if Some(k.as_str()) == mark {
                    marked = true;
                    continue;
                }
                let (inner, m) = unmarked(v, mark);
                marked |= m;
                out.insert(k.clone(), inner);
            }
            (Value::Object(out), marked)
        }
        Value::Array(items) => {
            let mut marked = false;
            let out = items
                .iter()
                .map(|i| {
                    let (inner, m) = unmarked(i, mark);
                    marked |= m;
                    inner
                })
                .collect();
            (Value::Array(out), marked)
        }
        other => (other.clone(), false),
    }
}

/// A block's own identity (its role and its JSON without cache marks): the first eight
/// bytes of their SHA-256. It is stored with the block's layout (`crate::laid`) and
/// compared with one cut by another build, so it is a hash that never changes with a
/// crate's version or the platform.
fn own_hash(role: &str, text: &str) -> u64 {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    h.update(role.as_bytes());
    h.update([0]);
    h.update(text.as_bytes());
    let d: [u8; 32] = h.finalize().into();
    u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

/// The hasher of the prediction's prefix identities: foldhash, seeded the same in every
/// backend (a prediction reads the same on any). SipHash here was 9% of an `explain_turn`
/// whose prediction replays 61 requests (bench/NOTES.md); these hashes chain the stored
/// blocks' own identities within one prediction and are never stored, and nothing is
/// keyed by them that a caller could flood.
fn hasher() -> impl Hasher {
    foldhash::fast::FixedState::with_seed(0).build_hasher()
}

fn hash(text: &str) -> u64 {
    let mut h = hasher();
    h.write(text.as_bytes());
    h.finish()
}

/// The hash of bytes given in parts (each part hashed as one write: callers split the
/// same bytes the same way).
fn hash_parts(parts: &[&[u8]]) -> u64 {
    let mut h = hasher();
    for p in parts {
        h.write(p);
    }
    h.finish()
}

/// A block as one piece of a body holds it, before its place in the request is known:
/// everything but its prefix hash and its message index.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    Block {
        /// The hash of its role and its text without cache marks.
        own: u64,
        tokens: u32,
        marked: bool,
        ttl: Option<f64>,
        zone: Zone,
        /// A thinking block (Anthropic's request-level marker passes over it).
        thinking: bool,
    },
    /// A Converse `cachePoint`: no block of its own, it marks the block before it.
    Mark { ttl: Option<f64> },
}

impl Piece {
    /// The piece placed in `zone` (a block read as a whole message: no part's type).
    fn at(self, zone: Zone) -> Piece {
        match self {
            Piece::Block {
                own,
                tokens,
                marked,
                ttl,
                thinking,
                zone: _,
            } => Piece::Block {
                own,
                tokens,
                marked,
                ttl,
                zone,
                thinking,
            },
            mark => mark,
        }
    }
}

/// What a body holds around its list: its tools and system blocks, and Anthropic's
/// request-level marker (`Some(ttl)`) if it carries one.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Frame {
    pub(crate) pieces: Vec<Piece>,
    pub(crate) automatic: Option<Option<f64>>,
}

/// One JSON value of a body as a piece: its text without marks hashed with `role`, its
/// tokens (a text block's text, any other block's JSON), its mark.
fn piece(wire: Wire, zone: Zone, role: &str, value: &Value, counter: &mut Counter<'_>) -> Piece {
    let keys = wire.form().keys();
    if let Some(point) = keys.mark_block.and_then(|k| value.get(k)) {
        return Piece::Mark {
            ttl: point.get("ttl").and_then(Value::as_str).and_then(ttl_seconds_of),
        };
    }
    let mark = keys.mark_key;
    let (plain, marked) = unmarked(value, mark);
    let text = plain.to_string();
    let tokens = match plain.get("text").and_then(Value::as_str).or(plain.as_str()) {
        Some(t) => counter.count(t),
        None => counter.count(&text),
    };
    Piece::Block {
        own: own_hash(role, &text),
        tokens,
        marked,
        ttl: mark_ttl(value, mark),
        zone,
        // Only a message's part can be a thinking block.
        thinking: matches!(zone, Zone::Message(..))
            && value
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("thinking")),
    }
}

/// The pieces of a body around its list (`v`: the body, its list ignored).
pub(crate) fn frame(wire: Wire, v: &Value, counter: &mut Counter<'_>) -> Frame {
    let mut pieces = Vec::new();
    let keys = wire.form().keys();
    let tools = keys.tools.iter().try_fold(v, |at, k| at.get(k));
    for t in tools.and_then(Value::as_array).into_iter().flatten() {
        pieces.push(piece(wire, Zone::Tools, "", t, counter));
    }
    let system = keys.system;
    let system_items: Vec<&Value> = match v.get(system) {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(Value::Object(o)) => o.get("parts").and_then(Value::as_array).into_iter().flatten().collect(),
        Some(other) if !system.is_empty() => vec![other],
        _ => Vec::new(),
    };
    for b in system_items {
        pieces.push(piece(wire, Zone::System, "", b, counter));
    }
    Frame {
        pieces,
        automatic: automatic(wire, v),
    }
}

/// A body's request-level marker (`v`: the body, or its frame), spelled as the wire's
/// marks are (Anthropic's `cache_control`): `Some(ttl)` where it carries one.
pub(crate) fn automatic(wire: Wire, v: &Value) -> Option<Option<f64>> {
    (wire.form().keys().mark_key)
        .filter(|_| wire.form().request_marker())
        .and_then(|key| v.get(key))
        .map(|c| c.get("ttl").and_then(Value::as_str).and_then(ttl_seconds_of))
}

/// The pieces of one element of a body's list (a message, an input item, a content).
pub(crate) fn element(wire: Wire, m: &Value, counter: &mut Counter<'_>) -> Vec<Piece> {
    let parts = wire.form().keys().parts;
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    match m.get(parts).filter(|_| !parts.is_empty()) {
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(pi, b)| piece(wire, Zone::Message(0, pi), role, b, counter))
            .collect(),
        Some(other) => vec![piece(wire, Zone::Message(0, 0), role, other, counter)],
        // A message that is one block (its JSON whole) is never a thinking block.
        None => vec![piece(wire, Zone::Tools, role, m, counter).at(Zone::Message(0, 0))],
    }
}

/// The blocks of a request in order, each with the prefix up to it: its frame's, then
/// its elements' (message `mi` the element's index), Anthropic's request-level marker
/// on the last block that can be cached (not thinking).
fn assemble<'p>(model: Option<&str>, frame: &Frame, elements: impl Iterator<Item = &'p [Piece]>) -> Vec<Block> {
    let mut prefix = hash(model.unwrap_or(""));
    let mut out: Vec<Block> = Vec::new();
    let mut thinking: Vec<bool> = Vec::new();
    let framed = frame.pieces.iter().map(|p| (None, p));
    let listed = elements
        .enumerate()
        .flat_map(|(mi, e)| e.iter().map(move |p| (Some(mi), p)));
    for (mi, p) in framed.chain(listed) {
        match p {
            Piece::Mark { ttl } => {
                if let Some(b) = out.last_mut() {
                    b.marked = true;
                    b.ttl = *ttl;
                }
            }
            Piece::Block {
                own,
                tokens,
                marked,
                ttl,
                zone,
                thinking: is_thinking,
            } => {
                prefix = hash_parts(&[&prefix.to_le_bytes(), &own.to_le_bytes()]);
                let zone = match (zone, mi) {
                    (Zone::Message(_, pi), Some(mi)) => Zone::Message(mi, *pi),
                    (z, _) => *z,
                };
                out.push(Block {
                    prefix,
                    own: *own,
                    tokens: *tokens,
                    marked: *marked,
                    ttl: *ttl,
                    zone,
                });
                thinking.push(*is_thinking);
            }
        }
    }
    if let Some(automatic_ttl) = frame.automatic {
        if let Some(i) = (0..out.len()).rev().find(|&i| !thinking[i]) {
            out[i].marked = true;
            out[i].ttl = automatic_ttl.or(out[i].ttl);
        }
    }
    out
}

/// The blocks of a whole body in the provider's cache order.
fn blocks(wire: Wire, body: &str, model: Option<&str>, counter: &mut Counter<'_>) -> Vec<Block> {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    let list = wire.form().keys().list;
    let f = frame(wire, &v, counter);
    let elements: Vec<Vec<Piece>> = v
        .get(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|m| element(wire, m, counter))
        .collect();
    assemble(model, &f, elements.iter().map(Vec::as_slice))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::CacheTtl;

    fn claude(min: i32) -> Model {
        let mut m = Model::new("claude", Wire::Anthropic);
        let mut p = crate::profile::tests::adaptive_only();
        p.min_cache_tokens = min;
        m.cache_ttl = CacheTtl::FiveMinutes;
        m.with_profile(Some(p))
    }

    fn sent(step: i32, at: f64, body: Value, model: &Model) -> Sent {
        Sent {
            turn_id: Uuid::nil(),
            step,
            at,
            wire: Wire::Anthropic,
            model: Some(model.clone()),
            body: Request::Whole(body.to_string()),
            billed: None,
            billed_miss: None,
        }
    }

    fn text(t: &str, marked: bool) -> Value {
        let mut b = serde_json::json!({"type": "text", "text": t});
        if marked {
            b["cache_control"] = serde_json::json!({"type": "ephemeral"});
        }
        b
    }

    fn body(system: &str, messages: &[(&str, &str, bool)]) -> Value {
        serde_json::json!({
            "model": "claude", "max_tokens": 10,
            "system": [text(system, true)],
            "messages": messages.iter().map(|(role, t, m)| serde_json::json!({"role": role, "content": [text(t, *m)]})).collect::<Vec<_>>(),
        })
    }

    #[test]
    fn a_second_request_reads_the_prefix_the_first_wrote_until_its_ttl_runs_out() {
        let model = claude(1);
        let mut memo = Memo::default();
        let mut sim = Simulator::new();
        let long = "policy ".repeat(50);
        let first = sim.send(&sent(0, 0.0, body(&long, &[("user", "hi", true)]), &model), &mut memo);
        assert_eq!(first.predicted_cache_read, 0);
        assert_eq!(first.predicted_cache_write, first.input_tokens);
        let b2 = body(
            &long,
            &[
                ("user", "hi", false),
                ("assistant", "hello", false),
                ("user", "more", true),
            ],
        );
        let second = sim.send(&sent(0, 60.0, b2.clone(), &model), &mut memo);
        assert_eq!(second.predicted_cache_read, first.input_tokens);
        assert_eq!(second.shared_prefix_tokens, first.input_tokens);
        assert_eq!(second.first_difference, None, "it extends the first");
        assert_eq!(
            second.predicted_cache_read + second.predicted_cache_write + second.predicted_uncached,
            second.input_tokens
        );
        // Ten minutes later the 5-minute entries are gone.
        let third = sim.send(&sent(0, 60.0 + 600.0, b2, &model), &mut memo);
        assert_eq!(third.predicted_cache_read, 0);
    }

    #[test]
    fn a_changed_system_text_is_the_first_difference_and_a_prefix_below_the_minimum_is_not_cached() {
        let model = claude(100_000);
        let mut memo = Memo::default();
        let mut sim = Simulator::new();
        let a = sim.send(
            &sent(0, 0.0, body("Be brief.", &[("user", "hi", true)]), &model),
            &mut memo,
        );
        assert_eq!((a.predicted_cache_write, a.predicted_uncached), (0, a.input_tokens));
        let b = sim.send(
            &sent(0, 1.0, body("Be briefer.", &[("user", "hi", true)]), &model),
            &mut memo,
        );
        assert_eq!(b.shared_prefix_tokens, 0);
        let d = b.first_difference.unwrap();
        assert_eq!(
            (d["in"].as_str(), d["cause"].as_str()),
            (Some("system"), Some("system"))
        );
    }

    #[test]
    fn a_trimmed_history_is_told_apart() {
        let model = claude(1);
        let mut memo = Memo::default();
        let mut sim = Simulator::new();
        sim.send(
            &sent(
                0,
                0.0,
                body(
                    "S",
                    &[
                        ("user", "one", false),
                        ("assistant", "two", false),
                        ("user", "three", true),
                    ],
                ),
                &model,
            ),
            &mut memo,
        );
        let b = sim.send(
            &sent(
                0,
                1.0,
                body("S", &[("user", "three", false), ("assistant", "four", true)]),
                &model,
            ),
            &mut memo,
        );
        assert_eq!(b.first_difference.unwrap()["cause"], "trim");
    }

    #[test]
    fn the_lookback_loses_an_entry_more_than_twenty_blocks_back() {
        let model = claude(1);
        let mut memo = Memo::default();
        let mut sim = Simulator::new();
        let mut msgs: Vec<(&str, &str, bool)> = vec![("user", "start", true)];
        sim.send(&sent(0, 0.0, body("S", &msgs), &model), &mut memo);
        msgs[0].2 = false;
        for _ in 0..25 {
            msgs.push(("assistant", "x", false));
        }
        msgs.last_mut().unwrap().2 = true;
        let far = sim.send(&sent(1, 1.0, body("S", &msgs), &model), &mut memo);
        // The entry at "start" lies 25 blocks before the last breakpoint: only the system
        // entry, read by its own breakpoint, is found.
        let system_only = sim.send(&sent(0, 2.0, body("S", &[("user", "other", true)]), &model), &mut memo);
        assert_eq!(far.predicted_cache_read, system_only.predicted_cache_read);
    }

    /// A body read in pieces (its frame, then each element) is read into the same blocks
    /// as the whole body, on every wire: tools, system, parts, marks, Converse's
    /// cachePoints, Anthropic's request-level marker passing over a thinking block.
    #[test]
    fn a_body_in_pieces_reads_as_the_whole_body() {
        let marked = serde_json::json!({"type": "ephemeral", "ttl": "1h"});
        let bodies = [
            (
                Wire::Anthropic,
                "messages",
                serde_json::json!({
                "model": "m", "tools": [{"name": "t", "input_schema": {}}],
                "system": [{"type": "text", "text": "S", "cache_control": marked}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "one"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "two"}, {"type": "thinking", "thinking": "t"}]},
                    {"role": "user", "content": "three"}],
                "cache_control": {"type": "ephemeral"}}),
            ),
            (
                Wire::Converse,
                "messages",
                serde_json::json!({
                "system": [{"text": "S"}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
                "toolConfig": {"tools": [{"toolSpec": {"name": "t"}}, {"cachePoint": {"type": "default"}}]},
                "messages": [
                    {"role": "user", "content": [{"text": "one"}, {"cachePoint": {"type": "default"}}]},
                    {"role": "assistant", "content": [{"text": "two"}]}]}),
            ),
            (
                Wire::Chat,
                "messages",
                serde_json::json!({
                "model": "m", "tools": [{"type": "function", "function": {"name": "t"}}],
                "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "one"},
                             {"role": "user", "content": [{"type": "text", "text": "x", "prompt_cache_breakpoint": {}}]}]}),
            ),
            (
                Wire::Responses,
                "input",
                serde_json::json!({
                "model": "m", "instructions": "S",
                "input": [{"role": "user", "content": [{"type": "input_text", "text": "one", "prompt_cache_breakpoint": {}}]}, {"type": "function_call", "call_id": "c", "name": "t", "arguments": "{}"}]}),
            ),
            (
                Wire::Gemini,
                "contents",
                serde_json::json!({
                "systemInstruction": {"parts": [{"text": "S"}]},
                "contents": [{"role": "user", "parts": [{"text": "one"}, {"text": "two"}]}]}),
            ),
        ];
        let seen = |b: &[Block]| -> Vec<String> {
            b.iter()
                .map(|b| {
                    format!(
                        "{:x} {:x} {} {} {:?} {:?}",
                        b.prefix, b.own, b.tokens, b.marked, b.ttl, b.zone
                    )
                })
                .collect()
        };
        for (wire, list, body) in bodies {
            let mut memo = Memo::default();
            let mut counter = Counter::new(Tokenizer::Cl100kBase, &mut memo);
            let whole = blocks(wire, &body.to_string(), Some("m"), &mut counter);
            let mut around = body.clone();
            around[list] = Value::Array(Vec::new());
            let elements = body[list].as_array().unwrap().iter().enumerate();
            let p = Pieces {
                frame: (Some((1, 2)), Rc::from(around.to_string())),
                elements: elements
                    .map(|(i, e)| (Some(i as i64), Rc::from(e.to_string())))
                    .collect(),
            };
            let mut sim = Simulator::new();
            for _ in 0..2 {
                let pieces = sim.pieces(wire, Tokenizer::Cl100kBase, &p, Some("m"), &mut counter);
                assert_eq!(seen(&pieces), seen(&whole), "{wire:?}");
            }
            // Gemini caches implicitly: its bodies carry no mark.
            assert_eq!(whole.iter().any(|b| b.marked), wire != Wire::Gemini, "{wire:?}");
        }
    }
}
