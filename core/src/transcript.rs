//! The summarizer's transcript (the seed's fifth reading site): every turn from the
//! newest summary turn on, rendered as spoken — each speaker's words in its envelope,
//! with the renderer and escaping every other site uses — for a model asked to
//! summarize the conversation. Its summary is then written as a `summary` turn.

use std::collections::HashMap;

use uuid::Uuid;

use crate::history::SUMMARY_HEADER;
use crate::kinds::TurnKind;
use crate::rows::{Turn, User};
use crate::voice::Voices;

/// The transcript of `turns` (oldest first, from the newest summary turn on), in a
/// conversation whose stored answerer is `conv_answerer` and whose creator is `creator`.
/// Kernel rows (`origin` set) read bare: their text is already an envelope. Entries are
/// separated by a blank line. Over the text bound (256 MiB) it is refused.
pub fn transcript(
    turns: &[Turn],
    users: &HashMap<Uuid, User>,
    creator: Option<Uuid>,
    conv_answerer: Option<Uuid>,
) -> crate::error::Result<String> {
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
        let t = transcript(&[m, r, k], &users, Some(Uuid::from_u128(1)), Some(Uuid::from_u128(2))).unwrap();
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
