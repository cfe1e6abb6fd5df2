//! Rounds of a run-backed turn (`prompt.rounds`): parsing with exact error paths (once,
//! at load), and rendering into items (docs/design.md, "History").

use serde_json::Value;
use uuid::Uuid;

use crate::error::{Code, Error, Result};
use crate::items::{Item, Part, PartKind};
use crate::kinds::{Role, Wire};
use crate::rows::User;
use crate::tokens::{Counter, IMAGE_TOKENS};
use crate::voice::{Row, Voices};

pub(crate) const ABORT_MARKER: &str = "[run aborted]";

/// Media types a provider accepts as an image part; others are indexed as lines.
pub(crate) const NATIVE_IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// One part of a round's `assistant` column, as parsed and checked.
#[derive(Debug, Clone, PartialEq)]
pub enum AssistantPart {
    /// Plain text the model said (a `text` part with no wire ids).
    Text(String),
    /// Text as its own wire recorded it (a Responses message with its id, a Gemini text
    /// part with its thought signature): `json` replays it there, `text` elsewhere.
    Said {
        /// The text itself, as every other wire reads it.
        text: String,
        /// The wire that recorded it (Responses or Gemini).
        wire: Wire,
        /// The part as that wire spells it (the message item or text part), replayed verbatim.
        json: String,
    },
    /// A `tool_call` part: a call the model made to a tool.
    ToolCall {
        /// The call's id (never empty, unique in the round); results name it as `call_id`.
        id: String,
        /// The called tool's name (never empty).
        name: String,
        /// The call's arguments as JSON text (an object; `{}` when the part has none).
        input: String,
        /// The thought signature Gemini attached to the call; `None` when it has none.
        signature: Option<String>,
        /// The call's Responses item id (`fc_…`).
        item_id: Option<String>,
    },
    /// Thinking or reasoning, kept verbatim for its provider's wire: `json` is the block
    /// as that wire spells it, `text` what it costs (its readable or encrypted text).
    Opaque {
        /// The provider's wire, the only one the block is replayed on.
        wire: Wire,
        /// The block as that wire spells it, replayed verbatim.
        json: String,
        /// The text the block is counted by (readable or encrypted; a provider block's JSON).
        text: String,
    },
}

/// An image a tool result captured (an entry of its `captures`): name, media type and
/// base64 data, rendered after the round when eligible.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    pub(crate) name: String,
    pub(crate) media_type: String,
    pub(crate) data: String,
    pub(crate) eligible: bool,
    pub(crate) bytes: Vec<u8>,
}

/// A tool call's result, an entry of a round's `results` column: the call it answers,
/// its content, whether it is an error, and its captures.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub(crate) call_id: String,
    pub(crate) content: String,
    pub(crate) is_error: bool,
    pub(crate) captures: Vec<Capture>,
}

/// A row read mid-round, an entry of a round's `steers` column: its author, text and
/// sending conversation (when it came from another one).
#[derive(Debug, Clone, PartialEq)]
pub struct Steer {
    pub(crate) author_id: Option<Uuid>,
    pub(crate) text: String,
    pub(crate) sender_conversation_id: Option<Uuid>,
}

/// One stored round as its columns arrive (JSON as text), before [`parse`].
#[derive(Debug, Clone, PartialEq)]
pub struct RoundRow {
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
    pub(crate) assistant: Vec<AssistantPart>,
    pub(crate) results: Vec<ToolResult>,
    pub(crate) steers: Vec<Steer>,
    pub(crate) aborted: bool,
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
}

fn parse_json(text: &str, ctx: &Ctx<'_>) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| ctx.err("", format!("not JSON ({e})")))
}

fn as_list<'v>(v: &'v Value, ctx: &Ctx<'_>) -> Result<&'v [Value]> {
    match v {
        Value::Null => Ok(&[]),
        Value::Array(a) => Ok(a),
        _ => Err(ctx.err("", "not a list")),
    }
}

fn string_field(
    obj: &serde_json::Map<String, Value>,
    key: &str,
    path: &str,
    ctx: &Ctx<'_>,
    required: bool,
) -> Result<String> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) if !required => Ok(String::new()),
        None => Err(ctx.err(&format!("{path}/{key}"), "missing")),
        Some(_) => Err(ctx.err(&format!("{path}/{key}"), "not a string")),
    }
}

fn uuid_field(obj: &serde_json::Map<String, Value>, key: &str, path: &str, ctx: &Ctx<'_>) -> Result<Option<Uuid>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Uuid::parse_str(s)
            .map(Some)
            .map_err(|_| ctx.err(&format!("{path}/{key}"), "not a uuid")),
        Some(_) => Err(ctx.err(&format!("{path}/{key}"), "not a uuid")),
    }
}

fn bool_field(
    obj: &serde_json::Map<String, Value>,
    key: &str,
    path: &str,
    ctx: &Ctx<'_>,
    default: bool,
) -> Result<bool> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ctx.err(&format!("{path}/{key}"), "not a boolean")),
    }
}

fn object<'v>(v: &'v Value, path: &str, ctx: &Ctx<'_>) -> Result<&'v serde_json::Map<String, Value>> {
    v.as_object().ok_or_else(|| ctx.err(path, "not an object"))
}

/// Parses and checks one stored round, its columns as JSON text. `turn` names it in
/// errors.
pub fn parse(row: &RoundRow, turn: Option<Uuid>) -> Result<Round> {
    let ctx = |column| Ctx { turn, n: row.n, column };
    let assistant = parse_json(&row.assistant, &ctx("assistant"))?;
    let results = parse_json(&row.results, &ctx("results"))?;
    let steers = parse_json(&row.steers, &ctx("steers"))?;
    parse_values(row.n, [&assistant, &results, &steers], row.aborted, turn)
}

/// Checks one stored round whose columns (assistant, results, steers) were read as
/// JSON values already.
pub fn parse_values(n: i32, columns: [&Value; 3], aborted: bool, turn: Option<Uuid>) -> Result<Round> {
    let [assistant, results, steers] = columns;
    let ctx = |column| Ctx { turn, n, column };
    let assistant = parse_assistant(assistant, &ctx("assistant"))?;
    let results = parse_results(results, &assistant, &ctx("results"))?;
    let steers = parse_steers(steers, &ctx("steers"))?;
    Ok(Round {
        n,
        assistant,
        results,
        steers,
        aborted,
    })
}

fn parse_assistant(v: &Value, ctx: &Ctx<'_>) -> Result<Vec<AssistantPart>> {
    let mut assistant = Vec::new();
    for (i, p) in as_list(v, ctx)?.iter().enumerate() {
        let path = format!("/{i}");
        let obj = object(p, &path, ctx)?;
        match obj.get("type").and_then(Value::as_str) {
            Some("text") => assistant.push(text(obj, &path, ctx)?),
            Some("tool_call") => {
                let call = tool_call(obj, &path, ctx)?;
                let dup = assistant
                    .iter()
                    .any(|a| matches!((a, &call), (AssistantPart::ToolCall { id, .. }, AssistantPart::ToolCall { id: new, .. }) if id == new));
                if let (true, AssistantPart::ToolCall { id, .. }) = (dup, &call) {
                    return Err(ctx.err(&format!("{path}/id"), format!("tool_call id \"{id}\" repeated")));
                }
                assistant.push(call);
            }
            Some(kind @ ("thinking" | "redacted_thinking" | "reasoning" | "thought")) => {
                assistant.push(opaque(kind, obj, &path, ctx)?);
            }
            Some("provider") => assistant.push(provider(obj, &path, ctx)?),
            Some(other) => return Err(ctx.err(&format!("{path}/type"), format!("unknown part type \"{other}\""))),
            None => return Err(ctx.err(&format!("{path}/type"), "missing part type")),
        }
    }
    Ok(assistant)
}

fn tool_call(obj: &serde_json::Map<String, Value>, path: &str, ctx: &Ctx<'_>) -> Result<AssistantPart> {
    let id = string_field(obj, "id", path, ctx, true)?;
    let name = string_field(obj, "name", path, ctx, true)?;
    if id.is_empty() {
        return Err(ctx.err(&format!("{path}/id"), "empty tool_call id"));
    }
    if name.is_empty() {
        return Err(ctx.err(&format!("{path}/name"), "empty tool_call name"));
    }
    let input = match obj.get("input") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(v @ Value::Object(_)) => v.to_string(),
        Some(_) => return Err(ctx.err(&format!("{path}/input"), "not an object")),
    };
    Ok(AssistantPart::ToolCall {
        id,
        name,
        input,
        signature: optional_string(obj, "signature", path, ctx)?,
        item_id: optional_string(obj, "item_id", path, ctx)?,
    })
}

fn optional_string(
    obj: &serde_json::Map<String, Value>,
    key: &str,
    path: &str,
    ctx: &Ctx<'_>,
) -> Result<Option<String>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ctx.err(&format!("{path}/{key}"), "not a string")),
    }
}

/// A text part: plain, or as its wire recorded it — `item_id` (and `phase`) of a
/// Responses message, or `signature`, a Gemini thought signature.
fn text(obj: &serde_json::Map<String, Value>, path: &str, ctx: &Ctx<'_>) -> Result<AssistantPart> {
    let text = string_field(obj, "text", path, ctx, true)?;
    let q = |v: &str| Value::String(v.to_string()).to_string();
    let item_id = optional_string(obj, "item_id", path, ctx)?;
    let phase = optional_string(obj, "phase", path, ctx)?;
    let signature = optional_string(obj, "signature", path, ctx)?;
    match (item_id, signature) {
        (None, None) if phase.is_none() => Ok(AssistantPart::Text(text)),
        (Some(id), None) => {
            let phase = phase.map_or(String::new(), |p| format!(r#","phase":{}"#, q(&p)));
            let json = format!(
                r#"{{"type":"message","id":{},"role":"assistant","status":"completed","content":[{{"type":"output_text","text":{},"annotations":[]}}]{phase}}}"#,
                q(&id),
                q(&text)
            );
            Ok(AssistantPart::Said {
                text,
                wire: Wire::Responses,
                json,
            })
        }
        (None, Some(sig)) if phase.is_none() => {
            let json = format!(r#"{{"text":{},"thoughtSignature":{}}}"#, q(&text), q(&sig));
            Ok(AssistantPart::Said {
                text,
                wire: Wire::Gemini,
                json,
            })
        }
        _ => Err(ctx.err(
            path,
            "a text part carries a Responses item_id (and phase) or a Gemini signature, not both",
        )),
    }
}

/// A provider's block pgprompt does not interpret (a server tool's call and result, a
/// tool search, a compaction item, ...), kept verbatim for its wire.
fn provider(obj: &serde_json::Map<String, Value>, path: &str, ctx: &Ctx<'_>) -> Result<AssistantPart> {
    let wire = match obj.get("wire").and_then(Value::as_str).map(Wire::parse) {
        Some(Some(w)) => w,
        _ => return Err(ctx.err(&format!("{path}/wire"), "not one of anthropic, chat, responses, gemini")),
    };
    let block = match obj.get("block") {
        Some(b @ Value::Object(_)) => b.to_string(),
        _ => return Err(ctx.err(&format!("{path}/block"), "not an object")),
    };
    Ok(AssistantPart::Opaque {
        wire,
        text: block.clone(),
        json: block,
    })
}

/// A thinking or reasoning part, as the round stores it, turned into the block its
/// provider's wire replays: Anthropic `thinking` {thinking, signature} and
/// `redacted_thinking` {data}; a Responses `reasoning` item {id, summary, encrypted_content?};
/// a Gemini `thought` {text, signature?}.
fn opaque(kind: &str, obj: &serde_json::Map<String, Value>, path: &str, ctx: &Ctx<'_>) -> Result<AssistantPart> {
    let s = |key: &str, required: bool| string_field(obj, key, path, ctx, required);
    // Each block in its provider's documented key order (written by hand: serde_json's
    // maps sort their keys).
    let q = |v: &str| Value::String(v.to_string()).to_string();
    let (wire, block, text) = match kind {
        "thinking" => {
            let (thinking, signature) = (s("thinking", true)?, s("signature", true)?);
            let block = format!(
                r#"{{"type":"thinking","thinking":{},"signature":{}}}"#,
                q(&thinking),
                q(&signature)
            );
            (Wire::Anthropic, block, thinking)
        }
        "redacted_thinking" => {
            let data = s("data", true)?;
            (
                Wire::Anthropic,
                format!(r#"{{"type":"redacted_thinking","data":{}}}"#, q(&data)),
                data,
            )
        }
        "reasoning" => {
            let id = s("id", true)?;
            let summary = match obj.get("summary") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(list)) => list.clone(),
                Some(_) => return Err(ctx.err(&format!("{path}/summary"), "not a list")),
            };
            let mut text: String = summary
                .iter()
                .filter_map(|x| x.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n");
            let mut block = format!(
                r#"{{"type":"reasoning","id":{},"summary":{}"#,
                q(&id),
                Value::Array(summary)
            );
            if let Some(Value::String(e)) = obj.get("encrypted_content") {
                text.push_str(e);
                block.push_str(&format!(r#","encrypted_content":{}"#, q(e)));
            }
            block.push('}');
            (Wire::Responses, block, text)
        }
        _ => {
            let text = s("text", true)?;
            let mut block = format!(r#"{{"text":{},"thought":true"#, q(&text));
            if let Some(Value::String(sig)) = obj.get("signature") {
                block.push_str(&format!(r#","thoughtSignature":{}"#, q(sig)));
            }
            block.push('}');
            (Wire::Gemini, block, text)
        }
    };
    Ok(AssistantPart::Opaque {
        wire,
        json: block,
        text,
    })
}

fn parse_results(v: &Value, assistant: &[AssistantPart], ctx: &Ctx<'_>) -> Result<Vec<ToolResult>> {
    let mut results = Vec::new();
    for (i, r) in as_list(v, ctx)?.iter().enumerate() {
        let path = format!("/{i}");
        let obj = object(r, &path, ctx)?;
        let call_id = string_field(obj, "call_id", &path, ctx, true)?;
        let matched = assistant
            .iter()
            .any(|a| matches!(a, AssistantPart::ToolCall { id, .. } if *id == call_id));
        if !matched {
            return Err(ctx.err(
                &format!("{path}/call_id"),
                format!("result for call \"{call_id}\" has no matching tool_call"),
            ));
        }
        let captures = match obj.get("captures").unwrap_or(&Value::Null) {
            Value::Null => Vec::new(),
            Value::Array(list) => list
                .iter()
                .enumerate()
                .map(|(j, c)| capture(c, &format!("{path}/captures/{j}"), ctx))
                .collect::<Result<_>>()?,
            _ => return Err(ctx.err(&format!("{path}/captures"), "not a list")),
        };
        results.push(ToolResult {
            call_id,
            content: string_field(obj, "content", &path, ctx, false)?,
            is_error: bool_field(obj, "is_error", &path, ctx, false)?,
            captures,
        });
    }
    Ok(results)
}

fn capture(c: &Value, path: &str, ctx: &Ctx<'_>) -> Result<Capture> {
    let obj = object(c, path, ctx)?;
    let data = string_field(obj, "data", path, ctx, true)?;
    let bytes =
        crate::fields::decode_base64(&data).ok_or_else(|| ctx.err(&format!("{path}/data"), "not valid base64"))?;
    Ok(Capture {
        name: string_field(obj, "name", path, ctx, true)?,
        media_type: string_field(obj, "media_type", path, ctx, true)?,
        data,
        eligible: bool_field(obj, "eligible", path, ctx, true)?,
        bytes,
    })
}

fn parse_steers(v: &Value, ctx: &Ctx<'_>) -> Result<Vec<Steer>> {
    let mut steers = Vec::new();
    for (i, s) in as_list(v, ctx)?.iter().enumerate() {
        let path = format!("/{i}");
        let obj = object(s, &path, ctx)?;
        steers.push(Steer {
            author_id: uuid_field(obj, "author_id", &path, ctx)?,
            text: string_field(obj, "text", &path, ctx, true)?,
            sender_conversation_id: uuid_field(obj, "sender_conversation_id", &path, ctx)?,
        });
    }
    Ok(steers)
}

/// Where a round may sit (checked on write): on a run reply turn, numbered right after
/// the round before it (`n` = 1, or round `n - 1` exists).
pub fn check_place(turn: Uuid, n: i32, kind: Option<&str>, mode: Option<&str>, previous_exists: bool) -> Result<()> {
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
        .filter(|p| !matches!(p, AssistantPart::Text(t) | AssistantPart::Said { text: t, .. } if t.is_empty()))
        .filter(|p| thinking == Thinking::Keep || !matches!(p, AssistantPart::Opaque { .. }))
        .map(|p| match p {
            AssistantPart::Text(t) => Part {
                kind: PartKind::Text(t.clone()),
                tokens: counter.count(t),
            },
            AssistantPart::Said { text, wire, json } => Part {
                tokens: counter.count(text),
                kind: PartKind::Said {
                    text: text.clone(),
                    wire: *wire,
                    json: json.clone(),
                },
            },
            AssistantPart::ToolCall {
                id,
                name,
                input,
                signature,
                item_id,
            } => Part {
                tokens: counter.count(name) + counter.count(input),
                kind: PartKind::ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                    signature: signature.clone(),
                    item_id: item_id.clone(),
                },
            },
            AssistantPart::Opaque { wire, json, text } => Part {
                tokens: counter.count(text),
                kind: PartKind::Opaque {
                    wire: *wire,
                    json: json.clone(),
                },
            },
        })
        .collect()
}

/// How a round renders: its thinking kept (the current run, or the answerer's newest
/// earlier run under reasoning replay) or dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thinking {
    /// The round's opaque thinking and reasoning blocks are rendered.
    Keep,
    /// The round's opaque blocks are left out.
    Drop,
}

pub(crate) fn render(
    round: &Round,
    voices: &Voices<'_>,
    answerer: Option<&User>,
    native_images: bool,
    thinking: Thinking,
    counter: &mut Counter<'_>,
    block: usize,
) -> Vec<Item> {
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
        items.push(separate(vec![Part {
            tokens: counter.count(&r.content),
            kind: PartKind::ToolResult {
                call_id: r.call_id.clone(),
                content: r.content.clone(),
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
    let captures = captures_parts(round, native_images, counter);
    if !captures.is_empty() {
        items.push(separate(captures));
    }
    if let Some(first) = items.first_mut() {
        // A round never merges into what precedes it.
        first.boundary = true;
    }
    items
}

/// The ids of the round's calls that have no result, in call order.
fn unanswered(round: &Round) -> impl Iterator<Item = &str> {
    round.assistant.iter().filter_map(move |p| match p {
        AssistantPart::ToolCall { id, .. } if !round.results.iter().any(|r| r.call_id == *id) => Some(id.as_str()),
        _ => None,
    })
}

/// The eligible captures of all results, in result then link order, each distinct
/// image once: image parts for a native model, else one line per image.
fn captures_parts(round: &Round, native_images: bool, counter: &mut Counter<'_>) -> Vec<Part> {
    let mut seen: Vec<&[u8]> = Vec::new();
    let mut parts = Vec::new();
    let mut lines = Vec::new();
    for c in round.results.iter().flat_map(|r| &r.captures).filter(|c| c.eligible) {
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
        assert_eq!(crate::fields::decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(crate::fields::decode_base64("aGVsbG8h").unwrap(), b"hello!");
        assert_eq!(crate::fields::decode_base64("aGk=").unwrap(), b"hi");
        assert_eq!(crate::fields::decode_base64("aA==").unwrap(), b"h");
        assert_eq!(crate::fields::decode_base64("").unwrap(), b"");
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
            assert!(crate::fields::decode_base64(bad).is_none(), "{bad}");
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
        )
        .unwrap();
        assert_eq!(r.assistant.len(), 2);
        assert_eq!(r.results[0].captures[0].bytes, b"hi");
        assert!(r.results[0].captures[0].eligible);
        assert_eq!(r.steers[0].text, "faster");
    }

    fn refusal(assistant: &str, results: &str, steers: &str) -> String {
        let e = parse(&row(assistant, results, steers), None).unwrap_err();
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
