//! Rounds of a run-backed turn (`prompt.rounds`): parsing with exact error paths (once,
//! at load), and rendering into items (docs/design.md, "History").

use serde_json::Value;
use uuid::Uuid;

use crate::clearing::{Cleared, Record};
use crate::error::{Code, Error, Result};
use crate::items::{counted, Item, Part, PartKind};
use crate::json_at::{At, Checked, Obj, Refusal};
use crate::kinds::Role;
use crate::part_json::{self, Place, Read, Replay};
use crate::rows::User;
use crate::tokens::{Counter, IMAGE_TOKENS};
use crate::voice::{Row, Voices};

pub(crate) const ABORT_MARKER: &str = "[run aborted]";

/// Media types a provider accepts as an image part; others are indexed as lines.
pub(crate) const NATIVE_IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// An image a tool result captured (an entry of its `captures`): name, media type and
/// base64 data, rendered after the round when eligible.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Capture {
    pub(crate) name: String,
    pub(crate) media_type: String,
    pub(crate) data: String,
    pub(crate) eligible: bool,
    pub(crate) bytes: Vec<u8>,
}

/// A tool call's result, an entry of a round's `results` column: the call it answers,
/// its content, whether it is an error, and its captures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResult {
    pub(crate) call_id: String,
    pub(crate) content: String,
    pub(crate) is_error: bool,
    pub(crate) captures: Vec<Capture>,
}

/// A row read mid-round, an entry of a round's `steers` column: its author, text and
/// sending conversation (when it came from another one).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Steer {
    pub(crate) author_id: Option<Uuid>,
    pub(crate) text: String,
    pub(crate) sender_conversation_id: Option<Uuid>,
}

/// One stored round as its columns arrive (JSON as text), before [`parse`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RoundRow {
    /// The round's number in its turn, from 1 (`n`).
    pub n: i32,
    /// The `assistant` column: the model's parts, a JSON list.
    pub assistant: String,
    /// The `results` column: one result per tool call, a JSON list.
    pub results: String,
    /// The `steers` column: the rows read mid-round, a JSON list.
    pub steers: String,
    /// The `aborted` column: whether the run was aborted in this round.
    pub aborted: bool,
}

/// One round of a run-backed turn (`prompt.rounds`), parsed and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// The round's number in its turn, from 1 (`n`).
    pub n: i32,
    pub(crate) assistant: Vec<PartKind>,
    pub(crate) results: Vec<ToolResult>,
    pub(crate) steers: Vec<Steer>,
    pub(crate) aborted: bool,
    /// What the request that first carried this round cleared (`rounds.cleared`).
    pub(crate) cleared: Option<Record>,
    /// Whether a request of its own turn carried it already (`sent_at`): from then on
    /// nothing is written on it.
    pub(crate) sent: bool,
}

struct Ctx<'a> {
    turn: Option<Uuid>,
    n: i32,
    column: &'a str,
}

impl Ctx<'_> {
    fn err(&self, path: &str, what: impl AsRef<str>) -> Error {
        let full = format!("/{}{}", self.column, path);
        let turn = self.turn.map(|t| format!(" of turn {t}")).unwrap_or_default();
        Error::new(Code::RoundInvalid, format!("round {}{}: {} at {}", self.n, turn, what.as_ref(), full))
            .detail(format!("The path {full} of round {} is not valid.", self.n))
            .hint("A round holds assistant [{type: text|tool_call}], results [{call_id, content, is_error, captures}] and steers [{author_id, text}].")
    }

    /// A value refused, as this round's error.
    fn refused(&self, r: Refusal) -> Error {
        self.err(&r.path, r.message)
    }

    /// What a reader took, or its refusal as this round's error.
    fn or<T>(&self, checked: Checked<T>) -> Result<T> {
        checked.map_err(|r| self.refused(r))
    }
}

fn parse_json(text: &str, ctx: &Ctx<'_>) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| ctx.err("", format!("not JSON ({e})")))
}

/// A column's list of entries (`null`: none).
fn as_list<'v>(at: &At<'v>, ctx: &Ctx<'_>) -> Result<impl Iterator<Item = At<'v>>> {
    let items = if at.is_null() {
        None
    } else {
        Some(ctx.or(at.list("not a list"))?)
    };
    Ok(items.into_iter().flatten())
}

fn string_field(obj: &Obj<'_>, key: &str, ctx: &Ctx<'_>, required: bool) -> Result<String> {
    let at = obj.at(key);
    match at.value {
        Value::String(s) => Ok(s.clone()),
        Value::Null if !required => Ok(String::new()),
        _ if at.is_absent() => Err(ctx.refused(at.refuse("missing"))),
        _ => Err(ctx.refused(at.refuse("not a string"))),
    }
}

fn uuid_field(obj: &Obj<'_>, key: &str, ctx: &Ctx<'_>) -> Result<Option<Uuid>> {
    ctx.or(obj
        .at(key)
        .optional(|v| v.as_str().and_then(|s| Uuid::parse_str(s).ok()), "not a uuid"))
}

fn bool_field(obj: &Obj<'_>, key: &str, ctx: &Ctx<'_>, default: bool) -> Result<bool> {
    ctx.or(obj.at(key).flag(default, "not a boolean"))
}

fn object<'v>(at: &At<'v>, ctx: &Ctx<'_>) -> Result<Obj<'v>> {
    ctx.or(at.object("not an object"))
}

/// Parses and checks one stored round, its columns as JSON text, its recorded parts
/// replayed by `replay`. `turn` names it in errors.
pub(crate) fn parse(row: &RoundRow, turn: Option<Uuid>, replay: Replay) -> Result<Round> {
    let ctx = |column| Ctx { turn, n: row.n, column };
    let assistant = parse_json(&row.assistant, &ctx("assistant"))?;
    let results = parse_json(&row.results, &ctx("results"))?;
    let steers = parse_json(&row.steers, &ctx("steers"))?;
    parse_values(row.n, [&assistant, &results, &steers], row.aborted, turn, replay)
}

/// Checks one stored round whose columns (assistant, results, steers) were read as
/// JSON values already, its recorded parts replayed by `replay`.
pub(crate) fn parse_values(
    n: i32,
    columns: [&Value; 3],
    aborted: bool,
    turn: Option<Uuid>,
    replay: Replay,
) -> Result<Round> {
    let [assistant, results, steers] = columns;
    let ctx = |column| Ctx { turn, n, column };
    let assistant = parse_assistant(&At::root(assistant, ""), &ctx("assistant"), replay)?;
    let results = parse_results(&At::root(results, ""), &assistant, &ctx("results"))?;
    let steers = parse_steers(&At::root(steers, ""), &ctx("steers"))?;
    Ok(Round {
        n,
        assistant,
        results,
        steers,
        aborted,
        cleared: None,
        sent: false,
    })
}

fn parse_assistant(v: &At<'_>, ctx: &Ctx<'_>, replay: Replay) -> Result<Vec<PartKind>> {
    let mut assistant: Vec<PartKind> = Vec::new();
    for p in as_list(v, ctx)? {
        let part = match ctx.or(part_json::read(&p, Place::Round))? {
            Read::Part(kind) => kind,
            Read::Recorded(fields) => ctx.or(replay(&fields))?,
        };
        if let PartKind::ToolCall { id, .. } = &part {
            let dup = assistant.iter().any(|a| a.call_id() == Some(id.as_str()));
            if dup {
                return Err(ctx.refused(
                    p.child(&Value::Null, "id")
                        .refuse(format_args!("tool_call id \"{id}\" repeated")),
                ));
            }
        }
        assistant.push(part);
    }
    Ok(assistant)
}

fn parse_results(v: &At<'_>, assistant: &[PartKind], ctx: &Ctx<'_>) -> Result<Vec<ToolResult>> {
    let mut results = Vec::new();
    for r in as_list(v, ctx)? {
        let obj = object(&r, ctx)?;
        let call_id = string_field(&obj, "call_id", ctx, true)?;
        let matched = assistant.iter().any(|a| a.call_id() == Some(call_id.as_str()));
        if !matched {
            return Err(ctx.refused(
                obj.at("call_id")
                    .refuse(format_args!("result for call \"{call_id}\" has no matching tool_call")),
            ));
        }
        let captures = as_list(&obj.at("captures"), ctx)?
            .map(|c| capture(&c, ctx))
            .collect::<Result<_>>()?;
        results.push(ToolResult {
            call_id,
            content: string_field(&obj, "content", ctx, false)?,
            is_error: bool_field(&obj, "is_error", ctx, false)?,
            captures,
        });
    }
    Ok(results)
}

fn capture(c: &At<'_>, ctx: &Ctx<'_>) -> Result<Capture> {
    let obj = object(c, ctx)?;
    let data = string_field(&obj, "data", ctx, true)?;
    let bytes =
        crate::part_json::decode_base64(&data).ok_or_else(|| ctx.refused(obj.at("data").refuse("not valid base64")))?;
    Ok(Capture {
        name: string_field(&obj, "name", ctx, true)?,
        media_type: string_field(&obj, "media_type", ctx, true)?,
        data,
        eligible: bool_field(&obj, "eligible", ctx, true)?,
        bytes,
    })
}

fn parse_steers(v: &At<'_>, ctx: &Ctx<'_>) -> Result<Vec<Steer>> {
    let mut steers = Vec::new();
    for s in as_list(v, ctx)? {
        let obj = object(&s, ctx)?;
        steers.push(Steer {
            author_id: uuid_field(&obj, "author_id", ctx)?,
            text: string_field(&obj, "text", ctx, true)?,
            sender_conversation_id: uuid_field(&obj, "sender_conversation_id", ctx)?,
        });
    }
    Ok(steers)
}

/// Where a round may sit (checked on write): on a run reply turn, numbered right after
/// the round before it (`n` = 1, or round `n - 1` exists).
pub(crate) fn check_place(
    turn: Uuid,
    n: i32,
    kind: Option<&str>,
    mode: Option<&str>,
    previous_exists: bool,
) -> Result<()> {
    let refuse = |path: &str, what: String, hint: &str| {
        Err(Error::new(
            Code::RoundInvalid,
            format!("round {n} of turn {turn}: {what} at {path}"),
        )
        .detail(format!("The value at {path} is not valid."))
        .hint(hint.to_string()))
    };
    match (kind, mode) {
        (Some("reply"), Some("run")) => {}
        (Some("reply"), _) => {
            return refuse(
                "/turn_id",
                "its turn is a direct reply, and rounds belong to run turns".into(),
                "Set the turn's mode to 'run' when it is written.",
            )
        }
        (Some(kind), _) => {
            return refuse(
                "/turn_id",
                format!("its turn is a {kind} turn, and rounds belong to run reply turns"),
                "Rounds record a run-backed reply's model calls.",
            )
        }
        (None, _) => return refuse("/turn_id", "its turn does not exist".into(), "Write the turn first."),
    }
    if n > 1 && !previous_exists {
        return refuse(
            "/n",
            format!(
                "round {} is missing: rounds are numbered 1, 2, 3, ... without a gap",
                n - 1
            ),
            "Write the rounds in order, each numbered one more than the last.",
        );
    }
    Ok(())
}

/// Renders one round: the assistant item, each result, the abort marker, each steer
/// (read for the turn answered by `answerer`), then the captures item.
/// The round's assistant parts, counted; thinking kept or dropped.
fn assistant_parts(round: &Round, thinking: Thinking, counter: &mut Counter<'_>) -> Vec<Part> {
    round
        .assistant
        .iter()
        .filter(|p| p.text().is_none_or(|t| !t.is_empty()))
        .filter(|p| match p {
            PartKind::Opaque { .. } => thinking == Thinking::Keep,
            PartKind::Text(_)
            | PartKind::Said { .. }
            | PartKind::ToolCall { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Image { .. } => true,
        })
        .map(|p| counted(p.clone(), counter))
        .collect()
}

/// How a round renders: its thinking kept (the current run, or the answerer's newest
/// earlier run under reasoning replay) or dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Thinking {
    /// The round's opaque thinking and reasoning blocks are rendered.
    Keep,
    /// The round's opaque blocks are left out.
    Drop,
}

/// How a round is read: the answerer it is read for, whether its model takes images,
/// its thinking, what the request clears, and the block its items count in.
pub(crate) struct Reading<'a> {
    pub(crate) answerer: Option<&'a User>,
    pub(crate) native_images: bool,
    pub(crate) thinking: Thinking,
    pub(crate) cleared: &'a Cleared,
    pub(crate) block: usize,
}

pub(crate) fn render(round: &Round, voices: &Voices<'_>, how: &Reading<'_>, counter: &mut Counter<'_>) -> Vec<Item> {
    let Reading {
        answerer,
        native_images,
        thinking,
        cleared,
        block,
    } = *how;
    let mut items = Vec::new();
    let parts = assistant_parts(round, thinking, counter);
    if !parts.is_empty() {
        items.push(Item::new(Role::Assistant, parts, block));
    }
    let separate = |parts: Vec<Part>| Item {
        role: Role::User,
        parts,
        separate: true,
        boundary: false,
        block,
    };
    for r in &round.results {
        // A cleared result is sent as the placeholder; its call stays paired with it.
        let content = cleared.placeholder(round.n, &r.call_id).unwrap_or(&r.content);
        items.push(separate(vec![Part {
            tokens: counter.count(content),
            kind: PartKind::ToolResult {
                call_id: r.call_id.clone(),
                content: content.to_string(),
                is_error: r.is_error,
            },
        }]));
    }
    if round.aborted {
        // Every call gets a result (the providers refuse a call left unanswered): a call
        // the abort cut off is answered by the abort marker, as an error.
        for call_id in unanswered(round) {
            items.push(separate(vec![Part {
                tokens: counter.count(ABORT_MARKER),
                kind: PartKind::ToolResult {
                    call_id: call_id.to_string(),
                    content: ABORT_MARKER.into(),
                    is_error: true,
                },
            }]));
        }
        items.push(separate(vec![Part {
            kind: PartKind::Text(ABORT_MARKER.into()),
            tokens: counter.count(ABORT_MARKER),
        }]));
    }
    for s in &round.steers {
        if s.text.is_empty() {
            continue;
        }
        let row = Row {
            text: s.text.as_str().into(),
            author: s.author_id,
            sender_conversation: s.sender_conversation_id,
            kernel: false,
            stored: &[],
        };
        items.push(separate(vec![voices.words(row, answerer, counter)]));
    }
    let captures = captures_parts(round, native_images, cleared, counter);
    if !captures.is_empty() {
        items.push(separate(captures));
    }
    if let Some(first) = items.first_mut() {
        // A round never merges into what precedes it.
        first.boundary = true;
    }
    items
}

impl Round {
    /// Whether the round called tools and a call has no result yet (and the run was not
    /// aborted there): no provider takes such a request until `record_tool_results`
    /// writes them.
    pub(crate) fn awaits_results(&self) -> bool {
        !self.aborted && unanswered(self).next().is_some()
    }

    /// The round as another turn's request carries it while its run waits for the calls'
    /// results (a Side, a sibling or a later turn compiled between `record_response` and
    /// `record_tool_results`): its words and its steers, without the calls no provider
    /// takes unanswered, nor the thinking and provider blocks that led to them. Once the
    /// results are written, later requests carry the round whole.
    pub(crate) fn while_waiting(&self) -> Round {
        Round {
            n: self.n,
            assistant: self.assistant.iter().filter(|p| p.text().is_some()).cloned().collect(),
            results: Vec::new(),
            steers: self.steers.clone(),
            aborted: false,
            cleared: None,
            sent: self.sent,
        }
    }

    /// The name of the tool the round's call `call_id` called.
    pub(crate) fn tool_of(&self, call_id: &str) -> Option<&str> {
        self.assistant.iter().find_map(|p| match p {
            PartKind::ToolCall { id, name, .. } if id == call_id => Some(name.as_str()),
            PartKind::ToolCall { .. }
            | PartKind::Text(_)
            | PartKind::Said { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Image { .. }
            | PartKind::Opaque { .. } => None,
        })
    }
}

/// What the rounds' records cleared (a turn's rounds, as one request carries them, or as
/// history reads a run). A record is taken only as pgprompt writes one: on its round, of
/// results its rounds up to it hold, its placeholder a short text — and, where the
/// turn's frozen rule is known, that rule's placeholder. Any other record was not
/// pgprompt's (a writer's trigger, a forged restore): its results are read whole.
pub(crate) fn cleared_by<'r>(rounds: impl IntoIterator<Item = &'r Round> + Clone, rule: Option<&str>) -> Cleared {
    let mut c = Cleared::default();
    let mut records = rounds
        .clone()
        .into_iter()
        .filter_map(|r| r.cleared.as_ref().map(|c| (r.n, c)))
        .peekable();
    if records.peek().is_none() {
        return c;
    }
    let by_n: std::collections::BTreeMap<i32, &Round> = rounds.into_iter().map(|r| (r.n, r)).collect();
    for (n, record) in records {
        let placeholder_ok =
            crate::clearing::fits_placeholder(&record.placeholder) && rule.is_none_or(|p| p == record.placeholder);
        let keys_ok = record.results.iter().all(|k| {
            k.round <= n
                && by_n
                    .get(&k.round)
                    .is_some_and(|r| r.results.iter().any(|x| x.call_id == k.call_id))
        });
        if placeholder_ok && keys_ok {
            c.add(record);
        }
    }
    c
}

/// Keeps the rounds a request may carry: those before the first round that awaits its
/// results (a compile between a response and its tool results sends the request that
/// response answered, and marks nothing sent).
pub(crate) fn keep_sendable(rounds: &mut Vec<Round>) {
    if let Some(at) = rounds.iter().position(Round::awaits_results) {
        rounds.truncate(at);
    }
}

/// The ids of the round's calls that have no result, in call order.
fn unanswered(round: &Round) -> impl Iterator<Item = &str> {
    round
        .assistant
        .iter()
        .filter_map(PartKind::call_id)
        .filter(move |id| !round.results.iter().any(|r| r.call_id == *id))
}

/// The eligible captures of all results not cleared (a cleared result's pictures go with
/// it), in result then link order, each distinct image once: image parts for a native
/// model, else one line per image.
fn captures_parts(round: &Round, native_images: bool, cleared: &Cleared, counter: &mut Counter<'_>) -> Vec<Part> {
    let mut seen: Vec<&[u8]> = Vec::new();
    let mut parts = Vec::new();
    let mut lines = Vec::new();
    let kept = round
        .results
        .iter()
        .filter(|r| cleared.placeholder(round.n, &r.call_id).is_none());
    for c in kept.flat_map(|r| &r.captures).filter(|c| c.eligible) {
        if seen.contains(&c.bytes.as_slice()) {
            continue;
        }
        seen.push(&c.bytes);
        if native_images && NATIVE_IMAGE_TYPES.contains(&c.media_type.as_str()) {
            parts.push(Part {
                kind: PartKind::Image {
                    media_type: c.media_type.clone(),
                    data: c.data.clone(),
                },
                tokens: IMAGE_TOKENS,
            });
        } else {
            lines.push(format!("[image {}: {} ({})]", seen.len(), c.name, c.media_type));
        }
    }
    if !lines.is_empty() {
        let text = lines.join("\n");
        parts.push(Part {
            tokens: counter.count(&text),
            kind: PartKind::Text(text),
        });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(assistant: &str, results: &str, steers: &str) -> RoundRow {
        RoundRow {
            n: 2,
            assistant: assistant.into(),
            results: results.into(),
            steers: steers.into(),
            aborted: false,
        }
    }

    #[test]
    fn base64_is_strict() {
        assert_eq!(crate::part_json::decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(crate::part_json::decode_base64("aGVsbG8h").unwrap(), b"hello!");
        assert_eq!(crate::part_json::decode_base64("aGk=").unwrap(), b"hi");
        assert_eq!(crate::part_json::decode_base64("aA==").unwrap(), b"h");
        assert_eq!(crate::part_json::decode_base64("").unwrap(), b"");
        for bad in [
            "aGVsbG8",
            "aGk",
            "a===",
            "aG=k",
            "aGVs bG8=",
            "aGVsbG8=aGk=",
            "aB==",
            "!!!!",
        ] {
            assert!(crate::part_json::decode_base64(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn parses_a_round() {
        let r = parse(
            &row(
                r#"[{"type":"text","text":"Let me look."},{"type":"tool_call","id":"c1","name":"read","input":{"path":"a"}}]"#,
                r#"[{"call_id":"c1","content":"file body","captures":[{"name":"a.png","media_type":"image/png","data":"aGk="}]}]"#,
                r#"[{"author_id":"00000000-0000-0000-0000-000000000001","text":"faster"}]"#,
            ),
            None,
            crate::wire::replay::part,
        )
        .unwrap();
        assert_eq!(r.assistant.len(), 2);
        assert_eq!(r.results[0].captures[0].bytes, b"hi");
        assert!(r.results[0].captures[0].eligible);
        assert_eq!(r.steers[0].text, "faster");
    }

    fn refusal(assistant: &str, results: &str, steers: &str) -> String {
        let e = parse(&row(assistant, results, steers), None, crate::wire::replay::part).unwrap_err();
        assert_eq!(e.code, Code::RoundInvalid);
        e.message
    }

    #[test]
    fn bad_rounds_are_refused_with_their_path() {
        let call = r#"[{"type":"tool_call","id":"c1","name":"read","input":{}}]"#;
        assert_eq!(
            refusal(call, r#"{"call_id":"c1"}"#, "[]"),
            "round_invalid: round 2: not a list at /results"
        );
        assert_eq!(
            refusal(call, r#"[{"call_id":"c9"}]"#, "[]"),
            "round_invalid: round 2: result for call \"c9\" has no matching tool_call at /results/0/call_id"
        );
        assert_eq!(
            refusal(r#"[{"type":"musing"}]"#, "[]", "[]"),
            "round_invalid: round 2: unknown part type \"musing\" at /assistant/0/type"
        );
        assert_eq!(
            refusal(r#"[{"type":"thinking","thinking":"hm"}]"#, "[]", "[]"),
            "round_invalid: round 2: missing at /assistant/0/signature"
        );
        assert_eq!(
            refusal(r#"[{"type":"reasoning","id":"rs_1","summary":{}}]"#, "[]", "[]"),
            "round_invalid: round 2: not a list at /assistant/0/summary"
        );
        assert_eq!(
            refusal(
                call,
                r#"[{"call_id":"c1","captures":[{"name":"x","media_type":"image/png","data":"%%%"}]}]"#,
                "[]"
            ),
            "round_invalid: round 2: not valid base64 at /results/0/captures/0/data"
        );
        assert_eq!(
            refusal("{", "[]", "[]"),
            "round_invalid: round 2: not JSON (EOF while parsing an object at line 1 column 1) at /assistant"
        );
        assert_eq!(
            refusal("[]", "[]", r#"[{"text":1}]"#),
            "round_invalid: round 2: not a string at /steers/0/text"
        );
    }
}
