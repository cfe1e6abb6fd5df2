//! How a Gemini round's parts are replayed: a text part with its thought signature and
//! a thought part, in the documented key order (`wire/replay.rs` turns a round's recorded
//! part into its block through these).

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
