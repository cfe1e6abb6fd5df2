//! The blocks a round's recorded parts replay as (`part_json::Recorded`: thinking,
//! reasoning, a text with its wire's ids), each spelled in its own wire's folder
//! (`<wire>/replay.rs`, in the provider's documented key order, every value quoted by
//! serde_json).

use crate::items::PartKind;
use crate::json_at::JsonText;
use crate::kinds::Wire;
use crate::part_json::Recorded;

/// The part a round recorded, as the block its wire replays: a thinking or reasoning
/// block is opaque to every other wire; a text with its wire's ids is said text, plain
/// text on another wire. `None` when the block does not read as JSON (the spellers'
/// quoting never gives that).
pub(crate) fn part(recorded: Recorded) -> Option<PartKind> {
    let (wire, block) = match &recorded {
        Recorded::Thinking { thinking, signature } => {
            (Wire::Anthropic, super::anthropic::replay::thinking(thinking, signature))
        }
        Recorded::RedactedThinking { data } => (Wire::Anthropic, super::anthropic::replay::redacted_thinking(data)),
        Recorded::Reasoning { id, summary, encrypted } => (
            Wire::Responses,
            super::responses::replay::reasoning(id, &serde_json::Value::Array(summary.clone()), encrypted.as_deref()),
        ),
        Recorded::Thought { text, signature } => {
            (Wire::Gemini, super::gemini::replay::thought(text, signature.as_deref()))
        }
        Recorded::Message { id, text, phase } => (
            Wire::Responses,
            super::responses::replay::message(id, text, phase.as_deref()),
        ),
        Recorded::SignedText { text, signature } => (Wire::Gemini, super::gemini::replay::signed_text(text, signature)),
    };
    let json = JsonText::written(block)?;
    let said = match &recorded {
        Recorded::Message { .. } | Recorded::SignedText { .. } => true,
        Recorded::Thinking { .. }
        | Recorded::RedactedThinking { .. }
        | Recorded::Reasoning { .. }
        | Recorded::Thought { .. } => false,
    };
    let text = recorded.into_counted();
    Some(match said {
        true => PartKind::Said { wire, text, json },
        false => PartKind::Opaque { wire, json, text },
    })
}
