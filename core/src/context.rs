//! What one compile reads: the context of the turn (its conversation, workspace, users,
//! models, documents, memory, skills, its rounds and its seal) and the turns of history
//! with their rounds.

use std::collections::HashMap;

use uuid::Uuid;

use crate::rounds::Round;
use crate::rows::{Conversation, Document, Memory, Model, Skill, Turn, User, Workspace};

/// A turn of history with its rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryTurn {
    /// The turn's row (`prompt.turns`).
    pub turn: Turn,
    /// The turn's rounds (`prompt.rounds`) in order of `n`; empty when it has none.
    pub rounds: Vec<Round>,
    /// For a Side, the parent conversation a turn of its captured history belongs to;
    /// `None` for the compiled turn's own conversation.
    pub host: Option<Host>,
}

/// The conversation a Side's captured turn belongs to, as its turns are read: with its
/// own creator and stored answerer (so they render as they did there), `depth` captures
/// up from the Side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Host {
    /// How many captures up from the Side the conversation is: 1 for its parent.
    pub depth: u8,
    /// The conversation's `creator_id`; `None` when it has none.
    pub creator_id: Option<Uuid>,
    /// The conversation's stored `answerer_id`; `None` when it has none.
    pub answerer_id: Option<Uuid>,
}

/// Everything a compile reads besides history.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// The turn's conversation (`prompt.conversations`).
    pub conversation: Conversation,
    /// The conversation's workspace (`prompt.workspaces`).
    pub workspace: Workspace,
    /// The turn being compiled (`prompt.turns`).
    pub turn: Turn,
    /// The current turn's rounds (a continuation).
    pub rounds: Vec<Round>,
    /// Every user the compile names: answerers, posters, stewards, authors.
    pub users: HashMap<Uuid, User>,
    /// Models by name (the turn's and the answerer's).
    pub models: HashMap<String, Model>,
    /// The answerer's documents, the workspace's, and the persona of P's Human.
    pub(crate) documents: Vec<Document>,
    /// The memory entries in the turn's effective bindings, any order.
    pub(crate) memories: Vec<Memory>,
    /// The skills the turn's callables could list, any order.
    pub(crate) skills: Vec<Skill>,
    /// The turn's seal, when it has one: a continuation renders from it alone.
    pub seal: Option<crate::seal::Sealed>,
    /// A Side's captures, nearest first: its parent conversation and the turn captured
    /// there, then the parent's own capture when the parent is a Side too. History reads
    /// the Side's turns, then each parent's up to and including its captured turn.
    pub captured: Vec<Captured>,
    /// For a stateful turn's first compile: the previous request of its answerer in the
    /// conversation and the response recorded for it (`None`: there is none, or the turn
    /// is not stateful). The compile checks the chain.
    pub(crate) previous: Option<Previous>,
    /// For a first compile that asks for cache diagnostics (`request_options.cache_diagnostics`):
    /// the id of the newest response recorded for an earlier turn of its answerer in the
    /// conversation (`None`: none is recorded, or none was asked for).
    pub(crate) diagnostics_previous: Option<String>,
    /// The seq of the newest summary turn before the turn in its conversation, where its
    /// history starts (`None`: there is none), read with the turn.
    pub summary_floor: Option<i64>,
    /// Whether any turn of the conversation has rounds, read with the turn: history asks
    /// for its batches' rounds only then (`true` where unknown).
    pub conversation_rounds: bool,
}

/// The previous request of a stateful turn's answerer (`Context::previous`), read by
/// the load ([`crate::reads::load`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Previous {
    /// The recorded response's id: what `previous_response_id` names.
    pub(crate) response_id: String,
    /// The model the response answered, as recorded (`compiled_model`).
    pub(crate) model: Option<String>,
    /// The response's recorded usage: everything its prompt was billed for (input,
    /// cache reads and writes), and its output.
    pub(crate) input_tokens: Option<i32>,
    /// The response's recorded output tokens (`output_tokens`); `None` when not recorded.
    pub(crate) output_tokens: Option<i32>,
    /// The previous request: its turn, sealed, with the rounds before the response. The
    /// compile renders its full form (`continuation::full_request`) when the chain
    /// may hold.
    pub(crate) request: Box<Context>,
    /// Whether that request was stateful itself (its system text in `instructions`).
    pub(crate) stateful: bool,
    /// The model its seal froze.
    pub(crate) sealed_model: Option<String>,
}

/// Where a Side was captured: a turn of its parent conversation, as it stood then.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    /// The parent conversation the Side was captured from (the Side's `parent_id`).
    pub conversation_id: Uuid,
    /// The captured turn's `seq` (history reads the parent's turns through it).
    pub seq: i64,
    /// The parent conversation as its turns are read (depth, creator, answerer).
    pub host: Host,
    /// The captured turn as it stood at the capture (the Side's `captured_*` columns).
    pub state: CaptureState,
}

/// The captured turn as it stood when the Side was created (`prompt.conversations`'
/// `captured_*` columns): what the Side reads of it, whatever the turn got since.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaptureState {
    /// Its newest round then (`None`: it had none).
    pub round: Option<i32>,
    /// Its `content` then (`captured_content`); `None`: it had none.
    pub content: Option<String>,
    /// Its in-turn `summary` then (`captured_summary`); `None`: it had none.
    pub summary: Option<String>,
    /// Its `summary_round` then (`captured_summary_round`); `None`: it had none.
    pub summary_round: Option<i32>,
    /// What its requests had cleared then (`captured_cleared`: its rounds' records).
    pub cleared: Vec<crate::clearing::Record>,
}

impl Captured {
    /// The captured turn of a parent's history, read as it stood at the capture: its
    /// answer and in-turn summary then, and only the rounds it had. Other turns are
    /// left as they are.
    pub(crate) fn freeze(&self, ht: &mut HistoryTurn) {
        if ht.host.map(|h| h.depth) != Some(self.host.depth) || ht.turn.seq != self.seq {
            return;
        }
        let s = &self.state;
        ht.turn.content = s.content.clone();
        ht.turn.summary = s.summary.clone();
        ht.turn.summary_round = s.summary_round;
        ht.rounds.retain(|r| s.round.is_some_and(|n| r.n <= n));
        // What was cleared then, whatever the turn's requests cleared since: the records
        // as the capture read them, on its first round.
        for r in &mut ht.rounds {
            r.cleared = None;
        }
        if let Some(first) = ht.rounds.first_mut() {
            first.cleared = crate::clearing::Record::merged(&s.cleared);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::TurnKind;
    use crate::testing::{id, round};

    /// Found by the hostile review: a record the parent's run wrote after the capture
    /// (its request that first carried the captured round) is not the Side's; the
    /// records the capture read are.
    #[test]
    fn a_captured_turn_keeps_what_was_cleared_then() {
        use crate::clearing::{Key, Record};
        let host = Host {
            depth: 1,
            creator_id: None,
            answerer_id: None,
        };
        let record = |n: i32| Record {
            placeholder: "[gone]".into(),
            results: vec![Key {
                round: n,
                call_id: format!("c{n}"),
            }],
        };
        let captured = |cleared: Vec<Record>| Captured {
            conversation_id: id(7),
            seq: 4,
            host,
            state: CaptureState {
                round: Some(2),
                cleared,
                ..CaptureState::default()
            },
        };
        let r = |n: i32| {
            round(
                n,
                &format!(r#"[{{"type":"tool_call","id":"c{n}","name":"read","input":{{}}}}]"#),
                &format!(r#"[{{"call_id":"c{n}","content":"file {n}"}}]"#),
                "[]",
                false,
            )
        };
        let mut later = r(2);
        later.cleared = Some(record(1));
        let parent = HistoryTurn {
            turn: Turn::new(id(40), 4, TurnKind::Reply),
            rounds: vec![r(1), later, r(3)],
            host: Some(host),
        };
        let mut ht = parent.clone();
        captured(Vec::new()).freeze(&mut ht);
        assert!(
            crate::rounds::cleared_by(&ht.rounds, None).is_empty(),
            "written after the capture"
        );
        let mut ht = parent.clone();
        captured(vec![record(1)]).freeze(&mut ht);
        let c = crate::rounds::cleared_by(&ht.rounds, None);
        assert_eq!(c.placeholder(1, "c1"), Some("[gone]"));
        assert_eq!(ht.rounds.len(), 2);
    }

    #[test]
    fn a_captured_turn_reads_as_it_stood() {
        let host = Host {
            depth: 1,
            creator_id: None,
            answerer_id: None,
        };
        let captured = Captured {
            conversation_id: id(7),
            seq: 4,
            host,
            state: CaptureState {
                round: Some(1),
                content: None,
                summary: None,
                summary_round: None,
                cleared: Vec::new(),
            },
        };
        let mut turn = Turn::new(id(40), 4, TurnKind::Reply);
        turn.content = Some("the answer, written after the capture".into());
        let r = |n| round(n, r#"[{"type":"text","text":"a"}]"#, "[]", "[]", false);
        let mut ht = HistoryTurn {
            turn,
            rounds: vec![r(1), r(2)],
            host: Some(host),
        };
        let mut other = ht.clone();
        other.turn.seq = 3;
        captured.freeze(&mut ht);
        assert_eq!((ht.turn.content.as_deref(), ht.rounds.len()), (None, 1));
        // Another turn of the parent, and the same seq in the Side's own stretch, stay.
        captured.freeze(&mut other);
        assert_eq!(other.rounds.len(), 2);
        let mut own = other.clone();
        own.turn.seq = 4;
        own.host = None;
        captured.freeze(&mut own);
        assert_eq!(own.rounds.len(), 2);
    }
}
