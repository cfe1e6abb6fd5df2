//! A round's parts that are its recorders' (`part_json::Replay`): a text, plain or with
//! the keys one wire recorded it with (`part_json::RecordedText`), a tool call with what
//! its wire recorded beside it (`Form::recorded_call_keys`), and the types a wire
//! records of its own (`part_json::RecordedType`: thinking, reasoning), each declared
//! in its wire's folder (`<wire>/replay.rs`, spelled in the provider's documented key
//! order, every value quoted by serde_json) and listed by its `Form`. This file names
//! no wire: it asks each.

use crate::items::{CallRecord, PartKind};
use crate::json_at::{Checked, JsonText};
use crate::kinds::Wire;
use crate::part_json::{Fields, RecordedType};

/// A round's part that is its recorders': a text, or a type some wire records, as the
/// block its wire replays (opaque to every other wire; a text with its wire's keys is
/// said text, plain text on another wire). A type no wire records is unknown.
pub(crate) fn part(f: &Fields<'_>) -> Checked<PartKind> {
    match f.kind() {
        "text" => return text(f),
        "tool_call" => return f.tool_call(call_record),
        _ => {}
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
    // The wires' declarations, walked in place (no list built for each text read).
    let declared = || {
        Wire::ALL
            .iter()
            .filter_map(|&w| w.form().recorded_text().map(|t| (w, t)))
    };
    let mut claims = Vec::new();
    for (wire, t) in declared() {
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
            let says: Vec<&str> = declared().map(|(_, t)| t.says).collect();
            Err(f
                .obj
                .refuse(format_args!("a text part carries {}, not both", says.join(" or "))))
        }
    }
}

/// What a round's tool call carries as its wire recorded it: every wire's declared keys
/// (`Form::recorded_call_keys`), each read once (a value that is not a string refused).
fn call_record(f: &Fields<'_>) -> Checked<CallRecord> {
    let mut record = CallRecord::default();
    for wire in Wire::ALL {
        for &key in wire.form().recorded_call_keys() {
            if record.0.iter().any(|(k, _)| *k == key) {
                continue;
            }
            if let Some(value) = f.optional(key)? {
                record.0.push((key, value));
            }
        }
    }
    Ok(record)
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
                    recorded: crate::items::CallRecord(vec![("signature", s("s"))]),
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

    /// What a round's tool call carries as its wire recorded it goes back on that wire
    /// only: each wire's declared keys, read at a round, are replayed in its own body and
    /// in no other wire's.
    #[test]
    fn a_calls_recorded_keys_replay_on_their_wire_alone() {
        use crate::items::{Message, Part};
        use crate::kinds::Role;
        let keys: Vec<(Wire, &str)> = Wire::ALL
            .iter()
            .flat_map(|&w| w.form().recorded_call_keys().iter().map(move |&k| (w, k)))
            .collect();
        // As the response readers write them (`<wire>/response.rs`).
        assert_eq!(keys, [(Wire::Responses, "item_id"), (Wire::Gemini, "signature")]);
        let mut call = json!({"type": "tool_call", "id": "c1", "name": "read", "input": {}});
        for (wire, key) in &keys {
            call[*key] = json!(format!("kept-by-{}", wire.as_str()));
        }
        let kind = round(&call).expect("read");
        let message = |role, kind: PartKind| Message {
            role,
            parts: vec![Part { kind, tokens: 0 }],
            blocks: vec![0],
            plain: false,
            boundary: true,
        };
        let result = PartKind::ToolResult {
            call_id: "c1".into(),
            content: "ok".into(),
            is_error: false,
        };
        let messages = [
            message(Role::User, PartKind::Text("go".into())),
            message(Role::Assistant, kind),
            message(Role::User, result),
        ];
        for &wire in Wire::ALL {
            let (elements, _) = crate::wire::render_elements(wire, &messages, (None, &[]), &[]);
            let body = elements.join("");
            for (owner, _) in &keys {
                let kept = format!("kept-by-{}", owner.as_str());
                assert_eq!(body.contains(&kept), *owner == wire, "{wire:?} {owner:?}: {body}");
            }
        }
    }

    /// What the wires declare of a round never collides: a part type is one wire's and
    /// none of the round format's own; a tool call's and a text's keys are one wire's and
    /// none of the part's own keys. (The reader takes the first wire that declares a name:
    /// a second would be silently ignored.)
    #[test]
    fn the_wires_recorded_names_are_their_own() {
        let mut types: Vec<&str> = Vec::new();
        let mut call_keys: Vec<&str> = Vec::new();
        let mut text_keys: Vec<&str> = Vec::new();
        for &wire in Wire::ALL {
            let form = wire.form();
            types.extend(form.recorded_types().iter().map(|t| t.name));
            call_keys.extend(form.recorded_call_keys());
            text_keys.extend(form.recorded_text().map_or(&[][..], |t| t.keys));
        }
        for (names, own) in [
            (&types, &["text", "image", "tool_call", "tool_result", "provider"][..]),
            (&call_keys, &["type", "id", "name", "input"][..]),
            (&text_keys, &["type", "text"][..]),
        ] {
            for (i, name) in names.iter().enumerate() {
                assert!(!own.contains(name), "{name} is the part's own");
                assert!(!names[..i].contains(name), "{name} is declared twice");
            }
        }
    }
}
