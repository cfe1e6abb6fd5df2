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
import datetime
import json
import re
import typing

import psycopg
import pytest
from anthropic._data.deprecated_models import DEPRECATED_MODELS
from anthropic.types import Model as AnthropicModel
from anthropic.types import ModelInfo
from google.genai import types as genai
from openai.types import Model as OpenAIModel
from openai.types.shared import chat_model, responses_model

from conftest import make_database


def literal_ids(tp) -> list:
    """The string literals of an SDK's model type (a Literal, or a Union of Literals and str)."""
    if typing.get_origin(tp) is typing.Literal:
        return [a for a in typing.get_args(tp) if isinstance(a, str)]
    out = []
    for arg in typing.get_args(tp):
        out += literal_ids(arg)
    return out


ANTHROPIC = literal_ids(AnthropicModel)
CHAT = set(literal_ids(chat_model.ChatModel))
RESPONSES = set(literal_ids(responses_model.ResponsesModel))
GEMINI = [m for m in literal_ids(__import__("google.genai._gaos.types.interactions.model", fromlist=["Model"]).Model)
          if m.startswith("gemini-")]


def openai_shutdowns() -> dict:
    """The shutdown day of each deprecated id, from the docstring under ChatModel: items
    '- "id", "id": Announced shutdown date: YYYY-MM-DD. ...'."""
    doc = open(chat_model.__file__).read().split("Deprecated values:", 1)[1]
    out = {}
    for item in re.split(r"\n- ", doc):
        day = re.search(r"Announced shutdown date:\s*(\d{4}-\d{2}-\d{2})", item)
        if day:
            for model in re.findall(r'"([^"]+)"', item.split(":", 1)[0]):
                out[model] = day.group(1)
    assert len(out) > 50, "the SDK's deprecation list was not found"
    return out


def anthropic_retirements() -> dict:
    out = {}
    for model, day in DEPRECATED_MODELS.items():
        day = re.sub(r"(\d+)(st|nd|rd|th)", r"\1", day)
        out[model] = datetime.datetime.strptime(day, "%B %d, %Y").date().isoformat()
    return out


# The family each id belongs to where it is neither a profile's own name nor a dated id of
# one: a suffix of a family's name that the family serves.
FAMILY = {
    "gpt-5-mini": "gpt-5", "gpt-5-nano": "gpt-5", "gpt-5.1-mini": "gpt-5.1",
    "gpt-4.1-mini": "gpt-4.1", "gpt-4o-mini": "gpt-4o",
    "gpt-4-1106-preview": "gpt-4", "gpt-4-0613": "gpt-4", "gpt-4-32k-0314": "gpt-4-32k", "gpt-4-32k-0613": "gpt-4-32k",
    "gpt-3.5-turbo-0125": "gpt-3.5-turbo", "gpt-3.5-turbo-16k-0613": "gpt-3.5-turbo-16k",
    "gpt-4-turbo-2024-04-09": "gpt-4-turbo",
    "gemini-3.1-pro-preview-customtools": "gemini-3.1-pro-preview",
    "gemini-3.1-flash-lite-image": "gemini-3.1-flash-lite",
}
# Ids no shipped profile serves: their wire's rules apply.
UNPROFILED = {
    "computer-use-preview", "computer-use-preview-2025-03-11", "gpt-daybreak-blue-latest", "gpt-daybreak-red-latest",
    "gpt-rosalind-research",
    "gemini-flash-latest", "gemini-flash-lite-latest", "gemini-pro-latest", "gemini-3-pro-image", "gemini-3.1-flash-image", "gemini-nano-banana-2.1",
    "gemini-3.1-flash-tts-preview", "gemini-3.5-transcribe", "gemini-robotics-er-1.6-preview",
    "gemini-robotics-er-2-preview", "gemini-omni-1.2-flash", "gemini-omni-1.1-flash", "gemini-omni-flash-preview",
}
DATED = re.compile(r"^(.+?)-(\d{4}-\d{2}-\d{2}|\d{8})$")


@pytest.fixture(scope="module")
def cat():
    conn = make_database("pgprompt_catalog")
    yield conn
    conn.close()


def resolved(conn, names):
    rows = conn.execute("SELECT n, prompt._model_profile(n, NULL)::jsonb FROM unnest(%s::text[]) AS n", (list(names),))
    return {n: p for n, p in rows}


def expected(name, shipped):
    if name in FAMILY:
        return FAMILY[name]
    if name in shipped:
        return name
    m = DATED.match(name)
    return expected(m.group(1), shipped) if m else None


def test_every_sdk_model_resolves_to_its_family(cat):
    shipped = {r[0] for r in cat.execute("SELECT name FROM prompt.model_profiles WHERE shipped")}
    ids = set(ANTHROPIC) | CHAT | RESPONSES | set(GEMINI)
    got = resolved(cat, ids)
    wrong = {}
    for name in sorted(ids):
        want = expected(name, shipped)
        if want is None and name not in UNPROFILED:
            wrong[name] = "an id of no known family: give it a profile, or list it as unprofiled"
            continue
        have = got[name]["name"] if got[name] else None
        if have != want:
            wrong[name] = (have, want)
    assert wrong == {}, wrong


def test_each_model_is_served_on_the_wires_its_sdk_lists(cat):
    got = resolved(cat, CHAT | RESPONSES)
    for name, profile in got.items():
        if profile is None or profile["provider"] != "openai":
            continue
        if name in CHAT:
            assert "chat" in profile["wires"], (name, profile["name"], profile["wires"])
        else:
            assert profile["wires"] == ["responses"], (name, profile["name"], profile["wires"])


def test_each_model_retires_on_the_day_its_sdk_gives(cat):
    days = {**openai_shutdowns(), **anthropic_retirements()}
    got = resolved(cat, days)
    wrong = {n: ((p or {}).get("retires_at"), d) for n, (p, d) in ((n, (got[n], d)) for n, d in days.items())
             if (p or {}).get("retires_at") != d and not (p is None and n in UNPROFILED)}
    # A not-supported id the SDK keeps for compatibility has no day.
    assert wrong == {}, wrong


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


def lifecycle_turn(conn, retires, deprecated=None, replacement="gpt-5.5"):
    conn.execute("DELETE FROM prompt.model_profiles WHERE name = 'test-lifecycle'")
    conn.execute("INSERT INTO prompt.model_profiles (name, provider, wires, retires_at, deprecated_at, replacement) "
                 "VALUES ('test-lifecycle', 'openai', '{chat,responses}', %s, %s, %s)", (retires, deprecated, replacement))
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
    ("mistral", '[]', "model_list_invalid: provider 'mistral' is not anthropic, openai or gemini"),
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
