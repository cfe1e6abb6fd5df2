//! Small JSON writing helpers for the wire renderers: an object written key by key in
//! the order given, raw JSON embedded as it is, and an order-keeping pretty printer.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// JSON text (already valid and compact) embedded verbatim: a tool call's arguments or
/// a tool's schema, which the compiler wrote itself from a parsed value.
#[derive(Debug, Clone, Copy)]
pub struct Raw<'a>(pub &'a str);

impl Serialize for Raw<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match serde_json::from_str::<&RawValue>(self.0) {
            Ok(raw) => raw.serialize(s),
            // Only the compiler writes these texts, always from a parsed value; were one
            // ever not JSON, an empty object is sent rather than a panic.
            Err(_) => serde_json::Map::new().serialize(s),
        }
    }
}

/// A JSON value as compact text. Serializing the compiler's own values cannot fail
/// (no map has non-string keys); were it to, `null` is written rather than a panic.
pub fn to_text<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

/// An object written key by key, in the order given.
pub struct Obj {
    out: String,
    first: bool,
}

impl Obj {
    pub fn new() -> Obj {
        Obj {
            out: String::from("{"),
            first: true,
        }
    }

    /// Continues an object whose earlier keys were written elsewhere (a body's tail).
    pub fn after(prefix: &str) -> Obj {
        Obj {
            out: prefix.to_string(),
            first: false,
        }
    }

    fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out.push_str(&to_text(key));
        self.out.push(':');
    }

    pub fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> &mut Obj {
        self.key(key);
        self.out.push_str(&to_text(value));
        self
    }

    /// A field whose value is JSON text already.
    pub fn raw(&mut self, key: &str, json: &str) -> &mut Obj {
        self.key(key);
        self.out.push_str(json);
        self
    }

    /// Opens a list under `key` and returns the text so far: a body's head.
    pub fn open_list(mut self, key: &str) -> String {
        self.key(key);
        self.out.push('[');
        self.out
    }

    /// Closes the object.
    pub fn close(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

/// Pretty-prints JSON text keeping its key order (golden files, the demo). Text that is
/// not JSON is returned as it is.
pub fn pretty(text: &str) -> String {
    let Ok(raw) = serde_json::from_str::<&RawValue>(text) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let bytes = raw.get().as_bytes();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
    };
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            // Copy a whole UTF-8 sequence at once.
            let len = utf8_len(c);
            out.push_str(&raw.get()[i..i + len]);
            i += len;
            continue;
        }
        match c {
            b'"' => {
                in_string = true;
                out.push('"');
            }
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                if bytes.get(i + 1) == Some(&close) {
                    out.push(c as char);
                    out.push(close as char);
                    i += 2;
                    continue;
                }
                out.push(c as char);
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c as char);
            }
            b',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            b':' => out.push_str(": "),
            b' ' | b'\n' | b'\t' | b'\r' => {}
            _ => out.push(c as char),
        }
        i += 1;
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_their_key_order() {
        let mut o = Obj::new();
        o.field("model", "m").field("max_tokens", &5);
        let head = o.open_list("messages");
        assert_eq!(head, r#"{"model":"m","max_tokens":5,"messages":["#);
        let mut tail = Obj::after("]");
        tail.raw("tools", r#"[{"a":1}]"#);
        assert_eq!(tail.close(), r#"],"tools":[{"a":1}]}"#);
    }

    #[test]
    fn raw_text_is_embedded_and_never_panics() {
        assert_eq!(to_text(&Raw(r#"{"b":1,"a":[2]}"#)), r#"{"b":1,"a":[2]}"#);
        assert_eq!(to_text(&Raw("not json")), "{}");
    }

    #[test]
    fn pretty_keeps_order_and_strings() {
        let text = r#"{"z":1,"a":{"s":"x, y: [z] é \"q\""},"e":[],"o":{}}"#;
        let p = pretty(text);
        assert_eq!(
            p,
            "{\n  \"z\": 1,\n  \"a\": {\n    \"s\": \"x, y: [z] é \\\"q\\\"\"\n  },\n  \"e\": [],\n  \"o\": {}\n}"
        );
        let back: serde_json::Value = serde_json::from_str(&p).unwrap();
        assert_eq!(back, serde_json::from_str::<serde_json::Value>(text).unwrap());
    }
}
