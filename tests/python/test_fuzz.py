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


def test_no_crash_and_no_internal_error(own_db, no_crash):
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


# -- Amplification and corrupted seals: 10^5 cases, run server side -----------------

CASES = int(os.environ.get("PGPROMPT_FUZZ_CASES", "100000"))
C1, T4 = "00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"

# One case: an edit (run with the triggers off, as only a superuser could) and a call;
# the case's subtransaction is always rolled back (the sentinel P0001), so every case
# starts from the same rows. Returns the call's SQLSTATE, or 'ok'.
CASE = r"""
CREATE OR REPLACE FUNCTION pg_temp.fuzz_case(edit text, call text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    state text;
BEGIN
    BEGIN
        SET LOCAL session_replication_role = replica;
        IF edit <> '' THEN
            EXECUTE edit;
        END IF;
        SET LOCAL session_replication_role = origin;
        BEGIN
            EXECUTE call;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE;
        END;
        RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = coalesce(state, 'ok');
    EXCEPTION WHEN raise_exception THEN
        GET STACKED DIAGNOSTICS state = MESSAGE_TEXT;
        RETURN state;
    END;
END
$$;
"""

SEAL_COLUMNS = {
    "chain_length": lambda r: str(r.choice([0, 1, 2, 3, -1, 2**31 - 1, r.randint(-10, 50)])),
    "chain": lambda r: r.choice(["NULL", "0", "1", "9223372036854775807", str(r.randint(-5, 40))]),
    "chain_low": lambda r: r.choice(["NULL", "0", "1", "-9223372036854775808", str(r.randint(-5, 40))]),
    "head": lambda r: r.choice(["NULL", "0", str(r.randint(-5, 40))]),
    "tail": lambda r: r.choice(["NULL", "0", str(r.randint(-5, 40))]),
    "bytes": lambda r: r.choice(["0", "-1", "2147483647", "bytes + 1", "bytes - 1", str(r.randint(0, 5000))]),
    "lead": lambda r: r.choice(["'{}'", "ARRAY[NULL]::bigint[]", f"ARRAY[{r.randint(-3, 40)}]", "ARRAY[1, 1, 1]", "array_fill(1::bigint, ARRAY[100000])"]),
    "patches": lambda r: "'" + json.dumps(r.choice([
        {}, [], [{}], None, "x",
        [{"at": r.randint(-2, 30), "offset": r.choice([0, 1, 2**40, r.randint(0, 500)]), "cut": r.choice([0, 1, 2**40, r.randint(0, 50)]), "insert": "é" * r.randint(0, 3)}],
    ])).replace("'", "''") + "'",
    "digest": lambda r: r.choice(["'\\x00'::bytea", "sha256('x')", "digest"]),
    "frozen": lambda r: r.choice(["'{}'", "'[]'", "'null'", "frozen - 'wire'", "frozen || '{\"seed_cut\": {\"keep\": 99999999}}'", "frozen || '{\"cache_breakpoints\": [{\"message\": 9999, \"part\": 0, \"after\": \"history\"}]}'"]),
}
NODE_EDITS = [
    "UPDATE prompt.seal_nodes SET body = body || ' ' WHERE conversation_id = '{c}' AND id = {n}",
    "UPDATE prompt.seal_nodes SET body = '' WHERE conversation_id = '{c}' AND id = {n}",
    "UPDATE prompt.seal_nodes SET parent = {m} WHERE conversation_id = '{c}' AND id = {n}",
    "UPDATE prompt.seal_nodes SET parent = id WHERE conversation_id = '{c}' AND id = {n}",
    "DELETE FROM prompt.seal_nodes WHERE conversation_id = '{c}' AND id = {n}",
    "UPDATE prompt.seal_nodes SET body = repeat(body, 100) WHERE conversation_id = '{c}' AND id = {n}",
]
CALLS = [
    "SELECT prompt.compile_turn('{c}', '{t}')", "SELECT prompt.sealed_body('{c}', '{t}')",
    "SELECT prompt.preview_turn('{c}', '{t}')", "SELECT prompt.explain_turn('{c}', '{t}')",
    "SELECT count(*) FROM prompt.verify_seals('{c}')", "SELECT prompt.prune_seals('{c}', now() - interval '1 day')",
    "SELECT count(*) FROM prompt.estimate_turn('{c}', '{t}')",
]
# Amplifiers: macros over a long value, variables, nested and wide JSON, long texts.
AMPLIFIERS = [
    ("UPDATE prompt.workspaces SET name = repeat('w', {k})", "UPDATE prompt.documents SET body = repeat('{{{{workspace}}}}', {m}) WHERE name = 'character'"),
    ("UPDATE prompt.users SET display_name = repeat('a', {k}) WHERE handle = 'lark'", "UPDATE prompt.documents SET body = repeat('{{{{agent}}}} ', {m}) WHERE name = 'system_prompt'"),
    ("UPDATE prompt.users SET display_name = repeat('u', {k}) WHERE handle = 'ada'", "UPDATE prompt.turns SET inline = jsonb_build_array(jsonb_build_object('text', repeat('{{{{user}}}}', {m}), 'position', 'tail')) WHERE id = '{t}'"),
    ("UPDATE prompt.memories SET body = repeat('m', {k})", ""),
]


def seal_case(r, sealed):
    c, t = r.choice(sealed)
    if r.random() < 0.6:
        cols = r.sample(sorted(SEAL_COLUMNS), r.randint(1, 3))
        edit = f"UPDATE prompt.seals SET {', '.join(f'{k} = {SEAL_COLUMNS[k](r)}' for k in cols)} WHERE conversation_id = '{c}' AND turn_id = '{t}'"
    else:
        edit = r.choice(NODE_EDITS).format(c=c, n=r.randint(0, 12), m=r.choice(["NULL", str(r.randint(0, 12))]))
    return edit, r.choice(CALLS).format(c=c, t=t)


def amplifier_case(r):
    setup, more = r.choice(AMPLIFIERS)
    k = r.choice([1, 1000, 100_000, 2_000_000])
    m = r.choice([1, 10, 1000, 4500])
    edit = "; ".join(s for s in (setup.format(k=k), more.format(m=m, t=T4)) if s)
    call = r.choice(["SELECT prompt.preview_turn('{c}', '{t}')", "SELECT prompt.explain_turn('{c}', '{t}')",
                     "SELECT count(*) FROM prompt.estimate_turn('{c}', '{t}')", "SELECT prompt.transcript('{c}', '{t}')"])
    return edit, call.format(c=C1, t=T4)


def json_case(r):
    depth, width = r.choice([1, 10, 100, 127, 128, 129, 3000]), r.choice([0, 1, 10, 1000, 30_000])
    inner = ",".join(["1"] * width) if r.random() < 0.5 else ",".join(['{"k": "v"}'] * width)
    text = "[" * depth + inner + "]" * depth
    return "", f"SELECT length(prompt.pretty('{text}'::json))" if len(text) < 4_000_000 else "SELECT 1"


def test_amplification_and_corrupted_seals(own_db, no_crash):
    """10^5 cases (PGPROMPT_FUZZ_CASES): seal rows and nodes edited every way (lengths,
    ranges, sizes, lead and patch lists, digests, frozen records, lost and changed
    nodes), amplifying rows (macros over long values, long memory, nested and wide JSON),
    each followed by a call that reads them. Every case ends with a result or a SQLSTATE
    other than XX000, and the backend never goes away."""
    db = own_db
    db.execute(CASE)
    db.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
    sealed = db.execute("SELECT conversation_id::text, turn_id::text FROM prompt.seals WHERE pruned_at IS NULL").fetchall()
    assert len(sealed) >= 2
    rng = random.Random(int(os.environ.get("PGPROMPT_FUZZ_SEED", "20261201")))
    outcomes, done = {}, 0
    batch = 500
    while done < CASES:
        cases = []
        for _ in range(min(batch, CASES - done)):
            pick = rng.random()
            cases.append(seal_case(rng, sealed) if pick < 0.97 else amplifier_case(rng) if pick < 0.995 else json_case(rng))
        edits, calls = [e for e, _ in cases], [c for _, c in cases]
        rows = db.execute("SELECT pg_temp.fuzz_case(e, c) FROM unnest(%s::text[], %s::text[]) AS x(e, c)", (edits, calls)).fetchall()
        for (state,), case in zip(rows, cases):
            assert state != "XX000" and not state.startswith("58"), (state, case)
            outcomes[state] = outcomes.get(state, 0) + 1
        done += len(cases)
    # The shapes were met: reads that went through, corrupted seals refused, amplifiers refused.
    assert outcomes.get("ok", 0) > 0 and outcomes.get("XX001", 0) > CASES // 10 and outcomes.get("54000", 0) > 0, outcomes
    print(f"\n{done} cases: {dict(sorted(outcomes.items()))}")


# -- The doors of fail-closed, fuzzed ------------------------------------------------

GUARDED = {
    "seal_nodes": ("body = 'FORGED'", "true"),
    "seals": ("chain_length = 0", "true"),
    "seals_02": ("request = '{}'", "true"),
    "turns": ("sealed_at = now(), prompt = 'FORGED'", "sealed_at IS NOT NULL"),
    "rounds": ("results = '[]', sent_at = NULL", "sent_at IS NOT NULL"),
    "conversations": ("captured_content = 'FORGED'", "captured_turn_id IS NOT NULL"),
}


def door(r, table):
    """One way in, chosen at random: the statement itself, inside a writable CTE, inside
    a DO block that swallows errors, from a trigger of a temporary table's foreign-key
    action, from a deferred constraint trigger, or an INSERT ... SELECT copy."""
    change, where = GUARDED[table]
    stmt = r.choice([f"UPDATE prompt.{table} SET {change} WHERE {where}", f"DELETE FROM prompt.{table} WHERE {where}",
                     f"INSERT INTO prompt.{table} SELECT * FROM prompt.{table} WHERE {where}",
                     f"TRUNCATE prompt.{table} CASCADE"])
    how = r.randrange(6)
    if how == 0 or stmt.startswith("TRUNCATE"):
        return [stmt]
    if how == 1 and not stmt.startswith("INSERT"):
        return [f"WITH d AS ({stmt} RETURNING 1) SELECT count(*) FROM d"]
    if how == 2:
        return [f"DO $d$ BEGIN {stmt}; EXCEPTION WHEN raise_exception THEN NULL; END $d$"]
    if how == 3:
        return ["CREATE TEMP TABLE IF NOT EXISTS fp (id int PRIMARY KEY)",
                f"CREATE TEMP TABLE IF NOT EXISTS fc (id int REFERENCES fp ON DELETE {r.choice(['CASCADE', 'SET NULL'])})",
                f"CREATE OR REPLACE FUNCTION pg_temp.fz() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN {stmt}; RETURN NULL; END $f$",
                "CREATE OR REPLACE TRIGGER fz AFTER DELETE OR UPDATE ON fc FOR EACH ROW EXECUTE FUNCTION pg_temp.fz()",
                "INSERT INTO fp VALUES (1) ON CONFLICT DO NOTHING", "INSERT INTO fc VALUES (1)", "DELETE FROM fp"]
    if how == 4:
        return ["CREATE TEMP TABLE IF NOT EXISTS fd (id int)",
                f"CREATE OR REPLACE FUNCTION pg_temp.fy() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN {stmt}; RETURN NULL; END $f$",
                "DROP TRIGGER IF EXISTS fy ON fd",
                "CREATE CONSTRAINT TRIGGER fy AFTER INSERT ON fd DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pg_temp.fy()",
                "BEGIN", "INSERT INTO fd VALUES (1)", "COMMIT"]
    return [stmt]


def test_the_doors_of_fail_closed_stay_shut(no_crash):
    """PGPROMPT_FUZZ_ITERATIONS attempts on what was sent — every door of the fail-closed
    tests (test_fail_closed.py) with random statements and tables — as a tenant, the group
    role every tenant is granted and a writer that is no tenant, each also reading the other
    tenant's rows: what was sent never moves, no other tenant's row is ever read, and no
    refusal is XX000."""
    from conftest import grant_all_carelessly, make_database
    db = make_database("pgprompt_fuzz_doors")
    try:
        db.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
        other = str(uuid.uuid4())
        db.execute("INSERT INTO prompt.workspaces (id, name) VALUES (%s, 'Other')", (other,))
        db.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id) VALUES (%s, %s)", (other, LARK))
        db.execute("INSERT INTO prompt.conversations (workspace_id, kind, parent_id, captured_turn_id) VALUES "
                   "('00000000-0000-4000-8000-00000000a001', 'side', %s, %s)", (C1, T4))
        roles = ("pgprompt_fz_tenant", "pgprompt_fz_group", "pgprompt_fz_writer")
        for role in roles:
            db.execute(f"DO $$ BEGIN CREATE ROLE {role} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
            db.execute(f"GRANT USAGE ON SCHEMA prompt TO {role}")
            grant_all_carelessly(db, role)
        db.execute("GRANT pgprompt_fz_group TO pgprompt_fz_tenant")
        db.execute("INSERT INTO prompt.tenants (role_name, workspace_id) VALUES ('pgprompt_fz_tenant', %s)", (other,))
        db.execute("SELECT prompt.set_tenancy(true)")
        fingerprint = ("SELECT md5(string_agg(x, '')) FROM (SELECT t::text AS x FROM prompt.seal_nodes t UNION ALL "
                       "SELECT row(s.*)::text FROM prompt.seals s UNION ALL SELECT row(t.*)::text FROM prompt.turns t "
                       "WHERE sealed_at IS NOT NULL UNION ALL SELECT row(c.captured_content, c.captured_round)::text "
                       "FROM prompt.conversations c WHERE c.captured_turn_id IS NOT NULL ORDER BY 1) y")
        before = db.execute(fingerprint).fetchone()[0]
        rng = random.Random(int(os.environ.get("PGPROMPT_FUZZ_SEED", "20261203")))
        states = {}
        for _ in range(ITERATIONS):
            role = rng.choice(roles)
            db.execute(f"SET ROLE {role}")
            try:
                for sql in door(rng, rng.choice(sorted(GUARDED))):
                    try:
                        cur = db.execute(sql)
                        if cur.description is not None:
                            cur.fetchall()
                    except psycopg.Error as e:
                        assert e.sqlstate and e.sqlstate != "XX000", (sql, e)
                        states[e.sqlstate] = states.get(e.sqlstate, 0) + 1
                        if db.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                            db.execute("ROLLBACK")
                        break
                # Another tenant's rows: the acme conversation, for a role listed for Other only or nowhere.
                seen = db.execute("SELECT count(*) FROM prompt.turns WHERE conversation_id = %s", (C1,)).fetchone()[0]
                assert seen == 0, (role, seen)
            finally:
                if db.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    db.execute("ROLLBACK")
                db.execute("RESET ROLE")
                db.execute("DISCARD TEMP")
        assert db.execute(fingerprint).fetchone()[0] == before
        assert states.get("55000", 0) + states.get("42501", 0) > 0, states
        assert db.execute("SELECT count(*) FROM prompt.verify_seals()").fetchone()[0] == 0
    finally:
        db.close()
        from conftest import connect
        with connect("postgres") as admin:
            admin.execute("DROP DATABASE IF EXISTS pgprompt_fuzz_doors")
            for role in ("pgprompt_fz_tenant", "pgprompt_fz_group", "pgprompt_fz_writer"):
                admin.execute(f"DROP ROLE IF EXISTS {role}")
