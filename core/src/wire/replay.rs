//! The blocks a round's provider parts replay as, each in its provider's documented key
//! order (written by hand: serde_json's maps sort their keys), every value quoted by
//! serde_json. The round format names the part (`thinking`, `reasoning`, `thought`, a
//! text with its wire's ids); each wire's folder spells its own.

use crate::kinds::Wire;

/// Anthropic's `thinking` block: `{type, thinking, signature}`.
pub(crate) fn anthropic_thinking(thinking: &str, signature: &str) -> (Wire, String) {
    (Wire::Anthropic, super::anthropic::replay::thinking(thinking, signature))
}

/// Anthropic's `redacted_thinking` block: `{type, data}`.
pub(crate) fn anthropic_redacted_thinking(data: &str) -> (Wire, String) {
    (Wire::Anthropic, super::anthropic::replay::redacted_thinking(data))
}

/// A Responses assistant `message` item, with its id and phase.
pub(crate) fn responses_message(id: &str, text: &str, phase: Option<&str>) -> (Wire, String) {
    (Wire::Responses, super::responses::replay::message(id, text, phase))
}

/// A Responses `reasoning` item: `{type, id, summary, encrypted_content?}`.
pub(crate) fn responses_reasoning(id: &str, summary: &serde_json::Value, encrypted: Option<&str>) -> (Wire, String) {
    (
        Wire::Responses,
        super::responses::replay::reasoning(id, summary, encrypted),
    )
}

/// A Gemini text part with its thought signature.
pub(crate) fn gemini_signed_text(text: &str, signature: &str) -> (Wire, String) {
    (Wire::Gemini, super::gemini::replay::signed_text(text, signature))
}

/// A Gemini thought part: `{text, thought, thoughtSignature?}`.
pub(crate) fn gemini_thought(text: &str, signature: Option<&str>) -> (Wire, String) {
    (Wire::Gemini, super::gemini::replay::thought(text, signature))
}
