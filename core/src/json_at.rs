//! The one reader of the JSON the core is handed (a turn's columns, request options, a
//! template, a round, a provider's response): a value at its JSON pointer (RFC 6901).
//! A reader declares what it takes — which keys an object may hold, what each value
//! must be and the message when it is not — and this module walks the value, builds
//! the pointers and makes the refusal ([`Refusal`]: a pointer and a message, which each
//! caller turns into its own error code). No reader walks a value building pointers of its
//! own (the rule refusals of `options` name an option's pointer from its key).
//! What a reader keeps as JSON for a wire (a tool call's arguments, a provider's block)
//! it keeps as [`JsonText`]: text written or checked once, never parsed again to render.
//!
//! Why not `serde` derive with `deny_unknown_fields` under `serde_path_to_error` (the
//! issue's suggestion, measured 2026-12-02 on the tool list of `fields::parse_tools`):
//! of its five refusals none came out the same. A missing `input_schema` is reported at
//! the entry (`[0]`, today `/tools/0/input_schema`) as "missing field `input_schema`"; an
//! unknown key as "unknown field `colour`, expected one of `name`, …"; a wrong type as
//! "invalid type: integer `3`, expected a string"; a `null` `deferred` is refused where
//! today it means absent; and keys are visited in the map's order, not the reader's, so
//! the first refusal of a value with two problems changes. Keeping today's codes,
//! messages and pointers (the golden refusals) would need a `deserialize_with` per field
//! and a rewrite of serde's messages per struct: more code than the readers it replaces.

use std::fmt::Display;

use serde_json::{Map, Value};

use crate::error::{Code, Error, Result};

/// JSON text the core holds for a wire (a tool call's arguments, a provider's block):
/// serde_json's `RawValue`, written once from the parsed value, or checked once when the
/// core writes it by hand. The wire renderers embed it and the tokenizer counts it as it
/// is; it serializes as the value it spells (into a seal's carried parts, which are a
/// `Value`, serde_json reads it once as that value: once per seal written, never per
/// compile).
#[derive(Clone)]
pub(crate) struct JsonText(Box<serde_json::value::RawValue>);

impl JsonText {
    /// `value` as compact text (as `Value::to_string` spells it).
    fn of(value: &Value) -> JsonText {
        // A Value always serializes (its keys are strings); `null` were it ever not to.
        JsonText(
            serde_json::value::to_raw_value(value).unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned()),
        )
    }

    /// Text the core wrote by hand, in a key order a wire needs (a thinking block):
    /// checked once here, `None` if it is not one JSON value.
    pub(crate) fn written(text: String) -> Option<JsonText> {
        serde_json::value::RawValue::from_string(text).ok().map(JsonText)
    }

    /// An object as compact text (a call's arguments, a provider's block); `None` for
    /// any other value, for a reader's refusal.
    pub(crate) fn object(value: &Value) -> Option<JsonText> {
        value.is_object().then(|| JsonText::of(value))
    }

    /// `{}`: a tool call without arguments.
    pub(crate) fn empty_object() -> JsonText {
        JsonText::of(&Value::Object(Map::new()))
    }
}

impl std::ops::Deref for JsonText {
    type Target = str;
    fn deref(&self) -> &str {
        self.0.get()
    }
}

impl std::fmt::Debug for JsonText {
    /// As the text's own `Debug` (the pinned refusals corpus prints readers' values).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0.get(), f)
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &JsonText) -> bool {
        self.0.get() == other.0.get()
    }
}

impl serde::Serialize for JsonText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

#[cfg(test)]
impl From<&str> for JsonText {
    /// A test's literal arguments (parsed: only tests build a call from text).
    fn from(text: &str) -> JsonText {
        JsonText::of(&serde_json::from_str(text).expect("a test's JSON literal"))
    }
}

/// A value refused: where (a JSON pointer from the reader's root) and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    /// The pointer of the refused value (`""`: the root itself).
    pub(crate) path: String,
    /// What is wrong, without the pointer.
    pub(crate) message: String,
}

/// A reader's result: the value taken, or the first refusal.
pub(crate) type Checked<T> = std::result::Result<T, Refusal>;

impl Refusal {
    /// The refusal as a column's error: "{message} at {pointer}", the detail naming the
    /// pointer.
    pub(crate) fn error(self, code: Code) -> Error {
        let path = self.path;
        Error::new(code, format!("{} at {path}", self.message)).detail(format!("The value at {path} is not valid."))
    }
}

/// A reader's result as a column's error ([`Refusal::error`]).
pub(crate) trait OrCode<T> {
    /// The value, or the refusal as an error of `code`.
    fn or_code(self, code: Code) -> Result<T>;
}

impl<T> OrCode<T> for Checked<T> {
    fn or_code(self, code: Code) -> Result<T> {
        self.map_err(|r| r.error(code))
    }
}

/// Escapes one JSON-pointer reference token (RFC 6901).
pub(crate) fn pointer_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The pointer of `token` below `base`: `base`, `/`, the escaped token, in one allocation.
/// Every value a reader visits carries its pointer, so this runs for every key and item of
/// a round's blocks: `format!` with [`pointer_token`]'s two replaces was 3% of a tool-round
/// preview's samples (bench/NOTES.md).
fn pointer_child(base: &str, token: &str) -> String {
    let mut path = String::with_capacity(base.len() + 1 + token.len());
    path.push_str(base);
    path.push('/');
    if token.contains(['~', '/']) {
        path.push_str(&pointer_token(token));
    } else {
        path.push_str(token);
    }
    path
}

/// A reference token below a value: a key, or a list index.
pub(crate) trait Token {
    /// The pointer of this token below `base`.
    fn below(&self, base: &str) -> String;
}

impl Token for &str {
    fn below(&self, base: &str) -> String {
        pointer_child(base, self)
    }
}

impl Token for &String {
    fn below(&self, base: &str) -> String {
        pointer_child(base, self)
    }
}

impl Token for usize {
    fn below(&self, base: &str) -> String {
        use std::fmt::Write as _;
        let mut path = String::with_capacity(base.len() + 4);
        path.push_str(base);
        // Writing to a String cannot fail.
        let _ = write!(path, "/{self}");
        path
    }
}

static NULL: Value = Value::Null;

/// A value and its JSON pointer. An absent key reads as `null` at its pointer ([`Obj::at`],
/// [`At::is_absent`]); [`Obj::get`] gives only a key that is there.
#[derive(Debug, Clone)]
pub(crate) struct At<'v> {
    /// The value (`null` when absent).
    pub(crate) value: &'v Value,
    path: String,
    absent: bool,
}

impl<'v> At<'v> {
    /// The root of a reader: `value` at pointer `path` (`""`, or a column's own name such
    /// as `/inline`).
    pub(crate) fn root(value: &'v Value, path: impl Into<String>) -> Self {
        At {
            value,
            path: path.into(),
            absent: false,
        }
    }

    /// Its pointer.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The value at `token` below this one (a key, or a list index).
    pub(crate) fn child(&self, value: &'v Value, token: impl Token) -> At<'v> {
        At {
            value,
            path: token.below(&self.path),
            absent: false,
        }
    }

    /// This value refused with `message`.
    pub(crate) fn refuse(&self, message: impl Display) -> Refusal {
        Refusal {
            path: self.path.clone(),
            message: message.to_string(),
        }
    }

    /// Whether it is `null` (or absent).
    pub(crate) fn is_null(&self) -> bool {
        self.value.is_null()
    }

    /// Whether its key is absent from its object ([`Obj::at`]).
    pub(crate) fn is_absent(&self) -> bool {
        self.absent
    }

    /// What `take` makes of the value, or the refusal `message` when it makes nothing.
    /// The message is formatted only when refused.
    pub(crate) fn read<T>(&self, take: impl FnOnce(&'v Value) -> Option<T>, message: impl Display) -> Checked<T> {
        take(self.value).ok_or_else(|| self.refuse(message))
    }

    /// [`At::read`] of a value that may be absent or `null` (`None`).
    pub(crate) fn optional<T>(
        &self,
        take: impl FnOnce(&'v Value) -> Option<T>,
        message: impl Display,
    ) -> Checked<Option<T>> {
        if self.is_null() {
            return Ok(None);
        }
        self.read(take, message).map(Some)
    }

    /// A string.
    pub(crate) fn str(&self, message: impl Display) -> Checked<&'v str> {
        self.read(Value::as_str, message)
    }

    /// A boolean, `default` when absent or `null`.
    pub(crate) fn flag(&self, default: bool, message: impl Display) -> Checked<bool> {
        Ok(self.optional(Value::as_bool, message)?.unwrap_or(default))
    }

    /// An object, whose keys are read through [`Obj`].
    pub(crate) fn object(&self, message: impl Display) -> Checked<Obj<'v>> {
        match self.value {
            Value::Object(map) => Ok(Obj {
                map,
                path: self.path.clone(),
            }),
            _ => Err(self.refuse(message)),
        }
    }

    /// A list, each item at its index.
    pub(crate) fn list(&self, message: impl Display) -> Checked<Items<'v>> {
        match self.value {
            Value::Array(list) => Ok(Items {
                list,
                at: self.clone(),
                next: 0,
            }),
            _ => Err(self.refuse(message)),
        }
    }
}

/// The items of a list, each an [`At`] at its index.
pub(crate) struct Items<'v> {
    list: &'v [Value],
    at: At<'v>,
    next: usize,
}

impl<'v> Iterator for Items<'v> {
    type Item = At<'v>;

    fn next(&mut self) -> Option<At<'v>> {
        let value = self.list.get(self.next)?;
        self.next += 1;
        Some(self.at.child(value, self.next - 1))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.list.len() - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Items<'_> {}

/// An object at its pointer.
#[derive(Debug, Clone)]
pub(crate) struct Obj<'v> {
    /// Its keys and values.
    pub(crate) map: &'v Map<String, Value>,
    path: String,
}

impl<'v> Obj<'v> {
    /// The root of a reader handed an object itself (merged options, say), at `path`.
    pub(crate) fn root(map: &'v Map<String, Value>, path: impl Into<String>) -> Self {
        Obj { map, path: path.into() }
    }

    /// This object refused with `message`.
    pub(crate) fn refuse(&self, message: impl Display) -> Refusal {
        Refusal {
            path: self.path.clone(),
            message: message.to_string(),
        }
    }

    fn child(&self, value: &'v Value, key: &str, absent: bool) -> At<'v> {
        At {
            value,
            path: pointer_child(&self.path, key),
            absent,
        }
    }

    /// The value of `key` (`null` when absent, [`At::is_absent`]), at its pointer.
    pub(crate) fn at(&self, key: &str) -> At<'v> {
        match self.map.get(key) {
            Some(v) => self.child(v, key, false),
            None => self.child(&NULL, key, true),
        }
    }

    /// The value of `key` when present (even `null`).
    pub(crate) fn get(&self, key: &str) -> Option<At<'v>> {
        self.map.get(key).map(|v| self.child(v, key, false))
    }

    /// Refuses the first key (in the object's order) that is not one of `keys`, at its
    /// pointer, with `unknown(key)`.
    pub(crate) fn only(&self, keys: &[&str], unknown: impl FnOnce(&str) -> String) -> Checked<()> {
        match self.map.keys().find(|k| !keys.contains(&k.as_str())) {
            Some(key) => Err(self.at(key).refuse(unknown(key))),
            None => Ok(()),
        }
    }

    /// Every key that is not one of `keys`, at its pointer (for readers that report every
    /// problem).
    pub(crate) fn unknown<'k>(&'k self, keys: &'k [&str]) -> impl Iterator<Item = (&'v str, At<'v>)> + 'k {
        self.map
            .iter()
            .filter(|(k, _)| !keys.contains(&k.as_str()))
            .map(|(k, v)| (k.as_str(), self.child(v, k, false)))
    }

    /// Its entries, each at its pointer.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&'v str, At<'v>)> + '_ {
        self.map.iter().map(|(k, v)| (k.as_str(), self.child(v, k, false)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call's arguments keep the text the parsed value spells (the renderers embed it)
    /// and serialize as that value, into a seal's carried parts, byte for byte.
    #[test]
    fn json_text_is_the_values_text_and_serializes_as_it() {
        let v: Value = serde_json::from_str(r#"{ "b": [1, "x\u00e9"], "a": {} }"#).unwrap();
        let t = JsonText::of(&v);
        assert_eq!(&*t, v.to_string());
        assert_eq!(serde_json::to_string(&t).unwrap(), v.to_string());
        assert_eq!(serde_json::to_string(&vec![t.clone()]).unwrap(), format!("[{v}]"));
        assert_eq!(&*JsonText::empty_object(), "{}");
        assert_eq!(JsonText::object(&v), Some(t.clone()));
        assert_eq!(JsonText::object(&Value::from("{}")), None);
        let block = r#"{"type":"thinking","thinking":"x","signature":"s"}"#;
        assert_eq!(&*JsonText::written(block.into()).unwrap(), block);
        assert!(JsonText::written(r#"{"a":1"#.into()).is_none());
        assert!(JsonText::written(r#"{"a":1} {}"#.into()).is_none());
        assert_ne!(t, JsonText::empty_object());
    }
    use serde_json::json;

    #[test]
    fn pointers_are_built_here_and_escaped() {
        let v = json!({"a/b": [{"~x": 1}]});
        let root = At::root(&v, "/col");
        let o = root.object("not an object").unwrap();
        let list = o.at("a/b");
        assert_eq!(list.path(), "/col/a~1b");
        let first = list.list("not a list").unwrap().next().unwrap();
        assert_eq!(first.path(), "/col/a~1b/0");
        let inner = first.object("x").unwrap();
        assert_eq!(inner.at("~x").path(), "/col/a~1b/0/~0x");
        let r = inner.at("~x").str("not a string").unwrap_err();
        assert_eq!(
            r,
            Refusal {
                path: "/col/a~1b/0/~0x".into(),
                message: "not a string".into()
            }
        );
    }

    #[test]
    fn absent_and_null_are_optional_and_unknown_keys_refused_at_theirs() {
        let v = json!({"n": null, "b": true, "extra": 1});
        let o = At::root(&v, "").object("x").unwrap();
        assert!(o.at("n").flag(true, "bool").unwrap());
        assert!(!o.at("missing").flag(false, "bool").unwrap());
        assert!(o.get("missing").is_none() && o.get("n").is_some());
        assert!(o.at("missing").is_absent() && !o.at("n").is_absent() && o.at("n").is_null());
        assert_eq!(o.at("b").optional(Value::as_bool, "bool").unwrap(), Some(true));
        let r = o.only(&["n", "b"], |k| format!("unknown key \"{k}\"")).unwrap_err();
        assert_eq!(
            (r.path.as_str(), r.message.as_str()),
            ("/extra", "unknown key \"extra\"")
        );
        assert_eq!(o.unknown(&["n"]).map(|(k, _)| k).collect::<Vec<_>>(), ["b", "extra"]);
    }

    #[test]
    fn a_message_is_formatted_only_when_refused() {
        struct Loud;
        impl Display for Loud {
            fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                panic!("formatted on success")
            }
        }
        let v = json!("x");
        assert_eq!(At::root(&v, "").str(Loud).unwrap(), "x");
    }
}
