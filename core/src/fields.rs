//! A turn's JSON columns (SPEC §1, §3.1, §9): inline entries, variables, history
//! intent, raw input entries, tools and callables. The write trigger and the compiler
//! parse them through these functions, so what was accepted on write compiles.

use serde_json::{Map, Value};

use super::context::Role;
use super::error::{quote, Code, Error, Result};
use super::items::{Part, PartKind};
use super::macros;
use super::template::{self, pointer_token, HistoryKnobs, Slot};
use super::tokens::{Counter, IMAGE_TOKENS};

/// Bound of a document body, a template and an inline entry.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    Lead,
    Tail,
}

impl Position {
    pub fn as_str(self) -> &'static str {
        match self {
            Position::Lead => "lead",
            Position::Tail => "tail",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum InlineEntry {
    /// Replaces a slot's document for this turn alone.
    Slot {
        slot: Slot,
        text: String,
        role: Option<Role>,
    },
    /// Lands in the lead or tail block.
    Placed {
        text: String,
        role: Role,
        position: Position,
    },
}

fn parse_json(text: &str, code: Code, column: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| Error::new(code, format!("{column} is not JSON ({e})")))
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
pub fn parse_inline(text: &str) -> Result<Vec<InlineEntry>> {
    const C: Code = Code::InlineEntryInvalid;
    let v = parse_json(text, C, "inline")?;
    let Value::Array(list) = v else {
        return Err(field_error(C, "/inline", "inline must be a list of entries"));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let base = format!("/inline/{i}");
        let Some(obj) = e.as_object() else {
            return Err(field_error(
                C,
                &base,
                "an inline entry is an object {\"text\", \"role\"?, \"position\"?} or {\"slot\", \"text\"}",
            ));
        };
        let text = match obj.get("text") {
            Some(Value::String(t)) => t.clone(),
            _ => {
                return Err(field_error(
                    C,
                    &format!("{base}/text"),
                    "an inline entry needs a string \"text\"",
                ))
            }
        };
        check_size(&text, &format!("inline entry {base}"))?;
        macros::check(&text, &|_| false, &format!("inline entry {base}"))?;
        let role = match obj.get("role") {
            None | Some(Value::Null) => None,
            Some(r) => match r.as_str().and_then(Role::parse) {
                Some(role) => Some(role),
                None => {
                    return Err(field_error(
                        C,
                        &format!("{base}/role"),
                        format!("role must be system, developer, user or assistant, not {r}"),
                    ))
                }
            },
        };
        if let Some(slot) = obj.get("slot") {
            for key in obj.keys() {
                if !["slot", "text", "role"].contains(&key.as_str()) {
                    return Err(field_error(
                        C,
                        &format!("{base}/{}", pointer_token(key)),
                        format!("unknown key \"{key}\" in a slot override"),
                    ));
                }
            }
            let Some(slot) = slot.as_str().and_then(Slot::parse) else {
                return Err(field_error(
                    C,
                    &format!("{base}/slot"),
                    format!("slot must be system_prompt, character or persona, not {slot}"),
                ));
            };
            out.push(InlineEntry::Slot { slot, text, role });
            continue;
        }
        for key in obj.keys() {
            if !["text", "role", "position"].contains(&key.as_str()) {
                return Err(field_error(
                    C,
                    &format!("{base}/{}", pointer_token(key)),
                    format!("unknown key \"{key}\" in an inline entry"),
                ));
            }
        }
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
        out.push(InlineEntry::Placed {
            text,
            role: role.unwrap_or(Role::User),
            position,
        });
    }
    Ok(out)
}

/// Parses `turns.variables`: string values, named like template variables.
pub fn parse_variables(text: &str) -> Result<Map<String, Value>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(text, C, "variables")?;
    let Value::Object(map) = v else {
        return Err(field_error(C, "/variables", "variables must be an object of strings"));
    };
    for (name, value) in &map {
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
        if !value.is_string() {
            return Err(field_error(C, &path, "a variable's value must be a string"));
        }
    }
    Ok(map)
}

/// Parses `turns.history`, the turn's history intent.
pub fn parse_history(text: &str) -> Result<HistoryKnobs> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(text, C, "history")?;
    let (knobs, problems) = template::parse_history_intent(&v);
    match (knobs, problems.into_iter().next()) {
        (Some(k), None) => Ok(k),
        (_, Some(p)) => Err(field_error(C, &format!("/history{}", p.path), p.message)),
        (None, None) => Err(field_error(C, "/history", "invalid history intent")),
    }
}

/// A tool the turn declares: `{name, description, input_schema}` as JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: String,
}

pub fn is_tool_name(s: &str) -> bool {
    (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Parses `turns.tools`.
pub fn parse_tools(text: &str) -> Result<Vec<Tool>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(text, C, "tools")?;
    let Value::Array(list) = v else {
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
            if !["name", "description", "input_schema"].contains(&key.as_str()) {
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
        let input_schema = match obj.get("input_schema") {
            Some(s @ Value::Object(_)) => s.to_string(),
            _ => {
                return Err(field_error(
                    C,
                    &format!("{base}/input_schema"),
                    "a tool needs an input_schema object",
                ))
            }
        };
        out.push(Tool {
            name,
            description,
            input_schema,
        });
    }
    Ok(out)
}

#[derive(Debug, Clone, PartialEq)]
pub struct Callable {
    pub name: String,
    pub runner: Option<String>,
}

/// Parses `turns.callables`.
pub fn parse_callables(text: &str) -> Result<Vec<Callable>> {
    const C: Code = Code::TurnFieldInvalid;
    let v = parse_json(text, C, "callables")?;
    let Value::Array(list) = v else {
        return Err(field_error(
            C,
            "/callables",
            "callables must be a list of {name, runner?}",
        ));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, c) in list.iter().enumerate() {
        let base = format!("/callables/{i}");
        let Some(obj) = c.as_object() else {
            return Err(field_error(C, &base, "a callable is an object {name, runner?}"));
        };
        for key in obj.keys() {
            if !["name", "runner"].contains(&key.as_str()) {
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
        out.push(Callable { name, runner });
    }
    Ok(out)
}

/// One raw input entry (`raw` mechanism): a role and its parts.
#[derive(Debug, Clone, PartialEq)]
pub struct RawEntry {
    pub role: Role,
    pub parts: Vec<Part>,
    /// The content was stored as a string.
    pub plain: bool,
}

/// Parses `turns.input`: `[{role, content}]`, content a string or a list of parts
/// (`text`, `image`, `tool_call`, `tool_result`, as in compiled messages).
pub fn parse_raw_input(text: &str, counter: Option<&mut Counter<'_>>) -> Result<Vec<RawEntry>> {
    const C: Code = Code::RawInputInvalid;
    let mut counter = counter;
    let mut count = |t: &str| counter.as_deref_mut().map(|c| c.count(t)).unwrap_or(0);
    let v = parse_json(text, C, "input")?;
    let Value::Array(list) = v else {
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
        let parts = match obj.get("content") {
            Some(Value::String(s)) => vec![Part {
                tokens: count(s),
                kind: PartKind::Text(s.clone()),
            }],
            Some(Value::Array(ps)) => {
                let mut parts = Vec::with_capacity(ps.len());
                for (j, p) in ps.iter().enumerate() {
                    let path = format!("{base}/content/{j}");
                    parts.push(raw_part(p, &path, &mut count)?);
                }
                parts
            }
            _ => {
                return Err(field_error(
                    C,
                    &format!("{base}/content"),
                    "content must be a string or a list of parts",
                ))
            }
        };
        let plain = matches!(obj.get("content"), Some(Value::String(_)));
        out.push(RawEntry { role, parts, plain });
    }
    Ok(out)
}

fn raw_part(p: &Value, path: &str, count: &mut dyn FnMut(&str) -> u32) -> Result<Part> {
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
        Some("text") => {
            let text = s("text")?;
            Ok(Part {
                tokens: count(&text),
                kind: PartKind::Text(text),
            })
        }
        Some("image") => {
            let media_type = s("media_type")?;
            let data = s("data")?;
            if super::rounds::decode_base64(&data).is_none() {
                return Err(field_error(C, &format!("{path}/data"), "not valid base64"));
            }
            Ok(Part {
                tokens: IMAGE_TOKENS,
                kind: PartKind::Image { media_type, data },
            })
        }
        Some("tool_call") => {
            let id = s("id")?;
            let name = s("name")?;
            let input = match obj.get("input") {
                Some(v @ Value::Object(_)) => v.to_string(),
                None | Some(Value::Null) => "{}".into(),
                Some(_) => return Err(field_error(C, &format!("{path}/input"), "input must be an object")),
            };
            Ok(Part {
                tokens: count(&name) + count(&input),
                kind: PartKind::ToolCall { id, name, input },
            })
        }
        Some("tool_result") => {
            let call_id = s("call_id")?;
            let content = s("content")?;
            let is_error = obj.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            Ok(Part {
                tokens: count(&content),
                kind: PartKind::ToolResult {
                    call_id,
                    content,
                    is_error,
                },
            })
        }
        Some(other) => Err(field_error(
            C,
            &format!("{path}/type"),
            format!("unknown part type \"{other}\""),
        )),
        None => Err(field_error(C, &format!("{path}/type"), "a part needs a \"type\"")),
    }
}

/// Every write-time check of a turn's JSON columns, as the trigger runs them.
pub fn check_turn(
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
        parse_raw_input(i, None)?;
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
            None,
        )
        .unwrap();
        assert_eq!(ok.len(), 2);
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
            let e = parse_raw_input(bad, None).unwrap_err();
            assert_eq!(e.code, Code::RawInputInvalid);
            assert!(e.message.ends_with(&format!("at {path}")), "{bad}: {}", e.message);
        }
    }
}
