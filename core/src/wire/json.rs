//! Small JSON writing helpers for the wire renderers: an object written key by key in
//! the order given, JSON text the core wrote embedded as it is, and an order-keeping
//! pretty printer.

use serde::Serialize;
use serde_json::value::RawValue;

/// A JSON value as compact text. Serializing the compiler's own values cannot fail
/// (no map has non-string keys); were it to, `null` is written rather than a panic.
pub(crate) fn to_text<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

/// Appends `s` as a JSON string, escaped as serde_json escapes it (`"`, `\\`, and the
/// control characters: `\b \f \n \r \t` short, the rest `\u00xx`). Eight bytes are
/// checked at a time: text needs escaping rarely, and serde_json's byte-by-byte scan
/// was a tenth of a compile (docs/guide.md, "Performance: where the time goes").
pub(crate) fn string(out: &mut String, s: &str) {
    if s.len() > crate::bounds::INTERRUPT_EVERY {
        crate::bounds::interrupt();
    }
    out.reserve(s.len() + 2);
    out.push('"');
    let b = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        if i + 8 <= b.len() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&b[i..i + 8]);
            if !needs_escape(u64::from_le_bytes(word)) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(b.len());
        for j in i..end {
            let c = b[j];
            if c < 0x20 || c == b'"' || c == b'\\' {
                // `c` is ASCII, so `start..j` and `j + 1` are char boundaries.
                out.push_str(&s[start..j]);
                escape(out, c);
                start = j + 1;
            }
        }
        i = end;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// The length of `s` written as a JSON string by [`string`], quotes included.
pub(crate) fn escaped_len(s: &str) -> usize {
    let extra: usize = s
        .bytes()
        .map(|c| match c {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            c if c < 0x20 => 5,
            _ => 0,
        })
        .sum();
    s.len() + extra + 2
}

/// Whether any of a word's eight bytes is below 0x20, `"` or `\\` (SWAR: a byte's high
/// bit is set in the mask when it matches).
fn needs_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    below_space | zero_byte(w ^ (ONES * u64::from(b'"'))) | zero_byte(w ^ (ONES * u64::from(b'\\'))) != 0
}

fn escape(out: &mut String, c: u8) {
    match c {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        0x08 => out.push_str("\\b"),
        0x0c => out.push_str("\\f"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[usize::from(c >> 4)] as char);
            out.push(HEX[usize::from(c & 0xf)] as char);
        }
    }
}

/// Appends JSON text as it is: a call's arguments or a tool's schema, which the
/// compiler wrote itself from a parsed value (so it is valid and compact).
pub(crate) fn raw(out: &mut String, json: &str) {
    out.push_str(json);
}

/// The fields of one JSON object, in order, each value as its own text: what a frame
/// written by [`Obj`] is read back as. `None` when `text` is not one object.
pub(crate) fn fields(text: &str) -> Option<Vec<(String, Box<RawValue>)>> {
    use serde::de::{Deserializer as _, MapAccess, Visitor};
    struct Fields;
    impl<'de> Visitor<'de> for Fields {
        type Value = Vec<(String, Box<RawValue>)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                out.push(entry);
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let fields = (&mut de).deserialize_map(Fields).ok()?;
    de.end().ok()?;
    Some(fields)
}

/// An object written key by key, in the order given.
pub(crate) struct Obj {
    out: String,
    first: bool,
}

impl Obj {
    pub(super) fn new() -> Obj {
        Obj {
            out: String::from("{"),
            first: true,
        }
    }

    /// Continues an object whose earlier keys were written elsewhere (a body's tail).
    pub(crate) fn after(prefix: &str) -> Obj {
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

    pub(crate) fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> &mut Obj {
        self.key(key);
        self.out.push_str(&to_text(value));
        self
    }

    /// A field whose value is JSON text already.
    pub(crate) fn raw(&mut self, key: &str, json: &str) -> &mut Obj {
        self.key(key);
        self.out.push_str(json);
        self
    }

    /// Opens a list under `key` and returns the text so far: a body's head.
    pub(crate) fn open_list(mut self, key: &str) -> String {
        self.key(key);
        self.out.push('[');
        self.out
    }

    /// Closes the object.
    pub(crate) fn close(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

/// Pretty-prints JSON text keeping its key order (golden files, the demo). Text that is
/// not JSON is returned as it is. Indentation grows with depth, so the output is measured
/// as it is written: past the text bound (256 MiB) it is refused (`text_too_large`).
pub fn pretty(text: &str) -> crate::error::Result<String> {
    let Ok(raw) = serde_json::from_str::<&RawValue>(text) else {
        return Ok(text.to_string());
    };
    let mut out = String::with_capacity(text.len().saturating_mul(2).min(crate::bounds::MAX_TEXT));
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let bytes = raw.get().as_bytes();
    let newline = |out: &mut String, depth: usize| -> crate::error::Result<()> {
        let len = out.len().saturating_add(1).saturating_add(depth.saturating_mul(2));
        crate::bounds::check(len, "the pretty print")?;
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
        Ok(())
    };
    let mut i = 0;
    let mut next_check = crate::bounds::INTERRUPT_EVERY;
    while i < bytes.len() {
        if i >= next_check {
            crate::bounds::interrupt();
            next_check = i + crate::bounds::INTERRUPT_EVERY;
        }
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
                newline(&mut out, depth)?;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth)?;
                out.push(c as char);
            }
            b',' => {
                out.push(',');
                newline(&mut out, depth)?;
            }
            b':' => out.push_str(": "),
            b' ' | b'\n' | b'\t' | b'\r' => {}
            _ => out.push(c as char),
        }
        i += 1;
    }
    Ok(out)
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
    fn strings_escape_exactly_as_serde_json_does() {
        let mut samples: Vec<String> = vec![
            String::new(),
            "plain text, long enough to take the eight-byte path twice".into(),
            "quote \" and backslash \\ and é 日本 🎉".into(),
            (0u8..0x80).map(char::from).collect(),
            "ends with a quote\"".into(),
            "\u{7f}\u{2028}\u{2029}".into(),
        ];
        let mut rng = crate::testing::Rng(0x5eed);
        for _ in 0..500 {
            let pieces = [
                "a",
                " ",
                "\"",
                "\\",
                "\n",
                "\u{1}",
                "\u{1f}",
                "é",
                "12345678",
                "\t\r",
                "\u{8}\u{c}",
            ];
            samples.push(
                (0..rng.below(30))
                    .map(|_| pieces[rng.below(pieces.len() as u64) as usize])
                    .collect(),
            );
        }
        for s in samples {
            let mut out = String::new();
            string(&mut out, &s);
            assert_eq!(out, serde_json::to_string(&s).unwrap(), "{s:?}");
            assert_eq!(escaped_len(&s), out.len(), "{s:?}");
        }
    }

    #[test]
    fn pretty_keeps_order_and_strings() {
        let text = r#"{"z":1,"a":{"s":"x, y: [z] é \"q\""},"e":[],"o":{}}"#;
        let p = pretty(text).unwrap();
        assert_eq!(
            p,
            "{\n  \"z\": 1,\n  \"a\": {\n    \"s\": \"x, y: [z] é \\\"q\\\"\"\n  },\n  \"e\": [],\n  \"o\": {}\n}"
        );
        let back: serde_json::Value = serde_json::from_str(&p).unwrap();
        assert_eq!(back, serde_json::from_str::<serde_json::Value>(text).unwrap());
    }
}
