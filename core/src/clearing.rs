//! Tool-result clearing (`request_options.clear_tool_results`, docs/design.md, "Clearing
//! tool results"): when a run's request grows past `trigger` tokens, the results of its
//! older tool calls are sent as a placeholder, their pictures with them, on every wire.
//! A step clears every result but the newest `keep` and the excluded tools' at once (so a
//! prompt cache breaks once per step, not once per round), and only when it clears at
//! least `clear_at_least` tokens. What a request cleared is stored with the newest round
//! it carried (`rounds.cleared`), and every later request of the turn — and every later
//! turn that reads the run in its history — sends those results cleared, also after an
//! in-turn summary: a cleared result never comes back.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json_at::{At, Checked};

/// What a result cleared is sent as, unless the rule names another text.
pub(crate) const DEFAULT_PLACEHOLDER: &str = "[tool result cleared]";

/// The longest placeholder: a cleared result is meant to be short.
const MAX_PLACEHOLDER: usize = 200;

/// Whether `text` may be a placeholder: a short text, not blank.
pub(crate) fn fits_placeholder(text: &str) -> bool {
    !text.trim().is_empty() && text.chars().count() <= MAX_PLACEHOLDER
}

/// The option's keys, in the order the docs list them.
const KEYS: &str = "trigger, keep, clear_at_least, exclude_tools, placeholder";

/// The rule a request clears by: `request_options.clear_tool_results`, frozen by the seal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Rule {
    /// The request's estimated input tokens above which a step clears.
    pub(crate) trigger: u32,
    /// The newest results never cleared.
    pub(crate) keep: u32,
    /// The fewest tokens a step clears; a step that would clear fewer waits.
    pub(crate) clear_at_least: u32,
    /// The tools whose results are never cleared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) exclude_tools: Vec<String>,
    /// What a cleared result's content becomes.
    pub(crate) placeholder: String,
}

/// Reads `clear_tool_results`: an object of the rule's keys; `trigger` is required.
pub(crate) fn read(v: &At<'_>) -> Checked<Rule> {
    let m = v.object(format_args!(
        "clear_tool_results must be an object of {KEYS}, not {}",
        v.value
    ))?;
    let mut rule = Rule {
        trigger: 0,
        keep: 3,
        clear_at_least: 0,
        exclude_tools: Vec::new(),
        placeholder: DEFAULT_PLACEHOLDER.into(),
    };
    let mut trigger = None;
    for (key, value) in m.entries() {
        let tokens = |what: &str| {
            value.read(
                |x| x.as_u64().and_then(|n| u32::try_from(n).ok()),
                format_args!(
                    "clear_tool_results.{what} must be a whole number of tokens, not {}",
                    value.value
                ),
            )
        };
        match key {
            "trigger" => trigger = Some(tokens("trigger")?),
            "keep" => {
                rule.keep = value.read(
                    |x| x.as_u64().and_then(|n| u32::try_from(n).ok()),
                    format_args!(
                        "clear_tool_results.keep must be a whole number of results, not {}",
                        value.value
                    ),
                )?
            }
            "clear_at_least" => rule.clear_at_least = tokens("clear_at_least")?,
            "exclude_tools" => rule.exclude_tools = names(&value)?,
            "placeholder" => {
                rule.placeholder = value
                    .read(
                        |x| {
                            x.as_str().filter(|s| fits_placeholder(s))
                        },
                        format_args!(
                            "clear_tool_results.placeholder must be a non-empty string of at most {MAX_PLACEHOLDER} characters, not {}",
                            value.value
                        ),
                    )?
                    .to_string()
            }
            other => {
                return Err(value.refuse(format_args!(
                    "unknown clear_tool_results key \"{other}\"; known: {KEYS}"
                )))
            }
        }
    }
    rule.trigger = trigger.ok_or_else(|| {
        m.refuse("clear_tool_results needs a trigger: the input tokens above which results are cleared")
    })?;
    Ok(rule)
}

fn names(v: &At<'_>) -> Checked<Vec<String>> {
    let message = || {
        format!(
            "clear_tool_results.exclude_tools must be a list of tool names, not {}",
            v.value
        )
    };
    let mut out: Vec<String> = Vec::new();
    for x in v.list(message())? {
        let name = x.read(|s| s.as_str().filter(|s| !s.is_empty()), message())?;
        if !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    }
    Ok(out)
}

/// A result a request sends cleared: its round and call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    /// The round the result is in.
    pub round: i32,
    /// The call it answers.
    pub call_id: String,
}

/// What the request that first carried a round cleared (`rounds.cleared`): the results
/// and the placeholder they were sent as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// What the results were sent as.
    pub placeholder: String,
    /// The results cleared, oldest first.
    pub results: Vec<Key>,
}

impl Record {
    /// Reads `rounds.cleared` (`null`: the request cleared nothing).
    pub(crate) fn from_column(v: &Value) -> Option<Record> {
        serde_json::from_value(v.clone()).ok()
    }

    /// Several records as one (a turn's records share its rule's placeholder); `None`
    /// for none.
    pub(crate) fn merged(records: &[Record]) -> Option<Record> {
        let first = records.first()?;
        Some(Record {
            placeholder: first.placeholder.clone(),
            results: records.iter().flat_map(|r| r.results.iter().cloned()).collect(),
        })
    }

    /// The column's JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The results a request sends cleared: every record its rounds hold, and the step it
/// takes itself; by round, each cleared call with its placeholder.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Cleared {
    by_round: std::collections::BTreeMap<i32, Vec<(String, String)>>,
}

impl Cleared {
    /// Adds what a record cleared (a result cleared twice keeps its first placeholder).
    pub(crate) fn add(&mut self, record: &Record) {
        for k in &record.results {
            if self.placeholder(k.round, &k.call_id).is_none() {
                self.by_round
                    .entry(k.round)
                    .or_default()
                    .push((k.call_id.clone(), record.placeholder.clone()));
            }
        }
    }

    /// The placeholder a result is sent as, when it is cleared.
    pub(crate) fn placeholder(&self, round: i32, call_id: &str) -> Option<&str> {
        self.by_round
            .get(&round)?
            .iter()
            .find(|(id, _)| id == call_id)
            .map(|(_, p)| p.as_str())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_round.is_empty()
    }

    /// What a request clears once it takes `step`.
    pub(crate) fn with(&self, step: &Record) -> Cleared {
        let mut c = self.clone();
        c.add(step);
        c
    }
}

/// A result a request sends cleared, as `estimate_turn` and `explain_turn` list it: its
/// round, call, tool, and the tokens its content and pictures would have cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClearedResult {
    /// The turn whose run the result is in, when it is an earlier turn's (read in
    /// history); `None`: the request's own turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<uuid::Uuid>,
    /// The round the result is in.
    pub round: i32,
    /// The call it answers.
    pub call_id: String,
    /// The tool that call called.
    pub tool: String,
    /// What its content and pictures would have cost.
    pub tokens: u32,
}
