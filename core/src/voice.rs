//! Whose voice (docs/design.md, "Voices"): the one renderer that decides, for every place the model
//! reads a row, whether the words are bare or wrapped in the speaker envelope.

use std::borrow::Cow;
use std::collections::HashMap;

use uuid::Uuid;

use crate::envelope::{wrap, Speaker};
use crate::items::{Part, PartKind};
use crate::rows::{Turn, User};
use crate::tokens::Counter;

/// Who wrote a row, and how it was sent. The text is borrowed, or owned when the
/// caller is done with it (history moves each turn's text into what it renders).
#[derive(Debug, Clone)]
pub(crate) struct Row<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) author: Option<Uuid>,
    /// The sender stamp.
    pub(crate) sender_conversation: Option<Uuid>,
    /// A kernel row (`origin` set): never wrapped.
    pub(crate) kernel: bool,
    /// Stored counts of `text`, per tokenizer.
    pub(crate) stored: &'a [Option<i32>],
}

impl<'a> Row<'a> {
    /// A turn's opening words (`text`: its prompt), by whoever posted them.
    pub(crate) fn opening(t: &'a Turn, text: Cow<'a, str>) -> Row<'a> {
        Row {
            text,
            author: t.words_author(),
            sender_conversation: t.sender_conversation_id,
            kernel: t.origin.is_some(),
            stored: &t.prompt_tokens,
        }
    }

    /// A message turn's content (`text`), by its author.
    pub(crate) fn message(t: &'a Turn, text: Cow<'a, str>) -> Row<'a> {
        Row {
            text,
            author: t.author_id,
            sender_conversation: t.sender_conversation_id,
            kernel: t.origin.is_some(),
            stored: &t.content_tokens,
        }
    }
}

pub(crate) struct Voices<'a> {
    pub(crate) users: &'a HashMap<Uuid, User>,
    pub(crate) creator: Option<Uuid>,
}

impl Voices<'_> {
    /// Whether `author` is one of the own voices of a turn answered by `answerer`:
    /// the conversation's creator, the answerer, the answerer's controlling Human.
    pub(crate) fn is_own(&self, author: Uuid, answerer: Option<&User>) -> bool {
        Some(author) == self.creator
            || answerer.is_some_and(|a| a.id == author || a.controlling_human() == Some(author))
    }

    /// The words of `row` as read for a turn answered by `answerer`.
    pub(crate) fn words(&self, row: Row<'_>, answerer: Option<&User>, counter: &mut Counter<'_>) -> Part {
        // Every row sent from another conversation is wrapped, an authorless one too.
        let foreign = match row.author {
            Some(author) => !self.is_own(author, answerer),
            None => false,
        };
        match row.author {
            author if !row.kernel && (row.sender_conversation.is_some() || foreign) => {
                self.wrapped(author, row.sender_conversation, &row.text, counter)
            }
            _ => {
                let tokens = counter.count_or_stored(&row.text, row.stored);
                Part {
                    kind: PartKind::Text(row.text.into_owned()),
                    tokens,
                }
            }
        }
    }

    /// The envelope of `author` around `text`: the one renderer every reading site uses.
    /// A row without an author (sent from another conversation) names no user.
    pub(crate) fn envelope(&self, author: Option<Uuid>, sender: Option<Uuid>, text: &str) -> String {
        let (handle, kind) = match author.and_then(|a| self.users.get(&a)) {
            Some(u) => (u.handle.as_str(), u.kind.as_str()),
            None => (UNKNOWN_HANDLE, "human"),
        };
        wrap(
            &Speaker {
                handle,
                kind,
                user_id: author,
                conversation: sender,
            },
            text,
        )
    }

    /// `text` in the envelope of `author`, whoever reads it. An author this compile
    /// cannot see (row-level security) is still a correspondent, never an own voice:
    /// the envelope names the id with the handle `unknown`.
    pub(crate) fn wrapped(
        &self,
        author: Option<Uuid>,
        sender: Option<Uuid>,
        text: &str,
        counter: &mut Counter<'_>,
    ) -> Part {
        let text = self.envelope(author, sender, text);
        let tokens = counter.count(&text);
        Part {
            kind: PartKind::Text(text),
            tokens,
        }
    }
}

/// The handle an envelope gives an author the compile cannot see.
pub(crate) const UNKNOWN_HANDLE: &str = "unknown";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::UserKind;
    use crate::tokens::{Memo, Tokenizer};

    fn user(n: u128, kind: UserKind, steward: Option<u128>) -> User {
        let mut u = User::new(Uuid::from_u128(n), &format!("u{n}"), kind);
        u.steward_id = steward.map(Uuid::from_u128);
        u
    }

    fn text(p: Part) -> String {
        p.kind.text().unwrap().to_string()
    }

    #[test]
    fn own_voices_read_bare_everyone_else_wrapped() {
        let agent = user(2, UserKind::Agent, Some(3));
        let users: HashMap<Uuid, User> = [
            user(1, UserKind::Human, None),
            agent.clone(),
            user(3, UserKind::Human, None),
            user(4, UserKind::Human, None),
        ]
        .into_iter()
        .map(|u| (u.id, u))
        .collect();
        let v = Voices {
            users: &users,
            creator: Some(Uuid::from_u128(1)),
        };
        let mut memo = Memo::default();
        let mut c = Counter::new(Tokenizer::Cl100kBase, &mut memo);
        let row = |author: u128| Row {
            text: "hi".into(),
            author: Some(Uuid::from_u128(author)),
            sender_conversation: None,
            kernel: false,
            stored: &[],
        };
        for own in [1, 2, 3] {
            assert_eq!(text(v.words(row(own), Some(&agent), &mut c)), "hi", "own voice {own}");
        }
        assert!(text(v.words(row(4), Some(&agent), &mut c)).starts_with("<message from=\"@u4\" kind=\"human\""));
        // A sender stamp wraps even an own voice; a kernel row is never wrapped.
        let stamped = Row {
            sender_conversation: Some(Uuid::from_u128(9)),
            ..row(1)
        };
        assert!(text(v.words(stamped, Some(&agent), &mut c))
            .contains("conversation=\"00000000-0000-0000-0000-000000000009\""));
        // Sent from another conversation with no author: wrapped all the same.
        let authorless = Row {
            author: None,
            sender_conversation: Some(Uuid::from_u128(9)),
            ..row(1)
        };
        assert!(text(v.words(authorless, Some(&agent), &mut c)).starts_with(
            "<message from=\"@unknown\" kind=\"human\" conversation=\"00000000-0000-0000-0000-000000000009\">"
        ));
        let kernel = Row { kernel: true, ..row(4) };
        assert_eq!(text(v.words(kernel, Some(&agent), &mut c)), "hi");
        // An author the compile cannot see is a correspondent, not an own voice.
        assert!(text(v.words(row(77), Some(&agent), &mut c))
            .starts_with("<message from=\"@unknown\" kind=\"human\" user=\"00000000-0000-0000-0000-00000000004d\">"));
    }
}
