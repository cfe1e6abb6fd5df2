//! A Gemini round's parts as a round records them: a text with its thought `signature`,
//! and a `thought` part {text, signature?} (what this wire records of its own, listed by
//! its `Form`), written from a response and replayed in the documented key order
//! (`wire/replay.rs` reads a round's part through these).

use serde_json::{json, Value};

use crate::part_json::{write, RecordedText, RecordedType};

/// The key a round's tool call keeps the thought signature Gemini attached to it at.
pub(crate) const CALL_SIGNATURE: &str = "signature";

/// A round's text with its Gemini thought signature.
pub(crate) const SIGNED_TEXT: RecordedText = RecordedText {
    keys: &["signature"],
    says: "a Gemini signature",
    read: |f, text| Ok(signed_text(text, &f.optional("signature")?.unwrap_or_default())),
};

/// A round's `thought` part, counted by its text.
pub(crate) const THOUGHT: RecordedType = RecordedType {
    name: "thought",
    read: |f| {
        let text = f.string("text")?;
        let signature = f.obj.map.get("signature").and_then(Value::as_str);
        Ok((thought(&text, signature), text))
    },
};

/// A thought as a round stores it: `{type: thought, text, signature?}`.
pub(crate) fn recorded_thought(text: &str, signature: Option<String>) -> Value {
    write::with(json!({"type": "thought", "text": text}), &[("signature", signature)])
}

/// A text part with its thought signature, replayed.
pub(crate) fn signed_text(text: &str, signature: &str) -> String {
    let q = |s: &str| crate::wire::json::to_text(s);
    format!(r#"{{"text":{},"thoughtSignature":{}}}"#, q(text), q(signature))
}

/// A thought part, replayed: `{text, thought, thoughtSignature?}`.
pub(crate) fn thought(text: &str, signature: Option<&str>) -> String {
    let q = |s: &str| crate::wire::json::to_text(s);
    let mut block = format!(r#"{{"text":{},"thought":true"#, q(text));
    if let Some(sig) = signature {
        block.push_str(&format!(r#","thoughtSignature":{}"#, q(sig)));
    }
    block.push('}');
    block
}
