//! Request options (`request_options` of a model, an agent and a turn): one wire-neutral
//! vocabulary, merged turn over agent over model, checked on write (the neutral shape)
//! and at compile against the wire, rendered in each wire's own spelling.
//!
//! | option | shape | anthropic | chat | responses | gemini |
//! |---|---|---|---|---|---|
//! | `tool_choice` | `auto`, `none`, `required`, `{"name"}` | `tool_choice` | `tool_choice` | `tool_choice` | `toolConfig` |
//! | `parallel_tool_calls` | bool | `disable_parallel_tool_use` | same | same | refused |
//! | `temperature` | 0–2 | refused | same | same | `temperature` |
//! | `top_p` | (0, 1] | refused | same | same | `topP` |
//! | `stop` | string or 1–4 strings | `stop_sequences` | `stop` | refused | `stopSequences` |
//! | `response_format` | `{"type": "text" / "json_object" / "json_schema", "name", "schema", "strict"?}` | `output_config.format` | `response_format` | `text.format` | `responseMimeType` + `responseJsonSchema` |
//! | `thinking` | `{"budget_tokens"}` or `{"effort"}` | `thinking` / `output_config.effort` | `reasoning_effort` | `reasoning.effort` | `thinkingConfig` |
//! | `metadata` | object of strings | `metadata.user_id` only | `metadata` | `metadata` | refused |

use serde_json::{Map, Number, Value};

use serde::{Deserialize, Serialize};

use crate::error::{Code, Error, Result};
use crate::kinds::Wire;

/// A request's options (`request_options` of a model, an agent or a turn): merged turn
/// over agent over model, checked on write against the wire, rendered in each wire's
/// own spelling. Keys are the wire-neutral names of this module.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestOptions(pub Map<String, Value>);

impl RequestOptions {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Parses `request_options` (of a model, an agent or a turn): an object of options.
pub fn parse_request_options(text: &str) -> Result<RequestOptions> {
    if text == "{}" {
        return Ok(RequestOptions::default());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => {
            let options = RequestOptions(map);
            check(&options)?;
            Ok(options)
        }
        Ok(_) => Err(invalid("", "request_options must be an object")),
        Err(e) => Err(invalid("", format!("request_options is not JSON ({e})"))),
    }
}

const KEYS: [&str; 8] = [
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "stop",
    "response_format",
    "thinking",
    "metadata",
];

#[derive(Debug, Clone, PartialEq)]
pub enum ToolChoice {
    Auto,
    None,
    Required,
    Named(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Format {
    Text,
    JsonObject,
    JsonSchema {
        name: String,
        /// The schema as JSON text.
        schema: String,
        strict: Option<bool>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Thinking {
    Budget(u64),
    Effort(String),
}

/// The options of one request, parsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    pub tool_choice: Option<ToolChoice>,
    pub parallel_tool_calls: Option<bool>,
    pub temperature: Option<Number>,
    pub top_p: Option<Number>,
    pub stop: Option<Vec<String>>,
    pub response_format: Option<Format>,
    pub thinking: Option<Thinking>,
    pub metadata: Option<Vec<(String, String)>>,
}

fn invalid(key: &str, what: impl AsRef<str>) -> Error {
    let path = if key.is_empty() {
        "/request_options".to_string()
    } else {
        format!("/request_options/{key}")
    };
    Error::new(Code::RequestOptionsInvalid, format!("{} at {path}", what.as_ref()))
        .detail(format!("The value at {path} is not valid."))
        .hint("request_options takes tool_choice, parallel_tool_calls, temperature, top_p, stop, response_format, thinking and metadata (README, \"Request options\").")
}

fn number(v: &Value, key: &str, ok: impl Fn(f64) -> bool, range: &str) -> Result<Number> {
    match v {
        Value::Number(n) if n.as_f64().is_some_and(&ok) => Ok(n.clone()),
        _ => Err(invalid(key, format!("{key} must be a number in {range}, not {v}"))),
    }
}

/// Parses an options object (one level's, or the merged one).
pub fn parse(map: &Map<String, Value>) -> Result<Options> {
    let mut o = Options::default();
    for (key, v) in map {
        match key.as_str() {
            "tool_choice" => o.tool_choice = Some(tool_choice(v)?),
            "parallel_tool_calls" => {
                o.parallel_tool_calls = Some(
                    v.as_bool()
                        .ok_or_else(|| invalid(key, format!("parallel_tool_calls must be true or false, not {v}")))?,
                )
            }
            "temperature" => o.temperature = Some(number(v, key, |x| (0.0..=2.0).contains(&x), "[0, 2]")?),
            "top_p" => o.top_p = Some(number(v, key, |x| x > 0.0 && x <= 1.0, "(0, 1]")?),
            "stop" => o.stop = Some(stop(v)?),
            "response_format" => o.response_format = Some(format(v)?),
            "thinking" => o.thinking = Some(thinking(v)?),
            "metadata" => o.metadata = Some(metadata(v)?),
            other => {
                return Err(invalid(
                    other,
                    format!("unknown option \"{other}\"; known: {}", KEYS.join(", ")),
                ))
            }
        }
    }
    Ok(o)
}

fn tool_choice(v: &Value) -> Result<ToolChoice> {
    match v {
        Value::String(s) if s == "auto" => Ok(ToolChoice::Auto),
        Value::String(s) if s == "none" => Ok(ToolChoice::None),
        Value::String(s) if s == "required" => Ok(ToolChoice::Required),
        Value::Object(m)
            if m.len() == 1 && m.get("name").is_some_and(|n| n.as_str().is_some_and(|n| !n.is_empty())) =>
        {
            Ok(ToolChoice::Named(m["name"].as_str().unwrap_or_default().to_string()))
        }
        _ => Err(invalid(
            "tool_choice",
            format!("tool_choice must be \"auto\", \"none\", \"required\" or {{\"name\": TOOL}}, not {v}"),
        )),
    }
}

fn stop(v: &Value) -> Result<Vec<String>> {
    let list: Vec<String> = match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    };
    let count = if let Value::Array(a) = v { a.len() } else { 1 };
    if list.is_empty() || list.len() != count || list.len() > 4 || list.iter().any(String::is_empty) {
        return Err(invalid(
            "stop",
            format!("stop must be a string or a list of 1 to 4 strings, not {v}"),
        ));
    }
    Ok(list)
}

fn format(v: &Value) -> Result<Format> {
    let bad = || {
        invalid("response_format", format!("response_format must be {{\"type\": \"text\"}}, {{\"type\": \"json_object\"}} or {{\"type\": \"json_schema\", \"name\", \"schema\", \"strict\"?}}, not {v}"))
    };
    let m = v.as_object().ok_or_else(bad)?;
    match m.get("type").and_then(Value::as_str) {
        Some("text") if m.len() == 1 => Ok(Format::Text),
        Some("json_object") if m.len() == 1 => Ok(Format::JsonObject),
        Some("json_schema") => {
            if m.keys()
                .any(|k| !["type", "name", "schema", "strict"].contains(&k.as_str()))
            {
                return Err(bad());
            }
            let name = m.get("name").and_then(Value::as_str).unwrap_or_default();
            if name.is_empty()
                || name.len() > 64
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(invalid(
                    "response_format/name",
                    format!(
                        "a json_schema format needs a name of 1 to 64 letters, digits, _ or -, not {:?}",
                        name
                    ),
                ));
            }
            let Some(schema @ Value::Object(_)) = m.get("schema") else {
                return Err(invalid(
                    "response_format/schema",
                    "a json_schema format needs a schema object",
                ));
            };
            let strict = match m.get("strict") {
                None => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => return Err(invalid("response_format/strict", "strict must be true or false")),
            };
            Ok(Format::JsonSchema {
                name: name.to_string(),
                schema: schema.to_string(),
                strict,
            })
        }
        _ => Err(bad()),
    }
}

fn thinking(v: &Value) -> Result<Thinking> {
    let m = v.as_object().filter(|m| m.len() == 1);
    match m.and_then(|m| m.iter().next()) {
        Some((k, Value::Number(n))) if k == "budget_tokens" && n.as_u64().is_some_and(|b| b >= 1024) => {
            Ok(Thinking::Budget(n.as_u64().unwrap_or(1024)))
        }
        Some((k, Value::String(e))) if k == "effort" && ["low", "medium", "high"].contains(&e.as_str()) => {
            Ok(Thinking::Effort(e.clone()))
        }
        _ => Err(invalid(
            "thinking",
            format!("thinking must be {{\"budget_tokens\": N}} with N >= 1024, or {{\"effort\": \"low\" | \"medium\" | \"high\"}}, not {v}"),
        )),
    }
}

fn metadata(v: &Value) -> Result<Vec<(String, String)>> {
    let m = v
        .as_object()
        .filter(|m| m.len() <= 16 && m.values().all(Value::is_string))
        .ok_or_else(|| {
            invalid(
                "metadata",
                format!("metadata must be an object of at most 16 strings, not {v}"),
            )
        })?;
    Ok(m.iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect())
}

/// The neutral check a write runs on one level's options.
pub fn check(options: &RequestOptions) -> Result<()> {
    parse(&options.0).map(|_| ())
}

/// The options a request takes: the model's, then the agent's, then the turn's, each
/// key taken from the last level that sets it; and which level that was, per key.
pub fn merge<'a>(levels: [(&'a str, &RequestOptions); 3]) -> (Map<String, Value>, Vec<(String, &'a str)>) {
    let mut merged = Map::new();
    let mut origin: Vec<(String, &str)> = Vec::new();
    for (level, options) in levels {
        for (k, v) in &options.0 {
            merged.insert(k.clone(), v.clone());
            origin.retain(|(key, _)| key != k);
            origin.push((k.clone(), level));
        }
    }
    (merged, origin)
}

/// Refuses what `wire` cannot say. `max_tokens` bounds a thinking budget (Anthropic).
pub fn check_wire(o: &Options, wire: Wire, max_tokens: i32) -> std::result::Result<(), (&'static str, String)> {
    let refuse = |key: &'static str, what: &str| Err((key, format!("the {} wire {what}", wire.as_str())));
    match wire {
        Wire::Anthropic => {
            if o.temperature.is_some() {
                return refuse("temperature", "takes no temperature (its SDK's request type has none)");
            }
            if o.top_p.is_some() {
                return refuse("top_p", "takes no top_p (its SDK's request type has none)");
            }
            if o.response_format == Some(Format::JsonObject) {
                return refuse("response_format", "takes structured output as a json_schema only");
            }
            if let Some(Thinking::Budget(b)) = o.thinking {
                if b >= max_tokens.max(0) as u64 {
                    return refuse(
                        "thinking",
                        &format!("needs a thinking budget below max_tokens ({max_tokens})"),
                    );
                }
            }
            if o.metadata
                .as_ref()
                .is_some_and(|m| m.iter().any(|(k, _)| k != "user_id"))
            {
                return refuse("metadata", "takes metadata.user_id only");
            }
        }
        Wire::Chat => {
            if matches!(o.thinking, Some(Thinking::Budget(_))) {
                return refuse("thinking", "takes a reasoning effort, not a budget");
            }
        }
        Wire::Responses => {
            if o.stop.is_some() {
                return refuse("stop", "takes no stop sequences");
            }
            if matches!(o.thinking, Some(Thinking::Budget(_))) {
                return refuse("thinking", "takes a reasoning effort, not a budget");
            }
        }
        Wire::Gemini => {
            if o.parallel_tool_calls.is_some() {
                return refuse("parallel_tool_calls", "has no parallel_tool_calls switch");
            }
            if o.metadata.is_some() {
                return refuse("metadata", "takes no metadata");
            }
        }
    }
    Ok(())
}

/// The merged options of a request, parsed and checked against its wire; a refusal
/// names the key and the level (model, agent, turn) that set it.
pub fn resolve(levels: [(&str, &RequestOptions); 3], wire: Wire, max_tokens: i32) -> Result<Options> {
    let (merged, origin) = merge(levels);
    let level = |key: &str| origin.iter().find(|(k, _)| k == key).map_or("request", |(_, l)| *l);
    let o = parse(&merged).map_err(|e| {
        let key = KEYS
            .iter()
            .find(|k| e.message.contains(&format!("/request_options/{k}")))
            .copied()
            .unwrap_or("");
        let mut e = e;
        e.detail = Some(format!("Set by the {}'s request_options.", level(key)));
        e
    })?;
    check_wire(&o, wire, max_tokens).map_err(|(key, what)| {
        invalid(key, what).detail(format!(
            "Set by the {}'s request_options; the request goes on the {} wire.",
            level(key),
            wire.as_str()
        ))
    })?;
    Ok(o)
}

/// The tool options against the names of the tools the request loads (`searching`: the
/// request sends its wire's tool search, a tool too): without any tool, `tool_choice` and
/// `parallel_tool_calls` are left out (the APIs refuse them without tools, and an agent's
/// options serve its turns without tools too); a `tool_choice` naming a tool the request
/// does not load (absent, or deferred) is refused.
pub fn fit_tools(o: &mut Options, loaded: &[&str], searching: bool) -> Result<()> {
    if loaded.is_empty() && !searching {
        o.tool_choice = None;
        o.parallel_tool_calls = None;
        return Ok(());
    }
    match &o.tool_choice {
        Some(ToolChoice::Named(name)) if !loaded.contains(&name.as_str()) => Err(invalid(
            "tool_choice",
            format!("tool_choice names \"{name}\", which the request does not load (not among the turn's tools, or deferred)"),
        )),
        _ => Ok(()),
    }
}

fn q(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn tool_choice_text(c: &ToolChoice, wire: Wire, parallel: Option<bool>) -> String {
    match wire {
        Wire::Anthropic => {
            let (kind, name) = match c {
                ToolChoice::Auto => ("auto", None),
                ToolChoice::None => ("none", None),
                ToolChoice::Required => ("any", None),
                ToolChoice::Named(n) => ("tool", Some(n)),
            };
            let mut out = format!(r#"{{"type":"{kind}""#);
            if let Some(n) = name {
                out.push_str(&format!(r#","name":{}"#, q(n)));
            }
            if let (Some(p), false) = (parallel, kind == "none") {
                out.push_str(&format!(r#","disable_parallel_tool_use":{}"#, !p));
            }
            out.push('}');
            out
        }
        Wire::Chat => match c {
            ToolChoice::Named(n) => format!(r#"{{"type":"function","function":{{"name":{}}}}}"#, q(n)),
            other => q(simple(other)),
        },
        _ => match c {
            ToolChoice::Named(n) => format!(r#"{{"type":"function","name":{}}}"#, q(n)),
            other => q(simple(other)),
        },
    }
}

fn simple(c: &ToolChoice) -> &'static str {
    match c {
        ToolChoice::Auto => "auto",
        ToolChoice::None => "none",
        _ => "required",
    }
}

fn strings(list: &[String]) -> String {
    Value::Array(list.iter().map(|s| Value::String(s.clone())).collect()).to_string()
}

fn metadata_text(m: &[(String, String)]) -> String {
    let inner: Vec<String> = m.iter().map(|(k, v)| format!("{}:{}", q(k), q(v))).collect();
    format!("{{{}}}", inner.join(","))
}

/// The top-level fields the options add to an Anthropic, chat or Responses body (after
/// its tools), in the provider reference's order, as (key, JSON text).
pub fn fields(o: &Options, wire: Wire) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    // Anthropic says parallel_tool_calls only inside tool_choice: alone, it rides an
    // `auto` choice (the API's default).
    let choice = match (&o.tool_choice, wire, o.parallel_tool_calls) {
        (Some(c), _, _) => Some(c),
        (None, Wire::Anthropic, Some(_)) => Some(&ToolChoice::Auto),
        _ => None,
    };
    if let Some(c) = choice {
        out.push(("tool_choice", tool_choice_text(c, wire, o.parallel_tool_calls)));
    }
    if wire != Wire::Anthropic {
        if let Some(p) = o.parallel_tool_calls {
            out.push(("parallel_tool_calls", p.to_string()));
        }
        if let Some(t) = &o.temperature {
            out.push(("temperature", t.to_string()));
        }
        if let Some(t) = &o.top_p {
            out.push(("top_p", t.to_string()));
        }
    }
    match wire {
        Wire::Anthropic => anthropic_fields(o, &mut out),
        Wire::Chat => {
            if let Some(s) = &o.stop {
                out.push(("stop", strings(s)));
            }
            if let Some(f) = &o.response_format {
                out.push(("response_format", openai_format(f, true)));
            }
            if let Some(Thinking::Effort(e)) = &o.thinking {
                out.push(("reasoning_effort", q(e)));
            }
        }
        _ => {
            if let Some(f) = &o.response_format {
                out.push(("text", format!(r#"{{"format":{}}}"#, openai_format(f, false))));
            }
            if let Some(Thinking::Effort(e)) = &o.thinking {
                out.push(("reasoning", format!(r#"{{"effort":{}}}"#, q(e))));
            }
        }
    }
    if wire != Wire::Anthropic {
        if let Some(m) = &o.metadata {
            out.push(("metadata", metadata_text(m)));
        }
    }
    out
}

fn anthropic_fields(o: &Options, out: &mut Vec<(&'static str, String)>) {
    if let Some(s) = &o.stop {
        out.push(("stop_sequences", strings(s)));
    }
    if let Some(m) = &o.metadata {
        out.push(("metadata", metadata_text(m)));
    }
    if let Some(Thinking::Budget(b)) = &o.thinking {
        out.push(("thinking", format!(r#"{{"type":"enabled","budget_tokens":{b}}}"#)));
    }
    let effort = match &o.thinking {
        Some(Thinking::Effort(e)) => Some(e),
        _ => None,
    };
    let format = match &o.response_format {
        Some(Format::JsonSchema { schema, .. }) => Some(schema),
        _ => None,
    };
    if effort.is_some() || format.is_some() {
        let mut parts = Vec::new();
        if let Some(e) = effort {
            parts.push(format!(r#""effort":{}"#, q(e)));
        }
        if let Some(s) = format {
            parts.push(format!(r#""format":{{"type":"json_schema","schema":{s}}}"#));
        }
        out.push(("output_config", format!("{{{}}}", parts.join(","))));
    }
}

/// A structured output format as OpenAI spells it: chat nests a json_schema's fields in
/// `json_schema`, responses (`text.format`) lays them flat.
fn openai_format(f: &Format, nested: bool) -> String {
    match f {
        Format::Text => r#"{"type":"text"}"#.into(),
        Format::JsonObject => r#"{"type":"json_object"}"#.into(),
        Format::JsonSchema { name, schema, strict } => {
            let strict = strict.map_or(String::new(), |s| format!(r#","strict":{s}"#));
            let fields = format!(r#""name":{},"schema":{schema}{strict}"#, q(name));
            if nested {
                format!(r#"{{"type":"json_schema","json_schema":{{{fields}}}}}"#)
            } else {
                format!(r#"{{"type":"json_schema",{fields}}}"#)
            }
        }
    }
}

/// Gemini: the `toolConfig` field, and what the options add to `generationConfig`
/// (after `maxOutputTokens`), as JSON text fragments.
pub fn gemini(o: &Options) -> (Option<String>, Vec<String>) {
    let tool_config = o.tool_choice.as_ref().map(|c| {
        let (mode, names) = match c {
            ToolChoice::Auto => ("AUTO", None),
            ToolChoice::None => ("NONE", None),
            ToolChoice::Required => ("ANY", None),
            ToolChoice::Named(n) => ("ANY", Some(n)),
        };
        let names = names.map_or(String::new(), |n| format!(r#","allowedFunctionNames":[{}]"#, q(n)));
        format!(r#"{{"functionCallingConfig":{{"mode":"{mode}"{names}}}}}"#)
    });
    let mut gen = Vec::new();
    if let Some(t) = &o.temperature {
        gen.push(format!(r#""temperature":{t}"#));
    }
    if let Some(t) = &o.top_p {
        gen.push(format!(r#""topP":{t}"#));
    }
    if let Some(s) = &o.stop {
        gen.push(format!(r#""stopSequences":{}"#, strings(s)));
    }
    match &o.response_format {
        Some(Format::JsonObject) => gen.push(r#""responseMimeType":"application/json""#.into()),
        Some(Format::JsonSchema { schema, .. }) => gen.push(format!(
            r#""responseMimeType":"application/json","responseJsonSchema":{schema}"#
        )),
        _ => {}
    }
    match &o.thinking {
        Some(Thinking::Budget(b)) => gen.push(format!(r#""thinkingConfig":{{"thinkingBudget":{b}}}"#)),
        Some(Thinking::Effort(e)) => gen.push(format!(
            r#""thinkingConfig":{{"thinkingLevel":"{}"}}"#,
            e.to_ascii_uppercase()
        )),
        None => {}
    }
    (tool_config, gen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(v: Value) -> RequestOptions {
        RequestOptions(v.as_object().unwrap().clone())
    }

    #[test]
    fn turn_over_agent_over_model() {
        let o = resolve(
            [
                ("model", &opts(json!({"temperature": 0.2, "stop": ["END"]}))),
                ("agent", &opts(json!({"temperature": 0.5, "tool_choice": "auto"}))),
                ("turn", &opts(json!({"tool_choice": {"name": "refund"}}))),
            ],
            Wire::Chat,
            1024,
        )
        .unwrap();
        assert_eq!(o.temperature.unwrap().to_string(), "0.5");
        assert_eq!(o.tool_choice, Some(ToolChoice::Named("refund".into())));
        assert_eq!(o.stop, Some(vec!["END".to_string()]));
    }

    #[test]
    fn refusals_name_the_key_and_the_level() {
        let e = resolve(
            [
                ("model", &RequestOptions::default()),
                ("agent", &opts(json!({"temperature": 0.5}))),
                ("turn", &RequestOptions::default()),
            ],
            Wire::Anthropic,
            1024,
        )
        .unwrap_err();
        assert!(
            e.message
                .starts_with("request_options_invalid: the anthropic wire takes no temperature"),
            "{}",
            e.message
        );
        assert!(e.message.ends_with("at /request_options/temperature"), "{}", e.message);
        assert_eq!(
            e.detail.as_deref(),
            Some("Set by the agent's request_options; the request goes on the anthropic wire.")
        );
        let e = check(&opts(json!({"temprature": 1}))).unwrap_err();
        assert!(e.message.contains("unknown option \"temprature\""), "{}", e.message);
        let e = check(&opts(
            json!({"response_format": {"type": "json_schema", "name": "bad name", "schema": {}}}),
        ))
        .unwrap_err();
        assert!(
            e.message.ends_with("at /request_options/response_format/name"),
            "{}",
            e.message
        );
        assert!(check(&opts(json!({"thinking": {"budget_tokens": 100}}))).is_err());
        assert!(check(&opts(json!({"stop": ["a", "b", "c", "d", "e"]}))).is_err());
    }
}
