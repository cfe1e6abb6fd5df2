"""Every compiled request validates against the official SDKs' request types.

pydantic checks `Iterable` fields lazily: the validated value holds iterators that
validate as they are consumed. `materialize` walks the validated value whole (with the
adapter alive), and the walked value must equal the request: nothing was dropped as an
unknown key, nothing coerced.
"""
import json

import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from google.genai import types as genai
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import BaseModel, TypeAdapter

from conftest import compile_turn, explain

ANTHROPIC = TypeAdapter(MessageCreateParamsNonStreaming)
CHAT = TypeAdapter(CompletionCreateParamsNonStreaming)
RESPONSES = TypeAdapter(ResponseCreateParamsNonStreaming)

C1 = "00000000-0000-4000-8000-00000000c001"
C2 = "00000000-0000-4000-8000-00000000c002"
C3 = "00000000-0000-4000-8000-00000000c003"
R1 = "00000000-0000-4000-8000-0000000f0001"
LARKS_TURN = "00000000-0000-4000-8000-0000000f1006"


def materialize(value):
    if isinstance(value, BaseModel):
        # Unions of the SDKs admit response models too (TextBlock beside TextBlockParam).
        return materialize(value.model_dump(exclude_unset=True))
    if isinstance(value, dict):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    return [materialize(v) for v in value]


def assert_valid(adapter: TypeAdapter, request: dict) -> None:
    validated = adapter.validate_python(request)
    assert materialize(validated) == request


def assert_valid_gemini(body: dict) -> None:
    """The REST body of generateContent, field by field with google-genai's models
    (extra keys forbidden): contents, systemInstruction, tools, toolConfig and
    generationConfig. Compared after a JSON round trip, bytes fields (base64) decoded
    on both sides."""
    assert set(body) <= {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}, set(body)
    for c in body["contents"]:
        assert c["role"] in ("user", "model")
        dumped = genai.Content.model_validate(c).model_dump(by_alias=True, exclude_none=True, mode="json")
        assert normalize(dumped) == normalize(c)
    if "systemInstruction" in body:
        genai.Content.model_validate(body["systemInstruction"])
    for t in body.get("tools", []):
        assert normalize(genai.Tool.model_validate(t).model_dump(by_alias=True, exclude_none=True, mode="json")) == normalize(t)
    for key, model in (("toolConfig", genai.ToolConfig), ("generationConfig", genai.GenerationConfig)):
        if key in body:
            dumped = model.model_validate(body[key]).model_dump(by_alias=True, exclude_none=True, mode="json")
            assert normalize(dumped) == normalize(body[key]), key


def normalize(v):
    """Base64 text as the bytes it spells (the SDK re-encodes with the URL-safe alphabet)."""
    import base64

    if isinstance(v, dict):
        return {k: (base64.b64decode(x + "=" * (-len(x) % 4), altchars=b"-_" if "-" in x or "_" in x else None)
                    if k == "data" and isinstance(x, str) else normalize(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [normalize(x) for x in v]
    return v


def reseal_r1(db, **columns):
    """Inside the caller's transaction (rolled back after): the run turn R1 rewritten with
    `columns` and its seal dropped, so the next compile seals it afresh. The write
    trigger, which refuses changing a sealed turn, and the seal storage guard are off for
    the rewrite."""
    db.execute("ALTER TABLE prompt.turns DISABLE TRIGGER turns_write")
    db.execute("ALTER TABLE prompt.seals DISABLE TRIGGER seals_guard")
    sets = "".join(f"{k} = %s, " for k in columns)
    db.execute(f"UPDATE prompt.turns SET {sets}sealed_at = NULL, sealed_preface = NULL, sealed_catalog = NULL, "
               "sealed_mechanism = NULL, sealed_versions = NULL WHERE id = %s", (*columns.values(), R1))
    db.execute("DELETE FROM prompt.seals WHERE turn_id = %s", (R1,))
    db.execute("ALTER TABLE prompt.seals ENABLE TRIGGER seals_guard")
    db.execute("ALTER TABLE prompt.turns ENABLE TRIGGER turns_write")


def assert_valid_wire(wire: str, body: dict) -> None:
    if wire == "gemini":
        assert_valid_gemini(body)
    else:
        assert_valid({"anthropic": ANTHROPIC, "chat": CHAT, "responses": RESPONSES}[wire], body)


def with_model(db, conversation, turn, model):
    """The turn compiled for another model (and so another wire), without sealing:
    its wire and its body."""
    db.execute("BEGIN")
    try:
        db.execute("UPDATE prompt.turns SET model = %s WHERE conversation_id = %s AND id = %s", (model, conversation, turn))
        return explain(db, conversation, turn)["wire"], compile_turn(db, conversation, turn)
    finally:
        db.execute("ROLLBACK")


CASES = [
    ("demo", C1, "00000000-0000-4000-8000-0000000d0004"),
    ("group, read by lark", C3, "00000000-0000-4000-8000-0000000f1006"),
    ("group, read by wren", C3, "00000000-0000-4000-8000-0000000f1007"),
]


@pytest.mark.parametrize("name,conversation,turn", CASES)
def test_anthropic_wire_validates(db, name, conversation, turn):
    wire, body = with_model(db, conversation, turn, "claude-sonnet-4-5")
    assert wire == "anthropic"
    assert_valid(ANTHROPIC, body)


@pytest.mark.parametrize("name,conversation,turn", CASES)
def test_chat_wire_validates(db, name, conversation, turn):
    wire, body = with_model(db, conversation, turn, "gpt-4o")
    assert wire == "chat"
    assert_valid(CHAT, body)


@pytest.mark.parametrize("name,conversation,turn", CASES)
def test_responses_wire_validates(db, name, conversation, turn):
    wire, body = with_model(db, conversation, turn, "gpt-5")
    assert wire == "responses"
    assert_valid(RESPONSES, body)


@pytest.mark.parametrize("name,conversation,turn", CASES)
def test_gemini_wire_validates(db, name, conversation, turn):
    wire, body = with_model(db, conversation, turn, "gemini-2.5-flash")
    assert wire == "gemini"
    assert_valid_gemini(body)


@pytest.mark.parametrize("model", ["claude-vision", "claude-sonnet-4-5", "gpt-4o-vision", "gpt-4o",
                                   "gpt-5-vision", "gpt-5", "gemini-vision", "gemini-2.5-flash"])
def test_a_run_with_tools_rounds_and_pictures_validates(db, model):
    db.execute("BEGIN")
    try:
        # A fresh seal for this model: drop the fixture's rounds' turn seal in a rollback.
        reseal_r1(db, model=model)
        wire = explain(db, C2, R1)["wire"]
        request = compile_turn(db, C2, R1)
    finally:
        db.execute("ROLLBACK")
    assert request["tools"], "the turn's tools ride the request"
    if wire == "anthropic":
        assert_valid(ANTHROPIC, request)
        kinds = [b["type"] for m in request["messages"] for b in m["content"]]
        assert "tool_use" in kinds and "tool_result" in kinds
        assert ("image" in kinds) == model.endswith("vision")
    elif wire == "responses":
        assert_valid(RESPONSES, request)
        kinds = [i["type"] for i in request["input"]]
        assert "function_call" in kinds and "function_call_output" in kinds
        images = [p for i in request["input"] if isinstance(i.get("content"), list) for p in i["content"]
                  if p["type"] == "input_image"]
        assert bool(images) == model.endswith("vision")
    elif wire == "gemini":
        assert_valid_gemini(request)
        keys = [k for c in request["contents"] for p in c["parts"] for k in p]
        assert "functionCall" in keys and "functionResponse" in keys
        assert ("inlineData" in keys) == model.endswith("vision")
    else:
        assert_valid(CHAT, request)
        roles = [m["role"] for m in request["messages"]]
        assert "tool" in roles
        assert any("tool_calls" in m for m in request["messages"])


def test_the_sealed_continuation_validates_and_extends_the_seal(db):
    sealed = db.execute("SELECT prompt.sealed_body(%s, %s)::text", (C2, R1)).fetchone()[0]
    continued = db.execute("SELECT prompt.compile_turn(%s, %s)::text", (C2, R1)).fetchone()[0]
    assert_valid(ANTHROPIC, json.loads(continued))
    # The sealed bytes are a prefix of the continuation, up to where the list closes
    # (the tools follow it on this wire).
    tail = sealed[sealed.index('],"tools":'):]
    assert continued.startswith(sealed[: -len(tail)])
    assert continued.endswith(tail)
    assert len(json.loads(continued)["messages"]) > len(json.loads(sealed)["messages"])


OPTIONS = {
    "claude-vision": {"tool_choice": {"name": "read_invoice"}, "parallel_tool_calls": False, "stop": ["END"],
                      "response_format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}},
                      "thinking": {"effort": "low"}, "metadata": {"user_id": "u-1"}},
    "gpt-4o": {"tool_choice": "required", "parallel_tool_calls": True, "temperature": 0.2, "top_p": 0.9, "stop": "END",
               "response_format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}, "strict": True},
               "thinking": {"effort": "medium"}, "metadata": {"app": "desk"}},
    "gpt-5": {"tool_choice": {"name": "read_invoice"}, "parallel_tool_calls": False, "temperature": 0.2, "top_p": 0.9,
              "response_format": {"type": "json_object"}, "thinking": {"effort": "high"}, "metadata": {"app": "desk"}},
    "gemini-2.5-flash": {"tool_choice": "required", "temperature": 0.2, "top_p": 0.9, "stop": ["END"],
                         "response_format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}},
                         "thinking": {"budget_tokens": 1024}},
}


@pytest.mark.parametrize("model", list(OPTIONS))
def test_request_options_validate_on_every_wire(db, model):
    """Every option a wire takes, set on the turn (over the model's), in a request the
    SDK's types accept whole."""
    db.execute("BEGIN")
    try:
        db.execute("UPDATE prompt.models SET request_options = '{\"top_p\": 0.5}' WHERE name = %s AND wire <> 'anthropic'", (model,))
        reseal_r1(db, model=model, request_options=json.dumps(OPTIONS[model]))
        wire = explain(db, C2, R1)["wire"]
        request = compile_turn(db, C2, R1)
    finally:
        db.execute("ROLLBACK")
    if wire == "gemini":
        assert_valid_gemini(request)
        assert request["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
        assert request["generationConfig"]["topP"] == 0.9, "the turn's value wins over the model's"
    else:
        assert_valid({"anthropic": ANTHROPIC, "chat": CHAT, "responses": RESPONSES}[wire], request)
        if wire != "anthropic":
            assert request["top_p"] == 0.9


def test_request_options_are_checked_on_write(db):
    import psycopg

    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.users SET request_options = '{\"temprature\": 1}' WHERE handle = 'lark'")
    assert e.value.sqlstate == "22023" and "at /request_options/temprature" in str(e.value)
    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.models SET request_options = '{\"top_p\": 2}' WHERE name = 'gpt-4o'")
    assert e.value.sqlstate == "22023" and "at /request_options/top_p" in str(e.value)
    # A model row knows its wire: what the wire cannot carry is refused when written,
    # and so is a change of wire or of max_output_tokens the options no longer fit.
    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.models SET request_options = '{\"temperature\": 0.2}' WHERE name = 'claude-vision'")
    assert e.value.sqlstate == "22023" and "at /request_options/temperature" in str(e.value)
    assert "anthropic wire" in e.value.diag.message_detail
    db.execute("BEGIN")
    try:
        db.execute("UPDATE prompt.models SET request_options = '{\"temperature\": 0.2}' WHERE name = 'gpt-4o'")
        with pytest.raises(psycopg.Error) as e:
            db.execute("UPDATE prompt.models SET wire = 'anthropic' WHERE name = 'gpt-4o'")
        assert e.value.sqlstate == "22023" and "at /request_options/temperature" in str(e.value)
    finally:
        db.execute("ROLLBACK")
    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.models SET request_options = '{\"thinking\": {\"budget_tokens\": 2048}}', "
                   "max_output_tokens = 2048 WHERE name = 'claude-vision'")
    assert e.value.sqlstate == "22023" and "at /request_options/thinking" in str(e.value)
    assert db.execute("SELECT request_options FROM prompt.models WHERE name = 'claude-vision'").fetchone()[0] == {}
    # An agent with a model, and a turn naming one, are checked against that model's wire.
    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.users SET request_options = '{\"metadata\": {\"app\": \"desk\"}}' WHERE handle = 'lark'")
    assert e.value.sqlstate == "22023" and "at /request_options/metadata" in str(e.value)
    assert e.value.diag.message_detail == "Set by the agent's request_options; the request goes on the anthropic wire."
    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.turns SET model = 'claude-vision', request_options = '{\"top_p\": 0.5}' WHERE id = %s",
                   (LARKS_TURN,))
    assert e.value.sqlstate == "22023" and "at /request_options/top_p" in str(e.value)
    assert "turn's request_options" in e.value.diag.message_detail
    db.execute("BEGIN")
    try:
        db.execute("UPDATE prompt.users SET model = 'gpt-4o', request_options = '{\"metadata\": {\"app\": \"desk\"}}' "
                   "WHERE handle = 'lark'")
        with pytest.raises(psycopg.Error) as e:
            db.execute("UPDATE prompt.users SET model = 'claude-vision' WHERE handle = 'lark'")
        assert e.value.sqlstate == "22023", "a change of model the options no longer fit"
    finally:
        db.execute("ROLLBACK")


def test_a_turns_options_meet_its_wire_when_it_compiles(db):
    """The merged options meet their wire at compile: an agent's options that fit its own
    model, on a turn that names another, are refused there, naming the key and the level
    that set it, nothing sealed."""
    import psycopg

    db.execute("BEGIN")
    try:
        db.execute("UPDATE prompt.users SET model = 'gpt-4o', request_options = '{\"temperature\": 0.2}' WHERE handle = 'lark'")
        db.execute("UPDATE prompt.turns SET model = 'claude-vision' WHERE id = %s", (LARKS_TURN,))
        with pytest.raises(psycopg.Error) as e:
            db.execute("SELECT prompt.compile_turn(%s, %s)", (C3, LARKS_TURN))
    finally:
        db.execute("ROLLBACK")
    assert e.value.sqlstate == "22023" and "at /request_options/temperature" in str(e.value), str(e.value)
    assert e.value.diag.message_detail == "Set by the agent's request_options; the request goes on the anthropic wire."


DEFERRED_TOOLS = [
    {"name": "read_invoice", "description": "Read an invoice.", "input_schema": {"type": "object"}},
    {"name": "issue_refund", "description": "Refund a duplicate charge.",
     "input_schema": {"type": "object", "properties": {"invoice": {"type": "string"}}}, "deferred": True},
]


@pytest.mark.parametrize("model", ["claude-vision", "gpt-4o-vision", "gpt-5", "gemini-2.5-flash"])
def test_deferred_tools_validate_on_every_wire(db, model):
    """A deferred tool rides with defer_loading and the wire's tool search where the API
    has one (anthropic, responses), and is left out elsewhere; a deferred callable leaves
    the eager catalog; both are frozen with the seal and found by search_deferred."""
    db.execute("BEGIN")
    try:
        reseal_r1(db, model=model, tools=json.dumps(DEFERRED_TOOLS),
                  callables=json.dumps([{"name": "skill", "deferred": True}]))
        wire = explain(db, C2, R1)["wire"]
        request = json.loads(db.execute("SELECT prompt.compile_turn(%s, %s)::text", (C2, R1)).fetchone()[0])
        sealed = db.execute("SELECT prompt.explain_turn(%s, %s)", (C2, R1)).fetchone()[0]
        found = db.execute("SELECT prompt.search_deferred(%s, %s, 'REFUND duplicate')", (C2, R1)).fetchone()[0]
        everything = db.execute("SELECT prompt.search_deferred(%s, %s)", (C2, R1)).fetchone()[0]
    finally:
        db.execute("ROLLBACK")
    assert sealed["sealed"] and sealed["deferred"]["tools"][0]["name"] == "issue_refund"
    assert found["tools"] == [{k: v for k, v in DEFERRED_TOOLS[1].items() if k != "deferred"}]
    assert {t["name"] for t in found["tools"]} == {"issue_refund"}
    assert everything["catalog"] and all(line.startswith("- skill / ") for line in everything["catalog"])
    system_text = json.dumps(request)
    assert "Skills available now." not in system_text, "the only callable is deferred: no eager catalog"
    assert_valid_wire(wire, request)
    if wire == "gemini":
        names = [f["name"] for t in request["tools"] for f in t["functionDeclarations"]]
        assert names == ["read_invoice"]
    else:
        if wire == "chat":
            assert [t["function"]["name"] for t in request["tools"]] == ["read_invoice"]
        else:
            assert request["tools"][1]["name"] == "issue_refund" and request["tools"][1]["defer_loading"] is True
            assert request["tools"][-1]["type"] == ("tool_search_tool_regex_20251119" if wire == "anthropic" else "tool_search")
