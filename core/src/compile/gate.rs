//! The window gate: the exact count of the whole body, tool definitions included,
//! against the window. Only the gate refuses.

use crate::budget::Window;
use crate::context::Context;
use crate::error::{Code, Error, Result};
use crate::estimate::Estimate;

/// Refuses a body of `estimate.total` tokens that the window cannot take.
pub(super) fn gate(ctx: &Context, model: &str, window: &Window, estimate: &Estimate) -> Result<()> {
    let total = estimate.total;
    if window.fits(total) {
        return Ok(());
    }
    let w = window.tokens.unwrap_or(0);
    let floors: Vec<String> = estimate
        .blocks
        .iter()
        .filter(|b| b.tokens > 0)
        .map(|b| format!("{} {}", b.block, b.tokens))
        .collect();
    let margin = if window.token_margin > 0.0 {
        format!(
            " ({} with the model's token_margin of {})",
            window.inflate(total),
            window.token_margin
        )
    } else {
        String::new()
    };
    Err(Error::new(
        Code::EstimatedInputExceedsModelLimit,
        format!("turn {} needs {total} input tokens{margin}; model {model} takes {w}", ctx.turn.id),
    )
    .detail(format!(
        "Blocks: {}; history kept {} of {} entries. The floors alone exceed the window.",
        floors.join(", "),
        estimate.history.selected,
        estimate.history.available
    ))
    .hint(format!(
        "Shorten the largest block or raise the model's window; SELECT * FROM prompt.estimate_turn('{}', '{}') shows every block.",
        ctx.conversation.id, ctx.turn.id
    )))
}
