//! The request options as Gemini spells them (`GenerateContentConfig`): `toolConfig`
//! (`functionCallingConfig`), and in `generationConfig` `temperature`, `topP`,
//! `stopSequences`, `responseMimeType` with `responseJsonSchema`, `thinkingConfig`
//! (`thinkingLevel`, `thinkingBudget`, and the wire's own option
//! `thinking.include_thoughts` as `includeThoughts`).

use serde_json::Value;

use crate::kinds::{Effort, ThinkingMode, Wire};
use crate::options::{boolean, q, refusal, strings, Format, Options, OwnOption, Refusal, ToolChoice};
use crate::profile::Profile;

/// `thinking.include_thoughts`: whether the response returns the model's thoughts
/// (Gemini's `includeThoughts`); a model whose profile says it returns none refuses true.
pub(super) const INCLUDE_THOUGHTS: OwnOption = OwnOption {
    key: "thinking/include_thoughts",
    read: |v| boolean(v, "thinking.include_thoughts").map(Value::Bool),
    lacking: "returns no thoughts on request",
    profile: thoughts_rule,
};

/// The profile's rule: `include_thoughts` true on a model that returns thoughts.
fn thoughts_rule(p: &Profile, value: &Value, who: &str) -> Result<(), Refusal> {
    match value.as_bool() == Some(true) && !p.include_thoughts {
        true => Err((INCLUDE_THOUGHTS.key, format!("{who} returns no thoughts on request"))),
        false => Ok(()),
    }
}

/// What the wire cannot say, whatever the model.
pub(super) fn check(o: &Options) -> Result<(), Refusal> {
    let refuse = |key: &'static str, what: &str| refusal(Wire::Gemini, key, what);
    let t = o.thinking.clone().unwrap_or_default();
    if o.parallel_tool_calls.is_some() {
        return refuse("parallel_tool_calls", "has no parallel_tool_calls switch");
    }
    if o.metadata.is_some() {
        return refuse("metadata", "takes no metadata");
    }
    if matches!(t.effort, Some(Effort::None | Effort::Max)) {
        return refuse(
            "thinking/effort",
            "takes a thinking level of minimal, low, medium, high or xhigh",
        );
    }
    if t.display.is_some() {
        return refuse("thinking/display", "takes include_thoughts, not a display");
    }
    if t.mode == Some(ThinkingMode::BetweenTools) {
        return refuse("thinking/mode", "takes no between_tools (an anthropic mode)");
    }
    Ok(())
}

/// The `toolConfig` field, and what the options add to `generationConfig`
/// (after `maxOutputTokens`), as JSON text fragments.
pub(super) fn fields(o: &Options) -> (Option<String>, Vec<String>) {
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
    if let Some(t) = &o.thinking {
        let mut config = Vec::new();
        if let Some(e) = t.effort {
            config.push(format!(r#""thinkingLevel":"{}""#, e.as_str().to_ascii_uppercase()));
        }
        match (t.budget, o.mode) {
            (Some(b), _) => config.push(format!(r#""thinkingBudget":{b}"#)),
            (None, Some(ThinkingMode::Disabled)) => config.push(r#""thinkingBudget":0"#.into()),
            _ => {}
        }
        if let Some(i) = o.own(INCLUDE_THOUGHTS.key).and_then(Value::as_bool) {
            config.push(format!(r#""includeThoughts":{i}"#));
        }
        if !config.is_empty() {
            gen.push(format!(r#""thinkingConfig":{{{}}}"#, config.join(",")));
        }
    }
    (tool_config, gen)
}
