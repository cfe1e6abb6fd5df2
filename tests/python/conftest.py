"""Client-side tests: a Python application talking to pgprompt over psycopg.

The database is made once per session on the cluster scripts/cluster.sh started
(PGHOST/PGPORT from the environment): the extension, demo/example.sql and
tests/fixtures/scenarios.sql.
"""
import os
import pathlib
import re
import shutil
import subprocess

import psycopg
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DB = "pgprompt_client"
# The PostgreSQL under test (scripts/pg.sh exports PG_CONFIG for 15 or 18).
PG_CONFIG = os.environ.get("PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
PGBIN = subprocess.run([PG_CONFIG, "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
PG_MAJOR = int(subprocess.run([PG_CONFIG, "--version"], capture_output=True, text=True, check=True).stdout.split()[1].split(".")[0])


def connect(dbname: str = DB) -> psycopg.Connection:
    return psycopg.connect(
        host=os.environ.get("PGHOST", "/tmp/pgprompt-cluster"),
        port=int(os.environ.get("PGPORT", "54329")),
        user=os.environ.get("PGUSER", "postgres"),
        dbname=dbname,
        autocommit=True,
    )


def cluster_user_command(*cmd) -> list:
    """A command as the user clusters run as: postgres when the tests run as root
    (PostgreSQL refuses root), the invoking user otherwise (scripts/pg.sh)."""
    cmd = [str(c) for c in cmd]
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def give_to_cluster_user(*paths) -> None:
    """Hands directories to the user clusters run as (root's: postgres; anyone else keeps them)."""
    if os.geteuid() == 0:
        for p in paths:
            shutil.chown(p, "postgres")


def make_database(name: str) -> psycopg.Connection:
    """A database of its own with the extension, the demo's example and the scenarios."""
    with connect("postgres") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    conn = connect(name)
    conn.execute("CREATE EXTENSION pgprompt")
    for path in ("demo/example.sql", "tests/fixtures/scenarios.sql"):
        conn.execute((ROOT / path).read_text())
    return conn


@pytest.fixture(scope="session")
def db() -> psycopg.Connection:
    conn = make_database(DB)
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def own_db(request) -> psycopg.Connection:
    """A database for one test module that writes what others read (fuzz, load)."""
    name = f"pgprompt_{request.module.__name__.split('_', 1)[1]}"
    conn = make_database(name)
    yield conn
    conn.close()


def grant_all_carelessly(conn: psycopg.Connection, role: str) -> None:
    """What a careless operator does: every privilege on every table, TRIGGER, TRUNCATE and
    REFERENCES included. pgprompt's event trigger refuses that GRANT, so the operator (a
    superuser) turned it off first: the guards must hold without it."""
    conn.execute("ALTER EVENT TRIGGER pgprompt_privileges DISABLE")
    try:
        conn.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA prompt TO {role}")
    finally:
        conn.execute("ALTER EVENT TRIGGER pgprompt_privileges ENABLE")


def compile_turn(conn: psycopg.Connection, conversation: str, turn: str, fn: str = "preview_turn") -> dict:
    """The body a compile returns (preview_turn by default: nothing is sealed), parsed."""
    row = conn.execute(f"SELECT prompt.{fn}(%s, %s)", (conversation, turn)).fetchone()
    return row[0]


def body_text(conn: psycopg.Connection, conversation: str, turn: str, fn: str = "preview_turn") -> str:
    """The body's bytes, exactly as returned."""
    return conn.execute(f"SELECT prompt.{fn}(%s, %s)::text", (conversation, turn)).fetchone()[0]


def explain(conn: psycopg.Connection, conversation: str, turn: str) -> dict:
    return conn.execute("SELECT prompt.explain_turn(%s, %s)", (conversation, turn)).fetchone()[0]


class ServerLog:
    """What a backend crash leaves behind: the postmaster writes 'server process (PID n) was
    terminated by signal N' (or 'exited with exit code N', or 'was terminated by exception')
    to the server log and restarts every backend — the postmaster itself stays, so its start
    time does not show a crash. A watch reads the log from where it was made."""

    CRASH = re.compile(r"\(PID \d+\) (was terminated by signal|exited with exit code|was terminated by exception)")

    def __init__(self, directory: str = None):
        self.path = pathlib.Path(directory or os.environ.get("PGHOST", "/tmp/pgprompt-cluster")) / "log"
        self.start = self.path.stat().st_size

    def crashes(self) -> list:
        with open(self.path, "rb") as f:
            f.seek(self.start)
            text = f.read().decode("utf-8", "replace")
        return [line for line in text.splitlines() if self.CRASH.search(line)]


@pytest.fixture
def no_crash():
    """Fails the test when any backend of the cluster crashed while it ran."""
    log = ServerLog()
    yield log
    assert log.crashes() == [], log.crashes()
