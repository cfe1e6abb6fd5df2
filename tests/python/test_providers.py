"""Today's providers (README, "Model profiles", "The response loop"): answers in the
shapes current models return — a search-then-call answer on Anthropic (thinking, a
server tool's call and result) and on Responses (reasoning with encrypted content, the
tool search's call and output, a function call with its item id), Gemini thought
signatures on text and call parts, cache writes split by TTL — are recorded, replayed
verbatim and in place on their own wire, byte for byte across the run's later requests,
dropped on the other wires, and every body validates against the SDK's request type.
"""
import copy
import json

import psycopg
import pytest
from anthropic.types import Message
from google.genai import types as genai
from openai.types.responses import Response

from conftest import ROOT, make_database
from test_wire_types import ANTHROPIC, CHAT, RESPONSES, assert_valid, assert_valid_gemini

WS, ADA, LARK = ("00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-000000000001",
                 "00000000-0000-4000-8000-000000000002")
TOOLS = json.dumps([
    {"name": "read_invoice", "description": "Read an invoice.", "input_schema": {"type": "object"}},
    {"name": "issue_refund", "description": "Refund a duplicate charge.",
     "input_schema": {"type": "object", "properties": {"invoice": {"type": "string"}}}, "deferred": True},
])
CASES = {
    # wire: (model, fixture, the recorded call's id, the turn's request options)
    "anthropic": ("claude-sonnet-5", "anthropic_tool_search", "toolu_01RfNd2041", {"thinking": {"effort": "high"}}),
    "responses": ("gpt-5.6-sol", "responses_tool_search", "call_refund_2041", {"store": False, "thinking": {"effort": "high"}}),
    "gemini": ("gemini-3.5-flash", "gemini_signed", "call_refund_1", {"thinking": {"effort": "high", "include_thoughts": True}}),
}


def fixture(name: str) -> dict:
    return json.loads((ROOT / f"tests/fixtures/responses/{name}.json").read_text())


def sdk(wire: str, body: dict) -> dict:
    """The body as the SDK's response model reads and writes it."""
    if wire == "anthropic":
        return Message.model_validate(body).model_dump(mode="json", exclude_none=True)
    if wire == "responses":
        return Response.model_validate(body).model_dump(mode="json", exclude_none=True)
    return genai.GenerateContentResponse.model_validate(body).model_dump(mode="json", exclude_none=True, by_alias=True)


def valid(wire: str, body: dict):
    if wire == "gemini":
        assert_valid_gemini(body)
    else:
        assert_valid({"anthropic": ANTHROPIC, "chat": CHAT, "responses": RESPONSES}[wire], body)


@pytest.fixture(scope="module")
def pdb():
    c = make_database("pgprompt_providers")
    yield c
    c.close()


def run_turn(c, wire):
    model, _, _, options = CASES[wire]
    conv = c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s) "
                     "RETURNING id::text", (WS, LARK, ADA)).fetchone()[0]
    c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content, created_at) "
              "VALUES (%s, 'message', 'user', %s, 'INV-2041 was charged twice.', '2026-12-01 09:00+00')", (conv, ADA))
    turn = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, mode, model, tools, request_options, created_at) "
                     "VALUES (%s, 'reply', %s, 'Refund the duplicate, please.', 'run', %s, %s, %s, '2026-12-01 09:01+00') "
                     "RETURNING id::text", (conv, ADA, model, TOOLS, json.dumps(options))).fetchone()[0]
    return conv, turn


def body_text(c, conv, turn):
    return c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]


def replayed(wire, body):
    """What the continuation replays of the recorded answer, as JSON values."""
    if wire == "anthropic":
        return next(m["content"] for m in body["messages"] if m["role"] == "assistant")
    if wire == "responses":
        return [i for i in body["input"] if i.get("type") in ("reasoning", "tool_search_call", "tool_search_output", "function_call")]
    return next(c["parts"] for c in body["contents"] if c["role"] == "model")


@pytest.mark.parametrize("wire", list(CASES))
def test_a_search_then_call_answer_round_trips(pdb, wire):
    model, name, call_id, _ = CASES[wire]
    c = pdb
    conv, turn = run_turn(c, wire)
    first = body_text(c, conv, turn)
    valid(wire, json.loads(first))
    answer = sdk(wire, fixture(name))
    recorded = c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, turn, json.dumps(answer))).fetchone()[0]
    assert recorded["recorded"] == "round" and [t["id"] for t in recorded["tool_calls"]] == [call_id]
    c.execute("SELECT prompt.record_tool_results(%s, %s, %s)",
              (conv, turn, json.dumps([{"call_id": call_id, "content": "Refunded EUR 49.00."}])))
    second = body_text(c, conv, turn)
    body = json.loads(second)
    valid(wire, body)
    # The recorded answer, in place and as it came: every block or item pgprompt does not
    # interpret replayed verbatim, the rest in the wire's own spelling.
    if wire == "anthropic":
        assert replayed(wire, body) == answer["content"]
    elif wire == "responses":
        assert replayed(wire, body) == [{k: v for k, v in i.items() if k != "status" or i["type"] != "function_call"}
                                        for i in answer["output"]]
        assert body["include"] == ["reasoning.encrypted_content"] and body["store"] is False
    else:
        assert replayed(wire, body) == answer["candidates"][0]["content"]["parts"]
    # Byte for byte: the first request is a prefix of the second, and the second of the
    # third (the final answer recorded, its next request compiled).
    close = {"anthropic": '],"tools":', "responses": '],"tools":', "gemini": '],"tools":'}[wire]
    assert second.startswith(first[: first.index(close)])
    final = copy.deepcopy(answer)
    if wire == "anthropic":
        final.update(id="msg_final_ts", content=[{"type": "text", "text": "Refunded."}], stop_reason="end_turn")
    elif wire == "responses":
        final.update(id="resp_final_ts", output=[{"type": "message", "id": "msg_final_ts", "role": "assistant",
                                                  "status": "completed", "content": [{"type": "output_text", "text": "Refunded.", "annotations": []}]}])
    else:
        final["responseId"] = "gm-final"
        final["candidates"][0]["content"]["parts"] = [{"text": "Refunded."}]
    c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, turn, json.dumps(final)))
    third = body_text(c, conv, turn)
    assert third.startswith(second[: second.index(close)])
    valid(wire, json.loads(third))
    assert body_text(c, conv, turn) == third, "the same rows, the same bytes"
    # Dropped on the other wires, as thinking is: a later turn read by a chat model.
    later = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model, created_at) "
                      "VALUES (%s, 'reply', %s, 'Thanks!', 'gpt-5.5', '2026-12-01 09:05+00') RETURNING id::text",
                      (conv, ADA)).fetchone()[0]
    chat = c.execute("SELECT prompt.preview_turn(%s, %s)::text", (conv, later)).fetchone()[0]
    valid("chat", json.loads(chat))
    for spelling in ("server_tool_use", "tool_search", "thoughtSignature", "encrypted", "Search for the deferred"):
        assert spelling not in chat, spelling
    assert "Refunded." in chat


def test_cache_writes_are_stored_by_ttl(pdb):
    c = pdb
    by_ttl = dict(c.execute("SELECT shape, cache_creation_by_ttl FROM prompt.responses WHERE cache_creation_by_ttl IS NOT NULL "
                            "AND response_id IN ('msg_01TS8xk2tN7Up6vQw3Rz5aBc', 'resp_68b0aa11c2f481919b7e')").fetchall())
    assert by_ttl == {"anthropic": {"5m": 512, "1h": 1536}, "responses": {"30m": 1800, "12h": 0}}, by_ttl


def test_a_profiles_thinking_forms_are_what_its_sdk_takes(pdb):
    """Adaptive thinking with a display and an effort (a 5-series Claude), a budget
    (Sonnet 4.6), effort none for thinking off (gpt-5.5), levels and thoughts (Gemini):
    each in its wire's spelling, each body valid."""
    c = pdb
    cases = [
        ("claude-opus-5", {"thinking": {"effort": "max", "display": "omitted"}},
         lambda b: b["thinking"] == {"type": "adaptive", "display": "omitted"} and b["output_config"] == {"effort": "max"}),
        ("claude-opus-5", {"thinking": {"mode": "disabled"}}, lambda b: b["thinking"] == {"type": "disabled"}),
        ("claude-sonnet-4-6", {"thinking": {"budget_tokens": 1500}},
         lambda b: b["thinking"] == {"type": "enabled", "budget_tokens": 1500}),
        ("gpt-5.5", {"thinking": {"mode": "disabled"}}, lambda b: b["reasoning_effort"] == "none"),
        ("gemini-3.5-flash", {"thinking": {"effort": "minimal", "include_thoughts": True}},
         lambda b: b["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "MINIMAL", "includeThoughts": True}),
    ]
    for model, options, check in cases:
        c.execute("BEGIN")
        try:
            if not c.execute("SELECT 1 FROM prompt.models WHERE name = %s", (model,)).fetchone():
                c.execute("INSERT INTO prompt.models (name, wire, tokenizer, advisory_window, max_output_tokens) "
                          "SELECT %s, wires[1], tokenizer, 100000, 4096 FROM prompt.model_profiles WHERE name = %s", (model, model))
            conv, turn = run_turn(c, "anthropic")
            c.execute("UPDATE prompt.turns SET model = %s, request_options = %s, tools = NULL, mode = 'direct_reply' WHERE id = %s",
                      (model, json.dumps(options), turn))
            wire = c.execute("SELECT prompt.explain_turn(%s, %s)->>'wire'", (conv, turn)).fetchone()[0]
            body = json.loads(c.execute("SELECT prompt.preview_turn(%s, %s)::text", (conv, turn)).fetchone()[0])
        finally:
            c.execute("ROLLBACK")
        assert check(body), (model, body)
        valid(wire, body)


def test_every_shipped_profile_reads_and_compiles(pdb):
    """The profiles the extension ships read as the compiler reads them: a model of each,
    on its first wire, previews."""
    c = pdb
    names = [r[0] for r in c.execute("SELECT name FROM prompt.model_profiles WHERE shipped ORDER BY name")]
    assert len(names) >= 40
    c.execute("BEGIN")
    try:
        conv, turn = run_turn(c, "anthropic")
        c.execute("UPDATE prompt.turns SET tools = NULL, mode = 'direct_reply', request_options = '{}' WHERE id = %s", (turn,))
        for name in names:
            c.execute("INSERT INTO prompt.models (name, wire, tokenizer, advisory_window, max_output_tokens) "
                      "SELECT name || '-check', wires[1], coalesce(tokenizer, 'cl100k_base'), 100000, 1024 "
                      "FROM prompt.model_profiles WHERE name = %s", (name,))
            c.execute("UPDATE prompt.turns SET model = %s WHERE id = %s", (name + "-check", turn))
            explained = c.execute("SELECT prompt.explain_turn(%s, %s)", (conv, turn)).fetchone()[0]
            assert explained["model"] == name + "-check"
            # A profile past a sourced retirement refuses the compile (whichever day the test runs).
            retired = c.execute("SELECT coalesce(retires_at <= current_date AND lifecycle_source IS NOT NULL, false) "
                                "FROM prompt.model_profiles "
                                "WHERE name = %s", (name,)).fetchone()[0]
            if retired:
                c.execute("SAVEPOINT retired")
                with pytest.raises(psycopg.Error) as e:
                    c.execute("SELECT prompt.preview_turn(%s, %s)", (conv, turn))
                assert e.value.sqlstate == "22023" and str(e.value).startswith("model_retired: "), e.value
                c.execute("ROLLBACK TO SAVEPOINT retired")
            else:
                c.execute("SELECT prompt.preview_turn(%s, %s)", (conv, turn))
    finally:
        c.execute("ROLLBACK")
