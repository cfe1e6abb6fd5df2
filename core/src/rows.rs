//! The rows a compile reads, typed (docs/design.md, "Rows"). The database layer hands
//! each row over as [`crate::Columns`], whose readers (`Turn::from_columns`, ...) read
//! each column once with the parsers of [`crate::fields`] and [`crate::rounds`]; tests
//! build them directly. Nothing here is parsed again later, and
//! every enum is exhaustive: a value the schema's checks should have refused is an error,
//! never a silent default.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::fields::{Callable, InlineEntry, RawEntry, RequestOptions, Tool};
use crate::template::HistoryKnobs;
use crate::tokens::Tokenizer;

pub(crate) use crate::kinds::{CacheTtl, Mechanism, Mode, PrefaceItem, Role, TurnKind, UserKind, Wire};

/// A model a request is compiled for (`prompt.models`). Frozen into a seal whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// The provider's model id (`models.name`), sent as the request's `model`.
    pub name: String,
    /// The wire the request body is rendered for (`models.wire`).
    pub(crate) wire: Wire,
    /// The tokenizer estimates are counted with (`models.tokenizer`, default `cl100k_base`).
    pub(crate) tokenizer: Tokenizer,
    /// The advisory window in tokens (`models.advisory_window`), else the profile's when the row
    /// sets neither window; `None` when unset.
    pub(crate) advisory_window: Option<i32>,
    /// The hard window in tokens (`models.hard_window`), else the profile's when the row sets
    /// neither window; `None` when unset.
    pub(crate) hard_window: Option<i32>,
    /// Whether captured images are sent as image parts (`models.native_images`); otherwise each is
    /// one text line.
    pub(crate) native_images: bool,
    /// The fraction every count is inflated by before it meets the window (`models.token_margin`,
    /// 0 to 10); with `token_margin_auto`, at least the calibration's.
    pub token_margin: f32,
    /// The request's output token limit (`models.max_output_tokens`, default 4096).
    pub(crate) max_output_tokens: i32,
    /// The TTL of the request's cache breakpoints (`models.cache_ttl`, default `5m`).
    pub(crate) cache_ttl: CacheTtl,
    /// The request options the model sets (`models.request_options`).
    #[serde(default)]
    pub(crate) request_options: RequestOptions,
    /// The rules the model enforces (`models.profile`, or the profile its name matches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) profile: Option<crate::profile::Profile>,
    /// The TTL of the breakpoints after the stable prefix (history, a run's rounds):
    /// `models.history_cache_ttl`, `None`: the model's `cache_ttl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) history_cache_ttl: Option<CacheTtl>,
    /// Where the model stands in its provider's lifecycle today (the extension compares its
    /// profile's dates with the day; a seal never freezes it).
    #[serde(skip)]
    pub(crate) lifecycle: Lifecycle,
    /// The provider whose dialect of the wire the request speaks (`models.provider`);
    /// `None`: its profile's provider where the wire speaks it, else the wire's maker
    /// (`wire::provider_of`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) provider: Option<crate::kinds::Provider>,
}

/// Which level of a compile chose its model: the turn's `model`, or its answerer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModelChosenBy {
    /// The turn names it (its id).
    Turn(uuid::Uuid),
    /// The turn names none; its answerer does (its id).
    Answerer(uuid::Uuid),
}

/// A model's place in its lifecycle on the day of the compile, as the extension read it
/// (the core reads no clock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Lifecycle {
    /// Its profile's `retires_at` has passed: a fresh compile is refused (`model_retired`).
    pub(crate) retired: bool,
    /// Its profile's `deprecated_at` has passed, or its retirement is announced: it
    /// compiles, with a NOTICE.
    pub(crate) deprecated: bool,
}

impl Model {
    /// A model with every optional column at its default.
    pub(crate) fn new(name: &str, wire: Wire) -> Model {
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
            history_cache_ttl: None,
            lifecycle: Lifecycle::default(),
            provider: None,
        }
    }

    /// The TTL of history's and a run's breakpoints.
    pub(crate) fn history_ttl(&self) -> CacheTtl {
        self.history_cache_ttl.unwrap_or(self.cache_ttl)
    }

    /// Refuses a model whose profile retired it: `model_retired`, naming the day and the
    /// replacement its profile gives, and the statement that points at it the level that
    /// chose the model (`by`: the turn's `model`, or its answerer's).
    pub(crate) fn check_lifecycle(&self, by: ModelChosenBy) -> crate::error::Result<()> {
        if !self.lifecycle.retired {
            return Ok(());
        }
        let p = self.profile.as_ref();
        let day = p.and_then(|p| p.retires_at.as_deref()).unwrap_or("an earlier day");
        let replacement = p.and_then(|p| p.replacement.as_deref());
        let e = crate::error::Error::new(
            crate::error::Code::ModelRetired,
            format!(
                "model {} retired on {day}{}",
                crate::error::quote(&self.name),
                replacement.map(|r| format!("; its replacement is {}", crate::error::quote(r))).unwrap_or_default()
            ),
        )
        .detail("Its provider no longer serves it: a request for it would be refused there (prompt.model_profiles.retires_at).");
        Err(match replacement {
            Some(r) => e.hint(match by {
                ModelChosenBy::Turn(turn) => format!(
                    "The turn names the model: UPDATE prompt.turns SET model = '{}' WHERE id = '{turn}'; (a model row of that name must exist)",
                    r.replace('\'', "''")
                ),
                ModelChosenBy::Answerer(user) => format!(
                    "The turn's answerer names the model: UPDATE prompt.users SET model = '{}' WHERE id = '{user}'; (a model row of that name must exist)",
                    r.replace('\'', "''")
                ),
            }),
            None => e.hint("Point the turn or its answerer at a model its provider serves (SELECT * FROM prompt.model_status)."),
        })
    }

    /// Whether the model's profile names it deprecated today (it still compiles).
    pub(crate) fn deprecation(&self) -> Option<String> {
        if !self.lifecycle.deprecated || self.lifecycle.retired {
            return None;
        }
        let p = self.profile.as_ref();
        let retires = p.and_then(|p| p.retires_at.as_deref());
        let replacement = p.and_then(|p| p.replacement.as_deref());
        let unsourced = p.is_some_and(|p| p.lifecycle_source.is_none()) && retires.is_some();
        Some(format!(
            "model {} is deprecated{}{}{}",
            crate::error::quote(&self.name),
            retires.map(|d| format!(" and retires on {d}")).unwrap_or_default(),
            if unsourced {
                " (its profile names no source for that day: it is not refused)"
            } else {
                ""
            },
            replacement
                .map(|r| format!("; its replacement is {}", crate::error::quote(r)))
                .unwrap_or_default()
        ))
    }

    /// The model with its profile: the windows its row leaves unset are the profile's.
    pub(crate) fn with_profile(mut self, profile: Option<crate::profile::Profile>) -> Model {
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

/// A person or an agent (`prompt.users`).
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    /// The user's id.
    pub id: Uuid,
    /// The user's handle (`users.handle`), named as `@HANDLE` in the speaker envelope.
    pub(crate) handle: String,
    /// The user's display name, the `{{agent}}` or `{{user}}` macro's value; `None` renders empty.
    pub(crate) display_name: Option<String>,
    /// Whether the user is a human or an agent (`users.kind`).
    pub(crate) kind: UserKind,
    /// An agent's controlling Human (`users.steward_id`); `None` for a human, or an agent without one.
    pub(crate) steward_id: Option<Uuid>,
    /// How the user compiles as an answerer (`users.prompt_mechanism`: default, assembly or raw).
    pub(crate) prompt_mechanism: Mechanism,
    /// `prompt_template`, as the loader read it from jsonb: read as a template by the
    /// compile that needs it (the answerer's), and checked on every write.
    pub(crate) prompt_template: Option<serde_json::Value>,
    /// The model the user answers with when the turn names none (`users.model`); `None`: no model.
    pub(crate) model: Option<String>,
    /// Whether the user replays its newest earlier run's reasoning in history (`users.reasoning_replay`);
    /// the window loses an eighth when set.
    pub(crate) reasoning_replay: bool,
    /// An agent's application, whose skills it inherits (`users.application`); `None`: none.
    pub(crate) application: Option<String>,
    /// The request options the agent sets (`users.request_options`).
    pub(crate) request_options: RequestOptions,
}

impl User {
    /// A user with every optional column at its default.
    pub(crate) fn new(id: Uuid, handle: &str, kind: UserKind) -> User {
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

/// The room a conversation lives in (`prompt.workspaces`).
#[derive(Debug, Clone, PartialEq)]
pub struct Workspace {
    /// The workspace's id.
    pub id: Uuid,
    /// The workspace's name, the `{{workspace}}` macro's value; `None` renders empty.
    pub name: Option<String>,
    /// The workspace's time zone (`workspaces.timezone`, default `UTC`): it dates turns and is
    /// listed in the runtime block.
    pub timezone: String,
    /// `prompt.workspaces.paths`: rendered in the runtime block when set.
    pub paths: Vec<String>,
}

/// One timeline (`prompt.conversations`).
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The conversation's id.
    pub id: Uuid,
    /// The workspace the conversation lives in.
    pub workspace_id: Uuid,
    /// The conversation's kind (`conversations.kind`: standalone, conversation, child, scheduled
    /// or side), the `{{conversation_kind}}` macro's value.
    pub kind: String,
    /// The stored answering profile (`conversations.answerer_id`), for turns that name no answerer.
    pub answerer_id: Option<Uuid>,
    /// The user who created the conversation (`conversations.creator_id`), whose rows read bare.
    pub creator_id: Option<Uuid>,
    /// The channel the conversation came from (`conversations.origin_channel`), listed in the
    /// runtime block; `None` lists none.
    pub origin_channel: Option<String>,
    /// A Side's captured parent, and its parent's, up to the first that is not a Side:
    /// the conversation whose prompt cache a Side shares (its `prompt_cache_key`).
    pub root_id: Option<Uuid>,
}

/// A prompt document (`prompt.documents`): a slot row or a named durable document.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The document's id.
    pub id: Uuid,
    /// The user that owns the document; `None` when a workspace does.
    pub user_id: Option<Uuid>,
    /// The workspace that owns the document (its `character`); `None` when a user does.
    pub workspace_id: Option<Uuid>,
    /// The document's name: `system_prompt`, `character`, `persona` or a durable name (`SOUL`, ...).
    pub name: String,
    /// The role the document renders in (`documents.role`, default `system`).
    pub role: Role,
    /// The document's text, macros not yet substituted.
    pub body: String,
    /// The document's version (`documents.version`), recorded with the seal's input versions.
    pub version: i32,
}

/// A memory entry (`prompt.memories`).
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// The entry's id.
    pub id: Uuid,
    /// The entry's scope (`memories.scope`: agent, workspace, speaker, user or conversation).
    pub scope: String,
    /// The agent for `agent` and `speaker` entries, the Human for `user` entries; else `None`.
    pub user_id: Option<Uuid>,
    /// The person the agent speaks with, for `speaker` entries; else `None`.
    pub speaker_id: Option<Uuid>,
    /// The workspace, for `workspace` entries; else `None`.
    pub workspace_id: Option<Uuid>,
    /// The conversation, for `conversation` entries; else `None`.
    pub conversation_id: Option<Uuid>,
    /// The entry's path, rendered as `### SCOPE/PATH`; an entry under `skills/` never renders as memory.
    pub path: String,
    /// The entry's text.
    pub body: String,
    /// `memories.updated_at` as PostgreSQL spells it as text, recorded as the entry's version
    /// with the seal's input versions.
    pub updated_at: String,
}

/// A skill document for the catalog (`prompt.skills`), or a kernel memory skill built from a
/// memory row under `skills/`.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The skill's id (a kernel memory skill's: its memory row's).
    pub id: Uuid,
    /// Where the skill comes from (`skills.source`: runner, application, agent, workspace, speaker
    /// or user; a kernel memory skill's: its memory scope).
    pub source: String,
    /// The agent for `agent` and `speaker` skills, the Human for `user` skills; else `None`.
    pub user_id: Option<Uuid>,
    /// The person the agent speaks with, for `speaker` skills; else `None`.
    pub speaker_id: Option<Uuid>,
    /// The workspace, for `workspace` skills; else `None`.
    pub workspace_id: Option<Uuid>,
    /// The runner whose callables list the skill, for `runner` skills; else `None`.
    pub runner: Option<String>,
    /// The application whose agents inherit the skill, for `application` skills; else `None`.
    pub application: Option<String>,
    /// The skill's name, listed in the catalog line.
    pub name: String,
    /// The skill's description, listed in the catalog line with its line breaks as spaces.
    pub description: String,
    /// The executor's id, listed in brackets after the name; `None` lists no bracket.
    pub executor_id: Option<Uuid>,
    /// Whether the catalog never lists the skill (`skills.recall_only`); `skills_for_turn` still
    /// returns it.
    pub recall_only: bool,
}

impl Skill {
    /// A skill with no owner, runner or application set yet.
    pub(crate) fn new(id: Uuid, source: &str, name: &str, description: &str) -> Skill {
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

/// A turn of the timeline (`prompt.turns`).
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The turn's id.
    pub id: Uuid,
    /// The turn's place in the timeline (`turns.seq`, unique per conversation).
    pub seq: i64,
    /// The turn's kind (`turns.kind`: message, reply or summary).
    pub(crate) kind: TurnKind,
    /// A message turn's role (`turns.role`); `None` for other kinds.
    pub(crate) role: Option<Role>,
    /// Who posted the row (`turns.author_id`).
    pub author_id: Option<Uuid>,
    /// A reply turn's answerer (`turns.answerer_id`); `None`: the conversation's.
    pub answerer_id: Option<Uuid>,
    /// Who posted the words that opened a reply turn (`turns.poster_id`).
    pub poster_id: Option<Uuid>,
    /// A message's text, a reply's final text, or a summary (`turns.content`).
    pub content: Option<String>,
    /// A reply turn's opening words (`turns.prompt`): the compiled turn's input, a seed in history.
    pub prompt: Option<String>,
    /// Set on kernel rows (`turns.origin`: `task_result` or `child`), which are never wrapped.
    pub origin: Option<String>,
    /// The sender stamp (`turns.sender_conversation_id`): the conversation the row was sent from;
    /// a stamped row is always wrapped.
    pub sender_conversation_id: Option<Uuid>,
    /// Whether the turn is a direct reply or run-backed (`turns.mode`, default `direct_reply`).
    pub(crate) mode: Mode,
    /// The turn's inline entries (`turns.inline`): lead and tail text, or slot replacements.
    pub(crate) inline: Vec<InlineEntry>,
    /// The turn's variables (`turns.variables`), over the template's defaults.
    pub(crate) variables: BTreeMap<String, String>,
    /// The raw entries the `raw` mechanism sends verbatim (`turns.input`); `None` when NULL.
    pub(crate) input: Option<Vec<RawEntry>>,
    /// The tools the turn declares (`turns.tools`); `None` when NULL (no tools).
    pub(crate) tools: Option<Vec<Tool>>,
    /// The skill callables the turn declares (`turns.callables`); a run turn lists their catalog.
    pub(crate) callables: Vec<Callable>,
    /// The turn's model (`turns.model`), over the answerer's; `None`: the answerer's.
    pub(crate) model: Option<String>,
    /// The turn's history intent (`turns.history`), whose knobs override the template's history
    /// block; `None`: the template's.
    pub(crate) history: Option<HistoryKnobs>,
    /// A Human the turn selects for `user` memory and skills (`turns.memory_user_id`); `None`: none.
    pub(crate) memory_user_id: Option<Uuid>,
    /// The in-turn summary (`turns.summary`): when non-empty, it renders in place of the seed and
    /// the rounds before `summary_round`.
    pub(crate) summary: Option<String>,
    /// The first round the in-turn summary leaves (`turns.summary_round`, from 1); `None` keeps
    /// every round.
    pub(crate) summary_round: Option<i32>,
    /// The turn's request options (`turns.request_options`).
    pub(crate) request_options: RequestOptions,
    /// `created_at` as an ISO 8601 date in the workspace's timezone (for `{{date}}`).
    pub(crate) date: String,
    /// Stored counts, one slot per tokenizer ([`Tokenizer::index`]).
    pub(crate) content_tokens: Vec<Option<i32>>,
    /// Stored counts of `prompt` as rendered bare, one slot per tokenizer ([`Tokenizer::index`]).
    pub(crate) prompt_tokens: Vec<Option<i32>>,
    /// The preface the turn's seal froze, when it is sealed; later turns replay it.
    pub(crate) sealed_preface: Option<Vec<PrefaceItem>>,
}

impl Turn {
    /// Whether history reads the turn's rounds: a reply's, the only turn whose rounds it
    /// renders (whatever its mode: rounds written before the rounds trigger are read too).
    pub fn reads_rounds(&self) -> bool {
        self.kind == TurnKind::Reply
    }

    /// A turn with every optional column at its default, for the loader and for tests.
    pub(crate) fn new(id: Uuid, seq: i64, kind: TurnKind) -> Turn {
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

    /// Whether the turn is run-backed (`mode = 'run'`).
    pub(crate) fn is_run(&self) -> bool {
        self.mode == Mode::Run
    }
}

/// A PostgreSQL `date` (days since 2000-01-01) as `to_char(d, 'YYYY-MM-DD')` spells it:
/// the proleptic Gregorian calendar of PostgreSQL's `j2date`, BC years by their number,
/// at least four digits. Infinite dates have no spelling (`to_char` gives NULL), and
/// neither has a day outside PostgreSQL's date range.
pub(crate) fn iso_date(pg_epoch_days: i32) -> Option<String> {
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
    fn a_fresh_compile_that_is_sent_names_a_deprecated_model() {
        use crate::testing::Scenario;
        use crate::Purpose;
        let mut s = Scenario::new("hello");
        let claude = s.ctx.models.get_mut("claude").unwrap();
        claude.lifecycle.deprecated = true;
        let notice = s.run(Purpose::Compile).unwrap().notice;
        assert_eq!(notice.as_deref(), Some("model \"claude\" is deprecated"));
        assert_eq!(s.run(Purpose::Estimate).unwrap().notice, None);
        s.ctx.models.get_mut("claude").unwrap().lifecycle.deprecated = false;
        assert_eq!(s.run(Purpose::Compile).unwrap().notice, None);
    }

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

/// A skill of a turn's effective set (`prompt.skills_for_turn`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnSkill {
    /// The name of the turn's callable the skill resolved for (`T.callables[].name`).
    pub callable: String,
    /// The skill's source: `runner`, `application`, `agent`, `workspace`, `speaker` or `user`.
    pub source: String,
    /// The skill's name (a memory skill's: its path after `skills/`, without `.md`).
    pub name: String,
    /// The skill's description (a memory skill's: its body's first non-empty line).
    pub description: String,
    /// Whether the skill is recall-only: never in the catalog, listed after the others.
    pub recall_only: bool,
}
