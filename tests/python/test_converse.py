"""The fifth wire, Amazon Bedrock's Converse: every body validated against
botocore's own bedrock-runtime service model (ConverseRequest, CountTokensRequest,
ConverseResponse); cachePoint blocks where the model's profile caches, none where no
profile says so; profiles found through Bedrock's ids and cross-region inference
profiles; what the wire cannot say refused on write at its pointer; a Converse response
recorded as billed. (The request options and the response loop of this wire run in
test_wire_types.py and test_response_loop.py, beside the other four.)"""
import json

import psycopg
import pytest

from conftest import make_database
from converse_types import assert_valid_converse, assert_valid_count, converse_response
from test_response_loop import fixture

WS, ADA, LARK = ("00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-000000000001",
                 "00000000-0000-4000-8000-000000000002")
CLAUDE, NOVA, BARE = "us.anthropic.claude-sonnet-5-v1:0", "amazon.nova-pro-v1:0", "converse-vision"
# Lark's system prompt, long enough for any profile's minimum cacheable prefix.
LONG = "You are {{agent}} of {{workspace}}. " + " ".join(f"Rule {i}: invoices are exact to the cent." for i in range(400))


@pytest.fixture()
def cdb():
    c = make_database("pgprompt_converse")
    c.execute("UPDATE prompt.documents SET body = %s WHERE user_id = %s AND name = 'system_prompt'", (LONG, LARK))
    yield c
    c.close()


def turn(c, model, prompt="Which invoice was charged twice?", options="{}", mode="direct_reply"):
    conv = c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s) "
                     "RETURNING id::text", (WS, LARK, ADA)).fetchone()[0]
    t = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model, request_options, mode, "
                  "created_at) VALUES (%s, 'reply', %s, %s, %s, %s, %s, '2026-12-01 10:00+00') RETURNING id::text",
                  (conv, ADA, prompt, model, options, mode)).fetchone()[0]
    return conv, t


def compiled(c, conv, t) -> dict:
    return json.loads(c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, t)).fetchone()[0])


def test_profiles_are_found_through_bedrocks_ids(cdb):
    c = cdb
    found = lambda name: c.execute("SELECT prompt._model_profile(%s, NULL)::jsonb ->> 'name'", (name,)).fetchone()[0]  # noqa: E731
    assert found("anthropic.claude-sonnet-5-20260301-v1:0") == "anthropic.claude-sonnet-5"
    assert found("global.anthropic.claude-sonnet-5-20260301-v1:0") == "anthropic.claude-sonnet-5"
    assert found("us.amazon.nova-pro-v1:0") == "amazon.nova-pro"
    assert found("amazon.nova-pro-v1:0") == "amazon.nova-pro"
    assert found("eu.meta.llama3-3-70b-instruct-v1:0") == "meta.llama3-3-70b-instruct"
    # Only a geography before a vendor's id is stripped; nothing else is a profile's.
    assert found("us.claude-sonnet-5") is None
    assert found("amazon.nova-pro2-v1:0") is None
    wires = c.execute("SELECT wires FROM prompt.model_profiles WHERE name = 'anthropic.claude-sonnet-5'").fetchone()[0]
    assert wires == ["converse"]


def test_a_cachepoint_closes_the_stable_prefix_where_the_profile_caches(cdb):
    c = cdb
    for model, ttl in ((CLAUDE, None), (NOVA, None), (BARE, None)):
        conv, t = turn(c, model)
        body = compiled(c, conv, t)
        assert_valid_converse(body)
        points = [b for b in body["system"] if "cachePoint" in b]
        if model == BARE:
            assert points == [], "no profile: Bedrock would refuse a cachePoint for a model that caches nothing"
        else:
            assert body["system"][-1] == {"cachePoint": {"type": "default"}}, body["system"][-2:]
    # A one-hour TTL where the model's cache_ttl says so (Claude's profile takes 1h).
    c.execute("UPDATE prompt.models SET cache_ttl = '1h' WHERE name = %s", (CLAUDE,))
    conv, t = turn(c, CLAUDE)
    body = compiled(c, conv, t)
    assert body["system"][-1] == {"cachePoint": {"type": "default", "ttl": "1h"}}
    assert_valid_converse(body)


def test_the_count_body_is_bedrocks_count_tokens_request(cdb):
    c = cdb
    conv, t = turn(c, CLAUDE, options='{"thinking": {"mode": "adaptive", "effort": "low"}}')
    body = compiled(c, conv, t)
    count = c.execute("SELECT prompt.count_body(%s, %s)", (conv, t)).fetchone()[0]
    assert_valid_count(count)
    kept = {k: body[k] for k in ("messages", "system", "toolConfig", "additionalModelRequestFields") if k in body}
    assert count == {"input": {"converse": kept}}
    assert "additionalModelRequestFields" in kept and "inferenceConfig" not in count["input"]["converse"]


@pytest.mark.parametrize("options,pointer,fragment", [
    ('{"tool_choice": "none"}', "/request_options/tool_choice", "has no tool choice none"),
    ('{"parallel_tool_calls": false}', "/request_options/parallel_tool_calls", "has no parallel_tool_calls switch"),
    ('{"cache_diagnostics": true}', "/request_options/cache_diagnostics", "returns no cache diagnostics"),
    ('{"response_format": {"type": "json_object"}}', "/request_options/response_format", "json_schema only"),
    ('{"store": true}', "/request_options/store", "takes no store"),
])
def test_what_converse_cannot_say_is_refused_on_write(cdb, options, pointer, fragment):
    with pytest.raises(psycopg.Error) as e:
        turn(cdb, BARE, options=options)
    assert e.value.sqlstate == "22023", e.value
    message = e.value.diag.message_primary
    assert message.startswith("request_options_invalid: ") and pointer in message and fragment in message, message


def test_a_converse_response_is_recorded_as_billed(cdb):
    c = cdb
    conv, t = turn(c, CLAUDE, mode="direct_reply")
    compiled(c, conv, t)
    answer = converse_response({**fixture("converse"), "stopReason": "end_turn",
                                "output": {"message": {"role": "assistant", "content": [{"text": "INV-2041, twice."}]}}})
    r = c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, t, json.dumps(answer))).fetchone()[0]
    assert (r["shape"], r["recorded"], r["response_id"]) == ("converse", "answer", None)
    row = c.execute("SELECT input_tokens, cache_creation_tokens, cache_read_tokens, output_tokens, billed_input_tokens, "
                    "cache_creation_by_ttl, stop_reason FROM prompt.responses WHERE turn_id = %s", (t,)).fetchone()
    assert row == (412, 2048, 0, 61, 2460, {"5m": 2048}, "end_turn")
    assert c.execute("SELECT content FROM prompt.turns WHERE id = %s", (t,)).fetchone()[0] == "INV-2041, twice."
    # Recorded again (no id: known by its digest), nothing more is written.
    again = c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, t, json.dumps(answer))).fetchone()[0]
    assert again["step"] == 0
    assert c.execute("SELECT count(*) FROM prompt.responses WHERE turn_id = %s", (t,)).fetchone()[0] == 1
    # A content block of two keys is no ContentBlock: refused at its pointer.
    conv, t = turn(c, CLAUDE)
    compiled(c, conv, t)
    bad = {**answer, "output": {"message": {"role": "assistant", "content": [{"text": "a", "image": {}}]}}}
    with pytest.raises(psycopg.Error) as e:
        c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, t, json.dumps(bad)))
    assert e.value.sqlstate == "22023" and "/output/message/content/0" in str(e.value), str(e.value)


def test_what_bedrock_refuses_across_fields_is_refused_before_it_is_sent(cdb):
    """Rules botocore's shapes cannot say, held by pgprompt (fail closed, with what to
    do): toolUse and toolResult blocks need a toolConfig, so a tool-less turn whose
    history holds a run reads them as text (D-s5-3: it was refused, and a 400 before
    that); metadata is 1 to 16 entries
    of Bedrock's characters; a cachePoint's TTL is one the model's profile takes."""
    c = cdb
    conv, run = turn(c, CLAUDE, mode="run")
    c.execute("UPDATE prompt.turns SET tools = %s WHERE id = %s", (json.dumps([{"name": "get_weather",
              "input_schema": {"type": "object"}}]), run))
    compiled(c, conv, run)
    c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, run, json.dumps(fixture("converse"))))
    c.execute("SELECT prompt.record_tool_results(%s, %s, %s)", (conv, run, json.dumps([{"call_id": "tooluse_lyon_1", "content": "15 C"}])))
    compiled(c, conv, run)
    after = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                      "VALUES (%s, 'reply', %s, 'Thanks.', %s) RETURNING id::text", (conv, ADA, CLAUDE)).fetchone()[0]
    # Declaring no tool, it reads the run's call and result as text, with no toolConfig.
    body = c.execute("SELECT prompt.preview_turn(%s, %s)", (conv, after)).fetchone()[0]
    assert_valid_converse(body)
    assert "toolConfig" not in body
    blocks = [b for m in body["messages"] for b in m["content"]]
    assert not [b for b in blocks if "toolUse" in b or "toolResult" in b], blocks
    said = [b["text"] for b in blocks if "text" in b]
    assert any(t.startswith("[tool call tooluse_lyon_1: get_weather {") for t in said), said
    assert "[tool result tooluse_lyon_1]\n15 C" in said, said
    c.execute("UPDATE prompt.turns SET tools = %s WHERE id = %s", (json.dumps([{"name": "get_weather",
              "input_schema": {"type": "object"}}]), after))
    body = compiled(c, conv, after)
    assert_valid_converse(body)
    assert [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]] == ["get_weather"]

    for metadata in ({}, {"tenant": "café!"}):
        with pytest.raises(psycopg.Error) as e:
            turn(c, BARE, options=json.dumps({"metadata": metadata}))
        assert e.value.sqlstate == "22023" and "/request_options/metadata" in e.value.diag.message_primary

    c.execute("UPDATE prompt.models SET cache_ttl = '1h' WHERE name = %s", (NOVA,))
    conv, t = turn(c, NOVA)
    body = compiled(c, conv, t)
    assert body["system"][-1] == {"cachePoint": {"type": "default"}}, "Nova's profile takes 5 minutes only"


def test_a_conversation_bedrock_would_refuse_for_its_roles_is_refused_before_it_is_sent(cdb):
    """Bedrock refuses a conversation whose first message is the assistant's ("A
    conversation must start with a user message") and one where two messages of a role
    meet ("must alternate between user and assistant roles"): pgprompt refuses both with
    turn_not_compilable and what to do, and compiles the same rows once a user's turn
    opens them."""
    c = cdb
    conv = c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s) "
                     "RETURNING id::text", (WS, LARK, ADA)).fetchone()[0]
    c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) "
              "VALUES (%s, 'message', 'assistant', %s, 'Hello, I am Lark. How can I help?')", (conv, LARK))
    t = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                  "VALUES (%s, 'reply', %s, 'Which invoice was charged twice?', %s) RETURNING id::text",
                  (conv, ADA, CLAUDE)).fetchone()[0]
    with pytest.raises(psycopg.Error) as e:
        compiled(c, conv, t)
    assert e.value.sqlstate == "55000", e.value
    assert "first message is the assistant's" in e.value.diag.message_primary
    assert "user-side block before history" in e.value.diag.message_hint
    # Nothing was sealed by the refusal.
    assert c.execute("SELECT count(*) FROM prompt.seals WHERE conversation_id = %s", (conv,)).fetchone()[0] == 0
    # The same rows with a user's turn first: accepted, and botocore validates the body.
    c.execute("INSERT INTO prompt.turns (conversation_id, seq, kind, role, author_id, content) "
              "VALUES (%s, 0, 'message', 'user', %s, 'Hi.')", (conv, ADA))
    body = compiled(c, conv, t)
    assert_valid_converse(body)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    # Two responses in a row (a round without calls, then another): the continuation
    # that would carry both is refused, naming what to record between them.
    conv, run = turn(c, CLAUDE, mode="run")
    c.execute("UPDATE prompt.turns SET tools = %s WHERE id = %s", (json.dumps([{"name": "get_weather",
              "input_schema": {"type": "object"}}]), run))
    compiled(c, conv, run)
    said = fixture("converse")
    said["output"]["message"]["content"] = [{"text": "Let me think."}]
    said["stopReason"] = "end_turn"
    c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, run, json.dumps(said)))
    assert_valid_converse(compiled(c, conv, run))
    # record_response takes no second answer on a finished run: a writer's round does it.
    c.execute("INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant) SELECT conversation_id, turn_id, 2, "
              "replace(assistant::text, 'Let me think.', 'Done.')::jsonb FROM prompt.rounds WHERE turn_id = %s AND n = 1", (run,))
    with pytest.raises(psycopg.Error) as e:
        compiled(c, conv, run)
    assert e.value.sqlstate == "55000", e.value
    assert "two assistant messages in a row" in e.value.diag.message_primary
    assert "alternate between user and assistant" in e.value.diag.message_hint
    # That run in history blocks the next turn too (its two responses would meet there),
    # with what to do about a run that cannot be recorded again: summarize it.
    after = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                      "VALUES (%s, 'reply', %s, 'And now?', %s) RETURNING id::text", (conv, ADA, CLAUDE)).fetchone()[0]
    with pytest.raises(psycopg.Error) as e:
        compiled(c, conv, after)
    assert e.value.sqlstate == "55000", e.value
    assert "two assistant messages in a row" in e.value.diag.message_primary
    assert "summarize it" in e.value.diag.message_hint
    c.execute("DELETE FROM prompt.turns WHERE id = %s", (after,))
    c.execute("INSERT INTO prompt.turns (conversation_id, kind, content) VALUES (%s, 'summary', 'Lark answered twice.')", (conv,))
    after = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                      "VALUES (%s, 'reply', %s, 'And now?', %s) RETURNING id::text", (conv, ADA, CLAUDE)).fetchone()[0]
    assert_valid_converse(compiled(c, conv, after))


def test_a_trimmed_answer_goes_with_its_words_on_converse(cdb):
    """D-s5-2 (issue 60): a Nova model with a small window, a turn with long words and a
    short answer, then a new turn: the budget keeps the answer but not its words, which
    left the request opening with the assistant (refused before). The answer goes too; the
    body opens with the user and botocore validates it."""
    c = cdb
    c.execute("UPDATE prompt.documents SET body = 'You are {{agent}}.' WHERE user_id = %s AND name = 'system_prompt'", (LARK,))
    c.execute("INSERT INTO prompt.models (name, wire, advisory_window, max_output_tokens) VALUES ('amazon.nova-lite-v1:0', "
              "'converse', 200, 1024) ON CONFLICT (name) DO UPDATE SET advisory_window = 200")
    conv, first = turn(c, "amazon.nova-lite-v1:0", prompt="Please read this. " + "word " * 400)
    c.execute("UPDATE prompt.turns SET content = 'Refunded.' WHERE id = %s", (first,))
    t = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model, created_at) "
                  "VALUES (%s, 'reply', %s, 'And the next one?', 'amazon.nova-lite-v1:0', '2026-12-01 10:05+00') "
                  "RETURNING id::text", (conv, ADA)).fetchone()[0]
    # The budget keeps the answer without its words (on anthropic, in a rolled-back
    # transaction, the same rows and window keep it)...
    with c.transaction():
        c.execute("INSERT INTO prompt.models (name, wire, advisory_window, max_output_tokens) "
                  "VALUES ('claude-window-200', 'anthropic', 200, 1024)")
        c.execute("UPDATE prompt.turns SET model = 'claude-window-200' WHERE id = %s", (t,))
        kept = json.dumps(json.loads(c.execute("SELECT prompt.preview_turn(%s, %s)::text", (conv, t)).fetchone()[0]))
        raise psycopg.Rollback()
    assert "Refunded." in kept and "word word" not in kept, kept
    # ... and on converse the answer goes with them.
    body = compiled(c, conv, t)
    assert_valid_converse(body)
    text = json.dumps(body)
    assert body["messages"][0]["role"] == "user" and "Refunded." not in text and "word word" not in text, text
