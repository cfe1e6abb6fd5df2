//! A part's JSON: the one reader and the one writer of every part pgprompt reads or
//! writes. One vocabulary of `{"type": ...}` objects — `text`, `image`, `tool_call`,
//! `tool_result`, `thinking`, `redacted_thinking`, `reasoning`, `thought` and `provider` —
//! of which each place takes the types it can hold ([`Place`]). The reader turns a part
//! into its one type, [`PartKind`], or, for what a round recorded of its wire (thinking,
//! reasoning, a text with its wire's ids), into a [`Recorded`] part that its wire spells
//! as the block it replays (`wire::replay::part`; this file reads no wire). The writer
//! spells a part for a round ([`write`], what `record_response` stores) or for a message
//! ([`Part`]'s `Serialize`, what a compiled message, a raw turn's input and a seal's
//! carried history hold).
//!
//! A new typed part adds its kind in `items.rs`, its reading and writing here, and how
//! each wire sends it in the wire's folder (`Merging::unit` names every kind, with no
//! wildcard: a wire that has not said how it carries the new kind does not compile).

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::items::{Part, PartKind};
use crate::json_at::{At, Checked, JsonText, Obj};
use crate::kinds::Wire;

/// Where a part is read, and so which of the types it may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A round's assistant parts (`rounds.assistant`): text and tool calls as their wire
    /// recorded them (with `item_id`, `phase` or `signature`), thinking and reasoning, and
    /// a provider's block.
    Round,
    /// A raw turn's input (`turns.input`): text, image, tool_call and tool_result, sent
    /// as they are.
    Input,
    /// The history a seal carried past its seed: the input's types and a provider's block.
    Carried,
}

impl Place {
    /// Whether a part of type `ty` may stand here.
    fn takes(self, ty: &str) -> bool {
        const ROUND: &[&str] = &[
            "text",
            "tool_call",
            "thinking",
            "redacted_thinking",
            "reasoning",
            "thought",
            "provider",
        ];
        const INPUT: &[&str] = &["text", "image", "tool_call", "tool_result"];
        match self {
            Place::Round => ROUND.contains(&ty),
            Place::Input => INPUT.contains(&ty),
            Place::Carried => INPUT.contains(&ty) || ty == "provider",
        }
    }

    /// How a refusal reads here: a round's as its column's errors read ("not a string",
    /// its key in the pointer), an input's naming the key (`"text" must be a string`).
    fn says(self, key: &str, round: &str, input: &str) -> String {
        match self {
            Place::Round => round.to_string(),
            Place::Input | Place::Carried => format!("{key} {input}"),
        }
    }
}

/// Strict standard base64 (RFC 4648 §4, padded, canonical trailing bits): `None` when it
/// is not, so one image has one spelling. The `base64` crate's standard engine is
/// exactly that strict by default.
pub(crate) fn decode_base64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

/// How a round's recorded part becomes the block its wire replays, handed to the round
/// reader by the file that knows the wires (`wire::replay::part`): the round format
/// reads no wire. `None`: the block does not read as JSON.
pub(crate) type Replay = fn(Recorded) -> Option<PartKind>;

/// A part a round recorded of its wire, before its wire spells the block it replays.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Recorded {
    /// Anthropic's `thinking`.
    Thinking { thinking: String, signature: String },
    /// Anthropic's `redacted_thinking`.
    RedactedThinking { data: String },
    /// A Responses `reasoning` item.
    Reasoning {
        id: String,
        summary: Vec<Value>,
        encrypted: Option<String>,
    },
    /// A Gemini `thought`.
    Thought { text: String, signature: Option<String> },
    /// A Responses assistant message with its item id and phase.
    Message {
        id: String,
        text: String,
        phase: Option<String>,
    },
    /// A Gemini text part with its thought signature.
    SignedText { text: String, signature: String },
}

impl Recorded {
    /// The text the part is counted by (moved out of it): the thinking, the data, the
    /// reasoning's summary texts and encrypted content, the thought's or message's text.
    pub(crate) fn into_counted(self) -> String {
        match self {
            Recorded::Thinking { thinking: t, .. }
            | Recorded::RedactedThinking { data: t }
            | Recorded::Thought { text: t, .. }
            | Recorded::Message { text: t, .. }
            | Recorded::SignedText { text: t, .. } => t,
            Recorded::Reasoning { summary, encrypted, .. } => {
                let mut text = summary
                    .iter()
                    .filter_map(|x| x.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n");
                text.push_str(encrypted.as_deref().unwrap_or_default());
                text
            }
        }
    }
}

/// A part read: one of the one type, or one its wire spells ([`Recorded`], at a round).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Read {
    Part(PartKind),
    Recorded(Recorded),
}

/// Reads one part at `p`, of a type a message holds (`place` is [`Place::Input`] or
/// [`Place::Carried`], which take no recorded part). A refusal names the pointer.
pub(crate) fn read_part(p: &At<'_>, place: Place) -> Checked<PartKind> {
    match read(p, place)? {
        Read::Part(kind) => Ok(kind),
        Read::Recorded(_) => Err(p.refuse("a part of a round where a message's part belongs")),
    }
}

/// Reads one part at `p`, of a type `place` takes. A refusal names the pointer.
pub(crate) fn read(p: &At<'_>, place: Place) -> Checked<Read> {
    let obj = p.object(place.says("a part", "not an object", "is an object with a \"type\""))?;
    let part = Reader { obj, place };
    let ty = part.obj.at("type");
    let Some(kind) = ty.value.as_str() else {
        return Err(ty.refuse(place.says("a part", "missing part type", "needs a \"type\"")));
    };
    if !place.takes(kind) {
        return Err(unknown(&ty, kind));
    }
    let kind = match kind {
        "text" if place == Place::Round => return part.recorded_text(),
        "text" => PartKind::Text(part.string("text")?),
        "image" => part.image()?,
        "tool_call" => part.tool_call()?,
        "tool_result" => PartKind::ToolResult {
            call_id: part.string("call_id")?,
            content: part.string("content")?,
            is_error: part.obj.at("is_error").flag(false, "\"is_error\" must be a boolean")?,
        },
        "provider" => part.provider()?,
        "thinking" | "redacted_thinking" | "reasoning" | "thought" => return part.thinking(kind).map(Read::Recorded),
        other => return Err(unknown(&ty, other)),
    };
    Ok(Read::Part(kind))
}

/// A part whose type no reader here knows (or its place does not take): refused at `type`.
fn unknown(ty: &At<'_>, kind: &str) -> crate::json_at::Refusal {
    ty.refuse(format_args!("unknown part type \"{kind}\""))
}

/// One part's object, read where it stands.
struct Reader<'v> {
    obj: Obj<'v>,
    place: Place,
}

impl Reader<'_> {
    /// A required string.
    fn string(&self, key: &str) -> Checked<String> {
        let at = self.obj.at(key);
        let quoted = format!("\"{key}\"");
        if at.is_absent() {
            return Err(at.refuse(self.place.says(&quoted, "missing", "must be a string")));
        }
        at.str(self.place.says(&quoted, "not a string", "must be a string"))
            .map(str::to_string)
    }

    /// A string that may be absent or `null`.
    fn optional(&self, key: &str) -> Checked<Option<String>> {
        Ok(self
            .obj
            .at(key)
            .optional(Value::as_str, "not a string")?
            .map(str::to_string))
    }

    fn image(&self) -> Checked<PartKind> {
        let media_type = self.string("media_type")?;
        let data = self.string("data")?;
        if decode_base64(&data).is_none() {
            return Err(self.obj.at("data").refuse("not valid base64"));
        }
        Ok(PartKind::Image { media_type, data })
    }

    /// A tool call; at a round, with what its wire recorded (a Gemini `signature`, a
    /// Responses `item_id`).
    fn tool_call(&self) -> Checked<PartKind> {
        let id = self.string("id")?;
        let name = self.string("name")?;
        if id.is_empty() {
            return Err(self.obj.at("id").refuse("empty tool_call id"));
        }
        if name.is_empty() {
            return Err(self.obj.at("name").refuse("empty tool_call name"));
        }
        let input = self
            .obj
            .at("input")
            .optional(
                JsonText::object,
                self.place.says("input", "not an object", "must be an object"),
            )?
            .unwrap_or_else(JsonText::empty_object);
        let (signature, item_id) = if self.place == Place::Round {
            (self.optional("signature")?, self.optional("item_id")?)
        } else {
            (None, None)
        };
        Ok(PartKind::ToolCall {
            id,
            name,
            input,
            signature,
            item_id,
        })
    }

    /// A round's text part: plain, or as its wire recorded it — `item_id` (and `phase`)
    /// of a Responses message, or `signature`, a Gemini thought signature.
    fn recorded_text(&self) -> Checked<Read> {
        let text = self.string("text")?;
        let item_id = self.optional("item_id")?;
        let phase = self.optional("phase")?;
        let signature = self.optional("signature")?;
        Ok(Read::Recorded(match (item_id, signature) {
            (None, None) if phase.is_none() => return Ok(Read::Part(PartKind::Text(text))),
            (Some(id), None) => Recorded::Message { id, text, phase },
            (None, Some(signature)) if phase.is_none() => Recorded::SignedText { text, signature },
            _ => {
                return Err(self
                    .obj
                    .refuse("a text part carries a Responses item_id (and phase) or a Gemini signature, not both"))
            }
        }))
    }

    /// A provider's block pgprompt does not interpret (a server tool's call and result, a
    /// tool search, a compaction item, ...), kept verbatim for its wire. It comes back as
    /// the same value, its keys in the stored order.
    fn provider(&self) -> Checked<PartKind> {
        let names: Vec<&str> = Wire::ALL.iter().map(|w| w.as_str()).collect();
        let wire = self.obj.at("wire").read(
            |v| v.as_str().and_then(Wire::parse),
            self.place.says(
                "\"wire\"",
                &format!("not one of {}", names.join(", ")),
                "must be a wire",
            ),
        )?;
        let json = self.obj.at("block").read(
            JsonText::object,
            self.place.says("\"block\"", "not an object", "must be an object"),
        )?;
        Ok(PartKind::Opaque {
            wire,
            text: json.to_string(),
            json,
        })
    }

    /// A thinking or reasoning part, as the round stores it: Anthropic `thinking`
    /// {thinking, signature} and `redacted_thinking` {data}; a Responses `reasoning` item
    /// {id, summary, encrypted_content?}; a Gemini `thought` {text, signature?}.
    fn thinking(&self, kind: &str) -> Checked<Recorded> {
        let obj = &self.obj;
        Ok(match kind {
            "thinking" => Recorded::Thinking {
                thinking: self.string("thinking")?,
                signature: self.string("signature")?,
            },
            "redacted_thinking" => Recorded::RedactedThinking {
                data: self.string("data")?,
            },
            "reasoning" => Recorded::Reasoning {
                id: self.string("id")?,
                summary: obj
                    .at("summary")
                    .optional(Value::as_array, "not a list")?
                    .cloned()
                    .unwrap_or_default(),
                encrypted: obj
                    .map
                    .get("encrypted_content")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            },
            "thought" => Recorded::Thought {
                text: self.string("text")?,
                signature: obj.map.get("signature").and_then(Value::as_str).map(str::to_string),
            },
            other => return Err(unknown(&obj.at("type"), other)),
        })
    }
}

/// The writer of a round's parts, as `record_response` stores them from a provider's
/// response: what [`read`] takes back at [`Place::Round`].
pub(crate) mod write {
    use serde_json::{json, Map, Value};

    use crate::kinds::Wire;

    /// A recorded value beside a part's own keys (`item_id`, `phase`, `signature`), left
    /// out when the response had none.
    pub(crate) type Native<'a> = &'a [(&'a str, Option<String>)];

    fn with(mut part: Value, native: Native<'_>) -> Value {
        for (key, value) in native {
            if let Some(v) = value {
                part[*key] = Value::String(v.clone());
            }
        }
        part
    }

    /// `{type: text, text}` with what its wire recorded.
    pub(crate) fn text(text: &str, native: Native<'_>) -> Value {
        with(json!({"type": "text", "text": text}), native)
    }

    /// `{type: tool_call, id, name, input}` with what its wire recorded.
    pub(crate) fn tool_call(id: &str, name: &str, input: Value, native: Native<'_>) -> Value {
        with(
            json!({"type": "tool_call", "id": id, "name": name, "input": input}),
            native,
        )
    }

    /// Anthropic's thinking: `{type: thinking, thinking, signature}`.
    pub(crate) fn thinking(thinking: &str, signature: &str) -> Value {
        json!({"type": "thinking", "thinking": thinking, "signature": signature})
    }

    /// Anthropic's redacted thinking: `{type: redacted_thinking, data}`.
    pub(crate) fn redacted_thinking(data: &str) -> Value {
        json!({"type": "redacted_thinking", "data": data})
    }

    /// A Responses reasoning item: `{type: reasoning, id, summary, encrypted_content?}`.
    pub(crate) fn reasoning(id: &str, summary: Value, encrypted: Option<&Value>) -> Value {
        let mut r = json!({"type": "reasoning", "id": id, "summary": summary});
        if let Some(e) = encrypted {
            r["encrypted_content"] = e.clone();
        }
        r
    }

    /// A Gemini thought: `{type: thought, text, signature?}`.
    pub(crate) fn thought(text: &str, signature: Option<String>) -> Value {
        with(json!({"type": "thought", "text": text}), &[("signature", signature)])
    }

    /// A provider's block pgprompt does not interpret: `{type: provider, wire, block}`.
    pub(crate) fn provider(wire: Wire, block: &Map<String, Value>) -> Value {
        json!({"type": "provider", "wire": wire.as_str(), "block": Value::Object(block.clone())})
    }
}

/// The writer of a message's parts (a compiled message's, a raw turn's input, a seal's
/// carried history): what [`read`] takes back at [`Place::Carried`]. A text its wire
/// recorded is written as plain text; thinking and reasoning as the provider's block.
impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.kind {
            PartKind::Text(text) | PartKind::Said { text, .. } => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("type", "text")?;
                m.serialize_entry("text", text)?;
                m.end()
            }
            PartKind::ToolCall { id, name, input, .. } => {
                let mut m = s.serialize_map(Some(4))?;
                m.serialize_entry("type", "tool_call")?;
                m.serialize_entry("id", id)?;
                m.serialize_entry("name", name)?;
                // Serialized as the value its text spells (JsonText).
                m.serialize_entry("input", input)?;
                m.end()
            }
            PartKind::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let mut m = s.serialize_map(Some(4))?;
                m.serialize_entry("type", "tool_result")?;
                m.serialize_entry("call_id", call_id)?;
                m.serialize_entry("content", content)?;
                m.serialize_entry("is_error", is_error)?;
                m.end()
            }
            PartKind::Image { media_type, data } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("type", "image")?;
                m.serialize_entry("media_type", media_type)?;
                m.serialize_entry("data", data)?;
                m.end()
            }
            PartKind::Opaque { wire, json, .. } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("type", "provider")?;
                m.serialize_entry("wire", wire.as_str())?;
                // Serialized as the value its text spells (JsonText).
                m.serialize_entry("block", json)?;
                m.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn back(v: &Value, place: Place) -> Checked<Read> {
        read(&At::root(v, ""), place)
    }

    fn recorded(r: Recorded) -> Read {
        Read::Recorded(r)
    }

    /// Every part the round writer writes, the reader takes back at a round: as the one
    /// part type, or as the part its wire recorded.
    #[test]
    fn a_round_reads_back_what_its_writer_wrote() {
        let block = json!({"type": "web_search_tool_result", "tool_use_id": "s1", "content": []});
        let summary = vec![json!({"type": "summary_text", "text": "so"})];
        let s = |x: &str| x.to_string();
        let cases = [
            (write::text("Hi", &[]), Read::Part(PartKind::Text(s("Hi")))),
            (
                write::text("Hi", &[("item_id", Some(s("msg_1"))), ("phase", None)]),
                recorded(Recorded::Message {
                    id: s("msg_1"),
                    text: s("Hi"),
                    phase: None,
                }),
            ),
            (
                write::text("Hi", &[("signature", Some(s("sig")))]),
                recorded(Recorded::SignedText {
                    text: s("Hi"),
                    signature: s("sig"),
                }),
            ),
            (
                write::tool_call("c1", "read", json!({"path": "a"}), &[("signature", Some(s("s")))]),
                Read::Part(PartKind::ToolCall {
                    id: s("c1"),
                    name: s("read"),
                    input: r#"{"path":"a"}"#.into(),
                    signature: Some(s("s")),
                    item_id: None,
                }),
            ),
            (
                write::thinking("hm", "sig"),
                recorded(Recorded::Thinking {
                    thinking: s("hm"),
                    signature: s("sig"),
                }),
            ),
            (
                write::redacted_thinking("xyz"),
                recorded(Recorded::RedactedThinking { data: s("xyz") }),
            ),
            (
                write::reasoning("rs_1", Value::Array(summary.clone()), Some(&json!("enc"))),
                recorded(Recorded::Reasoning {
                    id: s("rs_1"),
                    summary,
                    encrypted: Some(s("enc")),
                }),
            ),
            (
                write::thought("mull", Some(s("sig"))),
                recorded(Recorded::Thought {
                    text: s("mull"),
                    signature: Some(s("sig")),
                }),
            ),
            (
                write::provider(Wire::Anthropic, block.as_object().unwrap()),
                Read::Part(PartKind::Opaque {
                    wire: Wire::Anthropic,
                    text: block.to_string(),
                    json: block.to_string().as_str().into(),
                }),
            ),
        ];
        for (written, kind) in cases {
            assert_eq!(back(&written, Place::Round).unwrap(), kind, "{written}");
        }
    }

    /// Every part a message holds, written, is read back the same at a seal's carry.
    #[test]
    fn a_carry_reads_back_what_a_message_wrote() {
        let kinds = [
            PartKind::Text("a".into()),
            PartKind::Image {
                media_type: "image/png".into(),
                data: "aGk=".into(),
            },
            PartKind::ToolCall {
                id: "c1".into(),
                name: "read".into(),
                input: r#"{"path":"a"}"#.into(),
                signature: None,
                item_id: None,
            },
            PartKind::ToolResult {
                call_id: "c1".into(),
                content: "body".into(),
                is_error: true,
            },
            PartKind::Opaque {
                wire: Wire::Converse,
                text: r#"{"reasoningContent":{}}"#.into(),
                json: r#"{"reasoningContent":{}}"#.into(),
            },
        ];
        for kind in kinds {
            let v = serde_json::to_value(Part {
                kind: kind.clone(),
                tokens: 0,
            })
            .unwrap();
            assert_eq!(back(&v, Place::Carried).unwrap(), Read::Part(kind), "{v}");
        }
    }

    #[test]
    fn each_place_takes_its_own_types() {
        let provider = json!({"type": "provider", "wire": "gemini", "block": {}});
        assert!(back(&provider, Place::Carried).is_ok() && back(&provider, Place::Round).is_ok());
        let refused = back(&provider, Place::Input).unwrap_err();
        assert_eq!(
            (refused.path.as_str(), refused.message.as_str()),
            ("/type", "unknown part type \"provider\"")
        );
        let image = json!({"type": "image", "media_type": "image/png", "data": "aGk="});
        assert!(back(&image, Place::Input).is_ok());
        assert_eq!(back(&image, Place::Round).unwrap_err().path, "/type");
        let thinking = write::thinking("hm", "s");
        assert_eq!(back(&thinking, Place::Input).unwrap_err().path, "/type");
        // What a round keeps of a tool call's wire, an input does not read.
        let call = json!({"type": "tool_call", "id": "c1", "name": "f", "item_id": "fc_1"});
        assert!(matches!(
            back(&call, Place::Input),
            Ok(Read::Part(PartKind::ToolCall { item_id: None, .. }))
        ));
        for (bad, path, message) in [
            (json!({"type": "text"}), "/text", "\"text\" must be a string"),
            (json!({"type": "text", "text": 1}), "/text", "\"text\" must be a string"),
            (
                json!({"type": "tool_call", "id": "", "name": "f"}),
                "/id",
                "empty tool_call id",
            ),
            (
                json!({"type": "tool_result", "call_id": "c", "content": "x", "is_error": "yes"}),
                "/is_error",
                "\"is_error\" must be a boolean",
            ),
            (
                json!({"type": "image", "media_type": "image/png", "data": "@@"}),
                "/data",
                "not valid base64",
            ),
            (json!({"text": "x"}), "/type", "a part needs a \"type\""),
            (json!("x"), "", "a part is an object with a \"type\""),
        ] {
            let r = back(&bad, Place::Input).unwrap_err();
            assert_eq!((r.path.as_str(), r.message.as_str()), (path, message), "{bad}");
        }
        // A round's refusals read as its column's errors, the key in the pointer.
        let r = back(&json!({"type": "thinking", "thinking": "hm"}), Place::Round).unwrap_err();
        assert_eq!((r.path.as_str(), r.message.as_str()), ("/signature", "missing"));
    }
}
