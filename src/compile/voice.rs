//! Whose voice (SPEC §6): the one renderer that decides, for every place the model
//! reads a row, whether the words are bare or wrapped in the speaker envelope.

use std::collections::HashMap;

use uuid::Uuid;

use super::context::User;
use super::envelope::{wrap, Speaker};
use super::items::{Part, PartKind};
use super::tokens::Counter;

/// Who wrote a row, and how it was sent.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub text: &'a str,
    pub author: Option<Uuid>,
    /// The sender stamp.
    pub sender_conversation: Option<Uuid>,
    /// A kernel row (`origin` set): never wrapped.
    pub kernel: bool,
    /// Stored counts of `text`, per tokenizer.
    pub stored: &'a [Option<i32>],
}

pub struct Voices<'a> {
    pub users: &'a HashMap<Uuid, User>,
    pub creator: Option<Uuid>,
}

impl Voices<'_> {
    /// Whether `author` is one of the own voices of a turn answered by `answerer`:
    /// the conversation's creator, the answerer, the answerer's controlling Human.
    pub fn is_own(&self, author: Uuid, answerer: Option<&User>) -> bool {
        Some(author) == self.creator
            || answerer.is_some_and(|a| a.id == author || a.controlling_human() == Some(author))
    }

    /// The words of `row` as read for a turn answered by `answerer`.
    pub fn words(&self, row: Row<'_>, answerer: Option<&User>, counter: &mut Counter<'_>) -> Part {
        let speaker = match row.author {
            Some(author) if !row.kernel && (row.sender_conversation.is_some() || !self.is_own(author, answerer)) => {
                self.users.get(&author)
            }
            _ => None,
        };
        match speaker {
            None => Part {
                kind: PartKind::Text(row.text.to_string()),
                tokens: counter.count_or_stored(row.text, row.stored),
            },
            Some(user) => self.wrapped(user, row.sender_conversation, row.text, counter),
        }
    }

    /// `text` in `user`'s envelope, whoever reads it.
    pub fn wrapped(&self, user: &User, sender: Option<Uuid>, text: &str, counter: &mut Counter<'_>) -> Part {
        let speaker = Speaker {
            handle: &user.handle,
            kind: user.kind.as_str(),
            user_id: user.id,
            conversation: sender,
        };
        let text = wrap(&speaker, text);
        let tokens = counter.count(&text);
        Part {
            kind: PartKind::Text(text),
            tokens,
        }
    }
}
