"""Compatible providers and cloud hosts (docs/guide.md, "Compatible providers"; SPEC
§16.2): a model row's `provider` picks the dialect its wire speaks. Every chat dialect's
body — a run with tools, rounds and pictures — validates against its provider's own SDK
request type where PyPI has one (mistralai, groq, together, fireworks-ai, openrouter; the
openai SDK's for OpenAI and Azure), else against the provider's published reference; the
AzureOpenAI and AnthropicVertex clients, building the same request offline through a mock
transport, send what pgprompt returns; record_response reads each dialect's responses, and
a DeepSeek tool loop sends its reasoning back.
"""
import json

import httpx
import httpx2
import psycopg
import pytest
from pydantic import TypeAdapter

from conftest import compile_turn, explain, make_database
from test_wire_types import ANTHROPIC, CHAT, C2, R1, assert_valid, assert_valid_gemini, materialize, reseal_r1

CHAT_PROVIDERS = ["openai", "azure", "mistral", "deepseek", "xai", "groq", "together", "fireworks", "openrouter",
                  "ollama", "vllm"]
WS, ADA, LARK = ("00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-000000000001",
                 "00000000-0000-4000-8000-000000000002")
TOOLS = json.dumps([{"name": "get_weather", "description": "Current weather for a city.",
                     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}])


@pytest.fixture(scope="module")
def dx():
    c = make_database("pgprompt_dialects")
    for p in CHAT_PROVIDERS:
        # DeepSeek takes text alone: its row sends pictures as text lines.
        c.execute("INSERT INTO prompt.models (name, wire, provider, native_images, max_output_tokens, tokenizer) "
                  "VALUES (%s, 'chat', %s, %s, 2048, 'o200k_base')", (f"dialect-{p}", p, p != "deepseek"))
    c.execute("INSERT INTO prompt.models (name, wire, provider, native_images, max_output_tokens) "
              "VALUES ('claude-sonnet-4-6@20250929', 'anthropic', 'vertex', true, 2048)")
    c.execute("INSERT INTO prompt.models (name, wire, provider, native_images, max_output_tokens, profile) "
              "VALUES ('gemini-3.5-flash-vertex', 'gemini', 'vertex', true, 2048, 'gemini-3.5-flash')")
    yield c
    c.close()


def run_body(c, model: str) -> tuple[dict, str]:
    """The run turn R1 (tools, rounds, pictures) compiled for `model`, sealed afresh in a
    transaction rolled back after: its body and its bytes."""
    c.execute("BEGIN")
    try:
        reseal_r1(c, model=model)
        text = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (C2, R1)).fetchone()[0]
    finally:
        c.execute("ROLLBACK")
    return json.loads(text), text


# -- Each provider's own request type --------------------------------------------------

def stainless(provider: str) -> TypeAdapter:
    if provider == "groq":
        from groq.types.chat.completion_create_params import CompletionCreateParams
        return TypeAdapter(CompletionCreateParams)
    if provider == "together":
        from together.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
        return TypeAdapter(CompletionCreateParamsNonStreaming)
    from fireworks.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
    return TypeAdapter(CompletionCreateParamsNonStreaming)


def kept(ours, sent, path="$"):
    """Every key and value of `ours` in what the SDK serialises (keys it adds, its defaults,
    are its own): a key it dropped is one its request type does not know."""
    if isinstance(ours, dict):
        assert isinstance(sent, dict), path
        for k, v in ours.items():
            assert k in sent, f"{path}.{k}: dropped by the SDK (not in its request type)"
            kept(v, sent[k], f"{path}.{k}")
    elif isinstance(ours, list):
        assert isinstance(sent, list) and len(sent) == len(ours), path
        for i, (a, b) in enumerate(zip(ours, sent)):
            kept(a, b, f"{path}[{i}]")
    else:
        assert ours == sent, f"{path}: {ours!r} became {sent!r}"


def speakeasy(provider: str, body: dict) -> None:
    """mistralai's and openrouter's request models (pydantic, unknown keys dropped): the body
    read and written by the SDK's own serialiser keeps every key and value."""
    if provider == "mistral":
        from mistralai.client import models, utils
        cls = models.ChatCompletionRequest
    else:
        from openrouter import components as models
        from openrouter import utils
        cls = models.ChatRequest
    m = cls.model_validate(body)
    sent = json.loads(utils.serialize_request_body(m, False, False, "json", cls).content)
    kept(body, sent)


# The published references of the providers without a Python SDK on PyPI: the request's
# keys, the roles and a message's keys each takes (read 2026-12-05).
REFERENCE = {
    # api-docs.deepseek.com, "Create Chat Completion" and the Thinking Mode guide: text content.
    "deepseek": ({"model", "messages", "thinking", "reasoning_effort", "frequency_penalty", "max_tokens",
                  "presence_penalty", "response_format", "stop", "stream", "stream_options", "temperature", "top_p",
                  "tools", "tool_choice", "logprobs", "top_logprobs"},
                 {"system", "user", "assistant", "tool"}, {"reasoning_content", "prefix"}),
    # docs.x.ai's OpenAPI (ChatRequest, Message): no developer role.
    "xai": ({"model", "messages", "deferred", "frequency_penalty", "logit_bias", "logprobs", "max_completion_tokens",
             "max_tokens", "n", "parallel_tool_calls", "presence_penalty", "reasoning_effort", "response_format",
             "search_parameters", "seed", "stop", "stream", "stream_options", "temperature", "tool_choice", "tools",
             "top_logprobs", "top_p", "user", "web_search_options"},
            {"system", "user", "assistant", "tool", "function"}, {"reasoning_content"}),
    # ollama's openai/openai.go, ChatCompletionRequest (max_completion_tokens is ignored).
    "ollama": ({"model", "messages", "stream", "stream_options", "max_tokens", "seed", "stop", "temperature",
                "frequency_penalty", "presence_penalty", "top_p", "response_format", "tools", "reasoning",
                "reasoning_effort", "logprobs", "top_logprobs"}, None, {"reasoning"}),
    # vLLM's entrypoints/openai/chat_completion/protocol.py, ChatCompletionRequest (its OpenAI subset).
    "vllm": ({"messages", "model", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "max_tokens",
              "max_completion_tokens", "n", "presence_penalty", "response_format", "seed", "stop", "stream",
              "stream_options", "temperature", "top_p", "tools", "tool_choice", "reasoning_effort",
              "include_reasoning", "parallel_tool_calls", "user"}, None, {"reasoning", "reasoning_content"}),
}


def reference(provider: str, body: dict) -> None:
    top, roles, extra = REFERENCE[provider]
    assert set(body) <= top, (provider, set(body) - top)
    for m in body["messages"]:
        assert roles is None or m["role"] in roles, (provider, m["role"])
        assert set(m) <= {"role", "content", "name", "tool_calls", "tool_call_id"} | extra, (provider, set(m))
        if provider == "deepseek":
            assert isinstance(m.get("content", ""), str) or m.get("content") is None, m
    # The body is otherwise OpenAI's (less the reasoning a message carries back, and the
    # index Ollama's tool calls carry).
    def openai(m):
        m = {k: v for k, v in m.items() if k not in extra}
        if "tool_calls" in m:
            m["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in m["tool_calls"]]
        return m
    assert_valid(CHAT, {**body, "messages": [openai(m) for m in body["messages"]]})


def validate(provider: str, body: dict) -> None:
    if provider in ("openai", "azure"):
        assert_valid(CHAT, body)
    elif provider in ("groq", "together", "fireworks"):
        assert materialize(stainless(provider).validate_python(body)) == body
    elif provider in ("mistral", "openrouter"):
        speakeasy(provider, body)
    else:
        reference(provider, body)


# -- The dialects -----------------------------------------------------------------------

SPELLING = {  # provider: (limit key, prompt_cache_key, a developer message's role, string content)
    "openai": ("max_completion_tokens", True, "developer", False),
    "azure": ("max_completion_tokens", True, "developer", False),
    "mistral": ("max_tokens", True, "system", False),
    "deepseek": ("max_tokens", False, "system", True),
    "xai": ("max_completion_tokens", False, "system", False),
    "groq": ("max_completion_tokens", False, "developer", False),
    "together": ("max_tokens", False, "system", False),
    "fireworks": ("max_completion_tokens", True, "system", False),
    "openrouter": ("max_completion_tokens", True, "developer", False),
    "ollama": ("max_tokens", False, "system", False),
    "vllm": ("max_completion_tokens", False, "developer", False),
}


@pytest.mark.parametrize("provider", CHAT_PROVIDERS)
def test_every_chat_dialect_validates_against_its_provider(dx, provider):
    body, _ = run_body(dx, f"dialect-{provider}")
    limit, cache_key, _, strings = SPELLING[provider]
    assert body[limit] == 2048 and ({"max_tokens", "max_completion_tokens"} - {limit}).isdisjoint(body)
    assert ("prompt_cache_key" in body) == cache_key
    roles = [m["role"] for m in body["messages"]]
    assert "tool" in roles and any("tool_calls" in m for m in body["messages"])
    if strings:
        assert all(isinstance(m.get("content", ""), str) or m.get("content") is None for m in body["messages"])
    else:
        assert any(p.get("type") == "image_url" for m in body["messages"] if isinstance(m.get("content"), list)
                   for p in m["content"]), "the pictures ride as image parts"
    calls = [c for m in body["messages"] for c in m.get("tool_calls", [])]
    assert all(("index" in c) == (provider in ("together", "ollama")) for c in calls)
    validate(provider, body)


def test_a_developer_message_is_spoken_as_each_dialect_takes_it(dx):
    """A turn's developer entry: in its role where the provider takes it, as system where
    not (Mistral's request type refuses the role)."""
    for provider, (_, _, role, _) in SPELLING.items():
        dx.execute("BEGIN")
        try:
            dx.execute("UPDATE prompt.turns SET model = %s, inline = '[{\"role\":\"developer\",\"text\":\"Be brief.\",\"position\":\"lead\"}]' "
                       "WHERE id = '00000000-0000-4000-8000-0000000d0004'", (f"dialect-{provider}",))
            body = compile_turn(dx, "00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004")
        finally:
            dx.execute("ROLLBACK")
        said = [m for m in body["messages"] if "Be brief." in json.dumps(m)]
        assert said and said[0]["role"] == role, (provider, said)
        validate(provider, body)


def test_what_a_dialect_does_not_take_is_refused_on_write(dx):
    """An option the provider's request type has no field for is refused where it is
    written (22023, naming the provider), nothing written; a picture where it takes text
    alone is refused as the model row's."""
    cases = [("dialect-together", {"metadata": {"app": "desk"}}, "/request_options/metadata", "to together takes no metadata"),
             ("dialect-ollama", {"tool_choice": "required"}, "/request_options/tool_choice", "to ollama takes no tool_choice"),
             ("dialect-deepseek", {"response_format": {"type": "json_schema", "name": "a", "schema": {"type": "object"}}},
              "/request_options/response_format", "to deepseek takes a JSON object response format, not a JSON schema")]
    for model, options, pointer, what in cases:
        with pytest.raises(psycopg.Error) as e:
            dx.execute("UPDATE prompt.models SET request_options = %s WHERE name = %s", (json.dumps(options), model))
        assert e.value.sqlstate == "22023", e.value
        assert e.value.diag.message_primary == f"request_options_invalid: the chat wire {what} at {pointer}", e.value
    with pytest.raises(psycopg.Error) as e:
        dx.execute("UPDATE prompt.models SET native_images = true WHERE name = 'dialect-deepseek'")
    assert e.value.sqlstate == "22023"
    assert e.value.diag.message_primary == "model_invalid: the chat wire to deepseek takes no image parts: native_images must be false"
    # A provider the wire does not speak, or the library does not know (in any case: the
    # review found an unknown one refused as 55000 by the options trigger, before the CHECK).
    for wire, provider in (("chat", "vertex"), ("chat", "OpenAI"), ("chat", ""), ("anthropic", "mistral")):
        with pytest.raises(psycopg.Error) as e:
            dx.execute("INSERT INTO prompt.models (name, wire, provider) VALUES ('x-provider', %s, %s)", (wire, provider))
        assert e.value.sqlstate == "23514" and e.value.diag.constraint_name == "models_provider_valid", (provider, e.value)
    assert dx.execute("SELECT request_options, native_images FROM prompt.models WHERE name = 'dialect-deepseek'").fetchone() == ({}, False)


# -- Azure and Vertex: the providers' own clients send what pgprompt returns -------------

def captured(client_factory, call) -> httpx2.Request:
    sent = []

    def handler(request):
        sent.append(request)
        return httpx2.Response(200, json={})

    client = client_factory(httpx2.Client(transport=httpx2.MockTransport(handler)))
    try:
        call(client)
    except Exception:  # the empty answer does not parse; the request is what is read
        pass
    assert sent, "the client sent nothing"
    return sent[-1]


def test_the_azure_client_sends_the_azure_body(dx):
    from openai import AzureOpenAI

    body, text = run_body(dx, "dialect-azure")
    azure = lambda http: AzureOpenAI(azure_endpoint="https://desk.openai.azure.com", api_key="k",
                                     api_version="2025-04-01-preview", http_client=http, max_retries=0)
    # Built by the SDK from the body's fields: the same JSON, model kept in the body.
    built = captured(azure, lambda cl: cl.chat.completions.create(**body))
    assert built.url.path == "/openai/deployments/dialect-azure/chat/completions"
    assert json.loads(built.content) == body
    # Posted as pgprompt returns it: the same bytes.
    posted = captured(azure, lambda cl: cl.post("/deployments/dialect-azure/chat/completions", content=text.encode(),
                                                cast_to=httpx2.Response,
                                                options={"headers": {"Content-Type": "application/json"}}))
    assert posted.content == text.encode()
    assert str(posted.url).endswith("/openai/deployments/dialect-azure/chat/completions?api-version=2025-04-01-preview")


def test_the_vertex_client_sends_the_vertex_body(dx):
    from anthropic import AnthropicVertex

    body, text = run_body(dx, "claude-sonnet-4-6@20250929")
    assert "model" not in body and list(body)[-1] == "anthropic_version", list(body)
    assert_valid(ANTHROPIC, {"model": "claude-sonnet-4-6@20250929",
                             **{k: v for k, v in body.items() if k != "anthropic_version"}})
    vertex = lambda http: AnthropicVertex(region="us-east5", project_id="desk", access_token="t", http_client=http,
                                          max_retries=0)
    # The SDK builds the same body from its fields and the model: the model goes into the
    # URL, anthropic_version is the one it sends.
    fields = {k: v for k, v in body.items() if k != "anthropic_version"}
    built = captured(vertex, lambda cl: cl.messages.create(model="claude-sonnet-4-6@20250929", **fields))
    assert built.url.path == ("/v1/projects/desk/locations/us-east5/publishers/anthropic/models/"
                              "claude-sonnet-4-6@20250929:rawPredict")
    assert json.loads(built.content) == body
    posted = captured(vertex, lambda cl: cl.post(
        "/projects/desk/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-6@20250929:rawPredict",
        content=text.encode(), cast_to=httpx2.Response, options={"headers": {"Content-Type": "application/json"}}))
    assert posted.content == text.encode()
    # Its count body (count-tokens:rawPredict names no model in its URL): the model first
    # in the body, the version last, as the client's messages.count_tokens sends them.
    dx.execute("BEGIN")
    try:
        reseal_r1(dx, model="claude-sonnet-4-6@20250929")
        dx.execute("SELECT prompt.compile_turn(%s, %s)", (C2, R1))
        count = dx.execute("SELECT prompt.count_body(%s, %s)::text", (C2, R1)).fetchone()[0]
    finally:
        dx.execute("ROLLBACK")
    counted = json.loads(count)
    assert list(counted)[0] == "model" and list(counted)[-1] == "anthropic_version", list(counted)
    fields = {k: v for k, v in counted.items() if k not in ("anthropic_version",)}
    sent = captured(vertex, lambda cl: cl.messages.count_tokens(**fields))
    assert sent.url.path == "/v1/projects/desk/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict"
    assert json.loads(sent.content) == counted


def test_vertex_gemini_is_the_gemini_body(dx):
    """Gemini on Vertex takes the Gemini API's body (google-genai sends the same bytes to
    both): the same rows give the same body."""
    vertex, _ = run_body(dx, "gemini-3.5-flash-vertex")
    dx.execute("UPDATE prompt.models SET provider = NULL WHERE name = 'gemini-3.5-flash-vertex'")
    try:
        api, _ = run_body(dx, "gemini-3.5-flash-vertex")
    finally:
        dx.execute("UPDATE prompt.models SET provider = 'vertex' WHERE name = 'gemini-3.5-flash-vertex'")
    assert vertex == api
    assert_valid_gemini(vertex)


# -- record_response on each dialect's responses ---------------------------------------

def chat_response(calls=True, **message) -> dict:
    msg = {"role": "assistant", "content": None}
    if calls:
        msg["tool_calls"] = [{"id": "call_lyon", "type": "function",
                              "function": {"name": "get_weather", "arguments": "{\"city\":\"Lyon\"}"}}]
    msg.update(message)
    return {"id": "resp-1", "object": "chat.completion", "created": 1764892800, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": msg}],
            "usage": {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240}}


def responses():
    """Each dialect's tool-call response, as its SDK's response model reads it where there is one."""
    deepseek = chat_response(reasoning_content="Paris was asked first; Lyon is next.")
    deepseek["usage"].update(prompt_cache_hit_tokens=1024, prompt_cache_miss_tokens=176,
                             completion_tokens_details={"reasoning_tokens": 20})
    mistral = chat_response(content=[{"type": "text", "text": "Checking Lyon."}])
    mistral["choices"][0]["message"]["tool_calls"][0]["index"] = 0
    from mistralai.client import models as m
    m.ChatCompletionResponse.model_validate(mistral)
    ollama = chat_response(content="", reasoning="Lyon next.")
    ollama["choices"][0]["message"]["tool_calls"][0]["index"] = 0
    ollama["system_fingerprint"] = "fp_ollama"
    groq = chat_response(reasoning="Lyon next.")
    groq["usage"].update(queue_time=0.0123, prompt_time=0.04, completion_time=0.2, total_time=0.24)
    groq["x_groq"] = {"id": "req_1"}
    from groq.types.chat import ChatCompletion as GroqChat
    GroqChat.model_validate(groq)
    openrouter = chat_response()
    openrouter["usage"].update(cost=0.00123, is_byok=False, prompt_tokens_details={"cached_tokens": 1024})
    xai = chat_response(reasoning_content="Lyon next.")
    xai["usage"].update(num_sources_used=0, cost_in_usd_ticks=12_345_678_901)
    return {"deepseek": deepseek, "mistral": mistral, "ollama": ollama, "groq": groq, "openrouter": openrouter,
            "xai": xai}


def new_run(c, model: str) -> tuple[str, str]:
    conv = c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s) "
                     "RETURNING id", (WS, LARK, ADA)).fetchone()[0]
    c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) VALUES (%s, 'message', 'user', %s, 'Hello.')",
              (conv, ADA))
    turn = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, mode, model, tools) "
                     "VALUES (%s, 'reply', %s, 'Weather in Paris, then Lyon?', 'run', %s, %s) RETURNING id",
                     (conv, ADA, model, TOOLS)).fetchone()[0]
    return str(conv), str(turn)


@pytest.mark.parametrize("provider", ["deepseek", "mistral", "ollama", "groq", "openrouter", "xai"])
def test_record_response_reads_each_dialects_response(dx, provider):
    conv, turn = new_run(dx, f"dialect-{provider}")
    dx.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
    step = dx.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, turn, json.dumps(responses()[provider]))).fetchone()[0]
    assert step["recorded"] == "round" and step["shape"] == "chat"
    assert [(t["id"], t["input"]) for t in step["tool_calls"]] == [("call_lyon", {"city": "Lyon"})]
    billed, read = dx.execute("SELECT billed_input_tokens, cache_read_tokens FROM prompt.responses WHERE turn_id = %s",
                              (turn,)).fetchone()
    assert billed == 1200 and read == {"deepseek": 1024, "openrouter": 1024}.get(provider, 0), (billed, read)
    dx.execute("SELECT prompt.record_tool_results(%s, %s, %s)",
               (conv, turn, json.dumps([{"call_id": "call_lyon", "content": "15 C, cloudy"}])))
    body = json.loads(dx.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0])
    validate(provider, body)
    assistant = [m for m in body["messages"] if m.get("tool_calls")][-1]
    if provider == "deepseek":
        # DeepSeek refuses a tool-call chain whose assistant message lacks its reasoning.
        assert assistant["reasoning_content"] == "Paris was asked first; Lyon is next."
    elif provider == "xai":
        assert assistant["reasoning_content"] == "Lyon next."
    else:
        assert "reasoning_content" not in assistant
    if provider == "mistral":
        assert "Checking Lyon." in json.dumps(assistant["content"])


def test_a_deepseek_reasoning_is_not_sent_with_a_later_turn(dx):
    """Its reasoning rides the run it came with; a later turn's history of that run carries
    the answer, not the reasoning (DeepSeek ignores it there)."""
    conv, turn = new_run(dx, "dialect-deepseek")
    dx.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
    dx.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, turn, json.dumps(responses()["deepseek"])))
    dx.execute("SELECT prompt.record_tool_results(%s, %s, %s)",
               (conv, turn, json.dumps([{"call_id": "call_lyon", "content": "15 C, cloudy"}])))
    dx.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
    final = chat_response(calls=False, content="Lyon: 15 C.", reasoning_content="Done.")
    final["id"] = "resp-2"
    dx.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, turn, json.dumps(final)))
    later = dx.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                       "VALUES (%s, 'reply', %s, 'And tomorrow?', 'dialect-deepseek') RETURNING id", (conv, ADA)).fetchone()[0]
    body = compile_turn(dx, conv, str(later))
    assert "reasoning_content" not in json.dumps(body)
    validate("deepseek", body)
