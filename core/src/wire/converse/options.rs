//! The request options as Converse spells them (botocore's `ConverseRequest`):
//! `inferenceConfig` (`maxTokens`, then `temperature`, `topP`, `stopSequences`),
//! `toolConfig.toolChoice`, `outputConfig` (`effort`, a JSON schema's `textFormat`),
//! `requestMetadata`, and what only the model behind Bedrock reads in
//! `additionalModelRequestFields` (Claude's `thinking`). What the wire cannot say is
//! refused on write, at the option's pointer (`options::check_shape`).

use crate::options::{Format, Options, ToolChoice};

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

fn q(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
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
        let list: Vec<String> = s.iter().map(|x| q(x)).collect();
        f.inference.push(format!(r#""stopSequences":[{}]"#, list.join(",")));
    }
    f.tool_choice = o.tool_choice.as_ref().and_then(|c| match c {
        ToolChoice::Auto => Some(r#"{"auto":{}}"#.to_string()),
        ToolChoice::Required => Some(r#"{"any":{}}"#.to_string()),
        ToolChoice::Named(n) => Some(format!(r#"{{"tool":{{"name":{}}}}}"#, q(n))),
        // Refused on write (`check`): Converse has no choice of no tool.
        ToolChoice::None => None,
    });
    let t = o.thinking.clone().unwrap_or_default();
    if let Some(mode) = o.mode {
        let mut thinking = format!(r#"{{"type":{}"#, q(mode.as_str()));
        if let Some(b) = t.budget {
            thinking.push_str(&format!(r#","budget_tokens":{b}"#));
        }
        if let Some(d) = t.display {
            thinking.push_str(&format!(r#","display":{}"#, q(d.as_str())));
        }
        thinking.push('}');
        f.additional = Some(format!(r#"{{"thinking":{thinking}}}"#));
    }
    if let Some(m) = &o.metadata {
        let pairs: Vec<String> = m.iter().map(|(k, v)| format!("{}:{}", q(k), q(v))).collect();
        f.metadata = Some(format!("{{{}}}", pairs.join(",")));
    }
    let mut output = Vec::new();
    if let Some(e) = t.effort {
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
