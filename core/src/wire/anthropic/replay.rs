//! How Anthropic's thinking blocks are replayed from a round's parts: `thinking`
//! {type, thinking, signature} and `redacted_thinking` {type, data}, in the documented key
//! order (`wire/replay.rs` turns a round's recorded part into its block through these).

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
