"""Today's cache-keeping forms and count bodies (README, "Model profiles", "Request
options"), each where a model's profile takes it and validated by the newest
SDK types: a system entry in history as a {"role": "system"} message in place, thinking
between tools, a TTL of history's breakpoints of its own, cache diagnostics against the
previous response (and what the provider answers, in cache_report), and the body each
provider's token-count endpoint takes.
"""
import copy
import json

import psycopg
import pytest
from anthropic.types.message_count_tokens_params import MessageCountTokensParams
from openai.types.responses.input_token_count_params import InputTokenCountParams
from pydantic import TypeAdapter

from conftest import make_database
from test_response_loop import final_response
from test_wire_types import ANTHROPIC, RESPONSES, assert_valid, assert_valid_gemini

WS, ADA, LARK = ("00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-000000000001",
                 "00000000-0000-4000-8000-000000000002")


@pytest.fixture(scope="module")
def fdb():
    c = make_database("pgprompt_forms")
    c.execute("INSERT INTO prompt.models (name, wire, tokenizer, max_output_tokens) VALUES "
              "('claude-opus-5', 'anthropic', 'cl100k_base', 4096), ('claude-opus-4-8', 'anthropic', 'cl100k_base', 4096), "
              "('gpt-6-sol', 'responses', 'o200k_base', 4096), ('gpt-6-sol-chat', 'chat', 'o200k_base', 4096), "
              "('gemini-4-argon', 'gemini', 'o200k_base', 4096)")
    c.execute("UPDATE prompt.models SET profile = 'gpt-6-sol' WHERE name = 'gpt-6-sol-chat'")
    yield c
    c.close()


def conversation(c, system_entry=False):
    conv = c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s) "
                     "RETURNING id::text", (WS, LARK, ADA)).fetchone()[0]
    c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) VALUES "
              "(%s, 'message', 'user', %s, 'INV-2041 was charged twice.')", (conv, ADA))
    if system_entry:
        c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) VALUES "
                  "(%s, 'message', 'system', %s, 'Policy changed: refunds over 100 EUR need a manager.')", (conv, ADA))
    return conv


def reply(c, conv, model, options=None, prompt="Refund the duplicate, please."):
    return c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model, request_options) "
                     "VALUES (%s, 'reply', %s, %s, %s, %s) RETURNING id::text",
                     (conv, ADA, prompt, model, json.dumps(options or {}))).fetchone()[0]


def body(c, conv, turn, fn="compile_turn"):
    return json.loads(c.execute(f"SELECT prompt.{fn}(%s, %s)::text", (conv, turn)).fetchone()[0])


def refused(c, sql, args, sqlstate):
    with pytest.raises(psycopg.Error) as e:
        c.execute(sql, args)
    assert e.value.sqlstate == sqlstate, e.value
    return e.value


def test_a_system_entry_in_history_is_a_system_message_in_place(fdb):
    """On a model whose profile takes system messages (Claude's 5 family), the entry is a
    {"role": "system"} message where it stands, and what came before it is byte for byte
    the request of the turn before; elsewhere it still rides as user text."""
    conv = conversation(fdb)
    first = reply(fdb, conv, "claude-opus-5")
    before = fdb.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, first)).fetchone()[0]
    fdb.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) VALUES "
                "(%s, 'message', 'system', %s, 'Policy changed: refunds over 100 EUR need a manager.')", (conv, ADA))
    second = reply(fdb, conv, "claude-opus-5", prompt="And the other one?")
    after = body(fdb, conv, second, "preview_turn")
    assert_valid(ANTHROPIC, after)
    system = [m for m in after["messages"] if m["role"] == "system"]
    assert system == [{"role": "system", "content": [{"type": "text", "text": "Policy changed: refunds over 100 EUR need a manager."}]}], after["messages"]
    at = after["messages"].index(system[0])
    sent = json.loads(before)["messages"]
    assert [json.dumps(m) for m in after["messages"][:len(sent)]][:at] == [json.dumps(m) for m in sent][:at]
    # Claude Opus 4.8's profile takes none: the entry speaks on the user side.
    fdb.execute("UPDATE prompt.turns SET model = 'claude-opus-4-8' WHERE id = %s", (second,))
    other = body(fdb, conv, second, "preview_turn")
    assert all(m["role"] != "system" for m in other["messages"])


def test_thinking_between_tools_where_the_profile_lists_it(fdb):
    conv = conversation(fdb)
    turn = reply(fdb, conv, "claude-opus-5", {"thinking": {"mode": "between_tools"}})
    b = body(fdb, conv, turn, "preview_turn")
    assert b["thinking"] == {"type": "between_tools"}
    assert_valid(ANTHROPIC, b)
    for model, pointer in (("claude-opus-4-8", "/request_options/thinking/mode"), ("gpt-6-sol", "/request_options/thinking/mode")):
        e = refused(fdb, "UPDATE prompt.turns SET model = %s WHERE id = %s", (model, turn), "22023")
        assert str(e).startswith("request_options_invalid:") and f" at {pointer}" in str(e), str(e)
    e = refused(fdb, "UPDATE prompt.turns SET request_options = %s WHERE id = %s",
                (json.dumps({"thinking": {"mode": "between_tools", "display": "summarized"}}), turn), "22023")
    assert "between_tools takes no display" in str(e)


def test_history_breakpoints_take_a_ttl_of_their_own(fdb):
    """A 1h stable prefix beside 5m history (Anthropic), a 12h prefix beside 30m history
    (OpenAI's explicit breakpoints); never a history TTL longer than the prefix's."""
    fdb.execute("UPDATE prompt.models SET cache_ttl = '1h', history_cache_ttl = '5m' WHERE name = 'claude-opus-5'")
    fdb.execute("UPDATE prompt.models SET cache_ttl = '12h', history_cache_ttl = '30m' WHERE name = 'gpt-6-sol'")
    try:
        # A long stable prefix (the minimum cacheable length) and some history.
        fdb.execute("UPDATE prompt.documents SET body = repeat('Answer as Lark of Acme support. ', 800) "
                    "WHERE name = 'system_prompt'")
        conv = conversation(fdb)
        fdb.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) "
                    "SELECT %s, 'message', 'user', %s, repeat('more words ', 500) FROM generate_series(1, 3)", (conv, ADA))
        a = body(fdb, conv, reply(fdb, conv, "claude-opus-5"), "preview_turn")
        assert_valid(ANTHROPIC, a)
        marks = [b["cache_control"] for b in a["system"] if "cache_control" in b]
        marks += [b["cache_control"] for m in a["messages"] for b in m["content"] if isinstance(b, dict) and "cache_control" in b]
        assert marks[0] == {"type": "ephemeral", "ttl": "1h"} and {"type": "ephemeral"} in marks[1:], marks
        r = body(fdb, conv, reply(fdb, conv, "gpt-6-sol"), "preview_turn")
        assert_valid(RESPONSES, r)
        assert r["prompt_cache_options"] == {"mode": "explicit", "ttl": "12h"}
        points = [p["prompt_cache_breakpoint"] for i in r["input"] for p in (i.get("content") if isinstance(i.get("content"), list) else [])
                  if "prompt_cache_breakpoint" in p]
        assert {"mode": "explicit"} in points and {"mode": "explicit", "ttl": "30m"} in points, points
        refused(fdb, "UPDATE prompt.models SET history_cache_ttl = '12h' WHERE name = 'claude-opus-5'", (), "23514")
    finally:
        fdb.execute("UPDATE prompt.models SET cache_ttl = '5m', history_cache_ttl = NULL WHERE name = 'claude-opus-5'")
        fdb.execute("UPDATE prompt.models SET cache_ttl = '5m', history_cache_ttl = NULL WHERE name = 'gpt-6-sol'")


def test_cache_diagnostics_name_the_previous_response_and_the_report_keeps_the_answer(fdb):
    conv = conversation(fdb)
    first = reply(fdb, conv, "claude-opus-5", {"cache_diagnostics": True})
    b1 = body(fdb, conv, first)
    assert b1["diagnostics"] == {"previous_message_id": None}
    assert_valid(ANTHROPIC, b1)
    answer = {**final_response("anthropic"), "id": "msg_diag_1",
              "diagnostics": {"cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": 1200}}}
    recorded = fdb.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, first, json.dumps(answer))).fetchone()[0]
    assert recorded["recorded"] == "answer"
    second = reply(fdb, conv, "claude-opus-5", {"cache_diagnostics": True}, "Thanks.")
    b2 = body(fdb, conv, second)
    assert b2["diagnostics"] == {"previous_message_id": "msg_diag_1"}
    assert_valid(ANTHROPIC, b2)
    miss = fdb.execute("SELECT billed_miss FROM prompt.cache_report(%s) WHERE turn_id = %s", (conv, first)).fetchone()[0]
    assert miss == {"cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": 1200}}
    # Responses: prompt_cache_options.comparison_response_id, once a response is recorded.
    conv = conversation(fdb)
    first = reply(fdb, conv, "gpt-6-sol", {"cache_diagnostics": True})
    assert "comparison_response_id" not in body(fdb, conv, first)["prompt_cache_options"]
    resp = copy.deepcopy(final_response("responses"))
    resp.update(id="resp_diag_1", prompt_cache_diagnostics={"type": "cache_miss", "reason": "input_changed",
                                                             "cache_missed_tokens": 300})
    fdb.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, first, json.dumps(resp)))
    second = reply(fdb, conv, "gpt-6-sol", {"cache_diagnostics": True}, "Thanks.")
    b = body(fdb, conv, second)
    assert b["prompt_cache_options"]["comparison_response_id"] == "resp_diag_1"
    assert_valid(RESPONSES, b)
    # Chat returns none, nor does a model whose profile does not take them.
    third = reply(fdb, conv, "gpt-6-sol", {"cache_diagnostics": True}, "One more.")
    e = refused(fdb, "UPDATE prompt.turns SET model = 'gpt-6-sol-chat' WHERE id = %s", (third,), "22023")
    assert "/request_options/cache_diagnostics" in str(e)
    e = refused(fdb, "UPDATE prompt.turns SET model = 'claude-opus-4-8' WHERE id = %s", (third,), "22023")
    assert "takes no cache_diagnostics" in str(e)


COUNT_ANTHROPIC = TypeAdapter(MessageCountTokensParams)
COUNT_RESPONSES = TypeAdapter(InputTokenCountParams)


@pytest.mark.parametrize("model", ["claude-opus-5", "gpt-6-sol", "gemini-4-argon", "gpt-6-sol-chat"])
def test_count_bodies_are_what_each_count_endpoint_takes(fdb, model):
    conv = conversation(fdb)
    turn = reply(fdb, conv, model, {"cache_diagnostics": True} if model == "claude-opus-5" else {})
    sent = body(fdb, conv, turn)
    if model == "gpt-6-sol-chat":
        e = refused(fdb, "SELECT prompt.count_body(%s, %s)", (conv, turn), "0A000")
        assert str(e).startswith("count_unavailable: the chat wire has no token-count endpoint")
        return
    counted = json.loads(fdb.execute("SELECT prompt.count_body(%s, %s)::text", (conv, turn)).fetchone()[0])
    if model == "claude-opus-5":
        assert_valid(COUNT_ANTHROPIC, counted)
        assert set(sent) - set(counted) == {"max_tokens", "diagnostics"}
    elif model == "gpt-6-sol":
        assert_valid(COUNT_RESPONSES, counted)
        assert set(sent) - set(counted) == {"max_output_tokens", "prompt_cache_key", "prompt_cache_options"}
    else:
        request = counted["generateContentRequest"]
        assert request.pop("model") == "models/gemini-4-argon"
        assert_valid_gemini(request)
        assert request == sent
    assert all(counted.get(k, sent[k]) == sent[k] for k in sent if k != "generateContentRequest")
    # The provider's answer, recorded beside the estimate, is read by the calibration.
    written = fdb.execute("SELECT prompt.record_count(%s, %s, 1234)", (conv, turn)).fetchone()[0]
    assert written["input_tokens"] == 1234 and written["step"] == 0 and written["estimated_input_tokens"] > 0
    fdb.execute("SELECT prompt.record_count(%s, %s, 1300)", (conv, turn))
    assert fdb.execute("SELECT input_tokens FROM prompt.counts WHERE turn_id = %s", (turn,)).fetchall() == [(1300,)]
    refused(fdb, "SELECT prompt.record_count(%s, %s, -1)", (conv, turn), "22023")
