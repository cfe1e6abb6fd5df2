//! The one macro registry (docs/design.md, "Blocks"): the write-time trigger, `validate_template`
//! and the compiler all scan and substitute through this module.
//!
//! A macro token is `{{` IDENT `}}` with IDENT `[A-Za-z_][A-Za-z0-9_]*`. Any other text
//! between braces (`{{ }}`, `{{#if x}}`, `{{a b}}`) is literal.

use crate::error::{Code, Error, Result};

/// The closed registry, in the order the HINT lists them.
pub(crate) const MACROS: [&str; 5] = ["agent", "user", "workspace", "date", "conversation_kind"];

/// `{{history}}` is refused with its own hint: history is a block.
pub(crate) const HISTORY_WORD: &str = "history";

pub(crate) fn is_macro(name: &str) -> bool {
    MACROS.contains(&name)
}

/// The HINT that lists the registry.
pub(crate) fn known_macros_hint() -> String {
    let list: Vec<String> = MACROS.iter().map(|m| format!("{{{{{m}}}}}")).collect();
    format!("Known macros: {}.", list.join(", "))
}

pub(crate) fn history_hint() -> &'static str {
    "History is a block, not a macro: place {\"type\": \"history\"} in the template's blocks."
}

/// One macro token found in a text: `text[start..end]` is `{{name}}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) name: &'a str,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_rest(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The macro tokens of `text`, left to right, never overlapping.
pub(crate) fn tokens(text: &str) -> impl Iterator<Item = Token<'_>> {
    let bytes = text.as_bytes();
    let mut i = 0usize;
    std::iter::from_fn(move || loop {
        let open = i + memchr_braces(bytes.get(i..)?)?;
        let name_start = open + 2;
        if name_start < bytes.len() && is_ident_start(bytes[name_start]) {
            let mut j = name_start + 1;
            while j < bytes.len() && is_ident_rest(bytes[j]) {
                j += 1;
            }
            if bytes.get(j) == Some(&b'}') && bytes.get(j + 1) == Some(&b'}') {
                i = j + 2;
                // IDENT is ASCII, so these offsets are char boundaries.
                return Some(Token {
                    start: open,
                    end: j + 2,
                    name: &text[name_start..j],
                });
            }
        }
        i = open + 1;
    })
}

/// Offset of the next `{{` in `bytes`.
fn memchr_braces(bytes: &[u8]) -> Option<usize> {
    bytes.windows(2).position(|w| w == b"{{")
}

/// Refuses the first word that is neither a macro nor accepted by `is_variable`.
/// `place` names where the text lives, for the message (`document "persona"`).
pub(crate) fn check(text: &str, is_variable: &dyn Fn(&str) -> bool, place: &str) -> Result<()> {
    match first_unknown(text, is_variable) {
        None => Ok(()),
        Some(word) => Err(unknown_error(word, place)),
    }
}

/// The first unknown word in `text`, if any.
pub(crate) fn first_unknown<'a>(text: &'a str, is_variable: &dyn Fn(&str) -> bool) -> Option<&'a str> {
    tokens(text)
        .find(|t| t.name == HISTORY_WORD || !(is_macro(t.name) || is_variable(t.name)))
        .map(|t| t.name)
}

/// The error for an unknown word, with the hint that fits it.
pub(crate) fn unknown_error(word: &str, place: &str) -> Error {
    let e = Error::new(Code::MacroUnknown, format!("unknown macro {{{{{word}}}}} in {place}"))
        .detail(format!("The word \"{word}\" is not in the macro registry."));
    if word == HISTORY_WORD {
        e.hint(history_hint())
    } else {
        e.hint(known_macros_hint())
    }
}

/// What each macro renders for one turn. `None` renders empty (a source that is absent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Values {
    pub(crate) agent: Option<String>,
    pub(crate) user: Option<String>,
    pub(crate) workspace: Option<String>,
    pub(crate) date: Option<String>,
    pub(crate) conversation_kind: Option<String>,
}

impl Values {
    fn get(&self, name: &str) -> Option<&str> {
        match name {
            "agent" => self.agent.as_deref(),
            "user" => self.user.as_deref(),
            "workspace" => self.workspace.as_deref(),
            "date" => self.date.as_deref(),
            "conversation_kind" => self.conversation_kind.as_deref(),
            _ => None,
        }
    }
}

/// Substitutes macros and variables (`vars`, their values with their own macros
/// rendered), leaving every other token as written.
/// Only text validated on write reaches here, so an unknown word cannot occur; were one
/// to, it would stay literal rather than vanish.
///
/// The result is measured before it is built: over `room` bytes it is refused
/// (`text_too_large`, naming `place`), so a long value substituted many times never
/// reaches an allocation.
pub(crate) fn substitute<'v>(
    text: &str,
    values: &'v Values,
    vars: &dyn Fn(&str) -> Option<&'v str>,
    room: usize,
    place: &str,
) -> Result<String> {
    // A variable's value renders its macros (it is checked like a document on write).
    let mut rendered: Vec<(&str, String)> = Vec::new();
    for t in tokens(text) {
        if is_macro(t.name) || t.name == HISTORY_WORD || rendered.iter().any(|(n, _)| *n == t.name) {
            continue;
        }
        if let Some(v) = vars(t.name).filter(|v| tokens(v).next().is_some()) {
            let value = substitute(v, values, &|_| None, room, place)?;
            rendered.push((t.name, value));
        }
    }
    let replacement = |name: &str| -> Option<&str> {
        if is_macro(name) {
            Some(values.get(name).unwrap_or(""))
        } else if name == HISTORY_WORD {
            None
        } else if let Some((_, v)) = rendered.iter().find(|(n, _)| *n == name) {
            Some(v.as_str())
        } else {
            vars(name)
        }
    };
    let mut len = text.len();
    for t in tokens(text) {
        if let Some(r) = replacement(t.name) {
            len = len - (t.end - t.start) + r.len();
            if len > room {
                // `room` is what the compile's earlier texts left of the bound: the size
                // reported is theirs and this one's together, over the bound it names.
                let built = crate::bounds::MAX_TEXT.saturating_sub(room);
                return Err(crate::bounds::too_large(
                    len.saturating_add(built),
                    &format!("the compile's texts, with {place} and its macros and variables,"),
                ));
            }
        }
    }
    let mut out = String::with_capacity(len);
    let mut last = 0;
    for t in tokens(text) {
        if let Some(r) = replacement(t.name) {
            out.push_str(&text[last..t.start]);
            out.push_str(r);
            last = t.end;
        }
    }
    out.push_str(&text[last..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<&str> {
        tokens(text).map(|t| t.name).collect()
    }

    fn no_vars(_: &str) -> bool {
        false
    }

    #[test]
    fn finds_ident_tokens_only() {
        assert_eq!(names("Hi {{user}}, I am {{agent}}."), vec!["user", "agent"]);
        assert_eq!(names("{{ }} {{#if x}} {{a b}} {{}} {{1x}} {{x-y}}"), Vec::<&str>::new());
        assert_eq!(names("{{{agent}}}"), vec!["agent"]);
        assert_eq!(names("{{_private9}}"), vec!["_private9"]);
        assert_eq!(names("{{agent}"), Vec::<&str>::new());
        assert_eq!(names("{"), Vec::<&str>::new());
        assert_eq!(names("é{{date}}ü"), vec!["date"]);
    }

    #[test]
    fn check_refuses_unknown_words_naming_them() {
        assert!(check("Hello {{agent}} on {{date}}", &no_vars, "x").is_ok());
        let e = check("Hello {{agnet}}", &no_vars, "document \"system_prompt\"").unwrap_err();
        assert_eq!(e.code, Code::MacroUnknown);
        assert_eq!(
            e.message,
            "prompt_document_macro_unknown: unknown macro {{agnet}} in document \"system_prompt\""
        );
        assert_eq!(
            e.hint.as_deref(),
            Some("Known macros: {{agent}}, {{user}}, {{workspace}}, {{date}}, {{conversation_kind}}.")
        );
    }

    #[test]
    fn history_is_refused_with_its_own_hint() {
        let e = check("{{history}}", &|_| true, "x").unwrap_err();
        assert!(e.message.contains("{{history}}"));
        assert!(e.hint.unwrap().contains("block"));
    }

    #[test]
    fn literal_braces_are_left_alone() {
        for text in ["{{ }}", "{{#if x}}", "{{a b}}", "{ {agent} }", "{{", "}}"] {
            assert!(check(text, &no_vars, "x").is_ok(), "{text}");
        }
    }

    #[test]
    fn variables_are_accepted_when_declared() {
        assert!(check("{{scene}}", &|v| v == "scene", "x").is_ok());
        assert!(check("{{scene}}", &no_vars, "x").is_err());
    }

    #[test]
    fn a_variables_macros_render_in_place() {
        let values = Values {
            agent: Some("Lark".into()),
            ..Values::default()
        };
        let vars = |n: &str| (n == "scene").then_some("{{agent}}'s {{day}} {{nope}}");
        let out = substitute("Today: {{scene}}.", &values, &vars, 1 << 20, "x").unwrap();
        // Macros render; anything else in the value stays as written (refused on write).
        assert_eq!(out, "Today: Lark's {{day}} {{nope}}.");
    }

    #[test]
    fn substitute_renders_absent_sources_empty() {
        let v = Values {
            agent: Some("Ada".into()),
            ..Default::default()
        };
        let none = |_: &str| None;
        let sub = |text: &str| substitute(text, &v, &none, usize::MAX, "x").unwrap();
        assert_eq!(sub("I am {{agent}} for {{user}}."), "I am Ada for .");
        assert_eq!(sub("{{ }} {{#if}}"), "{{ }} {{#if}}");
        let vars = |n: &str| (n == "scene").then_some("a storm");
        assert_eq!(
            substitute("{{scene}} / {{other}}", &v, &vars, usize::MAX, "x").unwrap(),
            "a storm / {{other}}"
        );
    }

    #[test]
    fn substitution_output_is_not_rescanned() {
        let v = Values {
            agent: Some("{{user}}".into()),
            user: Some("U".into()),
            ..Default::default()
        };
        assert_eq!(
            substitute("{{agent}}", &v, &|_| None, usize::MAX, "x").unwrap(),
            "{{user}}"
        );
    }

    #[test]
    fn a_substitution_over_its_room_is_refused_before_it_is_built() {
        let v = Values {
            workspace: Some("w".repeat(1000)),
            ..Default::default()
        };
        let text = "{{workspace}}".repeat(100);
        assert_eq!(substitute(&text, &v, &|_| None, 100_000, "x").unwrap().len(), 100_000);
        let e = substitute(&text, &v, &|_| None, 99_999, "document \"character\"").unwrap_err();
        assert_eq!(e.code, Code::TextTooLarge);
        assert!(
            e.message
                .contains("the compile's texts, with document \"character\" and its macros and variables, would be 268435457 bytes or more, over the bound of 268435456 bytes"),
            "{}",
            e.message
        );
    }
}
