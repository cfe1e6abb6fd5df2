//! A turn's JSON columns (docs/design.md, "Rows"): inline entries, variables, history
//! intent, raw input entries, tools, callables, request options and a sealed preface.
//! The write trigger and the loader parse them through these functions into typed
//! values, so what was accepted on write compiles, and nothing is parsed twice: the
//! loader hands them the values it read from jsonb's binary form ([`JsonInput`]); JSON
//! text is parsed only where a caller holds text (a write-time check, a test).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{quote, Code, Error, Result};
use crate::items::PartKind;
pub use crate::json_input::JsonInput;
use crate::kinds::{PrefaceItem, Role};
use crate::macros;
use crate::template::{self, pointer_token, HistoryKnobs, Slot};

/// Bound of a document body, a template and an inline entry.
pub(crate) const MAX_TEXT_BYTES: usize = 64 * 1024;

/// Which per-turn block a slot-less inline entry lands in (its `"position"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// The `lead` block (the default).
    Lead,
    /// The `tail` block.
    Tail,
}

impl Position {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Position::Lead => "lead",
            Position::Tail => "tail",
        }
    }
}

/// One entry of `turns.inline`: a slot override or a text placed in the lead or tail block.
#[derive(Debug, Clone, PartialEq)]
pub enum InlineEntry {
    /// Replaces a slot's document for this turn alone.
    Slot {
        /// The slot replaced (`"slot"`: `system_prompt`, `character` or `persona`).
        slot: Slot,
        /// The text rendered in its place (`"text"`).
        text: String,
        /// Its role (`"role"`; `None`: the slot document's role, else `system`).
        role: Option<Role>,
    },
    /// Lands in the lead or tail block.
    Placed {
        /// The text rendered (`"text"`).
        text: String,
        /// Its role (`"role"`, `user` when absent).
        role: Role,
        /// The block it lands in (`"position"`, `lead` when absent).
        position: Position,
    },
}

fn parse_json<'a>(input: impl JsonInput<'a>, code: Code, column: &str) -> Result<Cow<'a, Value>> {
    input.value(|e| Error::new(code, format!("{column} is not JSON ({e})")))
}

fn field_error(code: Code, path: &str, what: impl AsRef<str>) -> Error {
    Error::new(code, format!("{} at {path}", what.as_ref())).detail(format!("The value at {path} is not valid."))
}

/// Refuses a text over the 64 KiB bound.
pub fn check_size(text: &str, what: &str) -> Result<()> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(Error::new(
            Code::DocumentTooLarge,
            format!("{what} is {} bytes; the limit is {MAX_TEXT_BYTES}", text.len()),
        )
        .hint("Split the text, or keep large material in memory entries or skills."));
    }
    Ok(())
}

/// Parses `turns.inline`.
pub fn parse_inline<'a>(input: impl JsonInput<'a>) -> Result<Vec<InlineEntry>> {
    const C: Code = Code::InlineEntryInvalid;
    let v = parse_json(input, C, "inline")?;
    let Value::Array(list) = v.as_ref() else {
        return Err(field_error(C, "/inline", "inline must be a list of entries"));
    };
    list.iter()
        .enumerate()
        .map(|(i, e)| inline_entry(e, &format!("/inline/{i}")))
        .collect()
}

/// Refuses a key of an inline entry outside `allowed`.
fn known_keys(obj: &Map<String, Value>, allowed: &[&str], base: &str, what: &str) -> Result<()> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(field_error(
            Code::InlineEntryInvalid,
            &format!("{base}/{}", pointer_token(key)),
            format!("unknown key \"{key}\" in {what}"),
        )),
        None => Ok(()),
    }
}

/// One inline entry, at JSON pointer `base`.
fn inline_entry(e: &Value, base: &str) -> Result<InlineEntry> {
    const C: Code = Code::InlineEntryInvalid;
    let Some(obj) = e.as_object() else {
        return Err(field_error(
            C,
            base,
            "an inline entry is an object {\"text\", \"role\"?, \"position\"?} or {\"slot\", \"text\"}",
        ));
    };
    let Some(Value::String(text)) = obj.get("text") else {
        return Err(field_error(
            C,
            &format!("{base}/text"),
            "an inline entry needs a string \"text\"",
        ));
    };
    let text = text.clone();
    check_size(&text, &format!("inline entry {base}"))?;
    macros::check(&text, &|_| false, &format!("inline entry {base}"))?;
    let role = match obj.get("role") {
        None | Some(Value::Null) => None,
        Some(r) => Some(r.as_str().and_then(Role::parse).ok_or_else(|| {
            field_error(
                C,
                &format!("{base}/role"),
                format!("role must be system, developer, user or assistant, not {r}"),
            )
        })?),
    };
    if let Some(slot) = obj.get("slot") {
        known_keys(obj, &["slot", "text", "role"], base, "a slot override")?;
        let Some(slot) = slot.as_str().and_then(Slot::parse) else {
            return Err(field_error(
                C,
                &format!("{base}/slot"),
                format!("slot must be system_prompt, character or persona, not {slot}"),
            ));
        };
        return Ok(InlineEntry::Slot { slot, text, role });
    }
    known_keys(obj, &["text", "role", "position"], base, "an inline entry")?;
    let position = match obj.get("position") {
        None | Some(Value::Null) => Position::Lead,
        Some(Value::String(s)) if s == "lead" => Position::Lead,
        Some(Value::String(s)) if s == "tail" => Position::Tail,
        Some(p) => {
            return Err(field_error(
                C,
                &format!("{base}/position"),
                format!("position must be lead or tail, not {p}"),
            ))
        }
    };
    Ok(InlineEntry::Placed {
        text,
        role: role.unwrap_or(Role::User),
        position,
    })
}

/// Parses `turns.variables`: string values, named like template variables.
pub fn parse_variables<'a>(input: impl JsonInput<'a>) -> Result<BTreeMap<String, String>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(input, C, "variables")?;
    let Value::Object(map) = v.as_ref() else {
        return Err(field_error(C, "/variables", "variables must be an object of strings"));
    };
    for (name, value) in map {
        let path = format!("/variables/{}", pointer_token(name));
        if !template::is_variable_name(name) || macros::is_macro(name) || name == macros::HISTORY_WORD {
            return Err(field_error(
                C,
                &path,
                format!(
                    "variable name {} must match [a-z][a-z0-9_]* and not be a macro",
                    quote(name)
                ),
            ));
        }
        let Some(text) = value.as_str() else {
            return Err(field_error(C, &path, "a variable's value must be a string"));
        };
        // A value is checked like a document: its macros render, a typo is refused.
        check_size(text, &format!("variable {path}"))?;
        macros::check(text, &|_| false, &format!("variable {path}"))?;
    }
    Ok(map
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => (k.clone(), s.clone()),
            other => (k.clone(), other.to_string()),
        })
        .collect())
}

/// Parses `turns.history`, the turn's history intent.
pub fn parse_history<'a>(input: impl JsonInput<'a>) -> Result<HistoryKnobs> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(input, C, "history")?;
    let (knobs, problems) = template::parse_history_intent(&v);
    match (knobs, problems.into_iter().next()) {
        (Some(k), None) => Ok(k),
        (_, Some(p)) => Err(field_error(C, &format!("/history{}", p.path), p.message)),
        (None, None) => Err(field_error(C, "/history", "invalid history intent")),
    }
}

/// A tool the turn declares: `{name, description, input_schema, deferred?}` as JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    /// `input_schema` as compact JSON text, as the wire renderers embed it.
    pub(crate) input_schema: String,
    /// `input_schema` as read, for the tool's definition in a seal.
    pub(crate) schema: Value,
    /// Loaded only when the provider's tool search finds it (`defer_loading` on
    /// `anthropic` and `responses`); left out of the request on `chat` and `gemini`.
    pub(crate) deferred: bool,
}

impl Tool {
    /// `{name, description?, input_schema}`, as the turn declared it.
    pub(crate) fn definition(&self) -> Value {
        let mut out = serde_json::Map::new();
        out.insert("name".into(), Value::String(self.name.clone()));
        if let Some(d) = &self.description {
            out.insert("description".into(), Value::String(d.clone()));
        }
        out.insert("input_schema".into(), self.schema.clone());
        Value::Object(out)
    }
}

pub(crate) fn is_tool_name(s: &str) -> bool {
    (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Parses `turns.tools`.
pub fn parse_tools<'a>(input: impl JsonInput<'a>) -> Result<Vec<Tool>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(input, C, "tools")?;
    let Value::Array(list) = v.as_ref() else {
        return Err(field_error(
            C,
            "/tools",
            "tools must be a list of {name, description, input_schema}",
        ));
    };
    let mut out: Vec<Tool> = Vec::with_capacity(list.len());
    for (i, t) in list.iter().enumerate() {
        let base = format!("/tools/{i}");
        let Some(obj) = t.as_object() else {
            return Err(field_error(
                C,
                &base,
                "a tool is an object {name, description, input_schema}",
            ));
        };
        for key in obj.keys() {
            if !["name", "description", "input_schema", "deferred"].contains(&key.as_str()) {
                return Err(field_error(
                    C,
                    &format!("{base}/{}", pointer_token(key)),
                    format!("unknown key \"{key}\" in a tool"),
                ));
            }
        }
        let name = match obj.get("name").and_then(Value::as_str) {
            Some(n) if is_tool_name(n) => n.to_string(),
            _ => {
                return Err(field_error(
                    C,
                    &format!("{base}/name"),
                    "a tool name matches ^[a-zA-Z0-9_-]{1,64}$",
                ))
            }
        };
        if out.iter().any(|o| o.name == name) {
            return Err(field_error(
                C,
                &format!("{base}/name"),
                format!("tool name \"{name}\" repeated"),
            ));
        }
        let description = match obj.get("description") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Err(field_error(
                    C,
                    &format!("{base}/description"),
                    "a tool description is a string",
                ))
            }
        };
        let (input_schema, schema) = match obj.get("input_schema") {
            Some(s @ Value::Object(_)) => (s.to_string(), s.clone()),
            _ => {
                return Err(field_error(
                    C,
                    &format!("{base}/input_schema"),
                    "a tool needs an input_schema object",
                ))
            }
        };
        let deferred = flag(obj, "deferred", &base)?;
        out.push(Tool {
            name,
            description,
            input_schema,
            schema,
            deferred,
        });
    }
    Ok(out)
}

/// An optional boolean key of a tool or a callable (`false` when absent).
fn flag(obj: &serde_json::Map<String, Value>, key: &str, base: &str) -> Result<bool> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(field_error(
            Code::TurnFieldInvalid,
            &format!("{base}/{key}"),
            format!("{key} is a boolean"),
        )),
    }
}

/// One entry of `turns.callables` (`{name, runner?, deferred?}`): a callable whose skills
/// the catalog lists.
#[derive(Debug, Clone, PartialEq)]
pub struct Callable {
    pub(crate) name: String,
    /// The runner whose skills alone it lists (`"runner"`; `None`: the application's, the
    /// agent's, the workspace's, the speaker pair's and the selected Human's).
    pub runner: Option<String>,
    /// Left out of the eager catalog; its lines are frozen with the seal for a tool
    /// search (`explain_turn` → `deferred`).
    pub(crate) deferred: bool,
}

/// Parses `turns.callables`.
pub fn parse_callables<'a>(input: impl JsonInput<'a>) -> Result<Vec<Callable>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(input, C, "callables")?;
    let Value::Array(list) = v.as_ref() else {
        return Err(field_error(
            C,
            "/callables",
            "callables must be a list of {name, runner?, deferred?}",
        ));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, c) in list.iter().enumerate() {
        let base = format!("/callables/{i}");
        let Some(obj) = c.as_object() else {
            return Err(field_error(
                C,
                &base,
                "a callable is an object {name, runner?, deferred?}",
            ));
        };
        for key in obj.keys() {
            if !["name", "runner", "deferred"].contains(&key.as_str()) {
                return Err(field_error(
                    C,
                    &format!("{base}/{}", pointer_token(key)),
                    format!("unknown key \"{key}\" in a callable"),
                ));
            }
        }
        let name = match obj.get("name").and_then(Value::as_str) {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => {
                return Err(field_error(
                    C,
                    &format!("{base}/name"),
                    "a callable needs a non-empty string name",
                ))
            }
        };
        let runner = match obj.get("runner") {
            None | Some(Value::Null) => None,
            Some(Value::String(r)) if !r.is_empty() => Some(r.clone()),
            Some(_) => {
                return Err(field_error(
                    C,
                    &format!("{base}/runner"),
                    "a callable's runner is a non-empty string",
                ))
            }
        };
        let deferred = flag(obj, "deferred", &base)?;
        out.push(Callable { name, runner, deferred });
    }
    Ok(out)
}

/// One raw input entry (`raw` mechanism): a role and its parts, sent verbatim.
#[derive(Debug, Clone, PartialEq)]
pub struct RawEntry {
    pub(crate) role: Role,
    pub(crate) parts: Vec<PartKind>,
    /// The content was stored as a string: the wire keeps it a string.
    pub(crate) plain: bool,
}

/// Parses `turns.input`: `[{role, content}]`, content a string or a list of parts
/// (`text`, `image`, `tool_call`, `tool_result`, as in compiled messages).
pub fn parse_raw_input<'a>(input: impl JsonInput<'a>) -> Result<Vec<RawEntry>> {
    const C: Code = Code::RawInputInvalid;
    let v = parse_json(input, C, "input")?;
    let Value::Array(list) = v.as_ref() else {
        return Err(field_error(C, "/input", "input must be a list of {role, content}"));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let base = format!("/input/{i}");
        let Some(obj) = e.as_object() else {
            return Err(field_error(C, &base, "an input entry is an object {role, content}"));
        };
        for key in obj.keys() {
            if !["role", "content"].contains(&key.as_str()) {
                return Err(field_error(
                    C,
                    &format!("{base}/{}", pointer_token(key)),
                    format!("unknown key \"{key}\" in an input entry"),
                ));
            }
        }
        let Some(role) = obj.get("role").and_then(Value::as_str).and_then(Role::parse) else {
            return Err(field_error(
                C,
                &format!("{base}/role"),
                "role must be system, developer, user or assistant",
            ));
        };
        let (parts, plain) = match obj.get("content") {
            Some(Value::String(s)) => (vec![PartKind::Text(s.clone())], true),
            Some(Value::Array(ps)) => {
                let mut parts = Vec::with_capacity(ps.len());
                for (j, p) in ps.iter().enumerate() {
                    parts.push(raw_part(p, &format!("{base}/content/{j}"))?);
                }
                (parts, false)
            }
            _ => {
                return Err(field_error(
                    C,
                    &format!("{base}/content"),
                    "content must be a string or a list of parts",
                ))
            }
        };
        out.push(RawEntry { role, parts, plain });
    }
    Ok(out)
}

fn raw_part(p: &Value, path: &str) -> Result<PartKind> {
    const C: Code = Code::RawInputInvalid;
    let Some(obj) = p.as_object() else {
        return Err(field_error(C, path, "a part is an object with a \"type\""));
    };
    let s = |key: &str| -> Result<String> {
        match obj.get(key) {
            Some(Value::String(v)) => Ok(v.clone()),
            _ => Err(field_error(
                C,
                &format!("{path}/{key}"),
                format!("\"{key}\" must be a string"),
            )),
        }
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("text") => Ok(PartKind::Text(s("text")?)),
        Some("image") => {
            let media_type = s("media_type")?;
            let data = s("data")?;
            if decode_base64(&data).is_none() {
                return Err(field_error(C, &format!("{path}/data"), "not valid base64"));
            }
            Ok(PartKind::Image { media_type, data })
        }
        Some("tool_call") => {
            let id = s("id")?;
            let name = s("name")?;
            let input = match obj.get("input") {
                Some(v @ Value::Object(_)) => v.to_string(),
                None | Some(Value::Null) => "{}".into(),
                Some(_) => return Err(field_error(C, &format!("{path}/input"), "input must be an object")),
            };
            Ok(PartKind::ToolCall {
                id,
                name,
                input,
                signature: None,
                item_id: None,
            })
        }
        Some("tool_result") => Ok(PartKind::ToolResult {
            call_id: s("call_id")?,
            content: s("content")?,
            is_error: obj.get("is_error").and_then(Value::as_bool).unwrap_or(false),
        }),
        Some(other) => Err(field_error(
            C,
            &format!("{path}/type"),
            format!("unknown part type \"{other}\""),
        )),
        None => Err(field_error(C, &format!("{path}/type"), "a part needs a \"type\"")),
    }
}

/// Parses a sealed preface (`turns.sealed_preface`): `[{role, parts: [{type: text, text}]}]`,
/// as a seal wrote it.
pub fn parse_preface<'a>(input: impl JsonInput<'a>) -> Result<Vec<PrefaceItem>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(input, C, "sealed_preface")?;
    let Value::Array(list) = v.as_ref() else {
        return Err(field_error(C, "/sealed_preface", "a sealed preface is a list of items"));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let base = format!("/sealed_preface/{i}");
        let role = item
            .get("role")
            .and_then(Value::as_str)
            .and_then(Role::parse)
            .ok_or_else(|| field_error(C, &format!("{base}/role"), "a preface item needs a role"))?;
        let parts = item
            .get("parts")
            .and_then(Value::as_array)
            .ok_or_else(|| field_error(C, &format!("{base}/parts"), "a preface item needs parts"))?;
        let mut texts = Vec::with_capacity(parts.len());
        for (j, p) in parts.iter().enumerate() {
            match p.get("text").and_then(Value::as_str) {
                Some(t) => texts.push(t.to_string()),
                None => return Err(field_error(C, &format!("{base}/parts/{j}"), "a preface part is text")),
            }
        }
        out.push(PrefaceItem { role, texts });
    }
    Ok(out)
}

/// A sealed preface as stored: the inverse of [`parse_preface`].
pub fn preface_json(items: &[PrefaceItem]) -> String {
    let list: Vec<Value> = items
        .iter()
        .map(|i| {
            let parts: Vec<Value> = i
                .texts
                .iter()
                .map(|t| serde_json::json!({"type": "text", "text": t}))
                .collect();
            serde_json::json!({"role": i.role.as_str(), "parts": parts})
        })
        .collect();
    Value::Array(list).to_string()
}

pub use crate::options::{parse_request_options, RequestOptions};

/// A turn's shape, checked on write: a reply is opened by someone's words (its
/// poster), a message speaks in a role, and a turn that has rounds stays a run.
pub fn check_shape(
    id: uuid::Uuid,
    kind: &str,
    role: Option<&str>,
    has_poster: bool,
    mode: &str,
    leaves_run_with_rounds: bool,
) -> Result<()> {
    const C: Code = Code::TurnInvalid;
    let refuse = |path: &str, what: String, hint: &str| {
        Err(Error::new(C, format!("turn {id} {what} at {path}"))
            .detail(format!("The value at {path} is not valid."))
            .hint(hint.to_string()))
    };
    if kind == "reply" && !has_poster {
        return refuse(
            "/poster_id",
            "is a reply turn without poster_id".into(),
            "A reply turn answers someone's words: set poster_id to who posted them (the user, or the agent that asked).",
        );
    }
    if kind == "message" && role.is_none() {
        return refuse(
            "/role",
            "is a message turn without role".into(),
            "A message turn speaks in a role: user, assistant, system or developer.",
        );
    }
    if leaves_run_with_rounds && mode != "run" {
        return refuse(
            "/mode",
            format!("has rounds and cannot become {}", quote(mode)),
            "Rounds belong to run turns; delete them first, or keep mode = 'run'.",
        );
    }
    Ok(())
}

/// Every write-time check of a turn's JSON columns, as the trigger runs them.
pub fn check_turn(
    inline: &str,
    variables: &str,
    history: Option<&str>,
    input: Option<&str>,
    tools: Option<&str>,
    callables: &str,
    request_options: &str,
) -> Result<()> {
    parse_inline(inline)?;
    parse_variables(variables)?;
    if let Some(h) = history {
        parse_history(h)?;
    }
    if let Some(i) = input {
        parse_raw_input(i)?;
    }
    if let Some(t) = tools {
        parse_tools(t)?;
    }
    parse_callables(callables)?;
    parse_request_options(request_options)?;
    Ok(())
}

/// Strict standard base64 (RFC 4648 §4, padded, canonical trailing bits): `None` when it
/// is not, so one image has one spelling. The `base64` crate's standard engine is
/// exactly that strict by default.
pub(crate) fn decode_base64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_entries_parse_with_defaults() {
        let e = parse_inline(
            r#"[{"text":"hi"},{"text":"bye","role":"assistant","position":"tail"},{"slot":"persona","text":"P"}]"#,
        )
        .unwrap();
        assert_eq!(
            e[0],
            InlineEntry::Placed {
                text: "hi".into(),
                role: Role::User,
                position: Position::Lead
            }
        );
        assert_eq!(
            e[1],
            InlineEntry::Placed {
                text: "bye".into(),
                role: Role::Assistant,
                position: Position::Tail
            }
        );
        assert_eq!(
            e[2],
            InlineEntry::Slot {
                slot: Slot::Persona,
                text: "P".into(),
                role: None
            }
        );
    }

    #[test]
    fn inline_entries_refuse_bad_shapes_with_paths() {
        let cases = [
            (
                r#"{}"#,
                "inline_entry_invalid: inline must be a list of entries at /inline",
            ),
            (r#"[1]"#, "at /inline/0"),
            (r#"[{"role":"user"}]"#, "at /inline/0/text"),
            (r#"[{"text":"x","role":"tool"}]"#, "at /inline/0/role"),
            (r#"[{"text":"x","position":"middle"}]"#, "at /inline/0/position"),
            (r#"[{"text":"x","colour":1}]"#, "at /inline/0/colour"),
            (r#"[{"slot":"soul","text":"x"}]"#, "at /inline/0/slot"),
        ];
        for (input, want) in cases {
            let e = parse_inline(input).unwrap_err();
            assert_eq!(e.code, Code::InlineEntryInvalid);
            assert!(e.message.ends_with(want), "{input}: {}", e.message);
        }
    }

    #[test]
    fn a_variables_value_is_checked_like_a_document() {
        // Seed rule: a typo never reaches a model as literal braces.
        let e = parse_variables(r#"{"scene": "{{agnet}} day"}"#).unwrap_err();
        assert_eq!((e.code, e.code.sqlstate()), (Code::MacroUnknown, "22023"));
        assert!(
            e.message.contains("{{agnet}}") && e.message.contains("/variables/scene"),
            "{}",
            e.message
        );
        // Another variable is no macro either.
        assert_eq!(
            parse_variables(r#"{"a": "{{b}}", "b": "x"}"#).unwrap_err().code,
            Code::MacroUnknown
        );
        assert!(parse_variables(r#"{"scene": "{{agent}}'s day"}"#).is_ok());
    }

    #[test]
    fn inline_entries_refuse_unknown_macros_and_size() {
        let e = parse_inline(r#"[{"text":"Hi {{usr}}"}]"#).unwrap_err();
        assert_eq!(e.code, Code::MacroUnknown);
        assert!(e.message.contains("{{usr}}"));
        let big = format!(r#"[{{"text":"{}"}}]"#, "x".repeat(MAX_TEXT_BYTES + 1));
        assert_eq!(parse_inline(&big).unwrap_err().code, Code::DocumentTooLarge);
        let exact = format!(r#"[{{"text":"{}"}}]"#, "x".repeat(MAX_TEXT_BYTES));
        assert!(parse_inline(&exact).is_ok());
    }

    #[test]
    fn variables_tools_callables_and_history() {
        assert!(parse_variables(r#"{"scene":"x"}"#).is_ok());
        assert!(parse_variables(r#"{"date":"x"}"#)
            .unwrap_err()
            .message
            .ends_with("at /variables/date"));
        assert!(parse_variables(r#"{"a":1}"#).is_err());
        assert!(parse_tools(r#"[{"name":"read_file","description":"d","input_schema":{"type":"object"}}]"#).is_ok());
        assert!(parse_tools(r#"[{"name":"read file","input_schema":{}}]"#)
            .unwrap_err()
            .message
            .ends_with("at /tools/0/name"));
        assert!(parse_tools(r#"[{"name":"a"}]"#)
            .unwrap_err()
            .message
            .ends_with("at /tools/0/input_schema"));
        assert!(parse_callables(r#"[{"name":"skill"},{"name":"run","runner":"ci"}]"#).is_ok());
        assert!(parse_callables(r#"[{"runner":"ci"}]"#).is_err());
        assert_eq!(parse_history(r#"{"max_entries":3}"#).unwrap().max_entries, Some(3));
        assert!(parse_history(r#"{"budget":{"share":0}}"#)
            .unwrap_err()
            .message
            .ends_with("at /history/budget/share"));
    }

    #[test]
    fn raw_input_is_checked() {
        let ok = parse_raw_input(
            r#"[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"}]}]"#,
        )
        .unwrap();
        assert_eq!(ok.len(), 2);
        assert!(ok[0].plain && !ok[1].plain);
        for (bad, path) in [
            (r#"{"role":"user"}"#, "/input"),
            (r#"[{"role":"tool","content":"x"}]"#, "/input/0/role"),
            (r#"[{"role":"user","content":3}]"#, "/input/0/content"),
            (
                r#"[{"role":"user","content":[{"type":"audio"}]}]"#,
                "/input/0/content/0/type",
            ),
            (
                r#"[{"role":"user","content":[{"type":"image","media_type":"image/png","data":"@@"}]}]"#,
                "/input/0/content/0/data",
            ),
        ] {
            let e = parse_raw_input(bad).unwrap_err();
            assert_eq!(e.code, Code::RawInputInvalid);
            assert!(e.message.ends_with(&format!("at {path}")), "{bad}: {}", e.message);
        }
    }
}
