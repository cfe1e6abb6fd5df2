//! The answerer's own rows a compile renders: its documents (and the workspace's and the
//! persona's), its memory in the turn's bindings, and the skills its callables list, in
//! one statement.

use std::sync::LazyLock;

use pgrx::pg_sys::{BOOLOID, INT4OID, TEXTOID, UUIDOID};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use crate::pg::spi::{nullable, pg_uuid, run, Cols, Query};
use pgprompt_core::AnswererRows;
use pgprompt_core::Columns as _;
use pgprompt_core::Result;
use pgprompt_core::{Document, Memory, Role, Skill};

/// The answerer's documents, memory and skills, as the core's load named them,
/// in one statement.
pub(super) fn answerer_rows(
    client: &SpiClient<'_>,
    w: &AnswererRows,
    workspace: Uuid,
    conv: Uuid,
) -> Result<(Vec<Document>, Vec<Memory>, Vec<Skill>)> {
    let owners: Vec<pgrx::Uuid> = w.owners.iter().copied().map(pg_uuid).collect();
    let args = [
        pg_uuid(w.answerer).into(),
        pg_uuid(workspace).into(),
        nullable(w.human.map(pg_uuid)),
        pg_uuid(conv).into(),
        owners.into(),
        w.runners.clone().into(),
        nullable(w.application.clone()),
        w.skills.unwrap_or(false).into(),
        w.skills.is_some().into(),
    ];
    let (mut documents, mut memories, mut found) = (Vec::new(), Vec::new(), Vec::new());
    run(client, &ANSWERER_ROWS, &args, |c| {
        match c.need_text("row_of")?.as_str() {
            "document" => documents.push(document(c)?),
            "memory" => memories.push(memory(c)?),
            "skill" => found.push(skill(c)?),
            other => c.unread_part(other),
        }
        Ok::<Option<()>, pgprompt_core::Error>(None)
    })?;
    Ok((documents, memories, found))
}

/// The answerer's documents (`$1`), the workspace's character (`$2`) and the persona of
/// the poster's Human (`$3`); the memory entries of the owners `$5`, the workspace and the
/// conversation (`$4`); when `$9`, the skills the runners `$6`, the application `$7`, the
/// owners or the workspace hold (recall-only ones too when `$8`).
static ANSWERER_ROWS: LazyLock<Query> = LazyLock::new(|| {
    Query::parts(
        "the answerer's rows",
        &[
            (
                "document",
                "SELECT id, user_id, workspace_id, name, role, body, version FROM prompt.documents \
                 WHERE user_id = $1 OR (workspace_id = $2 AND name = 'character') OR (user_id = $3 AND name = 'persona')"
                    .into(),
                &[
                    ("id", UUIDOID),
                    ("user_id", UUIDOID),
                    ("workspace_id", UUIDOID),
                    ("name", TEXTOID),
                    ("role", TEXTOID),
                    ("body", TEXTOID),
                    ("version", INT4OID),
                ],
            ),
            (
                "memory",
                "SELECT id, scope, user_id, speaker_id, workspace_id, conversation_id, path, body, \
                 updated_at::text AS updated_at FROM prompt.memories \
                 WHERE user_id = ANY($5) OR workspace_id = $2 OR conversation_id = $4"
                    .into(),
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
            ),
            (
                "skill",
                "SELECT id, source, user_id, speaker_id, workspace_id, runner, application, name, description, \
                 executor_id, recall_only FROM prompt.skills WHERE $9 AND (NOT recall_only OR $8) \
                 AND (runner = ANY($6) OR application = $7 OR user_id = ANY($5) OR workspace_id = $2)"
                    .into(),
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
            ),
        ],
    )
});

fn document(c: &Cols<'_>) -> Result<Document> {
    Ok(Document {
        id: c.need_uuid("id")?,
        user_id: c.uuid("user_id"),
        workspace_id: c.uuid("workspace_id"),
        name: c.need_text("name")?,
        role: Role::from_column("documents.role", &c.need_text("role")?)?,
        body: c.need_text("body")?,
        version: c.need::<i32>("version")?,
    })
}

fn memory(c: &Cols<'_>) -> Result<Memory> {
    Ok(Memory {
        id: c.need_uuid("id")?,
        scope: c.need_text("scope")?,
        user_id: c.uuid("user_id"),
        speaker_id: c.uuid("speaker_id"),
        workspace_id: c.uuid("workspace_id"),
        conversation_id: c.uuid("conversation_id"),
        path: c.need_text("path")?,
        body: c.need_text("body")?,
        updated_at: c.need_text("updated_at")?,
    })
}

fn skill(c: &Cols<'_>) -> Result<Skill> {
    Ok(Skill {
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
    })
}
