//! Request options (`request_options` of a model, an agent and a turn): one wire-neutral
//! vocabulary, merged turn over agent over model, checked on write (the neutral shape)
//! and at compile against the wire, rendered in each wire's own spelling.
//!
//! The neutral options are `tool_choice`, `parallel_tool_calls`, `temperature`, `top_p`,
//! `stop`, `response_format`, `thinking` (`mode`, `budget_tokens`, `effort`, `display`),
//! `metadata`, `stateful`, `cache_diagnostics` and `clear_tool_results`; a wire that
//! cannot say one refuses it in its folder (`wire/<wire>/options.rs`, which also spells
//! it; docs/guide.md, "Request options", has the table). An option only some wires take is
//! theirs: each declares it in its folder as an [`OwnOption`] (its key, its reader, what a
//! wire without it says, the profile's rule over it) and lists it in its `Form`; this
//! file reads it with the reader it is handed and names none.
//!
//! A model with a profile (`crate::profile`) is held to its rules (thinking modes,
//! efforts, displays, budgets, sampling and its ranges, thinking beside a forced tool);
//! a model without one keeps its wire's rules. `wire/options.rs` resolves a request's
//! options against its wire and its profile; this file holds the vocabulary, the merge,
//! the profile's rules and the spellings every wire shares, and asks no wire.

use serde_json::{Map, Number, Value};

use serde::{Deserialize, Serialize};

use crate::error::{Code, Error, Result};
use crate::json_at::{self, At, Checked, Obj};
use crate::json_input::JsonInput;
use crate::kinds::{Display, Effort, ThinkingMode, Wire};
use crate::profile::{list, Profile};

/// An option only some wires take, declared in each such wire's folder and listed by its
/// `Form` (`Form::own_options`): the one declaration every wire that takes it lists.
pub(crate) struct OwnOption {
    /// Its pointer under `/request_options`: a top-level key (`store`), or a key of the
    /// neutral `thinking` object (`thinking/include_thoughts`), the one object a wire's
    /// own keys are read in.
    pub(crate) key: &'static str,
    /// Its reader: the value checked, as the request keeps it.
    pub(crate) read: fn(&At<'_>) -> Checked<Value>,
    /// What a wire that does not take it says, after "the WIRE wire" ("takes no store").
    pub(crate) lacking: &'static str,
    /// The profile's rule over it: `who` names the model.
    pub(crate) profile: fn(&Profile, &Value, &str) -> std::result::Result<(), Refusal>,
}

impl std::fmt::Debug for OwnOption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key)
    }
}

impl PartialEq for OwnOption {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

/// A profile that has no rule over an option.
pub(crate) fn no_rule(_: &Profile, _: &Value, _: &str) -> std::result::Result<(), Refusal> {
    Ok(())
}

/// Which options only some wires take a read takes beside the neutral ones.
#[derive(Clone, Copy)]
pub(crate) enum Own<'a> {
    /// These, read with their readers; any other key is unknown.
    Of(&'a [&'static OwnOption]),
    /// Any other key left unread (a row read at load: the compile reads the merged
    /// options against its wire and every wire's own options).
    Deferred,
}

impl Own<'_> {
    /// The option declared at `key` of the object at `prefix` (`""`: top-level;
    /// `"thinking/"`), if this read takes it: a key holding a `/` is no declared key's
    /// (`{"thinking/include_thoughts": true}` is an unknown top-level option).
    fn find(&self, prefix: &str, key: &str) -> Option<&'static OwnOption> {
        match self {
            Own::Of(list) if !key.contains('/') => {
                list.iter().copied().find(|o| o.key.strip_prefix(prefix) == Some(key))
            }
            Own::Of(_) | Own::Deferred => None,
        }
    }

    /// Every key known at `prefix` (`""`: top-level; `"thinking/"`), the neutral ones first.
    fn known(&self, neutral: &[&'static str], prefix: &str) -> Vec<&'static str> {
        let mut keys: Vec<&'static str> = neutral.to_vec();
        if let Own::Of(list) = self {
            for o in list.iter() {
                if let Some(k) = o.key.strip_prefix(prefix).filter(|k| !k.contains('/')) {
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
            }
        }
        keys
    }
}

/// A request's options (`request_options` of a model, an agent or a turn): merged turn
/// over agent over model, checked on write against the wire, rendered in each wire's
/// own spelling. Keys are the wire-neutral names of this module.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct RequestOptions(pub Map<String, Value>);

/// Parses `request_options` (of a model, an agent or a turn): an object of options, the
/// neutral ones well formed and the others those `own` takes.
pub(crate) fn parse_request_options<'a>(input: impl JsonInput<'a>, own: Own<'_>) -> Result<RequestOptions> {
    let value = input.value(|e| invalid("", format!("request_options is not JSON ({e})")))?;
    let Value::Object(map) = value.into_owned() else {
        return Err(invalid("", "request_options must be an object"));
    };
    let options = RequestOptions(map);
    parse(&options.0, own)?;
    Ok(options)
}

/// The neutral options' keys.
pub(crate) const KEYS: [&str; 11] = [
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "stop",
    "response_format",
    "thinking",
    "metadata",
    "stateful",
    "cache_diagnostics",
    "clear_tool_results",
];

/// The neutral thinking option's keys.
const THINKING_KEYS: [&str; 4] = ["mode", "budget_tokens", "effort", "display"];

/// The `tool_choice` option: whether and which tool the model must call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ToolChoice {
    /// `"auto"`: the model decides.
    Auto,
    /// `"none"`: the model calls no tool.
    None,
    /// `"required"`: the model calls some tool.
    Required,
    /// `{"name": TOOL}`: the model calls this tool, which the request must load.
    Named(String),
}

/// The `response_format` option: the form of the model's output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Format {
    /// `{"type": "text"}`: plain text.
    Text,
    /// `{"type": "json_object"}`: any JSON object (refused on `anthropic`).
    JsonObject,
    /// `{"type": "json_schema", "name", "schema", "strict"?}`: JSON following a schema.
    JsonSchema {
        /// The schema's name: 1 to 64 letters, digits, `_` or `-`.
        name: String,
        /// The schema as JSON text.
        schema: String,
        /// Whether the provider enforces the schema strictly (`None`: not sent).
        strict: Option<bool>,
    },
}

/// The neutral thinking option: a mode, a budget, an effort, a display (a wire's own
/// thinking keys are among the request's [`Options::own`]). 0.3's `{"budget_tokens": N}` is the mode `enabled`; an effort alone means
/// the profile's default mode (without a profile, no mode is sent).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Thinking {
    pub(crate) mode: Option<ThinkingMode>,
    pub(crate) budget: Option<u64>,
    pub(crate) effort: Option<Effort>,
    pub(crate) display: Option<Display>,
}

/// The options of one request, parsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Options {
    pub(crate) tool_choice: Option<ToolChoice>,
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) temperature: Option<Number>,
    pub(crate) top_p: Option<Number>,
    pub(crate) stop: Option<Vec<String>>,
    pub(crate) response_format: Option<Format>,
    pub(crate) thinking: Option<Thinking>,
    pub(crate) metadata: Option<Vec<(String, String)>>,
    /// Stateful responses: a turn names the previous response of its answerer and sends
    /// only what is new since (never a field of the body itself).
    pub(crate) stateful: bool,
    /// Cache diagnostics: the request names the previous response of its answerer, and the
    /// provider explains a cache miss against it.
    pub(crate) cache_diagnostics: bool,
    /// Tool-result clearing (`crate::clearing`): sent on no wire, applied on every one.
    pub(crate) clear_tool_results: Option<crate::clearing::Rule>,
    /// The thinking mode sent (the option's, or the profile's default for an effort).
    pub(crate) mode: Option<ThinkingMode>,
    /// The options only some wires take that the request sets, by key, as their readers
    /// kept them (the wire's folder reads its own).
    pub(crate) own: Vec<(&'static OwnOption, Value)>,
}

const HINT: &str = "request_options takes tool_choice, parallel_tool_calls, temperature, top_p, stop, response_format, thinking, metadata, stateful, cache_diagnostics, clear_tool_results and the options of the request's wire (README, \"Request options\").";

/// A refusal of the options reader as `request_options_invalid`.
pub(crate) fn refused(r: json_at::Refusal) -> Error {
    r.error(Code::RequestOptionsInvalid).hint(HINT)
}

/// A rule's refusal of the option at `key` (`""`: the whole, `thinking/effort`: a part).
pub(crate) fn invalid(key: &str, what: impl AsRef<str>) -> Error {
    let path = if key.is_empty() {
        ROOT.to_string()
    } else {
        format!("{ROOT}/{key}")
    };
    refused(json_at::Refusal {
        path,
        message: what.as_ref().to_string(),
    })
}

/// The pointer of the options.
pub(crate) const ROOT: &str = "/request_options";

fn number(v: &At<'_>, key: &str, ok: impl Fn(f64) -> bool, range: &str) -> Checked<Number> {
    v.read(
        |x| match x {
            Value::Number(n) if n.as_f64().is_some_and(&ok) => Some(n.clone()),
            _ => None,
        },
        format_args!("{key} must be a number in {range}, not {}", v.value),
    )
}

/// Parses an options object (one level's, or the merged one).
pub(crate) fn parse(map: &Map<String, Value>, own: Own<'_>) -> Result<Options> {
    read(&Obj::root(map, ROOT), own).map_err(refused)
}

/// A boolean option (`key` as the refusal names it).
pub(crate) fn boolean(v: &At<'_>, key: &str) -> Checked<bool> {
    v.read(
        Value::as_bool,
        format_args!("{key} must be true or false, not {}", v.value),
    )
}

/// Reads an options object: the neutral options, and beside them those `own` takes.
pub(crate) fn read(map: &Obj<'_>, own: Own<'_>) -> Checked<Options> {
    let mut o = Options::default();
    for (key, v) in map.entries() {
        match key {
            "tool_choice" => o.tool_choice = Some(tool_choice(&v)?),
            "parallel_tool_calls" => o.parallel_tool_calls = Some(boolean(&v, key)?),
            "temperature" => o.temperature = Some(number(&v, key, |x| (0.0..=2.0).contains(&x), "[0, 2]")?),
            "top_p" => o.top_p = Some(number(&v, key, |x| x > 0.0 && x <= 1.0, "(0, 1]")?),
            "stop" => o.stop = Some(stop(&v)?),
            "response_format" => o.response_format = Some(format(&v)?),
            "thinking" => o.thinking = Some(thinking(&v, own, &mut o.own)?),
            "metadata" => o.metadata = Some(metadata(&v)?),
            "stateful" => o.stateful = boolean(&v, key)?,
            "cache_diagnostics" => o.cache_diagnostics = boolean(&v, key)?,
            // null: no clearing (a turn turns off what its agent or model sets).
            "clear_tool_results" => {
                o.clear_tool_results = match v.is_null() {
                    true => None,
                    false => Some(crate::clearing::read(&v)?),
                }
            }
            other => match own.find("", other) {
                Some(declared) => o.own.push((declared, (declared.read)(&v)?)),
                None if matches!(own, Own::Deferred) => {}
                None => {
                    return Err(v.refuse(format_args!(
                        "unknown option \"{other}\"; known: {}",
                        own.known(&KEYS, "").join(", ")
                    )))
                }
            },
        }
    }
    if o.stateful && o.clear_tool_results.is_some() {
        // A stateful chain sends only what is new since the previous response: the
        // results the provider stores are not the request's to clear.
        return Err(map.at("clear_tool_results").refuse(
            "clear_tool_results cannot clear what a stateful chain's provider stores: set stateful or clear_tool_results, not both",
        ));
    }
    Ok(o)
}

fn tool_choice(v: &At<'_>) -> Checked<ToolChoice> {
    v.read(
        |x| match x {
            Value::String(s) if s == "auto" => Some(ToolChoice::Auto),
            Value::String(s) if s == "none" => Some(ToolChoice::None),
            Value::String(s) if s == "required" => Some(ToolChoice::Required),
            Value::Object(m) if m.len() == 1 => m
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .map(|n| ToolChoice::Named(n.to_string())),
            _ => None,
        },
        format_args!(
            "tool_choice must be \"auto\", \"none\", \"required\" or {{\"name\": TOOL}}, not {}",
            v.value
        ),
    )
}

fn stop(v: &At<'_>) -> Checked<Vec<String>> {
    let list: Vec<String> = match v.value {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    };
    let count = if let Value::Array(a) = v.value { a.len() } else { 1 };
    if list.is_empty() || list.len() != count || list.len() > 4 || list.iter().any(String::is_empty) {
        return Err(v.refuse(format_args!(
            "stop must be a string or a list of 1 to 4 strings, not {}",
            v.value
        )));
    }
    Ok(list)
}

fn format(v: &At<'_>) -> Checked<Format> {
    let bad = || {
        v.refuse(format_args!("response_format must be {{\"type\": \"text\"}}, {{\"type\": \"json_object\"}} or {{\"type\": \"json_schema\", \"name\", \"schema\", \"strict\"?}}, not {}", v.value))
    };
    let m = v.object("").map_err(|_| bad())?;
    match m.at("type").value.as_str() {
        Some("text") if m.map.len() == 1 => Ok(Format::Text),
        Some("json_object") if m.map.len() == 1 => Ok(Format::JsonObject),
        Some("json_schema") => {
            m.only(&["type", "name", "schema", "strict"], |_| String::new())
                .map_err(|_| bad())?;
            let name = m.at("name");
            let name = name.read(
                |x| {
                    let n = x.as_str().unwrap_or_default();
                    let ok = !n.is_empty()
                        && n.len() <= 64
                        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    ok.then_some(n)
                },
                format_args!(
                    "a json_schema format needs a name of 1 to 64 letters, digits, _ or -, not {:?}",
                    name.value.as_str().unwrap_or_default()
                ),
            )?;
            let schema = m.at("schema").read(
                |x| x.is_object().then_some(x),
                "a json_schema format needs a schema object",
            )?;
            let strict = m
                .get("strict")
                .map(|s| s.read(Value::as_bool, "strict must be true or false"))
                .transpose()?;
            Ok(Format::JsonSchema {
                name: name.to_string(),
                schema: schema.to_string(),
                strict,
            })
        }
        _ => Err(bad()),
    }
}

/// The thinking option; a key only some wires take is kept in `kept`.
fn thinking(v: &At<'_>, own: Own<'_>, kept: &mut Vec<(&'static OwnOption, Value)>) -> Checked<Thinking> {
    let m = match v.object("") {
        Ok(m) if !m.map.is_empty() => m,
        _ => {
            return Err(v.refuse(format_args!(
                "thinking must be an object of {}, not {}",
                and_last(&own.known(&THINKING_KEYS, "thinking/")),
                v.value
            )))
        }
    };
    let mut t = Thinking::default();
    for (key, value) in m.entries() {
        let text = || value.value.as_str().unwrap_or("\u{0}");
        let v = value.value;
        match key {
            "mode" => {
                t.mode = Some(value.read(
                    |_| ThinkingMode::parse(text()),
                    format_args!("thinking.mode must be \"adaptive\", \"enabled\" or \"disabled\", not {v}"),
                )?)
            }
            "budget_tokens" => {
                t.budget = Some(value.read(
                    Value::as_u64,
                    format_args!("thinking.budget_tokens must be a whole number of tokens, not {v}"),
                )?)
            }
            "effort" => {
                t.effort = Some(value.read(
                    |_| Effort::parse(text()),
                    format_args!(
                        "thinking.effort must be one of none, minimal, low, medium, high, xhigh, max, not {v}"
                    ),
                )?)
            }
            "display" => {
                t.display = Some(value.read(
                    |_| Display::parse(text()),
                    format_args!("thinking.display must be \"summarized\" or \"omitted\", not {v}"),
                )?)
            }
            other => match own.find("thinking/", other) {
                Some(declared) => kept.push((declared, (declared.read)(&value)?)),
                None if matches!(own, Own::Deferred) => {}
                None => {
                    return Err(value.refuse(format_args!(
                        "unknown thinking key \"{other}\"; known: {}",
                        own.known(&THINKING_KEYS, "thinking/").join(", ")
                    )))
                }
            },
        }
    }
    consistent(t, &m)
}

/// `a, b and c` (a list as a message names it).
pub(crate) fn and_last(keys: &[&str]) -> String {
    match keys.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => keys.join(""),
    }
}

/// A thinking option's keys agree: a budget with `enabled` only, `enabled` with a budget,
/// nothing to display when disabled.
fn consistent(t: Thinking, m: &Obj<'_>) -> Checked<Thinking> {
    let refuse = |k: &str, what: &str| Err(m.at(k).refuse(what));
    match (t.mode, t.budget) {
        (Some(ThinkingMode::Enabled), None) => {
            return refuse(
                "mode",
                "thinking.mode enabled needs budget_tokens (enabled is thinking with a budget)",
            )
        }
        (Some(ThinkingMode::Adaptive | ThinkingMode::Disabled | ThinkingMode::BetweenTools), Some(_)) => {
            return refuse(
                "budget_tokens",
                "a thinking budget goes with thinking.mode enabled only",
            )
        }
        _ => {}
    }
    if t.mode == Some(ThinkingMode::Disabled) && t.display.is_some() {
        return refuse("display", "thinking that is disabled has nothing to display");
    }
    if t.mode == Some(ThinkingMode::BetweenTools) && t.display.is_some() {
        return refuse("display", "thinking.mode between_tools takes no display");
    }
    Ok(t)
}

fn metadata(v: &At<'_>) -> Checked<Vec<(String, String)>> {
    let m = v.read(
        |x| {
            x.as_object()
                .filter(|m| m.len() <= 16 && m.values().all(Value::is_string))
        },
        format_args!("metadata must be an object of at most 16 strings, not {}", v.value),
    )?;
    Ok(m.iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect())
}

/// The options a request takes: the model's, then the agent's, then the turn's, each
/// key taken from the last level that sets it; and which level that was, per key.
pub(crate) fn merge<'a>(levels: [(&'a str, &RequestOptions); 3]) -> (Map<String, Value>, Vec<(String, &'a str)>) {
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

/// A refusal of a key (its path under `/request_options`) and why.
pub(crate) type Refusal = (&'static str, String);

/// A refusal of the option at `key` by `wire`: "the {wire} wire {what}".
pub(crate) fn refusal(wire: Wire, key: &'static str, what: &str) -> std::result::Result<(), Refusal> {
    Err((key, format!("the {} wire {what}", wire.as_str())))
}

// The profile's rules on options (`crate::profile` holds the rules, this module reads
// the options against them).

/// The mode a thinking option resolves to: the one it names, `enabled` for a budget,
/// else the profile's default for an effort alone.
pub(crate) fn mode_of(p: &Profile, t: &Thinking) -> Option<ThinkingMode> {
    t.mode
        .or(t.budget.map(|_| ThinkingMode::Enabled))
        .or(if t.effort.is_some() { p.thinking_default } else { None })
}

/// Refuses what the options ask that the model `model` does not take.
pub(crate) fn profile_check(
    p: &Profile,
    model: &str,
    o: &Options,
    max_tokens: i32,
) -> std::result::Result<(), Refusal> {
    let who = p.who(model);
    if let Some(t) = &o.thinking {
        check_thinking(p, t, &who, max_tokens)?;
    }
    for (declared, value) in &o.own {
        (declared.profile)(p, value, &who)?;
    }
    if o.cache_diagnostics && !p.cache_diagnostics {
        return Err((
            "cache_diagnostics",
            format!("{who} takes no cache_diagnostics (its profile's cache_diagnostics is false)"),
        ));
    }
    check_sampling(p, o, &who)
}

fn check_thinking(p: &Profile, t: &Thinking, who: &str, max_tokens: i32) -> std::result::Result<(), Refusal> {
    if let Some(mode) = mode_of(p, t) {
        let path = if t.mode.is_some() {
            "thinking/mode"
        } else {
            "thinking/budget_tokens"
        };
        if (t.mode.is_some() || t.budget.is_some()) && !p.thinking_modes.contains(&mode) {
            return Err((
                path,
                format!(
                    "{who} takes thinking modes {}, not {}",
                    list(&p.thinking_modes, ThinkingMode::as_str),
                    mode.as_str()
                ),
            ));
        }
    }
    if let Some(budget) = t.budget {
        match (p.budget_min, p.budget_max) {
            (Some(min), Some(max)) if (min..=max).contains(&(budget as i64)) && (budget as i64) < i64::from(max_tokens) => {}
            (Some(min), Some(max)) => {
                return Err((
                    "thinking/budget_tokens",
                    format!("{who} takes a thinking budget of {min} to {max} tokens, below max_tokens ({max_tokens}), not {budget}"),
                ))
            }
            _ => return Err(("thinking/budget_tokens", format!("{who} takes no thinking budget (adaptive thinking and an effort instead)"))),
        }
    }
    if let Some(e) = t.effort {
        if !p.efforts.contains(&e) {
            return Err((
                "thinking/effort",
                format!(
                    "{who} takes efforts {}, not {}",
                    list(&p.efforts, Effort::as_str),
                    e.as_str()
                ),
            ));
        }
    }
    if let Some(d) = t.display {
        if !p.thinking_display.contains(&d) {
            return Err((
                "thinking/display",
                format!(
                    "{who} takes thinking displays {}, not {}",
                    list(&p.thinking_display, Display::as_str),
                    d.as_str()
                ),
            ));
        }
    }
    Ok(())
}

fn check_sampling(p: &Profile, o: &Options, who: &str) -> std::result::Result<(), Refusal> {
    for (key, value, max) in [
        ("temperature", &o.temperature, p.temperature_max),
        ("top_p", &o.top_p, p.top_p_max),
    ] {
        let Some(v) = value.as_ref().and_then(serde_json::Number::as_f64) else {
            continue;
        };
        match max {
            None => return Err((key, format!("{who} takes no {key}"))),
            Some(max) if v > max => return Err((key, format!("{who} takes a {key} of 0 to {max}, not {v}"))),
            Some(_) => {}
        }
    }
    if o.temperature.is_some() && o.top_p.is_some() && !p.sampling_together {
        return Err(("top_p", format!("{who} takes temperature or top_p, not both")));
    }
    Ok(())
}

/// Whether a request with these options thinks (for the forced-tool rule).
pub(crate) fn thinks(p: &Profile, t: Option<&Thinking>) -> bool {
    t.is_some_and(|t| mode_of(p, t).is_some_and(|m| m != ThinkingMode::Disabled) || t.effort.is_some())
}

/// Whether the tool choice forces a tool.
pub(crate) fn forced(o: &Options) -> bool {
    matches!(o.tool_choice, Some(ToolChoice::Required | ToolChoice::Named(_)))
}

/// The model a request goes to and the profile whose rules it follows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules<'a> {
    /// The model's name, as refusals name it.
    pub model: &'a str,
    /// The profile of the model (`prompt.model_profiles`): the rules its options are checked against.
    pub profile: &'a Profile,
}

/// The tool options against the names of the tools the request loads (`searching`: the
/// request sends its wire's tool search, a tool too): without any tool, `tool_choice` and
/// `parallel_tool_calls` are left out (the APIs refuse them without tools, and an agent's
/// options serve its turns without tools too); a `tool_choice` naming a tool the request
/// does not load (absent, or deferred) is refused.
pub(crate) fn fit_tools(o: &mut Options, loaded: &[&str], searching: bool) -> Result<()> {
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

pub(crate) fn q(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A tool choice other than a named tool, as the OpenAI wires spell it.
pub(crate) fn simple(c: &ToolChoice) -> &'static str {
    match c {
        ToolChoice::Auto => "auto",
        ToolChoice::None => "none",
        _ => "required",
    }
}

pub(crate) fn strings(list: &[String]) -> String {
    Value::Array(list.iter().map(|s| Value::String(s.clone())).collect()).to_string()
}

pub(crate) fn metadata_text(m: &[(String, String)]) -> String {
    let inner: Vec<String> = m.iter().map(|(k, v)| format!("{}:{}", q(k), q(v))).collect();
    format!("{{{}}}", inner.join(","))
}

/// `temperature` and `top_p`, as the Anthropic and OpenAI wires spell them.
pub(crate) fn sampling(o: &Options, out: &mut Vec<(&'static str, String)>) {
    if let Some(t) = &o.temperature {
        out.push(("temperature", t.to_string()));
    }
    if let Some(t) = &o.top_p {
        out.push(("top_p", t.to_string()));
    }
}

impl Options {
    /// The value of the option only some wires take at `key`, if the request sets it.
    pub(crate) fn own(&self, key: &str) -> Option<&Value> {
        self.own.iter().find(|(o, _)| o.key == key).map(|(_, v)| v)
    }

    /// The effort sent: the option's, or `none` for thinking turned off on a wire that
    /// says it by effort.
    pub(crate) fn effort(&self) -> Option<Effort> {
        let t = self.thinking.as_ref()?;
        t.effort
            .or((t.mode == Some(ThinkingMode::Disabled)).then_some(Effort::None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// The options resolved for a model row that names no provider.
    fn resolve(
        levels: [(&str, &RequestOptions); 3],
        wire: Wire,
        max_tokens: i32,
        rules: Option<Rules<'_>>,
    ) -> crate::error::Result<Options> {
        let dialect = crate::wire::options::Dialect {
            provider: crate::wire::dialect_of(wire, None, rules.map(|r| r.profile)),
            native_images: false,
        };
        crate::wire::options::resolve_options(levels, wire, max_tokens, rules, dialect)
    }
    use serde_json::json;

    /// The check a write runs on one level's options.
    fn check(o: &RequestOptions) -> Result<()> {
        parse(&o.0, crate::wire::options::every_wire()).map(drop)
    }

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
            None,
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
            None,
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
        // A refusal names the level that set the refused key, read from its pointer: an
        // unknown key sharing a known one's prefix, or a value spelling another option's
        // pointer, names its own level.
        for turn in [json!({"stop_x": 1}), json!({"temperature": "/request_options/stop"})] {
            let e = resolve(
                [
                    ("model", &RequestOptions::default()),
                    ("agent", &opts(json!({"stop": "x"}))),
                    ("turn", &RequestOptions(turn.as_object().cloned().unwrap_or_default())),
                ],
                Wire::Chat,
                1024,
                None,
            )
            .unwrap_err();
            assert_eq!(
                e.detail.as_deref(),
                Some("Set by the turn's request_options."),
                "{turn}"
            );
        }
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
        assert!(check(&opts(json!({"thinking": {"budget_tokens": -1}}))).is_err());
        assert!(check(&opts(json!({"thinking": {"mode": "enabled"}}))).is_err());
        assert!(check(&opts(json!({"thinking": {"mode": "adaptive", "budget_tokens": 2048}}))).is_err());
        assert!(check(&opts(json!({"thinking": {"effort": "huge"}}))).is_err());
        assert!(check(&opts(json!({"stop": ["a", "b", "c", "d", "e"]}))).is_err());
    }

    fn profiled(v: Value, max: i32) -> Result<Options> {
        let p = crate::profile::tests::adaptive_only();
        let rules = Rules {
            model: "claude-opus-5-20261101",
            profile: &p,
        };
        resolve(
            [
                ("model", &RequestOptions::default()),
                ("agent", &RequestOptions::default()),
                ("turn", &opts(v)),
            ],
            Wire::Anthropic,
            max,
            Some(rules),
        )
    }

    #[test]
    fn a_profile_decides_the_mode_an_effort_means() {
        let o = profiled(json!({"thinking": {"effort": "high"}}), 8192).unwrap();
        assert_eq!(o.mode, Some(ThinkingMode::Adaptive));
        assert_eq!(o.effort(), Some(Effort::High));
    }

    #[test]
    fn a_profile_refuses_what_its_model_does_not_take() {
        for (v, key, says) in [
            (
                json!({"thinking": {"budget_tokens": 2048}}),
                "/request_options/thinking/budget_tokens",
                "takes thinking modes adaptive, disabled, not enabled",
            ),
            (
                json!({"thinking": {"effort": "minimal"}}),
                "/request_options/thinking/effort",
                "takes efforts low, medium, high, xhigh, max, not minimal",
            ),
            (
                json!({"temperature": 0.3}),
                "/request_options/temperature",
                "takes no temperature",
            ),
            (
                json!({"thinking": {"effort": "low"}, "tool_choice": "required"}),
                "/request_options/tool_choice",
                "no thinking beside a forced tool choice",
            ),
        ] {
            let e = profiled(v.clone(), 8192).unwrap_err();
            assert_eq!(e.code, Code::RequestOptionsInvalid, "{v}");
            assert!(
                e.message.contains(key) && e.message.contains(says),
                "{v}: {}",
                e.message
            );
            assert!(e.message.contains("(profile \"claude-opus-5\")"), "{}", e.message);
            assert!(e.hint.as_deref().unwrap_or("").contains("prompt.model_profiles"), "{v}");
        }
    }

    #[test]
    fn a_model_row_its_profile_does_not_serve_is_model_invalid() {
        let e = profiled(json!({}), 200_000).unwrap_err();
        assert_eq!(e.code, Code::ModelInvalid);
        assert!(
            e.message.contains("writes at most 128000 output tokens, not 200000"),
            "{}",
            e.message
        );
        let p = crate::profile::tests::adaptive_only();
        let refusal = p.check_model("claude-opus-5", Wire::Chat, 1024).unwrap_err();
        assert_eq!(refusal.0, "");
        assert!(
            refusal.1.contains("is served on the anthropic wire, not chat"),
            "{}",
            refusal.1
        );
    }
}
