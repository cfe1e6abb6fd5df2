"""In-database fuzzing: random rows and calls through SQL. No backend may crash, and
no refusal may be an internal error (XX000): every one has its SQLSTATE.

The test command runs PGPROMPT_FUZZ_ITERATIONS (default 300) operations; the long run:
    PGPROMPT_FUZZ_ITERATIONS=50000 python3 -m pytest -q tests/python/test_fuzz.py
Seeds of interest: core/tests/fuzz/corpus.json.
"""
import json
import os
import pathlib
import random
import uuid

import psycopg

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = json.loads((ROOT / "core/tests/fuzz/corpus.json").read_text())
ITERATIONS = int(os.environ.get("PGPROMPT_FUZZ_ITERATIONS", "300"))
C3 = "00000000-0000-4000-8000-00000000c003"
LARK = "00000000-0000-4000-8000-000000000002"
ADA = "00000000-0000-4000-8000-000000000001"
PIECES = ["{{", "}}", "{{agent}}", "{{nope}}", "{{history}}", "<message", "</message>", "&lt;", "&", " ", "\n", "é", "🎉", "\\", '"', "'", "x", "[", "]"]


def text(rng):
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))


def junk(rng, depth=3):
    kinds = ["null", "bool", "num", "str", "list", "obj"] if depth else ["null", "bool", "num", "str"]
    k = rng.choice(kinds)
    if k == "null":
        return None
    if k == "bool":
        return rng.random() < 0.5
    if k == "num":
        return rng.choice([0, -1, 1.5, 10**12, 201, 0.5])
    if k == "str":
        return text(rng)
    if k == "list":
        return [junk(rng, depth - 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["type", "text", "role", "slot", "blocks", "history", "input", "name", "position", "budget"]): junk(rng, depth - 1) for _ in range(rng.randint(0, 4))}


def pathological(rng):
    return rng.choice([" " * 1_000_000, "{" * 65_536, "[" * 3000 + "]" * 3000, "{{a}}" * 20_000, "x" * 70_000])


def operations(rng):
    corpus_json = CORPUS["templates"] + CORPUS["turn_fields"]
    turn = str(uuid.uuid4())
    return [
        ("SELECT count(*) FROM prompt.validate_template(%s::jsonb)", (json.dumps(rng.choice([junk(rng), rng.choice(corpus_json)])),)),
        ("SELECT count(*) FROM prompt.validate_template(%s::jsonb)", (rng.choice(["[" * 3000 + "]" * 3000, json.dumps({"blocks": [{"type": "inline", "role": "user", "text": "x" * 70_000}]})]),)),
        ("SELECT prompt.count_tokens(%s, %s)", (rng.choice([text(rng), pathological(rng)]), rng.choice(["cl100k_base", "o200k_base", "nope"]))),
        ("SELECT prompt.unescape_envelope(prompt.escape_envelope(%s))", (text(rng),)),
        ("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, %s, %s)", (LARK, rng.choice(["SOUL", "MISSION", "bad", "persona"]), rng.choice([text(rng), pathological(rng)]))),
        ("UPDATE prompt.users SET prompt_mechanism = %s, prompt_template = %s::jsonb WHERE handle = 'wren'",
         (rng.choice(["default", "assembly", "raw"]), json.dumps(rng.choice([junk(rng), rng.choice(CORPUS["templates"])])))),
        ("INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, inline, variables, history, input, tools, callables, mode, answerer_id) "
         "VALUES (%s, %s, 'reply', %s, %s, %s::jsonb, %s::jsonb, %s::jsonb, %s::jsonb, %s::jsonb, %s::jsonb, %s, %s)",
         (C3, turn, ADA, text(rng), json.dumps(rng.choice([junk(rng), [{"text": text(rng)}], []])),
          json.dumps(rng.choice([junk(rng), {}])), json.dumps(rng.choice([junk(rng), None])), json.dumps(rng.choice([junk(rng), None])),
          json.dumps(rng.choice([junk(rng), None])), json.dumps(rng.choice([junk(rng), []])), rng.choice(["run", "direct_reply"]),
          rng.choice([LARK, "00000000-0000-4000-8000-000000000005"]))),
        ("INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results, steers) SELECT %s, id, 1, %s::jsonb, %s::jsonb, %s::jsonb FROM prompt.turns WHERE conversation_id = %s AND kind = 'reply' ORDER BY random() LIMIT 1",
         (C3, json.dumps(junk(rng)), json.dumps(junk(rng)), json.dumps(junk(rng)), C3)),
        ("SELECT prompt.preview_turn(%s, id) IS NOT NULL FROM prompt.turns WHERE conversation_id = %s AND kind = 'reply' ORDER BY random() LIMIT 1", (C3, C3)),
        ("SELECT prompt.compile_turn(%s, id) IS NOT NULL FROM prompt.turns WHERE conversation_id = %s AND kind = 'reply' ORDER BY random() LIMIT 1", (C3, C3)),
        ("SELECT count(*) FROM prompt.estimate_turn(%s, (SELECT id FROM prompt.turns WHERE conversation_id = %s ORDER BY random() LIMIT 1))", (C3, C3)),
        ("SELECT prompt._check_turn(%s, %s, %s, %s, %s, %s, %s)", tuple(rng.choice([None, json.dumps(junk(rng))]) for _ in range(7))),
        ("SELECT prompt._check_turn_shape(%s, %s, %s, %s, %s, %s)", (rng.choice([None, turn]), rng.choice([None, "reply", "message", "x"]), rng.choice([None, "user"]), rng.choice([None, ADA]), rng.choice([None, "run", "x"]), rng.choice([None, True]))),
        ("SELECT prompt._check_round_place(%s, %s, %s, %s, %s)", (rng.choice([None, turn]), rng.choice([None, 1, 2, -5]), rng.choice([None, "reply", "summary"]), rng.choice([None, "run"]), rng.choice([None, False]))),
        ("SELECT prompt._check_request_options(%s, %s)", (rng.choice([None, "models"]), rng.choice([None, json.dumps(junk(rng))]))),
        ("SELECT prompt.pretty(%s::json)", (rng.choice([json.dumps(junk(rng)), "[" * 3000 + "]" * 3000]),)),
        ("SELECT prompt.explain_turn(%s, id) IS NOT NULL FROM prompt.turns WHERE conversation_id = %s AND kind = 'reply' ORDER BY random() LIMIT 1", (C3, C3)),
        ("SELECT prompt.sealed_body(%s, id) IS NOT NULL FROM prompt.turns WHERE conversation_id = %s ORDER BY random() LIMIT 1", (C3, C3)),
        ("SELECT prompt.prune_seals(%s, now() - interval '1 hour')", (C3,)),
        ("SELECT prompt._own_entries(%s, %s, %s, %s::int[])", (rng.choice([None, "s"]), rng.choice([None, 2]), None, rng.choice([None, [1, None, 3]]))),
        ("SELECT prompt._row_tokens(%s, %s, %s::text[])", (rng.choice([None, "summary"]), text(rng), rng.choice([None, ["cl100k_base", None, "x"]]))),
        ("SELECT prompt._check_template(%s, %s, %s::jsonb)", (rng.choice([None, "h"]), rng.choice([None, "assembly"]), rng.choice([None, json.dumps(junk(rng))]))),
    ]


def test_no_crash_and_no_internal_error(own_db):
    db = own_db
    rng = random.Random(int(os.environ.get("PGPROMPT_FUZZ_SEED", "20261130")))
    refused, ok = {}, 0
    for i in range(ITERATIONS):
        sql, args = rng.choice(operations(rng))
        try:
            cur = db.execute(sql, args)
            if cur.description is not None:
                cur.fetchall()
            ok += 1
        except psycopg.Error as e:
            assert not db.broken and e.sqlstate is not None, f"the backend went away on {sql[:80]!r}: {e}"
            assert e.sqlstate and e.sqlstate != "XX000" and not e.sqlstate.startswith("58"), f"{e.sqlstate} on {sql[:80]!r}: {e}"
            refused[e.sqlstate] = refused.get(e.sqlstate, 0) + 1
        assert db.execute("SELECT 1").fetchone()[0] == 1
    assert ok > ITERATIONS // 5 and refused, (ok, refused)
