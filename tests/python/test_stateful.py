"""Stateful responses (the transcript is owned by the provider's
stateful Responses, the system prompt is re-rendered every turn). A turn with
request_options.stateful sends its system text as `instructions` and, when the previous
request of its answerer has a recorded response and the chain holds, that response's id
and only what is new since; otherwise the full body. Checked against the full body the
seal stores (byte for byte, as a transformation of it), with the SDK's request type, and
through the response loop."""
import copy
import json

import pytest

from conftest import make_database
from test_response_loop import CALL_IDS, TOOLS, fixture, sdk
from test_wire_types import RESPONSES, assert_valid

WS, ADA, LARK = ("00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-000000000001",
                 "00000000-0000-4000-8000-000000000002")
MODEL, OTHER = "gpt-5.6-sol", "gpt-5.6-sol-vision"
STATEFUL = '{"stateful": true}'


@pytest.fixture()
def sdb():
    c = make_database("pgprompt_stateful")
    yield c
    c.close()


def conversation(c) -> str:
    conv = c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) "
                     "VALUES (%s, %s, %s) RETURNING id", (WS, LARK, ADA)).fetchone()[0]
    c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) "
              "VALUES (%s, 'message', 'user', %s, 'We are testing stateful responses.')", (conv, ADA))
    return str(conv)


def turn(c, conv, prompt, model=MODEL, options=STATEFUL, mode="direct_reply") -> str:
    return str(c.execute(
        "INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model, request_options, mode, tools, "
        "created_at) VALUES (%s, 'reply', %s, %s, %s, %s, %s, %s, '2026-12-01 10:00+00') RETURNING id",
        (conv, ADA, prompt, model, options, mode, TOOLS if mode == "run" else None)).fetchone()[0])


def compiled(c, conv, t) -> str:
    return c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, t)).fetchone()[0]


def full(c, conv, t) -> dict:
    return json.loads(c.execute("SELECT prompt.sealed_body(%s, %s)::text", (conv, t)).fetchone()[0])


def explain(c, conv, t) -> dict:
    return c.execute("SELECT prompt.explain_turn(%s, %s)", (conv, t)).fetchone()[0]


def answer(text, rid, usage=(500, 20)) -> dict:
    """A Responses answer with text only, as the SDK's response model writes it."""
    b = copy.deepcopy(fixture("responses"))
    b["id"] = rid
    b["output"] = [{"type": "message", "id": f"msg_{rid}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}]
    b["usage"].update(input_tokens=usage[0], output_tokens=usage[1], total_tokens=sum(usage))
    return sdk("responses", b)


def record(c, conv, t, response) -> dict:
    return c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, t, json.dumps(response))).fetchone()[0]


def system_lead(items):
    n = 0
    while n < len(items) and items[n].get("type") == "message" and items[n].get("role") in ("system", "developer"):
        n += 1
    return n


def text_of(item):
    content = item["content"]
    return content if isinstance(content, str) else "\n\n".join(p["text"] for p in content)


def stateful_form(body: dict, cut: int, previous: str = None) -> dict:
    """The stateful form of a full body, as docs/design.md says it: the system text as
    instructions, previous_response_id, the input from the cut on, no explicit cache
    options; every other field in its place."""
    items = body["input"]
    lead = system_lead(items)
    out = {}
    for key, value in body.items():
        if key == "input":
            if lead:
                out["instructions"] = "\n\n".join(text_of(i) for i in items[:lead])
            if previous:
                out["previous_response_id"] = previous
            out["input"] = items[max(cut, lead):]
        elif key != "prompt_cache_options":
            out[key] = value
    return out


def test_a_stateful_turn_sends_the_system_text_as_instructions_and_only_what_is_new(sdb):
    c = sdb
    conv = conversation(c)
    t1 = turn(c, conv, "Hello there.")
    first = compiled(c, conv, t1)
    body1, full1 = json.loads(first), full(c, conv, t1)
    # The first request holds the whole transcript; its system text is instructions only.
    assert "previous_response_id" not in body1
    assert body1 == stateful_form(full1, 0)
    assert body1["instructions"].startswith("You are Lark")
    assert all(i.get("role") not in ("system", "developer") for i in body1["input"])
    assert "prompt_cache_options" not in body1 and "prompt_cache_options" in full1, \
        "the full body of this model caches by explicit breakpoints; the stateful form never"
    assert_valid(RESPONSES, body1)
    assert explain(c, conv, t1)["stateful"] == {"cut": system_lead(full1["input"])}
    record(c, conv, t1, answer("Hi! How can I help?", "resp_s1"))

    t2 = turn(c, conv, "What did I say first?")
    second = compiled(c, conv, t2)
    body2, full2 = json.loads(second), full(c, conv, t2)
    lead1, lead2 = system_lead(full1["input"]), system_lead(full2["input"])
    held = full1["input"][lead1:]
    # The provider holds the first request and its answer; the second sends the rest.
    assert full2["input"][lead2:lead2 + len(held)] == held
    assert full2["input"][lead2 + len(held)] == {"type": "message", "role": "assistant",
                                                  "content": "Hi! How can I help?"}
    cut = lead2 + len(held) + 1
    assert body2 == stateful_form(full2, cut, "resp_s1")
    assert [text_of(i) for i in body2["input"]] == ["What did I say first?"]
    assert list(body2)[:5] == ["model", "max_output_tokens", "instructions", "previous_response_id", "input"]
    assert_valid(RESPONSES, body2)
    assert compiled(c, conv, t2) == second, "sealed: the same bytes again"

    # The estimate counts what the provider holds from the recorded usage.
    e = explain(c, conv, t2)
    tokenizer = e["estimate"]["window"]["tokenizer"]
    instructions1 = c.execute("SELECT prompt.count_tokens(%s, %s)", (body1["instructions"], tokenizer)).fetchone()[0]
    assert e["stateful"] == {"previous_response_id": "resp_s1", "cut": cut, "held_tokens": 520 - instructions1}
    held_block = [b for b in e["estimate"]["blocks"] if b["block"] == "held"]
    assert held_block == [{"block": "held", "role": None, "tokens": 520 - instructions1, "floor_unmet": False}]
    assert e["estimate"]["total"] > 520 - instructions1
    estimated = record(c, conv, t2, answer("You said hello.", "resp_s2"))["estimated_input_tokens"]
    assert estimated == e["estimate"]["total"]
    total = c.execute("SELECT sum(tokens) FILTER (WHERE block = 'total') FROM prompt.estimate_turn(%s, %s)",
                      (conv, t2)).fetchone()[0]
    assert total in (None, e["estimate"]["total"])

    # A third turn chains to the second's response.
    t3 = turn(c, conv, "Thanks.")
    assert json.loads(compiled(c, conv, t3))["previous_response_id"] == "resp_s2"


def test_the_chain_falls_back_to_the_full_body_when_it_is_broken(sdb):
    c = sdb
    # No id to chain to: a previous turn compiled but never answered.
    conv = conversation(c)
    t1 = turn(c, conv, "Hello there.")
    compiled(c, conv, t1)
    t2 = turn(c, conv, "Anyone?")
    body = json.loads(compiled(c, conv, t2))
    assert "previous_response_id" not in body and body == stateful_form(full(c, conv, t2), 0)
    assert "Hello there." in json.dumps(body["input"]), "the full transcript"

    # Another model than the one the response answered.
    conv = conversation(c)
    t1 = turn(c, conv, "Hello there.")
    compiled(c, conv, t1)
    record(c, conv, t1, answer("Hi.", "resp_m1"))
    t2 = turn(c, conv, "Look at this.", model=OTHER)
    body = json.loads(compiled(c, conv, t2))
    assert "previous_response_id" not in body and body == stateful_form(full(c, conv, t2), 0)

    # A previous request that was not stateful (its system text is in the provider's state).
    conv = conversation(c)
    t1 = turn(c, conv, "Hello there.", options="{}")
    compiled(c, conv, t1)
    record(c, conv, t1, answer("Hi.", "resp_n1"))
    t2 = turn(c, conv, "Go on.")
    assert "previous_response_id" not in json.loads(compiled(c, conv, t2))

    # A rewritten turn: what the provider holds is no longer the transcript.
    conv = conversation(c)
    t1 = turn(c, conv, "Hello there.")
    compiled(c, conv, t1)
    record(c, conv, t1, answer("Hi.", "resp_r1"))
    c.execute("BEGIN")
    c.execute("SET LOCAL pgprompt.allow_history_rewrite = on")
    c.execute("UPDATE prompt.turns SET prompt = 'Hello, rewritten.' WHERE id = %s", (t1,))
    c.execute("COMMIT")
    t2 = turn(c, conv, "Go on.")
    body = json.loads(compiled(c, conv, t2))
    assert "previous_response_id" not in body
    assert "Hello, rewritten." in json.dumps(body)

    # A chain the window cannot hold: the provider's context would overflow it.
    conv = conversation(c)
    t1 = turn(c, conv, "Hello there.")
    compiled(c, conv, t1)
    window = c.execute("SELECT coalesce(hard_window, advisory_window) FROM prompt.models WHERE name = %s", (MODEL,)).fetchone()[0]
    record(c, conv, t1, answer("Hi.", "resp_w1", usage=(window, 10)))
    t2 = turn(c, conv, "Go on.")
    assert "previous_response_id" not in json.loads(compiled(c, conv, t2))


def a_chained_run(c, rid):
    """A stateful turn answered as `rid`, then a run chained to it: the conversation, the
    turn, the run, and the run's first request as sent."""
    conv = conversation(c)
    t1 = turn(c, conv, "Hello there.")
    compiled(c, conv, t1)
    record(c, conv, t1, answer("Hi.", rid))
    run = turn(c, conv, "What's the weather in Lyon?", mode="run")
    return conv, t1, run, compiled(c, conv, run)


def test_a_stateful_run_extends_its_first_request_and_the_next_turn_chains_to_its_answer(sdb):
    c = sdb
    conv, _, run, first = a_chained_run(c, "resp_a1")
    body = json.loads(first)
    assert body["previous_response_id"] == "resp_a1"
    assert [text_of(i) for i in body["input"]] == ["What's the weather in Lyon?"]
    assert [t["name"] for t in body["tools"]] == ["get_weather"]
    assert_valid(RESPONSES, body)

    step = record(c, conv, run, sdk("responses", fixture("responses")))
    assert step["step"] == 1
    results = json.dumps([{"call_id": CALL_IDS["responses"], "content": '{"temp_c": 15}'}])
    c.execute("SELECT prompt.record_tool_results(%s, %s, %s)", (conv, run, results))
    continued = compiled(c, conv, run)
    # Every request of the turn extends the one before it, byte for byte.
    assert continued.startswith(first[:first.index("],\"tools\":")]), "the first request is a prefix of the continuation"
    cont = json.loads(continued)
    assert cont["previous_response_id"] == "resp_a1"
    assert [i["type"] for i in cont["input"][1:]] == ["reasoning", "message", "function_call", "function_call_output"]
    assert_valid(RESPONSES, cont)
    final = answer("Lyon is 15 °C.", "resp_a2")
    record(c, conv, run, final)

    # The next turn holds the run: it sends only its own words.
    t3 = turn(c, conv, "Thanks.")
    body3 = json.loads(compiled(c, conv, t3))
    assert body3["previous_response_id"] == "resp_a2"
    assert [text_of(i) for i in body3["input"]] == ["Thanks."]


def test_a_stateful_runs_requests_are_reported_from_the_layouts_they_stored(sdb):
    """A stateful turn sends its seal's chained form: its seal stores that request's
    layout (its frame written again, the elements before its cut left out), and each
    continuation the layout of the chained form it sends. The report reads them, a
    turn chained to the one before and one that is not, compiling none again, and reads
    them as compiling them again does (issue 61: it compiled every stateful request)."""
    from test_cache_report import as_replica
    from test_clearing import report_rows, reported_from_layouts
    c = sdb
    conv, t1, run, first = a_chained_run(c, "resp_l1")
    assert json.loads(first)["previous_response_id"] == "resp_l1"
    results = json.dumps([{"call_id": CALL_IDS["responses"], "content": '{"temp_c": 15}'}])
    for n in (1, 2):
        step = copy.deepcopy(fixture("responses"))
        step["id"] = f"resp_step{n}"
        record(c, conv, run, sdk("responses", step))
        c.execute("SELECT prompt.record_tool_results(%s, %s, %s)", (conv, run, results))
        cont = json.loads(compiled(c, conv, run))
        assert cont["previous_response_id"] == "resp_l1" and "instructions" in cont, n
    stored = c.execute("SELECT n, sent_layout IS NOT NULL FROM prompt.rounds WHERE turn_id = %s ORDER BY n",
                       (run,)).fetchall()
    assert stored == [(1, True), (2, True)], stored
    rows = sorted([(t1, 0), (run, 0), (run, 1), (run, 2)])
    assert c.execute("SELECT count(*) FROM prompt.verify_seals(%s)", (conv,)).fetchone()[0] == 0, \
        "each seal's layout reads as its text sent"
    reported_from_layouts(c, conv, run, 3, rows=rows)
    # Read from their texts (as seals written before 0.6 are), the same report.
    laid = report_rows(c, conv)
    as_replica(c, "UPDATE prompt.seals SET layout = NULL WHERE conversation_id = %s", (conv,))
    assert report_rows(c, conv) == laid


def test_stateful_is_a_responses_option_that_needs_stored_responses(sdb):
    c = sdb
    conv = conversation(c)
    for model, options, message in [
        ("claude-sonnet-5", STATEFUL, "the anthropic wire keeps no conversation state"),
        (MODEL, '{"stateful": true, "store": false}', "stateful needs store true or unset"),
        (MODEL, '{"stateful": "yes"}', "stateful must be true or false"),
    ]:
        c.execute("BEGIN")
        with pytest.raises(Exception) as e:
            turn(c, conv, "x", model=model, options=options)
        c.execute("ROLLBACK")
        assert e.value.sqlstate == "22023"
        assert e.value.diag.message_primary.startswith("request_options_invalid: ")
        assert message in e.value.diag.message_primary
        assert "/request_options/stateful" in e.value.diag.message_primary


def test_an_answer_edited_since_it_was_recorded_is_sent_in_a_full_body(sdb):
    """Seed 003 (issue 41, item 5): the provider holds the answer as it gave it. An answer
    edited since it was recorded — the previous turn's, or an older one the previous
    request sent — breaks the chain: the next turn sends the full body, with the edit."""
    c = sdb
    conv = conversation(c)
    t1 = turn(c, conv, "Hello there.")
    compiled(c, conv, t1)
    record(c, conv, t1, answer("Hi! How can I help?", "resp_e1"))
    c.execute("UPDATE prompt.turns SET content = 'Hi, edited.' WHERE id = %s", (t1,))
    t2 = turn(c, conv, "Go on.")
    body2 = json.loads(compiled(c, conv, t2))
    assert "previous_response_id" not in body2
    assert [text_of(i) for i in body2["input"] if i.get("role") == "assistant"] == ["Hi, edited."]
    assert body2 == stateful_form(full(c, conv, t2), 0)
    assert_valid(RESPONSES, body2)

    # t2's full request sent the edit; the chain to its answer holds, until that older
    # answer is edited again.
    record(c, conv, t2, answer("Going on.", "resp_e2"))
    t3 = turn(c, conv, "And?")
    assert json.loads(compiled(c, conv, t3))["previous_response_id"] == "resp_e2"
    # t1's answer was sent by t2's seal: edited again on purpose only.
    with c.transaction():
        c.execute("SET LOCAL pgprompt.allow_history_rewrite = on")
        c.execute("UPDATE prompt.turns SET content = 'Hi, edited twice.' WHERE id = %s", (t1,))
    t4 = turn(c, conv, "Still there?")
    body4 = json.loads(compiled(c, conv, t4))
    assert "previous_response_id" not in body4
    assert "Hi, edited twice." in [text_of(i) for i in body4["input"]]


def test_an_in_turn_summary_shrinks_a_chained_run(sdb):
    """Seed 000/003 (issue 41, item 5): a chained run sends its seed and rounds as input
    after the previous response's id; an in-turn summary replaces them there as in a
    full body, so a run that outgrew the window compiles again once it arrives."""
    c = sdb
    c.execute("UPDATE prompt.models SET hard_window = 3000, advisory_window = NULL WHERE name = %s", (MODEL,))
    conv = conversation(c)
    t1 = turn(c, conv, "Hello there.")
    compiled(c, conv, t1)
    record(c, conv, t1, answer("Hi.", "resp_m1", usage=(200, 5)))
    run = turn(c, conv, "What's the weather in Lyon?", mode="run")
    assert json.loads(compiled(c, conv, run))["previous_response_id"] == "resp_m1"
    record(c, conv, run, sdk("responses", fixture("responses")))
    big = json.dumps({"hourly": ["15 °C, light wind from the north-west"] * 400})
    results = json.dumps([{"call_id": CALL_IDS["responses"], "content": big}])
    c.execute("SELECT prompt.record_tool_results(%s, %s, %s)", (conv, run, results))
    with pytest.raises(Exception) as e:
        compiled(c, conv, run)
    assert e.value.sqlstate == "54000", e.value

    c.execute("UPDATE prompt.turns SET summary = 'Lyon: 15 °C, light wind.', summary_round = 2 WHERE id = %s", (run,))
    body = json.loads(compiled(c, conv, run))
    assert body["previous_response_id"] == "resp_m1"
    assert [text_of(i) for i in body["input"]] == ["[Summary of the earlier rounds]\nLyon: 15 °C, light wind."]
    assert_valid(RESPONSES, body)
    est = explain(c, conv, run)["estimate"]
    assert est["total"] <= 3000, est
