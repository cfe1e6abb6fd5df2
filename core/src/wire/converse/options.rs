//! The request options as Converse spells them (botocore's `ConverseRequest`):
//! `inferenceConfig` (`maxTokens`, then `temperature`, `topP`, `stopSequences`),
//! `toolConfig.toolChoice`, `outputConfig` (`effort`, a JSON schema's `textFormat`),
//! `requestMetadata`, and what only the model behind Bedrock reads in
//! `additionalModelRequestFields` (Claude's `thinking`). What the wire cannot say is
//! refused on write, at the option's pointer (`options::check_shape`).

use crate::options::{claude_thinking_text, metadata_text, q, strings, Format, Options, ToolChoice};

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
