//! A Side's captures (docs/design.md, "History"): the parent it was captured from and
//! the captured turn as it stood then, up the chain of parents that are Sides.

use std::sync::LazyLock;

use pgrx::pg_sys::{INT4OID, INT8OID, JSONBOID, TEXTOID, UUIDOID};
use pgrx::spi::SpiClient;
use uuid::Uuid;

use crate::pg::spi::{pg_uuid, run, Cols, Column, Query};
use pgprompt_core::Columns as _;
use pgprompt_core::{CaptureState, Captured, Conversation, Host};
use pgprompt_core::{Code, Error, Result};

/// A Side's capture as its row names it: the parent, the captured turn, what it read of it.
pub(super) type Capture = (Option<Uuid>, Option<Uuid>, CaptureState);

/// A Side's captures, nearest first (its parent must still exist).
pub(super) fn side_captures(
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
pub(super) fn capture_columns(prefix: &str) -> String {
    CAPTURE_COLUMNS
        .iter()
        .map(|(name, _)| format!("{prefix}{name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The columns of [`capture_columns`], declared by name beside their reader.
pub(super) const CAPTURE_COLUMNS: [Column; 7] = [
    ("parent_id", UUIDOID),
    ("captured_turn_id", UUIDOID),
    ("captured_round", INT4OID),
    ("captured_content", TEXTOID),
    ("captured_summary", TEXTOID),
    ("captured_summary_round", INT4OID),
    ("captured_cleared", JSONBOID),
];

/// A Side row's `captured_round, captured_content, captured_summary,
/// captured_summary_round` (NULL where the conversation is not a Side): its captured
/// turn as it stood at the capture.
pub(super) fn capture_state(c: &Cols<'_>) -> CaptureState {
    CaptureState {
        round: c.get::<i32>("captured_round"),
        content: c.text("captured_content"),
        summary: c.text("captured_summary"),
        summary_round: c.get::<i32>("captured_summary_round"),
        cleared: pgprompt_core::Columns::jsonb(c, "captured_cleared")
            .ok()
            .flatten()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default(),
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

/// The conversation's own columns [`conversation_row`] reads.
pub(super) const CONVERSATION_COLUMNS: [Column; 5] = [
    ("workspace_id", UUIDOID),
    ("conversation_kind", TEXTOID),
    ("conversation_answerer_id", UUIDOID),
    ("creator_id", UUIDOID),
    ("origin_channel", TEXTOID),
];

/// The conversation and its capture, from its row (the loader's `CONVERSATION`, or
/// `single_table`'s conversation row).
pub(super) fn conversation_row(c: &Cols<'_>, conv: Uuid) -> Result<(Conversation, Capture)> {
    let conversation = Conversation {
        id: conv,
        workspace_id: c.need_uuid("workspace_id")?,
        kind: c.need_text("conversation_kind")?,
        answerer_id: c.uuid("conversation_answerer_id"),
        creator_id: c.uuid("creator_id"),
        origin_channel: c.text("origin_channel"),
        root_id: None,
    };
    Ok((
        conversation,
        (c.uuid("parent_id"), c.uuid("captured_turn_id"), capture_state(c)),
    ))
}
