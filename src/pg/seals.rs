//! Seal storage (docs/design.md, "Seals"): writing a fresh compile's seal with its body
//! shared against the previous seal's chain, reading a body back byte for byte, marking
//! the rounds a continuation sent, and pruning old bodies on purpose.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys::{BOOLOID, BYTEAOID, INT4OID, INT8ARRAYOID, INT8OID, TEXTOID, UUIDOID};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use super::spi::{first, nullable, pg_uuid, run, run_write, Cols, Column, Query};
use pgprompt_core::seal::{self, digest, plan_chain, walk_chain, Frozen, Patch, Sealed};
use pgprompt_core::Body;
use pgprompt_core::Columns as _;
use pgprompt_core::Turn;
use pgprompt_core::{Code, Error, Result};
use pgprompt_core::{Output, SealDraft};

/// A seal row's pointers to its body (the node ids of its pieces) and what the body must
/// be: its size and digest.
struct Pointers {
    pruned: bool,
    patches: String,
    head: Option<i64>,
    lead: Vec<Option<i64>>,
    chain: Option<i64>,
    chain_length: i32,
    chain_low: Option<i64>,
    tail: Option<i64>,
    digest: Vec<u8>,
    bytes: i32,
}

/// The columns [`Pointers::read`] takes, of `prompt.seals s`.
const POINTERS: &str = "s.pruned_at IS NOT NULL AS pruned, s.patches::text, s.head, s.lead, s.chain, s.chain_length, \
                        s.chain_low, s.tail, s.digest, s.bytes";
const POINTER_COLUMNS: [Column; 10] = [
    ("pruned", BOOLOID),
    ("patches", TEXTOID),
    ("head", INT8OID),
    ("lead", INT8ARRAYOID),
    ("chain", INT8OID),
    ("chain_length", INT4OID),
    ("chain_low", INT8OID),
    ("tail", INT8OID),
    ("digest", BYTEAOID),
    ("bytes", INT4OID),
];

impl Pointers {
    /// A NULL where a body needs a value reads as what [`check_pointers`] and the digest
    /// check refuse (a negative size or length, no patch list, an empty digest): the
    /// seal is `data_corrupted`, named with its turn, never read with a default.
    fn read(c: &Cols<'_>) -> Pointers {
        Pointers {
            pruned: c.get::<bool>("pruned").unwrap_or(false),
            patches: c.text("patches").unwrap_or_default(),
            head: c.get::<i64>("head"),
            lead: c.get::<Vec<Option<i64>>>("lead").unwrap_or_default(),
            chain: c.get::<i64>("chain"),
            chain_length: c.get::<i32>("chain_length").unwrap_or(-1),
            chain_low: c.get::<i64>("chain_low"),
            tail: c.get::<i64>("tail"),
            digest: c.get::<Vec<u8>>("digest").unwrap_or_default(),
            bytes: c.get::<i32>("bytes").unwrap_or(-1),
        }
    }
}

/// How many nodes a chain may have (a seal row's `chain_length` is checked against it
/// and against its id range before it sizes anything).
const MAX_CHAIN: i64 = 10_000_000;

/// A seal whose rows do not fit together or do not match its digest: `data_corrupted`
/// (XX001), naming the turn. Its bytes are never returned.
fn corrupted(conv: Uuid, turn: Uuid, why: &str) -> Error {
    Error::new(
        Code::DataCorrupted,
        format!("the seal of turn {turn} of conversation {conv} {why}"),
    )
    .detail("Its bytes are not returned: they are not the bytes that were sealed.")
    .hint("Seal storage changes only through pgprompt; was it edited with the guards off? SELECT * FROM prompt.verify_seals(conversation_id) lists every seal that no longer matches.")
}

static SEAL: LazyLock<Query> = LazyLock::new(|| {
    let mut columns = vec![("frozen", TEXTOID), ("frozen_digest", BYTEAOID)];
    columns.extend(POINTER_COLUMNS);
    Query::new(
        "a seal row",
        format!(
            "SELECT s.frozen::text, s.frozen_digest, {POINTERS} FROM prompt.seals s \
             WHERE s.conversation_id = $1 AND s.turn_id = $2"
        ),
        &columns,
    )
});

/// The seal of a sealed turn: what it froze, and its body (verified against its digest)
/// unless it was pruned.
pub fn load(client: &SpiClient<'_>, conv: Uuid, t: &Turn) -> Result<Sealed> {
    let rows = run(client, &SEAL, &[pg_uuid(conv).into(), pg_uuid(t.id).into()], |c| {
        Ok::<_, Error>(Some((
            c.need_text("frozen")?,
            c.get::<Vec<u8>>("frozen_digest"),
            Pointers::read(c),
        )))
    })?;
    let Some((frozen, frozen_digest, p)) = rows.into_iter().next() else {
        return Err(pending(client, conv, t.id).unwrap_or_else(|| {
            Error::new(
                Code::DataCorrupted,
                format!("turn {} of conversation {conv} is sealed, and its seal is missing from prompt.seals", t.id),
            )
            .hint("Seals are written by compile_turn and kept by pg_dump; SELECT * FROM prompt.verify_seals(conversation_id) lists what is missing.")
        }));
    };
    let frozen = checked_frozen(conv, t.id, &frozen, frozen_digest.as_deref())?;
    let body = if p.pruned {
        None
    } else {
        Some(read_verified(client, conv, t.id, &p)?)
    };
    Ok(Sealed { frozen, body })
}

/// What a seal froze, read from its `frozen` text once checked against its stored digest.
/// It is what every later request of the turn is rendered from (its model, breakpoints, a
/// stateful chain, an in-turn summary's cut): as covered as the bytes, by the digest
/// written with it (of jsonb's own text, the same on every read).
fn checked_frozen(conv: Uuid, turn: Uuid, frozen: &str, stored_digest: Option<&[u8]>) -> Result<Frozen> {
    if stored_digest != Some(&digest(frozen)[..]) {
        return Err(corrupted(
            conv,
            turn,
            "has a frozen record that does not match its digest",
        ));
    }
    serde_json::from_str(frozen)
        .map_err(|e| corrupted(conv, turn, &format!("has a frozen record that cannot be read ({e})")))
}

static NODES: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a seal node",
        "SELECT id, parent, body, digest FROM prompt.seal_nodes WHERE conversation_id = $1 \
         AND (id BETWEEN $2 AND $3 OR id = ANY($4))",
        &[
            ("id", INT8OID),
            ("parent", INT8OID),
            ("body", TEXTOID),
            ("digest", BYTEAOID),
        ],
    )
});

/// Checks a seal row's pointers before they size anything: `Err` says what does not fit.
fn check_pointers(p: &Pointers) -> std::result::Result<(i64, i64), &'static str> {
    if p.bytes < 0 || usize::try_from(p.bytes).map_or(true, |b| b > pgprompt_core::MAX_TEXT) {
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

/// A sealed body read back from its nodes and checked against its size and digest.
fn read_verified(client: &SpiClient<'_>, conv: Uuid, turn: Uuid, p: &Pointers) -> Result<Body> {
    let body = read_body(client, conv, p).map_err(|why| corrupted(conv, turn, why))?;
    let bytes = usize::try_from(p.bytes).unwrap_or(usize::MAX);
    pgprompt_core::seal::verify(&body, bytes, &p.digest).map_err(|why| corrupted(conv, turn, why))?;
    Ok(body)
}

/// A sealed body, read back from its nodes. `Err` says which piece is missing or does
/// not fit.
fn read_body(client: &SpiClient<'_>, conv: Uuid, p: &Pointers) -> std::result::Result<Body, &'static str> {
    let (low, high) = check_pointers(p)?;
    let patches: Vec<Patch> = serde_json::from_str(&p.patches).map_err(|_| "has a patch list that cannot be read")?;
    let lead: Vec<i64> = p.lead.iter().flatten().copied().collect();
    let singles: Vec<i64> = p.head.into_iter().chain(p.tail).chain(lead.iter().copied()).collect();
    let rows = run(
        client,
        &NODES,
        &[pg_uuid(conv).into(), low.into(), high.into(), singles.into()],
        |c| {
            Ok::<_, Error>(Some((
                c.need::<i64>("id")?,
                (c.get::<i64>("parent"), c.need_text("body")?),
            )))
        },
    )
    .map_err(|_| "has a node without its text")?;
    let nodes: HashMap<i64, (Option<i64>, String)> = rows.into_iter().collect();
    let text = |id: Option<i64>| id.and_then(|id| nodes.get(&id)).map(|(_, t)| t.clone());
    let mut elements: Vec<String> = lead
        .iter()
        .map(|id| text(Some(*id)))
        .collect::<Option<_>>()
        .ok_or("lost a node")?;
    elements.extend(
        walk_chain(&nodes, p.chain, p.chain_length)
            .ok_or("lost a node")?
            .into_iter()
            .map(|(_, t)| t),
    );
    if patches.len() > elements.len() {
        return Err("has more patches than elements");
    }
    pgprompt_core::seal::apply(&mut elements, &patches).ok_or("has patches that do not fit its elements")?;
    Ok(Body {
        head: text(p.head).ok_or("lost a node")?,
        elements,
        tail: text(p.tail).ok_or("lost a node")?,
    })
}

static SEALS_OF: LazyLock<Query> = LazyLock::new(|| {
    let mut columns = vec![
        ("turn_id", UUIDOID),
        ("frozen", TEXTOID),
        ("frozen_digest", BYTEAOID),
        ("pieces_digest", BYTEAOID),
    ];
    columns.extend(POINTER_COLUMNS);
    Query::new(
        "a seal row",
        format!(
            "SELECT s.turn_id, s.frozen::text, s.frozen_digest, s.pieces_digest, {POINTERS} FROM prompt.seals s \
             WHERE s.conversation_id = $1 AND s.turn_id = ANY($2)"
        ),
        &columns,
    )
});

/// The sealed first requests of `turns` as they were sent: what each seal froze and its
/// body in pieces (`None`: pruned), every one checked against its digests as
/// [`load`] checks it. Two statements whatever their number, and the nodes they share
/// read once (`cache_report`, `explain_turn`'s prediction).
pub fn sent_pieces(
    client: &SpiClient<'_>,
    conv: Uuid,
    turns: &[Uuid],
) -> Result<HashMap<Uuid, (Frozen, Option<pgprompt_core::cache::Pieces>)>> {
    let ids: Vec<pgrx::Uuid> = turns.iter().copied().map(pg_uuid).collect();
    let rows = run(client, &SEALS_OF, &[pg_uuid(conv).into(), ids.into()], |c| {
        Ok::<_, Error>(Some((
            c.need_uuid("turn_id")?,
            c.need_text("frozen")?,
            c.get::<Vec<u8>>("frozen_digest"),
            (Pointers::read(c), c.get::<Vec<u8>>("pieces_digest")),
        )))
    })?;
    let mut seals = Vec::with_capacity(rows.len());
    let (mut low, mut high, mut singles) = (i64::MAX, i64::MIN, Vec::new());
    for (turn, frozen, frozen_digest, p) in rows {
        let frozen = checked_frozen(conv, turn, &frozen, frozen_digest.as_deref())?;
        if !p.0.pruned {
            let (l, h) = check_pointers(&p.0).map_err(|why| corrupted(conv, turn, why))?;
            if l <= h {
                (low, high) = (low.min(l), high.max(h));
            }
            singles.extend(
                p.0.head
                    .into_iter()
                    .chain(p.0.tail)
                    .chain(p.0.lead.iter().flatten().copied()),
            );
        }
        seals.push((turn, frozen, p));
    }
    let nodes: Nodes = match seals.iter().any(|s| !s.2 .0.pruned) {
        true => run(
            client,
            &NODES,
            &[pg_uuid(conv).into(), low.into(), high.into(), singles.into()],
            |c| {
                let d = c.get::<Vec<u8>>("digest").unwrap_or_default();
                Ok::<_, Error>(Some((
                    c.need::<i64>("id")?,
                    (
                        c.get::<i64>("parent"),
                        (
                            std::rc::Rc::from(c.need_text("body")?),
                            <[u8; 32]>::try_from(d.as_slice()).unwrap_or([0; 32]),
                        ),
                    ),
                )))
            },
        )?
        .into_iter()
        .collect(),
        false => HashMap::new(),
    };
    let mut reader = seal::PieceReader::default();
    let mut out = HashMap::with_capacity(seals.len());
    for (turn, frozen, (p, pieces_digest)) in seals {
        let pieces = match p.pruned {
            true => None,
            false => Some(
                pieces_of(&nodes, &p, pieces_digest.as_deref(), &mut reader)
                    .map_err(|why| corrupted(conv, turn, why))?,
            ),
        };
        out.insert(turn, (frozen, pieces));
    }
    Ok(out)
}

/// Seal nodes read back: each one's parent, text and stored digest, by id.
type Nodes = HashMap<i64, (Option<i64>, (std::rc::Rc<str>, [u8; 32]))>;

/// A seal's body in pieces from the nodes read, checked by `reader` against the seal's
/// pieces digest (a 0.4 seal has none: against its body's).
fn pieces_of(
    nodes: &Nodes,
    p: &Pointers,
    pieces_digest: Option<&[u8]>,
    reader: &mut seal::PieceReader,
) -> std::result::Result<pgprompt_core::cache::Pieces, &'static str> {
    let patches: Vec<Patch> = serde_json::from_str(&p.patches).map_err(|_| "has a patch list that cannot be read")?;
    let node = |id: Option<i64>| id.and_then(|id| nodes.get(&id).map(|(_, (t, _))| (id, t.clone())));
    let node_digest = |id: i64| nodes.get(&id).map(|(_, (_, d))| *d);
    let mut elements: Vec<(i64, std::rc::Rc<str>)> = p
        .lead
        .iter()
        .map(|id| node(*id))
        .collect::<Option<_>>()
        .ok_or("lost a node")?;
    let lead = elements.len();
    let chain = walk_chain(nodes, p.chain, p.chain_length).ok_or("lost a node")?;
    elements.extend(chain.into_iter().map(|(id, (t, _))| (id, t)));
    reader.read(&seal::StoredPieces {
        head: node(p.head).ok_or("lost a node")?,
        tail: node(p.tail).ok_or("lost a node")?,
        elements,
        lead,
        patches: &patches,
        bytes: usize::try_from(p.bytes).map_err(|_| "records a size out of range")?,
        digest: &p.digest,
        pieces: pieces_digest.map(|d| (d, &node_digest as &seal::NodeDigest<'_>)),
    })
}

static PREVIOUS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the previous seal's chain",
        "SELECT chain, chain_length, chain_low FROM prompt.seals \
         WHERE conversation_id = $1 AND pruned_at IS NULL AND chain IS NOT NULL \
         ORDER BY frozen @> $2 DESC, sealed_at DESC, turn_id LIMIT 1",
        &[("chain", INT8OID), ("chain_length", INT4OID), ("chain_low", INT8OID)],
    )
});

static DIGESTS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a seal node's digest",
        "SELECT id, parent, digest FROM prompt.seal_nodes WHERE conversation_id = $1 AND id BETWEEN $2 AND $3",
        &[("id", INT8OID), ("parent", INT8OID), ("digest", BYTEAOID)],
    )
});

/// The chain of the conversation's seal most like the new one (same answerer and wire,
/// newest): its node ids and digests, oldest first. Nothing to share (the new seal's
/// elements are all written anew) when there is none or it does not read back whole.
fn previous_chain(client: &SpiClient<'_>, conv: Uuid, frozen: &Frozen) -> Vec<(i64, Vec<u8>)> {
    let prev = run(
        client,
        &PREVIOUS,
        &[
            pg_uuid(conv).into(),
            pgrx::JsonB(seal::frozen_for(frozen.answerer_id, Some(frozen.wire))).into(),
        ],
        |c| {
            Ok::<_, std::convert::Infallible>(Some((
                c.get::<i64>("chain"),
                c.get::<i32>("chain_length").unwrap_or(0),
                c.get::<i64>("chain_low"),
            )))
        },
    )
    .unwrap_or_default();
    let Some((Some(chain), length, Some(low))) = prev.into_iter().next() else {
        return Vec::new();
    };
    let rows = run(
        client,
        &DIGESTS,
        &[pg_uuid(conv).into(), low.into(), chain.into()],
        |c| {
            Ok::<_, std::convert::Infallible>(Some((
                c.get::<i64>("id").unwrap_or(0),
                (c.get::<i64>("parent"), c.get::<Vec<u8>>("digest").unwrap_or_default()),
            )))
        },
    )
    .unwrap_or_default();
    let nodes: HashMap<i64, (Option<i64>, Vec<u8>)> = rows.into_iter().collect();
    walk_chain(&nodes, Some(chain), length).unwrap_or_default()
}

static MAX_NODE: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a conversation's newest seal node",
        "SELECT coalesce(max(id), 0) AS id FROM prompt.seal_nodes WHERE conversation_id = $1",
        &[("id", INT8OID)],
    )
});

static FIND_NODE: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a seal node",
        "SELECT id, body FROM prompt.seal_nodes WHERE conversation_id = $1 AND parent IS NOT DISTINCT FROM $2 AND digest = $3",
        &[("id", INT8OID), ("body", TEXTOID)],
    )
});

/// Allocates node ids and writes nodes, reusing any node with the same parent and text.
struct Writer<'a, 'c> {
    client: &'a mut SpiClient<'c>,
    conv: Uuid,
    next_id: i64,
    ids: Vec<i64>,
    parents: Vec<Option<i64>>,
    digests: Vec<Vec<u8>>,
    bodies: Vec<String>,
}

impl Writer<'_, '_> {
    /// The node of `text` under `parent`: an existing one (holding exactly this text), or
    /// a new one queued. `fresh_parent`: the parent was queued here, so no existing node
    /// can match.
    fn node(&mut self, parent: Option<i64>, text: &str, fresh_parent: bool) -> Result<(i64, bool)> {
        let d = digest(text).to_vec();
        if !fresh_parent {
            let found = run(
                self.client,
                &FIND_NODE,
                &[pg_uuid(self.conv).into(), nullable(parent), d.clone().into()],
                |c| Ok::<_, Error>(Some((c.need::<i64>("id")?, c.need_text("body")?))),
            )?;
            if let Some((id, body)) = found.into_iter().next() {
                if body != text {
                    return Err(Error::new(
                        Code::DataCorrupted,
                        format!("seal node {id} of conversation {} does not hold the text its digest names", self.conv),
                    )
                    .hint("Seal storage changes only through pgprompt; SELECT * FROM prompt.verify_seals(conversation_id) lists the seals it breaks."));
                }
                return Ok((id, false));
            }
        }
        if let Some(i) = self
            .digests
            .iter()
            .zip(&self.parents)
            .position(|(x, p)| *x == d && *p == parent)
        {
            return Ok((self.ids[i], true));
        }
        self.next_id += 1;
        self.ids.push(self.next_id);
        self.parents.push(parent);
        self.digests.push(d);
        self.bodies.push(text.to_string());
        Ok((self.next_id, true))
    }

    fn flush(self) {
        if self.ids.is_empty() {
            return;
        }
        run_write(
            self.client,
            "INSERT INTO prompt.seal_nodes (conversation_id, id, parent, digest, body) \
             SELECT $1, * FROM unnest($2::int8[], $3::int8[], $4::bytea[], $5::text[])",
            &[
                pg_uuid(self.conv).into(),
                self.ids.into(),
                self.parents.into(),
                self.digests.into(),
                self.bodies.into(),
            ],
        );
    }
}

/// Takes the conversation's seal-storage lock: one writer of its seals (sealing, pruning,
/// converting) at a time. It is a row update of the conversation, so under REPEATABLE
/// READ or SERIALIZABLE a writer whose snapshot missed another's commit fails with
/// 40001 (retry the transaction) instead of writing over what it cannot see; under READ
/// COMMITTED it waits, and the queries after it see what the other committed.
pub fn lock_storage(client: &mut SpiClient<'_>, conv: Uuid) {
    run_write(
        client,
        "UPDATE prompt.conversations SET created_at = created_at WHERE id = $1",
        &[pg_uuid(conv).into()],
    );
}

/// Writes a fresh compile's seal. False when another session sealed the turn first
/// (then nothing is written).
pub fn write(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, out: &Output) -> Result<bool> {
    let (Some(draft), Some((body, plain))) = (&out.seal, out.sealed_body()) else {
        return Ok(false);
    };
    lock_storage(client, conv);
    // Sealing is pgprompt's own write of the turn's seal columns and of seal storage.
    let _open = super::guard::Open::hold();
    if !claim(client, conv, turn, draft) {
        return Ok(false);
    }
    let stored = Stored {
        body,
        plain,
        patches: &draft.patches,
    };
    store(client, conv, turn, &stored, &draft.frozen, None)?;
    Ok(true)
}

/// A body as storage keeps it: the body as sent (its size and digest are stored), its
/// elements unmarked (what consecutive seals share), and the edits that mark them.
pub struct Stored<'a> {
    pub body: &'a Body,
    pub plain: &'a [String],
    pub patches: &'a [Patch],
}

/// Marks the turn sealed, with what its seal froze on the turn itself; false when it
/// already was.
fn claim(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, draft: &SealDraft) -> bool {
    let claimed = run_write(
        client,
        "UPDATE prompt.turns SET sealed_at = now(), sealed_preface = $3::jsonb, sealed_catalog = $4, \
         sealed_mechanism = $5, sealed_versions = $6::jsonb \
         WHERE conversation_id = $1 AND id = $2 AND sealed_at IS NULL",
        &[
            pg_uuid(conv).into(),
            pg_uuid(turn).into(),
            pgprompt_core::preface_json(&draft.preface).into(),
            nullable(draft.catalog.clone()),
            draft.frozen.mechanism.as_str().to_string().into(),
            draft.versions.clone().into(),
        ],
    );
    claimed.len() == 1
}

/// Stores a seal's body (sharing its elements with the conversation's previous seal)
/// and what it froze. `sealed_at` keeps an older seal's time (a converted one). The
/// caller holds [`lock_storage`].
pub fn store(
    client: &mut SpiClient<'_>,
    conv: Uuid,
    turn: Uuid,
    stored: &Stored<'_>,
    frozen: &Frozen,
    sealed_at: Option<pgrx::datum::TimestampWithTimeZone>,
) -> Result<()> {
    let prev = previous_chain(client, conv, frozen);
    let digests: Vec<[u8; 32]> = stored.plain.iter().map(|e| digest(e)).collect();
    let prev_digests: Vec<[u8; 32]> = prev
        .iter()
        .map(|(_, d)| <[u8; 32]>::try_from(d.as_slice()).unwrap_or([0; 32]))
        .collect();
    let plan = plan_chain(&prev_digests, &digests);
    let next_id = first::<i64>(client, &MAX_NODE, &[pg_uuid(conv).into()]).unwrap_or(0);
    let mut w = Writer {
        client,
        conv,
        next_id,
        ids: Vec::new(),
        parents: Vec::new(),
        digests: Vec::new(),
        bodies: Vec::new(),
    };
    let head = w.node(None, &stored.body.head, false)?.0;
    let tail = w.node(None, &stored.body.tail, false)?.0;
    let lead: Vec<i64> = stored.plain[..plan.lead]
        .iter()
        .map(|e| w.node(None, e, false).map(|(id, _)| id))
        .collect::<Result<_>>()?;
    let reused = &prev[plan.at..plan.at + plan.len];
    let mut parent = reused.last().map(|(id, _)| *id);
    let mut chain_ids: Vec<i64> = reused.iter().map(|(id, _)| *id).collect();
    let mut fresh = false;
    for e in &stored.plain[plan.lead + plan.len..] {
        let (id, queued) = w.node(parent, e, fresh)?;
        fresh = queued;
        parent = Some(id);
        chain_ids.push(id);
    }
    w.flush();
    let pieces_digest = seal::pieces_digest(
        &digest(&stored.body.head),
        &digest(&stored.body.tail),
        &digests,
        stored.patches,
    );
    let frozen = serde_json::to_string(frozen).unwrap_or_else(|_| "{}".into());
    let patches = serde_json::to_string(stored.patches).unwrap_or_else(|_| "[]".into());
    run_write(client, "INSERT INTO prompt.seals (conversation_id, turn_id, frozen, head, lead, chain, chain_length, chain_low, tail, digest, bytes, \
         sealed_at, patches, frozen_digest, pieces_digest) \
         VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9, $10, $11, coalesce($12, now()), $13::jsonb, \
         sha256(convert_to($3::jsonb::text, 'UTF8')), $14)",
        &[
            pg_uuid(conv).into(),
            pg_uuid(turn).into(),
            frozen.into(),
            head.into(),
            lead.into(),
            nullable(chain_ids.last().copied()),
            i32::try_from(chain_ids.len()).unwrap_or(i32::MAX).into(),
            nullable(chain_ids.iter().min().copied()),
            tail.into(),
            pgprompt_core::seal::body_digest(stored.body).to_vec().into(),
            i32::try_from(stored.body.len()).unwrap_or(i32::MAX).into(),
            nullable(sealed_at),
            patches.into(),
            pieces_digest.to_vec().into(),
        ],
    );
    Ok(())
}

static STORED: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a seal row",
        format!("SELECT {POINTERS} FROM prompt.seals s WHERE s.conversation_id = $1 AND s.turn_id = $2"),
        &POINTER_COLUMNS,
    )
});

/// The seal's columns the conversation row carries for a compile (`load::context`): the
/// pointers of `prompt.seals s` joined on [`STORED_JOIN`], the digest NULL where it matched
/// nothing or the read does not take the stored body (`$4` false: decided here rather than
/// in the join, whose condition Citus must see join the conversation's shards).
pub const STORED_POINTERS: &str = "s.pruned_at IS NOT NULL AS pruned, s.patches::text, s.head, s.lead, s.chain, \
                                   s.chain_length, s.chain_low, s.tail, CASE WHEN $4 THEN s.digest END AS digest, s.bytes";
/// The columns of [`STORED_POINTERS`].
pub const STORED_COLUMNS: [Column; 10] = POINTER_COLUMNS;
/// The join condition of `prompt.seals s` for the conversation `$1`'s row: the seal of
/// turn `$2` when the turn has no rounds and its frozen record is not stateful (`$3`,
/// [`seal::frozen_stateful`]: it sends the stored body's stateful form). The turn's row
/// must be visible and sealed, as the full path reads it: a policy of the user's on
/// `prompt.turns` confines a sealed compile too. No condition is a parameter alone: one
/// the planner folds to false (as `$4` was when the read takes no stored body) leaves
/// Citus a "complex join" of the conversation's shards; [`STORED_POINTERS`] applies `$4`.
pub const STORED_JOIN: &str = "s.conversation_id = $1 AND s.turn_id = $2 AND NOT s.frozen @> $3 \
                               AND EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = $1 \
                               AND t.id = $2 AND t.sealed_at IS NOT NULL) \
                               AND NOT EXISTS (SELECT 1 FROM prompt.rounds r WHERE r.conversation_id = $1 \
                               AND r.turn_id = $2)";

/// The pointers [`STORED_JOIN`] found, read from the conversation's row (`None`: no seal).
pub(crate) struct StoredSeal(Pointers);

impl StoredSeal {
    /// The pointers in a row carrying [`STORED_POINTERS`]: `None` where the join matched no
    /// seal (its digest, never NULL in a seal row, is NULL).
    pub(crate) fn read(c: &Cols<'_>) -> Option<StoredSeal> {
        c.get::<Vec<u8>>("digest").map(|_| StoredSeal(Pointers::read(c)))
    }

    /// Whether the seal's body was pruned (a compile then reads the turn and says why).
    pub(crate) fn pruned(&self) -> bool {
        self.0.pruned
    }

    /// The stored body, verified against its digest: what `compile_turn` returns again and
    /// again. `Ok(None)` when it was pruned (the compile then says why).
    pub(crate) fn body(&self, client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Result<Option<Body>> {
        match self.0.pruned {
            true => Ok(None),
            false => read_verified(client, conv, turn, &self.0).map(Some),
        }
    }

    /// The arguments `$3` and `$4` of [`STORED_JOIN`] for a read that does (`wanted`) or does
    /// not take the stored body.
    pub(crate) fn args(wanted: bool) -> [DatumWithOid<'static>; 2] {
        [pgrx::JsonB(seal::frozen_stateful()).into(), wanted.into()]
    }
}

/// The body a turn's seal stored, rounds or not. `Ok(None)` when it is not sealed;
/// `sealed_request_pruned` when its body was dropped.
pub fn sealed_body(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Result<Option<Body>> {
    match read_stored(client, conv, turn)? {
        None => pending(client, conv, turn).map_or(Ok(None), Err),
        Some(Ok(body)) => Ok(Some(body)),
        Some(Err(())) => Err(Error::new(
            Code::SealedRequestPruned,
            format!("turn {turn} of conversation {conv} was sealed, and prune_seals dropped its body"),
        )
        .detail("Its digest, size and estimate are kept in prompt.seals.")),
    }
}

/// A seal's stored body, verified: `Err(())` when it was pruned, `None` when there is no
/// seal.
fn read_stored(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Result<Option<std::result::Result<Body, ()>>> {
    let args = [pg_uuid(conv).into(), pg_uuid(turn).into()];
    let rows = run(client, &STORED, &args, |c| Ok::<_, Error>(Some(Pointers::read(c))))?;
    match rows.into_iter().next() {
        None => Ok(None),
        Some(p) if p.pruned => Ok(Some(Err(()))),
        Some(p) => Ok(Some(Ok(read_verified(client, conv, turn, &p)?))),
    }
}

/// Marks the rounds up to `n` as sent, with the digest of what was sent and the estimate
/// of the request that carried them: from now on they never change, and every read of
/// them checks it.
pub fn mark_sent(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, n: i32, estimate: i32) {
    let _open = super::guard::Open::hold();
    run_write(client, "UPDATE prompt.rounds SET sent_at = now(), sent_digest = prompt._round_digest(assistant, results, steers, aborted), \
         sent_estimate = $4 WHERE conversation_id = $1 AND turn_id = $2 AND n <= $3 AND sent_at IS NULL",
        &[pg_uuid(conv).into(), pg_uuid(turn).into(), n.into(), estimate.into()],
    );
}

/// Drops the bodies of the conversation's seals older than `before` (keeping digest,
/// size and estimate), then every node no remaining body uses. Returns how many seals
/// it pruned. Holds [`lock_storage`], so a seal being written meanwhile is either seen
/// whole (and its nodes kept) or waits for the prune.
pub fn prune(client: &mut SpiClient<'_>, conv: Uuid, before: DatumWithOid<'_>) -> Result<i64> {
    lock_storage(client, conv);
    let _open = super::guard::Open::hold();
    let pruned = run_write(client, "UPDATE prompt.seals SET head = NULL, lead = '{}', chain = NULL, chain_length = 0, chain_low = NULL, \
         tail = NULL, patches = '[]', pruned_at = now() WHERE conversation_id = $1 AND sealed_at < $2 AND pruned_at IS NULL",
        &[pg_uuid(conv).into(), before],
    )
    .len() as i64;
    static LIVE: LazyLock<Query> = LazyLock::new(|| {
        Query::new(
            "a live seal row",
            "SELECT turn_id, head, tail, lead, chain, chain_length FROM prompt.seals \
             WHERE conversation_id = $1 AND pruned_at IS NULL",
            &[
                ("turn_id", UUIDOID),
                ("head", INT8OID),
                ("tail", INT8OID),
                ("lead", INT8ARRAYOID),
                ("chain", INT8OID),
                ("chain_length", INT4OID),
            ],
        )
    });
    static ALL: LazyLock<Query> = LazyLock::new(|| {
        Query::new(
            "a seal node",
            "SELECT id, parent FROM prompt.seal_nodes WHERE conversation_id = $1",
            &[("id", INT8OID), ("parent", INT8OID)],
        )
    });
    let live = run(client, &LIVE, &[pg_uuid(conv).into()], |c| {
        Ok::<_, Error>(Some((
            c.need_uuid("turn_id")?,
            c.get::<i64>("head"),
            c.get::<i64>("tail"),
            c.get::<Vec<Option<i64>>>("lead").unwrap_or_default(),
            c.get::<i64>("chain"),
            // A NULL length reads no chain: the walk below finds it broken.
            c.get::<i32>("chain_length").unwrap_or(-1),
        )))
    })?;
    let nodes: HashMap<i64, (Option<i64>, ())> = run(client, &ALL, &[pg_uuid(conv).into()], |c| {
        Ok::<_, Error>(Some((c.need::<i64>("id")?, (c.get::<i64>("parent"), ()))))
    })?
    .into_iter()
    .collect();
    let mut keep: HashSet<i64> = HashSet::new();
    for (turn, head, tail, lead, chain, length) in live {
        keep.extend(head.into_iter().chain(tail).chain(lead.into_iter().flatten()));
        // A live body whose chain is broken stops the prune: nothing it might still
        // reach is dropped.
        let chain = walk_chain(&nodes, chain, length).ok_or_else(|| corrupted(conv, turn, "lost a node"))?;
        keep.extend(chain.into_iter().map(|(id, _)| id));
    }
    let dead: Vec<i64> = nodes.keys().filter(|id| !keep.contains(id)).copied().collect();
    if !dead.is_empty() {
        run_write(
            client,
            "DELETE FROM prompt.seal_nodes WHERE conversation_id = $1 AND id = ANY($2)",
            &[pg_uuid(conv).into(), dead.into()],
        );
    }
    Ok(pruned)
}

static SEALED_TURNS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a sealed turn",
        "SELECT t.conversation_id, t.id, EXISTS (SELECT 1 FROM prompt.seals s \
           WHERE s.conversation_id = t.conversation_id AND s.turn_id = t.id) AS has_seal \
         FROM prompt.turns t WHERE t.sealed_at IS NOT NULL AND ($1::uuid IS NULL OR t.conversation_id = $1) \
           AND NOT EXISTS (SELECT 1 FROM prompt.seals_02 p WHERE p.conversation_id = t.conversation_id AND p.turn_id = t.id) \
         ORDER BY t.conversation_id, t.seq",
        &[("conversation_id", UUIDOID), ("id", UUIDOID), ("has_seal", BOOLOID)],
    )
});

/// Every sealed turn (of `conv`, or of every conversation the caller can see) whose seal
/// does not read back as it was sealed, and why: missing, a frozen record that cannot be
/// read, pointers that do not fit, a lost node, or bytes that do not match the digest.
/// Pruned bodies are not checked (their digest stays, their bytes are gone).
pub fn verify(client: &SpiClient<'_>, conv: Option<Uuid>) -> Result<Vec<(Uuid, Uuid, String)>> {
    let turns = run(client, &SEALED_TURNS, &[nullable(conv.map(pg_uuid))], |c| {
        Ok::<_, Error>(Some((
            c.need_uuid("conversation_id")?,
            c.need_uuid("id")?,
            c.need::<bool>("has_seal")?,
        )))
    })?;
    let mut problems = Vec::new();
    let rounds = run(client, &ALTERED_ROUNDS, &[nullable(conv.map(pg_uuid))], |c| {
        Ok::<_, Error>(Some((
            c.need_uuid("conversation_id")?,
            c.need_uuid("turn_id")?,
            c.need::<i32>("n")?,
        )))
    })?;
    for (conv, turn, has_seal) in turns {
        pgprompt_core::interrupt();
        if !has_seal {
            problems.push((
                conv,
                turn,
                "the turn is sealed and its seal is missing from prompt.seals".to_string(),
            ));
            continue;
        }
        let t = Turn::new(turn, 0, pgprompt_core::TurnKind::Reply);
        // The body, then its pieces (what the cache report reads) against their digest.
        let read = load(client, conv, &t).and_then(|_| sent_pieces(client, conv, &[turn]).map(|_| ()));
        if let Err(e) = read {
            let prefix = format!(
                "{}: the seal of turn {turn} of conversation {conv} ",
                Code::DataCorrupted.name()
            );
            let why = e.message.strip_prefix(&prefix).unwrap_or(&e.message).to_string();
            problems.push((conv, turn, why));
        }
        for (_, _, n) in rounds.iter().filter(|(c, t, _)| *c == conv && *t == turn) {
            problems.push((
                conv,
                turn,
                format!("round {n} was sent and no longer matches what was sent"),
            ));
        }
    }
    Ok(problems)
}

/// The rounds a request carried (of a conversation, or of every one the caller can see)
/// that no longer match the digest of what was sent.
static ALTERED_ROUNDS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a sent round",
        "SELECT r.conversation_id, r.turn_id, r.n FROM prompt.rounds r \
         WHERE r.sent_at IS NOT NULL AND ($1::uuid IS NULL OR r.conversation_id = $1) \
           AND r.sent_digest IS DISTINCT FROM prompt._round_digest(r.assistant, r.results, r.steers, r.aborted) \
         ORDER BY r.conversation_id, r.turn_id, r.n",
        &[("conversation_id", UUIDOID), ("turn_id", UUIDOID), ("n", INT4OID)],
    )
});

static PENDING_TURN: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a 0.2 seal",
        "SELECT count(*) > 0 AS pending FROM prompt.seals_02 WHERE conversation_id = $1 AND turn_id = $2",
        &[("pending", BOOLOID)],
    )
});

/// `seal_conversion_pending` when the turn's seal is a 0.2 seal not converted yet.
fn pending(client: &SpiClient<'_>, conv: uuid::Uuid, turn: uuid::Uuid) -> Option<Error> {
    first::<bool>(client, &PENDING_TURN, &[pg_uuid(conv).into(), pg_uuid(turn).into()])
        .unwrap_or(false)
        .then(|| {
            Error::new(
                Code::SealConversionPending,
                format!("turn {turn} of conversation {conv} was sealed by pgprompt 0.2, and its seal is not converted yet"),
            )
            .detail("The update from 0.2 keeps 0.2 seals in prompt.seals_02 until they are converted.")
            .hint("CALL prompt.convert_seals_02() converts them all (in committed batches, resumable); compile_turn converts its conversation's on a primary.")
        })
}
