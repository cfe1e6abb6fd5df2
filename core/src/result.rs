//! What a compile returns (SPEC §10) and what a fresh compile seals (SPEC §8).

use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::estimate::Estimate;
use super::items::{Item, ItemsJson, Message};

/// What a fresh compile stores on the turn (SPEC §8).
#[derive(Debug, Clone, PartialEq)]
pub struct Seal {
    /// The sealed request: `None` when it is the compile's result itself; the seed's
    /// result when rounds were already stored at the first compile.
    pub request: Option<Rendered>,
    pub preface: String,
    pub catalog: Option<String>,
    pub mechanism: &'static str,
    /// The row versions it read (JSON text).
    pub versions: String,
}

#[derive(Debug, Clone)]
pub struct Output {
    /// The sealed request, plus the rounds for a continuation.
    pub result: Rendered,
    /// Present when this was a fresh compile (the turn had no seal).
    pub seal: Option<Seal>,
    pub estimate: Estimate,
}

impl Output {
    /// The result as JSON text.
    pub fn json(&self) -> String {
        self.result.to_json()
    }

    /// The sealed request as JSON text, when this compile sealed.
    pub fn sealed_json(&self) -> Option<String> {
        let seal = self.seal.as_ref()?;
        Some(seal.request.as_ref().map_or_else(|| self.json(), Rendered::to_json))
    }
}

/// The result of `compile_turn` (SPEC §10), as values: the pg layer builds jsonb from
/// it directly, tests and seals read it as JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultDoc {
    pub conversation_id: Uuid,
    pub turn_id: Uuid,
    pub mechanism: &'static str,
    pub model: Option<String>,
    pub wire: &'static str,
    pub messages: Vec<Message>,
    pub cache_marker: usize,
    pub preface: Vec<Item>,
    pub request: Value,
    pub estimate: Estimate,
}

impl Serialize for ResultDoc {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("ResultDoc", 11)?;
        st.serialize_field("version", &1)?;
        st.serialize_field("conversation_id", &self.conversation_id)?;
        st.serialize_field("turn_id", &self.turn_id)?;
        st.serialize_field("mechanism", self.mechanism)?;
        st.serialize_field("model", &self.model)?;
        st.serialize_field("wire", self.wire)?;
        st.serialize_field("messages", &self.messages)?;
        st.serialize_field("cache_marker", &self.cache_marker)?;
        st.serialize_field("preface", &ItemsJson(&self.preface))?;
        st.serialize_field("request", &self.request)?;
        st.serialize_field("estimate", &self.estimate)?;
        st.end()
    }
}

/// A result: compiled now, or the sealed JSON text returned as it was stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Rendered {
    Doc(Box<ResultDoc>),
    Stored(String),
}

impl Rendered {
    pub fn to_json(&self) -> String {
        match self {
            Rendered::Doc(d) => serde_json::to_string(d).expect("a result serializes"),
            Rendered::Stored(s) => s.clone(),
        }
    }
}
