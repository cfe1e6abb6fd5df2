"""pg_dump keeps every row: a populated database (documents, memory, skills, sealed
and unsealed turns, rounds, a pruned seal), dumped and restored into a new database,
has every row back, and every sealed turn compiles to the same bytes."""
import os
import subprocess

from conftest import PGBIN, connect, make_database

TABLES = ["models", "users", "workspaces", "documents", "document_versions", "conversations", "memories", "skills",
          "turns", "rounds", "seals", "seal_nodes", "model_profiles"]


def tool(name, *args, **kw):
    base = [f"{PGBIN}/{name}", "-h", os.environ["PGHOST"], "-p", os.environ["PGPORT"], "-U", "postgres"]
    return subprocess.run(base + list(args), check=True, capture_output=True, text=True, **kw)


def snapshot(conn):
    """Every row of every table (as text, in a stable order), and every sealed turn's
    compile_turn bytes."""
    rows = {t: conn.execute(f"SELECT array_agg(x::text ORDER BY x::text) FROM prompt.{t} x").fetchone()[0] for t in TABLES}
    bodies = dict(conn.execute(
        "SELECT id::text, prompt.compile_turn(conversation_id, id)::text FROM prompt.turns "
        "WHERE sealed_at IS NOT NULL AND id NOT IN (SELECT turn_id FROM prompt.seals WHERE pruned_at IS NOT NULL)"
    ).fetchall())
    return rows, bodies


def test_dump_and_restore_keep_every_row_and_every_sealed_body():
    src = make_database("pgprompt_dumped")
    # Seal more: the demo's turn, a group turn, and a run turn's continuation.
    for c, t in [("00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"),
                 ("00000000-0000-4000-8000-00000000c003", "00000000-0000-4000-8000-0000000f1006"),
                 ("00000000-0000-4000-8000-00000000c002", "00000000-0000-4000-8000-0000000f0001")]:
        src.execute("SELECT prompt.compile_turn(%s, %s)", (c, t))
    # A second seal in the group conversation shares the first one's elements.
    src.execute("SELECT prompt.compile_turn(%s, %s)", ("00000000-0000-4000-8000-00000000c003", "00000000-0000-4000-8000-0000000f1007"))
    # A profile of the user's own comes back beside the shipped ones (which the
    # extension's script brings), and so does the model naming it.
    src.execute("INSERT INTO prompt.model_profiles (name, provider, wires, temperature_max) VALUES ('house-claude', 'anthropic', '{anthropic}', 1)")
    src.execute("INSERT INTO prompt.models (name, wire, profile) VALUES ('claude-house-1', 'anthropic', 'house-claude')")
    # A pruned seal keeps its digest, size and estimate across the dump too.
    src.execute("SELECT prompt.prune_seals('00000000-0000-4000-8000-00000000c002', now() + interval '1 minute')")
    before = snapshot(src)
    assert all(before[0][t] for t in TABLES), {t: bool(before[0][t]) for t in TABLES}
    assert len(before[1]) >= 3
    src.close()

    dump = tool("pg_dump", "pgprompt_dumped").stdout
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_restored")
        admin.execute("CREATE DATABASE pgprompt_restored")
    tool("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", "pgprompt_restored", input=dump)
    with connect("pgprompt_restored") as dst:
        after = snapshot(dst)
    for t in TABLES:
        assert after[0][t] == before[0][t], f"prompt.{t} differs after the restore"
    assert after[1] == before[1]
