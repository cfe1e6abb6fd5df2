//! Seal storage (docs/design.md, "Seals"): writing a fresh compile's seal with its body
//! shared against the previous seal's chain, reading a body back byte for byte, marking
//! the rounds a continuation sent, and pruning old bodies on purpose.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys::{BOOLOID, BYTEAOID, INT4OID, INT8ARRAYOID, INT8OID, TEXTOID};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use super::spi::{first, nullable, pg_uuid, run, spi, Query};
use pgprompt_core::error::{Code, Error, Result};
use pgprompt_core::rows::Turn;
use pgprompt_core::seal::{digest, plan_chain, Frozen, Patch, Sealed};
use pgprompt_core::wire::Body;
use pgprompt_core::SealDraft;

/// Where a seal's body is: the node ids of its pieces.
struct Pointers {
    patches: Vec<Patch>,
    head: Option<i64>,
    lead: Vec<i64>,
    chain: Option<i64>,
    chain_length: i32,
    chain_low: Option<i64>,
    tail: Option<i64>,
}

static SEAL: LazyLock<Query> =
    LazyLock::new(|| {
        Query::new(
        "SELECT frozen::text, pruned_at IS NOT NULL, patches::text, head, lead, chain, chain_length, chain_low, tail \
         FROM prompt.seals WHERE conversation_id = $1 AND turn_id = $2",
        &[TEXTOID, BOOLOID, TEXTOID, INT8OID, INT8ARRAYOID, INT8OID, INT4OID, INT8OID, INT8OID],
    )
    });

fn broken(t: &Turn, why: &str) -> Error {
    Error::new(
        Code::TurnNotCompilable,
        format!("turn {} is sealed, and its seal {why}", t.id),
    )
    .hint("Seals are written by compile_turn and kept by pg_dump; was prompt.seals edited by hand?")
}

/// The seal of a sealed turn: what it froze, and its body unless it was pruned.
pub fn load(client: &SpiClient<'_>, conv: Uuid, t: &Turn) -> Result<Sealed> {
    let rows = run(client, &SEAL, &[pg_uuid(conv).into(), pg_uuid(t.id).into()], |c| {
        let frozen = c.text_or("");
        let pruned = c.bool();
        let p = Pointers {
            patches: serde_json::from_str(&c.text_or("[]")).unwrap_or_default(),
            head: c.next::<i64>(),
            lead: c
                .next::<Vec<Option<i64>>>()
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .collect(),
            chain: c.next::<i64>(),
            chain_length: c.next::<i32>().unwrap_or(0),
            chain_low: c.next::<i64>(),
            tail: c.next::<i64>(),
        };
        Ok::<_, Error>(Some((frozen, pruned, p)))
    })?;
    let Some((frozen, pruned, p)) = rows.into_iter().next() else {
        return Err(
            super::upgrade::pending(client, conv, t.id).unwrap_or_else(|| broken(t, "is missing from prompt.seals"))
        );
    };
    let frozen: Frozen = serde_json::from_str(&frozen).map_err(|e| broken(t, &format!("cannot be read ({e})")))?;
    let body = if pruned {
        None
    } else {
        Some(read_body(client, conv, &p).ok_or_else(|| broken(t, "lost a node"))?)
    };
    Ok(Sealed { frozen, body })
}

static NODES: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "SELECT id, parent, body FROM prompt.seal_nodes WHERE conversation_id = $1 \
         AND (id BETWEEN $2 AND $3 OR id = ANY($4))",
        &[INT8OID, INT8OID, TEXTOID],
    )
});

/// Walks a chain from its newest node: `length` nodes, oldest first.
fn walk<T: Clone>(nodes: &HashMap<i64, (Option<i64>, T)>, newest: Option<i64>, length: i32) -> Option<Vec<(i64, T)>> {
    let mut out = Vec::with_capacity(usize::try_from(length).unwrap_or(0));
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

/// A sealed body, read back from its nodes. `None` when a node is missing.
fn read_body(client: &SpiClient<'_>, conv: Uuid, p: &Pointers) -> Option<Body> {
    let singles: Vec<i64> = p.head.into_iter().chain(p.tail).chain(p.lead.iter().copied()).collect();
    let (low, high) = match (p.chain_low, p.chain) {
        (Some(l), Some(h)) => (l, h),
        _ => (1, 0),
    };
    let rows = run(
        client,
        &NODES,
        &[pg_uuid(conv).into(), low.into(), high.into(), singles.into()],
        |c| Ok::<_, std::convert::Infallible>(Some((c.next::<i64>().unwrap_or(0), (c.next::<i64>(), c.text_or(""))))),
    )
    .ok()?;
    let nodes: HashMap<i64, (Option<i64>, String)> = rows.into_iter().collect();
    let text = |id: Option<i64>| id.and_then(|id| nodes.get(&id)).map(|(_, t)| t.clone());
    let mut elements: Vec<String> = p.lead.iter().map(|id| text(Some(*id))).collect::<Option<_>>()?;
    elements.extend(walk(&nodes, p.chain, p.chain_length)?.into_iter().map(|(_, t)| t));
    pgprompt_core::seal::apply(&mut elements, &p.patches)?;
    Some(Body {
        head: text(p.head)?,
        elements,
        tail: text(p.tail)?,
    })
}

static PREVIOUS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "SELECT chain, chain_length, chain_low FROM prompt.seals \
         WHERE conversation_id = $1 AND pruned_at IS NULL AND chain IS NOT NULL \
         ORDER BY (frozen->>'answerer_id' = $2 AND frozen->>'wire' = $3) DESC, sealed_at DESC, turn_id LIMIT 1",
        &[INT8OID, INT4OID, INT8OID],
    )
});

static DIGESTS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "SELECT id, parent, digest FROM prompt.seal_nodes WHERE conversation_id = $1 AND id BETWEEN $2 AND $3",
        &[INT8OID, INT8OID, BYTEAOID],
    )
});

/// The chain of the conversation's seal most like the new one (same answerer and wire,
/// newest): its node ids and digests, oldest first.
fn previous_chain(client: &SpiClient<'_>, conv: Uuid, frozen: &Frozen) -> Vec<(i64, Vec<u8>)> {
    let prev = run(
        client,
        &PREVIOUS,
        &[
            pg_uuid(conv).into(),
            frozen.answerer_id.to_string().into(),
            frozen.wire.as_str().to_string().into(),
        ],
        |c| Ok::<_, std::convert::Infallible>(Some((c.next::<i64>(), c.next::<i32>().unwrap_or(0), c.next::<i64>()))),
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
                c.next::<i64>().unwrap_or(0),
                (c.next::<i64>(), c.next::<Vec<u8>>().unwrap_or_default()),
            )))
        },
    )
    .unwrap_or_default();
    let nodes: HashMap<i64, (Option<i64>, Vec<u8>)> = rows.into_iter().collect();
    walk(&nodes, Some(chain), length).unwrap_or_default()
}

static MAX_NODE: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "SELECT coalesce(max(id), 0) FROM prompt.seal_nodes WHERE conversation_id = $1",
        &[INT8OID],
    )
});

static FIND_NODE: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "SELECT id FROM prompt.seal_nodes WHERE conversation_id = $1 AND parent IS NOT DISTINCT FROM $2 AND digest = $3",
        &[INT8OID],
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
    /// The node of `text` under `parent`: an existing one, or a new one queued.
    /// `fresh_parent`: the parent was queued here, so no existing node can match.
    fn node(&mut self, parent: Option<i64>, text: &str, fresh_parent: bool) -> (i64, bool) {
        let d = digest(text).to_vec();
        if !fresh_parent {
            if let Some(id) = first::<i64>(
                self.client,
                &FIND_NODE,
                &[pg_uuid(self.conv).into(), nullable(parent), d.clone().into()],
            ) {
                return (id, false);
            }
        }
        if let Some(i) = self
            .digests
            .iter()
            .zip(&self.parents)
            .position(|(x, p)| *x == d && *p == parent)
        {
            return (self.ids[i], true);
        }
        self.next_id += 1;
        self.ids.push(self.next_id);
        self.parents.push(parent);
        self.digests.push(d);
        self.bodies.push(text.to_string());
        (self.next_id, true)
    }

    fn flush(self) {
        if self.ids.is_empty() {
            return;
        }
        spi(self.client.update(
            "INSERT INTO prompt.seal_nodes (conversation_id, id, parent, digest, body) \
             SELECT $1, * FROM unnest($2::int8[], $3::int8[], $4::bytea[], $5::text[])",
            None,
            &[
                pg_uuid(self.conv).into(),
                self.ids.into(),
                self.parents.into(),
                self.digests.into(),
                self.bodies.into(),
            ],
        ));
    }
}

/// Writes a fresh compile's seal. False when another session sealed the turn first
/// (then nothing is written).
pub fn write(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, draft: &SealDraft) -> bool {
    if !claim(client, conv, turn, draft) {
        return false;
    }
    let stored = Stored {
        head: &draft.body.head,
        elements: &draft.plain_elements,
        tail: &draft.body.tail,
        patches: &draft.patches,
        text: &draft.body.text(),
    };
    store(client, conv, turn, &stored, &draft.frozen, None);
    true
}

/// A body as storage keeps it: its elements unmarked, the edits that mark them, and
/// its bytes (for the digest).
pub struct Stored<'a> {
    pub head: &'a str,
    pub elements: &'a [String],
    pub tail: &'a str,
    pub patches: &'a [Patch],
    pub text: &'a str,
}

/// Marks the turn sealed, with what its seal froze on the turn itself; false when it
/// already was.
fn claim(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, draft: &SealDraft) -> bool {
    let claimed = spi(client.update(
        "UPDATE prompt.turns SET sealed_at = now(), sealed_preface = $3::jsonb, sealed_catalog = $4, \
         sealed_mechanism = $5, sealed_versions = $6::jsonb \
         WHERE conversation_id = $1 AND id = $2 AND sealed_at IS NULL",
        None,
        &[
            pg_uuid(conv).into(),
            pg_uuid(turn).into(),
            pgprompt_core::fields::preface_json(&draft.preface).into(),
            nullable(draft.catalog.clone()),
            draft.frozen.mechanism.as_str().to_string().into(),
            draft.versions.clone().into(),
        ],
    ));
    claimed.len() == 1
}

/// Stores a seal's body (sharing its elements with the conversation's previous seal)
/// and what it froze. `sealed_at` keeps an older seal's time (a converted one).
pub fn store(
    client: &mut SpiClient<'_>,
    conv: Uuid,
    turn: Uuid,
    body: &Stored<'_>,
    frozen: &Frozen,
    sealed_at: Option<pgrx::datum::TimestampWithTimeZone>,
) {
    // One writer of a conversation's nodes at a time (the key the turns trigger numbers with).
    spi(client.update(
        "SELECT pg_advisory_xact_lock(hashtextextended($1::text, 20261130))",
        None,
        &[pg_uuid(conv).into()],
    ));
    let prev = previous_chain(client, conv, frozen);
    let digests: Vec<[u8; 32]> = body.elements.iter().map(|e| digest(e)).collect();
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
    let head = w.node(None, body.head, false).0;
    let tail = w.node(None, body.tail, false).0;
    let lead: Vec<i64> = body.elements[..plan.lead]
        .iter()
        .map(|e| w.node(None, e, false).0)
        .collect();
    let reused = &prev[plan.at..plan.at + plan.len];
    let mut parent = reused.last().map(|(id, _)| *id);
    let mut chain_ids: Vec<i64> = reused.iter().map(|(id, _)| *id).collect();
    let mut fresh = false;
    for e in &body.elements[plan.lead + plan.len..] {
        let (id, queued) = w.node(parent, e, fresh);
        fresh = queued;
        parent = Some(id);
        chain_ids.push(id);
    }
    w.flush();
    let text = body.text;
    let frozen = serde_json::to_string(frozen).unwrap_or_else(|_| "{}".into());
    let patches = serde_json::to_string(body.patches).unwrap_or_else(|_| "[]".into());
    spi(client.update(
        "INSERT INTO prompt.seals (conversation_id, turn_id, frozen, head, lead, chain, chain_length, chain_low, tail, digest, bytes, sealed_at, patches) \
         VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9, $10, $11, coalesce($12, now()), $13::jsonb)",
        None,
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
            digest(text).to_vec().into(),
            i32::try_from(text.len()).unwrap_or(i32::MAX).into(),
            nullable(sealed_at),
            patches.into(),
        ],
    ));
}

static STORED: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "SELECT s.pruned_at IS NOT NULL, s.patches::text, s.head, s.lead, s.chain, s.chain_length, s.chain_low, s.tail \
         FROM prompt.seals s WHERE s.conversation_id = $1 AND s.turn_id = $2",
        &[BOOLOID, TEXTOID, INT8OID, INT8ARRAYOID, INT8OID, INT4OID, INT8OID, INT8OID],
    )
});

static STORED_NO_ROUNDS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        format!(
            "{} AND NOT EXISTS (SELECT 1 FROM prompt.rounds r WHERE r.conversation_id = s.conversation_id \
             AND r.turn_id = s.turn_id)",
            STORED.sql
        ),
        &[
            BOOLOID,
            TEXTOID,
            INT8OID,
            INT8ARRAYOID,
            INT8OID,
            INT4OID,
            INT8OID,
            INT8OID,
        ],
    )
});

/// The body of a sealed turn no round has been written to since, straight from storage
/// (no context loaded): what `compile_turn` returns again and again. `Ok(None)` when the
/// turn is not sealed, has rounds, or was pruned (the compile then says why).
pub fn stored_body(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Result<Option<Body>> {
    Ok(read_stored(client, conv, turn, &STORED_NO_ROUNDS)?.and_then(|b| b.ok()))
}

/// The body a turn's seal stored, rounds or not. `Ok(None)` when it is not sealed;
/// `sealed_request_pruned` when its body was dropped.
pub fn sealed_body(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Result<Option<Body>> {
    match read_stored(client, conv, turn, &STORED)? {
        None => super::upgrade::pending(client, conv, turn).map_or(Ok(None), Err),
        Some(Ok(body)) => Ok(Some(body)),
        Some(Err(())) => Err(Error::new(
            Code::SealedRequestPruned,
            format!("turn {turn} of conversation {conv} was sealed, and prune_seals dropped its body"),
        )
        .detail("Its digest, size and estimate are kept in prompt.seals.")),
    }
}

/// A seal's stored body: `Err(())` when it was pruned, `None` when there is no seal
/// (or, for `STORED_NO_ROUNDS`, when rounds were written).
fn read_stored(
    client: &SpiClient<'_>,
    conv: Uuid,
    turn: Uuid,
    query: &Query,
) -> Result<Option<std::result::Result<Body, ()>>> {
    let rows = run(client, query, &[pg_uuid(conv).into(), pg_uuid(turn).into()], |c| {
        let pruned = c.bool();
        Ok::<_, Error>(Some((
            pruned,
            Pointers {
                patches: serde_json::from_str(&c.text_or("[]")).unwrap_or_default(),
                head: c.next::<i64>(),
                lead: c
                    .next::<Vec<Option<i64>>>()
                    .unwrap_or_default()
                    .into_iter()
                    .flatten()
                    .collect(),
                chain: c.next::<i64>(),
                chain_length: c.next::<i32>().unwrap_or(0),
                chain_low: c.next::<i64>(),
                tail: c.next::<i64>(),
            },
        )))
    })?;
    let t = pgprompt_core::rows::Turn::new(turn, 0, pgprompt_core::rows::TurnKind::Reply);
    match rows.into_iter().next() {
        None => Ok(None),
        Some((true, _)) => Ok(Some(Err(()))),
        Some((false, p)) => match read_body(client, conv, &p) {
            Some(b) => Ok(Some(Ok(b))),
            None => Err(broken(&t, "lost a node")),
        },
    }
}

/// Marks the rounds up to `n` as sent: from now on they never change.
pub fn mark_sent(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, n: i32) {
    spi(client.update(
        "UPDATE prompt.rounds SET sent_at = now() WHERE conversation_id = $1 AND turn_id = $2 \
         AND n <= $3 AND sent_at IS NULL",
        None,
        &[pg_uuid(conv).into(), pg_uuid(turn).into(), n.into()],
    ));
}

/// Drops the bodies of the conversation's seals older than `before` (keeping digest,
/// size and estimate), then every node no remaining body uses. Returns how many seals
/// it pruned.
pub fn prune(client: &mut SpiClient<'_>, conv: Uuid, before: DatumWithOid<'_>) -> i64 {
    let pruned = spi(client.update(
        "UPDATE prompt.seals SET head = NULL, lead = '{}', chain = NULL, chain_length = 0, chain_low = NULL, \
         tail = NULL, patches = '[]', pruned_at = now() WHERE conversation_id = $1 AND sealed_at < $2 AND pruned_at IS NULL",
        None,
        &[pg_uuid(conv).into(), before],
    ))
    .len() as i64;
    static LIVE: LazyLock<Query> = LazyLock::new(|| {
        Query::new(
            "SELECT head, tail, lead, chain, chain_length FROM prompt.seals \
             WHERE conversation_id = $1 AND pruned_at IS NULL",
            &[INT8OID, INT8OID, INT8ARRAYOID, INT8OID, INT4OID],
        )
    });
    static ALL: LazyLock<Query> = LazyLock::new(|| {
        Query::new(
            "SELECT id, parent FROM prompt.seal_nodes WHERE conversation_id = $1",
            &[INT8OID, INT8OID],
        )
    });
    let live = run(client, &LIVE, &[pg_uuid(conv).into()], |c| {
        Ok::<_, std::convert::Infallible>(Some((
            c.next::<i64>(),
            c.next::<i64>(),
            c.next::<Vec<Option<i64>>>().unwrap_or_default(),
            c.next::<i64>(),
            c.next::<i32>().unwrap_or(0),
        )))
    })
    .unwrap_or_default();
    let nodes: HashMap<i64, (Option<i64>, ())> = run(client, &ALL, &[pg_uuid(conv).into()], |c| {
        Ok::<_, std::convert::Infallible>(Some((c.next::<i64>().unwrap_or(0), (c.next::<i64>(), ()))))
    })
    .unwrap_or_default()
    .into_iter()
    .collect();
    let mut keep: HashSet<i64> = HashSet::new();
    for (head, tail, lead, chain, length) in live {
        keep.extend(head.into_iter().chain(tail).chain(lead.into_iter().flatten()));
        keep.extend(
            walk(&nodes, chain, length)
                .unwrap_or_default()
                .into_iter()
                .map(|(id, _)| id),
        );
    }
    let dead: Vec<i64> = nodes.keys().filter(|id| !keep.contains(id)).copied().collect();
    if !dead.is_empty() {
        spi(client.update(
            "DELETE FROM prompt.seal_nodes WHERE conversation_id = $1 AND id = ANY($2)",
            None,
            &[pg_uuid(conv).into(), dead.into()],
        ));
    }
    pruned
}
