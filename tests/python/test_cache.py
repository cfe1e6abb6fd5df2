"""Prompt caching through SQL: the Anthropic breakpoints (at most four, the last at the
newest history entry, the TTL from models.cache_ttl), chat's prompt_cache_key, and
cache-stable trimming driven the way an application drives it (compile, seal, answer):
the previous answerer's cut is read from its seal, so consecutive requests extend each
other except where history is cut down to its low water."""
import json
import random

import pytest

from conftest import connect

NAME = "pgprompt_cache_test"
WS, ADA, LARK = ("00000000-0000-4000-8000-0000000cb001", "00000000-0000-4000-8000-0000000cb101",
                 "00000000-0000-4000-8000-0000000cb102")
CONV = {"stable": "00000000-0000-4000-8000-0000000cbc01", "newest": "00000000-0000-4000-8000-0000000cbc02"}
AGENT = {"stable": LARK, "newest": "00000000-0000-4000-8000-0000000cb103"}
WORDS = "invoice refund charge ledger export ticket the a of today".split()


def template(trim):
    return json.dumps({"blocks": [{"type": "slot", "slot": "system_prompt"},
                                  {"type": "history", "budget": {"trim": trim}}, {"type": "input"}]})


@pytest.fixture(scope="module")
def cdb():
    with connect("postgres") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {NAME}")
        admin.execute(f"CREATE DATABASE {NAME}")
    c = connect(NAME)
    c.execute("CREATE EXTENSION pgprompt")
    c.execute("INSERT INTO prompt.models (name, wire, advisory_window, cache_ttl) VALUES ('small', 'anthropic', 1500, '1h')")
    c.execute("INSERT INTO prompt.models (name, wire, advisory_window) VALUES ('gpt', 'chat', 1500)")
    c.execute("INSERT INTO prompt.workspaces (id, name) VALUES (%s, 'W')", (WS,))
    c.execute("INSERT INTO prompt.users (id, handle, display_name, kind) VALUES (%s, 'ada', 'Ada', 'human')", (ADA,))
    for trim, agent in AGENT.items():
        c.execute("INSERT INTO prompt.users (id, handle, display_name, kind, model, prompt_mechanism, prompt_template) "
                  "VALUES (%s, %s, %s, 'agent', 'small', 'assembly', %s)", (agent, f"a_{trim}", trim, template(trim)))
        c.execute("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, 'system_prompt', 'You are {{agent}}.')", (agent,))
        c.execute("INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)",
                  (CONV[trim], WS, agent, ADA))
    yield c
    c.close()


def parts(body):
    out = [("system", b["text"]) for b in body.get("system", [])]
    for m in body["messages"]:
        out += [(m["role"], p["text"]) for p in m["content"]]
    return out


def drive(c, trim, n):
    """n turns: compile (seals), then write the answer; returns (parts, history) per turn."""
    rng = random.Random(5)
    text = lambda who, i: f"{who} {i}: " + " ".join(rng.choice(WORDS) for _ in range(8 + rng.randrange(30)))  # noqa: E731
    steps = []
    for i in range(n):
        turn = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt) VALUES (%s, 'reply', %s, %s) "
                         "RETURNING id", (CONV[trim], ADA, text("question", i))).fetchone()[0]
        body = c.execute("SELECT prompt.compile_turn(%s, %s)", (CONV[trim], turn)).fetchone()[0]
        again = c.execute("SELECT prompt.preview_turn(%s, %s)::text = prompt.compile_turn(%s, %s)::text",
                          (CONV[trim], turn, CONV[trim], turn)).fetchone()[0]
        history = c.execute("SELECT prompt.explain_turn(%s, %s) -> 'estimate' -> 'history'", (CONV[trim], turn)).fetchone()[0]
        steps.append((parts(body), history, again, body))
        c.execute("UPDATE prompt.turns SET content = %s WHERE id = %s", (text("answer", i), turn))
    return steps


def extends(earlier, later):
    return later[:len(earlier)] == earlier


def test_stable_trimming_through_sql(cdb):
    steps = drive(cdb, "stable", 70)
    reasons = [h["skipped_reason"] for _, h, _, _ in steps]
    assert "low_water" in reasons and "stable_cut" in reasons, reasons
    for i in range(1, len(steps)):
        (before, _, _, _), (after, h, same, _) = steps[i - 1], steps[i]
        assert same, f"turn {i}: the same rows give the same bytes"
        if h["skipped_reason"] == "low_water":
            assert h["tokens"] <= 0.7 * h["budget"], h
        else:
            assert extends(before, after), f"turn {i} ({h['skipped_reason']}): the request extends the previous one"
    # estimate_turn says which rule cut.
    last = cdb.execute("SELECT id FROM prompt.turns WHERE conversation_id = %s ORDER BY seq DESC LIMIT 1",
                       (CONV["stable"],)).fetchone()[0]
    row = cdb.execute("SELECT skipped_reason FROM prompt.estimate_turn(%s, %s) WHERE block = 'history'",
                      (CONV["stable"], last)).fetchone()[0]
    assert row == reasons[-1]


def test_newest_first_moves_the_prefix_once_full(cdb):
    steps = drive(cdb, "newest", 40)
    full = [i for i, (_, h, _, _) in enumerate(steps) if h["skipped_reason"] == "budget_exceeded"]
    assert full, "the window fills"
    # Once full, a turn drops the oldest entries to make room for the newest exchange:
    # the request no longer extends the previous one (unless the new exchange happens
    # to fit in what the previous turn's input left, which these data make rare).
    broken = [i for i in full[1:] if not extends(steps[i - 1][0], steps[i][0])]
    assert len(broken) >= 0.75 * len(full[1:]), (len(broken), len(full))


def test_anthropic_breakpoints(cdb):
    for _, h, _, body in drive(cdb, "stable", 5):
        marks = [(mi, pi, p["cache_control"]) for mi, m in enumerate(body["messages"])
                 for pi, p in enumerate(m["content"]) if "cache_control" in p]
        marks = [("system", i, b["cache_control"]) for i, b in enumerate(body["system"]) if "cache_control" in b] + marks
        assert 1 <= len(marks) <= 4
        assert all(cc == {"type": "ephemeral", "ttl": "1h"} for _, _, cc in marks), marks
        # The last marker is never after the newest history entry: the input follows it.
        last = body["messages"][-1]["content"][-1]
        assert "cache_control" not in last or h["selected"] == 0


def test_chat_prompt_cache_key(cdb):
    c = cdb
    turn = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) VALUES (%s, 'reply', %s, 'hi', 'gpt') "
                     "RETURNING id", (CONV["newest"], ADA)).fetchone()[0]
    body = c.execute("SELECT prompt.preview_turn(%s, %s)", (CONV["newest"], turn)).fetchone()[0]
    assert body["prompt_cache_key"] == CONV["newest"]
    assert "cache_control" not in json.dumps(body)
