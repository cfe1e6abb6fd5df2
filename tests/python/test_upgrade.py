"""Upgrades: installing the frozen 0.1.0 and updating (0.1.0 -> 0.2.0 -> 0.3.0) equals a
fresh install, and the rows written before, 0.2 seals included, survive and compile.

Every release keeps its full install script frozen (sql/releases/pgprompt--A.sql) and an
update script (sql/pgprompt--A--B.sql, which `cargo pgrx install` ships). The schemas
are compared with `pg_dump --schema-only --binary-upgrade` (plain pg_dump leaves an
extension's members out), with only OID-setting lines set aside.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess

import psycopg
import pytest

from conftest import PG_CONFIG, PGBIN, ROOT, connect, make_database

OLD = "0.1.0"
SEAL_02 = "0.2.0"  # the release whose seals (turns.sealed_request) 0.3.0 converts
C1, T4 = "00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"


def extension_dir() -> pathlib.Path:
    share = subprocess.run([PG_CONFIG, "--sharedir"], capture_output=True, text=True, check=True)
    return pathlib.Path(share.stdout.strip()) / "extension"


def current_version() -> str:
    cargo = (ROOT / "Cargo.toml").read_text()
    return re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)


def schema_of(dbname: str) -> str:
    dump = subprocess.run(
        [f"{PGBIN}/pg_dump", "--schema-only", "--binary-upgrade", "--no-owner", "-h", os.environ["PGHOST"], "-p", os.environ["PGPORT"], "-U", "postgres", dbname],
        capture_output=True, text=True, check=True,
    ).stdout
    # Set aside what binary-upgrade mode adds about OIDs and frozen xids.
    # A dropped column leaves a placeholder a binary-upgrade dump recreates and drops
    # (PostgreSQL 18 spells it as one UPDATE ... FROM (VALUES ...) over the dropped names).
    noise = ("binary_upgrade_set", "UPDATE pg_catalog.pg_class", "SET relfrozenxid", "WHERE oid = ", "\\restrict",
             "\\unrestrict", "pg.dropped", "UPDATE pg_catalog.pg_attribute", "SET attlen", "AND attrelid = ",
             "WHERE attrelid = ", "AND attname = v.dname")
    keep = [l for l in dump.splitlines() if l.strip() and not l.startswith("--") and not any(n in l for n in noise)]
    # The extension's config tables are listed by OID.
    keep = [re.sub(r"'\{[0-9,]+\}'", "'{config table oids}'", l) for l in keep]
    return "\n".join(keep)


def update_chain() -> list:
    """The update scripts from OLD to the current version, in order."""
    chain, at = [], OLD
    while at != current_version():
        nxt = next(p.name.split("--")[2][:-4] for p in (ROOT / "sql").glob(f"pgprompt--{at}--*.sql"))
        chain.append(f"pgprompt--{at}--{nxt}.sql")
        at = nxt
    return chain


def test_the_update_scripts_ship_and_the_old_releases_are_frozen():
    assert (ROOT / f"sql/releases/pgprompt--{OLD}.sql").exists()
    assert (ROOT / f"sql/releases/pgprompt--{SEAL_02}.sql").exists()
    chain = update_chain()
    assert chain == ["pgprompt--0.1.0--0.2.0.sql", "pgprompt--0.2.0--0.3.0.sql", "pgprompt--0.3.0--0.4.0.sql",
                     "pgprompt--0.4.0--0.5.0.sql", f"pgprompt--0.5.0--{current_version()}.sql"]
    for script in chain:
        assert (extension_dir() / script).exists(), script


def test_install_old_then_update_equals_a_fresh_install():
    shutil.copy(ROOT / f"sql/releases/pgprompt--{OLD}.sql", extension_dir() / f"pgprompt--{OLD}.sql")
    with connect("postgres") as admin:
        for name in ("pgprompt_upgraded", "pgprompt_fresh"):
            admin.execute(f"DROP DATABASE IF EXISTS {name}")
            admin.execute(f"CREATE DATABASE {name}")
    seal = json.loads((ROOT / "tests/fixtures/seal_0.2.0.json").read_text())
    with connect("pgprompt_upgraded") as c:
        c.execute(f"CREATE EXTENSION pgprompt VERSION '{OLD}'")
        # Rows written under the old releases survive the updates and compile after them.
        c.execute((ROOT / "demo/example.sql").read_text())
        c.execute(f"ALTER EXTENSION pgprompt UPDATE TO '{SEAL_02}'")
        # Grants an administrator made on the extension's functions survive the updates,
        # those of functions an update replaces included.
        c.execute("DO $$ BEGIN CREATE ROLE pgprompt_upgrade_app NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        c.execute("REVOKE EXECUTE ON FUNCTION prompt.count_tokens(text, text) FROM PUBLIC")
        c.execute("GRANT EXECUTE ON FUNCTION prompt.count_tokens(text, text) TO pgprompt_upgrade_app")
        own = c.execute("SELECT own_entries FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0002'").fetchone()[0]
        assert own == 2, "the update counts existing turns' entries"
        # A seal as 0.2.0 wrote it (its compile_turn result, kept in tests/fixtures).
        c.execute(
            "UPDATE prompt.turns SET sealed_at = '2026-11-30 23:31+00', sealed_request = %s::jsonb, "
            "sealed_preface = %s::jsonb, sealed_mechanism = 'default', sealed_versions = '{}' WHERE id = %s",
            (json.dumps(seal), json.dumps(seal["preface"]), T4),
        )
        c.execute("ALTER EXTENSION pgprompt UPDATE TO '0.3.0'")
        # An application role granted as 0.3's README said: every table of the schema. It
        # keeps compiling through the updates (the tables they add get the same grants).
        c.execute("DO $$ BEGIN CREATE ROLE pgprompt_upgrade_reader NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        c.execute("GRANT USAGE ON SCHEMA prompt TO pgprompt_upgrade_reader")
        c.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO pgprompt_upgrade_reader")
        c.execute("REVOKE EXECUTE ON FUNCTION prompt._history_rewrite_allowed() FROM PUBLIC")
        c.execute("GRANT EXECUTE ON FUNCTION prompt._history_rewrite_allowed() TO pgprompt_upgrade_app")
        acl = "SELECT proacl::text FROM pg_proc WHERE oid = %s::regprocedure"
        before = [c.execute(acl, (f,)).fetchone()[0] for f in ("prompt.count_tokens(text,text)", "prompt._history_rewrite_allowed()")]
        said = []
        c.add_notice_handler(lambda d: said.append((d.message_primary, d.message_hint)))
        c.execute("ALTER EXTENSION pgprompt UPDATE")
        assert c.execute("SELECT extversion FROM pg_extension WHERE extname = 'pgprompt'").fetchone()[0] == current_version()
        # The update names the role and the statement that gives it 0.5's tables.
        named = [hint for message, hint in said if "pgprompt_upgrade_reader" in (message or "")]
        assert len(named) == 1 and named[0] == (
            "GRANT DELETE, INSERT, SELECT, UPDATE ON prompt.model_profiles, prompt.counts TO pgprompt_upgrade_reader; "
            "GRANT SELECT ON prompt.model_status TO pgprompt_upgrade_reader;"), said
        c.execute("SET ROLE pgprompt_upgrade_reader")
        try:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                c.execute("SELECT prompt.preview_turn(%s, %s)", (C1, "00000000-0000-4000-8000-0000000d0002"))
        finally:
            c.execute("RESET ROLE")
        after = [c.execute(acl, (f,)).fetchone()[0] for f in ("prompt.count_tokens(text,text)", "prompt._history_rewrite_allowed()")]
        assert after == before and all("pgprompt_upgrade_app=X" in a for a in after), (before, after)
        # 0.4 replaced _history_rewrite_allowed (SQL) with the library's: same grants.
        assert c.execute("SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang "
                         "WHERE p.oid = 'prompt._history_rewrite_allowed()'::regprocedure").fetchone()[0] == "c"
        # README, "Upgrading": the statement the update's NOTICE names, run as the owner.
        c.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON prompt.model_profiles, prompt.counts TO pgprompt_upgrade_reader")
        c.execute("GRANT SELECT ON prompt.model_status TO pgprompt_upgrade_reader")
        c.execute("SET ROLE pgprompt_upgrade_reader")
        try:
            assert c.execute("SELECT count(*) > 0 FROM prompt.model_profiles").fetchone()[0]
            assert c.execute("SELECT count(*) FROM prompt.counts").fetchone()[0] == 0
            assert c.execute("SELECT count(*) FROM prompt.model_status").fetchone()[0] >= 0
            assert c.execute("SELECT prompt.preview_turn(%s, %s) IS NOT NULL", (C1, "00000000-0000-4000-8000-0000000d0002")).fetchone()[0]
        finally:
            c.execute("RESET ROLE")
        c.execute("REVOKE ALL ON ALL TABLES IN SCHEMA prompt FROM pgprompt_upgrade_reader")
        c.execute("REVOKE ALL ON prompt.model_status FROM pgprompt_upgrade_reader")
        c.execute("REVOKE USAGE ON SCHEMA prompt FROM pgprompt_upgrade_reader")
        c.execute("REVOKE ALL ON FUNCTION prompt.count_tokens(text, text), prompt._history_rewrite_allowed() FROM pgprompt_upgrade_app")
        c.execute("GRANT EXECUTE ON FUNCTION prompt.count_tokens(text, text), prompt._history_rewrite_allowed() TO PUBLIC")
        # The update moved the 0.2 seal, unconverted: reading it says so, by name.
        assert c.execute("SELECT count(*) FROM prompt.seals_02").fetchone()[0] == 1
        for call in ("sealed_body", "explain_turn"):
            with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as refused:
                c.execute(f"SELECT prompt.{call}(%s, %s)", (C1, T4))
            assert refused.value.diag.message_primary.startswith("seal_conversion_pending: turn " + T4)
            assert "CALL prompt.convert_seals_02()" in refused.value.diag.message_hint
        # A writer converts the conversation's 0.2 seals first: record_response of an
        # answer to the sealed request, then compile_turn, which returns the request that
        # was sealed, in the providers' order.
        answer = {"id": "msg_02", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                  "content": [{"type": "text", "text": "Refunded; the credit note follows."}],
                  "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 180, "output_tokens": 9}}
        recorded = c.execute("SELECT prompt.record_response(%s, %s, %s::jsonb)", (C1, T4, json.dumps(answer))).fetchone()[0]
        assert recorded["recorded"] == "answer"
        assert c.execute("SELECT count(*) FROM prompt.seals_02").fetchone()[0] == 0
        body = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0]
        assert json.loads(body) == seal["request"]
        assert body.startswith('{"model":"claude-sonnet-4-5","max_tokens":1024,"system":[{"type":"text","text":')
        assert c.execute("SELECT sealed_at = '2026-11-30 23:31+00' FROM prompt.seals WHERE turn_id = %s", (T4,)).fetchone()[0]
        explained = c.execute("SELECT prompt.explain_turn(%s, %s)", (C1, T4)).fetchone()[0]
        assert explained["sealed"] and explained["estimate"]["total"] == seal["estimate"]["total"]
        assert explained["estimate"]["history"]["available"] == 4
        c.execute("SET pgprompt.allow_history_rewrite = on")
        c.execute("TRUNCATE prompt.models, prompt.users, prompt.workspaces CASCADE")
    with connect("pgprompt_fresh") as c:
        c.execute("CREATE EXTENSION pgprompt")
    upgraded, fresh = schema_of("pgprompt_upgraded"), schema_of("pgprompt_fresh")
    if upgraded != fresh:
        import difflib

        diff = "\n".join(difflib.unified_diff(fresh.splitlines(), upgraded.splitlines(), "fresh", "upgraded", lineterm="", n=2))
        raise AssertionError(f"the updated schema differs from a fresh install:\n{diff[:4000]}")


def statements(sql: str) -> str:
    """SQL without comments (pgrx notes source lines and Rust types in them) or spacing."""
    sql = re.sub(r"/\*.*?\*/", "", sql, flags=re.S)
    sql = re.sub(r"--[^\n]*", "", sql)
    return " ".join(sql.split())


def test_the_current_release_is_frozen():
    """The schema cannot change without a new version: the install script cargo pgrx
    generates equals the frozen one of this version (a change means: bump the version,
    freeze the new script, write the update script)."""
    version = current_version()
    generated = (extension_dir() / f"pgprompt--{version}.sql").read_text()
    frozen = (ROOT / f"sql/releases/pgprompt--{version}.sql").read_text()
    assert statements(generated) == statements(frozen)


def test_many_0_2_seals_convert_in_resumable_batches():
    """The update moves 0.2 seals as they are (the time of a copy); CALL
    prompt.convert_seals_02() converts them in committed batches. Interrupted midway, it
    keeps what it committed, and the next CALL goes on with the rest: every seal of several
    conversations is converted once, returns the request that was sealed, and the NOTICEs
    count them. Prints the conversion rate."""
    import time

    shutil.copy(ROOT / f"sql/releases/pgprompt--{OLD}.sql", extension_dir() / f"pgprompt--{OLD}.sql")
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_batches")
        admin.execute("CREATE DATABASE pgprompt_batches")
    seal = json.loads((ROOT / "tests/fixtures/seal_0.2.0.json").read_text())
    per_conversation, conversations = 90, 3
    total = per_conversation * conversations
    with connect("pgprompt_batches") as c:
        c.execute(f"CREATE EXTENSION pgprompt VERSION '{SEAL_02}'")
        c.execute((ROOT / "demo/example.sql").read_text())
        ws, lark, ada = c.execute("SELECT workspace_id, answerer_id, creator_id FROM prompt.conversations WHERE id = %s",
                                  (C1,)).fetchone()
        for n in range(conversations):
            conv = c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) "
                             "VALUES (%s, %s, %s) RETURNING id", (ws, lark, ada)).fetchone()[0]
            c.execute("INSERT INTO prompt.turns (conversation_id, seq, kind, author_id, poster_id, prompt) "
                      "SELECT %s, s, 'reply', %s, %s, 'question ' || s FROM generate_series(1, %s) s",
                      (conv, ada, ada, per_conversation))
        c.execute("UPDATE prompt.turns SET sealed_at = '2026-11-30 23:31+00', sealed_request = %s::jsonb, "
                  "sealed_preface = %s::jsonb, sealed_mechanism = 'default', sealed_versions = '{}' "
                  "WHERE conversation_id <> %s", (json.dumps(seal), json.dumps(seal["preface"]), C1))
        notices = []
        c.add_notice_handler(lambda d: notices.append(d.message_primary))
        c.execute("ALTER EXTENSION pgprompt UPDATE")
        assert f"pgprompt: {total} sealed turns of 0.2 wait for conversion in prompt.seals_02" in notices, notices
        assert c.execute("SELECT sum(unconverted_02_seals) FROM prompt.status").fetchone()[0] == total
        assert c.execute("SELECT count(*) FROM prompt.seals").fetchone()[0] == 0

        # Two sessions at once take different batches: while one holds the first
        # conversation's seals, the other skips them (seals of one conversation are
        # stored one transaction at a time, so it takes the next conversation's).
        with connect("pgprompt_batches") as other:
            c.execute("BEGIN")
            assert c.execute("SELECT prompt._convert_seals_02(NULL, %s)", (per_conversation,)).fetchone()[0] == per_conversation
            other.execute("SET statement_timeout = '20s'")
            assert other.execute("SELECT prompt._convert_seals_02(NULL, 10)").fetchone()[0] == 10
            c.execute("COMMIT")
        assert c.execute("SELECT count(*) FROM prompt.seals").fetchone()[0] == per_conversation + 10
        assert c.execute("SELECT count(DISTINCT conversation_id) FROM prompt.seals").fetchone()[0] == 2
        for bad in ("0", "NULL"):
            with pytest.raises(psycopg.errors.InvalidParameterValue):
                c.execute(f"SELECT prompt._convert_seals_02(NULL, {bad})")

        # Interrupted: the first batch's NOTICE (sent after its COMMIT) cancels the call.
        notices.clear()
        interrupted = []

        def cancel_once(d):
            if d.message_primary.startswith("convert_seals_02: ") and not interrupted:
                interrupted.append(d.message_primary)
                c.cancel()

        c.add_notice_handler(cancel_once)
        with pytest.raises(psycopg.errors.QueryCanceled):
            c.execute("CALL prompt.convert_seals_02(10)")
        c.remove_notice_handler(cancel_once)
        assert interrupted == [f"convert_seals_02: 10 of {total - per_conversation - 10} converted"], interrupted
        kept = c.execute("SELECT count(*) FROM prompt.seals").fetchone()[0]
        left = c.execute("SELECT count(*) FROM prompt.seals_02").fetchone()[0]
        assert per_conversation + 20 <= kept < total and kept + left == total, (kept, left)

        # Resumed: the rest, and nothing twice.
        notices.clear()
        started = time.monotonic()
        c.execute("CALL prompt.convert_seals_02()")
        took = time.monotonic() - started
        assert f"convert_seals_02: done, {left} converted" in notices, notices
        assert c.execute("SELECT count(*) FROM prompt.seals").fetchone()[0] == total
        assert c.execute("SELECT count(*) FROM prompt.seals_02").fetchone()[0] == 0
        for conv, turn in c.execute("SELECT conversation_id, id FROM prompt.turns WHERE conversation_id <> %s "
                                    "AND seq IN (1, 45, %s)", (C1, per_conversation)).fetchall():
            body = c.execute("SELECT prompt.sealed_body(%s, %s)::text", (conv, turn)).fetchone()[0]
            assert json.loads(body) == seal["request"]
            body = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
            assert json.loads(body) == seal["request"]
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            c.execute("CALL prompt.convert_seals_02(0)")
        print(f"\n0.2 seal conversion: {left} seals in {took:.2f} s ({left / took:.0f} seals/s, CALL convert_seals_02)")


def test_an_extension_older_than_the_library_refuses_until_updated():
    """A database whose extension is still 0.5.0 under this library: a compile refuses with
    extension_not_updated (55000) naming both versions, and works once the extension is
    updated. The version is read from pg_extension itself (src/pg/session.rs)."""
    previous = "0.5.0"
    shutil.copy(ROOT / f"sql/releases/pgprompt--{previous}.sql", extension_dir() / f"pgprompt--{previous}.sql")
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_not_updated")
        admin.execute("CREATE DATABASE pgprompt_not_updated")
    with connect("pgprompt_not_updated") as c:
        c.execute(f"CREATE EXTENSION pgprompt VERSION '{previous}'")
        c.execute((ROOT / "demo/example.sql").read_text())
    with connect("pgprompt_not_updated") as c:
        with pytest.raises(psycopg.Error) as e:
            c.execute("SELECT prompt.preview_turn(%s, %s)", (C1, T4)).fetchone()
        assert e.value.sqlstate == "55000"
        assert e.value.diag.message_primary == (
            f"extension_not_updated: the pgprompt library is {current_version()} and this database's extension is {previous}"
        )
    with connect("pgprompt_not_updated") as c:
        c.execute("ALTER EXTENSION pgprompt UPDATE")
    with connect("pgprompt_not_updated") as c:
        assert c.execute("SELECT prompt.preview_turn(%s, %s) IS NOT NULL", (C1, T4)).fetchone()[0]
