"""Tool-result clearing (request_options.clear_tool_results, SPEC §16.3) through the
extension, on every wire: a run's older results are sent as the placeholder once its
requests pass the trigger, the step is stored with the round that first carried it
(rounds.cleared, covered by the round's digest), every later request and every later turn
sends them cleared, estimate_turn and explain_turn list them, each body validates with its
provider's SDK types, and nobody but pgprompt writes what was cleared."""
import json

import psycopg
import pytest

from conftest import grant_all_carelessly, make_database
from converse_types import assert_valid_converse
from test_response_loop import MODELS, new_conversation
from test_wire_types import ANTHROPIC, CHAT, RESPONSES, assert_valid, assert_valid_gemini

ADA, LARK = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
PLACEHOLDER = "[tool result cleared]"
TOOLS = json.dumps([{"name": "read", "description": "Read a file.", "input_schema": {"type": "object"}},
                    {"name": "notes", "description": "Read the notes.", "input_schema": {"type": "object"}}])
RULE = {"trigger": 300, "keep": 1}
WIRES = ["anthropic", "chat", "responses", "gemini", "converse"]


@pytest.fixture(scope="module")
def cdb():
    c = make_database("pgprompt_clearing")
    c.execute("DROP ROLE IF EXISTS pgprompt_clear_careless")
    c.execute("CREATE ROLE pgprompt_clear_careless")
    c.execute("GRANT USAGE ON SCHEMA prompt TO pgprompt_clear_careless")
    grant_all_carelessly(c, "pgprompt_clear_careless")
    yield c
    c.close()


def validate(wire: str, body: dict) -> None:
    if wire == "anthropic":
        assert_valid(ANTHROPIC, body)
    elif wire == "chat":
        assert_valid(CHAT, body)
    elif wire == "responses":
        assert_valid(RESPONSES, body)
    elif wire == "gemini":
        assert_valid_gemini(body)
    else:
        assert_valid_converse(body)


def content(n: int) -> str:
    return f"file {n}: " + "ledger line with an amount and a date. " * 15


def add_round(c, conv, turn, n, tool="read"):
    captures = [{"name": "shot.png", "media_type": "image/png", "data": "aGk="}] if n == 1 else []
    c.execute("INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results) VALUES (%s, %s, %s, %s, %s)",
              (conv, turn, n,
               json.dumps([{"type": "text", "text": f"Reading part {n}."},
                           {"type": "tool_call", "id": f"c{n}", "name": tool, "input": {"part": n}}]),
               json.dumps([{"call_id": f"c{n}", "content": content(n), "captures": captures}])))


def run(c, wire, rule=RULE, rounds=3):
    conv = new_conversation(c, wire)
    turn = str(c.execute(
        "INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, mode, model, tools, request_options) "
        "VALUES (%s, 'reply', %s, 'Find the double charge.', 'run', %s, %s, %s) RETURNING id",
        (conv, ADA, MODELS[wire], TOOLS, json.dumps({"clear_tool_results": rule}))).fetchone()[0])
    bodies = [c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]]
    for n in range(1, rounds + 1):
        add_round(c, conv, turn, n)
        bodies.append(c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0])
    return conv, turn, bodies


@pytest.mark.parametrize("wire", WIRES)
def test_a_long_run_is_sent_cleared_and_stays_cleared(cdb, wire):
    c = cdb
    conv, turn, bodies = run(c, wire)
    last = bodies[-1]
    validate(wire, json.loads(last))
    assert last.count(PLACEHOLDER) == 2, last
    assert "file 1:" not in last and "file 2:" not in last and "file 3:" in last
    assert "aGk=" not in last, "a cleared result's picture goes with it"
    # Round 2's request (rounds 1 and 2) was above the trigger: it cleared round 1; round 3's
    # cleared round 2. Each step is stored with the round that first carried it.
    stored = dict(c.execute("SELECT n, cleared FROM prompt.rounds WHERE turn_id = %s ORDER BY n", (turn,)).fetchall())
    assert stored[1] is None
    assert stored[2] == {"placeholder": PLACEHOLDER, "results": [{"round": 1, "call_id": "c1"}]}
    assert stored[3] == {"placeholder": PLACEHOLDER, "results": [{"round": 2, "call_id": "c2"}]}
    assert c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0] == last, \
        "the same rows give the same bytes"
    assert c.execute("SELECT count(*) FROM prompt.verify_seals(%s)", (conv,)).fetchone()[0] == 0
    rows = c.execute("SELECT selected, tokens, skipped_reason FROM prompt.estimate_turn(%s, %s) "
                     "WHERE block = 'cleared_tool_result' ORDER BY selected", (conv, turn)).fetchall()
    assert [(r[0], r[2]) for r in rows] == [(1, "call c1 of tool read cleared"), (2, "call c2 of tool read cleared")]
    assert all(r[1] > 100 for r in rows), rows
    listed = c.execute("SELECT prompt.explain_turn(%s, %s) -> 'estimate' -> 'cleared'", (conv, turn)).fetchone()[0]
    assert [(x["round"], x["call_id"], x["tool"]) for x in listed] == [(1, "c1", "read"), (2, "c2", "read")]

    # A later turn of the conversation reads the run as its requests cleared it.
    c.execute("UPDATE prompt.turns SET content = 'Found it.' WHERE id = %s", (turn,))
    later = str(c.execute(
        "INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
        "VALUES (%s, 'reply', %s, 'And now?', %s) RETURNING id", (conv, ADA, MODELS[wire])).fetchone()[0])
    text = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, later)).fetchone()[0]
    validate(wire, json.loads(text))
    assert "file 1:" not in text and "file 2:" not in text and "file 3:" in text, text
    rows = c.execute("SELECT selected, skipped_reason FROM prompt.estimate_turn(%s, %s) "
                     "WHERE block = 'cleared_tool_result' ORDER BY selected", (conv, later)).fetchall()
    assert rows == [(1, f"call c1 of tool read cleared, in turn {turn}"), (2, f"call c2 of tool read cleared, in turn {turn}")]


def test_every_request_extends_the_last_between_steps(cdb):
    c = cdb
    # Under clear_at_least, the second request takes no step (round 1 alone is too little
    # to clear); the third clears rounds 1 and 2 at once.
    conv, turn, bodies = run(c, "anthropic", {"trigger": 300, "keep": 1, "clear_at_least": 250}, rounds=4)

    def extends(later, earlier):
        """Every message of `earlier` is sent again, unchanged, at the head of `later`."""
        a, b = json.loads(earlier)["messages"], json.loads(later)["messages"]
        return b[: len(a)] == a

    steps = [n for n, in c.execute("SELECT n FROM prompt.rounds WHERE turn_id = %s AND cleared IS NOT NULL ORDER BY n",
                                   (turn,)).fetchall()]
    assert steps == [3], steps
    assert extends(bodies[1], bodies[0]) and extends(bodies[2], bodies[1]), "round 2's request extends round 1's"
    assert not extends(bodies[3], bodies[2]), "round 3's request cleared"
    assert extends(bodies[4], bodies[3]), "round 4's request extends round 3's"
    assert bodies[4].count(PLACEHOLDER) == 2, "round 3 (no longer the newest) waits for the next step"


def test_nobody_but_pgprompt_writes_what_was_cleared_or_laid(cdb):
    c = cdb
    conv, turn, _ = run(c, "chat")
    c.execute("SET ROLE pgprompt_clear_careless")
    try:
        for sql, args in (
            ("UPDATE prompt.rounds SET cleared = NULL WHERE turn_id = %s AND n = 2", (turn,)),
            ("UPDATE prompt.rounds SET cleared = '{\"placeholder\": \"x\", \"results\": []}' WHERE turn_id = %s AND n = 1",
             (turn,)),
            ("INSERT INTO prompt.rounds (conversation_id, turn_id, n, cleared) "
             "VALUES (%s, %s, 4, '{\"placeholder\": \"x\", \"results\": [{\"round\": 3, \"call_id\": \"c3\"}]}')",
             (conv, turn)),
            # Nor the layout a request stored when it was sent.
            ("UPDATE prompt.rounds SET sent_layout = NULL WHERE turn_id = %s AND n = 3", (turn,)),
            ("UPDATE prompt.rounds SET sent_layout = '\\x01' WHERE turn_id = %s AND n = 1", (turn,)),
            ("INSERT INTO prompt.rounds (conversation_id, turn_id, n, sent_layout) VALUES (%s, %s, 4, '\\x01')",
             (conv, turn)),
        ):
            with pytest.raises(psycopg.Error) as e:
                with c.transaction():
                    c.execute(sql, args)
            assert e.value.sqlstate in ("55000", "42501"), (sql, e.value.sqlstate, str(e.value))
    finally:
        c.execute("RESET ROLE")
    assert c.execute("SELECT count(*) FROM prompt.verify_seals(%s)", (conv,)).fetchone()[0] == 0


def report_rows(conn, conv):
    return conn.execute("SELECT * FROM prompt.cache_report(%s) ORDER BY 1, 2", (conv,)).fetchall()


def statements_reading_rounds(conn, conv):
    """The statements cache_report runs that read a round's content (what compiling a
    continuation again reads)."""
    from test_response_loop import statements_run
    ran = statements_run(conn, "SELECT prompt.cache_report(%s)", (conv,))
    return [q for q in ran if "prompt.rounds" in q and "assistant" in q]


def reported_from_layouts(c, conv, turn, requests, rows=None):
    """The report of a run read from the layouts its requests stored, compiling none
    again, checked equal to the report compiled again with its layouts set aside (as a
    request sent by 0.5 is read). Its rows are the run's `requests` (or `rows`: (turn,
    step) of every request of the conversation)."""
    from conftest import connect
    from test_cache_report import as_replica
    fresh = connect(c.info.dbname)
    try:
        assert statements_reading_rounds(fresh, conv) == [], "no continuation compiled again"
        laid = report_rows(fresh, conv)
    finally:
        fresh.close()
    assert [(str(r[0]), r[1]) for r in laid] == (rows or [(turn, n) for n in range(requests)])
    as_replica(c, "UPDATE prompt.rounds SET sent_layout = NULL WHERE turn_id = %s", (turn,))
    fresh = connect(c.info.dbname)
    try:
        assert statements_reading_rounds(fresh, conv) != [], "compiled again without its layouts"
        assert report_rows(fresh, conv) == laid
    finally:
        fresh.close()


@pytest.mark.parametrize("wire", WIRES)
def test_a_runs_requests_are_reported_from_the_layouts_they_stored(cdb, wire):
    """Each continuation stores its cache layout with the newest round it carried
    (rounds.sent_layout): the report reads the run's requests from it and the seal's,
    compiling none again, through clearing steps and without; what it reports is what
    compiling them again reports; and a request that extends the one before stores only
    what it adds."""
    c = cdb
    conv, turn, _ = run(c, wire, rounds=4)
    stored = c.execute("SELECT n, sent_layout IS NOT NULL FROM prompt.rounds WHERE turn_id = %s ORDER BY n",
                       (turn,)).fetchall()
    assert stored == [(n, True) for n in range(1, 5)], stored
    reported_from_layouts(c, conv, turn, 5)
    # Without a step, each request extends the one before: it stores its own round's
    # blocks, not the earlier rounds' again.
    conv, turn, _ = run(c, wire, rule={"trigger": 1000000, "keep": 1}, rounds=4)
    sizes = dict(c.execute("SELECT n, length(sent_layout) FROM prompt.rounds WHERE turn_id = %s", (turn,)).fetchall())
    assert sizes[4] < 1.5 * sizes[1], sizes
    reported_from_layouts(c, conv, turn, 5)


def test_the_option_is_refused_on_write_with_its_path(cdb):
    c = cdb
    with pytest.raises(psycopg.Error) as e:
        with c.transaction():
            c.execute("UPDATE prompt.users SET request_options = %s WHERE id = %s",
                      (json.dumps({"clear_tool_results": {"keep": 2}}), LARK))
    assert e.value.sqlstate == "22023", e.value.sqlstate
    assert "clear_tool_results needs a trigger" in str(e.value)


def test_a_step_no_request_can_store_is_not_taken(cdb):
    """Found by the hostile review: after an in-turn summary longer than what it replaced,
    the request whose newest round was sent already passed the trigger; it cleared, stored
    nothing, and the next request sent the results whole again. Now such a request takes
    no step; the next round's request takes it and stores it."""
    c = cdb
    conv, turn, _ = run(c, "chat", {"trigger": 1000, "keep": 1}, rounds=3)
    assert c.execute("SELECT count(cleared) FROM prompt.rounds WHERE turn_id = %s", (turn,)).fetchone()[0] == 0
    c.execute("UPDATE prompt.turns SET summary = %s, summary_round = 2 WHERE id = %s",
              ("Summary: " + "we looked at many ledgers and noted the totals. " * 60, turn))
    after = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
    total = c.execute("SELECT (prompt.explain_turn(%s, %s) -> 'estimate' ->> 'total')::int", (conv, turn)).fetchone()[0]
    assert total > 1000 and PLACEHOLDER not in after, total
    add_round(c, conv, turn, 4)
    fourth = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
    assert fourth.count(PLACEHOLDER) == 2, "rounds 2 and 3 (round 1 is in the summary)"
    assert c.execute("SELECT n FROM prompt.rounds WHERE turn_id = %s AND cleared IS NOT NULL", (turn,)).fetchall() == [(4,)]
    c.execute("UPDATE prompt.turns SET summary = 'Summary: ledgers checked.' WHERE id = %s", (turn,))
    add_round(c, conv, turn, 5)
    fifth = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
    assert "file 2:" not in fifth and "file 3:" not in fifth, "what a stored step cleared never comes back"


def test_a_side_reads_what_was_cleared_at_its_capture(cdb):
    """Found by the hostile review: a Side opened while the parent's round 2 was written
    but not yet sent read round 1 whole; the parent's next request stored a step on round
    2 clearing round 1, and the Side's next turn read round 1 cleared. A Side reads its
    captured turn as it stood: the records of then (conversations.captured_cleared)."""
    c = cdb
    conv, turn, _ = run(c, "anthropic", {"trigger": 300, "keep": 1}, rounds=1)
    add_round(c, conv, turn, 2)
    side = str(c.execute("INSERT INTO prompt.conversations (workspace_id, kind, creator_id, parent_id, captured_turn_id) "
                         "SELECT workspace_id, 'side', creator_id, id, %s FROM prompt.conversations WHERE id = %s "
                         "RETURNING id", (turn, conv)).fetchone()[0])

    def side_turn(prompt):
        t = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                      "VALUES (%s, 'reply', %s, %s, %s) RETURNING id", (side, ADA, prompt, MODELS["anthropic"])).fetchone()[0]
        return c.execute("SELECT prompt.compile_turn(%s, %s)::text", (side, t)).fetchone()[0], t

    first, s1 = side_turn("What did you read?")
    assert "file 1:" in first
    c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
    assert c.execute("SELECT cleared IS NOT NULL FROM prompt.rounds WHERE turn_id = %s AND n = 2", (turn,)).fetchone()[0]
    c.execute("UPDATE prompt.turns SET content = 'Two files.' WHERE id = %s", (s1,))
    second, _ = side_turn("And the first?")
    assert "file 1:" in second, "the Side reads round 1 as it stood at the capture"
    # A Side opened now reads what was cleared then, and no one writes the capture by hand.
    later = str(c.execute("INSERT INTO prompt.conversations (workspace_id, kind, creator_id, parent_id, captured_turn_id) "
                          "SELECT workspace_id, 'side', creator_id, id, %s FROM prompt.conversations WHERE id = %s "
                          "RETURNING id", (turn, conv)).fetchone()[0])
    assert c.execute("SELECT captured_cleared FROM prompt.conversations WHERE id = %s", (later,)).fetchone()[0] == [
        {"placeholder": PLACEHOLDER, "results": [{"round": 1, "call_id": "c1"}]}]
    with pytest.raises(psycopg.Error) as e:
        with c.transaction():
            c.execute("UPDATE prompt.conversations SET captured_cleared = NULL WHERE id = %s", (later,))
    assert e.value.sqlstate in ("55000", "42501"), e.value.sqlstate


def test_a_writers_trigger_cannot_forge_what_was_cleared(cdb):
    """Found by the second hostile review: a careless GRANT ALL lets a writer plant a BEFORE
    INSERT trigger that runs after pgprompt's (its name sorts later) and sets a clearing
    record, a sent mark and its digest on the round it inserts; the record then replaced an
    already-sent result with the writer's text. The row is checked again after every BEFORE
    trigger, and a record whose placeholder is not the turn's rule's is not read."""
    c = cdb
    conv, turn, _ = run(c, "chat", {"trigger": 100000, "keep": 1}, rounds=2)
    c.execute("GRANT CREATE ON SCHEMA public TO pgprompt_clear_careless")
    c.execute("SET ROLE pgprompt_clear_careless")
    try:
        c.execute("""CREATE FUNCTION public.clear_forge() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              NEW.cleared := '{"placeholder": "FORGED EUR 99999.", "results": [{"round": 2, "call_id": "c2"}]}';
              NEW.sent_at := now();
              NEW.sent_digest := sha256(convert_to(jsonb_build_array(NEW.assistant, NEW.results, NEW.steers, NEW.aborted,
                                                                     NEW.cleared)::text, 'UTF8'));
              RETURN NEW;
            END $$""")
        c.execute("CREATE TRIGGER zz_clear_forge BEFORE INSERT ON prompt.rounds FOR EACH ROW EXECUTE FUNCTION public.clear_forge()")
        with pytest.raises(psycopg.Error) as e:
            with c.transaction():
                add_round(c, conv, turn, 3)
        assert e.value.sqlstate in ("55000", "42501"), (e.value.sqlstate, str(e.value))
    finally:
        c.execute("RESET ROLE")
        c.execute("DROP TRIGGER IF EXISTS zz_clear_forge ON prompt.rounds")
        c.execute("DROP FUNCTION IF EXISTS public.clear_forge()")
    # A record pgprompt did not write (an administrator's restore can bring any row back) is
    # not read where the turn's rule says another placeholder.
    add_round(c, conv, turn, 3)
    c.execute("ALTER TABLE prompt.rounds DISABLE TRIGGER USER")
    try:
        c.execute("UPDATE prompt.rounds SET cleared = %s WHERE turn_id = %s AND n = 3",
                  (json.dumps({"placeholder": "FORGED EUR 99999.", "results": [{"round": 2, "call_id": "c2"}]}),
                   turn))
    finally:
        c.execute("ALTER TABLE prompt.rounds ENABLE TRIGGER USER")
    text = c.execute("SELECT prompt.preview_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
    assert "99999" not in text and "file 2:" in text


def test_a_step_is_stored_even_when_a_sibling_read_its_round_meanwhile(cdb):
    """Found by the second hostile review: a sibling turn's seal that read the run's newest
    round in history (marking it sent by digest) while the run's compile_turn was running
    left the run's step sent but not stored; and a round a sibling had read took no step,
    until the gate refused the run for good. A step is stored with the round's first
    request of its own turn, whoever read it before."""
    import threading
    import time
    from conftest import connect
    c = cdb
    conv, turn, _ = run(c, "chat", {"trigger": 300, "keep": 1}, rounds=3)
    add_round(c, conv, turn, 4)
    sibling = str(c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                            "VALUES (%s, 'reply', %s, 'Meanwhile?', %s) RETURNING id", (conv, ADA, MODELS["chat"])).fetchone()[0])
    preview = c.execute("SELECT prompt.preview_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
    a, b = connect("pgprompt_clearing"), connect("pgprompt_clearing")
    try:
        b.execute("BEGIN")
        b.execute("SELECT prompt.compile_turn(%s, %s)", (conv, sibling))
        out = {}
        t = threading.Thread(target=lambda: out.update(a=a.execute("SELECT prompt.compile_turn(%s, %s)::text",
                                                                   (conv, turn)).fetchone()[0]))
        t.start()
        time.sleep(1)
        b.execute("COMMIT")
        t.join()
    finally:
        a.close()
        b.close()
    assert out["a"] == preview
    assert c.execute("SELECT cleared IS NOT NULL FROM prompt.rounds WHERE turn_id = %s AND n = 4", (turn,)).fetchone()[0]
    again = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
    assert again == out["a"], "the same rows give the same bytes"
    assert c.execute("SELECT count(*) FROM prompt.verify_seals(%s)", (conv,)).fetchone()[0] == 0


def test_a_session_that_cannot_store_a_step_is_refused(cdb):
    """Found by the second hostile review: compile_turn in a READ ONLY transaction took a
    step it could not store. It is refused (seal_read_only); preview_turn shows it."""
    c = cdb
    conv, turn, _ = run(c, "chat", {"trigger": 300, "keep": 1}, rounds=1)
    add_round(c, conv, turn, 2)
    with pytest.raises(psycopg.Error) as e:
        with c.transaction():
            c.execute("SET TRANSACTION READ ONLY")
            c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
    assert e.value.sqlstate == "25006", e.value.sqlstate
    assert PLACEHOLDER in c.execute("SELECT prompt.preview_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
