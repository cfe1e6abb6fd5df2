"""prompt.transcript: the summarizer's reading — every turn from the newest summary turn
through the given one, each speaker's words in its envelope (the renderer and escaping
of every other reading site), kernel rows bare; and the summary written back as a
summary turn, which later compiles start their history at."""
import psycopg
import pytest

from conftest import make_database

C1 = "00000000-0000-4000-8000-00000000c001"
ADA, LARK = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"


def envelope(handle, kind, user, text, conversation=None):
    stamp = f' conversation="{conversation}"' if conversation else ""
    return f'<message from="@{handle}" kind="{kind}" user="{user}"{stamp}>\n{text}\n</message>'


@pytest.fixture(scope="module")
def tdb():
    c = make_database("pgprompt_transcript")
    yield c
    c.close()


def test_the_demo_conversation_as_spoken(tdb):
    t = tdb.execute("SELECT prompt.transcript(%s, '00000000-0000-4000-8000-0000000d0004')", (C1,)).fetchone()[0]
    assert t == "\n\n".join([
        envelope("ada", "human", ADA, "Hi, I was charged twice for invoice INV-2041."),
        envelope("ada", "human", ADA, "Can you check?"),
        envelope("lark", "agent", LARK, "INV-2041: I see two charges of EUR 49.00 on 28 November. I can refund the second one."),
        envelope("ada", "human", ADA, "Yes please, refund the duplicate."),
        envelope("ada", "human", ADA, "And send me the credit note, please."),
    ])
    # Through an earlier turn: nothing after it.
    t2 = tdb.execute("SELECT prompt.transcript(%s, '00000000-0000-4000-8000-0000000d0002')", (C1,)).fetchone()[0]
    assert t2.count("<message") == 3


def test_a_group_conversation_stamps_escapes_and_leaves_kernel_rows_bare(tdb):
    conv = "00000000-0000-4000-8000-00000000c003"
    last = tdb.execute("SELECT id FROM prompt.turns WHERE conversation_id = %s ORDER BY seq DESC LIMIT 1", (conv,)).fetchone()[0]
    t = tdb.execute("SELECT prompt.transcript(%s, %s)", (conv, last)).fetchone()[0]
    assert "&lt;/message>" in t, "a body cannot close its envelope"
    assert ' conversation="' in t, "a row sent from another conversation carries its stamp"
    rows = tdb.execute("SELECT content FROM prompt.turns WHERE conversation_id = %s AND origin IS NOT NULL", (conv,)).fetchall()
    for (content,) in rows:
        assert content in t and f">\n{content}\n</message>" not in t, "kernel rows read bare"


def test_the_summary_written_back_starts_later_history(tdb):
    t = tdb.execute("SELECT prompt.transcript(%s, '00000000-0000-4000-8000-0000000d0004')", (C1,)).fetchone()[0]
    assert t
    tdb.execute("INSERT INTO prompt.turns (conversation_id, kind, content) VALUES (%s, 'summary', 'Ada was refunded for INV-2041.')", (C1,))
    turn = tdb.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt) VALUES (%s, 'reply', %s, 'Thanks!') "
                       "RETURNING id", (C1, ADA)).fetchone()[0]
    t = tdb.execute("SELECT prompt.transcript(%s, %s)", (C1, turn)).fetchone()[0]
    assert t.startswith("[Summary of the earlier conversation]\nAda was refunded for INV-2041.\n\n")
    body = tdb.execute("SELECT prompt.preview_turn(%s, %s)", (C1, turn)).fetchone()[0]
    assert body["messages"][0]["content"][0]["text"] == "[Summary of the earlier conversation]\nAda was refunded for INV-2041."


def test_refusals(tdb):
    with pytest.raises(psycopg.Error) as e:
        tdb.execute("SELECT prompt.transcript('00000000-0000-4000-8000-0000000000ff', '00000000-0000-4000-8000-0000000d0004')")
    assert e.value.sqlstate == "P0002"
    with pytest.raises(psycopg.Error) as e:
        tdb.execute("SELECT prompt.transcript(%s, '00000000-0000-4000-8000-0000000000ff')", (C1,))
    assert e.value.sqlstate == "P0002"
