//! The request options as Anthropic spells them (the SDK's `MessageCreateParams`):
//! `tool_choice` (with `disable_parallel_tool_use`), `stop_sequences`, `metadata`
//! (`user_id` only), sampling where a profile allows it, `thinking` and `output_config`
//! (`effort`, a JSON schema's `format`). What the wire cannot say is refused on write
//! ([`check`]).

use crate::kinds::{Effort, Wire};
use crate::options::{
    forced, metadata_text, q, refusal, sampling, strings, Format, Options, Refusal, Thinking, ToolChoice,
};

/// Claude's thinking, on the wires that reach it (anthropic, and converse's
/// `additionalModelRequestFields`): a budget of at least 1024 and below `max_tokens`, and
/// an effort it takes.
pub(crate) fn claude_thinking(t: &Thinking, max_tokens: i32, wire: Wire) -> std::result::Result<(), Refusal> {
    let refuse = |key: &'static str, what: &str| refusal(wire, key, what);
    if let Some(b) = t.budget {
        if b < 1024 || b >= max_tokens.max(0) as u64 {
            return refuse(
                "thinking/budget_tokens",
                &format!("needs a thinking budget of at least 1024 and below max_tokens ({max_tokens})"),
            );
        }
    }
    if matches!(t.effort, Some(Effort::None | Effort::Minimal)) {
        return refuse("thinking/effort", "takes an effort of low, medium, high, xhigh or max");
    }
    Ok(())
}

/// Claude's `thinking` object as Anthropic spells it (`type`, `budget_tokens`, `display`):
/// the anthropic wire's field, and converse's `additionalModelRequestFields.thinking`.
pub(crate) fn claude_thinking_text(o: &Options) -> Option<String> {
    let mode = o.mode?;
    let t = o.thinking.clone().unwrap_or_default();
    let mut thinking = format!(r#"{{"type":{}"#, q(mode.as_str()));
    if let Some(b) = t.budget {
        thinking.push_str(&format!(r#","budget_tokens":{b}"#));
    }
    if let Some(d) = t.display {
        thinking.push_str(&format!(r#","display":{}"#, q(d.as_str())));
    }
    thinking.push('}');
    Some(thinking)
}

/// What the wire cannot say, whatever the model.
pub(super) fn check(o: &Options, max_tokens: i32) -> Result<(), Refusal> {
    if o.response_format == Some(Format::JsonObject) {
        return refusal(
            Wire::Anthropic,
            "response_format",
            "takes structured output as a json_schema only",
        );
    }
    claude_thinking(&o.thinking.clone().unwrap_or_default(), max_tokens, Wire::Anthropic)?;
    if o.metadata
        .as_ref()
        .is_some_and(|m| m.iter().any(|(k, _)| k != "user_id"))
    {
        return refusal(Wire::Anthropic, "metadata", "takes metadata.user_id only");
    }
    Ok(())
}

/// What the wire does not take from a model without a profile (0.3's rules): sampling
/// options (the SDK's request type has none), thinking beside a forced tool.
pub(super) fn check_unprofiled(o: &Options) -> Result<(), Refusal> {
    let refuse = |key: &'static str| {
        Err((
            key,
            format!(
                "the anthropic wire takes no {key} (its SDK's request type has none; a model's profile can allow it)"
            ),
        ))
    };
    if o.temperature.is_some() {
        return refuse("temperature");
    }
    if o.top_p.is_some() {
        return refuse("top_p");
    }
    if o.thinking.is_some() && forced(o) {
        return Err((
            "tool_choice",
            "the anthropic wire takes no thinking beside a forced tool choice (required or a named tool)".into(),
        ));
    }
    Ok(())
}

fn tool_choice(c: &ToolChoice, parallel: Option<bool>) -> String {
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

/// The top-level fields the options add to the body (after its tools), in the
/// reference's order, as (key, JSON text).
pub(super) fn fields(o: &Options) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    // Anthropic says parallel_tool_calls only inside tool_choice: alone, it rides an
    // `auto` choice (the API's default).
    let choice = match (&o.tool_choice, o.parallel_tool_calls) {
        (Some(c), _) => Some(c),
        (None, Some(_)) => Some(&ToolChoice::Auto),
        (None, None) => None,
    };
    if let Some(c) = choice {
        out.push(("tool_choice", tool_choice(c, o.parallel_tool_calls)));
    }
    if let Some(s) = &o.stop {
        out.push(("stop_sequences", strings(s)));
    }
    if let Some(m) = &o.metadata {
        out.push(("metadata", metadata_text(m)));
    }
    // Only a profile lets sampling options through to this wire.
    sampling(o, &mut out);
    if let Some(thinking) = claude_thinking_text(o) {
        out.push(("thinking", thinking));
    }
    let effort = o.thinking.as_ref().and_then(|t| t.effort);
    let format = match &o.response_format {
        Some(Format::JsonSchema { schema, .. }) => Some(schema),
        _ => None,
    };
    if effort.is_some() || format.is_some() {
        let mut parts = Vec::new();
        if let Some(e) = effort {
            parts.push(format!(r#""effort":{}"#, q(e.as_str())));
        }
        if let Some(s) = format {
            parts.push(format!(r#""format":{{"type":"json_schema","schema":{s}}}"#));
        }
        out.push(("output_config", format!("{{{}}}", parts.join(","))));
    }
    out
}
