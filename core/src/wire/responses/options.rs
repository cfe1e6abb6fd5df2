//! The request options as OpenAI's Responses API spells them (`ResponseCreateParams`):
//! the OpenAI fields (`super::openai`), then `text.format` and `reasoning` (`effort`,
//! `summary`), and the wire's own options, `store` and `include`.
//!
//! | option | shape | sent as |
//! |---|---|---|
//! | `store` | bool | `store` |
//! | `include` | list of `ResponseIncludable` | `include` (with `reasoning.encrypted_content` added when `store` is false) |

use serde_json::Value;

use super::super::openai::openai_format;
use crate::json_at::{At, Checked};
use crate::kinds::{Display, Wire};
use crate::options::{boolean, no_rule, q, refusal, strings, Options, OwnOption, Refusal};

/// `store`: whether OpenAI stores the response (a stateful chain needs it).
pub(super) const STORE: OwnOption = OwnOption {
    key: "store",
    read: |v| boolean(v, "store").map(Value::Bool),
    lacking: "takes no store",
    profile: no_rule,
};

/// `include`: what the response adds (OpenAI's `ResponseIncludable`).
pub(super) const INCLUDE: OwnOption = OwnOption {
    key: "include",
    read: include,
    lacking: "takes no include",
    profile: no_rule,
};

/// What `include` may name (OpenAI's `ResponseIncludable`).
const INCLUDABLE: [&str; 8] = [
    "file_search_call.results",
    "web_search_call.results",
    "web_search_call.action.sources",
    "message.input_image.image_url",
    "computer_call_output.output.image_url",
    "code_interpreter_call.outputs",
    "reasoning.encrypted_content",
    "message.output_text.logprobs",
];

/// `include` read: a list of includables, each once.
fn include(v: &At<'_>) -> Checked<Value> {
    let list = v.list(format_args!("include must be a list of strings, not {}", v.value))?;
    let mut out: Vec<Value> = Vec::new();
    for x in list {
        let s = x.read(
            |s| s.as_str().filter(|s| INCLUDABLE.contains(s)),
            format_args!("include takes {}, not {}", INCLUDABLE.join(", "), x.value),
        )?;
        if !out.iter().any(|o| o == s) {
            out.push(Value::String(s.to_string()));
        }
    }
    Ok(Value::Array(out))
}

/// The request's `store`, if it sets one.
fn store(o: &Options) -> Option<bool> {
    o.own(STORE.key).and_then(Value::as_bool)
}

/// The request's `include`, as its reader kept it.
fn includes(o: &Options) -> Vec<String> {
    let list = o.own(INCLUDE.key).and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// What the wire cannot say, whatever the model: stop sequences, and a stateful chain
/// of responses it does not store.
pub(super) fn check(o: &Options) -> Result<(), Refusal> {
    if o.stateful && store(o) == Some(false) {
        return refusal(
            Wire::Responses,
            "stateful",
            "chains stored responses only: stateful needs store true or unset",
        );
    }
    super::super::openai::check(o, Wire::Responses)?;
    if o.stop.is_some() {
        return refusal(Wire::Responses, "stop", "takes no stop sequences");
    }
    Ok(())
}

/// The top-level fields the options add to the body (after its tools), in the
/// reference's order, as (key, JSON text).
pub(super) fn fields(o: &Options) -> Vec<(&'static str, String)> {
    let mut out = super::super::openai::leading_fields(o, false);
    if let Some(f) = &o.response_format {
        out.push(("text", format!(r#"{{"format":{}}}"#, openai_format(f, false))));
    }
    let effort = o.effort();
    let summary = o.thinking.as_ref().and_then(|t| t.display) == Some(Display::Summarized);
    if effort.is_some() || summary {
        let mut parts = Vec::new();
        if let Some(e) = effort {
            parts.push(format!(r#""effort":{}"#, q(e.as_str())));
        }
        if summary {
            parts.push(r#""summary":"auto""#.to_string());
        }
        out.push(("reasoning", format!("{{{}}}", parts.join(","))));
    }
    super::super::openai::trailing_fields(o, &mut out);
    if let Some(store) = store(o) {
        out.push(("store", store.to_string()));
    }
    if o.own(INCLUDE.key).is_some() {
        out.push(("include", strings(&includes(o))));
    }
    out
}

/// The include that replays reasoning when nothing is stored.
const ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

/// With `store: false`, reasoning is replayed from its encrypted content: `include`
/// gains it (a model whose reasoning is replayed needs it, nothing being stored).
pub(super) fn replaying_reasoning(o: &mut Options) {
    if store(o) != Some(false) {
        return;
    }
    let mut include = includes(o);
    if include.iter().any(|i| i == ENCRYPTED_REASONING) {
        return;
    }
    include.push(ENCRYPTED_REASONING.to_string());
    let value = Value::Array(include.into_iter().map(Value::String).collect());
    o.own.retain(|(declared, _)| declared.key != INCLUDE.key);
    o.own.push((&INCLUDE, value));
}
