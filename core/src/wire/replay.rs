//! A round's parts that are its recorders' (`part_json::Replay`): a text, plain or with
//! the keys one wire recorded it with (`part_json::RecordedText`), and the types a wire
//! records of its own (`part_json::RecordedType`: thinking, reasoning), each declared
//! in its wire's folder (`<wire>/replay.rs`, spelled in the provider's documented key
//! order, every value quoted by serde_json) and listed by its `Form`. This file names
//! no wire: it asks each.

use crate::items::PartKind;
use crate::json_at::{Checked, JsonText};
use crate::kinds::Wire;
use crate::part_json::{Fields, RecordedText, RecordedType};

/// A round's part that is its recorders': a text, or a type some wire records, as the
/// block its wire replays (opaque to every other wire; a text with its wire's keys is
/// said text, plain text on another wire). A type no wire records is unknown.
pub(crate) fn part(f: &Fields<'_>) -> Checked<PartKind> {
    if f.kind() == "text" {
        return text(f);
    }
    let declared = Wire::ALL.iter().find_map(|&w| {
        let types: &[&RecordedType] = w.form().recorded_types();
        types.iter().find(|t| t.name == f.kind()).map(|t| (w, *t))
    });
    let Some((wire, declared)) = declared else {
        return Err(f.unknown());
    };
    let (block, text) = (declared.read)(f)?;
    Ok(PartKind::Opaque {
        wire,
        json: written(f, block)?,
        text,
    })
}

/// A round's text: plain, or as the one wire whose keys it carries recorded it. Every
/// wire's keys are read (a value that is not a string is refused at its key) before the
/// text is claimed: by none, plain; by one, through its first key, that wire's; else
/// refused.
fn text(f: &Fields<'_>) -> Checked<PartKind> {
    let text = f.string("text")?;
    let declared: Vec<(Wire, &RecordedText)> = Wire::ALL
        .iter()
        .filter_map(|&w| w.form().recorded_text().map(|t| (w, t)))
        .collect();
    let mut claims = Vec::new();
    for &(wire, t) in &declared {
        let mut present = Vec::new();
        for key in t.keys {
            if f.optional(key)?.is_some() {
                present.push(*key);
            }
        }
        if !present.is_empty() {
            claims.push((wire, t, t.keys.first().is_some_and(|k| present.contains(k))));
        }
    }
    match claims.as_slice() {
        [] => Ok(PartKind::Text(text)),
        [(wire, t, true)] => Ok(PartKind::Said {
            wire: *wire,
            json: written(f, (t.read)(f, &text)?)?,
            text,
        }),
        _ => {
            let says: Vec<&str> = declared.iter().map(|(_, t)| t.says).collect();
            Err(f
                .obj
                .refuse(format_args!("a text part carries {}, not both", says.join(" or "))))
        }
    }
}

/// A block a wire's speller wrote, checked as JSON (the spellers' quoting never fails it).
fn written(f: &Fields<'_>, block: String) -> Checked<JsonText> {
    JsonText::written(block).ok_or_else(|| f.obj.refuse("cannot be replayed as JSON"))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::json_at::At;
    use crate::part_json::{read, write, Place, Read};

    /// A round's part, read, and where it is its recorders', read by them (the wires').
    fn round(v: &Value) -> Checked<PartKind> {
        match read(&At::root(v, ""), Place::Round)? {
            Read::Part(kind) => Ok(kind),
            Read::Recorded(fields) => part(&fields),
        }
    }

    /// Every part the round writer writes (a wire's own types written in its folder), the
    /// reader takes back at a round: as the one part type, or as the block its wire
    /// replays, byte for byte, counted by its text.
    #[test]
    fn a_round_reads_back_what_its_writer_wrote() {
        use super::super::anthropic::replay as a;
        use super::super::gemini::replay as g;
        use super::super::responses::replay as r;
        let block = json!({"type": "web_search_tool_result", "tool_use_id": "s1", "content": []});
        let summary = vec![json!({"type": "summary_text", "text": "so"})];
        let s = |x: &str| x.to_string();
        // The block's bytes as its wire's speller writes them.
        let bytes = |json: &str| JsonText::written(json.to_string()).expect("JSON");
        let said = |wire, json: &str| PartKind::Said {
            wire,
            text: s("Hi"),
            json: bytes(json),
        };
        let opaque = |wire, json: &str, text: &str| PartKind::Opaque {
            wire,
            json: bytes(json),
            text: s(text),
        };
        let cases = [
            (write::text("Hi", &[]), PartKind::Text(s("Hi"))),
            (
                write::text("Hi", &[("item_id", Some(s("msg_1"))), ("phase", None)]),
                said(
                    Wire::Responses,
                    r#"{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hi","annotations":[]}]}"#,
                ),
            ),
            (
                write::text("Hi", &[("signature", Some(s("sig")))]),
                said(Wire::Gemini, r#"{"text":"Hi","thoughtSignature":"sig"}"#),
            ),
            (
                write::tool_call("c1", "read", json!({"path": "a"}), &[("signature", Some(s("s")))]),
                PartKind::ToolCall {
                    id: s("c1"),
                    name: s("read"),
                    input: r#"{"path":"a"}"#.into(),
                    signature: Some(s("s")),
                    item_id: None,
                },
            ),
            (
                a::recorded_thinking("hm", "sig"),
                opaque(
                    Wire::Anthropic,
                    r#"{"type":"thinking","thinking":"hm","signature":"sig"}"#,
                    "hm",
                ),
            ),
            (
                a::recorded_redacted_thinking("xyz"),
                opaque(Wire::Anthropic, r#"{"type":"redacted_thinking","data":"xyz"}"#, "xyz"),
            ),
            (
                r::recorded_reasoning("rs_1", Value::Array(summary), Some(&json!("enc"))),
                opaque(
                    Wire::Responses,
                    r#"{"type":"reasoning","id":"rs_1","summary":[{"text":"so","type":"summary_text"}],"encrypted_content":"enc"}"#,
                    "soenc",
                ),
            ),
            (
                g::recorded_thought("mull", Some(s("sig"))),
                opaque(
                    Wire::Gemini,
                    r#"{"text":"mull","thought":true,"thoughtSignature":"sig"}"#,
                    "mull",
                ),
            ),
            (
                write::provider(Wire::Anthropic, block.as_object().unwrap()),
                PartKind::Opaque {
                    wire: Wire::Anthropic,
                    text: block.to_string(),
                    json: block.to_string().as_str().into(),
                },
            ),
        ];
        for (written, kind) in cases {
            assert_eq!(round(&written).unwrap(), kind, "{written}");
        }
        // A text carrying two wires' keys, or a phase without its item id, is refused.
        for both in [
            json!({"type": "text", "text": "Hi", "item_id": "m", "signature": "s"}),
            json!({"type": "text", "text": "Hi", "phase": "final_answer"}),
        ] {
            let e = round(&both).unwrap_err();
            assert_eq!(
                (e.path.as_str(), e.message.as_str()),
                (
                    "",
                    "a text part carries a Responses item_id (and phase) or a Gemini signature, not both"
                ),
                "{both}"
            );
        }
    }
}
