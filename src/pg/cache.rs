//! `prompt.cache_report` and `explain_turn(…) -> 'cache'`: the requests a conversation
//! sent, read back from its seals and rounds, replayed through the core's model of the
//! providers' caches (`pgprompt_core::cache`).

use std::collections::HashMap;
use std::sync::LazyLock;

use pgrx::pg_sys::{FLOAT8ARRAYOID, FLOAT8OID, INT4ARRAYOID, INT4OID, JSONBOID, UUIDOID};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;
use uuid::Uuid;

use super::errors::OrRaise;
use super::load::{self, SpiHistory};
use super::spi::{core_uuid, pg_uuid, run, Query};
use pgprompt_core::cache::{Row, Sent, Simulator};
use pgprompt_core::error::{Error, Result};
use pgprompt_core::tokens::Memo;
use pgprompt_core::Purpose;

/// The sealed turns of a conversation in order: when each was sealed, and the requests
/// its continuations sent (the newest round each carried, and when: rounds sent together
/// went in one request).
static SENT: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a sealed turn's requests",
        "SELECT t.id, extract(epoch FROM s.sealed_at)::float8 AS sealed_at, \
                coalesce(array_agg(g.n ORDER BY g.n) FILTER (WHERE g.n IS NOT NULL), '{}') AS rounds, \
                coalesce(array_agg(g.at ORDER BY g.n) FILTER (WHERE g.n IS NOT NULL), '{}') AS sent_at \
         FROM prompt.turns t \
         JOIN prompt.seals s ON s.conversation_id = $1 AND s.turn_id = t.id \
         LEFT JOIN LATERAL (SELECT max(r.n) AS n, extract(epoch FROM r.sent_at)::float8 AS at \
                            FROM prompt.rounds r \
                            WHERE r.conversation_id = $1 AND r.turn_id = t.id \
                              AND r.sent_at IS NOT NULL GROUP BY r.sent_at) g ON true \
         WHERE t.conversation_id = $1 AND s.pruned_at IS NULL \
         GROUP BY t.id, t.seq, s.sealed_at ORDER BY t.seq",
        &[
            ("id", UUIDOID),
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
/// the newest `last` of them at most.
#[derive(Clone, Copy)]
struct Window {
    since: f64,
    last: usize,
}

const ALL: Window = Window {
    since: f64::NEG_INFINITY,
    last: usize::MAX,
};

/// Every request the conversation sent within `window`, in order, as it was sent.
fn sent(client: &SpiClient<'_>, conv: Uuid, window: Window, memo: &mut Memo) -> Result<Vec<Sent>> {
    let turns = run(client, &SENT, &[pg_uuid(conv).into()], |c| {
        Ok::<_, Error>(Some((
            c.need_uuid("id")?,
            c.need::<f64>("sealed_at")?,
            c.need::<Vec<i32>>("rounds")?,
            c.need::<Vec<f64>>("sent_at")?,
        )))
    })?;
    let billed: Billed = run(client, &BILLED, &[pg_uuid(conv).into()], |c| {
        let key = (c.need_uuid("turn_id")?, c.need::<i32>("step")?);
        Ok::<_, Error>(Some((
            key,
            (
                (c.get::<i32>("cache_read_tokens"), c.get::<i32>("cache_creation_tokens")),
                c.json("billed_miss")?,
            ),
        )))
    })?
    .into_iter()
    .collect();
    // (turn, step, when), in order; only the window's are read back and compiled.
    let mut wanted: Vec<(Uuid, i32, f64)> = turns
        .into_iter()
        .flat_map(|(turn, sealed_at, steps, times)| {
            let requests = std::iter::once((0, sealed_at)).chain(steps.into_iter().zip(times));
            requests.map(move |(step, at)| (turn, step, at)).collect::<Vec<_>>()
        })
        .filter(|&(_, _, at)| at >= window.since)
        .collect();
    let skip = wanted.len().saturating_sub(window.last);
    wanted.drain(..skip);
    let mut out = Vec::new();
    let mut i = 0;
    while i < wanted.len() {
        let turn = wanted[i].0;
        let n = wanted[i..].iter().take_while(|w| w.0 == turn).count();
        let steps: Vec<(i32, f64)> = wanted[i..i + n].iter().map(|w| (w.1, w.2)).collect();
        i += n;
        let load::Loaded::Context(ctx) = load::context(client, conv, turn, load::Read::Explain)? else {
            continue;
        };
        let run_turn = ctx.turn.is_run();
        for (step, at) in steps {
            let mut at_step = (*ctx).clone();
            at_step.rounds.retain(|r| r.n <= step);
            let Some(frozen) = at_step.seal.as_ref().map(|s| s.frozen.clone()) else {
                continue;
            };
            let mut history = SpiHistory::new(client, &at_step);
            let output = pgprompt_core::compile(&at_step, &mut history, memo, Purpose::Estimate)?;
            if output.body.head.is_empty() {
                continue;
            }
            // A run's response for round n answered the request that carried n - 1.
            let response_step = if run_turn { step + 1 } else { 0 };
            out.push(Sent {
                turn_id: turn,
                step,
                at,
                wire: frozen.wire,
                model: frozen.model,
                body: output.body.text(),
                billed: billed.get(&(turn, response_step)).map(|b| b.0),
                billed_miss: billed.get(&(turn, response_step)).and_then(|b| b.1.clone()),
            });
        }
    }
    Ok(out)
}

/// The report of every request the conversation sent.
fn report(conv: Uuid) -> Vec<Row> {
    Spi::connect(|client| {
        super::session::with_memo(|memo| {
            let requests = sent(client, conv, ALL, memo)?;
            let mut sim = Simulator::new();
            Ok(requests.iter().map(|r| sim.send(r, memo)).collect())
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
    let now = Spi::get_one::<f64>("SELECT extract(epoch FROM now())::float8")
        .ok()
        .flatten()
        .unwrap_or(0.0);
    let rows = Spi::connect(|client| {
        super::session::with_memo(|memo| {
            // What can still be cached: the requests sent within the model's TTL, the
            // newest 64 of them at most (an entry the next request can read is one of
            // theirs; older ones are outlived or out of the lookback's reach).
            let ttl = pgprompt_core::cache::ttl_seconds(out.explain.wire, out.explain.model_row.as_ref());
            let window = Window {
                since: now - ttl,
                last: 64,
            };
            let mut requests = sent(client, out.explain.conversation_id, window, memo)?;
            requests.push(Sent {
                turn_id: out.explain.turn_id,
                step: -1,
                at: now,
                wire: out.explain.wire,
                model: out.explain.model_row.clone(),
                body: body.text(),
                billed: None,
                billed_miss: None,
            });
            let mut sim = Simulator::new();
            Ok::<_, Error>(requests.iter().map(|r| sim.send(r, memo)).collect::<Vec<Row>>())
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
        name!(first_difference, Option<pgrx::JsonB>),
        name!(predicted_cache_read, i32),
        name!(predicted_cache_write, i32),
        name!(predicted_uncached, i32),
        name!(billed_cache_read, Option<i32>),
        name!(billed_cache_write, Option<i32>),
        name!(billed_miss, Option<pgrx::JsonB>),
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
                r.first_difference.map(pgrx::JsonB),
                n(r.predicted_cache_read),
                n(r.predicted_cache_write),
                n(r.predicted_uncached),
                r.billed_cache_read,
                r.billed_cache_write,
                r.billed_miss.map(pgrx::JsonB),
            )
        })
        .collect();
    TableIterator::new(rows)
}
