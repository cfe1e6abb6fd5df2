"""Hot standby: preview_turn and estimate_turn work on a streaming replica made with
`pg_basebackup -R`; compile_turn there fails cleanly as read-only (unless the turn is
already sealed, when it only reads).

The primary and the standby are clusters of their own, run as postgres on private
sockets and ports.
"""
import os
import shutil
import subprocess
import time

import psycopg
import pytest

from conftest import PGBIN, cluster_user_command, give_to_cluster_user

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE = "/tmp/pgprompt-replication"
PRIMARY, STANDBY = f"{BASE}/primary", f"{BASE}/standby"
PPORT, SPORT = 54341, 54342
C1, T4, T5 = (
    "00000000-0000-4000-8000-00000000c001",
    "00000000-0000-4000-8000-0000000d0004",
    "00000000-0000-4000-8000-0000000d0005",
)


def as_postgres(*args):
    subprocess.run(cluster_user_command(*args), check=True, capture_output=True)


def start(dir_, port):
    as_postgres(f"{PGBIN}/pg_ctl", "-D", f"{dir_}/data", "-l", f"{dir_}/log", "-w", "start",
                "-o", f"-p {port} -k {dir_} -c listen_addresses=''")


def connect(dir_, port, dbname="postgres"):
    return psycopg.connect(host=dir_, port=port, user="postgres", dbname=dbname, autocommit=True)


@pytest.fixture(scope="module")
def pair():
    shutil.rmtree(BASE, ignore_errors=True)
    for d in (PRIMARY, STANDBY):
        os.makedirs(d)
    give_to_cluster_user(BASE, PRIMARY, STANDBY)
    as_postgres(f"{PGBIN}/initdb", "-D", f"{PRIMARY}/data", "-A", "trust", "-U", "postgres", "--no-sync")
    start(PRIMARY, PPORT)
    try:
        with connect(PRIMARY, PPORT) as p:
            p.execute("CREATE EXTENSION pgprompt")
            p.execute(open(os.path.join(ROOT, "demo/example.sql")).read())
            p.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
        as_postgres(f"{PGBIN}/pg_basebackup", "-h", PRIMARY, "-p", str(PPORT), "-U", "postgres",
                    "-D", f"{STANDBY}/data", "-R", "--checkpoint=fast")
        start(STANDBY, SPORT)
        # A turn written after the standby started reaches it by streaming.
        with connect(PRIMARY, PPORT) as p:
            p.execute(
                "INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt) "
                "VALUES (%s, %s, 5, 'reply', '00000000-0000-4000-8000-000000000001', 'Streamed?')",
                (C1, T5),
            )
        with connect(STANDBY, SPORT) as s:
            for _ in range(100):
                if s.execute("SELECT count(*) FROM prompt.turns WHERE id = %s", (T5,)).fetchone()[0]:
                    break
                time.sleep(0.1)
            else:
                pytest.fail("the standby never replayed the new turn")
        yield
    finally:
        for d in (STANDBY, PRIMARY):
            if os.path.exists(f"{d}/data/postmaster.pid"):
                subprocess.run(cluster_user_command(f"{PGBIN}/pg_ctl", "-D", f"{d}/data", "-m", "immediate", "stop"),
                               capture_output=True)
        shutil.rmtree(BASE, ignore_errors=True)


def test_preview_and_estimate_work_on_the_standby(pair):
    with connect(STANDBY, SPORT) as s, connect(PRIMARY, PPORT) as p:
        assert s.execute("SELECT pg_is_in_recovery()").fetchone()[0]
        on_standby = s.execute("SELECT prompt.preview_turn(%s, %s)::text", (C1, T5)).fetchone()[0]
        on_primary = p.execute("SELECT prompt.preview_turn(%s, %s)::text", (C1, T5)).fetchone()[0]
        assert on_standby == on_primary
        rows = s.execute("SELECT block FROM prompt.estimate_turn(%s, %s)", (C1, T5)).fetchall()
        assert [r[0] for r in rows][-2:] == ["input", "tools"]


def test_compile_turn_fails_cleanly_as_read_only_on_the_standby(pair):
    with connect(STANDBY, SPORT) as s, connect(PRIMARY, PPORT) as p:
        with pytest.raises(psycopg.Error) as e:
            s.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T5))
        assert e.value.sqlstate == "25006"
        assert str(e.value).startswith("seal_read_only")
        # Nothing was half-written, and the connection is fine.
        assert s.execute("SELECT 1").fetchone()[0] == 1
        # A turn sealed on the primary is only read: compile_turn returns its seal.
        sealed = p.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0]
        assert s.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0] == sealed
