//! The request options as OpenAI's Responses API spells them (`ResponseCreateParams`):
//! the OpenAI fields (`super::openai`), then `text.format` and `reasoning` (`effort`,
//! `summary`), and `store` and `include`.

use super::super::openai::openai_format;
use crate::kinds::{Display, Wire};
use crate::options::{q, refusal, Options, Refusal};

/// What the wire cannot say, whatever the model.
pub(super) fn check(o: &Options) -> Result<(), Refusal> {
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
    out
}

/// The include that replays reasoning when nothing is stored.
const ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

/// With `store: false`, reasoning is replayed from its encrypted content: `include`
/// gains it (a model whose reasoning is replayed needs it, nothing being stored).
pub(super) fn replaying_reasoning(o: &mut Options) {
    if o.store == Some(false) {
        let include = o.include.get_or_insert_with(Vec::new);
        if !include.iter().any(|i| i == ENCRYPTED_REASONING) {
            include.push(ENCRYPTED_REASONING.to_string());
        }
    }
}
