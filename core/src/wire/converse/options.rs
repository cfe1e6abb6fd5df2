//! The request options as Converse spells them (botocore's `ConverseRequest`):
//! `inferenceConfig` (`maxTokens`, then `temperature`, `topP`, `stopSequences`),
//! `toolConfig.toolChoice`, `outputConfig` (`effort`, a JSON schema's `textFormat`),
//! `requestMetadata`, and what only the model behind Bedrock reads in
//! `additionalModelRequestFields` (Claude's `thinking`). What the wire cannot say is
//! refused on write, at the option's pointer ([`check`]).

use super::super::anthropic::options::{claude_thinking, claude_thinking_text};
use crate::kinds::Wire;
use crate::options::{metadata_text, q, refusal, strings, Format, Options, Refusal, ToolChoice};

/// The option fields of a Converse body, as JSON text.
#[derive(Default)]
pub(crate) struct Fields {
    /// Members of `inferenceConfig` after `maxTokens`.
    pub(crate) inference: Vec<String>,
    /// `toolConfig.toolChoice` (sent only beside tools).
    pub(crate) tool_choice: Option<String>,
    /// `additionalModelRequestFields`.
    pub(crate) additional: Option<String>,
    /// `requestMetadata`.
    pub(crate) metadata: Option<String>,
    /// `outputConfig`.
    pub(crate) output: Option<String>,
}

pub(crate) fn fields(o: &Options) -> Fields {
    let mut f = Fields::default();
    if let Some(t) = &o.temperature {
        f.inference.push(format!(r#""temperature":{t}"#));
    }
    if let Some(t) = &o.top_p {
        f.inference.push(format!(r#""topP":{t}"#));
    }
    if let Some(s) = &o.stop {
        f.inference.push(format!(r#""stopSequences":{}"#, strings(s)));
    }
    f.tool_choice = o.tool_choice.as_ref().and_then(|c| match c {
        ToolChoice::Auto => Some(r#"{"auto":{}}"#.to_string()),
        ToolChoice::Required => Some(r#"{"any":{}}"#.to_string()),
        ToolChoice::Named(n) => Some(format!(r#"{{"tool":{{"name":{}}}}}"#, q(n))),
        // Refused on write (`check`): Converse has no choice of no tool.
        ToolChoice::None => None,
    });
    f.additional = claude_thinking_text(o).map(|thinking| format!(r#"{{"thinking":{thinking}}}"#));
    f.metadata = o.metadata.as_deref().map(metadata_text);
    let mut output = Vec::new();
    if let Some(e) = o.thinking.as_ref().and_then(|t| t.effort) {
        output.push(format!(r#""effort":{}"#, q(e.as_str())));
    }
    if let Some(Format::JsonSchema { name, schema, .. }) = &o.response_format {
        // Converse takes the schema as a JSON string.
        output.push(format!(
            r#""textFormat":{{"type":"json_schema","structure":{{"jsonSchema":{{"schema":{},"name":{}}}}}}}"#,
            q(schema),
            q(name)
        ));
    }
    if !output.is_empty() {
        f.output = Some(format!("{{{}}}", output.join(",")));
    }
    f
}

/// What the wire cannot say, whatever the model: refused on write, as (option's
/// pointer, why).
pub(super) fn check(o: &Options, max_tokens: i32) -> Result<(), Refusal> {
    let refuse = |key: &'static str, what: &str| refusal(Wire::Converse, key, what);
    if o.tool_choice == Some(ToolChoice::None) {
        return refuse("tool_choice", "has no tool choice none (leave the tools out instead)");
    }
    if o.parallel_tool_calls.is_some() {
        return refuse("parallel_tool_calls", "has no parallel_tool_calls switch");
    }
    if o.response_format == Some(Format::JsonObject) {
        return refuse("response_format", "takes structured output as a json_schema only");
    }
    let beyond_one = |n: &serde_json::Number| n.as_f64().is_some_and(|v| v > 1.0);
    if o.temperature.as_ref().is_some_and(beyond_one) {
        return refuse("temperature", "takes a temperature from 0 to 1");
    }
    if let Some(m) = &o.metadata {
        // Bedrock's RequestMetadata: 1 to 16 entries, each key and value of the characters
        // [a-zA-Z0-9\s:_@$#=/+,.-] (a key 1 to 256 long, a value up to 256).
        let spelled = |s: &str| {
            s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c.is_whitespace() || ":_@$#=/+,.-".contains(c))
        };
        if m.is_empty()
            || m.len() > 16
            || m.iter().any(|(k, v)| {
                k.is_empty() || k.chars().count() > 256 || v.chars().count() > 256 || !spelled(k) || !spelled(v)
            })
        {
            return refuse(
                "metadata",
                "takes 1 to 16 metadata entries (requestMetadata), keys of 1 to 256 and values of up to 256 letters, digits, spaces and :_@$#=/+,.-",
            );
        }
    }
    claude_thinking(&o.thinking.clone().unwrap_or_default(), max_tokens, Wire::Converse)
}
