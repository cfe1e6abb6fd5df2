//! `prompt.transcript`: the summarizer's reading of a conversation (core `transcript`).

use std::sync::LazyLock;

use pgrx::pg_sys::{INT8OID, TEXTOID, UUIDOID};
use pgrx::prelude::*;
use uuid::Uuid;

use super::errors::{raise, OrRaise};
use super::load::{load_users, missing_turn};
use super::spi::{core_uuid, first, pg_uuid, run, Query};
use pgprompt_core::Columns as _;
use pgprompt_core::Error;
use pgprompt_core::{Turn, TurnKind};

static CONVERSATION: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "the conversation row",
        "SELECT creator_id, answerer_id FROM prompt.conversations WHERE id = $1",
        &[("creator_id", UUIDOID), ("answerer_id", UUIDOID)],
    )
});

static THROUGH: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a turn's place",
        "SELECT seq FROM prompt.turns WHERE conversation_id = $1 AND id = $2",
        &[("seq", INT8OID)],
    )
});

/// The turns from the newest summary turn at or before `through` (inclusive) on.
static TURNS: LazyLock<Query> = LazyLock::new(|| {
    Query::new(
        "a turn row",
        "SELECT id, seq, kind, author_id, answerer_id, poster_id, prompt, content, origin, sender_conversation_id \
         FROM prompt.turns WHERE conversation_id = $1 AND seq <= $2 AND seq >= coalesce((SELECT max(seq) \
         FROM prompt.turns WHERE conversation_id = $1 AND kind = 'summary' AND seq <= $2), 0) ORDER BY seq",
        &[
            ("id", UUIDOID),
            ("seq", INT8OID),
            ("kind", TEXTOID),
            ("author_id", UUIDOID),
            ("answerer_id", UUIDOID),
            ("poster_id", UUIDOID),
            ("prompt", TEXTOID),
            ("content", TEXTOID),
            ("origin", TEXTOID),
            ("sender_conversation_id", UUIDOID),
        ],
    )
});

#[pg_extern(stable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn transcript(conversation_id: pgrx::Uuid, through_turn_id: pgrx::Uuid) -> String {
    let (conv, through) = (core_uuid(conversation_id), core_uuid(through_turn_id));
    Spi::connect(|client| {
        let people = run(client, &CONVERSATION, &[pg_uuid(conv).into()], |c| {
            Ok::<_, Error>(Some((c.uuid("creator_id"), c.uuid("answerer_id"))))
        })
        .or_raise();
        let Some(&(creator, answerer)) = people.first() else {
            raise(Error::conversation_not_found(conv));
        };
        let Some(seq) = first::<i64>(client, &THROUGH, &[pg_uuid(conv).into(), pg_uuid(through).into()]) else {
            raise(missing_turn(client, conv, through));
        };
        let turns = run(client, &TURNS, &[pg_uuid(conv).into(), seq.into()], |c| {
            let kind = TurnKind::from_column("turns.kind", &c.need_text("kind")?)?;
            let mut t = Turn::new(c.need_uuid("id")?, c.need::<i64>("seq")?, kind);
            t.author_id = c.uuid("author_id");
            t.answerer_id = c.uuid("answerer_id");
            t.poster_id = c.uuid("poster_id");
            t.prompt = c.text("prompt");
            t.content = c.text("content");
            t.origin = c.text("origin");
            t.sender_conversation_id = c.uuid("sender_conversation_id");
            Ok::<_, Error>(Some(t))
        })
        .or_raise();
        let mut ids: Vec<Uuid> = turns
            .iter()
            .flat_map(|t| [t.author_id, t.answerer_id, t.poster_id])
            .chain([answerer])
            .flatten()
            .collect();
        ids.sort();
        ids.dedup();
        let users = load_users(client, &ids)
            .or_raise()
            .into_iter()
            .map(|u| (u.id, u))
            .collect();
        pgprompt_core::transcript(&turns, &users, creator, answerer).or_raise()
    })
}
