"""Seed rules the write triggers hold (SPEC §14.3, the seed's macro registry and memory
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
