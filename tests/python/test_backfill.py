"""backfill_token_counts: a tokenizer added after the turns were written gets its
stored counts in committed batches, with progress NOTICEs, and a second run finds
nothing left to do. Counts are checked against Python tiktoken, not against the
extension's own counter."""
import psycopg
import pytest

from conftest import connect
from tiktoken_offline import count

NAME = "pgprompt_backfill"
CONV = "00000000-0000-4000-8000-0000000bf001"
SUMMARY_HEADER = "[Summary of the earlier conversation]\n"


@pytest.fixture(scope="module")
def bdb():
    with connect("postgres") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {NAME}")
        admin.execute(f"CREATE DATABASE {NAME}")
    conn = connect(NAME)
    conn.execute("CREATE EXTENSION pgprompt")
    conn.execute("""
        INSERT INTO prompt.models (name, wire, tokenizer) VALUES ('old', 'anthropic', 'cl100k_base');
        INSERT INTO prompt.workspaces (id, name) VALUES ('00000000-0000-4000-8000-0000000bfa01', 'W');
        INSERT INTO prompt.users (id, handle, display_name, kind) VALUES
            ('00000000-0000-4000-8000-0000000bfb01', 'h', 'H', 'human');
        INSERT INTO prompt.users (id, handle, display_name, kind, model) VALUES
            ('00000000-0000-4000-8000-0000000bfb02', 'a', 'A', 'agent', 'old');
        INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES
            (%s, '00000000-0000-4000-8000-0000000bfa01',
             '00000000-0000-4000-8000-0000000bfb02', '00000000-0000-4000-8000-0000000bfb01');
    """.replace("%s", f"'{CONV}'"))
    for i in range(25):
        if i % 5 == 4:
            conn.execute(
                "INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, content) "
                "VALUES (%s, 'reply', '00000000-0000-4000-8000-0000000bfb01', %s, %s)",
                (CONV, f"question {i} ✓", f"answer {i}: " + "ünïcode " * i))
        elif i == 10:
            conn.execute("INSERT INTO prompt.turns (conversation_id, kind, content) VALUES (%s, 'summary', %s)",
                         (CONV, "So far: refunds."))
        else:
            conn.execute(
                "INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) "
                "VALUES (%s, 'message', 'user', '00000000-0000-4000-8000-0000000bfb01', %s)",
                (CONV, f"message {i} " + "words " * i))
    yield conn
    conn.close()


def lacking(conn, sql, args):
    """A write that leaves a turn without stored counts, as a turn written before its
    tokenizer was in use is: the counts are the write trigger's, so it is off for it."""
    conn.execute("ALTER TABLE prompt.turns DISABLE TRIGGER turns_write")
    try:
        conn.execute(sql, args)
    finally:
        conn.execute("ALTER TABLE prompt.turns ENABLE TRIGGER turns_write")


def stored(conn):
    return conn.execute(
        "SELECT kind, content, prompt, content_tokens, prompt_tokens FROM prompt.turns "
        "WHERE conversation_id = %s ORDER BY seq", (CONV,)).fetchall()


def test_backfill_fills_the_new_tokenizer_in_batches(bdb):
    rows = stored(bdb)
    assert all(ct[1] is None for _, _, _, ct, _ in rows), "o200k counts are not stored before the model exists"

    notices = []
    # A Diagnostic is only valid inside the callback: keep its fields.
    bdb.add_notice_handler(lambda d: notices.append((d.message_primary, d.message_hint)))
    bdb.execute("INSERT INTO prompt.models (name, wire, tokenizer) VALUES ('new', 'chat', 'o200k_base')")
    assert [h for _, h in notices] == [
        "CALL prompt.backfill_token_counts('o200k_base') stores them; until then compiles count those texts themselves."]

    notices.clear()
    bdb.execute("CALL prompt.backfill_token_counts('o200k_base', 10)")
    progress = [m for m, _ in notices]
    assert progress == [
        "backfill_token_counts(o200k_base): 10 turns read, 10 counted",
        "backfill_token_counts(o200k_base): 20 turns read, 20 counted",
        "backfill_token_counts(o200k_base): 25 turns read, 25 counted",
        "backfill_token_counts(o200k_base): done, 25 turns read, 25 counted",
    ]

    for kind, content, prompt, ct, pt in stored(bdb):
        rendered = SUMMARY_HEADER + content if kind == "summary" else content
        assert ct == [count("cl100k_base", rendered), count("o200k_base", rendered)]
        if prompt is None:
            assert pt is None
        else:
            assert pt == [count("cl100k_base", prompt), count("o200k_base", prompt)]

    notices.clear()
    bdb.execute("CALL prompt.backfill_token_counts('o200k_base')")
    assert [m for m, _ in notices] == [
        "backfill_token_counts(o200k_base): 25 turns read, 0 counted",
        "backfill_token_counts(o200k_base): done, 25 turns read, 0 counted",
    ]


def test_backfill_refuses_what_it_cannot_do(bdb):
    with pytest.raises(psycopg.Error) as e:
        bdb.execute("CALL prompt.backfill_token_counts('p50k_base')")
    assert e.value.sqlstate == "22023" and "tokenizer_unknown" in str(e.value)
    with pytest.raises(psycopg.Error) as e:
        bdb.execute("CALL prompt.backfill_token_counts('o200k_base', 0)")
    assert e.value.sqlstate == "22023"
    # In a transaction block it cannot commit its batches: PostgreSQL refuses, nothing is written.
    lacking(bdb, "UPDATE prompt.turns SET content_tokens = NULL WHERE conversation_id = %s AND seq = 1", (CONV,))
    with pytest.raises(psycopg.Error) as e:
        with bdb.transaction():
            bdb.execute("CALL prompt.backfill_token_counts('o200k_base')")
    assert e.value.sqlstate == "2D000"
    assert bdb.execute("SELECT content_tokens FROM prompt.turns WHERE conversation_id = %s AND seq = 1",
                       (CONV,)).fetchone()[0] is None
