//! Seal storage (docs/design.md, "Seals"): writing a fresh compile's seal with its body
//! shared against the previous seal's chain, reading a body back byte for byte, marking
//! the rounds a continuation sent, and pruning old bodies on purpose.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::LazyLock;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys::{BOOLOID, BYTEAOID, INT4OID, INT8ARRAYOID, INT8OID, TEXTOID, UUIDOID};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use super::jsonb::JsonbOut;
use super::spi::{first, nullable, pg_uuid, run, run_write, spi, Cols, Column, Query};
use pgprompt_core::Body;
use pgprompt_core::Columns as _;
use pgprompt_core::{Code, Error, Result};
use pgprompt_core::{Frozen, Sealed};
use pgprompt_core::{Output, SealDraft};
use pgprompt_core::{SealNode, SealNodes, SealPointers};

/// The columns [`pointers`] takes, of `prompt.seals s`.
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

/// A seal row's pointers to its body, as the core checks them: a NULL where a body needs
/// a value reads as what the checks refuse (a negative size or length, no patch list, an
/// empty digest), so the seal is `data_corrupted`, named with its turn, never read with a
/// default.
fn pointers(c: &Cols<'_>) -> SealPointers {
    SealPointers {
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

/// The digest of what a request carried of round `r` (an alias of `prompt.rounds`):
/// `rounds.sent_digest`, written when the round is first sent and checked on every read.
/// Spelled here, in the statements that write and check it; no SQL function computes it
/// for a caller (README, "Security").
pub(crate) fn round_digest(r: &str) -> String {
    round_digest_clearing(r, &format!("{r}.cleared"))
}

/// [`round_digest`] with `cleared` for the round's `cleared` column: what a request
/// cleared is covered too, when it cleared anything (a round that cleared nothing keeps
/// the digest 0.5 wrote).
fn round_digest_clearing(r: &str, cleared: &str) -> String {
    format!(
        "sha256(convert_to(CASE WHEN {cleared} IS NULL \
         THEN jsonb_build_array({r}.assistant, {r}.results, {r}.steers, {r}.aborted) \
         ELSE jsonb_build_array({r}.assistant, {r}.results, {r}.steers, {r}.aborted, {cleared}) END::text, 'UTF8'))"
    )
}

/// The digest of what a seal sent of turn `t` (an alias of `prompt.turns`): the columns
/// history renders it from, its time in UTC (a session's time zone changes no byte).
/// `turns.sent_digest`, written by the seal that first sent the turn, checked by
/// `verify_seals`.
pub(crate) fn turn_digest(t: &str) -> String {
    let columns = [
        "kind",
        "role",
        "author_id",
        "answerer_id",
        "poster_id",
        "content",
        "prompt",
        "origin",
        "sender_conversation_id",
        "mode",
        "inline",
        "variables",
        "input",
        "tools",
        "callables",
        "model",
        "history",
        "memory_user_id",
        "summary",
        "summary_round",
        "request_options",
        "seq",
        "sealed_preface",
    ];
    let listed: Vec<String> = columns.iter().map(|c| format!("{t}.{c}")).collect();
    format!(
        "sha256(convert_to(jsonb_build_array({}, {t}.created_at AT TIME ZONE 'UTC')::text, 'UTF8'))",
        listed.join(", ")
    )
}

/// What a compile that seals read of its own conversation's history that no seal marked
/// sent yet, each turn and round with the digest of what it read (`load::SpiHistory::marking`):
/// the seal marks them sent where they still read so ([`write`]), so a row edited between
/// the compile's read and its seal is not marked with what the seal did not send.
#[derive(Default)]
pub struct Unsent {
    pub turns: Vec<(pgrx::Uuid, Vec<u8>)>,
    pub rounds: Vec<(pgrx::Uuid, i32, Vec<u8>)>,
}

/// The tables a seal's write touches (its lock, the turn's seal columns and the sent
/// marks, storage): no code pgprompt did not create may stand on them
/// ([`super::guard::refuse_foreign_code`]).
const SEALING: [&std::ffi::CStr; 5] = [c"conversations", c"turns", c"rounds", c"seals", c"seal_nodes"];

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
pub fn load(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Result<Sealed> {
    let rows = run(client, &SEAL, &[pg_uuid(conv).into(), pg_uuid(turn).into()], |c| {
        Ok::<_, Error>(Some((
            c.need_text("frozen")?,
            c.get::<Vec<u8>>("frozen_digest"),
            pointers(c),
        )))
    })?;
    let Some((frozen, frozen_digest, p)) = rows.into_iter().next() else {
        return Err(pending(client, conv, turn).unwrap_or_else(|| {
            Error::new(
                Code::DataCorrupted,
                format!("turn {turn} of conversation {conv} is sealed, and its seal is missing from prompt.seals"),
            )
            .hint("Seals are written by compile_turn and kept by pg_dump; SELECT * FROM prompt.verify_seals(conversation_id) lists what is missing.")
        }));
    };
    let frozen =
        pgprompt_core::read_frozen(&frozen, frozen_digest.as_deref()).map_err(|why| corrupted(conv, turn, &why))?;
    let body = if p.pruned {
        None
    } else {
        Some(read_verified(client, conv, turn, &p)?)
    };
    Ok(Sealed { frozen, body })
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

/// A sealed body read back from its nodes and checked against its size and digest (the
/// core's `read_body`).
fn read_verified(client: &SpiClient<'_>, conv: Uuid, turn: Uuid, p: &SealPointers) -> Result<Body> {
    pgprompt_core::read_sealed_body(&mut SpiNodes { client, conv }, p).map_err(|why| corrupted(conv, turn, why))
}

/// A seal row's version, what a backend keeps a seal under: the row's `xmin` and `ctid`
/// (any UPDATE makes a new one, even in the transaction that wrote the row), the table's
/// file (a rewrite, `VACUUM FULL` or `CLUSTER`, moves rows to ctids others held) and the
/// row's digests (a row that comes back at the same place after a wraparound of
/// transaction ids).
const VERSION: &str = "pg_relation_filenode(s.tableoid)::text || ':' || s.xmin::text || s.ctid::text || ':' \
                       || md5(coalesce(s.frozen_digest, '\\x'::bytea) || coalesce(s.pieces_digest, '\\x'::bytea))";

static SEALS_OF: LazyLock<Query> = LazyLock::new(|| {
    let mut columns = vec![
        ("turn_id", UUIDOID),
        ("version", TEXTOID),
        ("frozen", TEXTOID),
        ("frozen_digest", BYTEAOID),
        ("pieces_digest", BYTEAOID),
        ("layout", BYTEAOID),
    ];
    columns.extend(POINTER_COLUMNS);
    // A frozen record the backend keeps under the row's version (`$3`) is not sent.
    Query::new(
        "a seal row",
        format!(
            "SELECT s.turn_id, v.version, \
                    CASE WHEN v.version = k.version THEN NULL ELSE s.frozen::text END AS frozen, \
                    s.frozen_digest, s.pieces_digest, s.layout, {POINTERS} \
             FROM unnest($2::uuid[], $3::text[]) AS k(turn_id, version) \
             JOIN prompt.seals s ON s.conversation_id = $1 AND s.turn_id = k.turn_id \
             CROSS JOIN LATERAL (SELECT {VERSION} AS version) v"
        ),
        &columns,
    )
});

/// The row versions of seals a backend keeps whole: one that reads as kept sends nothing
/// else (a join that carried the other columns for the rows not kept cost three times
/// this statement, measured 2026-12-06).
static VERSIONS_OF: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a seal row's version",
        format!(
            "SELECT s.turn_id, {VERSION} AS version FROM prompt.seals s \
             WHERE s.conversation_id = $1 AND s.turn_id = ANY($2::uuid[])"
        ),
        &[("turn_id", UUIDOID), ("version", TEXTOID)],
    )
});

/// A sealed first request as the cache report reads it.
pub enum First {
    /// Its cache layout, as stored when it was sent.
    Laid(pgprompt_core::CacheLaid),
    /// Its body in pieces (`None`: pruned), read back and checked against its digests.
    Pieces(Option<pgprompt_core::CachePieces>),
}

/// The sealed first requests a backend read for the cache model, kept for its later reads
/// of the same seals (`explain_turn` again, `cache_report`): what each froze, and its cache
/// layout as read, with the element and frame blocks those layouts hold (the catalog the
/// next request reads its repeated elements from). A seal is kept under its row's
/// [`VERSION`] (any UPDATE of the row, of its digests, layout or pointers, makes a new
/// one, and so does a rewrite of the table): a row that reads otherwise is read again and checked as on a first read, and
/// one that reads so sends nothing but its version. Its nodes are not read again by the backend
/// that kept it: a node changed since shows in `verify_seals`, `compile_turn` and any
/// other backend's read. Scoped to the role that read it, and dropped whole past a bound
/// or when a read fails.
#[derive(Default)]
pub struct Kept {
    role: u32,
    seals: HashMap<(Uuid, Uuid), KeptSeal>,
    /// The elements of the layouts kept (each one's blocks, assembled once replayed).
    elements: usize,
    /// A read of seals is under way (set by [`sent_firsts`] until it succeeds): one that
    /// failed, by an error returned or raised, leaves it set, and what it put in the
    /// catalog before its checks failed is dropped ([`Kept::scoped`]).
    reading: bool,
    pub catalog: pgprompt_core::CacheCatalog,
}

thread_local! {
    /// The sealed first requests the cache model read, kept for the backend's later reads.
    static KEPT: std::cell::RefCell<Kept> = std::cell::RefCell::new(Kept::default());
}

/// Runs `f` with what the backend kept of the seals the cache model read, scoped to the
/// current role.
pub fn with_kept<T>(f: impl FnOnce(&mut Kept) -> T) -> T {
    KEPT.with(|k| {
        let mut kept = k.borrow_mut();
        kept.scoped(super::session::role_scope());
        let out = f(&mut kept);
        kept.scoped(super::session::role_scope());
        out
    })
}

/// One seal as [`Kept`] holds it.
struct KeptSeal {
    version: String,
    frozen: Rc<Frozen>,
    laid: Option<pgprompt_core::CacheLaid>,
}

/// The seals a backend keeps at most and the elements of their layouts (past either, all
/// is read again), and the blocks its catalog holds (past it, the catalog alone starts
/// again): about ten megabytes at most.
const KEPT_SEALS: usize = 4096;
const KEPT_ELEMENTS: usize = 100_000;
const KEPT_BLOCKS: usize = 131_072;

impl Kept {
    /// Empties what another role read, what a read that did not finish left, or what grew
    /// past the bounds (checked before and after each read); a catalog past its bound is
    /// emptied alone (what it holds is read or cut again from what the seals kept).
    fn scoped(&mut self, role: u32) {
        let full = self.seals.len() > KEPT_SEALS || self.elements > KEPT_ELEMENTS;
        if self.role != role || self.reading || full {
            *self = Kept {
                role,
                ..Kept::default()
            };
        }
        if self.catalog.pieces() > KEPT_BLOCKS {
            self.catalog = pgprompt_core::CacheCatalog::default();
        }
    }
}

/// The sealed first requests of `turns` as they were sent: what each seal froze, and its
/// cache layout as stored (SPEC §16.5: never its text), or its body in pieces for a turn in
/// `texts_for` (what its continuations repeat is read as the same pieces) or one whose
/// layout is not there (a seal written before 0.6). Each is checked against its pieces
/// digest, a body read also against its nodes' digests. Four statements at most whatever
/// their number, the nodes they share read once (`cache_report`, `explain_turn`'s
/// prediction). A seal `kept` whole whose row reads at the version kept is taken from
/// there (one statement reads the versions): nothing else of its row sent, its nodes not
/// read; one whose frozen record alone is kept is read without that record.
pub fn sent_firsts(
    client: &SpiClient<'_>,
    conv: Uuid,
    turns: &[Uuid],
    texts_for: &std::collections::HashSet<Uuid>,
    kept: &mut Kept,
) -> Result<HashMap<Uuid, (Rc<Frozen>, First)>> {
    kept.reading = true;
    let read = read_firsts(client, conv, turns, texts_for, kept)?;
    kept.reading = false;
    Ok(read)
}

fn read_firsts(
    client: &SpiClient<'_>,
    conv: Uuid,
    turns: &[Uuid],
    texts_for: &std::collections::HashSet<Uuid>,
    kept: &mut Kept,
) -> Result<HashMap<Uuid, (Rc<Frozen>, First)>> {
    let mut out = HashMap::with_capacity(turns.len());
    let mut seals = Vec::with_capacity(turns.len());
    let unkept = kept_whole(client, conv, turns, texts_for, kept, &mut out)?;
    for row in seal_rows(client, conv, &unkept, kept)? {
        let held = kept.seals.get(&(conv, row.turn));
        let frozen = match (&row.frozen, held) {
            (Some(text), _) => Rc::new(
                pgprompt_core::read_frozen(text, row.frozen_digest.as_deref())
                    .map_err(|why| corrupted(conv, row.turn, &why))?,
            ),
            // Not sent: the row is the version kept.
            (None, Some(k)) if k.version == row.version => k.frozen.clone(),
            (None, _) => return Err(corrupted(conv, row.turn, "has a frozen record that cannot be read")),
        };
        seals.push((row, frozen));
    }
    let mut nodes = SpiNodes { client, conv };
    let layouts: Vec<pgprompt_core::SealLayout<'_>> = seals
        .iter()
        .map(|(row, frozen)| pgprompt_core::SealLayout {
            pointers: &row.pointers,
            pieces_digest: row.pieces_digest.as_deref(),
            layout: row.layout.as_deref().filter(|_| !texts_for.contains(&row.turn)),
            frozen,
        })
        .collect();
    let mut laid = pgprompt_core::read_sealed_layouts(&mut nodes, &layouts, &mut kept.catalog)?
        .map_err(|(i, why)| corrupted(conv, seals[i].0.turn, why))?;
    // What no layout gave is read from the text.
    let rest: Vec<usize> = (0..seals.len())
        .filter(|&i| laid[i].is_none() && !seals[i].0.pointers.pruned)
        .collect();
    let stored: Vec<(&SealPointers, Option<&[u8]>)> = rest
        .iter()
        .map(|&i| (&seals[i].0.pointers, seals[i].0.pieces_digest.as_deref()))
        .collect();
    let mut pieces = match stored.is_empty() {
        true => Vec::new(),
        false => pgprompt_core::read_sealed_pieces(&mut nodes, &stored)?
            .map_err(|(j, why)| corrupted(conv, seals[rest[j]].0.turn, why))?,
    }
    .into_iter();
    let mut read: HashMap<usize, Option<pgprompt_core::CachePieces>> =
        rest.iter().map(|&i| (i, pieces.next().flatten())).collect();
    for (i, (row, frozen)) in seals.into_iter().enumerate() {
        // As sent: a stateful turn's chained form.
        let first = match laid[i].take() {
            Some(l) => First::Laid(l),
            None => First::Pieces(match read.remove(&i).flatten() {
                Some(p) => Some(
                    pgprompt_core::sent_pieces(&frozen, p)
                        .map_err(|_| corrupted(conv, row.turn, "has a frame that does not read as one JSON object"))?,
                ),
                None => None,
            }),
        };
        let first = kept.keep(conv, &row, &frozen, first);
        out.insert(row.turn, (frozen, first));
    }
    Ok(out)
}

/// Takes from `kept` each seal of `turns` it holds whole (its layout, for a turn not in
/// `texts_for`) whose row reads at the version kept, into `out`; returns the others.
/// Nothing is read where the backend holds none of them whole.
fn kept_whole(
    client: &SpiClient<'_>,
    conv: Uuid,
    turns: &[Uuid],
    texts_for: &std::collections::HashSet<Uuid>,
    kept: &Kept,
    out: &mut HashMap<Uuid, (Rc<Frozen>, First)>,
) -> Result<Vec<Uuid>> {
    let whole = |t: &Uuid| match kept.seals.get(&(conv, *t)) {
        Some(k @ KeptSeal { laid: Some(_), .. }) if !texts_for.contains(t) => Some(k),
        _ => None,
    };
    let candidates: Vec<pgrx::Uuid> = turns
        .iter()
        .filter(|t| whole(t).is_some())
        .copied()
        .map(pg_uuid)
        .collect();
    if candidates.is_empty() {
        return Ok(turns.to_vec());
    }
    let versions = run(client, &VERSIONS_OF, &[pg_uuid(conv).into(), candidates.into()], |c| {
        Ok::<_, Error>(Some((c.need_uuid("turn_id")?, c.need_text("version")?)))
    })?;
    for (turn, version) in versions {
        if let Some(KeptSeal {
            version: v,
            frozen,
            laid: Some(laid),
        }) = whole(&turn)
        {
            if *v == version {
                out.insert(turn, (frozen.clone(), First::Laid(laid.clone())));
            }
        }
    }
    Ok(turns.iter().filter(|t| !out.contains_key(t)).copied().collect())
}

/// A row of [`SEALS_OF`]: `frozen` is `None` where the backend keeps the row's frozen
/// record under its version.
struct SealRow {
    turn: Uuid,
    /// The row's [`VERSION`].
    version: String,
    frozen: Option<String>,
    frozen_digest: Option<Vec<u8>>,
    pointers: SealPointers,
    pieces_digest: Option<Vec<u8>>,
    layout: Option<Vec<u8>>,
}

/// The seal rows of `turns`, each frozen record left out where `kept` holds it under the
/// row's version.
fn seal_rows(client: &SpiClient<'_>, conv: Uuid, turns: &[Uuid], kept: &Kept) -> Result<Vec<SealRow>> {
    if turns.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<pgrx::Uuid> = turns.iter().copied().map(pg_uuid).collect();
    let versions: Vec<Option<String>> = turns
        .iter()
        .map(|t| kept.seals.get(&(conv, *t)).map(|k| k.version.clone()))
        .collect();
    let args = [pg_uuid(conv).into(), ids.into(), versions.into()];
    run(client, &SEALS_OF, &args, |c| {
        Ok::<_, Error>(Some(SealRow {
            turn: c.need_uuid("turn_id")?,
            version: c.get::<String>("version").unwrap_or_default(),
            frozen: c.get::<String>("frozen"),
            frozen_digest: c.get::<Vec<u8>>("frozen_digest"),
            pointers: pointers(c),
            pieces_digest: c.get::<Vec<u8>>("pieces_digest"),
            layout: c.get::<Vec<u8>>("layout"),
        }))
    })
}

impl Kept {
    /// Keeps a seal read afresh (one without a frozen digest is never kept), its layout
    /// where one was read and the bounds leave room, remembering its blocks once
    /// assembled; a seal read from its text leaves a layout kept before as it was. Returns
    /// `first`, the kept layout's twin where one is kept.
    fn keep(&mut self, conv: Uuid, row: &SealRow, frozen: &Rc<Frozen>, first: First) -> First {
        let room =
            |l: &pgprompt_core::CacheLaid| self.seals.len() < KEPT_SEALS && self.elements + l.len() <= KEPT_ELEMENTS;
        let laid = match &first {
            First::Laid(l) if room(l) => Some(l.remembered()),
            _ => None,
        };
        if row.frozen_digest.is_none() {
            return first;
        }
        if laid.is_none() && self.seals.contains_key(&(conv, row.turn)) {
            return first;
        }
        self.elements += laid.as_ref().map_or(0, |l| l.len());
        let first = match &laid {
            Some(l) => First::Laid(l.clone()),
            None => first,
        };
        let seal = KeptSeal {
            version: row.version.clone(),
            frozen: frozen.clone(),
            laid,
        };
        if let Some(old) = self.seals.insert((conv, row.turn), seal) {
            self.elements = self.elements.saturating_sub(old.laid.as_ref().map_or(0, |l| l.len()));
        }
        first
    }
}

/// A sealed first request read back both ways the cache report reads it, each checked:
/// its pieces (each node against its digest, the pieces against the seal's) and its
/// stored cache layout, which must read as its text does (`verify_seals`).
fn sent_as_stored(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Result<()> {
    let as_text = std::collections::HashSet::from([turn]);
    // Read afresh, both: nothing a backend kept stands in for a row.
    let mut texts = sent_firsts(client, conv, &[turn], &as_text, &mut Kept::default())?;
    let mut laid = sent_firsts(client, conv, &[turn], &Default::default(), &mut Kept::default())?;
    if let (Some((frozen, First::Pieces(Some(pieces)))), Some((_, First::Laid(layout)))) =
        (texts.remove(&turn), laid.remove(&turn))
    {
        let same = super::session::with_memo(|memo| {
            pgprompt_core::cache_layout_matches(frozen.wire, frozen.model.as_ref(), &pieces, &layout, memo)
        });
        if !same {
            return Err(corrupted(
                conv,
                turn,
                "has a cache layout that does not read as its text",
            ));
        }
    }
    Ok(())
}

/// One conversation's seal nodes, read over SPI as the core asks (`SealNodes`).
struct SpiNodes<'a, 'c> {
    client: &'a SpiClient<'c>,
    conv: Uuid,
}

impl SealNodes for SpiNodes<'_, '_> {
    fn read(&mut self, low: i64, high: i64, singles: &[i64], texts: bool) -> Result<Vec<SealNode>> {
        let args = [
            pg_uuid(self.conv).into(),
            low.into(),
            high.into(),
            singles.to_vec().into(),
        ];
        run(self.client, if texts { &NODES } else { &DIGESTS }, &args, |c| {
            Ok::<_, Error>(Some(SealNode {
                id: c.need::<i64>("id")?,
                parent: c.get::<i64>("parent"),
                text: match texts {
                    true => Some(c.need_text("body")?),
                    false => None,
                },
                digest: c.get::<Vec<u8>>("digest").unwrap_or_default(),
                layout: None,
            }))
        })
    }

    fn layouts(&mut self, low: i64, high: i64, singles: &[i64]) -> Result<Vec<SealNode>> {
        let args = [
            pg_uuid(self.conv).into(),
            low.into(),
            high.into(),
            singles.to_vec().into(),
        ];
        run(self.client, &LAYOUTS, &args, |c| {
            Ok::<_, Error>(Some(SealNode {
                id: c.need::<i64>("id")?,
                parent: c.get::<i64>("parent"),
                text: None,
                digest: c.get::<Vec<u8>>("digest").unwrap_or_default(),
                layout: c.get::<Vec<u8>>("layout"),
            }))
        })
    }

    fn previous(&mut self, like: &serde_json::Value) -> Result<Option<(i64, i32, i64)>> {
        let args = [pg_uuid(self.conv).into(), JsonbOut(like.clone()).into()];
        let rows = run(self.client, &PREVIOUS, &args, |c| {
            Ok::<_, Error>(Some((
                c.get::<i64>("chain"),
                c.get::<i32>("chain_length").unwrap_or(0),
                c.get::<i64>("chain_low"),
            )))
        })?;
        Ok(match rows.into_iter().next() {
            Some((Some(chain), length, Some(low))) => Some((chain, length, low)),
            _ => None,
        })
    }

    fn find(&mut self, parent: Option<i64>, digest: &[u8]) -> Result<Option<(i64, String)>> {
        let args = [pg_uuid(self.conv).into(), nullable(parent), digest.to_vec().into()];
        let found = run(self.client, &FIND_NODE, &args, |c| {
            Ok::<_, Error>(Some((c.need::<i64>("id")?, c.need_text("body")?)))
        })?;
        Ok(found.into_iter().next())
    }

    fn newest(&mut self) -> Result<i64> {
        Ok(first::<i64>(self.client, &MAX_NODE, &[pg_uuid(self.conv).into()]).unwrap_or(0))
    }
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
        "SELECT id, parent, digest FROM prompt.seal_nodes WHERE conversation_id = $1 \
         AND (id BETWEEN $2 AND $3 OR id = ANY($4))",
        &[("id", INT8OID), ("parent", INT8OID), ("digest", BYTEAOID)],
    )
});

static LAYOUTS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a seal node's layout",
        "SELECT id, parent, digest, layout FROM prompt.seal_nodes WHERE conversation_id = $1 \
         AND (id BETWEEN $2 AND $3 OR id = ANY($4))",
        &[
            ("id", INT8OID),
            ("parent", INT8OID),
            ("digest", BYTEAOID),
            ("layout", BYTEAOID),
        ],
    )
});

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
pub fn write(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, out: &Output, unsent: &Unsent) -> Result<bool> {
    let Some((body, draft)) = out.sealed_body() else {
        return Ok(false);
    };
    super::guard::refuse_foreign_code(&SEALING);
    lock_storage(client, conv);
    // Sealing is pgprompt's own write of the turn's seal columns, of the marks of what it
    // sent and of seal storage.
    let _open = super::guard::Open::hold();
    if !claim(client, conv, turn, draft, unsent) {
        return Ok(false);
    }
    super::session::with_memo(|memo| store(client, conv, turn, body, draft, None, memo))?;
    Ok(true)
}

/// Marks the turn sealed, with what its seal froze on the turn itself, and marks sent what
/// the seal sends for the first time: the turns of the conversation's history the compile
/// read that no seal marked yet (or whose answer came since), and their rounds whose calls
/// have results (a round still waiting for them is not what a later request sends) — each
/// only where it still reads as the compile read it (`unsent`'s digests), so a row edited
/// in between is not marked with what the seal did not send. A round gets the digest alone:
/// `sent_at` stays its own turn's continuations' (what the cache report reads as requests
/// sent). False when the turn was sealed already (nothing is written).
fn claim(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, draft: &SealDraft, unsent: &Unsent) -> bool {
    const CLAIM: &str = "UPDATE prompt.turns SET sealed_at = now(), sealed_preface = $3::jsonb, sealed_catalog = $4, \
        sealed_mechanism = $5, sealed_versions = $6::jsonb \
        WHERE conversation_id = $1 AND id = $2 AND sealed_at IS NULL RETURNING sealed_at";
    let claimed = run_write(
        client,
        CLAIM,
        &[
            pg_uuid(conv).into(),
            pg_uuid(turn).into(),
            draft.preface.clone().into(),
            nullable(draft.catalog.clone()),
            draft.frozen.mechanism.as_str().to_string().into(),
            draft.versions.clone().into(),
        ],
    );
    let Some(sealed_at) = claimed
        .into_iter()
        .next()
        .and_then(|row| spi(row.get::<pgrx::datum::TimestampWithTimeZone>(1)))
    else {
        return false;
    };
    mark_read_sent(client, conv, unsent, sealed_at);
    true
}

/// A key of a round in the arrays [`mark_read_sent`] hands over: its turn and number as
/// text (`uuid::text || ':' || int4::text`, immutable, as Citus wants in an UPDATE).
const ROUND_KEY: &str = "(r.turn_id::text || ':' || r.n::text)";

/// Marks what a sealing compile read and sent for the first time (`unsent`), where it
/// still reads as the compile read it: the rows whose digest still matches are locked
/// (`FOR NO KEY UPDATE`, the lock the UPDATE takes) and then marked with that digest. The digest is compared in a SELECT and
/// written as a value: Citus refuses an UPDATE that calls a STABLE function (the digest's
/// `jsonb_build_array`) on a column ("STABLE functions used in UPDATE queries cannot be
/// called with column references"), where 0.6's first seal failed; a turn first sent now
/// takes the seal's time, `now`, as a value too (nor a STABLE function in a COALESCE).
/// Each digest is picked from the array inside a `coalesce` (with the column, NULL
/// there): Citus 13.2's deparser crashes on an UPDATE whose SET is an array subscript
/// (it takes it for an element assignment; a backend's segfault, seen on a worker).
fn mark_read_sent(client: &mut SpiClient<'_>, conv: Uuid, unsent: &Unsent, now: pgrx::datum::TimestampWithTimeZone) {
    static TURNS_READ: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT t.id FROM prompt.turns t WHERE t.conversation_id = $1 AND t.id = ANY($2::uuid[]) \
             AND t.sent_digest IS NULL AND {} = ($3::bytea[])[array_position($2::uuid[], t.id)] FOR NO KEY UPDATE",
            turn_digest("t")
        )
    });
    const MARK_TURNS: &str = "UPDATE prompt.turns t SET sent_at = coalesce(t.sent_at, $5), \
        sent_digest = coalesce(($3::bytea[])[array_position($2::uuid[], t.id)], t.sent_digest) \
        WHERE t.conversation_id = $1 AND t.id = ANY($4::uuid[]) AND t.sent_digest IS NULL";
    static ROUNDS_READ: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {ROUND_KEY} FROM prompt.rounds r WHERE r.conversation_id = $1 AND r.turn_id = ANY($2::uuid[]) \
             AND r.sent_digest IS NULL AND (r.results <> '[]' OR NOT r.assistant @> '[{{\"type\": \"tool_call\"}}]') \
             AND {} = ($4::bytea[])[array_position($3::text[], {ROUND_KEY})] FOR NO KEY UPDATE",
            round_digest("r")
        )
    });
    static MARK_ROUNDS: LazyLock<String> = LazyLock::new(|| {
        format!(
            "UPDATE prompt.rounds r SET sent_digest = coalesce(($3::bytea[])[array_position($2::text[], {ROUND_KEY})], r.sent_digest) \
             WHERE r.conversation_id = $1 AND r.turn_id = ANY($4::uuid[]) AND {ROUND_KEY} = ANY($5::text[]) \
             AND r.sent_digest IS NULL"
        )
    });
    if !unsent.turns.is_empty() {
        let (ids, digests): (Vec<pgrx::Uuid>, Vec<Vec<u8>>) = unsent.turns.iter().cloned().unzip();
        let args = [pg_uuid(conv).into(), ids.clone().into(), digests.clone().into()];
        let read: Vec<pgrx::Uuid> = run_write(client, &TURNS_READ, &args)
            .filter_map(|row| spi(row.get::<pgrx::Uuid>(1)))
            .collect();
        if !read.is_empty() {
            let args = [
                pg_uuid(conv).into(),
                ids.into(),
                digests.into(),
                read.into(),
                now.into(),
            ];
            run_write(client, MARK_TURNS, &args);
        }
    }
    if !unsent.rounds.is_empty() {
        let turns: Vec<pgrx::Uuid> = unsent.rounds.iter().map(|(t, _, _)| *t).collect();
        let keys: Vec<String> = unsent.rounds.iter().map(|(t, n, _)| format!("{t}:{n}")).collect();
        let digests: Vec<Vec<u8>> = unsent.rounds.iter().map(|(_, _, d)| d.clone()).collect();
        let args = [
            pg_uuid(conv).into(),
            turns.clone().into(),
            keys.clone().into(),
            digests.clone().into(),
        ];
        let read: Vec<String> = run_write(client, &ROUNDS_READ, &args)
            .filter_map(|row| spi(row.get::<String>(1)))
            .collect();
        if !read.is_empty() {
            let args = [
                pg_uuid(conv).into(),
                keys.into(),
                digests.into(),
                turns.into(),
                read.into(),
            ];
            run_write(client, &MARK_ROUNDS, &args);
        }
    }
}

/// Stores a seal's body, as sent (sharing its elements with the conversation's previous
/// seal), and what its draft froze. `sealed_at` keeps an older seal's time (a converted
/// one). The caller holds [`lock_storage`].
pub fn store(
    client: &mut SpiClient<'_>,
    conv: Uuid,
    turn: Uuid,
    body: &Body,
    draft: &SealDraft,
    sealed_at: Option<pgrx::datum::TimestampWithTimeZone>,
    memo: &mut pgprompt_core::Memo,
) -> Result<()> {
    let laid = pgprompt_core::lay_out_seal(&mut SpiNodes { client: &*client, conv }, conv, body, draft, memo)?;
    if !laid.nodes.is_empty() {
        let (mut ids, mut parents, mut digests, mut bodies, mut layouts) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for n in laid.nodes {
            ids.push(n.id);
            parents.push(n.parent);
            digests.push(n.digest);
            bodies.push(n.text.unwrap_or_default());
            layouts.push(n.layout);
        }
        run_write(
            client,
            "INSERT INTO prompt.seal_nodes (conversation_id, id, parent, digest, body, layout) \
             SELECT $1, * FROM unnest($2::int8[], $3::int8[], $4::bytea[], $5::text[], $6::bytea[])",
            &[
                pg_uuid(conv).into(),
                ids.into(),
                parents.into(),
                digests.into(),
                bodies.into(),
                layouts.into(),
            ],
        );
    }
    run_write(client, "INSERT INTO prompt.seals (conversation_id, turn_id, frozen, head, lead, chain, chain_length, chain_low, tail, digest, bytes, \
         sealed_at, patches, frozen_digest, pieces_digest, layout) \
         VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9, $10, $11, coalesce($12, now()), $13::jsonb, \
         sha256(convert_to($3::jsonb::text, 'UTF8')), $14, $15)",
        &[
            pg_uuid(conv).into(),
            pg_uuid(turn).into(),
            laid.frozen.into(),
            laid.head.into(),
            laid.lead.into(),
            nullable(laid.chain),
            laid.chain_length.into(),
            nullable(laid.chain_low),
            laid.tail.into(),
            laid.digest.into(),
            laid.bytes.into(),
            nullable(sealed_at),
            laid.patches.into(),
            laid.pieces_digest.into(),
            laid.layout.into(),
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
/// as the core names it: it sends the stored body's stateful form). The turn's row
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
pub(crate) struct StoredSeal(SealPointers);

impl StoredSeal {
    /// The pointers in a row carrying [`STORED_POINTERS`]: `None` where the join matched no
    /// seal (its digest, never NULL in a seal row, is NULL).
    pub(crate) fn read(c: &Cols<'_>) -> Option<StoredSeal> {
        c.get::<Vec<u8>>("digest").map(|_| StoredSeal(pointers(c)))
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
    /// not take the stored body; `stateful` is the part of a stateful seal's record, as the
    /// core names it.
    pub(crate) fn args(stateful: &serde_json::Value, wanted: bool) -> [DatumWithOid<'static>; 2] {
        [JsonbOut(stateful.clone()).into(), wanted.into()]
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
    let rows = run(client, &STORED, &args, |c| Ok::<_, Error>(Some(pointers(c))))?;
    match rows.into_iter().next() {
        None => Ok(None),
        Some(p) if p.pruned => Ok(Some(Err(()))),
        Some(p) => Ok(Some(Ok(read_verified(client, conv, turn, &p)?))),
    }
}

/// Marks the rounds up to `n` as sent, with the digest of what was sent and the estimate
/// of the request that carried them, and what that request cleared and its cache layout
/// on round `n` (`rounds.cleared`, `rounds.sent_layout`: `lay` makes it from the layout the
/// turn's previous continuation stored): from now on they never change, and every read of
/// them checks it.
pub fn mark_sent(
    client: &mut SpiClient<'_>,
    conv: Uuid,
    turn: Uuid,
    (n, estimate): (i32, i32),
    cleared: Option<&pgprompt_core::ClearedRecord>,
    lay: impl FnOnce(Option<&[u8]>) -> Option<Vec<u8>>,
) {
    // The digest each round will have (what the request cleared on round n included),
    // computed in a SELECT that locks the rounds, then written as a value: Citus refuses
    // an UPDATE calling a STABLE function on a column ([`mark_read_sent`]).
    static READ: LazyLock<String> = LazyLock::new(|| {
        // On the newest round, with its first request (`sent_at IS NULL`: a round another
        // turn's seal read in history takes it too, since this request was sent with it).
        // With the layout the turn's previous continuation stored (on its newest round).
        format!(
            "SELECT r.n, {}, (SELECT p.sent_layout FROM prompt.rounds p \
                              WHERE p.conversation_id = $1 AND p.turn_id = $2 AND p.sent_layout IS NOT NULL \
                              ORDER BY p.n DESC LIMIT 1) AS previous \
             FROM prompt.rounds r \
             WHERE r.conversation_id = $1 AND r.turn_id = $2 AND r.n <= $3 AND r.sent_at IS NULL FOR NO KEY UPDATE",
            round_digest_clearing("r", "CASE WHEN r.n = $3 THEN $4::jsonb END")
        )
    });
    const MARK: &str = "UPDATE prompt.rounds r SET sent_at = now(), \
        sent_digest = coalesce(($6::bytea[])[array_position($5::int4[], r.n)], r.sent_digest), sent_estimate = $4, \
        cleared = CASE WHEN r.n = $3 THEN $7::jsonb END, sent_layout = CASE WHEN r.n = $3 THEN $8::bytea END \
        WHERE r.conversation_id = $1 AND r.turn_id = $2 AND r.n = ANY($5::int4[]) AND r.sent_at IS NULL";
    let _open = super::guard::Open::hold_for(&[c"rounds"]);
    let cleared = cleared.map(|c| c.to_json());
    let jsonb = || cleared.clone().map(super::jsonb::JsonbOut);
    let args = [pg_uuid(conv).into(), pg_uuid(turn).into(), n.into(), jsonb().into()];
    let mut previous: Option<Vec<u8>> = None;
    let (ns, digests): (Vec<i32>, Vec<Vec<u8>>) = run_write(client, &READ, &args)
        .filter_map(|row| {
            if previous.is_none() {
                previous = spi(row.get::<Vec<u8>>(3));
            }
            Some((spi(row.get::<i32>(1))?, spi(row.get::<Vec<u8>>(2))?))
        })
        .unzip();
    if ns.is_empty() {
        return;
    }
    let layout = lay(previous.as_deref());
    run_write(
        client,
        MARK,
        &[
            pg_uuid(conv).into(),
            pg_uuid(turn).into(),
            n.into(),
            estimate.into(),
            ns.into(),
            digests.into(),
            jsonb().into(),
            layout.into(),
        ],
    );
}

/// Drops the bodies of the conversation's seals older than `before` (keeping digest,
/// size and estimate), then every node no remaining body uses. Returns how many seals
/// it pruned. Holds [`lock_storage`], so a seal being written meanwhile is either seen
/// whole (and its nodes kept) or waits for the prune.
pub fn prune(client: &mut SpiClient<'_>, conv: Uuid, before: DatumWithOid<'_>) -> Result<i64> {
    super::guard::refuse_foreign_code(&[c"conversations", c"seals", c"seal_nodes"]);
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
            SealPointers {
                head: c.get::<i64>("head"),
                tail: c.get::<i64>("tail"),
                lead: c.get::<Vec<Option<i64>>>("lead").unwrap_or_default(),
                chain: c.get::<i64>("chain"),
                // A NULL length reads no chain: the walk finds it broken.
                chain_length: c.get::<i32>("chain_length").unwrap_or(-1),
                ..SealPointers::default()
            },
        )))
    })?;
    let parents: HashMap<i64, Option<i64>> = run(client, &ALL, &[pg_uuid(conv).into()], |c| {
        Ok::<_, Error>(Some((c.need::<i64>("id")?, c.get::<i64>("parent"))))
    })?
    .into_iter()
    .collect();
    // A live body whose chain is broken stops the prune: nothing it might still reach
    // is dropped.
    let dead = pgprompt_core::dead_seal_nodes(&live, &parents).map_err(|turn| corrupted(conv, turn, "lost a node"))?;
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
/// read, pointers that do not fit, a lost node, or bytes that do not match the digest;
/// then every sent round and every turn a seal sent that no longer matches what was sent,
/// each in conversation and timeline order. Pruned bodies are not checked (their digest
/// stays, their bytes are gone).
pub fn verify(client: &SpiClient<'_>, conv: Option<Uuid>) -> Result<Vec<(Uuid, Uuid, String)>> {
    let which = [nullable(conv.map(pg_uuid))];
    let turns = run(client, &SEALED_TURNS, &which, |c| {
        Ok::<_, Error>(Some((
            c.need_uuid("conversation_id")?,
            c.need_uuid("id")?,
            c.need::<bool>("has_seal")?,
        )))
    })?;
    let mut problems = Vec::new();
    for (conv, turn, has_seal) in turns {
        pgrx::check_for_interrupts!();
        if !has_seal {
            problems.push((
                conv,
                turn,
                "the turn is sealed and its seal is missing from prompt.seals".to_string(),
            ));
            continue;
        }
        // The body, then its pieces (what the cache report reads) against their digest.
        let read = load(client, conv, turn).and_then(|_| sent_as_stored(client, conv, turn));
        if let Err(e) = read {
            // What the refusal says after naming the seal (its message as `corrupted` builds it).
            let prefix = Error::new(
                Code::DataCorrupted,
                format!("the seal of turn {turn} of conversation {conv} "),
            )
            .message;
            let why = e.message.strip_prefix(&prefix).unwrap_or(&e.message).to_string();
            problems.push((conv, turn, why));
        }
    }
    let rounds = run(client, &ALTERED_ROUNDS, &which, |c| {
        Ok::<_, Error>(Some((
            c.need_uuid("conversation_id")?,
            c.need_uuid("turn_id")?,
            format!(
                "round {} was sent and no longer matches what was sent",
                c.need::<i32>("n")?
            ),
        )))
    })?;
    let sent = run(client, &ALTERED_TURNS, &which, |c| {
        Ok::<_, Error>(Some((
            c.need_uuid("conversation_id")?,
            c.need_uuid("id")?,
            "the turn was sent by a later seal and no longer matches what was sent".to_string(),
        )))
    })?;
    problems.extend(rounds);
    problems.extend(sent);
    Ok(problems)
}

/// The rounds a request carried (of a conversation, or of every one the caller can see:
/// their turn's continuation, or a later seal in history) that no longer match the digest
/// of what was sent.
static ALTERED_ROUNDS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a sent round",
        format!(
            "SELECT r.conversation_id, r.turn_id, r.n FROM prompt.rounds r \
             WHERE (r.sent_at IS NOT NULL OR r.sent_digest IS NOT NULL) AND ($1::uuid IS NULL OR r.conversation_id = $1) \
               AND r.sent_digest IS DISTINCT FROM {} \
             ORDER BY r.conversation_id, r.turn_id, r.n",
            round_digest("r")
        ),
        &[("conversation_id", UUIDOID), ("turn_id", UUIDOID), ("n", INT4OID)],
    )
});

/// The turns a seal sent (of a conversation, or of every one the caller can see) that no
/// longer match the digest of what was sent (one whose answer came since has none until
/// the next seal).
static ALTERED_TURNS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a sent turn",
        format!(
            "SELECT t.conversation_id, t.id FROM prompt.turns t \
             WHERE t.sent_digest IS NOT NULL AND ($1::uuid IS NULL OR t.conversation_id = $1) \
               AND t.sent_digest <> {} \
             ORDER BY t.conversation_id, t.seq",
            turn_digest("t")
        ),
        &[("conversation_id", UUIDOID), ("id", UUIDOID)],
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
