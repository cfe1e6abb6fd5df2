//! Loading a compile's rows in a few set-based queries, into the core's typed rows.
//! Every query runs through SPI as the caller, so row-level security decides what a
//! compile reads. History is read newest first in batches sized to what the budget has
//! left, so a compile reads the rows it renders, not the whole conversation.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use pgrx::pg_sys::{
    BOOLOID, DATEOID, FLOAT4OID, INT4ARRAYOID, INT4OID, INT8OID, JSONBOID, TEXTARRAYOID, TEXTOID, UUIDOID,
};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use super::seals;
use super::spi::{core_uuid, first, nullable, pg_uuid, run, Cols, Column, Query};
use pgprompt_core::context::{CaptureState, Captured, Context, HistoryTurn, Host};
use pgprompt_core::error::{Code, Error, Result};
use pgprompt_core::fields;
use pgprompt_core::history::{self, EntryAt, HistorySource};
use pgprompt_core::reads;
use pgprompt_core::rounds::{self, Round};
use pgprompt_core::seal;
use pgprompt_core::rows::{
    CacheTtl, Conversation, Document, Mechanism, Memory, Mode, Model, Role, Skill, Turn, TurnKind, User, UserKind,
    Wire, Workspace,
};
use pgprompt_core::tokens::Tokenizer;

/// The turn columns [`read_turn`] takes, as the SQL names them.
pub(crate) fn turn_columns(tz: &str) -> String {
    format!(
        "t.id, t.seq, t.kind, t.role, t.author_id, t.answerer_id, t.poster_id, t.content, t.prompt, t.origin, \
         t.sender_conversation_id, t.mode, t.inline, t.variables, t.input, t.tools, \
         t.callables, t.model, t.history, t.memory_user_id, t.summary, t.summary_round, \
         t.request_options, (t.created_at AT TIME ZONE {tz})::date AS created_on, t.content_tokens, \
         t.prompt_tokens, t.sealed_preface, t.sealed_at IS NOT NULL AS sealed"
    )
}

/// The columns of [`turn_columns`], declared by name beside the reader that takes them.
pub(crate) const TURN: [Column; 28] = [
    ("id", UUIDOID),
    ("seq", INT8OID),
    ("kind", TEXTOID),
    ("role", TEXTOID),
    ("author_id", UUIDOID),
    ("answerer_id", UUIDOID),
    ("poster_id", UUIDOID),
    ("content", TEXTOID),
    ("prompt", TEXTOID),
    ("origin", TEXTOID),
    ("sender_conversation_id", UUIDOID),
    ("mode", TEXTOID),
    ("inline", JSONBOID),
    ("variables", JSONBOID),
    ("input", JSONBOID),
    ("tools", JSONBOID),
    ("callables", JSONBOID),
    ("model", TEXTOID),
    ("history", JSONBOID),
    ("memory_user_id", UUIDOID),
    ("summary", TEXTOID),
    ("summary_round", INT4OID),
    ("request_options", JSONBOID),
    ("created_on", DATEOID),
    ("content_tokens", INT4ARRAYOID),
    ("prompt_tokens", INT4ARRAYOID),
    ("sealed_preface", JSONBOID),
    ("sealed", BOOLOID),
];

/// A turn as stored, its JSON columns parsed once (`None`: no turn, a left join's
/// empty side). Returns whether it is sealed too.
pub(crate) fn read_turn(c: &Cols<'_>) -> Result<Option<(Turn, bool)>> {
    let Some(id) = c.uuid("id") else { return Ok(None) };
    let kind = TurnKind::from_column("turns.kind", &c.need_text("kind")?)?;
    let mut t = Turn::new(id, c.need::<i64>("seq")?, kind);
    t.role = c
        .text("role")
        .map(|r| Role::from_column("turns.role", &r))
        .transpose()?;
    t.author_id = c.uuid("author_id");
    t.answerer_id = c.uuid("answerer_id");
    t.poster_id = c.uuid("poster_id");
    t.content = c.text("content");
    t.prompt = c.text("prompt");
    t.origin = c.text("origin");
    t.sender_conversation_id = c.uuid("sender_conversation_id");
    t.mode = Mode::from_column("turns.mode", &c.need_text("mode")?)?;
    t.inline = fields::parse_inline(&c.need_json("inline")?)?;
    t.variables = fields::parse_variables(&c.need_json("variables")?)?;
    t.input = c.json("input")?.map(|i| fields::parse_raw_input(&i)).transpose()?;
    t.tools = c.json("tools")?.map(|i| fields::parse_tools(&i)).transpose()?;
    t.callables = fields::parse_callables(&c.need_json("callables")?)?;
    t.model = c.text("model");
    t.history = c.json("history")?.map(|h| fields::parse_history(&h)).transpose()?;
    t.memory_user_id = c.uuid("memory_user_id");
    t.summary = c.text("summary");
    t.summary_round = c.get::<i32>("summary_round");
    t.request_options = fields::parse_request_options(&c.need_json("request_options")?)?;
    t.date = c.date("created_on")?;
    t.content_tokens = c.ints("content_tokens");
    t.prompt_tokens = c.ints("prompt_tokens");
    t.sealed_preface = c
        .json("sealed_preface")?
        .map(|p| fields::parse_preface(&p))
        .transpose()?;
    Ok(Some((t, c.need::<bool>("sealed")?)))
}

static USERS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a user row",
        "SELECT id, handle, display_name, kind, steward_id, prompt_mechanism, prompt_template, \
         model, reasoning_replay, application, request_options FROM prompt.users \
         WHERE id = ANY($1) OR id IN (SELECT steward_id FROM prompt.users WHERE id = ANY($1))",
        &[
            ("id", UUIDOID),
            ("handle", TEXTOID),
            ("display_name", TEXTOID),
            ("kind", TEXTOID),
            ("steward_id", UUIDOID),
            ("prompt_mechanism", TEXTOID),
            ("prompt_template", JSONBOID),
            ("model", TEXTOID),
            ("reasoning_replay", BOOLOID),
            ("application", TEXTOID),
            ("request_options", JSONBOID),
        ],
    )
});

pub(super) fn load_users(client: &SpiClient<'_>, ids: &[Uuid]) -> Result<Vec<User>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<pgrx::Uuid> = ids.iter().copied().map(pg_uuid).collect();
    run(client, &USERS, &[ids.into()], |c| {
        let kind = UserKind::from_column("users.kind", &c.need_text("kind")?)?;
        let mut u = User::new(c.need_uuid("id")?, &c.need_text("handle")?, kind);
        u.display_name = c.text("display_name");
        u.steward_id = c.uuid("steward_id");
        u.prompt_mechanism = Mechanism::from_column("users.prompt_mechanism", &c.need_text("prompt_mechanism")?)?;
        u.prompt_template = c.json("prompt_template")?;
        u.model = c.text("model");
        u.reasoning_replay = c.need::<bool>("reasoning_replay")?;
        u.application = c.text("application");
        u.request_options = fields::parse_request_options(&c.need_json("request_options")?)?;
        Ok(Some(u))
    })
}

/// The conversation and its capture. The conversation, its workspace and the turn are
/// three queries, not one join: each is one table by its key (a fast-path query to
/// Citus), the form a call Citus delegates with `force_delegation` may run
/// (docs/scale-out.md, "In a transaction"); a join of a distributed table with a
/// reference table is refused there.
static CONVERSATION: LazyLock<Query> = LazyLock::new(|| {
    let mut columns = vec![
        ("workspace_id", UUIDOID),
        ("conversation_kind", TEXTOID),
        ("conversation_answerer_id", UUIDOID),
        ("creator_id", UUIDOID),
        ("origin_channel", TEXTOID),
    ];
    columns.extend(CAPTURE_COLUMNS);
    Query::new(
        "the conversation row",
        format!(
            "SELECT workspace_id, kind AS conversation_kind, answerer_id AS conversation_answerer_id, creator_id, \
             origin_channel, {} FROM prompt.conversations WHERE id = $1",
            capture_columns("")
        ),
        &columns,
    )
});

/// The conversation's workspace.
static WORKSPACE: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the conversation's workspace row",
        "SELECT id, name, timezone, paths FROM prompt.workspaces WHERE id = $1",
        &[
            ("id", UUIDOID),
            ("name", TEXTOID),
            ("timezone", TEXTOID),
            ("paths", TEXTARRAYOID),
        ],
    )
});

/// The turn compiled (its creation day in the workspace's time zone, `$3`).
static THE_TURN: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the turn row",
        format!(
            "SELECT {} FROM prompt.turns t WHERE t.conversation_id = $1 AND t.id = $2",
            turn_columns("$3")
        ),
        &TURN,
    )
});

/// What a compile starts from: a sealed turn's stored body when nothing is to be added
/// to it, or everything but history.
pub enum Loaded {
    Stored(pgprompt_core::wire::Body),
    Context(Box<Context>),
}

pub use pgprompt_core::reads::Read;

/// Loads everything but history for turn `turn` of conversation `conv`.
pub fn context(client: &SpiClient<'_>, conv: Uuid, turn: Uuid, read: Read) -> Result<Loaded> {
    let conversation = run(client, &CONVERSATION, &[pg_uuid(conv).into()], |c| {
        conversation_row(c, conv)
    })?;
    let Some((mut conversation, capture)) = conversation.into_iter().next() else {
        return Err(conversation_not_found(conv));
    };
    let workspace = run(
        client,
        &WORKSPACE,
        &[pg_uuid(conversation.workspace_id).into()],
        workspace_row,
    )?;
    let Some(workspace) = workspace.into_iter().next() else {
        return Err(conversation_not_found(conv));
    };
    let args = [
        pg_uuid(conv).into(),
        pg_uuid(turn).into(),
        workspace.timezone.clone().into(),
    ];
    let Some((t, sealed)) = run(client, &THE_TURN, &args, read_turn)?.into_iter().next() else {
        return Err(missing_turn(client, conv, turn));
    };
    let next = reads::after_turn(&t, sealed, read);
    let rounds = match next.rounds {
        true => current_rounds(client, conv, turn)?,
        false => Vec::new(),
    };
    if next.stored_body && rounds.is_empty() {
        if let Some(body) = seals::stored_body(client, conv, turn)? {
            return Ok(Loaded::Stored(body));
        }
    }
    let seal = match next.seal {
        true => Some(seals::load(client, conv, &t)?),
        false => None,
    };
    // A Side's history (a sealed turn renders from its seal, not from history).
    let captured = match reads::captures(&conversation, capture, seal.is_some()) {
        Some((parent, captured_turn, state)) => side_captures(client, conv, parent, captured_turn, state)?,
        None => Vec::new(),
    };
    conversation.root_id = captured.last().map(|c| c.conversation_id);
    let sealed_answerer = seal.as_ref().map(|s| s.frozen.answerer_id);
    let ids = reads::users(&conversation, &t, sealed_answerer, &rounds, &captured);
    let users: HashMap<Uuid, User> = load_users(client, &ids)?.into_iter().map(|u| (u.id, u)).collect();
    let a = reads::answerer(&conversation, &t, &users);
    let models = models(client, &reads::models(&t, a, seal.is_some()))?;
    let wanted = a.and_then(|a| reads::answerer_rows(&t, a, &users, seal.is_some(), read));
    let (documents, memories, skills) = match wanted {
        Some(w) => answerer_rows(client, &t, &w, workspace.id, conv)?,
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    Ok(Loaded::Context(Box::new(Context {
        conversation,
        workspace,
        turn: t,
        rounds,
        users,
        models,
        documents,
        memories,
        skills,
        seal,
        captured,
        previous: None,
    })))
}

/// No such conversation, or one whose row or workspace row-level security hides.
fn conversation_not_found(conv: Uuid) -> Error {
    Error::new(
        Code::ConversationNotFound,
        format!("conversation {conv} does not exist"),
    )
    .hint("The id may be wrong, or row-level security may hide the conversation from this role.")
}

/// A Side's capture as its row names it: the parent, the captured turn, what it read of it.
type Capture = (Option<Uuid>, Option<Uuid>, CaptureState);

/// The conversation and its capture, from the row of `CONVERSATION`.
fn conversation_row(c: &Cols<'_>, conv: Uuid) -> Result<Option<(Conversation, Capture)>> {
    let conversation = Conversation {
        id: conv,
        workspace_id: c.need_uuid("workspace_id")?,
        kind: c.need_text("conversation_kind")?,
        answerer_id: c.uuid("conversation_answerer_id"),
        creator_id: c.uuid("creator_id"),
        origin_channel: c.text("origin_channel"),
        root_id: None,
    };
    Ok(Some((
        conversation,
        (c.uuid("parent_id"), c.uuid("captured_turn_id"), capture_state(c)),
    )))
}

/// The workspace, from the row of `WORKSPACE`.
fn workspace_row(c: &Cols<'_>) -> Result<Option<Workspace>> {
    Ok(Some(Workspace {
        id: c.need_uuid("id")?,
        name: c.text("name"),
        timezone: c.need_text("timezone")?,
        paths: c
            .get::<Vec<Option<String>>>("paths")
            .unwrap_or_default()
            .into_iter()
            .flatten()
            .collect(),
    }))
}

/// A Side's captures, nearest first (its parent must still exist).
fn side_captures(
    client: &SpiClient<'_>,
    conv: Uuid,
    parent: Option<Uuid>,
    captured_turn: Uuid,
    state: CaptureState,
) -> Result<Vec<Captured>> {
    let parent = parent.ok_or_else(|| {
        Error::new(
            Code::TurnNotFound,
            format!("the Side {conv} was captured from turn {captured_turn}, whose conversation was deleted"),
        )
        .hint("A Side reads its parent's turns through the captured one; with the parent gone it cannot compile.")
    })?;
    captures(client, conv, (parent, captured_turn, state))
}

/// The answerer's documents, memory and skills, as [`reads::answerer_rows`] named them.
fn answerer_rows(
    client: &SpiClient<'_>,
    t: &Turn,
    w: &reads::AnswererRows,
    workspace: Uuid,
    conv: Uuid,
) -> Result<(Vec<Document>, Vec<Memory>, Vec<Skill>)> {
    let skills = match w.skills {
        Some(recall_only) => load_skills(client, t, w, workspace, recall_only)?,
        None => Vec::new(),
    };
    Ok((
        load_documents(client, w.answerer, workspace, w.human)?,
        load_memories(client, w.answerer, workspace, conv, t.memory_user_id)?,
        skills,
    ))
}

static CAPTURE: LazyLock<Query> = LazyLock::new(|| {
    let mut columns = vec![
        ("seq", INT8OID),
        ("creator_id", UUIDOID),
        ("answerer_id", UUIDOID),
        ("kind", TEXTOID),
    ];
    columns.extend(CAPTURE_COLUMNS);
    Query::new(
        "a captured turn's row",
        format!(
            "SELECT t.seq, p.creator_id, p.answerer_id, p.kind, {} \
             FROM prompt.turns t JOIN prompt.conversations p ON p.id = t.conversation_id \
             WHERE t.conversation_id = $1 AND t.id = $2",
            capture_columns("p.")
        ),
        &columns,
    )
});

/// A conversation row's capture columns (`prefix`: the row's alias and a dot, or
/// nothing), read by [`capture_state`] and the `parent_id`, `captured_turn_id` beside it.
fn capture_columns(prefix: &str) -> String {
    CAPTURE_COLUMNS
        .iter()
        .map(|(name, _)| format!("{prefix}{name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The columns of [`capture_columns`], declared by name beside their reader.
const CAPTURE_COLUMNS: [Column; 6] = [
    ("parent_id", UUIDOID),
    ("captured_turn_id", UUIDOID),
    ("captured_round", INT4OID),
    ("captured_content", TEXTOID),
    ("captured_summary", TEXTOID),
    ("captured_summary_round", INT4OID),
];

/// A Side row's `captured_round, captured_content, captured_summary,
/// captured_summary_round` (NULL where the conversation is not a Side): its captured
/// turn as it stood at the capture.
fn capture_state(c: &Cols<'_>) -> CaptureState {
    CaptureState {
        round: c.get::<i32>("captured_round"),
        content: c.text("captured_content"),
        summary: c.text("captured_summary"),
        summary_round: c.get::<i32>("captured_summary_round"),
    }
}

/// How many Sides deep a chain of captures may go.
const MAX_CAPTURE_DEPTH: u8 = 16;

/// A Side's captures, nearest first: each parent conversation with the `seq` of the
/// turn captured there, up to the first parent that is not a Side.
fn captures(client: &SpiClient<'_>, side: Uuid, first: (Uuid, Uuid, CaptureState)) -> Result<Vec<Captured>> {
    let mut out: Vec<Captured> = Vec::new();
    let mut next = Some(first);
    while let Some((parent, turn, state)) = next.take() {
        if out.len() >= usize::from(MAX_CAPTURE_DEPTH)
            || parent == side
            || out.iter().any(|c| c.conversation_id == parent)
        {
            return Err(Error::new(
                Code::TurnNotCompilable,
                format!("the Side {side} is captured from a chain of more than {MAX_CAPTURE_DEPTH} conversations, or from itself"),
            ));
        }
        let row = run(client, &CAPTURE, &[pg_uuid(parent).into(), pg_uuid(turn).into()], |c| {
            let seq = c.need::<i64>("seq")?;
            let host = Host {
                depth: u8::try_from(out.len() + 1).unwrap_or(u8::MAX),
                creator_id: c.uuid("creator_id"),
                answerer_id: c.uuid("answerer_id"),
            };
            let side = c.need_text("kind")? == "side";
            let (up_parent, up_turn, up_state) = (c.uuid("parent_id"), c.uuid("captured_turn_id"), capture_state(c));
            let up = match (side, up_parent, up_turn) {
                (true, Some(p), Some(t)) => Some((p, t, up_state)),
                _ => None,
            };
            Ok(Some((seq, host, up)))
        })?;
        let Some((seq, host, up)) = row.into_iter().next() else {
            return Err(Error::new(
                Code::TurnNotFound,
                format!("the turn {turn} this Side was captured from is not in conversation {parent}"),
            )
            .hint("It was deleted, or row-level security hides it; a Side reads its parent's turns through the captured one."));
        };
        out.push(Captured {
            conversation_id: parent,
            seq,
            host,
            state,
        });
        next = up;
    }
    Ok(out)
}

static TURN_ELSEWHERE: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a turn's conversation",
        "SELECT conversation_id FROM prompt.turns WHERE id = $1 LIMIT 1",
        &[("conversation_id", UUIDOID)],
    )
});

pub(super) fn missing_turn(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Error {
    match first::<pgrx::Uuid>(client, &TURN_ELSEWHERE, &[pg_uuid(turn).into()]) {
        Some(elsewhere) => Error::new(
            Code::TurnNotCompilable,
            format!(
                "turn {turn} belongs to conversation {}, not {conv}",
                core_uuid(elsewhere)
            ),
        )
        .hint("Pass the turn's own conversation_id."),
        None => Error::new(
            Code::TurnNotFound,
            format!("turn {turn} does not exist in conversation {conv}"),
        )
        .hint("The id may be wrong, or row-level security may hide the turn from this role."),
    }
}

static MODELS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a model row",
        // The calibration is read apart, for a model with token_margin_auto only
        // (`calibrated`): it aggregates prompt.responses across conversations, which on
        // Citus is a distributed subplan, planned even where a CASE would skip it.
        "SELECT m.name, m.wire, m.tokenizer, m.advisory_window, m.hard_window, m.native_images, \
         m.token_margin, m.token_margin_auto, \
         m.max_output_tokens, m.cache_ttl, m.request_options, \
         prompt._model_profile(m.name, m.profile) AS profile \
         FROM prompt.models m WHERE m.name = ANY($1)",
        &[
            ("name", TEXTOID),
            ("wire", TEXTOID),
            ("tokenizer", TEXTOID),
            ("advisory_window", INT4OID),
            ("hard_window", INT4OID),
            ("native_images", BOOLOID),
            ("token_margin", FLOAT4OID),
            ("token_margin_auto", BOOLOID),
            ("max_output_tokens", INT4OID),
            ("cache_ttl", TEXTOID),
            ("request_options", JSONBOID),
            ("profile", TEXTOID),
        ],
    )
});

/// The model rows named `names`, by name: what a compile reads of a model (and the 0.2
/// conversion of the model a 0.2 seal names).
pub(super) fn models(client: &SpiClient<'_>, names: &[String]) -> Result<HashMap<String, Model>> {
    if names.is_empty() {
        return Ok(HashMap::new());
    }
    let models = run(client, &MODELS, &[names.to_vec().into()], |c| {
        let name = c.need_text("name")?;
        let mut m = Model::new(&name, Wire::from_column("models.wire", &c.need_text("wire")?)?);
        m.tokenizer = Tokenizer::parse(&c.need_text("tokenizer")?)?;
        m.advisory_window = c.get::<i32>("advisory_window");
        m.hard_window = c.get::<i32>("hard_window");
        m.native_images = c.need::<bool>("native_images")?;
        m.token_margin = c.need::<f32>("token_margin")?;
        let auto = c.need::<bool>("token_margin_auto")?;
        m.max_output_tokens = c.need::<i32>("max_output_tokens")?;
        m.cache_ttl = CacheTtl::from_column("models.cache_ttl", &c.need_text("cache_ttl")?)?;
        m.request_options = fields::parse_request_options(&c.need_json("request_options")?)?;
        // No profile: the model row names none and no shipped profile has its name.
        let profile = pgprompt_core::profile::Profile::from_json(&c.text("profile").unwrap_or_default())?;
        Ok(Some((name, m.with_profile(profile), auto)))
    })?;
    let mut out = HashMap::with_capacity(models.len());
    for (name, mut m, auto) in models {
        if auto {
            m.token_margin = m.token_margin.max(calibrated(client, &name)?);
        }
        out.insert(name, m);
    }
    Ok(out)
}

/// With token_margin_auto, a model's margin is at least its calibration's p95 of billed
/// over estimated input, less 1 (0 without responses); the seal freezes the model row
/// with the margin read here.
static CALIBRATION: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a model's calibration",
        "SELECT (c.p95_ratio - 1)::float4 AS margin FROM prompt.model_calibration c WHERE c.model = $1",
        &[("margin", FLOAT4OID)],
    )
});

fn calibrated(client: &SpiClient<'_>, model: &str) -> Result<f32> {
    let rows = run(client, &CALIBRATION, &[model.into()], |c| {
        Ok::<_, Error>(c.get::<f32>("margin"))
    })?;
    Ok(rows.into_iter().next().unwrap_or(0.0))
}

static DOCUMENTS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a document row",
        "SELECT id, user_id, workspace_id, name, role, body, version FROM prompt.documents \
         WHERE user_id = $1 OR (workspace_id = $2 AND name = 'character') OR (user_id = $3 AND name = 'persona')",
        &[
            ("id", UUIDOID),
            ("user_id", UUIDOID),
            ("workspace_id", UUIDOID),
            ("name", TEXTOID),
            ("role", TEXTOID),
            ("body", TEXTOID),
            ("version", INT4OID),
        ],
    )
});

fn load_documents(client: &SpiClient<'_>, a: Uuid, workspace: Uuid, human: Option<Uuid>) -> Result<Vec<Document>> {
    let human = nullable(human.map(pg_uuid));
    run(
        client,
        &DOCUMENTS,
        &[pg_uuid(a).into(), pg_uuid(workspace).into(), human],
        |c| {
            Ok(Some(Document {
                id: c.need_uuid("id")?,
                user_id: c.uuid("user_id"),
                workspace_id: c.uuid("workspace_id"),
                name: c.need_text("name")?,
                role: Role::from_column("documents.role", &c.need_text("role")?)?,
                body: c.need_text("body")?,
                version: c.need::<i32>("version")?,
            }))
        },
    )
}

static MEMORIES: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a memory row",
        "SELECT id, scope, user_id, speaker_id, workspace_id, conversation_id, path, body, updated_at::text \
         FROM prompt.memories WHERE (user_id = ANY($1) OR workspace_id = $2 OR conversation_id = $3)",
        &[
            ("id", UUIDOID),
            ("scope", TEXTOID),
            ("user_id", UUIDOID),
            ("speaker_id", UUIDOID),
            ("workspace_id", UUIDOID),
            ("conversation_id", UUIDOID),
            ("path", TEXTOID),
            ("body", TEXTOID),
            ("updated_at", TEXTOID),
        ],
    )
});

fn load_memories(
    client: &SpiClient<'_>,
    a: Uuid,
    workspace: Uuid,
    conv: Uuid,
    human: Option<Uuid>,
) -> Result<Vec<Memory>> {
    let owners: Vec<pgrx::Uuid> = [Some(a), human].into_iter().flatten().map(pg_uuid).collect();
    run(
        client,
        &MEMORIES,
        &[owners.into(), pg_uuid(workspace).into(), pg_uuid(conv).into()],
        |c| {
            Ok(Some(Memory {
                id: c.need_uuid("id")?,
                scope: c.need_text("scope")?,
                user_id: c.uuid("user_id"),
                speaker_id: c.uuid("speaker_id"),
                workspace_id: c.uuid("workspace_id"),
                conversation_id: c.uuid("conversation_id"),
                path: c.need_text("path")?,
                body: c.need_text("body")?,
                updated_at: c.need_text("updated_at")?,
            }))
        },
    )
}

static SKILLS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a skill row",
        "SELECT id, source, user_id, speaker_id, workspace_id, runner, application, name, description, \
         executor_id, recall_only FROM prompt.skills \
         WHERE (NOT recall_only OR $5) AND (runner = ANY($1) OR application = $2 OR user_id = ANY($3) OR workspace_id = $4)",
        &[
            ("id", UUIDOID),
            ("source", TEXTOID),
            ("user_id", UUIDOID),
            ("speaker_id", UUIDOID),
            ("workspace_id", UUIDOID),
            ("runner", TEXTOID),
            ("application", TEXTOID),
            ("name", TEXTOID),
            ("description", TEXTOID),
            ("executor_id", UUIDOID),
            ("recall_only", BOOLOID),
        ],
    )
});

/// The skills a turn's callables can resolve to; recall-only ones too when `recall_only`
/// (the catalog never lists them).
fn load_skills(
    client: &SpiClient<'_>,
    t: &Turn,
    w: &reads::AnswererRows,
    workspace: Uuid,
    recall_only: bool,
) -> Result<Vec<Skill>> {
    if t.callables.is_empty() {
        return Ok(Vec::new());
    }
    let runners: Vec<String> = t.callables.iter().filter_map(|c| c.runner.clone()).collect();
    let owners: Vec<pgrx::Uuid> = [Some(w.answerer), t.memory_user_id]
        .into_iter()
        .flatten()
        .map(pg_uuid)
        .collect();
    let application = nullable(w.application.clone());
    run(
        client,
        &SKILLS,
        &[
            runners.into(),
            application,
            owners.into(),
            pg_uuid(workspace).into(),
            recall_only.into(),
        ],
        |c| {
            Ok(Some(Skill {
                id: c.need_uuid("id")?,
                source: c.need_text("source")?,
                user_id: c.uuid("user_id"),
                speaker_id: c.uuid("speaker_id"),
                workspace_id: c.uuid("workspace_id"),
                runner: c.text("runner"),
                application: c.text("application"),
                name: c.need_text("name")?,
                description: c.need_text("description")?,
                executor_id: c.uuid("executor_id"),
                recall_only: c.need::<bool>("recall_only")?,
            }))
        },
    )
}

/// The columns [`read_round`] takes.
const ROUND: [Column; 5] = [
    ("n", INT4OID),
    ("assistant", JSONBOID),
    ("results", JSONBOID),
    ("steers", JSONBOID),
    ("aborted", BOOLOID),
];

/// A round as stored, parsed once (`turn` names it in errors). Its JSON columns are
/// read from their binary form: writing them as text and parsing that back was most of
/// the cost of a tool round (docs/design.md, "Performance").
fn read_round(c: &Cols<'_>, turn: Uuid) -> Result<Round> {
    let n = c.need::<i32>("n")?;
    let column = |name: &str| -> Result<serde_json::Value> {
        match c.jsonb(name) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => Err(c.null(name)),
            Err(()) => Err(Error::new(
                Code::RoundInvalid,
                format!("round {n} of turn {turn}: {name} nests deeper than 128 levels at /{name}"),
            )),
        }
    };
    let assistant = column("assistant")?;
    let results = column("results")?;
    let steers = column("steers")?;
    rounds::parse_values(
        n,
        [&assistant, &results, &steers],
        c.need::<bool>("aborted")?,
        Some(turn),
    )
}

static CURRENT_ROUNDS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a round row",
        "SELECT n, assistant, results, steers, aborted FROM prompt.rounds \
         WHERE conversation_id = $1 AND turn_id = $2 ORDER BY n",
        &ROUND,
    )
});

fn current_rounds(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Result<Vec<Round>> {
    run(
        client,
        &CURRENT_ROUNDS,
        &[pg_uuid(conv).into(), pg_uuid(turn).into()],
        |c| read_round(c, turn).map(Some),
    )
}

static SUMMARY_FLOOR: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a conversation's newest summary",
        "SELECT max(seq) AS seq FROM prompt.turns WHERE conversation_id = $1 AND kind = 'summary' AND seq < $2",
        &[("seq", INT8OID)],
    )
});

static HISTORY: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a turn row",
        format!(
            "SELECT {} FROM prompt.turns t WHERE t.conversation_id = $1 AND t.seq < $2 AND t.seq >= $3 \
             ORDER BY t.seq DESC LIMIT $4",
            turn_columns("$5")
        ),
        &TURN,
    )
});

static HISTORY_ROUNDS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a round row",
        "SELECT turn_id, n, assistant, results, steers, aborted FROM prompt.rounds \
         WHERE conversation_id = $1 AND turn_id = ANY($2) ORDER BY turn_id, n",
        &[&[("turn_id", UUIDOID)][..], &ROUND].concat(),
    )
});

static COUNT_REST: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a stretch's entry count",
        // The sums the core's rule reads (history::stored_entries): per kind and stored
        // answerer, the turns and their own_entries.
        "SELECT t.kind, t.answerer_id, count(*)::int8 AS turns, sum(t.own_entries)::int8 AS own_entries \
         FROM prompt.turns t WHERE t.conversation_id = $1 AND t.seq < $2 AND t.seq >= $3 \
         GROUP BY t.kind, t.answerer_id",
        &[
            ("kind", TEXTOID),
            ("answerer_id", UUIDOID),
            ("turns", INT8OID),
            ("own_entries", INT8OID),
        ],
    )
});

/// The record an answerer's previous sealed request froze (stable trimming reads where
/// its history began): the newest sealed reply before the turn whose seal froze that
/// answerer. The record is matched and read by the core (`seal::frozen_for`,
/// `seal::history_from`): no path into it is spelled here.
static PREVIOUS_CUT: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a previous seal's frozen record",
        "SELECT s.frozen \
         FROM prompt.turns t JOIN prompt.seals s ON s.conversation_id = t.conversation_id AND s.turn_id = t.id \
         WHERE t.conversation_id = $1 AND t.seq < $2 AND t.kind = 'reply' AND t.sealed_at IS NOT NULL \
           AND s.frozen @> $3 \
         ORDER BY t.seq DESC LIMIT 1",
        &[("frozen", JSONBOID)],
    )
});

/// One conversation's stretch of the history a turn reads: its own conversation's turns
/// before it, then, for a Side, each parent's through the captured turn.
struct Segment {
    conv: Uuid,
    /// The next batch reads turns with `seq` below this.
    before: i64,
    /// This stretch starts at its newest summary turn (its seq), or the beginning.
    floor: i64,
    host: Option<Host>,
    /// A parent's stretch: where the Side was captured, and the captured turn then.
    capture: Option<Captured>,
}

/// History read newest first through SPI, from the newest summary turn on.
pub struct SpiHistory<'c, 'conn> {
    client: &'c SpiClient<'conn>,
    conv: Uuid,
    /// The compiled turn's seq.
    turn_seq: i64,
    timezone: String,
    /// The stretches left to read, the current first.
    segments: std::collections::VecDeque<Segment>,
    known: HashSet<Uuid>,
}

impl<'c, 'conn> SpiHistory<'c, 'conn> {
    pub fn new(client: &'c SpiClient<'conn>, ctx: &Context) -> Self {
        let floor = |conv: Uuid, before: i64| {
            first::<i64>(client, &SUMMARY_FLOOR, &[pg_uuid(conv).into(), before.into()]).unwrap_or(i64::MIN)
        };
        let mut segments = std::collections::VecDeque::new();
        segments.push_back(Segment {
            conv: ctx.conversation.id,
            before: ctx.turn.seq,
            floor: floor(ctx.conversation.id, ctx.turn.seq),
            host: None,
            capture: None,
        });
        // A summary turn of the Side's own covers what came before it, the parents too.
        if segments[0].floor == i64::MIN {
            for c in &ctx.captured {
                let before = c.seq.saturating_add(1);
                let seg = Segment {
                    conv: c.conversation_id,
                    before,
                    floor: floor(c.conversation_id, before),
                    host: Some(c.host),
                    capture: Some(c.clone()),
                };
                let summarized = seg.floor != i64::MIN;
                segments.push_back(seg);
                if summarized {
                    break;
                }
            }
        }
        SpiHistory {
            client,
            conv: ctx.conversation.id,
            turn_seq: ctx.turn.seq,
            timezone: ctx.workspace.timezone.clone(),
            segments,
            known: ctx.users.keys().copied().collect(),
        }
    }

    /// The current stretch, past any that are read through.
    fn current(&mut self) -> Option<&mut Segment> {
        while self.segments.front().is_some_and(|s| s.before <= s.floor) {
            self.segments.pop_front();
        }
        self.segments.front_mut()
    }

    /// The rounds of a batch's reply turns (of conversation `conv`), in one query.
    fn attach_rounds(&self, conv: Uuid, turns: &mut [HistoryTurn]) -> Result<()> {
        let replies: Vec<pgrx::Uuid> = turns
            .iter()
            .filter(|h| h.turn.kind == TurnKind::Reply)
            .map(|h| pg_uuid(h.turn.id))
            .collect();
        if replies.is_empty() {
            return Ok(());
        }
        let rows = run(
            self.client,
            &HISTORY_ROUNDS,
            &[pg_uuid(conv).into(), replies.into()],
            |c| {
                let turn = c.need_uuid("turn_id")?;
                Ok(Some((turn, read_round(c, turn)?)))
            },
        )?;
        let mut by_turn: HashMap<Uuid, Vec<Round>> = HashMap::new();
        for (turn, round) in rows {
            by_turn.entry(turn).or_default().push(round);
        }
        for h in turns {
            if let Some(r) = by_turn.remove(&h.turn.id) {
                h.rounds = r;
            }
        }
        Ok(())
    }
}

impl HistorySource for SpiHistory<'_, '_> {
    fn next_batch(&mut self, want: usize) -> Result<(Vec<HistoryTurn>, Vec<User>)> {
        let limit = want.clamp(1, 1024);
        let mut turns: Vec<HistoryTurn> = Vec::new();
        // The first stretch with turns left (a Side's first turn has none of its own).
        while turns.is_empty() {
            let (client, timezone) = (self.client, self.timezone.clone());
            let Some(seg) = self.current() else {
                return Ok((Vec::new(), Vec::new()));
            };
            let host = seg.host;
            turns = run(
                client,
                &HISTORY,
                &[
                    pg_uuid(seg.conv).into(),
                    seg.before.into(),
                    seg.floor.into(),
                    (limit as i64).into(),
                    timezone.into(),
                ],
                |c| {
                    Ok(read_turn(c)?.map(|(turn, _)| HistoryTurn {
                        turn,
                        rounds: Vec::new(),
                        host,
                    }))
                },
            )?;
            // A short batch was the stretch's last: nothing older is left in it.
            seg.before = match turns.last() {
                Some(last) if turns.len() == limit => last.turn.seq,
                _ => seg.floor,
            };
            let (conv, capture) = (seg.conv, seg.capture.clone());
            self.attach_rounds(conv, &mut turns)?;
            if let Some(c) = capture {
                // The captured turn as it stood when the Side was created.
                turns.iter_mut().for_each(|h| c.freeze(h));
            }
        }

        let ids = reads::history_users(&turns, &self.known);
        let users = load_users(self.client, &ids)?;
        self.known.extend(ids);
        self.known.extend(users.iter().map(|u| u.id));
        Ok((turns, users))
    }

    /// Sums the entry counts the write triggers store (`own_entries`, from the core's
    /// `own_plan`): an index-only scan of (conversation_id, seq) INCLUDE (kind,
    /// answerer_id, own_entries) per stretch left, no turn text read.
    fn count_rest(&mut self, a: Uuid, conv_answerer: Option<Uuid>) -> Result<u32> {
        let mut n = 0u32;
        while let Some(seg) = self.current() {
            let answerer = seg.host.map_or(conv_answerer, |h| h.answerer_id);
            let (conv, before, floor) = (seg.conv, seg.before, seg.floor);
            seg.before = seg.floor;
            let groups = run(
                self.client,
                &COUNT_REST,
                &[pg_uuid(conv).into(), before.into(), floor.into()],
                |c| {
                    Ok(Some(history::StoredCount {
                        kind: TurnKind::from_column("turns.kind", &c.need_text("kind")?)?,
                        answerer_id: c.uuid("answerer_id"),
                        turns: c.need::<i64>("turns")?,
                        own_entries: c.need::<i64>("own_entries")?,
                    }))
                },
            )?;
            n = n.saturating_add(history::stored_entries(&groups, a, answerer));
        }
        Ok(n)
    }

    fn previous_cut(&mut self, a: Uuid) -> Result<Option<EntryAt>> {
        let rows = run(
            self.client,
            &PREVIOUS_CUT,
            &[
                pg_uuid(self.conv).into(),
                self.turn_seq.into(),
                pgrx::JsonB(seal::frozen_for(a, None)).into(),
            ],
            |c| Ok::<_, Error>(Some(seal::history_from(&c.need_json("frozen")?)?)),
        )?;
        Ok(rows.into_iter().next().flatten())
    }
}

/// A stateful turn's previous request: the newest earlier sealed reply turn of its
/// answerer, with the newest response recorded for it (a turn without one breaks the
/// chain).
static PREVIOUS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the previous request",
        "SELECT t.id, r.step, r.response_id, r.compiled_model, r.billed_input_tokens, r.output_tokens \
         FROM prompt.turns t JOIN prompt.conversations c ON c.id = t.conversation_id \
         LEFT JOIN LATERAL (SELECT step, response_id, compiled_model, billed_input_tokens, output_tokens \
                            FROM prompt.responses x \
                            WHERE x.conversation_id = $1 AND x.turn_id = t.id \
                            ORDER BY x.step DESC LIMIT 1) r ON true \
         WHERE t.conversation_id = $1 AND t.seq < $2 AND t.kind = 'reply' AND t.sealed_at IS NOT NULL \
           AND coalesce(t.answerer_id, c.answerer_id) = $3 \
         ORDER BY t.seq DESC LIMIT 1",
        &[
            ("id", UUIDOID),
            ("step", INT4OID),
            ("response_id", TEXTOID),
            ("compiled_model", TEXTOID),
            ("billed_input_tokens", INT4OID),
            ("output_tokens", INT4OID),
        ],
    )
});

/// The previous request of answerer `a` before the context's turn, in its full form
/// (`Context::previous`), with the response recorded for it: `None` when there is none,
/// it has no response id, or its body was pruned. The request is the one the response
/// answered: the turn's seal plus the rounds before the response's step.
pub fn previous(
    client: &SpiClient<'_>,
    ctx: &Context,
    a: Uuid,
    memo: &mut pgprompt_core::tokens::Memo,
) -> Result<Option<pgprompt_core::context::Previous>> {
    let conv = ctx.conversation.id;
    let rows = run(
        client,
        &PREVIOUS,
        &[pg_uuid(conv).into(), ctx.turn.seq.into(), pg_uuid(a).into()],
        |c| {
            // The response columns are NULL where the turn has no response (left joined).
            Ok::<_, Error>(Some((
                c.uuid("id"),
                c.get::<i32>("step"),
                c.text("response_id"),
                c.text("compiled_model"),
                c.get::<i32>("billed_input_tokens"),
                c.get::<i32>("output_tokens"),
            )))
        },
    )?;
    let Some((Some(turn), Some(step), Some(response_id), model, input_tokens, output_tokens)) = rows.into_iter().next()
    else {
        return Ok(None);
    };
    let Loaded::Context(mut before) = context(client, conv, turn, Read::Explain)? else {
        return Ok(None);
    };
    before.rounds.retain(|r| r.n < step);
    let Some(frozen) = before.seal.as_ref().map(|s| s.frozen.clone()) else {
        return Ok(None);
    };
    let Some(body) = pgprompt_core::compile::full_request(&before, memo)? else {
        return Ok(None);
    };
    Ok(Some(pgprompt_core::context::Previous {
        response_id,
        model,
        input_tokens,
        output_tokens,
        body,
        stateful: frozen.stateful.is_some(),
        sealed_model: frozen.model.map(|m| m.name),
    }))
}
