//! A JSON column's value as its caller holds it (docs/design.md, "Rows"): the loader reads
//! jsonb columns from their binary form and hands over values; a write-time check or a
//! test holds JSON text, parsed here. The column parsers of `fields` and `options` take
//! either, so the compile path parses no JSON text.

use std::borrow::Cow;

use serde_json::Value;

use crate::error::{Error, Result};

/// A JSON column's value as its caller holds it: read already (the loader takes jsonb
/// columns from their binary form), or as JSON text, parsed here.
pub(crate) trait JsonInput<'a> {
    /// The value; `not_json` makes the refusal of a text that is not JSON (given the
    /// parser's message).
    fn value(self, not_json: impl FnOnce(String) -> Error) -> Result<Cow<'a, Value>>;
}

impl<'a> JsonInput<'a> for &'a Value {
    fn value(self, _: impl FnOnce(String) -> Error) -> Result<Cow<'a, Value>> {
        Ok(Cow::Borrowed(self))
    }
}

impl<'a> JsonInput<'a> for &'a str {
    fn value(self, not_json: impl FnOnce(String) -> Error) -> Result<Cow<'a, Value>> {
        serde_json::from_str(self)
            .map(Cow::Owned)
            .map_err(|e| not_json(e.to_string()))
    }
}

impl<'a> JsonInput<'a> for &'a String {
    fn value(self, not_json: impl FnOnce(String) -> Error) -> Result<Cow<'a, Value>> {
        self.as_str().value(not_json)
    }
}
