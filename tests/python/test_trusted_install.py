"""A trusted install (README, "Install"): a database owner that is no superuser
creates the extension in its database (the script runs as the bootstrap superuser and
creates schema prompt itself), uses it and grants it on; the schema is never the
database owner's, and one that was there before holding objects is refused."""
import os

import psycopg
import pytest

from conftest import ROOT, connect

C1, T4 = "00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"


def as_owner():
    return psycopg.connect(host=os.environ.get("PGHOST", "/tmp/pgprompt-cluster"), port=int(os.environ.get("PGPORT", "54329")),
                           user="pgprompt_dbo", dbname="pgprompt_trusted", autocommit=True)


@pytest.fixture()
def owned_database():
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_trusted")
        admin.execute("DO $$ BEGIN CREATE ROLE pgprompt_dbo LOGIN NOSUPERUSER; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        admin.execute("DO $$ BEGIN CREATE ROLE pgprompt_dbo_app NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        admin.execute("CREATE DATABASE pgprompt_trusted OWNER pgprompt_dbo")
    yield
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_trusted")
        admin.execute("DROP ROLE IF EXISTS pgprompt_dbo_app")
        admin.execute("DROP ROLE IF EXISTS pgprompt_dbo")


def test_a_database_owner_installs_it_without_superuser(owned_database):
    with as_owner() as c:
        assert c.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0] is False
        # A schema made before, holding a function of the owner's: refused.
        c.execute("CREATE SCHEMA prompt")
        c.execute("CREATE FUNCTION prompt.count_tokens(text, text) RETURNS int LANGUAGE sql AS 'SELECT 0'")
        with pytest.raises(psycopg.Error) as e:
            c.execute("CREATE EXTENSION pgprompt")
        assert e.value.sqlstate == "42P06" and "ALTER SCHEMA prompt RENAME" in e.value.diag.message_hint
        c.execute("DROP SCHEMA prompt CASCADE")
        # An empty one of its own is taken, and given to the objects' owner; so is the one
        # CREATE EXTENSION makes.
        c.execute("CREATE SCHEMA prompt")
        c.execute("CREATE EXTENSION pgprompt")
        owner = c.execute("SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'prompt'").fetchone()[0]
        assert owner != "pgprompt_dbo", "the database owner never owns the extension's schema"
        assert c.execute("SELECT extowner::regrole::text FROM pg_extension WHERE extname = 'pgprompt'").fetchone()[0] == "pgprompt_dbo"
        c.execute((ROOT / "demo/example.sql").read_text())
        body = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0]
        assert body.startswith('{"model":"claude-sonnet-5"')
        assert c.execute("SELECT count(*) FROM prompt.verify_seals()").fetchone()[0] == 0
        # It grants on to its application's role.
        c.execute("GRANT USAGE ON SCHEMA prompt TO pgprompt_dbo_app")
        c.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO pgprompt_dbo_app")
        # What only pgprompt writes is as closed to it as to anyone but a restore.
        with pytest.raises(psycopg.Error) as e:
            c.execute("UPDATE prompt.seal_nodes SET body = 'x'")
        assert e.value.sqlstate == "55000"
        # Dropped and made again: the schema left behind is the objects' owner's, and empty.
        c.execute("DROP EXTENSION pgprompt")
        c.execute("CREATE EXTENSION pgprompt")
        c.execute("DROP EXTENSION pgprompt")


def test_what_another_session_plants_in_a_schema_made_before_refuses_the_install(owned_database):
    """A schema made before the install, empty and the database owner's, is taken; until
    the install commits it is still the owner's, so another of its sessions can create in
    it meanwhile (found by a hostile review of 0.6). The install refuses what stands in it
    at its end that it did not make (42P06), and nothing of it stays."""
    import threading
    import time
    with as_owner() as c, as_owner() as b:
        c.execute("CREATE SCHEMA prompt")
        done, failed = threading.Event(), []

        def install():
            try:
                c.execute("CREATE EXTENSION pgprompt")
            except psycopg.Error as e:
                failed.append(e)
            done.set()
        t = threading.Thread(target=install)
        t.start()
        time.sleep(0.05)  # past the install's first look at the schema
        planted, i = [], 0
        while not done.is_set():
            i += 1
            try:
                b.execute(f"CREATE FUNCTION prompt.planted_{i}() RETURNS int LANGUAGE sql AS 'SELECT 1'")
                planted.append(i)
            except psycopg.Error:
                pass
        t.join()
        assert planted, "the other session created nothing while the install ran"
        assert failed, "the install took a schema another session planted in"
        assert failed[0].sqlstate == "42P06" and "planted_" in str(failed[0]), str(failed[0])
        assert c.execute("SELECT count(*) FROM pg_extension WHERE extname = 'pgprompt'").fetchone()[0] == 0
        c.execute("DROP SCHEMA prompt CASCADE")
        c.execute("CREATE EXTENSION pgprompt")
        assert c.execute("SELECT count(*) FROM prompt.security_check()").fetchone()[0] == 0
