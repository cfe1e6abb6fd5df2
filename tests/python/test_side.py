"""Side conversations (the seed's "A Side uses the answerer of the captured
turn"): a conversation of kind `side` captured from a turn of its parent compiles with
that turn's answerer, the parent's turns through the captured one in that answerer's
reading, then its own turns; its first request extends the parent's request for the
captured turn, part for part on every wire and byte for byte where no cache marker
moves. Every body is validated against its SDK's types and compared whole with a
golden file."""
import json
import os
import pathlib

import psycopg
import pytest

from test_wire_types import assert_valid_wire

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "fixtures" / "side"
WS = "00000000-0000-4000-8000-00000000a001"
ADA, LARK, WREN = ("00000000-0000-4000-8000-00000000000" + n for n in "125")
PARENT = "00000000-0000-4000-8000-00000000c003"  # the group conversation: lark answers it
WRENS_TURN = "00000000-0000-4000-8000-0000000f1007"  # wren's turn, in progress
LARKS_TURN = "00000000-0000-4000-8000-0000000f1006"
SIDE = "00000000-0000-4000-8000-00000000c051"
SIDE_TURN = "00000000-0000-4000-8000-0000000f5101"
MODELS = {"anthropic": "claude-vision", "chat": "gpt-5.5-vision", "responses": "gpt-5.6-sol", "gemini": "gemini-3.5-flash"}


@pytest.fixture(scope="module")
def sdb(own_db):
    c = own_db
    c.execute("INSERT INTO prompt.conversations (id, workspace_id, kind, creator_id, parent_id, captured_turn_id, origin_channel) "
              "VALUES (%s, %s, 'side', %s, %s, %s, 'lark')", (SIDE, WS, ADA, PARENT, WRENS_TURN))
    # Posted by lark, as the captured turn was: the preface (P's persona) is the same.
    c.execute("INSERT INTO prompt.turns (conversation_id, id, seq, kind, author_id, poster_id, prompt, created_at) "
              "VALUES (%s, %s, 1, 'reply', %s, %s, 'Aside, Wren: is the invoices table the only one that timed out?', "
              "'2026-11-30 08:07+00')", (SIDE, SIDE_TURN, LARK, LARK))
    return c


def body(c, conversation, turn, model):
    """The turn's body for `model` (its answerer's model, set for the transaction), as
    preview_turn returns it: the text and the parsed body."""
    c.execute("BEGIN")
    try:
        c.execute("UPDATE prompt.users SET model = %s WHERE id = %s", (model, WREN))
        text = c.execute("SELECT prompt.preview_turn(%s, %s)::text", (conversation, turn)).fetchone()[0]
    finally:
        c.execute("ROLLBACK")
    return text, json.loads(text)


def parts(wire, b):
    """The request as (role, part) pairs in order, cache markers aside: what a prefix
    cache compares, whichever way the wire groups parts into messages."""
    def bare(p):
        return json.dumps({k: v for k, v in p.items() if k not in ("cache_control", "prompt_cache_breakpoint")}, sort_keys=True) if isinstance(p, dict) else p
    if wire == "anthropic":
        out = [("system", bare(p)) for p in b.get("system", [])]
        return out + [(m["role"], bare(p)) for m in b["messages"] for p in m["content"]]
    if wire == "gemini":
        out = [("system", bare(p)) for p in b.get("systemInstruction", {}).get("parts", [])]
        return out + [(c["role"], bare(p)) for c in b["contents"] for p in c["parts"]]
    items = b["messages"] if wire == "chat" else b["input"]
    out = []
    for i in items:
        role = i.get("role", i.get("type"))
        content = i.get("content")
        if isinstance(content, list):
            out += [(role, bare(p)) for p in content]
        else:
            out.append((role, bare(i)))
    return out


def test_a_side_answers_as_its_captured_turns_answerer(sdb):
    assert sdb.execute("SELECT answerer_id::text FROM prompt.conversations WHERE id = %s", (SIDE,)).fetchone()[0] == WREN
    explained = sdb.execute("SELECT prompt.explain_turn(%s, %s)", (SIDE, SIDE_TURN)).fetchone()[0]
    assert explained["model"] == "claude-sonnet-5", "wren's model, not lark's"


@pytest.mark.parametrize("wire", list(MODELS))
def test_the_first_request_extends_the_parents(sdb, wire):
    parent_text, parent = body(sdb, PARENT, WRENS_TURN, MODELS[wire])
    side_text, side = body(sdb, SIDE, SIDE_TURN, MODELS[wire])
    assert_valid_wire(wire, side)
    before, after = parts(wire, parent), parts(wire, side)
    assert after[: len(before)] == before, "the parent's request, part for part"
    assert len(after) > len(before)
    if wire in ("chat", "responses") and "prompt_cache_options" not in parent:
        # No cache marker on these wires (for a model without explicit breakpoints):
        # byte for byte, up to the parent's last part.
        items = parent["messages" if wire == "chat" else "input"]
        last = items[-1]["content"][-1] if isinstance(items[-1].get("content"), list) else items[-1]
        spelled = json.dumps(last, ensure_ascii=False, separators=(",", ":"))
        end = parent_text.rindex(spelled) + len(spelled)
        assert side_text.startswith(parent_text[:end])
    # prompt_cache_key: the parent's, so the Side reads the parent's cache.
    if wire in ("chat", "responses"):
        assert side["prompt_cache_key"] == parent["prompt_cache_key"] == PARENT
    golden = GOLDEN / f"side_{wire}.json"
    if os.environ.get("GOLDEN_UPDATE"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(side, indent=1, ensure_ascii=False) + "\n")
    assert side == json.loads(golden.read_text()), f"whole body: {golden}"


def test_the_parents_turns_read_as_the_captured_answerer_reads_them(sdb):
    """Taken during wren's turn of lark's conversation: wren's earlier reply is its own
    (assistant), lark's reads as a correspondent's, and nothing after the capture."""
    _, side = body(sdb, SIDE, SIDE_TURN, "gpt-5.5-vision")
    messages = side["messages"]
    texts = [m["content"] if isinstance(m["content"], str) else " ".join(p.get("text", "") for p in m["content"])
             for m in messages]
    assert any(m["role"] == "assistant" and "02:14 with a timeout" in t for m, t in zip(messages, texts))
    lark = [t for m, t in zip(messages, texts) if "Export failed at 02:14; Grace reruns" in t]
    assert lark and all('from="@lark"' in t for t in lark)
    # The captured turn's seed (the last of the parent's it reads), then the Side's input,
    # one user message on this wire.
    assert texts[-1].index("Wren, confirm the rerun window") < texts[-1].index("Aside, Wren")
    # A turn the parent gets after the capture is not the Side's.
    sdb.execute("BEGIN")
    try:
        sdb.execute("INSERT INTO prompt.turns (conversation_id, seq, kind, role, author_id, content) "
                    "VALUES (%s, 8, 'message', 'user', %s, 'After the capture.')", (PARENT, ADA))
        _, again = body(sdb, SIDE, SIDE_TURN, "gpt-5.5-vision")
    finally:
        sdb.execute("ROLLBACK")
    assert again == side


def test_a_side_taken_from_larks_turn_reads_wren_as_a_correspondent(sdb):
    sdb.execute("BEGIN")
    try:
        sdb.execute("INSERT INTO prompt.conversations (id, workspace_id, kind, creator_id, parent_id, captured_turn_id) "
                    "VALUES ('00000000-0000-4000-8000-00000000c052', %s, 'side', %s, %s, %s)", (WS, ADA, PARENT, LARKS_TURN))
        answerer = sdb.execute("SELECT answerer_id::text FROM prompt.conversations "
                               "WHERE id = '00000000-0000-4000-8000-00000000c052'").fetchone()[0]
        sdb.execute("INSERT INTO prompt.turns (conversation_id, seq, kind, author_id, poster_id, prompt) "
                    "VALUES ('00000000-0000-4000-8000-00000000c052', 1, 'reply', %s, %s, 'And the refund?') RETURNING id",
                    (ADA, ADA))
        turn = sdb.execute("SELECT id FROM prompt.turns WHERE conversation_id = '00000000-0000-4000-8000-00000000c052'").fetchone()[0]
        text = sdb.execute("SELECT prompt.preview_turn('00000000-0000-4000-8000-00000000c052', %s)::text", (turn,)).fetchone()[0]
    finally:
        sdb.execute("ROLLBACK")
    assert answerer == LARK
    assert 'from=\\"@wren\\"' in text and "Wren, confirm the rerun window" not in text


def test_captures_are_checked_on_write(sdb):
    with pytest.raises(psycopg.Error) as e:
        sdb.execute("INSERT INTO prompt.conversations (workspace_id, kind, parent_id, captured_turn_id) "
                    "VALUES (%s, 'side', %s, %s)", (WS, PARENT, SIDE_TURN))
    assert e.value.sqlstate == "22023" and str(e.value).startswith("side_invalid")
    with pytest.raises(psycopg.Error) as e:
        sdb.execute("INSERT INTO prompt.conversations (workspace_id, kind, parent_id, captured_turn_id, answerer_id) "
                    "VALUES (%s, 'side', %s, %s, %s)", (WS, PARENT, WRENS_TURN, LARK))
    assert e.value.sqlstate == "22023" and "captured turn's answerer" in str(e.value)
    with pytest.raises(psycopg.Error) as e:
        sdb.execute("INSERT INTO prompt.conversations (workspace_id, kind, parent_id, captured_turn_id) "
                    "VALUES (%s, 'conversation', %s, %s)", (WS, PARENT, WRENS_TURN))
    assert e.value.sqlstate == "23514"


def test_a_side_whose_capture_is_gone_is_refused(sdb):
    sdb.execute("BEGIN")
    try:
        sdb.execute("SET LOCAL pgprompt.allow_history_rewrite = on")
        sdb.execute("DELETE FROM prompt.turns WHERE id = %s", (WRENS_TURN,))
        with pytest.raises(psycopg.Error) as e:
            sdb.execute("SELECT prompt.preview_turn(%s, %s)", (SIDE, SIDE_TURN))
    finally:
        sdb.execute("ROLLBACK")
    assert e.value.sqlstate == "P0002" and "captured" in str(e.value)


def test_a_sides_rows_outlive_its_parent(sdb):
    """Deleting the parent keeps the Side's rows (parent_id set NULL): its sealed turns
    return what was sealed, an unsealed one is refused naming the capture."""
    sdb.execute("BEGIN")
    try:
        sealed = sdb.execute("SELECT prompt.compile_turn(%s, %s)::text", (SIDE, SIDE_TURN)).fetchone()[0]
        other = sdb.execute("INSERT INTO prompt.turns (conversation_id, seq, kind, author_id, poster_id, prompt) "
                            "VALUES (%s, 2, 'reply', %s, %s, 'And then?') RETURNING id", (SIDE, ADA, ADA)).fetchone()[0]
        sdb.execute("DELETE FROM prompt.conversations WHERE id = %s", (PARENT,))
        assert sdb.execute("SELECT parent_id FROM prompt.conversations WHERE id = %s", (SIDE,)).fetchone()[0] is None
        again = sdb.execute("SELECT prompt.compile_turn(%s, %s)::text", (SIDE, SIDE_TURN)).fetchone()[0]
        with pytest.raises(psycopg.Error) as e:
            sdb.execute("SELECT prompt.preview_turn(%s, %s)", (SIDE, other))
    finally:
        sdb.execute("ROLLBACK")
    assert again == sealed
    assert e.value.sqlstate == "P0002" and "whose conversation was deleted" in str(e.value)


def test_a_capture_moved_to_a_turn_elsewhere_is_refused(sdb):
    with pytest.raises(psycopg.Error) as e:
        sdb.execute("UPDATE prompt.conversations SET captured_turn_id = %s WHERE id = %s", (SIDE_TURN, SIDE))
    assert e.value.sqlstate == "22023" and "is not a turn of conversation" in str(e.value)
    sdb.execute("BEGIN")
    try:
        sdb.execute("UPDATE prompt.conversations SET answerer_id = NULL WHERE id = %s", (PARENT,))
        sdb.execute("UPDATE prompt.turns SET answerer_id = NULL WHERE id = %s", (LARKS_TURN,))
        with pytest.raises(psycopg.Error) as e:
            sdb.execute("INSERT INTO prompt.conversations (workspace_id, kind, parent_id, captured_turn_id) "
                        "VALUES (%s, 'side', %s, %s)", (WS, PARENT, LARKS_TURN))
    finally:
        sdb.execute("ROLLBACK")
    assert e.value.sqlstate == "22023" and "has no answerer" in str(e.value)


RUN_TURN = "00000000-0000-4000-8000-0000000f1008"
FROZEN_SIDE = "00000000-0000-4000-8000-00000000c052"
ROUND = ("INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results) VALUES (%s, %s, %s, %s, %s)")


def side_request(c, turn):
    return json.loads(c.execute("SELECT prompt.compile_turn(%s, %s)::text", (FROZEN_SIDE, turn)).fetchone()[0])


@pytest.mark.parametrize("wire", list(MODELS))
def test_a_side_freezes_what_it_captured(sdb, wire):
    """A Side reads its captured turn as it stood when the Side was created.
    Captured mid-run, the turn then gets a round and its answer: the Side's second
    request still extends its first, and neither carries what came after the capture."""
    c = sdb
    c.execute("BEGIN")
    try:
        c.execute("UPDATE prompt.users SET model = %s WHERE id = %s", (MODELS[wire], WREN))
        c.execute("INSERT INTO prompt.turns (conversation_id, id, seq, kind, answerer_id, poster_id, prompt, mode, created_at) "
                  "VALUES (%s, %s, 8, 'reply', %s, %s, 'Wren, find when the rerun is.', 'run', '2026-11-30 08:07+00')",
                  (PARENT, RUN_TURN, WREN, LARK))
        c.execute(ROUND, (PARENT, RUN_TURN, 1, json.dumps([{"type": "text", "text": "Looking at the scheduler."}]), "[]"))
        c.execute("INSERT INTO prompt.conversations (id, workspace_id, kind, creator_id, parent_id, captured_turn_id) "
                  "VALUES (%s, %s, 'side', %s, %s, %s)", (FROZEN_SIDE, WS, ADA, PARENT, RUN_TURN))
        state = c.execute("SELECT captured_round, captured_content FROM prompt.conversations WHERE id = %s",
                          (FROZEN_SIDE,)).fetchone()
        assert state == (1, None), "the capture trigger keeps the turn as it stood"
        first_turn, second_turn = ("00000000-0000-4000-8000-0000000f520" + n for n in "12")
        c.execute("INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, created_at) "
                  "VALUES (%s, %s, 1, 'reply', %s, 'Aside: which scheduler?', '2026-11-30 08:08+00')",
                  (FROZEN_SIDE, first_turn, ADA))
        first = side_request(c, first_turn)
        assert_valid_wire(wire, first)
        # The captured turn grows: a round, then its answer.
        c.execute(ROUND, (PARENT, RUN_TURN, 2, json.dumps([{"type": "text", "text": "AFTER-CAPTURE round"}]), "[]"))
        c.execute("UPDATE prompt.turns SET content = 'AFTER-CAPTURE answer: 13:00.' WHERE id = %s", (RUN_TURN,))
        c.execute("UPDATE prompt.turns SET content = 'The cron one.' WHERE id = %s", (first_turn,))
        c.execute("INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, created_at) "
                  "VALUES (%s, %s, 2, 'reply', %s, 'And the timezone?', '2026-11-30 08:09+00')",
                  (FROZEN_SIDE, second_turn, ADA))
        second = side_request(c, second_turn)
        assert_valid_wire(wire, second)
        before, after = parts(wire, first), parts(wire, second)
        assert after[: len(before)] == before, "the Side's second request extends its first"
        assert "Looking at the scheduler." in json.dumps(second)
        assert "AFTER-CAPTURE" not in json.dumps(second), "nothing the captured turn got after the capture"
        # The parent itself reads its turn as it is now.
        parent = json.loads(c.execute("SELECT prompt.preview_turn(%s, %s)::text", (PARENT, RUN_TURN)).fetchone()[0])
        assert "AFTER-CAPTURE round" in json.dumps(parent)
    finally:
        c.execute("ROLLBACK")
