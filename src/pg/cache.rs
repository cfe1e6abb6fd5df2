//! `prompt.cache_report` and `explain_turn(…) -> 'cache'`: the requests a conversation
//! sent, read back from its seals and rounds, replayed through the core's model of the
//! providers' caches (`pgprompt_core::cache`).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::LazyLock;

use pgrx::pg_sys::{BOOLOID, BYTEAOID, FLOAT8ARRAYOID, FLOAT8OID, INT4ARRAYOID, INT4OID, JSONBOID, UUIDOID};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;
use uuid::Uuid;

use super::errors::OrRaise;
use super::jsonb::JsonbOut;
use super::load::{self, SpiHistory};
use super::seals;
use super::spi::{core_uuid, pg_uuid, run, Query};
use pgprompt_core::Columns as _;
use pgprompt_core::Memo;
use pgprompt_core::Model;
use pgprompt_core::Purpose;
use pgprompt_core::Wire;
use pgprompt_core::{replay_cache, CacheCatalog, CachePieces, CacheRequest, CacheRow, SentRequest};
use pgprompt_core::{Error, Result};

/// The sealed turns of a conversation in order: when each was sealed, and the requests
/// its continuations sent (the newest round each carried, and when: rounds sent together
/// went in one request).
static SENT: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a sealed turn's requests",
        "SELECT t.id, t.mode = 'run' AS run, extract(epoch FROM s.sealed_at)::float8 AS sealed_at, \
                coalesce(g.rounds, '{}') AS rounds, coalesce(g.sent_at, '{}') AS sent_at \
         FROM prompt.seals s \
         JOIN prompt.turns t ON t.conversation_id = $1 AND t.id = s.turn_id \
         LEFT JOIN (SELECT x.turn_id, array_agg(x.n ORDER BY x.n) AS rounds, array_agg(x.at ORDER BY x.n) AS sent_at \
                    FROM (SELECT r.turn_id, max(r.n) AS n, extract(epoch FROM r.sent_at)::float8 AS at \
                          FROM prompt.rounds r WHERE r.conversation_id = $1 AND r.sent_at IS NOT NULL \
                          GROUP BY r.turn_id, r.sent_at) x \
                    GROUP BY x.turn_id) g ON g.turn_id = s.turn_id \
         WHERE s.conversation_id = $1 AND s.pruned_at IS NULL ORDER BY t.seq",
        &[
            ("id", UUIDOID),
            ("run", BOOLOID),
            ("sealed_at", FLOAT8OID),
            ("rounds", INT4ARRAYOID),
            ("sent_at", FLOAT8ARRAYOID),
        ],
    )
});

/// What the provider billed each recorded request, by (turn, response step).
static BILLED: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a response row",
        "SELECT turn_id, step, cache_read_tokens, cache_creation_tokens, billed_miss FROM prompt.responses \
         WHERE conversation_id = $1",
        &[
            ("turn_id", UUIDOID),
            ("step", INT4OID),
            ("cache_read_tokens", INT4OID),
            ("cache_creation_tokens", INT4OID),
            ("billed_miss", JSONBOID),
        ],
    )
});

type Billed = HashMap<(Uuid, i32), ((Option<i32>, Option<i32>), Option<serde_json::Value>)>;

/// Which requests to read back: those sent from `since` on (seconds since the epoch),
/// the newest `last` of them at most; with what was billed for each where `billed` (the
/// report shows it, a prediction reads none of it).
#[derive(Clone, Copy)]
struct Window {
    since: f64,
    last: usize,
    billed: bool,
}

const ALL: Window = Window {
    since: f64::NEG_INFINITY,
    last: usize::MAX,
    billed: true,
};

/// What the provider billed each of the conversation's recorded requests (none read
/// where `window` does not ask for it).
fn billed(client: &SpiClient<'_>, conv: Uuid, window: Window) -> Result<Billed> {
    if !window.billed {
        return Ok(Billed::default());
    }
    let rows = run(client, &BILLED, &[pg_uuid(conv).into()], |c| {
        let key = (c.need_uuid("turn_id")?, c.need::<i32>("step")?);
        Ok::<_, Error>(Some((
            key,
            (
                (c.get::<i32>("cache_read_tokens"), c.get::<i32>("cache_creation_tokens")),
                c.json("billed_miss")?,
            ),
        )))
    })?;
    Ok(rows.into_iter().collect())
}

/// The cache layouts the continuations of `turns` stored when they were sent, by turn and
/// by the newest round each carried (`rounds.sent_layout`).
static LAYOUTS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a continuation's layout",
        "SELECT turn_id, n, sent_layout FROM prompt.rounds \
         WHERE conversation_id = $1 AND turn_id = ANY($2::uuid[]) AND sent_layout IS NOT NULL",
        &[("turn_id", UUIDOID), ("n", INT4OID), ("sent_layout", BYTEAOID)],
    )
});

type Layouts = HashMap<Uuid, HashMap<i32, Vec<u8>>>;

/// What the continuations of `turns` stored of their layouts (nothing read for none).
fn layouts(client: &SpiClient<'_>, conv: Uuid, turns: &HashSet<Uuid>) -> Result<Layouts> {
    let mut out = Layouts::new();
    if turns.is_empty() {
        return Ok(out);
    }
    let ids: Vec<pgrx::Uuid> = turns.iter().map(|t| pg_uuid(*t)).collect();
    let rows = run(client, &LAYOUTS, &[pg_uuid(conv).into(), ids.into()], |c| {
        Ok::<_, Error>(Some((
            c.need_uuid("turn_id")?,
            c.need::<i32>("n")?,
            c.need::<Vec<u8>>("sent_layout")?,
        )))
    })?;
    for (turn, n, layout) in rows {
        out.entry(turn).or_default().insert(n, layout);
    }
    Ok(out)
}

/// Every request the conversation sent within `window`, in order, as it was sent; what
/// their stored layouts hold goes into `catalog`.
fn sent(
    client: &SpiClient<'_>,
    conv: Uuid,
    window: Window,
    memo: &mut Memo,
    kept: &mut seals::Kept,
) -> Result<Vec<SentRequest>> {
    let turns = run(client, &SENT, &[pg_uuid(conv).into()], |c| {
        Ok::<_, Error>(Some((
            c.need_uuid("id")?,
            c.need::<bool>("run")?,
            c.need::<f64>("sealed_at")?,
            c.need::<Vec<i32>>("rounds")?,
            c.need::<Vec<f64>>("sent_at")?,
        )))
    })?;
    let billed = billed(client, conv, window)?;
    // (turn, step, when), in order; only the window's are read back.
    let runs: HashSet<Uuid> = turns.iter().filter(|t| t.1).map(|t| t.0).collect();
    // Every continuation of a turn, in order: each one's layout is read with those before it.
    let steps_of: HashMap<Uuid, Vec<i32>> = turns.iter().map(|t| (t.0, t.3.clone())).collect();
    let wanted = in_window(turns, window);
    let continued_turns: HashSet<Uuid> = wanted.iter().filter(|w| w.1 != 0).map(|w| w.0).collect();
    let layouts = layouts(client, conv, &continued_turns)?;
    let (firsts, texts_for) = firsts_to_read(&wanted, &layouts);
    let mut stored = seals::sent_firsts(client, conv, &firsts, &texts_for, kept)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < wanted.len() {
        let turn = wanted[i].0;
        let n = wanted[i..].iter().take_while(|w| w.0 == turn).count();
        let steps: Vec<(i32, f64)> = wanted[i..i + n].iter().map(|w| (w.1, w.2)).collect();
        i += n;
        // As sent (a stateful turn's in its chained form).
        let mut first = stored.remove(&turn);
        // What a continuation repeats of its first request is read as the same pieces.
        let repeated = match first.as_ref() {
            Some((_, seals::First::Pieces(p))) => p.clone(),
            _ => None,
        };
        let all = steps_of.get(&turn).map_or(&[][..], Vec::as_slice);
        let mut laid = laid_continuations(first.as_ref(), layouts.get(&turn), all);
        let sent_as = first.as_ref().map(|(f, _)| (f.wire, f.model.clone()));
        let mut turn_rows = None;
        for (step, at) in steps {
            let request = match (step, first.take()) {
                (0, Some((frozen, seals::First::Laid(laid)))) => {
                    Some((frozen.wire, frozen.model.clone(), CacheRequest::Laid(laid)))
                }
                (0, Some((frozen, seals::First::Pieces(pieces)))) => {
                    pieces.map(|p| (frozen.wire, frozen.model.clone(), CacheRequest::Pieces(p)))
                }
                _ => match (laid.remove(&step), sent_as.as_ref()) {
                    (Some(body), Some((wire, model))) => Some((*wire, model.clone(), body)),
                    _ => continued(client, conv, turn, step, &mut turn_rows, repeated.as_ref(), memo)?,
                },
            };
            let Some((wire, model, body)) = request else {
                continue;
            };
            // A run's response for round n answered the request that carried n - 1.
            let response_step = if runs.contains(&turn) { step + 1 } else { 0 };
            out.push(SentRequest {
                turn_id: turn,
                step,
                at,
                wire,
                model,
                body,
                billed: billed.get(&(turn, response_step)).map(|b| b.0),
                billed_miss: billed.get(&(turn, response_step)).and_then(|b| b.1.clone()),
            });
        }
    }
    Ok(out)
}

/// A sealed turn as [`SENT`] reads it: its id, whether it is a run, when it was sealed,
/// and the newest round each of its continuations carried, with when it was sent.
type SentTurn = (Uuid, bool, f64, Vec<i32>, Vec<f64>);

/// The requests of `turns` sent within `window`, in order: (turn, step, when).
fn in_window(turns: Vec<SentTurn>, window: Window) -> Vec<(Uuid, i32, f64)> {
    let mut wanted: Vec<(Uuid, i32, f64)> = turns
        .into_iter()
        .flat_map(|(turn, _, sealed_at, steps, times)| {
            let requests = std::iter::once((0, sealed_at)).chain(steps.into_iter().zip(times));
            requests.map(move |(step, at)| (turn, step, at)).collect::<Vec<_>>()
        })
        .filter(|&(_, _, at)| at >= window.since)
        .collect();
    let skip = wanted.len().saturating_sub(window.last);
    wanted.drain(..skip);
    wanted
}

/// The turns whose first requests `wanted` reads, and those of them it reads as text. A
/// turn's first request is read as stored when sent (never compiled again): its layout. So
/// is each continuation, from its seal's and the layouts it and those before it stored. A
/// continuation that stored none (sent before 0.6) is compiled again from its seal and
/// rounds: its turn's first request is read as text, whose pieces it repeats.
fn firsts_to_read(wanted: &[(Uuid, i32, f64)], layouts: &Layouts) -> (Vec<Uuid>, HashSet<Uuid>) {
    let texts_for: HashSet<Uuid> = wanted
        .iter()
        .filter(|w| w.1 != 0 && !layouts.get(&w.0).is_some_and(|l| l.contains_key(&w.1)))
        .map(|w| w.0)
        .collect();
    let firsts: std::collections::BTreeSet<Uuid> = wanted
        .iter()
        .filter(|w| w.1 == 0 || !texts_for.contains(&w.0))
        .map(|w| w.0)
        .collect();
    (firsts.into_iter().collect(), texts_for)
}

/// A turn's continuations read from the layouts they stored (`stored`, by the newest round
/// each carried; `all`: every continuation of the turn, in order) with its first request's
/// (`first`), by step: those that read.
fn laid_continuations(
    first: Option<&(Rc<pgprompt_core::Frozen>, seals::First)>,
    stored: Option<&HashMap<i32, Vec<u8>>>,
    all: &[i32],
) -> HashMap<i32, CacheRequest> {
    let (Some((frozen, seals::First::Laid(l))), Some(stored)) = (first, stored) else {
        return HashMap::new();
    };
    let chain: Vec<Option<&[u8]>> = all.iter().map(|s| stored.get(s).map(Vec::as_slice)).collect();
    let read = pgprompt_core::continued_requests(frozen.wire, frozen.model.as_ref(), l, &chain);
    all.iter()
        .zip(read)
        .filter_map(|(s, r)| Some((*s, CacheRequest::Laid(r?))))
        .collect()
}

/// A sealed turn's context for its continuations (its rounds set aside, each request
/// given those it carried).
struct TurnRows {
    ctx: Box<pgprompt_core::Context>,
    rounds: Vec<pgprompt_core::Round>,
}

/// A request of a sealed turn rendered from its seal and the rounds up to `step` (what
/// it sent, checked against the digests of both): a continuation that stored no layout.
/// `rows` keeps the turn's context for its other steps; the elements it
/// repeats of `first` (the turn's first request) are read as first's pieces. `None`:
/// nothing was sent (a body not kept).
fn continued(
    client: &SpiClient<'_>,
    conv: Uuid,
    turn: Uuid,
    step: i32,
    rows: &mut Option<TurnRows>,
    first: Option<&CachePieces>,
    memo: &mut Memo,
) -> Result<Option<(Wire, Option<Model>, CacheRequest)>> {
    if rows.is_none() {
        let load::Loaded::Context(mut ctx) = load::context(client, conv, turn, load::Read::Sent)? else {
            return Ok(None);
        };
        let rounds = std::mem::take(&mut ctx.rounds);
        *rows = Some(TurnRows { ctx, rounds });
    }
    let Some(TurnRows { ctx, rounds }) = rows.as_mut() else {
        return Ok(None);
    };
    ctx.rounds = rounds.iter().filter(|r| r.n <= step).cloned().collect();
    let Some(frozen) = ctx.seal.as_ref().map(|s| s.frozen.clone()) else {
        return Ok(None);
    };
    let mut history = SpiHistory::new(client, ctx);
    let output = pgprompt_core::compile(ctx, &mut history, memo, Purpose::Estimate)?;
    if output.body.head.is_empty() {
        return Ok(None);
    }
    Ok(Some((
        frozen.wire,
        frozen.model,
        CacheRequest::Pieces(repeating(&output.body, first)),
    )))
}

/// A body in pieces, each element and its frame that `first` holds at the same place
/// read as first's.
fn repeating(body: &pgprompt_core::Body, first: Option<&CachePieces>) -> CachePieces {
    let frame_text = body.frame_text();
    let frame = match first.filter(|f| *f.frame.1 == *frame_text) {
        Some(f) => f.frame.clone(),
        None => (None, Rc::from(frame_text)),
    };
    let theirs = first.map_or(&[][..], |f| f.elements.as_slice());
    let elements = body
        .elements
        .iter()
        .enumerate()
        .map(|(i, e)| match theirs.get(i).filter(|(_, t)| **t == **e) {
            Some(same) => same.clone(),
            None => (None, Rc::from(e.as_str())),
        })
        .collect();
    CachePieces { frame, elements }
}

/// The report of every request the conversation sent.
fn report(conv: Uuid) -> Vec<CacheRow> {
    Spi::connect(|client| {
        super::session::with_memo(|memo| {
            seals::with_kept(|kept| {
                let requests = sent(client, conv, ALL, memo, kept)?;
                Ok(replay_cache(&requests, memo))
            })
        })
    })
    .or_raise()
}

/// The prediction for a turn's next request (`explain_turn(…) -> 'cache'`): every request
/// the conversation sent replayed, then this one, sent now. `None` for a body not kept.
/// What the replay cannot read (a seal that does not verify) is raised, as `cache_report`
/// raises it: never a prediction silently left out.
pub(super) fn predict(out: &pgprompt_core::Output) -> Option<serde_json::Value> {
    let body = &out.body;
    if body.head.is_empty() {
        return None;
    }
    let now = transaction_start();
    let rows = Spi::connect(|client| {
        super::session::with_memo(|memo| {
            // What can still be cached: the requests sent within the model's TTL, the
            // newest 64 of them at most (an entry the next request can read is one of
            // theirs; older ones are outlived or out of the lookback's reach).
            let ttl = pgprompt_core::cache_ttl_seconds(out.explain.wire, out.explain.model_row.as_ref());
            let window = Window {
                since: now - ttl,
                last: 64,
                billed: false,
            };
            let (mut requests, next) = seals::with_kept(|kept| {
                let requests = sent(client, out.explain.conversation_id, window, memo, kept)?;
                let next = next_request(out, &requests, &mut kept.catalog, memo);
                Ok::<_, Error>((requests, next))
            })?;
            requests.push(SentRequest {
                turn_id: out.explain.turn_id,
                step: -1,
                at: now,
                wire: out.explain.wire,
                model: out.explain.model_row.clone(),
                body: next,
                billed: None,
                billed_miss: None,
            });
            Ok::<_, Error>(replay_cache(&requests, memo))
        })
    })
    .or_raise();
    let last = rows.last()?;
    Some(serde_json::json!({
        "input_tokens": last.input_tokens,
        "shared_prefix_tokens": last.shared_prefix_tokens,
        "first_difference": last.first_difference,
        "predicted_cache_read": last.predicted_cache_read,
        "predicted_cache_write": last.predicted_cache_write,
        "predicted_uncached": last.predicted_uncached,
    }))
}

/// `now()` in seconds since the Unix epoch: the transaction's start, as the rows'
/// timestamps are read (`extract(epoch FROM …)`), without a statement.
fn transaction_start() -> f64 {
    // Microseconds between the Unix epoch and PostgreSQL's (2000-01-01).
    const POSTGRES_EPOCH_MICROS: f64 = 946_684_800_000_000.0;
    // SAFETY: a read of the current transaction's start, in a backend, on its own thread.
    let at = unsafe { pgrx::pg_sys::GetCurrentTransactionStartTimestamp() };
    #[allow(clippy::cast_precision_loss)] // microseconds below 2^53 until the year 2255
    let micros = at as f64;
    (micros + POSTGRES_EPOCH_MICROS) / 1e6
}

/// The next request as the cache model reads it. What it repeats of a request replayed
/// before it is read as that request read it: from the layouts stored when it was sent
/// (`catalog`, by the digest of each element's text), never parsed again; a turn read as
/// text (its continuations replayed too) lends its pieces by node, as before. What is new
/// is cut from its text.
fn next_request(
    out: &pgprompt_core::Output,
    before: &[SentRequest],
    catalog: &mut CacheCatalog,
    memo: &mut Memo,
) -> CacheRequest {
    let body = &out.body;
    let texts = before.iter().any(|r| matches!(r.body, CacheRequest::Pieces(_)));
    if !texts {
        let model = out.explain.model_row.as_ref();
        return CacheRequest::Laid(pgprompt_core::lay_next_request(
            out.explain.wire,
            model,
            body,
            catalog,
            memo,
        ));
    }
    let mut seen = HashSet::new();
    let mut nodes: HashMap<&str, i64> = HashMap::new();
    for r in before {
        if let CacheRequest::Pieces(p) = &r.body {
            for (key, text) in &p.elements {
                if let Some(id) = key.filter(|id| seen.insert(*id)) {
                    nodes.insert(text, id);
                }
            }
        }
    }
    CacheRequest::Pieces(pgprompt_core::CachePieces {
        frame: (None, Rc::from(body.frame_text())),
        elements: body
            .elements
            .iter()
            .map(|e| (nodes.get(e.as_str()).copied(), Rc::from(e.as_str())))
            .collect(),
    })
}

/// A row per request the conversation sent (its turns' sealed first requests and their
/// continuations, in order): its input tokens, what it shares as a prefix with the
/// request before it, where it first differs and why, and what the provider's cache
/// should read, write and leave uncached under the model's rules — beside what was billed.
#[pg_extern(stable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
#[allow(clippy::type_complexity)]
fn cache_report(
    conversation_id: pgrx::Uuid,
) -> TableIterator<
    'static,
    (
        name!(turn_id, pgrx::Uuid),
        name!(step, i32),
        name!(input_tokens, i32),
        name!(shared_prefix_tokens, i32),
        name!(first_difference, Option<JsonbOut>),
        name!(predicted_cache_read, i32),
        name!(predicted_cache_write, i32),
        name!(predicted_uncached, i32),
        name!(billed_cache_read, Option<i32>),
        name!(billed_cache_write, Option<i32>),
        name!(billed_miss, Option<JsonbOut>),
    ),
> {
    let n = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    let rows: Vec<_> = report(core_uuid(conversation_id))
        .into_iter()
        .map(|r| {
            (
                pg_uuid(r.turn_id),
                r.step,
                n(r.input_tokens),
                n(r.shared_prefix_tokens),
                r.first_difference.map(JsonbOut),
                n(r.predicted_cache_read),
                n(r.predicted_cache_write),
                n(r.predicted_uncached),
                r.billed_cache_read,
                r.billed_cache_write,
                r.billed_miss.map(JsonbOut),
            )
        })
        .collect();
    TableIterator::new(rows)
}
