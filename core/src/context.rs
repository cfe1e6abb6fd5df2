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
    pub turn: Turn,
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
    pub depth: u8,
    pub creator_id: Option<Uuid>,
    pub answerer_id: Option<Uuid>,
}

/// Everything a compile reads besides history.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub conversation: Conversation,
    pub workspace: Workspace,
    pub turn: Turn,
    /// The current turn's rounds (a continuation).
    pub rounds: Vec<Round>,
    /// Every user the compile names: answerers, posters, stewards, authors.
    pub users: HashMap<Uuid, User>,
    /// Models by name (the turn's and the answerer's).
    pub models: HashMap<String, Model>,
    /// The answerer's documents, the workspace's, and the persona of P's Human.
    pub documents: Vec<Document>,
    /// The memory entries in the turn's effective bindings, any order.
    pub memories: Vec<Memory>,
    /// The skills the turn's callables could list, any order.
    pub skills: Vec<Skill>,
    /// The turn's seal, when it has one: a continuation renders from it alone.
    pub seal: Option<crate::seal::Sealed>,
    /// A Side's captures, nearest first: its parent conversation and the turn captured
    /// there, then the parent's own capture when the parent is a Side too. History reads
    /// the Side's turns, then each parent's up to and including its captured turn.
    pub captured: Vec<Captured>,
}

/// Where a Side was captured: a turn of its parent conversation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Captured {
    pub conversation_id: Uuid,
    /// The captured turn's `seq` (history reads the parent's turns through it).
    pub seq: i64,
    pub host: Host,
}
