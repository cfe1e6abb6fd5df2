//! A part's JSON: the one reader and the one writer of every part pgprompt reads or
//! writes. One vocabulary of `{"type": ...}` objects — `text`, `image`, `tool_call`,
//! `tool_result` and `provider`, and the types a wire records of its own (its thinking,
//! its reasoning: declared in its folder as a [`RecordedType`]) — of which each place
//! takes the types it can hold ([`Place`]). The reader turns a part into its one type,
//! [`PartKind`]; what a round recorded of its wire (a type of its own, a text with its
//! wire's keys, a [`RecordedText`]) it hands as [`Fields`] to the reader of the file that
//! knows the wires (`wire::replay::part`, a [`Replay`]), which reads it with the wire's
//! declaration into the block it replays: this file names no wire's part. The writer
//! spells a part for a round ([`write`], what `record_response` stores; a wire's own
//! types are written in its folder) or for a message ([`Part`]'s `Serialize`, what a
//! compiled message, a raw turn's input and a seal's carried history hold).
//!
//! A new typed part adds its kind in `items.rs`, its reading and writing here, and how
//! each wire sends it in the wire's folder (`Merging::unit` names every kind, with no
//! wildcard: a wire that has not said how it carries the new kind does not compile).

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::items::{CallRecord, Part, PartKind};
use crate::json_at::{At, Checked, JsonText, Obj};
use crate::kinds::Wire;

/// Where a part is read, and so which of the types it may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A round's assistant parts (`rounds.assistant`): text and tool calls as their wire
    /// recorded them (with `item_id`, `phase` or `signature`), the types wires record of
    /// their own (thinking, reasoning), and a provider's block.
    Round,
    /// A raw turn's input (`turns.input`): text, image, tool_call and tool_result, sent
    /// as they are.
    Input,
    /// The history a seal carried past its seed: the input's types and a provider's block.
    Carried,
}

impl Place {
    /// Whether a part of type `ty` may stand here, read here (a round's other types,
    /// its texts and its tool calls among them, are its recorders', [`Replay`]).
    fn takes(self, ty: &str) -> bool {
        const INPUT: &[&str] = &["text", "image", "tool_call", "tool_result"];
        match self {
            Place::Round => ty == "provider",
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

/// How a round's part that is its recorders' (a text, a type of a wire's own) is read,
/// handed to the round reader by the file that knows the wires (`wire::replay::part`):
/// the round format names no wire's part.
pub(crate) type Replay = fn(&Fields<'_>) -> Checked<PartKind>;

/// A part type a round records of one wire (its thinking, its reasoning), declared in
/// that wire's folder and listed by its `Form`: the type, and its reader, giving the
/// block as the wire replays it and the text the part is counted by.
pub(crate) struct RecordedType {
    /// The part's `type`.
    pub(crate) name: &'static str,
    /// The part read: (the block the wire replays, the text it is counted by).
    pub(crate) read: fn(&Fields<'_>) -> Checked<(String, String)>,
}

/// The keys a text part carries as one wire recorded it (a Responses message's item id
/// and phase, a Gemini thought signature), declared in that wire's folder: the first
/// makes the text that wire's; `says` names them in a refusal; `read` spells the block
/// the text replays as.
pub(crate) struct RecordedText {
    /// Its keys, the one that claims the text first.
    pub(crate) keys: &'static [&'static str],
    /// The keys as a refusal names them (`a Gemini signature`).
    pub(crate) says: &'static str,
    /// The block the text `text` replays as.
    pub(crate) read: fn(&Fields<'_>, &str) -> Checked<String>,
}

/// A part read: one of the one type, or, at a round, one its recorders read ([`Replay`]).
#[derive(Debug)]
pub(crate) enum Read<'v> {
    Part(PartKind),
    Recorded(Fields<'v>),
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
pub(crate) fn read<'v>(p: &At<'v>, place: Place) -> Checked<Read<'v>> {
    let obj = p.object(place.says("a part", "not an object", "is an object with a \"type\""))?;
    let ty = obj.at("type");
    let Some(kind) = ty.value.as_str() else {
        return Err(ty.refuse(place.says("a part", "missing part type", "needs a \"type\"")));
    };
    let part = Fields { obj, place, kind };
    if !place.takes(kind) {
        return match place {
            Place::Round => Ok(Read::Recorded(part)),
            Place::Input | Place::Carried => Err(unknown(&ty, kind)),
        };
    }
    let kind = match kind {
        "text" => PartKind::Text(part.string("text")?),
        "image" => part.image()?,
        "tool_call" => part.tool_call(|_| Ok(CallRecord::default()))?,
        "tool_result" => PartKind::ToolResult {
            call_id: part.string("call_id")?,
            content: part.string("content")?,
            is_error: part.obj.at("is_error").flag(false, "\"is_error\" must be a boolean")?,
        },
        "provider" => part.provider()?,
        other => return Err(unknown(&ty, other)),
    };
    Ok(Read::Part(kind))
}

/// A part whose type no reader here knows (or its place does not take): refused at `type`.
fn unknown(ty: &At<'_>, kind: &str) -> crate::json_at::Refusal {
    ty.refuse(format_args!("unknown part type \"{kind}\""))
}

/// One part's object, read where it stands: its fields, as the round's recorders read
/// them too.
pub(crate) struct Fields<'v> {
    /// The part's object.
    pub(crate) obj: Obj<'v>,
    place: Place,
    kind: &'v str,
}

impl std::fmt::Debug for Fields<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fields({:?})", self.obj.map)
    }
}

impl Fields<'_> {
    /// The part's `type`.
    pub(crate) fn kind(&self) -> &str {
        self.kind
    }

    /// The refusal of a part whose type no reader knows, at its `type`.
    pub(crate) fn unknown(&self) -> crate::json_at::Refusal {
        unknown(&self.obj.at("type"), self.kind)
    }

    /// A required string.
    pub(crate) fn string(&self, key: &str) -> Checked<String> {
        let at = self.obj.at(key);
        let quoted = format!("\"{key}\"");
        if at.is_absent() {
            return Err(at.refuse(self.place.says(&quoted, "missing", "must be a string")));
        }
        at.str(self.place.says(&quoted, "not a string", "must be a string"))
            .map(str::to_string)
    }

    /// A string that may be absent or `null`.
    pub(crate) fn optional(&self, key: &str) -> Checked<Option<String>> {
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

    /// A tool call, with what its wire recorded beside it, read by `recorded` after the
    /// call's own keys (at a round, the wires' reader; elsewhere nothing).
    pub(crate) fn tool_call(&self, recorded: impl FnOnce(&Self) -> Checked<CallRecord>) -> Checked<PartKind> {
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
        Ok(PartKind::ToolCall {
            id,
            name,
            input,
            recorded: recorded(self)?,
        })
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
}

/// The writer of a round's parts, as `record_response` stores them from a provider's
/// response: what [`read`] takes back at [`Place::Round`].
pub(crate) mod write {
    use serde_json::{json, Map, Value};

    use crate::kinds::Wire;

    /// A recorded value beside a part's own keys (`item_id`, `phase`, `signature`), left
    /// out when the response had none.
    pub(crate) type Native<'a> = &'a [(&'a str, Option<String>)];

    /// `part` with what its wire recorded beside its own keys.
    pub(crate) fn with(mut part: Value, native: Native<'_>) -> Value {
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

    fn back(v: &Value, place: Place) -> Checked<Read<'_>> {
        read(&At::root(v, ""), place)
    }

    /// A round's part, read, and where it is its recorders', read by them (the wires').
    fn round(v: &Value) -> Checked<PartKind> {
        match read(&At::root(v, ""), Place::Round)? {
            Read::Part(kind) => Ok(kind),
            Read::Recorded(fields) => crate::wire::replay::part(&fields),
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
                recorded: Default::default(),
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
            assert!(
                matches!(back(&v, Place::Carried), Ok(Read::Part(k)) if k == kind),
                "{v}"
            );
        }
    }

    #[test]
    fn each_place_takes_its_own_types() {
        let provider = json!({"type": "provider", "wire": "gemini", "block": {}});
        assert!(back(&provider, Place::Carried).is_ok() && round(&provider).is_ok());
        let refused = back(&provider, Place::Input).unwrap_err();
        assert_eq!(
            (refused.path.as_str(), refused.message.as_str()),
            ("/type", "unknown part type \"provider\"")
        );
        let image = json!({"type": "image", "media_type": "image/png", "data": "aGk="});
        assert!(back(&image, Place::Input).is_ok());
        assert_eq!(round(&image).unwrap_err().path, "/type");
        let thinking = json!({"type": "thinking", "thinking": "hm", "signature": "s"});
        assert_eq!(back(&thinking, Place::Input).unwrap_err().path, "/type");
        // What a round keeps of a tool call's wire, an input does not read.
        let call = json!({"type": "tool_call", "id": "c1", "name": "f", "item_id": "fc_1"});
        assert!(matches!(
            back(&call, Place::Input),
            Ok(Read::Part(PartKind::ToolCall { recorded, .. })) if recorded == CallRecord::default()
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
        let r = round(&json!({"type": "thinking", "thinking": "hm"})).unwrap_err();
        assert_eq!((r.path.as_str(), r.message.as_str()), ("/signature", "missing"));
    }
}
