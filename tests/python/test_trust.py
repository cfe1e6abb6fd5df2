"""Nothing forged, nothing leaked, nothing crashes (README, "Security").

Each test tries what a hostile tenant or a careless operator would: forged seal bytes,
edited seal rows, a history rewrite by an ordinary writer, a dump and restore of a
tenancy, writes into another tenant's rows, inputs that amplify, long work under a
timeout, a prune racing a seal, a conflict under REPEATABLE READ, and a backend killed
in the middle of sealing.
"""
import json
import os
import re
import signal
import subprocess
import threading
import time
import uuid

import psycopg
import pytest

from conftest import PGBIN, ROOT, ServerLog, connect, make_database

C1, T4 = "00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"
C3 = "00000000-0000-4000-8000-00000000c003"
ACME, GLOBEX = "00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-00000000a002"
ADA, LARK, BOB = ("00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002",
                  "00000000-0000-4000-8000-000000000009")


def refused(conn, sql, args=(), sqlstate=None):
    """The error a statement raises (it must raise), checked against `sqlstate`."""
    with pytest.raises(psycopg.Error) as e:
        conn.execute(sql, args)
    if sqlstate:
        assert e.value.sqlstate == sqlstate, (sql, e.value.sqlstate, str(e.value))
    return e.value


def as_replica(conn, sql, args=()):
    """A write with the triggers off: what only a superuser can do (the guards are
    triggers), to forge what a seal read must notice."""
    conn.execute("SET session_replication_role = replica")
    try:
        conn.execute(sql, args)
    finally:
        conn.execute("RESET session_replication_role")


@pytest.fixture(scope="module")
def trust():
    conn = make_database("pgprompt_trust")
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
    yield conn
    conn.close()


def writer_role(conn, name):
    conn.execute(f"DO $$ BEGIN CREATE ROLE {name} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    conn.execute(f"GRANT USAGE ON SCHEMA prompt TO {name}")
    conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO {name}")


def test_forged_seal_bytes_are_never_returned(trust):
    body = trust.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0]
    assert "Ada" in body
    assert trust.execute("SELECT count(*) FROM prompt.verify_seals(%s)", (C1,)).fetchone()[0] == 0
    as_replica(trust, "UPDATE prompt.seal_nodes SET body = replace(body, 'Ada', 'Eve') WHERE conversation_id = %s", (C1,))
    for call in ("compile_turn", "sealed_body", "preview_turn"):
        e = refused(trust, f"SELECT prompt.{call}(%s, %s)", (C1, T4), "XX001")
        assert e.diag.message_primary.startswith(f"data_corrupted: the seal of turn {T4} of conversation {C1}"), e
        assert "verify_seals" in e.diag.message_hint
    problems = trust.execute("SELECT turn_id::text, problem FROM prompt.verify_seals()").fetchall()
    assert problems == [(T4, "has a body that does not match its digest")], problems
    as_replica(trust, "UPDATE prompt.seal_nodes SET body = replace(body, 'Eve', 'Ada') WHERE conversation_id = %s", (C1,))
    assert trust.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0] == body
    assert trust.execute("SELECT count(*) FROM prompt.verify_seals()").fetchone()[0] == 0


@pytest.mark.parametrize("edit, problem", [
    ("chain_length = 2147483647", "has chain pointers that do not fit together"),
    ("chain_low = 1, chain = 9223372036854775807, chain_length = 2000000000", "has chain pointers that do not fit together"),
    ("bytes = 2147483647", "records a size out of range"),
    ("bytes = bytes + 1", "has a body of another size than it recorded"),
    ("lead = ARRAY[NULL]::bigint[]", "has a lead list that does not fit"),
    ("lead = ARRAY[987654321]", "lost a node"),
    ("patches = '{\"at\": 1}'", "has a patch list that cannot be read"),
    ("patches = '[{\"at\": 0, \"offset\": 4000000000, \"cut\": 1, \"insert\": \"x\"}]'", "has patches that do not fit its elements"),
    # What a seal froze is read where it is used: explain_turn, a continuation.
    ("frozen = '{\"wire\": 7}'", "has a frozen record that does not match its digest"),
    ("frozen = '{\"wire\": 7}', frozen_digest = sha256(convert_to('{\"wire\": 7}', 'UTF8'))",
     "has a frozen record that cannot be read ("),
    # What the cache report checks a seal's stored pieces against.
    ("pieces_digest = sha256('x')", "has pieces that do not match their digest"),
])
def test_edited_seal_rows_are_refused_before_they_size_anything(trust, edit, problem, no_crash):
    """What a seal row says is bounded before it sizes an allocation: an edited length,
    range, size, lead list, patch list or frozen record is data_corrupted, the backend
    stays up, and the seal reads again once the row is put back."""
    saved = trust.execute("SELECT row_to_json(s)::text FROM prompt.seals s WHERE turn_id = %s", (T4,)).fetchone()[0]
    as_replica(trust, f"UPDATE prompt.seals SET {edit} WHERE turn_id = %s", (T4,))
    try:
        if edit.startswith("pieces"):
            refused(trust, "SELECT count(*) FROM prompt.cache_report(%s)", (C1,), "XX001")
        else:
            call = "explain_turn" if edit.startswith("frozen") else "compile_turn"
            refused(trust, f"SELECT prompt.{call}(%s, %s)", (C1, T4), "XX001")
        got = trust.execute("SELECT problem FROM prompt.verify_seals(%s)", (C1,)).fetchall()
        assert len(got) == 1 and got[0][0].startswith(problem), got
    finally:
        as_replica(trust, "UPDATE prompt.seals s SET (frozen, head, lead, chain, chain_length, chain_low, tail, patches, digest, bytes, "
                          "frozen_digest, pieces_digest) = (SELECT r.frozen, r.head, r.lead, r.chain, r.chain_length, r.chain_low, "
                          "r.tail, r.patches, r.digest, r.bytes, r.frozen_digest, r.pieces_digest "
                          "FROM jsonb_populate_record(NULL::prompt.seals, %s::jsonb) r) WHERE turn_id = %s", (saved, T4))
    assert trust.execute("SELECT count(*) FROM prompt.verify_seals(%s)", (C1,)).fetchone()[0] == 0


def test_seal_storage_changes_only_through_pgprompt():
    conn = make_database("pgprompt_guard")
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
    writer_role(conn, "pgprompt_guard_writer")
    for role in ("postgres", "pgprompt_guard_writer"):
        conn.execute(f"SET ROLE {role}")
        for sql in ("UPDATE prompt.seal_nodes SET body = 'x'", "DELETE FROM prompt.seal_nodes",
                    "UPDATE prompt.seals SET chain_length = 0", "DELETE FROM prompt.seals",
                    "TRUNCATE prompt.seal_nodes CASCADE", "TRUNCATE prompt.seals", "TRUNCATE prompt.turns CASCADE",
                    "TRUNCATE prompt.conversations CASCADE", "TRUNCATE prompt.seals_02"):
            e = refused(conn, sql)
            if role != "postgres" and sql.startswith("TRUNCATE"):
                # An ordinary writer has no TRUNCATE privilege to begin with.
                assert e.sqlstate == "42501", (sql, e)
                continue
            assert e.sqlstate == "55000", (sql, e)
            assert e.diag.message_primary.startswith("sealed_turn_immutable: prompt."), e
        conn.execute("RESET ROLE")
    assert conn.execute("SELECT count(*) FROM prompt.verify_seals()").fetchone()[0] == 0
    # pgprompt's own functions: pruning drops bodies (and the nodes no body uses) ...
    conn.execute("SET ROLE pgprompt_guard_writer")
    assert conn.execute("SELECT prompt.prune_seals(%s, now() + interval '1 minute')", (C1,)).fetchone()[0] == 1
    refused(conn, "SELECT prompt.compile_turn(%s, %s)", (C1, T4), "55000")
    # ... and deleting a conversation takes its seals along.
    conn.execute("DELETE FROM prompt.conversations WHERE id = %s", (C1,))
    conn.execute("RESET ROLE")
    assert conn.execute("SELECT count(*) FROM prompt.seals WHERE conversation_id = %s", (C1,)).fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM prompt.seal_nodes WHERE conversation_id = %s", (C1,)).fetchone()[0] == 0
    conn.execute("DROP OWNED BY pgprompt_guard_writer")
    conn.execute("DROP ROLE pgprompt_guard_writer")
    conn.close()


def test_rewriting_sealed_history_is_a_privilege():
    conn = make_database("pgprompt_rewrite")
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
    writer_role(conn, "pgprompt_rewriter")
    conn.execute("GRANT pgprompt_rewriter TO CURRENT_USER")
    # Turning it on, as an ordinary writer: 42501 with a hint naming the grant.
    conn.execute("SET ROLE pgprompt_rewriter")
    e = refused(conn, "SET pgprompt.allow_history_rewrite = on", sqlstate="42501")
    assert e.diag.message_primary == 'history_rewrite_not_permitted: role "pgprompt_rewriter" may not turn on pgprompt.allow_history_rewrite'
    assert e.diag.message_hint == "An administrator names the roles that may: GRANT SET ON PARAMETER pgprompt.allow_history_rewrite TO pgprompt_rewriter;"
    conn.execute("BEGIN")
    refused(conn, "SET LOCAL pgprompt.allow_history_rewrite = on", sqlstate="42501")
    conn.execute("ROLLBACK")
    refused(conn, "SELECT set_config('pgprompt.allow_history_rewrite', 'on', true)", sqlstate="42501")
    refused(conn, "DELETE FROM prompt.turns WHERE id = %s", (T4,), "55000")
    conn.execute("RESET ROLE")
    # Set before the library is loaded (a fresh session): the value is set aside, and the
    # rewrite is refused as the role's.
    with psycopg.connect(host=os.environ["PGHOST"], port=int(os.environ["PGPORT"]), user="postgres",
                         dbname="pgprompt_rewrite", autocommit=True) as fresh:
        fresh.execute("SET ROLE pgprompt_rewriter")
        fresh.execute("BEGIN")
        fresh.execute("SET LOCAL pgprompt.allow_history_rewrite = on")
        refused(fresh, "DELETE FROM prompt.turns WHERE id = %s", (T4,), "42501")
        fresh.execute("ROLLBACK")
    # An administrator names the role: then the rewrite goes, on purpose.
    conn.execute("GRANT SET ON PARAMETER pgprompt.allow_history_rewrite TO pgprompt_rewriter")
    conn.execute("SET ROLE pgprompt_rewriter")
    conn.execute("BEGIN")
    conn.execute("SET LOCAL pgprompt.allow_history_rewrite = on")
    conn.execute("DELETE FROM prompt.turns WHERE id = %s", (T4,))
    assert conn.execute("SELECT count(*) FROM prompt.seals WHERE turn_id = %s", (T4,)).fetchone()[0] == 0
    conn.execute("COMMIT")
    conn.execute("RESET ROLE")
    conn.execute("REVOKE SET ON PARAMETER pgprompt.allow_history_rewrite FROM pgprompt_rewriter")
    conn.execute("REVOKE pgprompt_rewriter FROM CURRENT_USER")
    conn.execute("DROP OWNED BY pgprompt_rewriter")
    conn.execute("DROP ROLE pgprompt_rewriter")
    conn.close()


# -- Tenancy -------------------------------------------------------------------------

TENANTS = ("pgprompt_t_acme", "pgprompt_t_globex")


def tenancy(conn):
    """examples/tenancy.sql, a second workspace (Globex) with its own person, room,
    memory, skill and conversation, and two tenants; Lark serves both."""
    conn.execute((ROOT / "examples/tenancy.sql").read_text())
    conn.execute("INSERT INTO prompt.workspaces (id, name) VALUES (%s, 'Globex')", (GLOBEX,))
    conn.execute("INSERT INTO prompt.users (id, handle, display_name, kind) VALUES (%s, 'bob', 'Bob', 'human')", (BOB,))
    conn.execute("INSERT INTO prompt.documents (workspace_id, name, body) VALUES (%s, 'character', 'Globex secret room.')", (GLOBEX,))
    conn.execute("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, 'persona', 'Globex secret persona.')", (BOB,))
    conn.execute("INSERT INTO prompt.memories (scope, workspace_id, path, body) VALUES ('workspace', %s, 'globex.md', 'Globex secret memory.')", (GLOBEX,))
    conn.execute("INSERT INTO prompt.skills (source, workspace_id, name, description) VALUES ('workspace', %s, 'globex_skill', 'Globex secret skill.')", (GLOBEX,))
    conn.execute("INSERT INTO prompt.skills (source, application, name, description) VALUES ('application', 'helpdesk', 'lookup', 'Shared.')")
    conn.execute("INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES "
                 "('00000000-0000-4000-8000-00000000c0b1', %s, %s, %s)", (GLOBEX, LARK, BOB))
    conn.execute("INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, created_at) VALUES "
                 "('00000000-0000-4000-8000-00000000c0b1', '00000000-0000-4000-8000-0000000b0001', 1, 'reply', %s, "
                 "'Hello from Globex.', '2026-11-30 10:00+00')", (BOB,))
    for role in TENANTS:
        conn.execute(f"DO $$ BEGIN CREATE ROLE {role} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute(f"GRANT prompt_tenant TO {role}")
    conn.execute("INSERT INTO prompt.tenants VALUES (%s, %s), (%s, %s)", (TENANTS[0], ACME, TENANTS[1], GLOBEX))
    conn.execute("INSERT INTO prompt.workspace_members SELECT %s::uuid, id FROM prompt.users WHERE handle IN ('ada', 'omar', 'lark', 'grace', 'wren') "
                 "UNION ALL SELECT %s::uuid, id FROM prompt.users WHERE handle IN ('bob', 'lark')", (ACME, GLOBEX))
    conn.execute("SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c0b1', '00000000-0000-4000-8000-0000000b0001')")
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))


def rls_state(conn):
    policies = conn.execute("SELECT count(*) FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid "
                            "WHERE c.relnamespace = 'prompt'::regnamespace").fetchone()[0]
    enabled = conn.execute("SELECT count(*) FROM pg_class WHERE relnamespace = 'prompt'::regnamespace "
                           "AND relkind = 'r' AND relrowsecurity").fetchone()[0]
    return policies, enabled


def reads_as(conn, role):
    """What a tenant sees: its workspaces, conversations, people, documents, memory paths
    and skills, and whether the other tenant's conversation compiles for it."""
    conn.execute(f"SET ROLE {role}")
    try:
        seen = {
            "workspaces": sorted(r[0] for r in conn.execute("SELECT name FROM prompt.workspaces")),
            "conversations": conn.execute("SELECT count(*) FROM prompt.conversations").fetchone()[0],
            "users": sorted(r[0] for r in conn.execute("SELECT handle FROM prompt.users")),
            "documents": sorted(r[0] for r in conn.execute("SELECT body FROM prompt.documents")),
            "memories": sorted(r[0] for r in conn.execute("SELECT path FROM prompt.memories")),
            "skills": sorted(r[0] for r in conn.execute("SELECT name FROM prompt.skills")),
            "seals": conn.execute("SELECT count(*) FROM prompt.seals").fetchone()[0],
        }
        for conv, turn in ((C1, T4), ("00000000-0000-4000-8000-00000000c0b1", "00000000-0000-4000-8000-0000000b0001")):
            try:
                body = conn.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
                seen[conv] = "Globex" in body
            except psycopg.errors.NoDataFound:
                seen[conv] = "not found"
        return seen
    finally:
        conn.execute("RESET ROLE")


def shared_writes(conn, role):
    """Writes a tenant tries on rows the other tenant's compile reads; each must be
    refused (an error) or change nothing. Returns what got through."""
    through = []
    statements = [
        ("UPDATE prompt.users SET display_name = 'x' WHERE id = %s", (LARK,)),
        ("DELETE FROM prompt.users WHERE id = %s", (LARK,)),
        ("UPDATE prompt.documents SET body = 'x' WHERE user_id = %s", (LARK,)),
        ("DELETE FROM prompt.documents WHERE user_id = %s", (LARK,)),
        ("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, 'SOUL', 'x')", (LARK,)),
        ("INSERT INTO prompt.memories (scope, user_id, path, body) VALUES ('agent', %s, 'x.md', 'x')", (LARK,)),
        ("UPDATE prompt.memories SET body = 'x' WHERE scope = 'agent'", ()),
        ("DELETE FROM prompt.memories WHERE scope = 'agent'", ()),
        ("UPDATE prompt.models SET max_output_tokens = 1", ()),
        ("DELETE FROM prompt.models", ()),
        ("INSERT INTO prompt.models (name, wire) VALUES ('x', 'chat')", ()),
        ("UPDATE prompt.skills SET description = 'x' WHERE source = 'application'", ()),
        ("INSERT INTO prompt.skills (source, application, name) VALUES ('application', 'helpdesk', 'x')", ()),
        ("INSERT INTO prompt.skills (source, user_id, name) VALUES ('agent', %s, 'x')", (LARK,)),
        ("INSERT INTO prompt.workspace_members VALUES (%s, %s)", (GLOBEX, ADA)),
        ("DELETE FROM prompt.workspace_members", ()),
        ("INSERT INTO prompt.tenants VALUES (current_user, %s)", (GLOBEX,)),
        ("INSERT INTO prompt.workspaces (name) VALUES ('x')", ()),
    ]
    other = ACME if role == TENANTS[1] else GLOBEX
    statements += [
        ("UPDATE prompt.workspaces SET name = 'x' WHERE id = %s", (other,)),
        ("INSERT INTO prompt.conversations (workspace_id, answerer_id) VALUES (%s, %s)", (other, LARK)),
        ("UPDATE prompt.documents SET body = 'x' WHERE workspace_id = %s", (other,)),
        ("INSERT INTO prompt.memories (scope, workspace_id, path, body) VALUES ('workspace', %s, 'x.md', 'x')", (other,)),
        ("UPDATE prompt.turns SET content = 'x' WHERE conversation_id IN (SELECT id FROM prompt.conversations WHERE workspace_id = %s)", (other,)),
        ("DELETE FROM prompt.seal_nodes WHERE conversation_id IN (SELECT id FROM prompt.conversations WHERE workspace_id = %s)", (other,)),
    ]
    # Rows of the other tenant's conversation, named by id.
    conv = C1 if role == TENANTS[1] else "00000000-0000-4000-8000-00000000c0b1"
    statements += [
        ("INSERT INTO prompt.turns (conversation_id, kind, role, content) VALUES (%s, 'message', 'user', 'x')", (conv,)),
        ("UPDATE prompt.turns SET content = 'x' WHERE conversation_id = %s", (conv,)),
        ("DELETE FROM prompt.turns WHERE conversation_id = %s", (conv,)),
        ("DELETE FROM prompt.conversations WHERE id = %s", (conv,)),
        ("INSERT INTO prompt.memories (scope, conversation_id, path, body) VALUES ('conversation', %s, 'x.md', 'x')", (conv,)),
        ("INSERT INTO prompt.responses (conversation_id, turn_id, step, shape, estimated_input_tokens) "
         "SELECT %s, id, 9, 'chat', 1 FROM prompt.turns WHERE conversation_id = %s", (conv, conv)),
    ]
    conn.execute(f"SET ROLE {role}")
    try:
        for sql, args in statements:
            try:
                cur = conn.execute(sql, args)
                if cur.rowcount and cur.rowcount > 0:
                    through.append(sql)
            except psycopg.Error as e:
                # Refused by row-level security (42501) or by a check of the row.
                assert e.sqlstate in ("42501", "23503", "23505", "23514"), (sql, e.sqlstate, str(e))
    finally:
        conn.execute("RESET ROLE")
    return through


def drop_tenancy(*databases):
    with connect("postgres") as admin:
        for db in databases:
            admin.execute(f"DROP DATABASE IF EXISTS {db}")
        for role in (*TENANTS, "prompt_tenant"):
            admin.execute(f"DROP ROLE IF EXISTS {role}")


def test_tenancy_survives_dump_and_restore_and_isolates_reads_and_writes():
    src = make_database("pgprompt_tenancy")
    tenancy(src)
    before = rls_state(src), {r: reads_as(src, r) for r in TENANTS}
    policies, enabled = before[0]
    assert enabled == 20 and policies > 60, before[0]  # every table of pgprompt's
    acme, globex = before[1][TENANTS[0]], before[1][TENANTS[1]]
    assert acme["workspaces"] == ["Acme Support"] and globex["workspaces"] == ["Globex"]
    assert acme[C1] is False and acme["00000000-0000-4000-8000-00000000c0b1"] == "not found"
    assert globex[C1] == "not found" and globex["00000000-0000-4000-8000-00000000c0b1"] is True
    assert not any("Globex" in d for d in acme["documents"]) and "globex_skill" not in acme["skills"]
    assert "lookup" in acme["skills"] and "lookup" in globex["skills"]
    assert "bob" not in acme["users"] and "lark" in globex["users"] and "ada" not in globex["users"]
    for role in TENANTS:
        assert shared_writes(src, role) == [], role
    src.close()

    host = ["-h", os.environ["PGHOST"], "-p", os.environ["PGPORT"], "-U", "postgres"]
    dump = ROOT / "target" / "tenancy.dump"
    subprocess.run([f"{PGBIN}/pg_dump", *host, "-Fc", "-f", str(dump), "pgprompt_tenancy"], check=True)
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_tenancy_restored")
        admin.execute("CREATE DATABASE pgprompt_tenancy_restored")
    subprocess.run([f"{PGBIN}/pg_restore", *host, "-d", "pgprompt_tenancy_restored", str(dump)], check=True)
    with connect("pgprompt_tenancy_restored") as dst:
        after = rls_state(dst), {r: reads_as(dst, r) for r in TENANTS}
        assert after == before
        # Tenancy is on after the restore because it was on before (its row is data).
        assert dst.execute("SELECT count(*) FROM prompt.tenancy").fetchone()[0] == 1
        for role in TENANTS:
            assert shared_writes(dst, role) == [], role
        # Each still writes its own rows: Ada's name (Acme's alone), Bob's persona.
        dst.execute(f"SET ROLE {TENANTS[0]}")
        assert dst.execute("UPDATE prompt.users SET display_name = 'Ada L.' WHERE id = %s", (ADA,)).rowcount == 1
        dst.execute(f"SET ROLE {TENANTS[1]}")
        assert dst.execute("UPDATE prompt.documents SET body = 'Bob, again.' WHERE user_id = %s", (BOB,)).rowcount == 1
        dst.execute("RESET ROLE")
    drop_tenancy("pgprompt_tenancy", "pgprompt_tenancy_restored")


# -- Bounded work --------------------------------------------------------------------

def test_amplifying_inputs_are_refused_and_the_cluster_stays_up(no_crash):
    conn = make_database("pgprompt_bounds")
    # {{workspace}} 5000 times over a 1 MB name: 5 GB, refused before it is built.
    conn.execute("UPDATE prompt.workspaces SET name = repeat('w', 1000000) WHERE id = %s", (ACME,))
    conn.execute("UPDATE prompt.documents SET body = repeat('{{workspace}}', 5000) WHERE name = 'character'")
    for call in ("preview_turn", "compile_turn", "explain_turn"):
        e = refused(conn, f"SELECT prompt.{call}(%s, %s)", (C1, T4), "54000")
        # The size named is over the bound named (the texts built before, and this one).
        m = re.match(r"text_too_large: the compile's texts, with the character slot and its macros and variables, "
                     r"would be (\d+) bytes or more, over the bound of (\d+) bytes$", e.diag.message_primary)
        assert m and int(m.group(1)) > int(m.group(2)), e
    conn.execute("UPDATE prompt.documents SET body = 'ok' WHERE name = 'character'")
    # A variable over a template's inline text, the same.
    conn.execute("""UPDATE prompt.users SET prompt_mechanism = 'assembly', prompt_template = jsonb_build_object(
        'blocks', jsonb_build_array(jsonb_build_object('type', 'inline', 'role', 'system', 'text', repeat('{{scene}}', 6000)),
                                    '{"type": "history"}'::jsonb, '{"type": "tail"}'::jsonb, '{"type": "input"}'::jsonb),
        'variables', jsonb_build_object('scene', 'a storm')) WHERE handle = 'lark'""")
    conn.execute("UPDATE prompt.turns SET variables = jsonb_build_object('scene', repeat('s', 60000)) WHERE id = %s", (T4,))
    e = refused(conn, "SELECT prompt.preview_turn(%s, %s)", (C1, T4), "54000")
    assert e.diag.message_primary.startswith("text_too_large: the compile's texts, with inline block /blocks/0 and its macros and variables"), e
    # An indented print of a deep and wide JSON: refused as it grows.
    wide = "[" * 120 + ",".join(["1"] * 3_000_000) + "]" * 120
    e = refused(conn, "SELECT prompt.pretty(%s::json)", (wide,), "54000")
    assert e.diag.message_primary.startswith("text_too_large: the pretty print would be"), e
    conn.close()


def test_long_work_stops_at_a_statement_timeout():
    """count_tokens of a long text is cancelled by statement_timeout (57014) while it
    counts, well before the count would have finished."""
    conn = make_database("pgprompt_cancel")
    # A text long enough that its whole count takes a second or more on this build.
    repeats = 300_000
    while True:
        conn.execute("DROP TABLE IF EXISTS big")
        conn.execute("CREATE TABLE big AS SELECT repeat('hello world, how are you? ', %s) AS t", (repeats,))
        started = time.monotonic()
        full = conn.execute("SELECT prompt.count_tokens(t) FROM big").fetchone()[0]
        full_took = time.monotonic() - started
        if full_took > 1.0 or repeats > 30_000_000:
            break
        repeats *= 4
    assert full > 2_000_000
    conn.execute("SET statement_timeout = '200ms'")
    started = time.monotonic()
    refused(conn, "SELECT prompt.count_tokens(t) FROM big", sqlstate="57014")
    cancelled_took = time.monotonic() - started
    print(f"\ncount_tokens of {full} tokens: {full_took:.2f} s whole, cancelled after {cancelled_took:.2f} s (timeout 0.2 s)")
    assert cancelled_took < full_took / 2, (cancelled_took, full_took)
    conn.close()


# -- Concurrency ---------------------------------------------------------------------

def new_reply(conn, conv, prompt):
    turn = str(uuid.uuid4())
    conn.execute("INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, created_at) "
                 "VALUES (%s, %s, 'reply', %s, %s, '2026-12-01 10:00+00')", (conv, turn, ADA, prompt))
    return turn


def test_prune_and_seal_serialize():
    """A prune that starts while a seal is being written waits for it, then keeps every
    node the new seal shares with the seals it prunes."""
    conn = make_database("pgprompt_prune_race")
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
    cut = conn.execute("SELECT now() + interval '1 second'").fetchone()[0]
    time.sleep(1.1)
    turn = new_reply(conn, C1, "One more thing.")
    sealer = connect("pgprompt_prune_race")
    sealer.execute("BEGIN")
    sealer.execute("SELECT prompt.compile_turn(%s, %s)", (C1, turn))
    pruned = []
    pruner = connect("pgprompt_prune_race")
    pid = pruner.info.backend_pid
    thread = threading.Thread(target=lambda: pruned.append(
        pruner.execute("SELECT prompt.prune_seals(%s, %s)", (C1, cut)).fetchone()[0]))
    thread.start()
    for _ in range(100):
        waiting = conn.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        if waiting and waiting[0] == "Lock":
            break
        time.sleep(0.05)
    assert waiting and waiting[0] == "Lock", "the prune waits for the seal being written"
    sealer.execute("COMMIT")
    thread.join(30)
    assert pruned == [1]
    assert conn.execute("SELECT count(*) FROM prompt.verify_seals(%s)", (C1,)).fetchone()[0] == 0
    assert conn.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (C1, turn)).fetchone()[0]
    for c in (sealer, pruner, conn):
        c.close()


@pytest.mark.parametrize("isolation", ["REPEATABLE READ", "SERIALIZABLE"])
def test_seal_conflicts_under_snapshot_isolation_are_retryable(isolation):
    """A sealer whose snapshot missed another seal of the conversation fails with 40001
    (retry), never 23505; retried, it seals."""
    conn = make_database("pgprompt_rr")
    first, second = new_reply(conn, C1, "First."), new_reply(conn, C1, "Second.")
    late = connect("pgprompt_rr")
    late.execute(f"BEGIN ISOLATION LEVEL {isolation}")
    late.execute("SELECT count(*) FROM prompt.turns").fetchone()
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, first))
    refused(late, "SELECT prompt.compile_turn(%s, %s)", (C1, second), "40001")
    late.execute("ROLLBACK")
    late.execute(f"BEGIN ISOLATION LEVEL {isolation}")
    assert late.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (C1, second)).fetchone()[0]
    late.execute("COMMIT")
    assert conn.execute("SELECT count(*) FROM prompt.verify_seals(%s)", (C1,)).fetchone()[0] == 0
    late.close()
    conn.close()


# -- Crash ---------------------------------------------------------------------------

def test_a_backend_killed_while_sealing_leaves_no_half_seal():
    """kill -9 of a backend in the middle of writing a seal (held there by a trigger of
    the test's own between the nodes and the seal row, made pgprompt's by the superuser: its
    function a member of the extension, the trigger the extension's comment; pgprompt's
    writes run no trigger of another's): the cluster
    recovers, the turn is unsealed with no node or seal row of it left, and it seals again.
    A cluster of its own: a killed backend restarts every session of its cluster."""
    cluster = "/tmp/pgprompt-crash"
    env = dict(os.environ, PGPROMPT_CLUSTER=cluster, PGPROMPT_PORT="54339")
    subprocess.run([str(ROOT / "scripts/cluster.sh"), "start"], env=env, check=True, capture_output=True)
    try:
        def db():
            return psycopg.connect(host=cluster, port=54339, user="postgres",
                                   dbname="postgres", autocommit=True)
        with db() as c:
            c.execute("CREATE EXTENSION pgprompt")
            c.execute((ROOT / "demo/example.sql").read_text())
            c.execute("CREATE FUNCTION public.hold() RETURNS trigger LANGUAGE plpgsql AS "
                      "$$ BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$")
            c.execute("ALTER EXTENSION pgprompt ADD FUNCTION public.hold()")
            c.execute("CREATE TRIGGER hold AFTER INSERT ON prompt.seal_nodes FOR EACH STATEMENT EXECUTE FUNCTION public.hold()")
            c.execute("COMMENT ON TRIGGER hold ON prompt.seal_nodes IS 'pgprompt: the test holds the seal here'")
        sealing = db()
        pid = sealing.info.backend_pid
        thread = threading.Thread(target=lambda: pytest.raises(psycopg.Error, sealing.execute,
                                                               "SELECT prompt.compile_turn(%s, %s)", (C1, T4)))
        thread.start()
        with db() as c:
            for _ in range(100):
                state = c.execute("SELECT wait_event FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
                if state and state[0] == "PgSleep":
                    break
                time.sleep(0.05)
            assert state and state[0] == "PgSleep", state
        os.kill(pid, signal.SIGKILL)
        thread.join(30)
        for _ in range(100):
            try:
                with db() as c:
                    c.execute("SELECT 1")
                break
            except psycopg.OperationalError:
                time.sleep(0.2)
        with db() as c:
            assert c.execute("SELECT sealed_at FROM prompt.turns WHERE id = %s", (T4,)).fetchone()[0] is None
            assert c.execute("SELECT (SELECT count(*) FROM prompt.seals) + (SELECT count(*) FROM prompt.seal_nodes)").fetchone()[0] == 0
            c.execute("DROP TRIGGER hold ON prompt.seal_nodes")
            assert c.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (C1, T4)).fetchone()[0]
            assert c.execute("SELECT count(*) FROM prompt.verify_seals()").fetchone()[0] == 0
    finally:
        subprocess.run([str(ROOT / "scripts/cluster.sh"), "stop"], env=env, check=False, capture_output=True)


def test_a_crash_is_seen_and_errors_carry_no_backtrace():
    """The crash oracle the other tests use (conftest.ServerLog: what the postmaster logs
    of a backend that died) sees a crash — a backend killed by SIGSEGV — and sees none
    before it. And with RUST_BACKTRACE=1 in the server's environment, an error's DETAIL
    says what the user did, never where the code was. A cluster of its own: a crash
    restarts every session of its cluster."""
    cluster = "/tmp/pgprompt-crash-oracle"
    env = dict(os.environ, PGPROMPT_CLUSTER=cluster, PGPROMPT_PORT="54349", RUST_BACKTRACE="1")
    subprocess.run([str(ROOT / "scripts/cluster.sh"), "start"], env=env, check=True, capture_output=True)
    try:
        def db():
            return psycopg.connect(host=cluster, port=54349, user="postgres", dbname="postgres", autocommit=True)
        log = ServerLog(cluster)
        with db() as c:
            c.execute("CREATE EXTENSION pgprompt")
            c.execute((ROOT / "demo/example.sql").read_text())
            for sql, args, state in (
                ("SELECT prompt.compile_turn(%s, %s)", (C1, str(uuid.uuid4())), "P0002"),
                ("UPDATE prompt.documents SET body = '{{nope}}' WHERE name = 'character'", (), "22023"),
                ("SELECT prompt.count_tokens('x', 'nope')", (), "22023"),
            ):
                e = refused(c, sql, args, state)
                said = " ".join(filter(None, (e.diag.message_primary, e.diag.message_detail, e.diag.message_hint)))
                assert "backtrace" not in said and ".rs:" not in said and "pgrx" not in said, said
        assert log.crashes() == []
        victim = db()
        os.kill(victim.info.backend_pid, signal.SIGSEGV)
        for _ in range(100):
            if log.crashes():
                break
            time.sleep(0.1)
        assert any("terminated by signal 11" in line for line in log.crashes()), log.crashes()
        victim.close()
        # The server recovers and takes connections again (stopped while it recovers, it
        # can hang there).
        for _ in range(300):
            try:
                with db() as c:
                    c.execute("SELECT 1")
                break
            except psycopg.OperationalError:
                time.sleep(0.1)
    finally:
        subprocess.run([str(ROOT / "scripts/cluster.sh"), "stop"], env=env, check=False, capture_output=True)


# -- The rest of the review ----------------------------------------------------------

def test_the_replay_guard_sees_what_row_level_security_hides():
    """Deleting a turn a later seal replayed is refused even for a role whose row-level
    security hides that later, sealed turn: the guard looks it up as the tables' owner."""
    conn = make_database("pgprompt_guard_rls")
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
    writer_role(conn, "pgprompt_half_blind")
    conn.execute("CREATE POLICY hide_sealed ON prompt.turns AS RESTRICTIVE FOR SELECT TO pgprompt_half_blind "
                 "USING (sealed_at IS NULL)")
    conn.execute("SET ROLE pgprompt_half_blind")
    assert conn.execute("SELECT count(*) FROM prompt.turns WHERE id = %s", (T4,)).fetchone()[0] == 0
    e = refused(conn, "DELETE FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0003'", sqlstate="55000")
    assert "was replayed by a later sealed turn" in e.diag.message_primary
    conn.execute("RESET ROLE")
    conn.execute("DROP POLICY hide_sealed ON prompt.turns")
    conn.execute("DROP OWNED BY pgprompt_half_blind")
    conn.execute("DROP ROLE pgprompt_half_blind")
    conn.close()


def test_a_response_without_an_id_is_recorded_once():
    conn = make_database("pgprompt_once")
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
    answer = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]}, "finishReason": "STOP"}],
              "usageMetadata": {"promptTokenCount": 200, "candidatesTokenCount": 2, "totalTokenCount": 202}}
    first = conn.execute("SELECT prompt.record_response(%s, %s, %s::jsonb)", (C1, T4, json.dumps(answer))).fetchone()[0]
    again = conn.execute("SELECT prompt.record_response(%s, %s, %s::jsonb)", (C1, T4, json.dumps(answer))).fetchone()[0]
    assert first == again and first["response_id"] is None
    assert conn.execute("SELECT count(*) FROM prompt.responses WHERE turn_id = %s", (T4,)).fetchone()[0] == 1
    conn.close()


def test_stored_counters_are_the_triggers_own(trust):
    real = trust.execute("SELECT content_tokens, own_entries FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0002'").fetchone()
    trust.execute("UPDATE prompt.turns SET content_tokens = '{2147483647,2147483647}', own_entries = 2147483647 "
                  "WHERE id = '00000000-0000-4000-8000-0000000d0002'")
    assert trust.execute("SELECT content_tokens, own_entries FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0002'").fetchone() == real


def test_the_procedures_resolve_nothing_outside_pg_catalog():
    """An operator a caller puts ahead of pg_catalog in search_path is never the one the
    procedures use."""
    conn = make_database("pgprompt_search_path")
    conn.execute("CREATE SCHEMA evil")
    conn.execute("CREATE FUNCTION evil.hijack(bigint, integer) RETURNS bool LANGUAGE plpgsql AS "
                 "$$ BEGIN RAISE EXCEPTION 'hijacked'; END $$")
    conn.execute("CREATE OPERATOR evil.= (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = evil.hijack)")
    conn.execute("CREATE FUNCTION evil.hijack(integer, integer) RETURNS bool LANGUAGE plpgsql AS "
                 "$$ BEGIN RAISE EXCEPTION 'hijacked'; END $$")
    conn.execute("CREATE OPERATOR evil.< (LEFTARG = integer, RIGHTARG = integer, FUNCTION = evil.hijack)")
    conn.execute("SET search_path = evil, pg_catalog, public")
    conn.execute("CALL prompt.convert_seals_02()")
    conn.execute("CALL prompt.backfill_token_counts('o200k_base')")
    conn.close()


def test_a_database_not_in_utf8_is_refused():
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_latin1")
        admin.execute("CREATE DATABASE pgprompt_latin1 ENCODING 'LATIN1' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'")
    with connect("pgprompt_latin1") as c:
        e = refused(c, "CREATE EXTENSION pgprompt", sqlstate="0A000")
        assert e.diag.message_primary == 'pgprompt needs a UTF8 database, and "pgprompt_latin1" is LATIN1'
        assert c.execute("SELECT count(*) FROM pg_extension WHERE extname = 'pgprompt'").fetchone()[0] == 0
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE pgprompt_latin1")


def test_the_memo_is_kept_apart_per_role_and_sized_by_a_superuser():
    conn = make_database("pgprompt_memo_roles")
    writer_role(conn, "pgprompt_memo_a")
    writer_role(conn, "pgprompt_memo_b")
    conn.execute("GRANT pgprompt_memo_a, pgprompt_memo_b TO CURRENT_USER")
    conn.execute("SET ROLE pgprompt_memo_a")
    refused(conn, "SET pgprompt.memo_capacity = 10", sqlstate="42501")
    conn.execute("SELECT prompt.preview_turn(%s, %s)", (C1, T4))
    conn.execute("SELECT prompt.preview_turn(%s, %s)", (C1, T4))
    a = conn.execute("SELECT entries, hits, misses FROM prompt.memo_stats()").fetchone()
    assert a[0] > 0 and a[1] > 0 and a[2] > 0, a
    conn.execute("SET ROLE pgprompt_memo_b")
    assert conn.execute("SELECT entries, hits, misses FROM prompt.memo_stats()").fetchone() == (0, 0, 0)
    conn.execute("SELECT prompt.preview_turn(%s, %s)", (C1, T4))
    b = conn.execute("SELECT entries, hits, misses FROM prompt.memo_stats()").fetchone()
    assert b[1] == 0 and b[2] == a[2], (a, b)   # nothing of a's answered b's lookups
    conn.execute("RESET ROLE")
    conn.execute("REVOKE pgprompt_memo_a, pgprompt_memo_b FROM CURRENT_USER")
    for r in ("pgprompt_memo_a", "pgprompt_memo_b"):
        conn.execute(f"DROP OWNED BY {r}")
        conn.execute(f"DROP ROLE {r}")
    conn.close()
