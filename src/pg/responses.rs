//! The response loop (README, "The response loop"): `record_response` writes a
//! provider's answer where the next compile reads it — a direct reply's text as the
//! turn's `content`, a run's step as its next round — with the usage as billed beside
//! the estimate of the request it answered (`prompt.responses`); `record_tool_results`
//! writes the results of the newest round's calls.

use std::sync::LazyLock;

use pgrx::pg_sys::{BOOLOID, BYTEAOID, INT4OID, TEXTOID, UUIDOID};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;
use serde_json::{json, Value};
use uuid::Uuid;

use super::errors::{raise, OrRaise};
use super::jsonb::{JsonbArg, JsonbOut};
use super::spi::{core_uuid, nullable, pg_uuid, run, run_write, Query};
use pgprompt_core::Columns as _;
use pgprompt_core::{Code, Error};
use pgprompt_core::{Response, Usage, Wire};

fn refuse(path: &str, what: String, hint: &str) -> ! {
    let path = if path.is_empty() { "/" } else { path };
    raise(
        Error::new(Code::ResponseInvalid, format!("{what} at {path}"))
            .detail(format!("The value at {path} does not fit the turn."))
            .hint(hint.to_string()),
    )
}

static RECORDED: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a response row",
        "SELECT turn_id, step, estimated_input_tokens FROM prompt.responses \
         WHERE conversation_id = $1 AND response_id = $2",
        &[
            ("turn_id", UUIDOID),
            ("step", INT4OID),
            ("estimated_input_tokens", INT4OID),
        ],
    )
});

static RECORDED_BODY: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a response row",
        "SELECT step, estimated_input_tokens FROM prompt.responses \
         WHERE conversation_id = $1 AND turn_id = $2 AND response_id IS NULL AND body_digest = $3 \
         ORDER BY step DESC LIMIT 1",
        &[("step", INT4OID), ("estimated_input_tokens", INT4OID)],
    )
});

/// The newest round: its number, whether it has calls, how many results, and why the
/// response it records stopped (NULL: none recorded).
static NEWEST_ROUND: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the newest round",
        "SELECT r.n, jsonb_path_exists(r.assistant, '$[*] ? (@.type == \"tool_call\")')::int4 AS calls, \
         jsonb_array_length(r.results) AS results, \
         (SELECT p.stop_reason FROM prompt.responses p WHERE p.conversation_id = $1 AND p.turn_id = $2 \
           AND p.step = r.n) AS stop_reason \
         FROM prompt.rounds r WHERE r.conversation_id = $1 AND r.turn_id = $2 ORDER BY r.n DESC LIMIT 1",
        &[
            ("n", INT4OID),
            ("calls", INT4OID),
            ("results", INT4OID),
            ("stop_reason", TEXTOID),
        ],
    )
});

/// Whether a response that stopped so ends its run, when it called no tool: the model
/// answered (rather than pausing a long server-side turn, which the next request resumes).
fn ends_the_run(stop_reason: Option<&str>) -> bool {
    !matches!(
        stop_reason,
        None | Some("pause_turn" | "tool_use" | "tool_calls" | "in_progress" | "incomplete")
    )
}

/// What `record_response` returns: what it wrote (or had written, for a response
/// recorded before).
fn summary(turn: Uuid, step: i32, r: &Response, estimated: i32) -> Value {
    let calls: Vec<Value> = r
        .assistant
        .iter()
        .filter(|p| p["type"] == "tool_call")
        .map(|p| json!({"id": p["id"], "name": p["name"], "input": p["input"]}))
        .collect();
    json!({
        "turn_id": turn,
        "step": step,
        "recorded": if step == 0 { "answer" } else { "round" },
        "shape": r.shape.as_str(),
        "response_id": r.id,
        "stop_reason": r.stop_reason,
        "tool_calls": calls,
        "usage": r.usage,
        "estimated_input_tokens": estimated,
    })
}

/// What the request a response answers was compiled as, read where its compile stored it
/// (no second compile): the model and estimate the seal froze (its record
/// verified against its digest), or, once the turn's rounds were sent, the estimate of
/// the request that first carried the newest (`rounds.sent_estimate`).
/// The turn's mode, and the request its seal and newest round say a response answers.
static ANSWERED_REQUEST: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the request a response answers",
        "SELECT t.mode, s.frozen::text AS frozen, s.frozen_digest, \
                r.n, r.sent_estimate, t.summary IS NOT NULL AS summarized, \
                EXISTS (SELECT 1 FROM prompt.responses p WHERE p.conversation_id = $1 AND p.turn_id = $2 \
                        AND p.step = 0) AS answered \
         FROM prompt.turns t \
         LEFT JOIN prompt.seals s ON s.conversation_id = $1 AND s.turn_id = $2 AND s.pruned_at IS NULL \
         LEFT JOIN LATERAL (SELECT x.n, x.sent_estimate FROM prompt.rounds x \
                            WHERE x.conversation_id = $1 AND x.turn_id = $2 \
                            ORDER BY x.n DESC LIMIT 1) r ON true \
         WHERE t.conversation_id = $1 AND t.id = $2",
        &[
            ("mode", TEXTOID),
            ("frozen", TEXTOID),
            ("frozen_digest", BYTEAOID),
            ("n", INT4OID),
            ("sent_estimate", INT4OID),
            ("summarized", BOOLOID),
            ("answered", BOOLOID),
        ],
    )
});

/// What [`ANSWERED_REQUEST`] read of the request a response answers: the turn's mode,
/// what its seal froze (the model, the wire, the estimate, and whether its record reads
/// as written), its newest round and the estimate of the request that first carried it,
/// and whether a direct reply's response was recorded already.
pub(super) struct StoredRequest {
    mode: Option<String>,
    model: Option<String>,
    wire: Option<Wire>,
    sealed: Option<i32>,
    verified: bool,
    newest: Option<i32>,
    sent: Option<i32>,
    answered: bool,
}

/// Reads what the turn's compile stored of the request a response answers, in one
/// statement ([`ANSWERED_REQUEST`]); `None`: no such turn is visible.
pub(super) fn stored_request(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Option<StoredRequest> {
    let rows = run(
        client,
        &ANSWERED_REQUEST,
        &[pg_uuid(conv).into(), pg_uuid(turn).into()],
        |c| {
            // The seal's frozen record, read by the core's one reader (checked against its
            // digest): none, or one not as written, says nothing of the request.
            let read = c
                .text("frozen")
                .map(|text| pgprompt_core::read_frozen(&text, c.get::<Vec<u8>>("frozen_digest").as_deref()));
            let frozen = read.as_ref().and_then(|r| r.as_ref().ok());
            Ok::<_, Error>(Some(StoredRequest {
                mode: c.text("mode"),
                model: frozen.and_then(|f| f.model.as_ref().map(|m| m.name.clone())),
                wire: frozen.map(|f| f.wire),
                sealed: frozen.map(|f| i32::try_from(f.estimated_total()).unwrap_or(i32::MAX)),
                verified: !matches!(read, Some(Err(_))),
                newest: c.get::<i32>("n"),
                // An in-turn summary can shrink a request after its newest round was sent:
                // then the request is what a compile says.
                sent: c
                    .get::<i32>("sent_estimate")
                    .filter(|_| c.get::<bool>("summarized") != Some(true)),
                answered: c.get::<bool>("answered") == Some(true),
            }))
        },
    );
    rows.or_raise().into_iter().next()
}

impl StoredRequest {
    /// The request the turn's next call sends, as its compile stored it: the newest round
    /// it carries (0: none), its estimate and its model; `None` where nothing stored says it
    /// (not sealed, its record not as written, a newest round no request carried yet, an
    /// in-turn summary).
    pub(super) fn next_request(&self) -> Option<(i32, i32, Option<String>)> {
        if !self.verified {
            return None;
        }
        let (step, estimated) = match self.newest {
            None => (0, self.sealed?),
            Some(n) => (n, self.sent?),
        };
        Some((step, estimated, self.model.clone()))
    }
}

/// The request a response answers, as `stored` says it; where nothing stored says it
/// (rounds written since the last compile, a round sent before 0.5, an in-turn summary,
/// a pruned or a 0.2 seal, no seal at all), the turn as it now stands is compiled, as
/// before 0.5 — and a turn never compiled is refused. With the turn's mode (`None`: no
/// such turn visible) and whether its request was answered already (a direct reply's
/// response recorded).
fn answered_request(
    stored: Option<StoredRequest>,
    conv: Uuid,
    turn: Uuid,
    body_digest: [u8; 32],
) -> (Answered, Option<String>, bool) {
    let (mode, answered_before) = stored.as_ref().map_or((None, false), |s| (s.mode.clone(), s.answered));
    if let Some(s) = stored.filter(|s| s.sealed.is_some() || !s.verified) {
        if !s.verified {
            raise(
                Error::new(
                    Code::DataCorrupted,
                    format!("the seal of turn {turn} of conversation {conv} does not read as it was written"),
                )
                .hint("SELECT * FROM prompt.verify_seals(conversation_id) lists every seal that no longer matches."),
            );
        }
        let estimated = match (s.newest, s.sent) {
            (None, _) => s.sealed,
            (Some(_), sent) => sent,
        };
        if let Some(estimated) = estimated {
            let answered = Answered {
                model: s.model,
                estimated,
                body_digest,
            };
            return (answered, mode, answered_before);
        }
    }
    let out = super::api::explain_converting(conv, turn);
    if !out.explain.sealed {
        refuse(
            "",
            format!("turn {turn} was never compiled with compile_turn"),
            "Compile the turn (compile_turn seals what it returns), post that body, then record the answer.",
        );
    }
    let answered = Answered {
        model: out.explain.model.clone(),
        estimated: i32::try_from(out.explain.estimate.total).unwrap_or(i32::MAX),
        body_digest,
    };
    (answered, mode, answered_before)
}

/// What a recorded response answered: the compiled model, the estimate of the request,
/// and the digest of the response body as recorded.
struct Answered {
    model: Option<String>,
    estimated: i32,
    body_digest: [u8; 32],
}

fn insert_response(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, step: i32, r: &Response, a: &Answered) {
    let u = r.usage.clone();
    let n = |f: fn(&Usage) -> i64| nullable(u.as_ref().map(|u| i32::try_from(f(u)).unwrap_or(i32::MAX)));
    run_write(
        client,
        "INSERT INTO prompt.responses (conversation_id, turn_id, step, response_id, shape, model, compiled_model, \
         stop_reason, input_tokens, cache_creation_tokens, cache_read_tokens, output_tokens, billed_input_tokens, \
         estimated_input_tokens, body_digest, cache_creation_by_ttl, billed_miss, answer_digest) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::jsonb, $17::jsonb, \
                 (SELECT sha256(convert_to(CASE WHEN $3 = 0 THEN t.content ELSE \
                                  (SELECT x.assistant::text FROM prompt.rounds x \
                                    WHERE x.conversation_id = $1 AND x.turn_id = $2 AND x.n = $3) END, 'UTF8')) \
                    FROM prompt.turns t WHERE t.conversation_id = $1 AND t.id = $2))",
        &[
            pg_uuid(conv).into(),
            pg_uuid(turn).into(),
            step.into(),
            nullable(r.id.clone()),
            r.shape.as_str().to_string().into(),
            nullable(r.model.clone()),
            nullable(a.model.clone()),
            nullable(r.stop_reason.clone()),
            n(|u| u.input_tokens),
            n(|u| u.cache_creation_tokens),
            n(|u| u.cache_read_tokens),
            n(|u| u.output_tokens),
            n(|u| u.billed_input_tokens),
            a.estimated.into(),
            a.body_digest.to_vec().into(),
            nullable(
                u.as_ref()
                    .filter(|u| !u.cache_creation_by_ttl.is_empty())
                    .map(|u| serde_json::to_string(&u.cache_creation_by_ttl).unwrap_or_default()),
            ),
            nullable(r.cache_miss.as_ref().map(Value::to_string)),
        ],
    );
}

/// A direct reply: the text becomes the turn's answer (no tool calls, answered once:
/// `answered_before` says a response to it is recorded).
fn answer(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, r: &Response, answered_before: bool) {
    if let Some(path) = &r.first_call {
        refuse(
            path,
            format!("turn {turn} is a direct reply, and the response calls a tool"),
            "Tool calls belong to run turns (mode = 'run'); a direct reply's answer is text.",
        );
    }
    if answered_before {
        refuse(
            "",
            format!("turn {turn} already has a recorded answer"),
            "A direct reply is answered once; record each new model call on a new turn.",
        );
    }
    run_write(
        client,
        "UPDATE prompt.turns SET content = $3 WHERE conversation_id = $1 AND id = $2",
        &[pg_uuid(conv).into(), pg_uuid(turn).into(), r.text.clone().into()],
    );
}

/// A run's step: the next round, once the previous round's calls have their results.
fn next_round(client: &mut SpiClient<'_>, conv: Uuid, turn: Uuid, r: &Response) -> i32 {
    let newest = run(
        client,
        &NEWEST_ROUND,
        &[pg_uuid(conv).into(), pg_uuid(turn).into()],
        |c| {
            Ok::<_, Error>(Some((
                c.need::<i32>("n")?,
                c.need::<i32>("calls")?,
                c.need::<i32>("results")?,
                c.text("stop_reason"),
            )))
        },
    )
    .or_raise();
    let n = match newest.first() {
        Some((n, calls, results, stop)) => {
            if *calls == 1 && *results == 0 {
                refuse(
                    "",
                    format!("round {n} of turn {turn} called tools and has no results yet"),
                    "Write the results first (SELECT prompt.record_tool_results(...)); the next response answers them.",
                );
            }
            if *calls == 0 && ends_the_run(stop.as_deref()) {
                refuse(
                    "",
                    format!(
                        "the run of turn {turn} ended with round {n} (its response answered, stop reason {}, and called no tool)",
                        stop.as_deref().unwrap_or("")
                    ),
                    "A finished run takes no more responses: post the next message and compile a new reply turn.",
                );
            }
            n + 1
        }
        None => 1,
    };
    let assistant = Value::Array(r.assistant.clone()).to_string();
    run_write(
        client,
        "INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant) VALUES ($1, $2, $3, $4::jsonb)",
        &[pg_uuid(conv).into(), pg_uuid(turn).into(), n.into(), assistant.into()],
    );
    n
}

#[pg_extern(volatile, strict, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn record_response(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid, response: JsonbArg) -> JsonbOut {
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    super::session::require_updated();
    let written = Spi::connect_mut(|client| {
        // What it writes runs no code pgprompt did not create.
        super::guard::refuse_foreign_code(&[c"conversations", c"turns", c"rounds", c"responses"]);
        // One recorder of the conversation at a time: a second call with the same
        // response waits here, then finds it recorded (under READ COMMITTED; under
        // REPEATABLE READ or SERIALIZABLE it fails with 40001, to retry).
        super::seals::lock_storage(client, conv);
        // The request it answers, as its compile stored it: the seal's wire reads the
        // response first (a shape two wires share is read as the turn's), once.
        let stored = stored_request(client, conv, turn);
        let wire = stored.as_ref().and_then(|s| s.wire);
        let (r, body_digest) = pgprompt_core::read_response(&response.0, wire).or_raise();
        if let Some(id) = &r.id {
            let before = run(client, &RECORDED, &[pg_uuid(conv).into(), id.clone().into()], |c| {
                Ok::<_, Error>(Some((
                    c.need_uuid("turn_id")?,
                    c.need::<i32>("step")?,
                    c.need::<i32>("estimated_input_tokens")?,
                )))
            })
            .or_raise();
            if let Some((t, step, est)) = before.first().cloned() {
                if t != turn {
                    refuse(
                        "/id",
                        format!("response \"{id}\" was recorded for another turn of the conversation"),
                        "Each response answers one turn's request.",
                    );
                }
                return summary(turn, step, &r, est);
            }
        } else {
            // No id to know it by: the same body recorded for this turn before is it.
            let before = run(
                client,
                &RECORDED_BODY,
                &[pg_uuid(conv).into(), pg_uuid(turn).into(), body_digest.to_vec().into()],
                |c| Ok::<_, Error>(Some((c.need::<i32>("step")?, c.need::<i32>("estimated_input_tokens")?))),
            )
            .or_raise();
            if let Some((step, est)) = before.first().copied() {
                return summary(turn, step, &r, est);
            }
        }
        let (answered, mode, answered_before) = answered_request(stored, conv, turn, body_digest);
        let step = if mode.as_deref() == Some("run") {
            next_round(client, conv, turn, &r)
        } else {
            answer(client, conv, turn, &r, answered_before);
            0
        };
        insert_response(client, conv, turn, step, &r, &answered);
        summary(turn, step, &r, answered.estimated)
    });
    JsonbOut(written)
}

/// Writes the results of the newest round's tool calls (`[{call_id, content, is_error?,
/// captures?}]`, checked as any round is); returns the round's number.
#[pg_extern(volatile, strict, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn record_tool_results(conversation_id: pgrx::Uuid, turn_id: pgrx::Uuid, results: JsonbArg) -> i32 {
    let (conv, turn) = (core_uuid(conversation_id), core_uuid(turn_id));
    super::session::require_updated();
    let updated = Spi::connect_mut(|client| {
        super::guard::refuse_foreign_code(&[c"rounds", c"turns"]);
        run_write(
            client,
            "UPDATE prompt.rounds r SET results = $3::jsonb WHERE r.conversation_id = $1 AND r.turn_id = $2 \
             AND r.n = (SELECT max(n) FROM prompt.rounds x WHERE x.conversation_id = $1 AND x.turn_id = $2) \
             RETURNING r.n",
            &[pg_uuid(conv).into(), pg_uuid(turn).into(), results.0.clone().into()],
        )
        .first()
        .get_one::<i32>()
        .ok()
        .flatten()
    });
    updated.unwrap_or_else(|| {
        raise(
            Error::new(
                Code::RoundInvalid,
                format!("turn {turn} of conversation {conversation_id} has no round to take results"),
            )
            .hint("record_response records a run's step as a round; its tool calls' results follow."),
        )
    })
}
