"""Every compiled request validates against the official SDKs' request types.

pydantic checks `Iterable` fields lazily: the validated value holds iterators that
validate as they are consumed. `materialize` walks the validated value whole (with the
adapter alive), and the walked value must equal the request: nothing was dropped as an
unknown key, nothing coerced.
"""
import json
from pathlib import Path

import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from google.genai import types as genai
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import BaseModel, TypeAdapter

from conftest import compile_turn, explain
from converse_types import assert_valid_converse

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
    elif wire == "converse":
        assert_valid_converse(body)
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
    wire, body = with_model(db, conversation, turn, "claude-sonnet-5")
    assert wire == "anthropic"
    assert_valid(ANTHROPIC, body)


@pytest.mark.parametrize("name,conversation,turn", CASES)
def test_chat_wire_validates(db, name, conversation, turn):
    wire, body = with_model(db, conversation, turn, "gpt-5.5")
    assert wire == "chat"
    assert_valid(CHAT, body)


@pytest.mark.parametrize("name,conversation,turn", CASES)
def test_responses_wire_validates(db, name, conversation, turn):
    wire, body = with_model(db, conversation, turn, "gpt-5.6-sol")
    assert wire == "responses"
    assert_valid(RESPONSES, body)


@pytest.mark.parametrize("name,conversation,turn", CASES)
def test_gemini_wire_validates(db, name, conversation, turn):
    wire, body = with_model(db, conversation, turn, "gemini-3.5-flash")
    assert wire == "gemini"
    assert_valid_gemini(body)


@pytest.mark.parametrize("name,conversation,turn", CASES)
def test_converse_wire_validates(db, name, conversation, turn):
    """Bedrock's Converse, for Claude behind a cross-region inference profile: botocore's
    ConverseRequest; the leading system run in `system`, a breakpoint a cachePoint block
    after the block it closes."""
    wire, body = with_model(db, conversation, turn, "us.anthropic.claude-sonnet-5-v1:0")
    assert wire == "converse"
    assert_valid_converse(body)
    assert set(body) <= {"system", "messages", "inferenceConfig", "toolConfig"}, set(body)
    assert body["inferenceConfig"] == {"maxTokens": 2048}
    blocks = body["system"] + [b for m in body["messages"] for b in m["content"]]
    points = [i for i, b in enumerate(blocks) if "cachePoint" in b]
    assert all(i > 0 and "cachePoint" not in blocks[i - 1] for i in points), "a cachePoint closes a block"


@pytest.mark.parametrize("model", ["claude-vision", "claude-sonnet-5", "gpt-5.5-vision", "gpt-5.5",
                                   "gpt-5.6-sol-vision", "gpt-5.6-sol", "gemini-vision", "gemini-3.5-flash",
                                   "converse-vision", "us.anthropic.claude-sonnet-5-v1:0", "amazon.nova-pro-v1:0"])
def test_a_run_with_tools_rounds_and_pictures_validates(db, model):
    db.execute("BEGIN")
    try:
        # A fresh seal for this model: drop the fixture's rounds' turn seal in a rollback.
        reseal_r1(db, model=model)
        wire = explain(db, C2, R1)["wire"]
        request = compile_turn(db, C2, R1)
    finally:
        db.execute("ROLLBACK")
    assert request.get("tools") or request.get("toolConfig", {}).get("tools"), "the turn's tools ride the request"
    if wire == "converse":
        assert_valid_converse(request)
        keys = [k for m in request["messages"] for b in m["content"] for k in b]
        assert "toolUse" in keys and "toolResult" in keys
        assert ("image" in keys) == (model != "us.anthropic.claude-sonnet-5-v1:0")
        if model == "converse-vision":
            # No profile, no cachePoint (Bedrock refuses one for a model that caches nothing).
            assert "cachePoint" not in keys and not any("cachePoint" in b for b in request.get("system", []))
    elif wire == "anthropic":
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
    # The sealed tail, with Anthropic's request-level cache marker: each round of the run
    # is cached for the next model call; the run's first request has none.
    assert continued.endswith(tail[:-1] + ',"cache_control":{"type":"ephemeral"}}')
    assert "cache_control" not in tail
    assert len(json.loads(continued)["messages"]) > len(json.loads(sealed)["messages"])


OPTIONS = {
    # No profile: the wire's rules.
    "claude-vision": {"tool_choice": "auto", "parallel_tool_calls": False, "stop": ["END"],
                      "response_format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}},
                      "thinking": {"effort": "low"}, "metadata": {"user_id": "u-1"}},
    # Profiles: adaptive thinking with an effort and a display (a 5-series Claude), a
    # budget and sampling (Sonnet 4.6), a reasoning effort (gpt-5.5), sampling (gpt-4.1),
    # an effort, a summary, store and include (gpt-5.6, explicit breakpoints), a
    # thinking level with thoughts (Gemini 3.5).
    "claude-sonnet-5": {"tool_choice": "auto", "stop": ["END"], "thinking": {"mode": "adaptive", "effort": "xhigh", "display": "summarized"}},
    "claude-sonnet-4-6": {"temperature": 0.3, "thinking": {"mode": "enabled", "budget_tokens": 1024}},
    "gpt-5.5": {"tool_choice": "required", "parallel_tool_calls": True, "stop": "END",
                "response_format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}, "strict": True},
                "thinking": {"effort": "xhigh"}, "metadata": {"app": "desk"}},
    "gpt-4.1": {"tool_choice": "required", "parallel_tool_calls": True, "temperature": 0.2, "top_p": 0.9, "stop": "END",
                "response_format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}, "strict": True},
                "metadata": {"app": "desk"}},
    "gpt-5.6-sol": {"tool_choice": {"name": "read_invoice"}, "parallel_tool_calls": False,
                    "response_format": {"type": "json_object"}, "thinking": {"effort": "max", "display": "summarized"},
                    "metadata": {"app": "desk"}, "store": False, "include": ["message.output_text.logprobs"]},
    # Bedrock's Converse: Claude's thinking in additionalModelRequestFields, its effort and
    # a schema in outputConfig, metadata as requestMetadata; Nova's sampling.
    "us.anthropic.claude-sonnet-5-v1:0": {"tool_choice": "auto", "stop": ["END"], "metadata": {"app": "desk"},
                                          "response_format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}},
                                          "thinking": {"mode": "adaptive", "effort": "xhigh", "display": "summarized"}},
    "amazon.nova-pro-v1:0": {"tool_choice": {"name": "read_invoice"}, "temperature": 0.2, "top_p": 0.9, "stop": ["END"]},
    "gemini-3.5-flash": {"tool_choice": "required", "temperature": 0.2, "top_p": 0.9, "stop": ["END"],
                         "response_format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}},
                         "thinking": {"effort": "high", "include_thoughts": True}},
}

# How each wire spells the options above, where a profile decides it.
SPELLED = {
    "claude-sonnet-5": {"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "xhigh"}},
    "claude-sonnet-4-6": {"thinking": {"type": "enabled", "budget_tokens": 1024}, "temperature": 0.3},
    "gpt-5.5": {"reasoning_effort": "xhigh"},
    "us.anthropic.claude-sonnet-5-v1:0": {
        "inferenceConfig": {"maxTokens": 2048, "stopSequences": ["END"]},
        "toolConfig": None,
        "additionalModelRequestFields": {"thinking": {"type": "adaptive", "display": "summarized"}},
        "requestMetadata": {"app": "desk"},
        "outputConfig": {"effort": "xhigh", "textFormat": {"type": "json_schema", "structure": {
            "jsonSchema": {"schema": '{"type":"object"}', "name": "answer"}}}}},
    "amazon.nova-pro-v1:0": {"inferenceConfig": {"maxTokens": 2048, "temperature": 0.2, "topP": 0.9, "stopSequences": ["END"]}},
    "gpt-5.6-sol": {"reasoning": {"effort": "max", "summary": "auto"}, "store": False,
                    "include": ["message.output_text.logprobs", "reasoning.encrypted_content"],
                    "prompt_cache_options": {"mode": "explicit", "ttl": "30m"}},
}


@pytest.mark.parametrize("model", list(OPTIONS))
def test_request_options_validate_on_every_wire(db, model):
    """Every option a wire takes, set on the turn (over the model's), in a request the
    SDK's types accept whole, spelled as the model's profile says."""
    sampling = "top_p" in OPTIONS[model] and model != "claude-vision"
    db.execute("BEGIN")
    try:
        if sampling:
            db.execute("UPDATE prompt.models SET request_options = '{\"top_p\": 0.5}' WHERE name = %s", (model,))
        reseal_r1(db, model=model, request_options=json.dumps(OPTIONS[model]))
        wire = explain(db, C2, R1)["wire"]
        request = compile_turn(db, C2, R1)
    finally:
        db.execute("ROLLBACK")
    for key, value in SPELLED.get(model, {}).items():
        if value is not None:
            assert request[key] == value, (key, request.get(key))
    if wire == "converse":
        assert_valid_converse(request)
        choice = {"auto": {}} if OPTIONS[model]["tool_choice"] == "auto" else {"tool": {"name": "read_invoice"}}
        assert request["toolConfig"]["toolChoice"] == choice
    elif wire == "gemini":
        assert_valid_gemini(request)
        assert request["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
        assert request["generationConfig"]["topP"] == 0.9, "the turn's value wins over the model's"
        assert request["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "HIGH", "includeThoughts": True}
    elif wire == "anthropic" and "temperature" in request:
        # Claude models before the 4.7 line take temperature and top_p; the newest SDK's
        # request type carries neither (send them with extra_body): the rest validates.
        assert_valid(ANTHROPIC, {k: v for k, v in request.items() if k not in ("temperature", "top_p")})
    else:
        assert_valid({"anthropic": ANTHROPIC, "chat": CHAT, "responses": RESPONSES}[wire], request)
        if sampling:
            assert request["top_p"] == 0.9


PROFILE_REFUSALS = [
    # (model, options, pointer, message fragment)
    ("claude-sonnet-5", {"thinking": {"budget_tokens": 2048}}, "/request_options/thinking/budget_tokens",
     'model "claude-sonnet-5" takes thinking modes adaptive, disabled, between_tools, not enabled'),
    ("claude-sonnet-5", {"temperature": 0.5}, "/request_options/temperature", 'model "claude-sonnet-5" takes no temperature'),
    ("claude-sonnet-5", {"thinking": {"effort": "none"}}, "/request_options/thinking/effort",
     'model "claude-sonnet-5" takes efforts low, medium, high, xhigh, max, not none'),
    ("claude-sonnet-5", {"thinking": {"effort": "low", "include_thoughts": True}}, "/request_options/thinking/include_thoughts",
     'model "claude-sonnet-5" returns no thoughts on request'),
    ("claude-sonnet-4-6", {"temperature": 0.5, "top_p": 0.9}, "/request_options/top_p",
     'model "claude-sonnet-4-6" takes temperature or top_p, not both'),
    ("claude-sonnet-4-6", {"temperature": 1.5}, "/request_options/temperature",
     'model "claude-sonnet-4-6" takes a temperature of 0 to 1, not 1.5'),
    ("gpt-5.5", {"thinking": {"effort": "max"}}, "/request_options/thinking/effort",
     'model "gpt-5.5" takes efforts none, low, medium, high, xhigh, not max'),
    ("gpt-5.5", {"temperature": 0.2}, "/request_options/temperature", 'model "gpt-5.5" takes no temperature'),
    ("gemini-3.5-flash", {"thinking": {"budget_tokens": 2048}}, "/request_options/thinking/budget_tokens",
     'model "gemini-3.5-flash" takes thinking modes adaptive, not enabled'),
    ("claude-sonnet-5", {"tool_choice": "required", "thinking": {"effort": "low"}}, "/request_options/tool_choice",
     'model "claude-sonnet-5" takes no thinking beside a forced tool choice'),
]


@pytest.mark.parametrize("model, options, pointer, fragment", PROFILE_REFUSALS)
def test_a_profile_refuses_what_its_model_refuses_on_write(db, model, options, pointer, fragment):
    """A model's rules are its profile's: what it refuses is refused on write (22023),
    naming the model, the option and the rule, with the JSON pointer."""
    import psycopg

    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.models SET request_options = %s::jsonb WHERE name = %s", (json.dumps(options), model))
    assert e.value.sqlstate == "22023", str(e.value)
    assert e.value.diag.message_primary.startswith("request_options_invalid: "), str(e.value)
    assert fragment in e.value.diag.message_primary and e.value.diag.message_primary.endswith(f"at {pointer}"), str(e.value)


def test_a_model_its_profile_does_not_serve_is_refused(db):
    import psycopg

    with pytest.raises(psycopg.Error) as e:
        db.execute("INSERT INTO prompt.models (name, wire) VALUES ('gpt-5.5-2026-04-23', 'anthropic')")
    assert e.value.sqlstate == "22023"
    assert e.value.diag.message_primary == ('model_invalid: model "gpt-5.5-2026-04-23" (profile "gpt-5.5") '
                                            "is served on the responses and chat wire, not anthropic")
    with pytest.raises(psycopg.Error) as e:
        db.execute("INSERT INTO prompt.models (name, wire, max_output_tokens) VALUES ('claude-haiku-4-5-x', 'anthropic', 100000)")
    assert "writes at most 64000 output tokens, not 100000" in e.value.diag.message_primary
    # A profile named explicitly wins over the prefix; a model without one keeps the wire's rules.
    db.execute("BEGIN")
    try:
        db.execute("INSERT INTO prompt.models (name, wire, profile, request_options) VALUES "
                   "('my-claude', 'anthropic', 'claude-sonnet-4-6', '{\"temperature\": 0.7}')")
        assert db.execute("SELECT prompt._model_profile('claude-opus-5-20260301', NULL)::json->>'name'").fetchone()[0] == "claude-opus-5"
        assert db.execute("SELECT prompt._model_profile('claude-opus-5-5-x', NULL)::json->>'name'").fetchone()[0] == "claude-opus-5-5"
        assert db.execute("SELECT prompt._model_profile('my-claude', 'gpt-4.1')::json->>'name'").fetchone()[0] == "gpt-4.1"
        assert db.execute("SELECT prompt._model_profile('my-model', NULL)").fetchone()[0] is None
    finally:
        db.execute("ROLLBACK")


def test_request_options_are_checked_on_write(db):
    import psycopg

    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.users SET request_options = '{\"temprature\": 1}' WHERE handle = 'lark'")
    assert e.value.sqlstate == "22023" and "at /request_options/temprature" in str(e.value)
    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.models SET request_options = '{\"top_p\": 2}' WHERE name = 'gpt-4.1'")
    assert e.value.sqlstate == "22023" and "at /request_options/top_p" in str(e.value)
    # A model row knows its wire: what the wire cannot carry is refused when written,
    # and so is a change of wire or of max_output_tokens the options no longer fit.
    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.models SET request_options = '{\"temperature\": 0.2}' WHERE name = 'claude-vision'")
    assert e.value.sqlstate == "22023" and "at /request_options/temperature" in str(e.value)
    assert "anthropic wire" in e.value.diag.message_detail
    db.execute("BEGIN")
    try:
        db.execute("UPDATE prompt.models SET request_options = '{\"temperature\": 0.2}' WHERE name = 'gemini-vision'")
        with pytest.raises(psycopg.Error) as e:
            db.execute("UPDATE prompt.models SET wire = 'anthropic' WHERE name = 'gemini-vision'")
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
    assert e.value.diag.message_detail == ("Set by the agent's request_options; the request goes on the anthropic wire, "
                                           'to a model of profile "claude-sonnet-5".')
    with pytest.raises(psycopg.Error) as e:
        db.execute("UPDATE prompt.turns SET model = 'claude-vision', request_options = '{\"top_p\": 0.5}' WHERE id = %s",
                   (LARKS_TURN,))
    assert e.value.sqlstate == "22023" and "at /request_options/top_p" in str(e.value)
    assert "turn's request_options" in e.value.diag.message_detail
    db.execute("BEGIN")
    try:
        db.execute("UPDATE prompt.users SET model = 'gpt-4.1', request_options = '{\"metadata\": {\"app\": \"desk\"}}' "
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
        db.execute("UPDATE prompt.users SET model = 'gpt-4.1', request_options = '{\"temperature\": 0.2}' WHERE handle = 'lark'")
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


@pytest.mark.parametrize("model", ["claude-vision", "gpt-5.5-vision", "gpt-5.6-sol", "gemini-3.5-flash"])
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


# The compiled results among them (refusals.json and refusal_seeds.json hold refusals).
CORE_GOLDEN = sorted(p for p in (Path(__file__).resolve().parents[2] / "core" / "tests" / "golden").glob("*.json")
                     if "explain" in json.loads(p.read_text()))


@pytest.mark.parametrize("path", CORE_GOLDEN, ids=lambda p: p.stem)
def test_every_core_golden_validates_on_its_wire(path):
    """The pure suites' goldens (core/tests/golden, one per case and per wire where a case
    runs on every wire) are requests each wire's SDK takes: read by the wire their
    explanation names. A body that names no model (the wire's URL does, or none was
    chosen) is checked with one."""
    golden = json.loads(path.read_text())
    wire, body = golden["explain"]["wire"], golden["body"]
    if wire in ("anthropic", "chat", "responses") and "model" not in body:
        body = {"model": "a-model", **body}
    assert_valid_wire(wire, body)


def test_the_core_goldens_cover_every_wire():
    wires = {json.loads(p.read_text())["explain"]["wire"] for p in CORE_GOLDEN}
    assert wires == {"anthropic", "chat", "responses", "gemini", "converse"}, wires
