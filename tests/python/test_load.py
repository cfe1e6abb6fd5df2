"""Concurrency: writers posting turns and compilers compiling and sealing at once.

Zero unexpected errors, zero lost or duplicated rows, seals never overwritten, and two
sessions compiling the same turn at once end with one seal and identical results.

The test command runs it for PGPROMPT_LOAD_SECONDS (default 8); the long variant is
    PGPROMPT_LOAD_SECONDS=300 python3 -m pytest -q tests/python/test_load.py
"""
import os
import random
import threading
import time
import uuid

import psycopg

from conftest import connect

SECONDS = float(os.environ.get("PGPROMPT_LOAD_SECONDS", "8"))
WS = "00000000-0000-4000-8000-00000000a001"
ADA = "00000000-0000-4000-8000-000000000001"
LARK = "00000000-0000-4000-8000-000000000002"


def test_writers_and_compilers_at_once(own_db):
    db = own_db
    dbname = db.info.dbname
    convs = [str(uuid.uuid4()) for _ in range(4)]
    for c in convs:
        db.execute("INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)", (c, WS, LARK, ADA))
    deadline = time.monotonic() + SECONDS
    lock = threading.Lock()
    posted = []  # (conversation, turn id, kind)
    replies = []  # (conversation, reply id)
    first_result = {}  # reply id -> the first compile's text
    errors = []

    def writer(seed):
        rng = random.Random(seed)
        with connect(dbname) as c:
            while time.monotonic() < deadline:
                conv = rng.choice(convs)
                m, r = str(uuid.uuid4()), str(uuid.uuid4())
                try:
                    with c.transaction():
                        c.execute("INSERT INTO prompt.turns (conversation_id, id, kind, role, author_id, content) VALUES (%s, %s, 'message', 'user', %s, %s)",
                                  (conv, m, ADA, f"question {rng.random()} " * rng.randint(1, 30)))
                        c.execute("INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt) VALUES (%s, %s, 'reply', %s, 'Go on.')", (conv, r, ADA))
                except Exception as e:  # noqa: BLE001
                    errors.append(f"writer: {e!r}")
                    continue
                with lock:
                    posted.extend([(conv, m), (conv, r)])
                    replies.append((conv, r))

    def compiler(seed):
        rng = random.Random(seed)
        with connect(dbname) as c:
            while time.monotonic() < deadline:
                with lock:
                    if not replies:
                        pick = None
                    else:
                        pick = rng.choice(replies[-20:])
                if pick is None:
                    time.sleep(0.01)
                    continue
                try:
                    text = c.execute("SELECT prompt.compile_turn(%s, %s)::text", pick).fetchone()[0]
                except Exception as e:  # noqa: BLE001
                    errors.append(f"compiler: {e!r}")
                    continue
                with lock:
                    first = first_result.setdefault(pick[1], text)
                if first != text:
                    errors.append(f"turn {pick[1]} compiled to two different results")

    def racers():
        """Two sessions compile the same fresh turn at the same moment."""
        with connect(dbname) as a, connect(dbname) as b:
            while time.monotonic() < deadline:
                conv, turn = random.choice(convs), str(uuid.uuid4())
                a.execute("INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt) VALUES (%s, %s, 'reply', %s, 'Race!')", (conv, turn, ADA))
                with lock:
                    posted.append((conv, turn))
                barrier, out = threading.Barrier(2), {}

                def go(conn, key):
                    barrier.wait()
                    try:
                        out[key] = conn.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
                    except Exception as e:  # noqa: BLE001
                        errors.append(f"racer: {e!r}")

                ts = [threading.Thread(target=go, args=(a, "a")), threading.Thread(target=go, args=(b, "b"))]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                if out.get("a") != out.get("b"):
                    errors.append(f"racing compiles of {turn} differ")
                else:
                    with lock:
                        first_result[turn] = out["a"]

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
    threads += [threading.Thread(target=compiler, args=(10 + i,)) for i in range(3)]
    threads += [threading.Thread(target=racers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == [], errors[:5]
    assert len(posted) > 20, "the load did not run"
    # Nothing lost, nothing duplicated.
    rows = db.execute("SELECT id::text, count(*) OVER (PARTITION BY id) FROM prompt.turns WHERE conversation_id = ANY(%s::uuid[])", (convs,)).fetchall()
    assert sorted(r[0] for r in rows) == sorted(t for _, t in posted)
    assert all(n == 1 for _, n in rows)
    assert db.execute("SELECT count(*) = count(DISTINCT (conversation_id, seq)) FROM prompt.turns WHERE conversation_id = ANY(%s::uuid[])", (convs,)).fetchone()[0]
    # Every seal is the first result a session saw: never overwritten.
    sealed = dict(db.execute("SELECT id::text, prompt.compile_turn(conversation_id, id)::text FROM prompt.turns WHERE sealed_at IS NOT NULL AND conversation_id = ANY(%s::uuid[])", (convs,)).fetchall())
    assert set(first_result) <= set(sealed)
    for turn, text in first_result.items():
        assert sealed[turn] == text, turn
