//! What the two OpenAI wires (chat and responses) share: where they mark the prompt
//! cache and how it reads them, and in their options the thinking they say by effort,
//! the tool choice's spelling, the fields every OpenAI body takes.

use crate::kinds::{Effort, ThinkingMode, Wire};
use crate::options::{metadata_text, q, refusal, sampling, simple, Format, Options, Refusal, ToolChoice};

/// What an OpenAI wire cannot say of thinking: a budget, a mode other than by effort.
pub(super) fn check(o: &Options, wire: Wire) -> Result<(), Refusal> {
    let t = o.thinking.clone().unwrap_or_default();
    if t.budget.is_some() {
        return refusal(wire, "thinking/budget_tokens", "takes a reasoning effort, not a budget");
    }
    if matches!(t.mode, Some(ThinkingMode::Adaptive | ThinkingMode::BetweenTools)) {
        return refusal(
            wire,
            "thinking/mode",
            "says thinking by its effort (mode disabled is effort none)",
        );
    }
    if t.mode == Some(ThinkingMode::Disabled) && t.effort.is_some_and(|e| e != Effort::None) {
        return refusal(wire, "thinking/effort", "turns thinking off with effort none only");
    }
    Ok(())
}

/// The fields every OpenAI body takes first (after its tools): `tool_choice` (a named
/// tool as `function` spells it: nested on chat, flat on responses),
/// `parallel_tool_calls`, `temperature`, `top_p`.
pub(super) fn leading_fields(o: &Options, nested: bool) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(c) = &o.tool_choice {
        let text = match c {
            ToolChoice::Named(n) if nested => format!(r#"{{"type":"function","function":{{"name":{}}}}}"#, q(n)),
            ToolChoice::Named(n) => format!(r#"{{"type":"function","name":{}}}"#, q(n)),
            other => q(simple(other)),
        };
        out.push(("tool_choice", text));
    }
    if let Some(p) = o.parallel_tool_calls {
        out.push(("parallel_tool_calls", p.to_string()));
    }
    sampling(o, &mut out);
    out
}

/// The field every OpenAI body takes last: `metadata` (responses adds its own options
/// after it).
pub(super) fn trailing_fields(o: &Options, out: &mut Vec<(&'static str, String)>) {
    if let Some(m) = &o.metadata {
        out.push(("metadata", metadata_text(m)));
    }
}

/// Where an OpenAI wire marks cache breakpoints: on input parts for a model whose profile
/// takes explicit breakpoints, nowhere otherwise (OpenAI's implicit cache).
pub(super) fn marking(profile: Option<&crate::profile::Profile>) -> super::form::Marking {
    if super::shape::explicit(profile) {
        super::form::Marking::InputParts
    } else {
        super::form::Marking::Unmarked
    }
}

/// How OpenAI's prompt cache reads a body: at its explicit breakpoints only for a model
/// whose profile takes them, otherwise implicitly, growing in steps of 128 tokens past
/// the minimum.
pub(super) fn cache_rules(profile: Option<&crate::profile::Profile>) -> super::form::CacheRules {
    let explicit = super::shape::explicit(profile);
    super::form::CacheRules {
        at_marks_only: explicit,
        lookback: profile.and_then(|p| p.cache_lookback).map(|l| l.max(1) as usize),
        step: (!explicit).then_some(128),
        unnamed_five_minutes: false,
    }
}

/// A structured output format as OpenAI spells it: chat nests a json_schema's fields in
/// `json_schema`, responses (`text.format`) lays them flat.
pub(super) fn openai_format(f: &Format, nested: bool) -> String {
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
