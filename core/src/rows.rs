//! The rows a compile reads, typed (docs/design.md, "Rows"). The database layer reads
//! each column once and builds these values with the parsers of [`crate::fields`] and
//! [`crate::rounds`]; tests build them directly. Nothing here is parsed again later, and
//! every enum is exhaustive: a value the schema's checks should have refused is an error,
//! never a silent default.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::fields::{Callable, InlineEntry, RawEntry, RequestOptions, Tool};
use crate::template::HistoryKnobs;
use crate::tokens::Tokenizer;

pub use crate::kinds::{unknown_value, CacheTtl, Mechanism, Mode, PrefaceItem, Role, TurnKind, UserKind, Wire};

/// A model a request is compiled for (`prompt.models`). Frozen into a seal whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub name: String,
    pub wire: Wire,
    pub tokenizer: Tokenizer,
    pub advisory_window: Option<i32>,
    pub hard_window: Option<i32>,
    pub native_images: bool,
    pub token_margin: f32,
    pub max_output_tokens: i32,
    pub cache_ttl: CacheTtl,
    /// The request options the model sets (`models.request_options`).
    #[serde(default)]
    pub request_options: RequestOptions,
    /// The rules the model enforces (`models.profile`, or the profile its name matches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) profile: Option<crate::profile::Profile>,
}

impl Model {
    /// A model with every optional column at its default.
    pub fn new(name: &str, wire: Wire) -> Model {
        Model {
            name: name.into(),
            wire,
            tokenizer: Tokenizer::Cl100kBase,
            advisory_window: None,
            hard_window: None,
            native_images: false,
            token_margin: 0.0,
            max_output_tokens: 4096,
            cache_ttl: CacheTtl::FiveMinutes,
            request_options: RequestOptions::default(),
            profile: None,
        }
    }

    /// The model with its profile: the windows its row leaves unset are the profile's.
    pub fn with_profile(mut self, profile: Option<crate::profile::Profile>) -> Model {
        if let Some(p) = &profile {
            if self.advisory_window.is_none() && self.hard_window.is_none() {
                self.advisory_window = p.advisory_window;
                self.hard_window = p.hard_window;
            }
        }
        self.profile = profile;
        self
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
    /// `prompt_template` as JSON text, parsed once by the compile that needs it (the
    /// answerer's) and checked on every write.
    pub prompt_template: Option<String>,
    pub model: Option<String>,
    pub reasoning_replay: bool,
    pub application: Option<String>,
    /// The request options the agent sets (`users.request_options`).
    pub request_options: RequestOptions,
}

impl User {
    /// A user with every optional column at its default.
    pub fn new(id: Uuid, handle: &str, kind: UserKind) -> User {
        User {
            id,
            handle: handle.into(),
            display_name: None,
            kind,
            steward_id: None,
            prompt_mechanism: Mechanism::Default,
            prompt_template: None,
            model: None,
            reasoning_replay: false,
            application: None,
            request_options: RequestOptions::default(),
        }
    }

    /// The user's controlling Human: itself for a human, its steward for an agent.
    pub(crate) fn controlling_human(&self) -> Option<Uuid> {
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
    /// `prompt.workspaces.paths`: rendered in the runtime block when set.
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub kind: String,
    pub answerer_id: Option<Uuid>,
    pub creator_id: Option<Uuid>,
    pub origin_channel: Option<String>,
    /// A Side's captured parent, and its parent's, up to the first that is not a Side:
    /// the conversation whose prompt cache a Side shares (its `prompt_cache_key`).
    pub root_id: Option<Uuid>,
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
    pub mode: Mode,
    pub inline: Vec<InlineEntry>,
    pub variables: BTreeMap<String, String>,
    pub input: Option<Vec<RawEntry>>,
    pub tools: Option<Vec<Tool>>,
    pub callables: Vec<Callable>,
    pub model: Option<String>,
    pub history: Option<HistoryKnobs>,
    pub memory_user_id: Option<Uuid>,
    pub summary: Option<String>,
    pub summary_round: Option<i32>,
    /// The turn's request options (`turns.request_options`).
    pub request_options: RequestOptions,
    /// `created_at` as an ISO 8601 date in the workspace's timezone (for `{{date}}`).
    pub date: String,
    /// Stored counts, one slot per tokenizer ([`Tokenizer::index`]).
    pub content_tokens: Vec<Option<i32>>,
    pub prompt_tokens: Vec<Option<i32>>,
    /// The preface the turn's seal froze, when it is sealed; later turns replay it.
    pub sealed_preface: Option<Vec<PrefaceItem>>,
}

impl Turn {
    /// A turn with every optional column at its default, for the loader and for tests.
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
            mode: Mode::DirectReply,
            inline: Vec::new(),
            variables: BTreeMap::new(),
            input: None,
            tools: None,
            callables: Vec::new(),
            model: None,
            history: None,
            memory_user_id: None,
            summary: None,
            summary_round: None,
            request_options: RequestOptions::default(),
            date: String::new(),
            content_tokens: Vec::new(),
            prompt_tokens: Vec::new(),
            sealed_preface: None,
        }
    }

    /// Who posted the opening words: `poster_id`, else the row's author.
    pub(crate) fn words_author(&self) -> Option<Uuid> {
        self.poster_id.or(self.author_id)
    }

    pub fn is_run(&self) -> bool {
        self.mode == Mode::Run
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
    let mut julian = u32::try_from(jd).ok()? + 32044;
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
    let year = i64::from(y) - 4800;
    quad = julian * 2141 / 65536;
    let day = julian - 7834 * quad / 256;
    let month = (quad + 10) % 12 + 1;
    let year = if year <= 0 { 1 - year } else { year };
    Some(format!("{year:04}-{month:02}-{day:02}"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
