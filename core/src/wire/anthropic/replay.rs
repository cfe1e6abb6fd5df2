//! Anthropic's thinking blocks as a round records them (`thinking` {thinking,
//! signature}, `redacted_thinking` {data}: the part types this wire records of its own,
//! listed by its `Form`), written from a response and replayed in the documented key
//! order (`wire/replay.rs` reads a round's part through these).

use serde_json::{json, Value};

use crate::part_json::RecordedType;

/// A round's `thinking` part: {thinking, signature}, counted by its thinking.
pub(crate) const THINKING: RecordedType = RecordedType {
    name: "thinking",
    read: |f| {
        let t = f.string("thinking")?;
        let block = thinking(&t, &f.string("signature")?);
        Ok((block, t))
    },
};

/// A round's `redacted_thinking` part: {data}, counted by its data.
pub(crate) const REDACTED_THINKING: RecordedType = RecordedType {
    name: "redacted_thinking",
    read: |f| {
        let data = f.string("data")?;
        Ok((redacted_thinking(&data), data))
    },
};

/// Anthropic's thinking as a round stores it: `{type: thinking, thinking, signature}`.
pub(crate) fn recorded_thinking(thinking: &str, signature: &str) -> Value {
    json!({"type": "thinking", "thinking": thinking, "signature": signature})
}

/// Anthropic's redacted thinking as a round stores it: `{type: redacted_thinking, data}`.
pub(crate) fn recorded_redacted_thinking(data: &str) -> Value {
    json!({"type": "redacted_thinking", "data": data})
}

/// A `thinking` block, replayed: `{type, thinking, signature}`.
pub(crate) fn thinking(thinking: &str, signature: &str) -> String {
    let q = |s: &str| crate::wire::json::to_text(s);
    format!(
        r#"{{"type":"thinking","thinking":{},"signature":{}}}"#,
        q(thinking),
        q(signature)
    )
}

/// A `redacted_thinking` block, replayed: `{type, data}`.
pub(crate) fn redacted_thinking(data: &str) -> String {
    format!(
        r#"{{"type":"redacted_thinking","data":{}}}"#,
        crate::wire::json::to_text(data)
    )
}
