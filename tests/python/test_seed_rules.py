"""Seed rules the write triggers hold (the seed's macro registry and memory
bindings), each test named for the rule it guards: a typo never reaches a model as
literal braces, and a turn's selected Human is a Human."""
import psycopg
import pytest

WS = "00000000-0000-4000-8000-00000000a001"
ADA, LARK = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
CONV = "00000000-0000-4000-8000-00000000c003"


def refused(db, sql, args=()):
    db.execute("SAVEPOINT s")
    try:
        with pytest.raises(psycopg.Error) as e:
            db.execute(sql, args)
    finally:
        db.execute("ROLLBACK TO SAVEPOINT s")
    return e.value


@pytest.fixture()
def tx(own_db):
    own_db.execute("BEGIN")
    yield own_db
    own_db.execute("ROLLBACK")


def test_rule_a_turn_variables_value_is_checked_like_a_document(tx):
    e = refused(tx, "INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, variables) "
                    "VALUES (%s, 'reply', %s, 'Go on.', '{\"scene\": \"{{agnet}} day\"}')", (CONV, ADA))
    assert e.sqlstate == "22023"
    assert e.diag.message_primary.startswith("prompt_document_macro_unknown: unknown macro {{agnet}} in variable /variables/scene")
    # A macro in a value is fine: it renders (the template must declare the variable to compile).
    tx.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, variables) "
               "VALUES (%s, 'reply', %s, 'Go on.', '{\"scene\": \"{{agent}}''s day\"}')", (CONV, ADA))


def test_rule_a_template_variables_value_is_checked_like_a_document(tx):
    e = refused(tx, "UPDATE prompt.users SET prompt_mechanism = 'assembly', prompt_template = %s WHERE id = %s",
                ('{"blocks": [{"type": "inline", "role": "system", "text": "Scene: {{scene}}"}, {"type": "history"}, '
                 '{"type": "input"}], "variables": {"scene": "{{agnet}} day"}}', LARK))
    assert e.sqlstate == "22023"
    assert "/variables/scene" in (e.diag.message_detail or "") + e.diag.message_primary


def test_rule_a_variables_macros_render_in_the_request(tx):
    tx.execute("UPDATE prompt.users SET prompt_mechanism = 'assembly', prompt_template = %s WHERE id = %s",
               ('{"blocks": [{"type": "inline", "role": "system", "text": "Scene: {{scene}}"}, {"type": "history"}, '
                '{"type": "input"}], "variables": {"scene": "{{agent}} at work"}}', LARK))
    turn = tx.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, answerer_id) "
                      "VALUES (%s, 'reply', %s, 'Go on.', %s) RETURNING id", (CONV, ADA, LARK)).fetchone()[0]
    text = tx.execute("SELECT prompt.preview_turn(%s, %s)::text", (CONV, turn)).fetchone()[0]
    display = tx.execute("SELECT coalesce(display_name, handle) FROM prompt.users WHERE id = %s", (LARK,)).fetchone()[0]
    assert f"Scene: {display} at work" in text
    assert "{{" not in text


def test_rule_memory_user_id_names_a_human(tx):
    e = refused(tx, "INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, memory_user_id) "
                    "VALUES (%s, 'reply', %s, 'Go on.', %s)", (CONV, ADA, LARK))
    assert e.sqlstate == "22023"
    assert e.diag.message_primary.startswith("turn_field_invalid: memory_user_id")
    assert "not a Human at /memory_user_id" in e.diag.message_primary
    tx.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, memory_user_id) "
               "VALUES (%s, 'reply', %s, 'Go on.', %s)", (CONV, ADA, ADA))


def test_rule_skills_for_turn_lists_the_complete_effective_set(tx):
    """Seed 003: the worker keeps the complete set for skill_view; the catalog omits
    recall-only skills. skills_for_turn returns both, with their sources."""
    tx.execute("INSERT INTO prompt.skills (source, user_id, name, description) VALUES "
               "('agent', %s, 'deploy', 'Ship it.'), ('agent', %s, 'vault', 'Read the vault.')", (LARK, LARK))
    tx.execute("UPDATE prompt.skills SET recall_only = true WHERE name = 'vault'")
    tx.execute("INSERT INTO prompt.skills (source, workspace_id, name, description) VALUES "
               "('workspace', %s, 'deploy', 'Shadowed by the agent''s.'), ('workspace', %s, 'style', 'House style.')", (WS, WS))
    turn = tx.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, answerer_id, mode, callables) "
                      "VALUES (%s, 'reply', %s, 'Deploy.', %s, 'run', '[{\"name\": \"skill\"}]') RETURNING id",
                      (CONV, ADA, LARK)).fetchone()[0]
    rows = tx.execute("SELECT callable, source, name, description, recall_only FROM prompt.skills_for_turn(%s, %s)",
                      (CONV, turn)).fetchall()
    mine = [r for r in rows if r[2] in ("deploy", "vault", "style")]
    assert mine == [("skill", "agent", "deploy", "Ship it.", False), ("skill", "workspace", "style", "House style.", False),
                    ("skill", "agent", "vault", "Read the vault.", True)]
    body = tx.execute("SELECT prompt.preview_turn(%s, %s)::text", (CONV, turn)).fetchone()[0]
    assert "deploy" in body and "vault" not in body, "the catalog leaves recall-only skills out"
    # Sealed, the turn's set is the one its seal froze: a skill written or changed mid-run
    # is the next turn's fact (seed 000), as the skills stand for a turn not sealed yet.
    tx.execute("SELECT prompt.compile_turn(%s, %s)", (CONV, turn))
    tx.execute("UPDATE prompt.skills SET description = 'Ship it, carefully.' WHERE name = 'deploy' AND source = 'agent'")
    tx.execute("INSERT INTO prompt.skills (source, user_id, name, description) VALUES ('agent', %s, 'late', 'Written mid-run.')", (LARK,))
    again = tx.execute("SELECT name, description FROM prompt.skills_for_turn(%s, %s) WHERE name IN ('deploy', 'late')",
                       (CONV, turn)).fetchall()
    assert again == [("deploy", "Ship it.")]
    nxt = tx.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, answerer_id, mode, callables) "
                     "VALUES (%s, 'reply', %s, 'Again.', %s, 'run', '[{\"name\": \"skill\"}]') RETURNING id",
                     (CONV, ADA, LARK)).fetchone()[0]
    later = tx.execute("SELECT name, description FROM prompt.skills_for_turn(%s, %s) WHERE name IN ('deploy', 'late')",
                       (CONV, nxt)).fetchall()
    assert later == [("deploy", "Ship it, carefully."), ("late", "Written mid-run.")]


def test_rule_the_runtime_block_names_the_workspace_paths(tx):
    """Seed 003: the runtime context names the conversation origin channel, the workspace
    paths and the available tool names."""
    tx.execute("UPDATE prompt.users SET prompt_mechanism = 'assembly', prompt_template = %s WHERE id = %s",
               ('{"blocks": [{"type": "runtime"}, {"type": "history"}, {"type": "input"}]}', LARK))
    turn = tx.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, answerer_id) "
                      "VALUES (%s, 'reply', %s, 'Go on.', %s) RETURNING id", (CONV, ADA, LARK)).fetchone()[0]
    text = lambda: tx.execute("SELECT prompt.preview_turn(%s, %s)::text", (CONV, turn)).fetchone()[0]
    assert "Workspace paths" not in text()
    tx.execute("UPDATE prompt.workspaces SET paths = ARRAY['/srv/acme', '/data/exports'] WHERE id = %s", (WS,))
    assert "Origin channel: lark\\nWorkspace paths: /srv/acme, /data/exports\\nTimezone: " in text()
