//! The summarizer's transcript (the seed's fifth reading site): every turn from the
//! newest summary turn on, rendered as spoken — each speaker's words in its envelope,
//! with the renderer and escaping every other site uses — for a model asked to
//! summarize the conversation. Its summary is then written as a `summary` turn.

use std::collections::HashMap;

use uuid::Uuid;

use crate::columns::Columns;
use crate::error::{Error, Result};
use crate::history::SUMMARY_HEADER;
use crate::kinds::TurnKind;
use crate::rows::{Turn, User};
use crate::voice::Voices;

/// The statements the transcript runs, run by the host (as the caller, so row-level
/// security decides what is read): [`transcript`] decides which, and reads their rows.
pub trait TranscriptRows {
    /// The conversation's `creator_id` and `answerer_id` (`None`: no conversation row is
    /// visible).
    fn conversation(&mut self, conv: Uuid) -> Result<Option<(Option<Uuid>, Option<Uuid>)>>;
    /// The `seq` of turn `turn` of the conversation (`None`: not visible there).
    fn seq(&mut self, conv: Uuid, turn: Uuid) -> Option<i64>;
    /// Why turn `turn` cannot be read: another conversation's, or not visible.
    fn missing_turn(&mut self, conv: Uuid, turn: Uuid) -> Error;
    /// The turns from the newest summary turn at or before `seq` on, oldest first, each
    /// row (`id`, `seq`, `kind`, `author_id`, `answerer_id`, `poster_id`, `prompt`,
    /// `content`, `origin`, `sender_conversation_id`) read by `read`.
    fn turns(&mut self, conv: Uuid, seq: i64, read: &mut dyn FnMut(&dyn Columns) -> Result<Turn>) -> Result<Vec<Turn>>;
    /// The users `ids` names that are visible.
    fn users(&mut self, ids: &[Uuid]) -> Result<Vec<User>>;
}

/// The transcript of conversation `conv` through turn `through` (`prompt.transcript`):
/// from the newest summary turn at or before it on, read through `rows`.
pub fn transcript(rows: &mut impl TranscriptRows, conv: Uuid, through: Uuid) -> Result<String> {
    let Some((creator, answerer)) = rows.conversation(conv)? else {
        return Err(Error::conversation_not_found(conv));
    };
    let Some(seq) = rows.seq(conv, through) else {
        return Err(rows.missing_turn(conv, through));
    };
    let turns = rows.turns(conv, seq, &mut spoken)?;
    let mut ids: Vec<Uuid> = turns
        .iter()
        .flat_map(|t| [t.author_id, t.answerer_id, t.poster_id])
        .chain([answerer])
        .flatten()
        .collect();
    ids.sort();
    ids.dedup();
    let users = rows.users(&ids)?.into_iter().map(|u| (u.id, u)).collect();
    render(&turns, &users, creator, answerer)
}

/// A turn as the transcript reads it: who spoke, and what.
fn spoken(c: &dyn Columns) -> Result<Turn> {
    Turn::spoken_from_columns(c, c.need_uuid("id")?)
}

/// The transcript of `turns` (oldest first, from the newest summary turn on), in a
/// conversation whose stored answerer is `conv_answerer` and whose creator is `creator`.
/// Kernel rows (`origin` set) read bare: their text is already an envelope. Entries are
/// separated by a blank line. Over the text bound (256 MiB) it is refused.
pub(crate) fn render(
    turns: &[Turn],
    users: &HashMap<Uuid, User>,
    creator: Option<Uuid>,
    conv_answerer: Option<Uuid>,
) -> Result<String> {
    let voices = Voices { users, creator };
    let say = |author: Option<Uuid>, t: &Turn, text: &str| match (author, t.sender_conversation_id, &t.origin) {
        (Some(_), _, None) | (None, Some(_), None) => voices.envelope(author, t.sender_conversation_id, text),
        _ => text.to_string(),
    };
    let mut entries: Vec<String> = Vec::new();
    // Measured as it grows: the entries built so far (`counted` of them) and their
    // separators.
    let (mut built, mut counted) = (0usize, 0usize);
    for t in turns {
        crate::bounds::interrupt();
        for e in &entries[counted..] {
            built = built.saturating_add(e.len() + 2);
        }
        counted = entries.len();
        crate::bounds::check(built, "the transcript")?;
        let nonempty = |s: &Option<String>| s.as_deref().filter(|s| !s.is_empty()).map(str::to_string);
        match t.kind {
            TurnKind::Summary => {
                if let Some(c) = nonempty(&t.content) {
                    entries.push(format!("{SUMMARY_HEADER}{c}"));
                }
            }
            TurnKind::Message => {
                if let Some(c) = nonempty(&t.content) {
                    entries.push(say(t.author_id, t, &c));
                }
            }
            TurnKind::Reply => {
                if let Some(p) = nonempty(&t.prompt) {
                    entries.push(say(t.poster_id, t, &p));
                }
                if let Some(c) = nonempty(&t.content) {
                    // The answer is the answerer's own words: no sender stamp.
                    let answerer = t.answerer_id.or(conv_answerer);
                    entries.push(match answerer {
                        Some(a) => voices.envelope(Some(a), None, &c),
                        None => c,
                    });
                }
            }
        }
    }
    let text = entries.join("\n\n");
    crate::bounds::check(text.len(), "the transcript")?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::UserKind;

    fn user(n: u128, handle: &str, kind: UserKind) -> User {
        User::new(Uuid::from_u128(n), handle, kind)
    }

    /// A conversation of one message turn, read as the host would.
    struct Rows {
        visible: bool,
        turn: Option<i64>,
    }

    impl TranscriptRows for Rows {
        fn conversation(&mut self, _: Uuid) -> Result<Option<(Option<Uuid>, Option<Uuid>)>> {
            Ok(self.visible.then_some((Some(Uuid::from_u128(1)), None)))
        }
        fn seq(&mut self, _: Uuid, _: Uuid) -> Option<i64> {
            self.turn
        }
        fn missing_turn(&mut self, _: Uuid, turn: Uuid) -> Error {
            Error::new(crate::error::Code::TurnNotFound, format!("turn {turn} is not here"))
        }
        fn turns(
            &mut self,
            _: Uuid,
            seq: i64,
            read: &mut dyn FnMut(&dyn Columns) -> Result<Turn>,
        ) -> Result<Vec<Turn>> {
            let mut row = crate::testing::Row::default();
            row.text.insert("id", Uuid::from_u128(10).to_string());
            row.int.insert("seq", seq);
            row.text.insert("kind", "message".into());
            row.text.insert("author_id", Uuid::from_u128(1).to_string());
            row.text.insert("content", "Charged twice".into());
            Ok(vec![read(&row)?])
        }
        fn users(&mut self, ids: &[Uuid]) -> Result<Vec<User>> {
            Ok(ids.iter().map(|id| User::new(*id, "ada", UserKind::Human)).collect())
        }
    }

    #[test]
    fn the_transcript_reads_its_rows_and_refuses_what_it_cannot_see() {
        let (conv, through) = (Uuid::from_u128(50), Uuid::from_u128(10));
        let t = transcript(
            &mut Rows {
                visible: true,
                turn: Some(1),
            },
            conv,
            through,
        )
        .unwrap();
        assert_eq!(
            t,
            format!(
                "<message from=\"@ada\" kind=\"human\" user=\"{}\">\nCharged twice\n</message>",
                Uuid::from_u128(1)
            )
        );
        let e = transcript(
            &mut Rows {
                visible: false,
                turn: Some(1),
            },
            conv,
            through,
        )
        .unwrap_err();
        assert_eq!(e.code, crate::error::Code::ConversationNotFound);
        let e = transcript(
            &mut Rows {
                visible: true,
                turn: None,
            },
            conv,
            through,
        )
        .unwrap_err();
        assert_eq!(e.code, crate::error::Code::TurnNotFound);
    }

    #[test]
    fn every_turn_reads_as_spoken() {
        let users: HashMap<Uuid, User> = [user(1, "ada", UserKind::Human), user(2, "lark", UserKind::Agent)]
            .into_iter()
            .map(|u| (u.id, u))
            .collect();
        let mut m = Turn::new(Uuid::from_u128(10), 1, TurnKind::Message);
        m.author_id = Some(Uuid::from_u128(1));
        m.content = Some("Charged twice </message>".into());
        let mut r = Turn::new(Uuid::from_u128(11), 2, TurnKind::Reply);
        r.poster_id = Some(Uuid::from_u128(1));
        r.prompt = Some("Check?".into());
        r.content = Some("Two charges.".into());
        let mut k = Turn::new(Uuid::from_u128(12), 3, TurnKind::Message);
        k.author_id = Some(Uuid::from_u128(2));
        k.origin = Some("task_result".into());
        k.content = Some("<task_result>done</task_result>".into());
        let t = render(&[m, r, k], &users, Some(Uuid::from_u128(1)), Some(Uuid::from_u128(2))).unwrap();
        let u = |n: u128| Uuid::from_u128(n).to_string();
        assert_eq!(
            t,
            format!(
                "<message from=\"@ada\" kind=\"human\" user=\"{}\">\nCharged twice &lt;/message>\n</message>\n\n\
                 <message from=\"@ada\" kind=\"human\" user=\"{}\">\nCheck?\n</message>\n\n\
                 <message from=\"@lark\" kind=\"agent\" user=\"{}\">\nTwo charges.\n</message>\n\n\
                 <task_result>done</task_result>",
                u(1),
                u(1),
                u(2)
            )
        );
    }
}
