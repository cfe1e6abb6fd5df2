"""Client-side tests: a Python application talking to pgprompt over psycopg.

The database is made once per session on the cluster scripts/cluster.sh started
(PGHOST/PGPORT from the environment): the extension, demo/example.sql and
tests/fixtures/scenarios.sql.
"""
import os
import pathlib

import psycopg
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DB = "pgprompt_client"


def connect(dbname: str = DB) -> psycopg.Connection:
    return psycopg.connect(
        host=os.environ.get("PGHOST", "/tmp/pgprompt-cluster"),
        port=int(os.environ.get("PGPORT", "54329")),
        user=os.environ.get("PGUSER", "postgres"),
        dbname=dbname,
        autocommit=True,
    )


@pytest.fixture(scope="session")
def db() -> psycopg.Connection:
    with connect("postgres") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB}")
        admin.execute(f"CREATE DATABASE {DB}")
    conn = connect()
    conn.execute("CREATE EXTENSION pgprompt")
    for path in ("demo/example.sql", "tests/fixtures/scenarios.sql"):
        conn.execute((ROOT / path).read_text())
    yield conn
    conn.close()


def compile_turn(conn: psycopg.Connection, conversation: str, turn: str, fn: str = "preview_turn") -> dict:
    row = conn.execute(f"SELECT prompt.{fn}(%s, %s)", (conversation, turn)).fetchone()
    return row[0]
