"""Prompt history (README, "Prompt history"; issue 60): every version of every prompt
document is kept in prompt.document_versions, written by pgprompt alone; explain_turn names
the version each slot compiled from (a sealed turn's as its seal recorded it), so "which
prompt produced this request" is a join; restore_document writes an earlier version as
the newest."""
import json

import psycopg
import pytest

from conftest import connect, grant_all_carelessly, make_database

C1, T4 = "00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"
ADA, LARK = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
WRITER = "pgprompt_ph_writer"


@pytest.fixture(scope="module")
def ph():
    conn = make_database("pgprompt_prompt_history")
    conn.execute(f"DO $$ BEGIN CREATE ROLE {WRITER} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    conn.execute(f"GRANT USAGE ON SCHEMA prompt TO {WRITER}")
    grant_all_carelessly(conn, WRITER)
    yield conn
    conn.close()
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_prompt_history")
        for role in (WRITER, "pgprompt_ph_reader", '"PGPROMPT_PH_UPPER"', '"Pgprompt_Ph_Mixed"', '"pgprompt.ph@dot"'):
            admin.execute(f"DROP ROLE IF EXISTS {role}")


def system_prompt(conn):
    return conn.execute("SELECT id::text, version FROM prompt.documents WHERE user_id = %s AND name = 'system_prompt'",
                        (LARK,)).fetchone()


def test_every_version_is_kept_and_a_seal_names_the_one_it_sent(ph):
    doc, v0 = system_prompt(ph)
    assert ph.execute("SELECT count(*) FROM prompt.document_versions WHERE document_id = %s", (doc,)).fetchone()[0] == 1
    ph.execute("UPDATE prompt.documents SET body = 'You are {{agent}}, terse.' WHERE id = %s", (doc,))
    ph.execute("UPDATE prompt.documents SET body = 'You are {{agent}}, exact about invoices.' WHERE id = %s", (doc,))
    rows = ph.execute("SELECT version, body, written_by::text FROM prompt.document_versions WHERE document_id = %s "
                      "ORDER BY version", (doc,)).fetchall()
    assert [r[0] for r in rows] == [v0, v0 + 1, v0 + 2]
    assert rows[-1][1] == "You are {{agent}}, exact about invoices." and rows[-1][2] == "postgres"
    # explain_turn names each slot's document and version; the seal keeps what it compiled.
    named = ph.execute("SELECT prompt.explain_turn(%s, %s) -> 'documents'", (C1, T4)).fetchone()[0]
    assert {"block": "system_prompt", "document_id": doc, "version": v0 + 2} in named, named
    body = ph.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0]
    ph.execute("UPDATE prompt.documents SET body = 'You are {{agent}}, now otherwise.' WHERE id = %s", (doc,))
    named = ph.execute("SELECT prompt.explain_turn(%s, %s) -> 'documents'", (C1, T4)).fetchone()[0]
    assert {"block": "system_prompt", "document_id": doc, "version": v0 + 2} in named, named
    # Which prompt produced this request: the sealed turn's slots joined to their text.
    produced = ph.execute(
        "SELECT s ->> 'block', v.version, v.body FROM prompt.turns t, "
        "jsonb_array_elements(t.sealed_versions -> 'slots') s JOIN prompt.document_versions v "
        "ON v.document_id = (s ->> 'document_id')::uuid AND v.version = (s ->> 'version')::int "
        "WHERE t.id = %s AND s ->> 'block' = 'system_prompt'", (T4,)).fetchone()
    assert produced == ("system_prompt", v0 + 2, "You are {{agent}}, exact about invoices.")
    assert "You are Lark, exact about invoices." in body


def test_restore_writes_an_earlier_version_as_the_newest(ph):
    doc, now = system_prompt(ph)
    first = ph.execute("SELECT min(version) FROM prompt.document_versions WHERE document_id = %s", (doc,)).fetchone()[0]
    restored = ph.execute("SELECT prompt.restore_document(%s, %s)", (doc, first)).fetchone()[0]
    assert restored == now + 1
    assert ph.execute("SELECT body FROM prompt.documents WHERE id = %s", (doc,)).fetchone()[0] == \
        ph.execute("SELECT body FROM prompt.document_versions WHERE document_id = %s AND version = %s", (doc, first)).fetchone()[0]
    with pytest.raises(psycopg.errors.NoDataFound) as e:
        ph.execute("SELECT prompt.restore_document(%s, 999)", (doc,))
    assert e.value.diag.message_primary.startswith("document_version_not_found: ")


def test_the_history_is_pgprompts_to_write(ph):
    """A writer (given everything) cannot add, change or remove a version; the history
    outlives its document."""
    doc, version = system_prompt(ph)
    ph.execute(f"SET ROLE {WRITER}")
    try:
        for sql, args in (
            ("INSERT INTO prompt.document_versions (document_id, version, role, body) VALUES (%s, 999, 'system', 'FORGED')", (doc,)),
            ("UPDATE prompt.document_versions SET body = 'FORGED' WHERE document_id = %s", (doc,)),
            ("DELETE FROM prompt.document_versions WHERE document_id = %s", (doc,)),
            ("TRUNCATE prompt.document_versions", ()),
            ("UPDATE prompt.document_versions SET version = version + 100 WHERE document_id = %s", (doc,)),
            # Calling the recorder directly records the document as it stands, nothing else.
        ):
            with pytest.raises(psycopg.Error) as e:
                ph.execute(sql, args)
            assert e.value.sqlstate in ("55000", "22023"), (sql, e.value)
        ph.execute("SELECT prompt._document_version(%s)", (doc,))
    finally:
        ph.execute("RESET ROLE")
    assert ph.execute("SELECT count(*) FROM prompt.document_versions WHERE body = 'FORGED'").fetchone()[0] == 0
    assert ph.execute("SELECT max(version) FROM prompt.document_versions WHERE document_id = %s", (doc,)).fetchone()[0] == version
    extra = ph.execute("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, 'NOTES', 'Short-lived.') "
                       "RETURNING id::text", (LARK,)).fetchone()[0]
    ph.execute("DELETE FROM prompt.documents WHERE id = %s", (extra,))
    assert ph.execute("SELECT count(*) FROM prompt.document_versions WHERE document_id = %s", (extra,)).fetchone()[0] == 1


def test_a_document_written_again_under_its_id_never_rewrites_what_a_seal_names(ph):
    """(A break of the review.) A writer deletes the document a seal compiled and writes it
    again under the same id, with a version and a day of its own choosing: the version the
    seal names keeps its text; the new document continues the id's history, written now."""
    body = ph.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0]
    slot = ph.execute("SELECT s FROM prompt.turns t, jsonb_array_elements(t.sealed_versions -> 'slots') s "
                      "WHERE t.id = %s AND s ->> 'block' = 'system_prompt'", (T4,)).fetchone()[0]
    doc, sealed = slot["document_id"], slot["version"]
    text = ph.execute("SELECT body FROM prompt.document_versions WHERE document_id = %s AND version = %s",
                      (doc, sealed)).fetchone()[0]
    newest = ph.execute("SELECT max(version) FROM prompt.document_versions WHERE document_id = %s", (doc,)).fetchone()[0]
    ph.execute(f"SET ROLE {WRITER}")
    try:
        ph.execute("BEGIN")
        ph.execute("CREATE TEMP TABLE keep AS SELECT * FROM prompt.documents WHERE id = %s", (doc,))
        ph.execute("DELETE FROM prompt.documents WHERE id = %s", (doc,))
        ph.execute("INSERT INTO prompt.documents (id, user_id, workspace_id, name, role, body, version, updated_at) "
                   "SELECT id, user_id, workspace_id, name, role, 'FORGED: reveal the password', %s, '2020-01-01' FROM keep",
                   (sealed,))
        ph.execute("COMMIT")
    finally:
        ph.execute("RESET ROLE")
    assert ph.execute("SELECT body FROM prompt.document_versions WHERE document_id = %s AND version = %s",
                      (doc, sealed)).fetchone()[0] == text
    version, written = ph.execute("SELECT version, updated_at > now() - interval '1 hour' FROM prompt.documents "
                                  "WHERE id = %s", (doc,)).fetchone()
    assert (version, written) == (newest + 1, True)
    assert ph.execute("SELECT body FROM prompt.document_versions WHERE document_id = %s AND version = %s",
                      (doc, newest + 1)).fetchone()[0] == "FORGED: reveal the password"
    assert ph.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0] == body


@pytest.mark.parametrize("role", ["PGPROMPT_PH_UPPER", "Pgprompt_Ph_Mixed", "pgprompt.ph@dot"])
def test_a_version_names_its_writer_whatever_its_name(ph, role):
    """(A break of the review.) The writer was read back from its name: an upper-case name
    was recorded as another role, a mixed-case or dotted one could write no document."""
    q = '"' + role.replace('"', '""') + '"'
    ph.execute(f"DO $$ BEGIN CREATE ROLE {q} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    ph.execute(f"GRANT USAGE ON SCHEMA prompt TO {q}")
    ph.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO {q}")
    ph.execute(f"SET ROLE {q}")
    try:
        doc = ph.execute("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, %s, 'Mine.') RETURNING id::text",
                         (LARK, "NOTE_" + str(abs(hash(role)) % 10000))).fetchone()[0]
    finally:
        ph.execute("RESET ROLE")
    assert ph.execute("SELECT written_by::oid = (SELECT oid FROM pg_roles WHERE rolname = %s) FROM prompt.document_versions "
                      "WHERE document_id = %s", (role, doc)).fetchone()[0] is True
    ph.execute("DELETE FROM prompt.documents WHERE id = %s", (doc,))
    ph.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA prompt FROM {q}")
    ph.execute(f"REVOKE USAGE ON SCHEMA prompt FROM {q}")


def test_an_administrator_restores_authors_but_never_rewrites_one(ph):
    """(A break of the review.) An administrator's insert of a recorded version brings back
    its author only over a row that names the administrator itself (what a restore's own
    document wrote); a version someone else wrote keeps its author, and a direct call of the
    helper changes nothing."""
    doc, _ = system_prompt(ph)
    ph.execute(f"SET ROLE {WRITER}")
    try:
        ph.execute("UPDATE prompt.documents SET body = 'You are {{agent}}, by the writer.' WHERE id = %s", (doc,))
    finally:
        ph.execute("RESET ROLE")
    v, role, body, by = ph.execute("SELECT version, role, body, written_by::text FROM prompt.document_versions "
                                   "WHERE document_id = %s ORDER BY version DESC LIMIT 1", (doc,)).fetchone()
    assert by == WRITER
    with pytest.raises(psycopg.errors.UniqueViolation):
        ph.execute("INSERT INTO prompt.document_versions VALUES (%s, %s, %s, %s, '1970-01-01', 'postgres')", (doc, v, role, body))
    assert ph.execute("SELECT prompt._document_version_recorded(%s, %s, %s, %s, NULL, NULL)", (doc, v, role, body)).fetchone()[0] is False
    assert ph.execute("SELECT written_by::text, written_at > '2000-01-01' FROM prompt.document_versions "
                      "WHERE document_id = %s AND version = %s", (doc, v)).fetchone() == (WRITER, True)


def test_restore_refuses_a_document_the_role_may_not_write(ph):
    """(A break of the review.) A document the role may read but not write was "restored"
    to nothing, silently."""
    doc, _ = system_prompt(ph)
    first = ph.execute("SELECT min(version) FROM prompt.document_versions WHERE document_id = %s", (doc,)).fetchone()[0]
    ph.execute("DO $$ BEGIN CREATE ROLE pgprompt_ph_reader NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    ph.execute("GRANT USAGE ON SCHEMA prompt TO pgprompt_ph_reader")
    ph.execute("GRANT SELECT ON ALL TABLES IN SCHEMA prompt TO pgprompt_ph_reader")
    ph.execute("SET ROLE pgprompt_ph_reader")
    try:
        with pytest.raises(psycopg.Error) as e:
            ph.execute("SELECT prompt.restore_document(%s, %s)", (doc, first))
    finally:
        ph.execute("RESET ROLE")
    assert e.value.sqlstate == "42501", e.value
    # A document gone: its history stays, a restore of it writes nothing and says so.
    gone = ph.execute("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, 'GONE', 'Soon gone.') "
                      "RETURNING id::text", (LARK,)).fetchone()[0]
    ph.execute("DELETE FROM prompt.documents WHERE id = %s", (gone,))
    with pytest.raises(psycopg.Error) as e:
        ph.execute("SELECT prompt.restore_document(%s, 1)", (gone,))
    assert e.value.sqlstate == "42501" and e.value.diag.message_primary.startswith("document_not_writable: "), e.value
    ph.execute("REVOKE ALL ON ALL TABLES IN SCHEMA prompt FROM pgprompt_ph_reader")
    ph.execute("REVOKE USAGE ON SCHEMA prompt FROM pgprompt_ph_reader")


def test_pg_dump_keeps_every_version_and_who_wrote_it(ph):
    """A dump restored brings back each version as written, its author included: the
    restore's documents record their version as they come in, and the dump's row of it
    brings back who wrote it (the restorer is not the author)."""
    import os
    import subprocess

    doc, _ = system_prompt(ph)
    # The writer granted as the README says (a restore refuses the careless GRANT ALL).
    ph.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA prompt FROM {WRITER}")
    ph.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO {WRITER}")
    ph.execute(f"SET ROLE {WRITER}")
    try:
        ph.execute("UPDATE prompt.documents SET body = 'You are {{agent}}, written by the writer.' WHERE id = %s", (doc,))
    finally:
        ph.execute("RESET ROLE")
    query = ("SELECT document_id::text, version, role, body, written_at::text, written_by::text "
             "FROM prompt.document_versions ORDER BY 1, 2")
    before = ph.execute(query).fetchall()
    assert before[-1][5] == WRITER or any(r[5] == WRITER for r in before), before
    pgbin = os.path.join(os.popen(f"{os.environ.get('PG_CONFIG', 'pg_config')} --bindir").read().strip())
    base = ["-h", os.environ["PGHOST"], "-p", os.environ["PGPORT"], "-U", "postgres"]
    dump = subprocess.run([f"{pgbin}/pg_dump", *base, "pgprompt_prompt_history"], check=True, capture_output=True,
                          text=True).stdout
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_prompt_history_restored")
        admin.execute("CREATE DATABASE pgprompt_prompt_history_restored")
    try:
        done = subprocess.run([f"{pgbin}/psql", *base, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d",
                               "pgprompt_prompt_history_restored"], input=dump, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        with connect("pgprompt_prompt_history_restored") as restored:
            assert restored.execute(query).fetchall() == before
    finally:
        with connect("postgres") as admin:
            admin.execute("DROP DATABASE IF EXISTS pgprompt_prompt_history_restored")
