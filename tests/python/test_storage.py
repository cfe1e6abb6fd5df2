"""Seal storage grows linearly with a conversation: after 100, 200 and 400 sealed
exchanges of ~2 KB, the seal relations' size (tables, TOAST and indexes) per exchange at
400 is at most 1.3 times that at 100, and stays within 3.2 times the text written (3 before
0.6: each element node now keeps its cache layout, about 20 bytes, which moves these
1,000-character nodes from 7 to 6 rows a page; measured 3.15 at 100 exchanges, 2.72 at
400). Every seal still returns its exact bytes."""
import random

from conftest import connect

WORDS = ("invoice refund charge payment account billing ticket order shipment status update "
         "duplicate amount total credit note receipt date month week team agent report data "
         "table query index server client request response because while during after").split()
C, WS, ADA, LARK = ("00000000-0000-4000-8000-0000000005c1", "00000000-0000-4000-8000-00000000a001",
                    "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002")


def text(rng, size):
    out = []
    while sum(len(w) + 1 for w in out) < size:
        out.append(rng.choice(WORDS) if rng.random() > 0.05 else f"INV-{rng.randint(1000, 9999)}")
    return " ".join(out)[:size]


def seal_size(db):
    return db.execute(
        "SELECT pg_total_relation_size('prompt.seals') + pg_total_relation_size('prompt.seal_nodes')"
    ).fetchone()[0]


def test_seal_storage_grows_linearly():
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_storage")
        admin.execute("CREATE DATABASE pgprompt_storage")
    rng = random.Random(7)
    with connect("pgprompt_storage") as db:
        db.execute("CREATE EXTENSION pgprompt")
        db.execute((__import__("conftest").ROOT / "demo/example.sql").read_text())
        db.execute("INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)", (C, WS, LARK, ADA))
        raw, sizes, bodies = 0, {}, {}
        for i in range(1, 401):
            turn, prompt, answer = f"00000000-0000-4000-8000-{i:012x}", text(rng, 1000), text(rng, 1000)
            db.execute("INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt) VALUES (%s, %s, 'reply', %s, %s)",
                       (C, turn, ADA, prompt))
            bodies[turn] = db.execute("SELECT prompt.compile_turn(%s, %s)::text", (C, turn)).fetchone()[0]
            db.execute("UPDATE prompt.turns SET content = %s WHERE id = %s", (answer, turn))
            raw += len(prompt) + len(answer)
            if i in (100, 200, 400):
                db.execute("VACUUM prompt.seals, prompt.seal_nodes")
                sizes[i] = (seal_size(db), raw)
        per = {i: size / i for i, (size, _) in sizes.items()}
        print("seal storage:", {i: f"{s} bytes for {r} bytes of text" for i, (s, r) in sizes.items()})
        assert per[400] <= 1.3 * per[100], per
        for i, (size, text_bytes) in sizes.items():
            assert size <= 3.2 * text_bytes, (i, size, text_bytes)
        # Every body is still exactly what was returned when it was sealed.
        for turn, body in list(bodies.items())[::37]:
            assert db.execute("SELECT prompt.compile_turn(%s, %s)::text", (C, turn)).fetchone()[0] == body
