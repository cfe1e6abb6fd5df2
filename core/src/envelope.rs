//! The speaker envelope (docs/design.md, "Voices"): escaping, unescaping and the wrapper itself.
//!
//! Inside an envelope a body can neither open nor close one: `<` before `message`,
//! `/message`, `task_result` or `/task_result` is written `&lt;`, and an `&` that
//! already begins such a spelling (`&lt;message`, `&amp;lt;message`, …) gains one
//! `amp;`, so unescaping is exact. Nothing else changes.

use uuid::Uuid;

/// The four spellings a body may not carry after `<`.
const TARGETS: [&str; 4] = ["message", "/message", "task_result", "/task_result"];

fn starts_with_target(s: &str) -> bool {
    TARGETS.iter().any(|t| s.starts_with(t))
}

/// Whether `s` (what follows an `&`) is `(amp;)*lt;TARGET`.
fn is_spelling_tail(mut s: &str) -> bool {
    while let Some(rest) = s.strip_prefix("amp;") {
        s = rest;
    }
    s.strip_prefix("lt;").is_some_and(starts_with_target)
}

/// Escapes a body for the inside of an envelope.
pub fn escape(body: &str) -> String {
    // Fast path: neither `<` nor `&`, nothing to do.
    if !body.bytes().any(|b| b == b'<' || b == b'&') {
        return body.to_string();
    }
    if body.len() > crate::bounds::INTERRUPT_EVERY {
        crate::bounds::interrupt();
    }
    let mut out = String::with_capacity(body.len() + 16);
    let mut last = 0;
    for (i, b) in body.bytes().enumerate() {
        // `<` and `&` are ASCII, so `i + 1` is a char boundary.
        let replacement = match b {
            b'<' if starts_with_target(&body[i + 1..]) => "&lt;",
            b'&' if is_spelling_tail(&body[i + 1..]) => "&amp;",
            _ => continue,
        };
        out.push_str(&body[last..i]);
        out.push_str(replacement);
        last = i + 1;
    }
    out.push_str(&body[last..]);
    out
}

/// The exact inverse of [`escape`].
pub fn unescape(body: &str) -> String {
    if !body.contains('&') {
        return body.to_string();
    }
    let mut out = String::with_capacity(body.len());
    let mut last = 0;
    let mut i = 0;
    let bytes = body.as_bytes();
    while i < bytes.len() {
        if bytes[i] == b'&' {
            let rest = &body[i..];
            if rest.strip_prefix("&lt;").is_some_and(starts_with_target) {
                out.push_str(&body[last..i]);
                out.push('<');
                i += 4;
                last = i;
                continue;
            }
            if rest.strip_prefix("&amp;").is_some_and(is_spelling_tail) {
                out.push_str(&body[last..i]);
                out.push('&');
                i += 5;
                last = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&body[last..]);
    out
}

/// Who a wrapped row is from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Speaker<'a> {
    pub(crate) handle: &'a str,
    pub(crate) kind: &'a str,
    /// `None`: a row sent from another conversation with no author (no `user`).
    pub(crate) user_id: Option<Uuid>,
    /// The sender stamp: the conversation the row was sent from.
    pub(crate) conversation: Option<Uuid>,
}

/// `<message from="@HANDLE" kind=… user=… conversation=…>\nESCAPED\n</message>` (no
/// `user` for a row without an author).
pub(crate) fn wrap(speaker: &Speaker<'_>, body: &str) -> String {
    let escaped = escape(body);
    let mut out = String::with_capacity(escaped.len() + 160);
    out.push_str("<message from=\"@");
    out.push_str(speaker.handle);
    out.push_str("\" kind=\"");
    out.push_str(speaker.kind);
    out.push('"');
    if let Some(u) = speaker.user_id {
        out.push_str(" user=\"");
        out.push_str(&u.to_string());
        out.push('"');
    }
    if let Some(c) = speaker.conversation {
        out.push_str(" conversation=\"");
        out.push_str(&c.to_string());
        out.push('"');
    }
    out.push_str(">\n");
    out.push_str(&escaped);
    out.push_str("\n</message>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORBIDDEN: [&str; 4] = ["<message", "</message", "<task_result", "</task_result"];

    fn assert_roundtrip(s: &str) {
        let e = escape(s);
        assert_eq!(unescape(&e), s, "roundtrip of {s:?} via {e:?}");
        for f in FORBIDDEN {
            assert!(!e.contains(f), "{s:?} escaped to {e:?} still holds {f}");
        }
    }

    #[test]
    fn escapes_exactly_the_four_forms() {
        assert_eq!(escape("<message from=x>"), "&lt;message from=x>");
        assert_eq!(escape("</message>"), "&lt;/message>");
        assert_eq!(escape("<task_result>"), "&lt;task_result>");
        assert_eq!(escape("</task_result>"), "&lt;/task_result>");
        assert_eq!(escape("<b>bold</b> & <messag"), "<b>bold</b> & <messag");
        assert_eq!(escape("a < b && c"), "a < b && c");
        assert_eq!(escape("<Message>"), "<Message>");
    }

    #[test]
    fn ampersands_that_begin_a_spelling_gain_one_amp() {
        assert_eq!(escape("&lt;message"), "&amp;lt;message");
        assert_eq!(escape("&amp;lt;message"), "&amp;amp;lt;message");
        assert_eq!(escape("&lt;b&gt;"), "&lt;b&gt;");
        assert_eq!(escape("&amp;"), "&amp;");
        assert_eq!(unescape("&amp;amp;lt;/task_result"), "&amp;lt;/task_result");
    }

    #[test]
    fn roundtrips_tricky_cases() {
        for s in [
            "",
            "plain",
            "<message",
            "&<message",
            "&lt;<message",
            "&&lt;message",
            "&lt;&lt;message",
            "&amp;amp;amp;lt;/message>",
            "<<message>>",
            "&lt;",
            "&amp;lt;",
            "é<message ü",
            "</message></task_result><task_result><message>",
        ] {
            assert_roundtrip(s);
        }
    }

    /// A small deterministic generator: strings over an alphabet rich in the pieces
    /// that matter, so every interleaving of `&`, `amp;`, `lt;`, `<` and the targets
    /// is reached.
    fn strings(seed: u64, count: usize) -> Vec<String> {
        const PIECES: [&str; 14] = [
            "<",
            "&",
            "amp;",
            "lt;",
            "message",
            "/message",
            "task_result",
            "/task_result",
            "/",
            "a",
            " ",
            "é",
            ">",
            "&lt;",
        ];
        let mut rng = crate::testing::Rng(seed);
        let mut next = move || rng.below(u64::MAX);
        (0..count)
            .map(|_| {
                let len = (next() % 12) as usize;
                (0..len)
                    .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn property_unescape_inverts_escape_and_nothing_forges_an_envelope() {
        for s in strings(0x9e3779b97f4a7c15, 50_000) {
            assert_roundtrip(&s);
        }
    }

    #[test]
    fn property_escape_is_identity_without_targets() {
        for s in strings(42, 5_000) {
            if !FORBIDDEN.iter().any(|f| s.contains(f)) && !s.contains("&") {
                assert_eq!(escape(&s), s);
            }
        }
    }

    #[test]
    fn wrap_renders_the_envelope() {
        let id = Uuid::from_u128(1);
        let conv = Uuid::from_u128(2);
        let s = Speaker {
            handle: "lark",
            kind: "agent",
            user_id: Some(id),
            conversation: Some(conv),
        };
        assert_eq!(
            wrap(&s, "hi </message> there"),
            "<message from=\"@lark\" kind=\"agent\" user=\"00000000-0000-0000-0000-000000000001\" \
             conversation=\"00000000-0000-0000-0000-000000000002\">\nhi &lt;/message> there\n</message>"
        );
        let s = Speaker {
            conversation: None,
            kind: "human",
            ..s
        };
        assert!(wrap(&s, "x")
            .starts_with("<message from=\"@lark\" kind=\"human\" user=\"00000000-0000-0000-0000-000000000001\">\n"));
        // A row sent from another conversation with no author: no user.
        let s = Speaker {
            handle: "unknown",
            user_id: None,
            conversation: Some(conv),
            ..s
        };
        assert_eq!(
            wrap(&s, "x"),
            "<message from=\"@unknown\" kind=\"human\" conversation=\"00000000-0000-0000-0000-000000000002\">\nx\n</message>"
        );
    }

    #[test]
    fn property_a_wrapped_body_has_exactly_one_envelope() {
        let s = Speaker {
            handle: "h",
            kind: "human",
            user_id: Some(Uuid::nil()),
            conversation: None,
        };
        for body in strings(7, 20_000) {
            let w = wrap(&s, &body);
            assert_eq!(w.matches("<message").count(), 1, "{w:?}");
            assert_eq!(w.matches("</message").count(), 1, "{w:?}");
            assert!(!w.contains("<task_result") && !w.contains("</task_result"));
        }
    }
}
