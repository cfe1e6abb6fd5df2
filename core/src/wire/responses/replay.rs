//! How a Responses round's parts are replayed: an assistant `message` item with its id
//! and phase, and a `reasoning` item, in the documented key order (`wire/replay.rs` turns
//! a round's recorded part into its block through these).

/// An assistant `message` item, replayed with its id and phase.
pub(crate) fn message(id: &str, text: &str, phase: Option<&str>) -> String {
    let q = |s: &str| crate::wire::json::to_text(s);
    let phase = phase.map_or(String::new(), |p| format!(r#","phase":{}"#, q(p)));
    format!(
        r#"{{"type":"message","id":{},"role":"assistant","status":"completed","content":[{{"type":"output_text","text":{},"annotations":[]}}]{phase}}}"#,
        q(id),
        q(text)
    )
}

/// A `reasoning` item, replayed: `{type, id, summary, encrypted_content?}`.
pub(crate) fn reasoning(id: &str, summary: &serde_json::Value, encrypted: Option<&str>) -> String {
    let q = |s: &str| crate::wire::json::to_text(s);
    let mut block = format!(r#"{{"type":"reasoning","id":{},"summary":{}"#, q(id), summary);
    if let Some(e) = encrypted {
        block.push_str(&format!(r#","encrypted_content":{}"#, q(e)));
    }
    block.push('}');
    block
}
