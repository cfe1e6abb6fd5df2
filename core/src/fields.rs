//! A turn's JSON columns (docs/design.md, "Rows"): inline entries, variables, history
//! intent, raw input entries, tools, callables, request options and a sealed preface.
//! The write trigger and the loader parse them through these functions into typed
//! values, so what was accepted on write compiles, and nothing is parsed twice: the
//! loader hands them the values it read from jsonb's binary form ([`JsonInput`]); JSON
//! text is parsed only where a caller holds text (a write-time check, a test).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{quote, Code, Error, Result};
use crate::items::PartKind;
use crate::json_at::{At, Obj, OrCode, Refusal};
pub(crate) use crate::json_input::JsonInput;
use crate::kinds::{PrefaceItem, Role};
use crate::macros;
use crate::part_json::{self, Place};
use crate::template::{self, HistoryKnobs, Slot};

/// Bound of a document body, a template and an inline entry.
pub(crate) const MAX_TEXT_BYTES: usize = 64 * 1024;

/// Which per-turn block a slot-less inline entry lands in (its `"position"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Position {
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
pub(crate) enum InlineEntry {
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

/// Refuses a text over the 64 KiB bound.
pub(crate) fn check_size(text: &str, what: &str) -> Result<()> {
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
pub(crate) fn parse_inline<'a>(input: impl JsonInput<'a>) -> Result<Vec<InlineEntry>> {
    const C: Code = Code::InlineEntryInvalid;
    let v = parse_json(input, C, "inline")?;
    At::root(&v, "/inline")
        .list("inline must be a list of entries")
        .or_code(C)?
        .map(inline_entry)
        .collect()
}

/// Refuses a key of an inline entry outside `allowed`.
fn known_keys(obj: &Obj<'_>, allowed: &[&str], what: &str) -> Result<()> {
    obj.only(allowed, |key| format!("unknown key \"{key}\" in {what}"))
        .or_code(Code::InlineEntryInvalid)
}

/// One inline entry.
fn inline_entry(e: At<'_>) -> Result<InlineEntry> {
    const C: Code = Code::InlineEntryInvalid;
    let obj = e
        .object("an inline entry is an object {\"text\", \"role\"?, \"position\"?} or {\"slot\", \"text\"}")
        .or_code(C)?;
    let text = obj
        .at("text")
        .str("an inline entry needs a string \"text\"")
        .or_code(C)?
        .to_string();
    let what = format!("inline entry {}", e.path());
    check_size(&text, &what)?;
    macros::check(&text, &|_| false, &what)?;
    let r = obj.at("role");
    let role = r
        .optional(
            |v| v.as_str().and_then(Role::parse),
            format_args!("role must be system, developer, user or assistant, not {}", r.value),
        )
        .or_code(C)?;
    if let Some(slot) = obj.get("slot") {
        known_keys(&obj, &["slot", "text", "role"], "a slot override")?;
        let slot = slot
            .read(
                |v| v.as_str().and_then(Slot::parse),
                format_args!("slot must be system_prompt, character or persona, not {}", slot.value),
            )
            .or_code(C)?;
        return Ok(InlineEntry::Slot { slot, text, role });
    }
    known_keys(&obj, &["text", "role", "position"], "an inline entry")?;
    let p = obj.at("position");
    let position = p
        .optional(
            |v| match v.as_str() {
                Some("lead") => Some(Position::Lead),
                Some("tail") => Some(Position::Tail),
                _ => None,
            },
            format_args!("position must be lead or tail, not {}", p.value),
        )
        .or_code(C)?;
    Ok(InlineEntry::Placed {
        text,
        role: role.unwrap_or(Role::User),
        position: position.unwrap_or(Position::Lead),
    })
}

/// Parses `turns.variables`: string values, named like template variables.
pub(crate) fn parse_variables<'a>(input: impl JsonInput<'a>) -> Result<BTreeMap<String, String>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(input, C, "variables")?;
    let obj = At::root(&v, "/variables")
        .object("variables must be an object of strings")
        .or_code(C)?;
    let mut out = BTreeMap::new();
    for (name, value) in obj.entries() {
        if !template::is_variable_name(name) || macros::is_macro(name) || name == macros::HISTORY_WORD {
            return Err(value
                .refuse(format_args!(
                    "variable name {} must match [a-z][a-z0-9_]* and not be a macro",
                    quote(name)
                ))
                .error(C));
        }
        let text = value.str("a variable's value must be a string").or_code(C)?;
        // A value is checked like a document: its macros render, a typo is refused.
        let what = format!("variable {}", value.path());
        check_size(text, &what)?;
        macros::check(text, &|_| false, &what)?;
        out.insert(name.to_string(), text.to_string());
    }
    Ok(out)
}

/// Parses `turns.history`, the turn's history intent.
pub(crate) fn parse_history<'a>(input: impl JsonInput<'a>) -> Result<HistoryKnobs> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(input, C, "history")?;
    let (knobs, problems) = template::parse_history_intent(&v);
    let refuse = |path: String, message: String| Refusal { path, message }.error(C);
    match (knobs, problems.into_iter().next()) {
        (Some(k), None) => Ok(k),
        (_, Some(p)) => Err(refuse(format!("/history{}", p.path), p.message)),
        (None, None) => Err(refuse("/history".into(), "invalid history intent".into())),
    }
}

/// A tool the turn declares: `{name, description, input_schema, deferred?}` as JSON text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tool {
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
pub(crate) fn parse_tools<'a>(input: impl JsonInput<'a>) -> Result<Vec<Tool>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(input, C, "tools")?;
    let list = At::root(&v, "/tools")
        .list("tools must be a list of {name, description, input_schema}")
        .or_code(C)?;
    let mut out: Vec<Tool> = Vec::with_capacity(list.len());
    for t in list {
        let obj = t
            .object("a tool is an object {name, description, input_schema}")
            .or_code(C)?;
        obj.only(&["name", "description", "input_schema", "deferred"], |key| {
            format!("unknown key \"{key}\" in a tool")
        })
        .or_code(C)?;
        let n = obj.at("name");
        let name = n
            .read(
                |v| v.as_str().filter(|n| is_tool_name(n)),
                "a tool name matches ^[a-zA-Z0-9_-]{1,64}$",
            )
            .or_code(C)?
            .to_string();
        if out.iter().any(|o| o.name == name) {
            return Err(n.refuse(format_args!("tool name \"{name}\" repeated")).error(C));
        }
        let description = obj
            .at("description")
            .optional(Value::as_str, "a tool description is a string")
            .or_code(C)?
            .map(str::to_string);
        let schema = obj
            .at("input_schema")
            .read(|v| v.is_object().then_some(v), "a tool needs an input_schema object")
            .or_code(C)?;
        let deferred = flag(&obj, "deferred")?;
        out.push(Tool {
            name,
            description,
            input_schema: schema.to_string(),
            schema: schema.clone(),
            deferred,
        });
    }
    Ok(out)
}

/// An optional boolean key of a tool or a callable (`false` when absent).
fn flag(obj: &Obj<'_>, key: &str) -> Result<bool> {
    obj.at(key)
        .flag(false, format_args!("{key} is a boolean"))
        .or_code(Code::TurnFieldInvalid)
}

/// One entry of `turns.callables` (`{name, runner?, deferred?}`): a callable whose skills
/// the catalog lists.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Callable {
    pub(crate) name: String,
    /// The runner whose skills alone it lists (`"runner"`; `None`: the application's, the
    /// agent's, the workspace's, the speaker pair's and the selected Human's).
    pub(crate) runner: Option<String>,
    /// Left out of the eager catalog; its lines are frozen with the seal for a tool
    /// search (`explain_turn` → `deferred`).
    pub(crate) deferred: bool,
}

/// Parses `turns.callables`.
pub(crate) fn parse_callables<'a>(input: impl JsonInput<'a>) -> Result<Vec<Callable>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(input, C, "callables")?;
    let list = At::root(&v, "/callables")
        .list("callables must be a list of {name, runner?, deferred?}")
        .or_code(C)?;
    let mut out = Vec::with_capacity(list.len());
    for c in list {
        let obj = c
            .object("a callable is an object {name, runner?, deferred?}")
            .or_code(C)?;
        obj.only(&["name", "runner", "deferred"], |key| {
            format!("unknown key \"{key}\" in a callable")
        })
        .or_code(C)?;
        let name = obj
            .at("name")
            .read(
                |v| v.as_str().filter(|n| !n.is_empty()),
                "a callable needs a non-empty string name",
            )
            .or_code(C)?
            .to_string();
        let runner = obj
            .at("runner")
            .optional(
                |v| v.as_str().filter(|r| !r.is_empty()),
                "a callable's runner is a non-empty string",
            )
            .or_code(C)?
            .map(str::to_string);
        let deferred = flag(&obj, "deferred")?;
        out.push(Callable { name, runner, deferred });
    }
    Ok(out)
}

/// One raw input entry (`raw` mechanism): a role and its parts, sent verbatim.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawEntry {
    pub(crate) role: Role,
    pub(crate) parts: Vec<PartKind>,
    /// The content was stored as a string: the wire keeps it a string.
    pub(crate) plain: bool,
}

/// Parses `turns.input`: `[{role, content}]`, content a string or a list of parts
/// (`text`, `image`, `tool_call`, `tool_result`, as in compiled messages).
pub(crate) fn parse_raw_input<'a>(input: impl JsonInput<'a>) -> Result<Vec<RawEntry>> {
    raw_entries(&*parse_json(input, Code::RawInputInvalid, "input")?, false)
}

/// Reads the history parts a seal carried past its seed (`SeedCut::carry`): raw entries
/// as [`parse_raw_input`] reads them, and a provider's block (`{"type": "provider",
/// "wire", "block"}`, as a part serializes it), which `turns.input` does not take. A
/// block comes back as the same value, its keys in the stored record's order.
pub(crate) fn parse_carried(carry: &Value) -> Result<Vec<RawEntry>> {
    raw_entries(carry, true)
}

fn raw_entries(v: &Value, carried: bool) -> Result<Vec<RawEntry>> {
    const C: Code = Code::RawInputInvalid;
    let place = if carried { Place::Carried } else { Place::Input };
    let list = At::root(v, "/input")
        .list("input must be a list of {role, content}")
        .or_code(C)?;
    let mut out = Vec::with_capacity(list.len());
    for e in list {
        let obj = e.object("an input entry is an object {role, content}").or_code(C)?;
        obj.only(&["role", "content"], |key| {
            format!("unknown key \"{key}\" in an input entry")
        })
        .or_code(C)?;
        let role = obj
            .at("role")
            .read(
                |v| v.as_str().and_then(Role::parse),
                "role must be system, developer, user or assistant",
            )
            .or_code(C)?;
        let content = obj.at("content");
        let (parts, plain) = match content.value {
            Value::String(s) => (vec![PartKind::Text(s.clone())], true),
            Value::Array(_) => {
                let parts = content
                    .list("")
                    .or_code(C)?
                    .map(|p| part_json::read_part(&p, place).or_code(C))
                    .collect::<Result<Vec<_>>>()?;
                (parts, false)
            }
            _ => return Err(content.refuse("content must be a string or a list of parts").error(C)),
        };
        out.push(RawEntry { role, parts, plain });
    }
    Ok(out)
}

/// Parses a sealed preface (`turns.sealed_preface`): `[{role, parts: [{type: text, text}]}]`,
/// as a seal wrote it.
pub(crate) fn parse_preface<'a>(input: impl JsonInput<'a>) -> Result<Vec<PrefaceItem>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(input, C, "sealed_preface")?;
    let list = At::root(&v, "/sealed_preface")
        .list("a sealed preface is a list of items")
        .or_code(C)?;
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        let field = |key: &str| item.child(item.value.get(key).unwrap_or(&Value::Null), key);
        let role = field("role")
            .read(|v| v.as_str().and_then(Role::parse), "a preface item needs a role")
            .or_code(C)?;
        let texts = field("parts")
            .list("a preface item needs parts")
            .or_code(C)?
            .map(|p| {
                p.read(|v| v.get("text").and_then(Value::as_str), "a preface part is text")
                    .or_code(C)
                    .map(str::to_string)
            })
            .collect::<Result<Vec<_>>>()?;
        out.push(PrefaceItem { role, texts });
    }
    Ok(out)
}

/// A sealed preface as stored: the inverse of [`parse_preface`].
pub(crate) fn preface_json(items: &[PrefaceItem]) -> String {
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

pub(crate) use crate::options::RequestOptions;

/// A row's `request_options` as a compile loads it: an object whose neutral options are
/// well formed; the other keys are left to the compile, which reads the merged options
/// against every wire's own and refuses what its wire does not take (`wire/options.rs`).
/// The writes are checked strictly (`crate::checks`, `wire::options::parse_request_options`).
pub(crate) fn parse_request_options<'a>(input: impl crate::json_input::JsonInput<'a>) -> Result<RequestOptions> {
    crate::options::parse_request_options(input, crate::options::Own::Deferred)
}

/// A turn's shape, checked on write: a reply is opened by someone's words (its
/// poster), a message speaks in a role, and a turn that has rounds stays a run.
pub(crate) fn check_shape(
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

/// Every write-time check of a turn's JSON columns but its request options (which
/// `crate::checks` reads against every wire's own options, after these), as the trigger
/// runs them.
pub(crate) fn check_turn(
    inline: &str,
    variables: &str,
    history: Option<&str>,
    input: Option<&str>,
    tools: Option<&str>,
    callables: &str,
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
    Ok(())
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
