//! `prompt.transcript`: the summarizer's reading of a conversation (core `transcript`).

use std::sync::LazyLock;

use pgrx::pg_sys::{INT8OID, TEXTOID, UUIDOID};
use pgrx::prelude::*;
use uuid::Uuid;

use pgrx::spi::SpiClient;

use super::errors::OrRaise;
use super::load::{load_users, missing_turn};
use super::spi::{core_uuid, first, pg_uuid, run, Query};
use pgprompt_core::{Columns, Error, Result, TranscriptRows, Turn, User};

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
        "SELECT id, seq, kind, author_id, answerer_id, poster_id, content, prompt, origin, sender_conversation_id \
         FROM prompt.turns WHERE conversation_id = $1 AND seq <= $2 AND seq >= coalesce((SELECT max(seq) \
         FROM prompt.turns WHERE conversation_id = $1 AND kind = 'summary' AND seq <= $2), 0) ORDER BY seq",
        &[
            ("id", UUIDOID),
            ("seq", INT8OID),
            ("kind", TEXTOID),
            ("author_id", UUIDOID),
            ("answerer_id", UUIDOID),
            ("poster_id", UUIDOID),
            ("content", TEXTOID),
            ("prompt", TEXTOID),
            ("origin", TEXTOID),
            ("sender_conversation_id", UUIDOID),
        ],
    )
});

#[pg_extern(stable, strict, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn transcript(conversation_id: pgrx::Uuid, through_turn_id: pgrx::Uuid) -> String {
    let (conv, through) = (core_uuid(conversation_id), core_uuid(through_turn_id));
    Spi::connect(|client| pgprompt_core::transcript(&mut SpiTranscript { client }, conv, through)).or_raise()
}

/// The transcript's statements over SPI, as the core asks (`TranscriptRows`).
struct SpiTranscript<'a, 'c> {
    client: &'a SpiClient<'c>,
}

impl TranscriptRows for SpiTranscript<'_, '_> {
    fn conversation(&mut self, conv: Uuid) -> Result<Option<(Option<Uuid>, Option<Uuid>)>> {
        let people = run(self.client, &CONVERSATION, &[pg_uuid(conv).into()], |c| {
            Ok::<_, Error>(Some((c.uuid("creator_id"), c.uuid("answerer_id"))))
        })?;
        Ok(people.into_iter().next())
    }

    fn seq(&mut self, conv: Uuid, turn: Uuid) -> Option<i64> {
        first::<i64>(self.client, &THROUGH, &[pg_uuid(conv).into(), pg_uuid(turn).into()])
    }

    fn missing_turn(&mut self, conv: Uuid, turn: Uuid) -> Error {
        missing_turn(self.client, conv, turn)
    }

    fn turns(&mut self, conv: Uuid, seq: i64, read: &mut dyn FnMut(&dyn Columns) -> Result<Turn>) -> Result<Vec<Turn>> {
        run(self.client, &TURNS, &[pg_uuid(conv).into(), seq.into()], |c| {
            read(c).map(Some)
        })
    }

    fn users(&mut self, ids: &[Uuid]) -> Result<Vec<User>> {
        load_users(self.client, ids)
    }
}
