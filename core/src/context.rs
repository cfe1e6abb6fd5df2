//! The rows a compile reads, as plain Rust values (SPEC §1). The pg layer fills these
//! from a few set-based queries; tests build them by hand. JSON columns arrive as their
//! text and are parsed (and re-validated) by the core.

use std::collections::HashMap;

use uuid::Uuid;

use super::error::{quote, Code, Error, Result};
use super::tokens::Tokenizer;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    System,
    Developer,
    User,
    Assistant,
}

impl Role {
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "system" => Some(Role::System),
            "developer" => Some(Role::Developer),
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    Anthropic,
    Chat,
}

impl Wire {
    pub fn parse(s: &str) -> Result<Wire> {
        match s {
            "anthropic" => Ok(Wire::Anthropic),
            "chat" => Ok(Wire::Chat),
            other => Err(Error::new(
                Code::TurnNotCompilable,
                format!("wire {} is not supported yet", quote(other)),
            )
            .hint("Supported wires: anthropic, chat.")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Wire::Anthropic => "anthropic",
            Wire::Chat => "chat",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    Default,
    Assembly,
    Raw,
}

impl Mechanism {
    pub fn parse(s: &str) -> Mechanism {
        match s {
            "assembly" => Mechanism::Assembly,
            "raw" => Mechanism::Raw,
            _ => Mechanism::Default,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::Default => "default",
            Mechanism::Assembly => "assembly",
            Mechanism::Raw => "raw",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub name: String,
    pub wire: String,
    pub tokenizer: String,
    pub advisory_window: Option<i32>,
    pub hard_window: Option<i32>,
    pub native_images: bool,
    pub token_margin: f32,
    pub max_output_tokens: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserKind {
    Human,
    Agent,
}

impl UserKind {
    pub fn parse(s: &str) -> UserKind {
        if s == "agent" {
            UserKind::Agent
        } else {
            UserKind::Human
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            UserKind::Human => "human",
            UserKind::Agent => "agent",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub id: Uuid,
    pub handle: String,
    pub display_name: Option<String>,
    pub kind: UserKind,
    pub steward_id: Option<Uuid>,
    pub prompt_mechanism: Mechanism,
    /// `prompt_template` as JSON text.
    pub prompt_template: Option<String>,
    pub model: Option<String>,
    pub reasoning_replay: bool,
    pub application: Option<String>,
}

impl User {
    /// The user's controlling Human: itself for a human, its steward for an agent.
    pub fn controlling_human(&self) -> Option<Uuid> {
        match self.kind {
            UserKind::Human => Some(self.id),
            UserKind::Agent => self.steward_id,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Workspace {
    pub id: Uuid,
    pub name: Option<String>,
    pub timezone: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub kind: String,
    pub answerer_id: Option<Uuid>,
    pub creator_id: Option<Uuid>,
    pub origin_channel: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub id: Uuid,
    pub user_id: Option<Uuid>,
    pub workspace_id: Option<Uuid>,
    pub name: String,
    pub role: Role,
    pub body: String,
    pub version: i32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    pub id: Uuid,
    pub scope: String,
    pub user_id: Option<Uuid>,
    pub speaker_id: Option<Uuid>,
    pub workspace_id: Option<Uuid>,
    pub conversation_id: Option<Uuid>,
    pub path: String,
    pub body: String,
    pub updated_at: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    pub id: Uuid,
    pub source: String,
    pub user_id: Option<Uuid>,
    pub speaker_id: Option<Uuid>,
    pub workspace_id: Option<Uuid>,
    pub runner: Option<String>,
    pub application: Option<String>,
    pub name: String,
    pub description: String,
    pub executor_id: Option<Uuid>,
    pub recall_only: bool,
}

impl Skill {
    /// A skill with no owner, runner or application set yet.
    pub fn new(id: Uuid, source: &str, name: &str, description: &str) -> Skill {
        Skill {
            id,
            source: source.into(),
            user_id: None,
            speaker_id: None,
            workspace_id: None,
            runner: None,
            application: None,
            name: name.into(),
            description: description.into(),
            executor_id: None,
            recall_only: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnKind {
    Message,
    Reply,
    Summary,
}

impl TurnKind {
    pub fn parse(s: &str) -> TurnKind {
        match s {
            "reply" => TurnKind::Reply,
            "summary" => TurnKind::Summary,
            _ => TurnKind::Message,
        }
    }
}

/// What a sealed turn carries (SPEC §8).
#[derive(Debug, Clone, PartialEq)]
pub struct Sealed {
    /// The whole compile result of the first compile, as JSON text.
    pub request: String,
    /// The preface items, as JSON text (`[{"role", "parts"}]`).
    pub preface: String,
    pub mechanism: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub id: Uuid,
    pub seq: i64,
    pub kind: TurnKind,
    pub role: Option<Role>,
    pub author_id: Option<Uuid>,
    pub answerer_id: Option<Uuid>,
    pub poster_id: Option<Uuid>,
    pub content: Option<String>,
    pub prompt: Option<String>,
    pub origin: Option<String>,
    pub sender_conversation_id: Option<Uuid>,
    /// `run` or `direct_reply`.
    pub run: bool,
    /// JSON text of `inline`, `variables`, `input`, `tools`, `callables`, `history`.
    pub inline: String,
    pub variables: String,
    pub input: Option<String>,
    pub tools: Option<String>,
    pub callables: String,
    pub model: Option<String>,
    pub history: Option<String>,
    pub memory_user_id: Option<Uuid>,
    pub summary: Option<String>,
    pub summary_round: Option<i32>,
    /// `created_at` as an ISO 8601 date in the workspace's timezone (for `{{date}}`).
    pub date: String,
    /// Stored counts, one slot per tokenizer ([`Tokenizer::index`]).
    pub content_tokens: Vec<Option<i32>>,
    pub prompt_tokens: Vec<Option<i32>>,
    pub sealed: Option<Sealed>,
}

impl Turn {
    /// A turn with every optional column at its default, for tests and builders.
    pub fn new(id: Uuid, seq: i64, kind: TurnKind) -> Turn {
        Turn {
            id,
            seq,
            kind,
            role: None,
            author_id: None,
            answerer_id: None,
            poster_id: None,
            content: None,
            prompt: None,
            origin: None,
            sender_conversation_id: None,
            run: false,
            inline: "[]".into(),
            variables: "{}".into(),
            input: None,
            tools: None,
            callables: "[]".into(),
            model: None,
            history: None,
            memory_user_id: None,
            summary: None,
            summary_round: None,
            date: String::new(),
            content_tokens: Vec::new(),
            prompt_tokens: Vec::new(),
            sealed: None,
        }
    }

    /// Who posted the opening words: `poster_id`, else the row's author.
    pub fn words_author(&self) -> Option<Uuid> {
        self.poster_id.or(self.author_id)
    }
}

/// One stored round of a run-backed turn (`prompt.rounds`), JSON columns as text.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundRow {
    pub n: i32,
    pub assistant: String,
    pub results: String,
    pub steers: String,
    pub aborted: bool,
}

/// A turn of history with its rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryTurn {
    pub turn: Turn,
    pub rounds: Vec<RoundRow>,
}

/// Everything a compile reads besides history.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub conversation: Conversation,
    pub workspace: Workspace,
    pub turn: Turn,
    /// The current turn's rounds (a continuation).
    pub rounds: Vec<RoundRow>,
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
}

/// Newest-first access to the turns before the compiled one, from the newest summary
/// turn on. The pg layer reads them in batches so a compile reads the rows it renders,
/// not the conversation; tests serve them from a vector.
pub trait HistorySource {
    /// The next older turns (newest first), about `want` of them, with any users they
    /// name; empty when done.
    fn next_batch(&mut self, want: usize) -> Result<(Vec<HistoryTurn>, Vec<User>)>;

    /// The number of entries of every turn not yet returned, read by answerer `a` in a
    /// conversation whose stored answerer is `conv_answerer` (once selection stops,
    /// the rest is only counted).
    fn count_rest(&mut self, a: Uuid, conv_answerer: Option<Uuid>) -> Result<u32>;
}

/// A history source over turns held in memory (oldest first, as stored).
pub struct VecHistory {
    turns: Vec<HistoryTurn>,
    batch: usize,
}

impl VecHistory {
    pub fn new(mut oldest_first: Vec<HistoryTurn>) -> Self {
        oldest_first.reverse();
        // History starts at the newest summary turn.
        if let Some(i) = oldest_first.iter().position(|h| h.turn.kind == TurnKind::Summary) {
            oldest_first.truncate(i + 1);
        }
        VecHistory {
            turns: oldest_first,
            batch: 64,
        }
    }
}

impl HistorySource for VecHistory {
    fn next_batch(&mut self, want: usize) -> Result<(Vec<HistoryTurn>, Vec<User>)> {
        let n = want.clamp(1, self.batch).min(self.turns.len());
        Ok((self.turns.drain(..n).collect(), Vec::new()))
    }

    fn count_rest(&mut self, a: Uuid, conv_answerer: Option<Uuid>) -> Result<u32> {
        let n = self
            .turns
            .iter()
            .map(|h| super::history::plan(h, a, conv_answerer).len())
            .sum::<usize>();
        self.turns.clear();
        Ok(n as u32)
    }
}

/// The tokenizer of a model row (unknown names were refused on write).
pub fn model_tokenizer(model: Option<&Model>) -> Result<Tokenizer> {
    match model {
        Some(m) => Tokenizer::parse(&m.tokenizer),
        None => Ok(Tokenizer::Cl100kBase),
    }
}

/// A PostgreSQL `date` (days since 2000-01-01) as `to_char(d, 'YYYY-MM-DD')` spells it:
/// the proleptic Gregorian calendar of PostgreSQL's `j2date`, BC years by their number,
/// at least four digits. Infinite dates have no spelling (`to_char` gives NULL), and
/// neither has a day outside PostgreSQL's date range.
pub fn iso_date(pg_epoch_days: i32) -> Option<String> {
    // Julian days of 2000-01-01 and of the last day PostgreSQL's dates reach.
    const POSTGRES_EPOCH_JDATE: i64 = 2_451_545;
    const LAST_JDATE: i64 = 2_147_483_493;
    let jd = i64::from(pg_epoch_days) + POSTGRES_EPOCH_JDATE;
    if !(0..=LAST_JDATE).contains(&jd) {
        return None;
    }
    // j2date, in the same unsigned arithmetic (no step overflows within the range).
    let mut julian = jd as u32 + 32044;
    let mut quad = julian / 146_097;
    let extra = (julian - quad * 146_097) * 4 + 3;
    julian += 60 + quad * 3 + extra / 146_097;
    quad = julian / 1461;
    julian -= quad * 1461;
    let mut y = julian * 4 / 1461;
    julian = if y != 0 {
        (julian + 305) % 365
    } else {
        (julian + 306) % 366
    } + 123;
    y += quad * 4;
    let year = y as i64 - 4800;
    quad = julian * 2141 / 65536;
    let day = julian - 7834 * quad / 256;
    let month = (quad + 10) % 12 + 1;
    let year = if year <= 0 { 1 - year } else { year };
    Some(format!("{year:04}-{month:02}-{day:02}"))
}

#[cfg(test)]
mod tests {
    use super::iso_date;

    #[test]
    fn iso_date_spells_dates_as_to_char_does() {
        assert_eq!(iso_date(0).as_deref(), Some("2000-01-01"));
        assert_eq!(iso_date(9830).as_deref(), Some("2026-11-30"));
        assert_eq!(iso_date(-1).as_deref(), Some("1999-12-31"));
        assert_eq!(iso_date(59).as_deref(), Some("2000-02-29"));
        // 0001-01-01 AD and the day before it, 1 BC (spelled as year 1 by to_char).
        assert_eq!(iso_date(-730_119).as_deref(), Some("0001-01-01"));
        assert_eq!(iso_date(-730_120).as_deref(), Some("0001-12-31"));
        // The ends of PostgreSQL's range: 4714-11-24 BC and 5874897-12-31.
        assert_eq!(iso_date(-2_451_545).as_deref(), Some("4714-11-24"));
        assert_eq!(iso_date(2_145_031_948).as_deref(), Some("5874897-12-31"));
        assert_eq!(iso_date(i32::MAX), None);
        assert_eq!(iso_date(i32::MIN), None);
        assert_eq!(iso_date(-2_451_546), None);
        assert_eq!(iso_date(2_145_031_949), None);
        // Any day at all: a spelling or none, never an overflow.
        for days in (i32::MIN..=i32::MAX).step_by(65_521) {
            let _ = iso_date(days);
        }
    }

    #[test]
    fn iso_date_agrees_with_chrono_day_by_day() {
        let epoch = chrono::NaiveDate::from_ymd_opt(2000, 1, 1).expect("a date");
        // Years 1 to 9999, where chrono's spelling is the same (it numbers BC years 0, -1, ...).
        for days in (-730_119..=2_921_939).step_by(11) {
            let d = epoch + chrono::Duration::days(days.into());
            assert_eq!(iso_date(days), Some(d.format("%Y-%m-%d").to_string()), "{days}");
        }
    }
}
