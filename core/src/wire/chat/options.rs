//! The request options as OpenAI's chat completions spell them
//! (`CompletionCreateParams`): the OpenAI fields (`super::openai`), then `stop`,
//! `response_format` and `reasoning_effort`.

use super::super::openai::openai_format;
use crate::kinds::Wire;
use crate::options::{q, refusal, strings, Options, Refusal};

/// What the wire cannot say, whatever the model.
pub(super) fn check(o: &Options) -> Result<(), Refusal> {
    super::super::openai::check(o, Wire::Chat)?;
    if o.thinking.as_ref().is_some_and(|t| t.display.is_some()) {
        return refusal(Wire::Chat, "thinking/display", "returns no reasoning summary");
    }
    Ok(())
}

/// The top-level fields the options add to the body (after its tools), in the
/// reference's order, as (key, JSON text).
pub(super) fn fields(o: &Options) -> Vec<(&'static str, String)> {
    let mut out = super::super::openai::leading_fields(o, true);
    if let Some(s) = &o.stop {
        out.push(("stop", strings(s)));
    }
    if let Some(f) = &o.response_format {
        out.push(("response_format", openai_format(f, true)));
    }
    if let Some(e) = o.effort() {
        out.push(("reasoning_effort", q(e.as_str())));
    }
    super::super::openai::trailing_fields(o, &mut out);
    out
}
