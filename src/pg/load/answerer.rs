//! The answerer's own rows a compile renders: its documents (and the workspace's and the
//! persona's), its memory in the turn's bindings, and the skills its callables list.

use std::sync::LazyLock;

use pgrx::pg_sys::{BOOLOID, INT4OID, TEXTOID, UUIDOID};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use crate::pg::spi::{nullable, pg_uuid, run, Query};
use pgprompt_core::error::Result;
use pgprompt_core::reads;
use pgprompt_core::rows::{Document, Memory, Role, Skill, Turn};

/// The answerer's documents, memory and skills, as [`reads::answerer_rows`] named them.
pub(super) fn answerer_rows(
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
