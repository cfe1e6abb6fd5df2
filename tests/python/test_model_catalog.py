"""The model catalog (README, "Model profiles") against the SDKs the tests pin:
every model id of anthropic's Model, openai's ChatModel and ResponsesModel and
google-genai's model list resolves to the profile its family says (or to none), on the
wires the SDK lists it for, and retires on the day the SDK's own deprecation tables give;
a compile for a retired model is refused, a deprecated one warns; import_models reads the
providers' model lists shaped exactly by the SDKs' types.

No test here depends on the day: lifecycle is tried on rows whose days are far in the
past or the future.
"""
import copy
import json
import os
import re
import sys

import psycopg
import pytest
from anthropic.types import ModelInfo
from google.genai import types as genai
from openai.types import Model as OpenAIModel

from conftest import make_database

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import catalog  # noqa: E402  scripts/catalog.py, the check release.sh runs against the newest SDKs


@pytest.fixture(scope="module")
def cat():
    conn = make_database("pgprompt_catalog")
    yield conn
    conn.close()


def resolved(conn, names):
    rows = conn.execute("SELECT n, prompt._model_profile(n, NULL)::jsonb FROM unnest(%s::text[]) AS n", (list(names),))
    return {n: p for n, p in rows}


def test_the_catalog_check_reads_the_sdks():
    """scripts/catalog.py finds the SDKs' lists and deprecation tables (a check that found
    nothing would pass on any catalog)."""
    ids = catalog.sdk_ids()
    assert min(len(v) for v in ids.values()) >= 15, {k: len(v) for k, v in ids.items()}
    assert ids["responses"] - ids["chat"], "no Responses-only id found"
    days = catalog.retirements()
    assert len(days) > 60 and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", d) for d in days.values())


def test_every_sdk_model_resolves_to_its_family_on_its_wires_and_retires_when_its_sdk_says(cat):
    """scripts/catalog.py prints nothing against the pinned SDKs."""
    assert catalog.problems(cat) == []


def test_the_catalog_check_reports_what_falls_behind(cat):
    """Each kind of drift is reported: an id of no family, a Responses-only id served on
    chat, a retirement day that is not the SDK's."""
    with cat.transaction():
        cat.execute("DELETE FROM prompt.model_profiles WHERE name = 'gpt-rosalind-research'")
        cat.execute("UPDATE prompt.model_profiles SET wires = '{responses,chat}' WHERE name = 'gpt-6-astra-healthcare'")
        cat.execute("UPDATE prompt.model_profiles SET retires_at = '2030-01-01' WHERE name = 'o3'")
        found = catalog.problems(cat)
        raise psycopg.Rollback()
    assert any(line.startswith("gpt-rosalind-research: resolves to ") for line in found), found
    assert "gpt-6-astra-healthcare: served on ['chat', 'responses'], its SDK lists it for ['responses']" in found, found
    assert "o3: retires on 2030-01-01, its SDK says 2026-12-11" in found, found


def test_a_responses_only_model_is_refused_on_chat_naming_its_wire(cat):
    """An id ResponsesModel alone lists is refused as a chat model row (22023, naming the
    wire that serves it), nothing written; on responses it is taken."""
    with pytest.raises(psycopg.Error) as e:
        cat.execute("INSERT INTO prompt.models (name, wire) VALUES ('gpt-6-astra-healthcare', 'chat')")
    assert e.value.sqlstate == "22023", e.value
    assert e.value.diag.message_primary == 'model_invalid: model "gpt-6-astra-healthcare" is served on the responses wire, not chat'
    assert cat.execute("SELECT count(*) FROM prompt.models WHERE name = 'gpt-6-astra-healthcare'").fetchone()[0] == 0
    with cat.transaction():
        cat.execute("INSERT INTO prompt.models (name, wire) VALUES ('gpt-6-astra-healthcare', 'responses')")
        raise psycopg.Rollback()


def test_every_replacement_is_served_on_the_wire_and_by_the_provider_it_replaces(cat):
    """A hint to move to the replacement never leads to model_invalid: the row it names
    exists, is served by the same provider and on every wire of the model it replaces."""
    wrong = cat.execute("""
        SELECT p.name, p.replacement, r.name IS NOT NULL, r.provider, r.wires
          FROM prompt.model_profiles p LEFT JOIN prompt.model_profiles r ON r.name = p.replacement
         WHERE p.replacement IS NOT NULL
           AND (r.name IS NULL OR r.provider <> p.provider OR NOT r.wires @> p.wires)""").fetchall()
    assert wrong == [], wrong
    assert cat.execute("SELECT count(*) FROM prompt.model_profiles WHERE replacement IS NOT NULL").fetchone()[0] > 40


def test_every_lifecycle_names_its_source(cat):
    """Every shipped row with a day or a replacement says where it comes from, or (the Gemini
    rows: google-genai gives no dates) retires nothing it cannot source: it warns."""
    rows = cat.execute("""
        SELECT name, lifecycle_source, provider FROM prompt.model_profiles
         WHERE shipped AND (retires_at IS NOT NULL OR deprecated_at IS NOT NULL OR replacement IS NOT NULL)""").fetchall()
    unsourced = sorted(n for n, source, provider in rows if source is None and provider != "google")
    assert unsourced == [], unsourced
    assert len([r for r in rows if r[1]]) > 40


def test_a_prefix_matches_at_a_dash_only(cat):
    got = resolved(cat, ["gpt-5.6-cyber", "gpt-5.3-chat-latest", "gpt-5-mini-2025-08-07", "claude-opus-5-5-x", "gpt-5x"])
    assert got["gpt-5.6-cyber"]["name"] == "gpt-5.6-cyber"
    assert got["gpt-5.3-chat-latest"]["name"] == "gpt-5.3-chat-latest"
    assert got["gpt-5-mini-2025-08-07"]["name"] == "gpt-5"
    assert got["claude-opus-5-5-x"]["name"] == "claude-opus-5-5"
    assert got["gpt-5x"] is None


GEOGRAPHY = re.compile(r"^(us|eu|apac|global|us-gov|jp|au|ca)[.](?=[a-z]+[.])")


def longest_prefix(name, profiles):
    """The profile a name follows, by the rule as the README states it: the profile named
    as the id (or as the id behind a Bedrock geography), else the longest profile name
    followed in it by '-'."""
    ids = [name, GEOGRAPHY.sub("", name, count=1)]
    found = [q for q in profiles if any(i == q or i.startswith(q + "-") for i in ids)]
    return max(found, key=lambda q: (len(q), [-ord(c) for c in q]), default=None)


def test_the_profile_lookup_is_the_longest_dash_prefix(cat):
    """The lookup (each '-'-prefix of the id by the primary key) finds what comparing the
    id with every profile finds, over every profile's name, dated, suffixed, behind a
    geography, cut short, past 512 characters, and odd spellings."""
    profiles = [r[0] for r in cat.execute("SELECT name FROM prompt.model_profiles")]
    names = set()
    for q in profiles:
        names |= {q, q + "-20250101", q + "-x-y", "us.anthropic." + q, "global." + q + "-v1:0", q[:-1], q + "x",
                  q.replace("-", "--", 1), "-" + q, q + "-" + "x" * 600, q + "-" * 600}
    names |= {"", "-", "--", "gpt-", "a-b-c-d-e-f-g-h", "us.", "eu.x", "claude--opus", "-" * 100_000}
    got = resolved(cat, sorted(names))
    wrong = {n: ((got[n] or {}).get("name"), longest_prefix(n, profiles))
             for n in names if (got[n] or {}).get("name") != longest_prefix(n, profiles)}
    assert wrong == {}, wrong
    assert len(names) > 1000


def lifecycle_turn(conn, retires, deprecated=None, replacement="gpt-5.5", source="a test's own day"):
    conn.execute("DELETE FROM prompt.model_profiles WHERE name = 'test-lifecycle'")
    conn.execute("INSERT INTO prompt.model_profiles (name, provider, wires, retires_at, deprecated_at, replacement, "
                 "lifecycle_source) VALUES ('test-lifecycle', 'openai', '{chat,responses}', %s, %s, %s, %s)",
                 (retires, deprecated, replacement, source))
    conn.execute("INSERT INTO prompt.models (name, wire) VALUES ('test-lifecycle', 'chat') ON CONFLICT DO NOTHING")
    conv = conn.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id) VALUES "
                        "('00000000-0000-4000-8000-00000000a001', '00000000-0000-4000-8000-000000000002') RETURNING id").fetchone()[0]
    return conv, conn.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) VALUES "
                              "(%s, 'reply', '00000000-0000-4000-8000-000000000001', 'Hi', 'test-lifecycle') RETURNING id",
                              (conv,)).fetchone()[0]


def test_a_retired_model_is_refused_and_a_deprecated_one_warns(cat):
    conv, turn = lifecycle_turn(cat, "2000-01-01")
    for call in ("compile_turn", "preview_turn"):
        with pytest.raises(psycopg.Error) as e:
            cat.execute(f"SELECT prompt.{call}(%s, %s)", (conv, turn))
        assert e.value.sqlstate == "22023", e.value
        assert e.value.diag.message_primary == ('model_retired: model "test-lifecycle" retired on 2000-01-01; '
                                               'its replacement is "gpt-5.5"'), e.value.diag.message_primary
        assert "gpt-5.5" in e.value.diag.message_hint
    assert cat.execute("SELECT lifecycle FROM prompt.model_status WHERE model = 'test-lifecycle'").fetchone()[0] == "retired"
    notices = []
    cat.add_notice_handler(lambda d: notices.append(d.message_primary))  # read inside the handler
    conv, turn = lifecycle_turn(cat, "2999-01-01")
    assert cat.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (conv, turn)).fetchone()[0]
    assert 'model "test-lifecycle" is deprecated and retires on 2999-01-01; its replacement is "gpt-5.5"' in notices, notices
    status = cat.execute("SELECT lifecycle, retiring_soon FROM prompt.model_status WHERE model = 'test-lifecycle'").fetchone()
    assert status == ("deprecated", False)
    # A sealed turn still returns what was sent, whatever its model became.
    cat.execute("UPDATE prompt.model_profiles SET retires_at = '2000-01-01' WHERE name = 'test-lifecycle'")
    assert cat.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (conv, turn)).fetchone()[0]


def test_a_retirement_no_source_gives_warns_and_refuses_nothing(cat):
    notices = []
    cat.add_notice_handler(lambda d: notices.append(d.message_primary))
    conv, turn = lifecycle_turn(cat, "2000-01-01", source=None)
    assert cat.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (conv, turn)).fetchone()[0]
    assert ('model "test-lifecycle" is deprecated and retires on 2000-01-01 (its profile names no source for that '
            'day: it is not refused); its replacement is "gpt-5.5"') in notices, notices
    assert cat.execute("SELECT lifecycle, lifecycle_source FROM prompt.model_status WHERE model = 'test-lifecycle'"
                       ).fetchone() == ("deprecated", None)


def test_the_hint_names_the_level_that_chose_the_model(cat):
    """A retired model named by the turn is fixed on the turn; one the answerer names, on
    the answerer."""
    conv, turn = lifecycle_turn(cat, "2000-01-01")
    with pytest.raises(psycopg.Error) as e:
        cat.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
    assert e.value.diag.message_hint.startswith("The turn names the model: UPDATE prompt.turns SET model = 'gpt-5.5' "
                                                f"WHERE id = '{turn}'"), e.value.diag.message_hint
    answerer = "00000000-0000-4000-8000-000000000002"
    with cat.transaction():
        cat.execute("UPDATE prompt.users SET model = 'test-lifecycle' WHERE id = %s", (answerer,))
        turn2 = cat.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt) VALUES "
                            "(%s, 'reply', '00000000-0000-4000-8000-000000000001', 'Hi') RETURNING id", (conv,)).fetchone()[0]
        with pytest.raises(psycopg.Error) as e:
            with cat.transaction():
                cat.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn2))
        assert e.value.diag.message_hint.startswith("The turn's answerer names the model: UPDATE prompt.users SET "
                                                    f"model = 'gpt-5.5' WHERE id = '{answerer}'"), e.value.diag.message_hint
        raise psycopg.Rollback()


# -- import_models, with the SDKs' own types shaping each list ---------------------------

def anthropic_list():
    info = {
        "type": "model", "id": "claude-test-9", "display_name": "Claude Test 9", "created_at": "2026-05-01T00:00:00Z",
        "lifecycle": "deprecated", "line": "opus", "deprecated_at": "2026-10-01T00:00:00Z",
        "retires_at": "2999-01-01T00:00:00Z", "max_input_tokens": 900000, "max_tokens": 64000,
        "capabilities": {
            "batch": {"supported": True}, "citations": {"supported": True}, "code_execution": {"supported": True},
            "context_management": {"supported": False}, "image_input": {"supported": True}, "pdf_input": {"supported": True},
            "server_tools": {"supported": True, "code_execution": {"supported": True}, "web_search": {"supported": True}},
            "structured_outputs": {"supported": True},
            "effort": {"supported": True, "low": {"supported": True}, "medium": {"supported": True},
                       "high": {"supported": True}, "xhigh": {"supported": False}, "max": {"supported": True}},
            "thinking": {"supported": True, "types": {"adaptive": {"supported": True}, "between_tools": {"supported": True},
                                                      "disabled": {"supported": True}, "enabled": {"supported": False}}},
        },
    }
    opus = dict(info, id="claude-opus-4-8", lifecycle="active", deprecated_at=None, retires_at=None,
                max_input_tokens=1000000, max_tokens=128000)
    page = {"data": [info, opus], "has_more": False, "first_id": "claude-test-9", "last_id": "claude-opus-4-8"}
    for m in page["data"]:
        assert ModelInfo.model_validate(m).model_dump(mode="json", exclude_unset=True) == m
    return page


def test_import_models_from_anthropics_list(cat):
    rows = dict(cat.execute("SELECT * FROM prompt.import_models('anthropic', %s::jsonb)", (json.dumps(anthropic_list()),)).fetchall())
    assert rows == {"claude-test-9": "inserted", "claude-opus-4-8": "updated"}, rows
    p = cat.execute("SELECT to_jsonb(p) FROM prompt.model_profiles p WHERE name = 'claude-test-9'").fetchone()[0]
    assert (p["hard_window"], p["max_output_tokens"], p["thinking_modes"], p["efforts"]) == (
        900000, 64000, ["adaptive", "disabled", "between_tools"], ["low", "medium", "high", "max"])
    assert (p["deprecated_at"], p["retires_at"], p["provider"], p["wires"], p["shipped"]) == (
        "2026-10-01", "2999-01-01", "anthropic", ["anthropic"], False)
    # Again: nothing changes. A user's change is kept, unless asked.
    again = dict(cat.execute("SELECT * FROM prompt.import_models('anthropic', %s::jsonb)", (json.dumps(anthropic_list()),)).fetchall())
    assert again == {"claude-test-9": "unchanged", "claude-opus-4-8": "unchanged"}
    cat.execute("UPDATE prompt.model_profiles SET hard_window = 500000 WHERE name = 'claude-test-9'")
    changed = anthropic_list()
    changed["data"][0]["max_tokens"] = 32000
    kept = dict(cat.execute("SELECT * FROM prompt.import_models('anthropic', %s::jsonb)", (json.dumps(changed),)).fetchall())
    assert kept["claude-test-9"] == "kept"
    assert cat.execute("SELECT hard_window, max_output_tokens FROM prompt.model_profiles WHERE name = 'claude-test-9'").fetchone() == (500000, 64000)
    forced = dict(cat.execute("SELECT * FROM prompt.import_models('anthropic', %s::jsonb, overwrite => true)",
                              (json.dumps(changed),)).fetchall())
    assert forced["claude-test-9"] == "updated"
    assert cat.execute("SELECT hard_window, max_output_tokens FROM prompt.model_profiles WHERE name = 'claude-test-9'").fetchone() == (900000, 32000)


def test_import_models_from_openais_list(cat):
    models = [{"id": "gpt-5.5", "object": "model", "created": 1776902400, "owned_by": "system", "shutdown_date": "2999-02-01"},
              {"id": "gpt-6.9-test", "object": "model", "created": 1776902400, "owned_by": "system", "shutdown_date": None}]
    page = {"object": "list", "data": models}
    for m in models:
        assert OpenAIModel.model_validate(m).model_dump(mode="json") == m
    rows = dict(cat.execute("SELECT * FROM prompt.import_models('openai', %s::jsonb)", (json.dumps(page),)).fetchall())
    assert rows == {"gpt-5.5": "updated", "gpt-6.9-test": "inserted"}, rows
    assert cat.execute("SELECT retires_at::text FROM prompt.model_profiles WHERE name = 'gpt-5.5'").fetchone()[0] == "2999-02-01"
    assert cat.execute("SELECT wires FROM prompt.model_profiles WHERE name = 'gpt-6.9-test'").fetchone()[0] == ["responses", "chat"]


def test_import_models_from_geminis_list(cat):
    rest = {"models": [
        {"name": "models/gemini-9-test", "version": "001", "displayName": "Gemini 9 Test", "description": "d",
         "inputTokenLimit": 2097152, "outputTokenLimit": 65536,
         "supportedGenerationMethods": ["generateContent", "countTokens"], "temperature": 1, "topP": 0.95, "topK": 64,
         "maxTemperature": 2, "thinking": True},
        {"name": "models/text-embedding-9", "version": "001", "inputTokenLimit": 2048, "outputTokenLimit": 1,
         "supportedGenerationMethods": ["embedContent"]},
    ], "nextPageToken": ""}
    from google.genai import models as gm

    parsed = genai.ListModelsResponse._from_response(response=gm._ListModelsResponse_from_mldev(copy.deepcopy(rest)),
                                                     kwargs={})
    assert [m.name for m in parsed.models] == ["models/gemini-9-test", "models/text-embedding-9"]
    assert parsed.models[0].input_token_limit == 2097152 and parsed.models[0].thinking is True
    rows = dict(cat.execute("SELECT * FROM prompt.import_models('gemini', %s::jsonb)", (json.dumps(rest),)).fetchall())
    assert rows == {"gemini-9-test": "inserted"}, rows
    assert cat.execute("SELECT hard_window, max_output_tokens, wires FROM prompt.model_profiles WHERE name = 'gemini-9-test'").fetchone() == (
        2097152, 65536, ["gemini"])


@pytest.mark.parametrize("provider, models, message", [
    ("anthropic", '{"nothing": []}', "model_list_invalid: models holds no list of models"),
    ("anthropic", '{"data": [7]}', "model_list_invalid: the entry at /data/0 is not an object"),
    ("openai", '{"data": [{"object": "model"}]}', "model_list_invalid: the entry at /data/0 names no model (id)"),
    ("openai", '[{"id": "x", "shutdown_date": "soon"}]', "model_list_invalid: the entry at /0 holds a value of the wrong kind"),
    ("telegraph", '[]', "model_list_invalid: provider 'telegraph' has no model list pgprompt reads"),
])
def test_a_list_that_is_no_model_list_is_refused_and_nothing_written(cat, provider, models, message):
    before = cat.execute("SELECT count(*) FROM prompt.model_profiles").fetchone()[0]
    with pytest.raises(psycopg.Error) as e:
        cat.execute("SELECT * FROM prompt.import_models(%s, %s::jsonb)", (provider, models)).fetchall()
    assert e.value.sqlstate == "22023" and e.value.diag.message_primary.startswith(message), e.value.diag.message_primary
    assert cat.execute("SELECT count(*) FROM prompt.model_profiles").fetchone()[0] == before


def test_the_wires_are_the_librarys(cat):
    """The constraints on a wire column ask the library (prompt._wire_known and
    _wires_known): each of its five wires is taken; a wire it does not know, a wire spelled
    in another case, an empty list and a NULL entry are refused (23514, naming the
    constraint), and nothing is written."""
    with cat.transaction():
        for wire in ("anthropic", "chat", "responses", "gemini", "converse"):
            cat.execute("INSERT INTO prompt.models (name, wire) VALUES (%s, %s)", (f"test-wire-{wire}", wire))
        cat.execute("UPDATE prompt.model_profiles SET wires = ARRAY['anthropic', 'converse'] "
                    "WHERE name = (SELECT min(name) FROM prompt.model_profiles)")
        raise psycopg.Rollback()
    refused = [
        ("INSERT INTO prompt.models (name, wire) VALUES ('test-wire-x', 'telegraph')", "models_wire_valid"),
        ("INSERT INTO prompt.models (name, wire) VALUES ('test-wire-x', 'Anthropic')", "models_wire_valid"),
        ("UPDATE prompt.model_profiles SET wires = ARRAY['chat', NULL] "
         "WHERE name = (SELECT min(name) FROM prompt.model_profiles)", "model_profiles_wires_valid"),
        ("UPDATE prompt.model_profiles SET wires = '{}' "
         "WHERE name = (SELECT min(name) FROM prompt.model_profiles)", "model_profiles_wires_valid"),
        ("UPDATE prompt.model_profiles SET wires = ARRAY['chat', 'telegraph'] "
         "WHERE name = (SELECT min(name) FROM prompt.model_profiles)", "model_profiles_wires_valid"),
    ]
    for sql, constraint in refused:
        with pytest.raises(psycopg.Error) as e:
            cat.execute(sql)
        assert e.value.sqlstate == "23514" and e.value.diag.constraint_name == constraint, (sql, e.value)
    assert cat.execute("SELECT count(*) FROM prompt.models WHERE name LIKE 'test-wire-%'").fetchone()[0] == 0


def test_the_providers_are_the_librarys(cat):
    """The constraint on a profile's provider asks the library (prompt._provider_known):
    each provider it knows is taken; one it does not know, or spelled in another case, is
    refused (23514, naming the constraint), and nothing is written."""
    one = "WHERE name = (SELECT min(name) FROM prompt.model_profiles)"
    with cat.transaction():
        for provider in ("anthropic", "openai", "google", "amazon", "meta"):
            cat.execute(f"UPDATE prompt.model_profiles SET provider = %s {one}", (provider,))
        raise psycopg.Rollback()
    before = cat.execute(f"SELECT provider FROM prompt.model_profiles {one}").fetchone()[0]
    for provider in ("telegraph", "OpenAI", ""):
        with pytest.raises(psycopg.Error) as e:
            cat.execute(f"UPDATE prompt.model_profiles SET provider = %s {one}", (provider,))
        assert e.value.sqlstate == "23514", (provider, e.value)
        assert e.value.diag.constraint_name == "model_profiles_provider_valid", (provider, e.value)
    assert cat.execute(f"SELECT provider FROM prompt.model_profiles {one}").fetchone()[0] == before


# The ids whose wires the family rule does not give (a Chat model of a kind OpenAI
# otherwise serves on Responses only): each is a row of its own in the shipped catalog.
OWN_ROWS = {"gpt-5.2-pro", "gpt-5.2-pro-2025-12-11", "gpt-5.1-codex", "codex-mini-latest"}


def test_an_openai_id_imported_for_the_first_time_gets_the_wires_its_sdk_lists(cat):
    """import_models' rule for a new OpenAI id (prompt._openai_wires, read with the id's own
    row away): the wires openai's ChatModel and ResponsesModel list it for, but for the ids
    the shipped catalog holds rows of their own for (OWN_ROWS, each checked to exist)."""
    ids = catalog.sdk_ids()
    wrong = {}
    for name in sorted(ids["chat"] | ids["responses"]):
        listed = sorted(w for w in ("chat", "responses") if name in ids[w])
        with cat.transaction():
            cat.execute("DELETE FROM prompt.model_profiles WHERE name = %s", (name,))
            got = sorted(cat.execute("SELECT prompt._openai_wires(%s)", (name,)).fetchone()[0])
            raise psycopg.Rollback()
        if got != listed and name not in OWN_ROWS:
            wrong[name] = (got, listed)
    assert wrong == {}, wrong
    for name in OWN_ROWS:
        assert resolved(cat, [name])[name]["wires"] == ["responses", "chat"] or "chat" in resolved(cat, [name])[name]["wires"]
    # Imported: a new Responses-only kind of a shipped family, and a new chat model.
    page = {"object": "list", "data": [{"id": "gpt-6.3-astra-healthcare", "object": "model", "created": 1, "owned_by": "system"},
                                        {"id": "gpt-6-astra-2027-01-01", "object": "model", "created": 1, "owned_by": "system"},
                                        {"id": "gpt-6-astra-law", "object": "model", "created": 1, "owned_by": "system"}]}
    with cat.transaction():
        cat.execute("SELECT * FROM prompt.import_models('openai', %s::jsonb)", (json.dumps(page),)).fetchall()
        wires = dict(cat.execute("SELECT name, wires FROM prompt.model_profiles WHERE name = ANY(%s)",
                                 ([m["id"] for m in page["data"]],)).fetchall())
        raise psycopg.Rollback()
    assert wires == {"gpt-6.3-astra-healthcare": ["responses"], "gpt-6-astra-2027-01-01": ["responses", "chat"],
                     "gpt-6-astra-law": ["responses"]}, wires


def test_a_gemini_the_list_says_thinks_takes_the_thinking_levels(cat):
    """An entry with "thinking": true gives a row that took no thinking the levels every
    thinking Gemini takes, whether the import inserts or updates it."""
    rest = {"models": [{"name": "models/gemini-flash-latest", "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
                        "supportedGenerationMethods": ["generateContent"], "thinking": True},
                       {"name": "models/gemini-8-test", "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
                        "supportedGenerationMethods": ["generateContent"], "thinking": True}]}
    with cat.transaction():
        cat.execute("UPDATE prompt.model_profiles SET thinking_modes = '{}', thinking_default = NULL, efforts = '{}' "
                    "WHERE name = 'gemini-flash-latest'")
        cat.execute("SELECT * FROM prompt.import_models('gemini', %s::jsonb, overwrite => true)", (json.dumps(rest),)).fetchall()
        rows = {n: (m, e) for n, m, e in cat.execute(
            "SELECT name, thinking_modes, efforts FROM prompt.model_profiles WHERE name IN ('gemini-flash-latest', 'gemini-8-test')")}
        cat.execute("INSERT INTO prompt.models (name, wire, request_options) VALUES ('gemini-flash-latest', 'gemini', "
                    "'{\"thinking\": {\"effort\": \"low\"}}') ON CONFLICT (name) DO UPDATE SET request_options = EXCLUDED.request_options")
        raise psycopg.Rollback()
    assert rows["gemini-8-test"] == (["adaptive"], ["low", "high"]), rows
    assert rows["gemini-flash-latest"][0] != [] and "low" in rows["gemini-flash-latest"][1], rows


def test_a_compatible_providers_list_is_imported_as_that_providers(cat):
    """Mistral's GET /v1/models (mistralai's ModelList shape): the provider's own rows, on
    chat, with the window and the deprecation the list gives."""
    from mistralai.client import models as mistral

    page = {"object": "list", "data": [
        {"id": "mistral-test-9", "object": "model", "created": 1, "owned_by": "mistralai", "type": "base",
         "capabilities": {"completion_chat": True, "function_calling": True, "vision": False},
         "max_context_length": 262144, "deprecation": "2999-03-01T00:00:00Z",
         "deprecation_replacement_model": "mistral-medium-latest"},
    ]}
    mistral.ModelList.model_validate(page)
    with cat.transaction():
        rows = dict(cat.execute("SELECT * FROM prompt.import_models('mistral', %s::jsonb)", (json.dumps(page),)).fetchall())
        p = cat.execute("SELECT provider, wires, hard_window, retires_at::text, replacement, lifecycle_source "
                        "FROM prompt.model_profiles WHERE name = 'mistral-test-9'").fetchone()
        raise psycopg.Rollback()
    assert rows == {"mistral-test-9": "inserted"}
    assert p[:5] == ("mistral", ["chat"], 262144, "2999-03-01", "mistral-medium-latest"), p
    assert p[5].startswith("mistral GET /v1/models, imported "), p


def test_a_providers_list_never_rewrites_another_providers_row(cat):
    """(A break of the review.) A Mistral list naming a Claude id retired it, and a Groq list
    shrank a shipped window: an entry whose row is another provider's is kept, whatever
    overwrite says."""
    before = cat.execute("SELECT to_jsonb(p) FROM prompt.model_profiles p WHERE name = 'claude-sonnet-4-6'").fetchone()[0]
    for provider, entry in (("mistral", {"id": "claude-sonnet-4-6", "deprecation": "2020-01-01T00:00:00Z",
                                         "deprecation_replacement_model": "mistral-large-latest"}),
                            ("groq", {"id": "claude-sonnet-4-6", "context_window": 100, "max_completion_tokens": 1})):
        for overwrite in (False, True):
            rows = dict(cat.execute("SELECT * FROM prompt.import_models(%s, %s::jsonb, overwrite => %s)",
                                    (provider, json.dumps({"data": [entry]}), overwrite)).fetchall())
            assert rows == {"claude-sonnet-4-6": "kept"}, (provider, rows)
    after = cat.execute("SELECT to_jsonb(p) FROM prompt.model_profiles p WHERE name = 'claude-sonnet-4-6'").fetchone()[0]
    assert after == before
