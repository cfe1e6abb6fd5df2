//! A Responses round's parts as a round records them: a text with its message's
//! `item_id` (and `phase`), replayed as an assistant `message` item, and a `reasoning`
//! part {id, summary, encrypted_content?} (what this wire records of its own, listed by
//! its `Form`), written from a response and replayed in the documented key order
//! (`wire/replay.rs` reads a round's part through these).

use serde_json::{json, Value};

use crate::part_json::{RecordedText, RecordedType};

/// The key a round's tool call keeps its Responses item id (`fc_…`) at.
pub(crate) const CALL_ITEM_ID: &str = "item_id";

/// A round's text with the item id (and phase) of its Responses message.
pub(crate) const MESSAGE_TEXT: RecordedText = RecordedText {
    keys: &["item_id", "phase"],
    says: "a Responses item_id (and phase)",
    read: |f, text| {
        let id = f.optional("item_id")?.unwrap_or_default();
        Ok(message(&id, text, f.optional("phase")?.as_deref()))
    },
};

/// A round's `reasoning` part, counted by its summary's texts and encrypted content.
pub(crate) const REASONING: RecordedType = RecordedType {
    name: "reasoning",
    read: |f| {
        let id = f.string("id")?;
        let summary = f
            .obj
            .at("summary")
            .optional(Value::as_array, "not a list")?
            .cloned()
            .unwrap_or_default();
        let encrypted = f.obj.map.get("encrypted_content").and_then(Value::as_str);
        let mut text = summary
            .iter()
            .filter_map(|x| x.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        text.push_str(encrypted.unwrap_or_default());
        Ok((reasoning(&id, &Value::Array(summary), encrypted), text))
    },
};

/// A reasoning item as a round stores it: `{type: reasoning, id, summary, encrypted_content?}`.
pub(crate) fn recorded_reasoning(id: &str, summary: Value, encrypted: Option<&Value>) -> Value {
    let mut r = json!({"type": "reasoning", "id": id, "summary": summary});
    if let Some(e) = encrypted {
        r["encrypted_content"] = e.clone();
    }
    r
}

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
