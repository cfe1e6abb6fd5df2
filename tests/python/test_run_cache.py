"""Cache breakpoints inside a run: what a continuation marks on the
rounds it appends, through the response loop on the three wires that take marks.

Anthropic: a round of twelve parallel calls adds 24 blocks, more than the 20 the
provider looks back from the request-level marker; the round carries one intermediate
breakpoint the previous request's end reaches, so the next request still reads the whole
request before it (checked under the provider's rules as tests/python/cache_rules.py
states them, and against the same request without that mark). OpenAI's explicit
breakpoints: every round closes on a marked result. Every request of the run extends the
one before it byte for byte, and validates against the SDK's request type."""
import copy
import json

import pytest

import cache_rules
from cache_rules import Provider
from conftest import make_database
from test_cache_report import counter
from test_response_loop import TOOLS, final_response as final, fixture, sdk
from test_wire_types import ANTHROPIC, CHAT, RESPONSES, assert_valid

WS, ADA, LARK = ("00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-000000000001",
                 "00000000-0000-4000-8000-000000000002")
MODELS = {"anthropic": ("claude-run-cache", "claude-sonnet-5", "cl100k_base"),
          "chat": ("gpt-run-cache-chat", "gpt-6-sol", "o200k_base"),
          "responses": ("gpt-run-cache-responses", "gpt-6-sol", "o200k_base")}


@pytest.fixture(scope="module")
def db():
    c = make_database("pgprompt_run_cache")
    for wire, (name, profile, tokenizer) in MODELS.items():
        # The shipped profile with a minimum cacheable prefix the test's prompts reach.
        c.execute("CREATE TEMP TABLE p AS SELECT * FROM prompt.model_profiles WHERE name = %s", (profile,))
        c.execute("UPDATE p SET name = %s, min_cache_tokens = 50, shipped = false", (name,))
        c.execute("INSERT INTO prompt.model_profiles SELECT * FROM p")
        c.execute("DROP TABLE p")
        c.execute("INSERT INTO prompt.models (name, wire, tokenizer, advisory_window, max_output_tokens, profile) "
                  "VALUES (%s, %s, %s, 200000, 2048, %s)", (name, wire, tokenizer, name))
    yield c
    c.close()


def run_turn(c, wire):
    conv = str(c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) "
                         "VALUES (%s, %s, %s) RETURNING id", (WS, LARK, ADA)).fetchone()[0])
    turn = str(c.execute(
        "INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model, mode, tools) "
        "VALUES (%s, 'reply', %s, 'The weather in every city of the list, please.', %s, 'run', %s) RETURNING id",
        (conv, ADA, MODELS[wire][0], TOOLS)).fetchone()[0])
    return conv, turn


def compiled(c, conv, turn):
    return c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]


def calls_response(wire, ids):
    """The model's response asking for `ids`, one call each (in parallel when several)."""
    body = copy.deepcopy(fixture(wire))
    if wire == "anthropic":
        body["content"] = [{"type": "tool_use", "id": i, "name": "get_weather", "input": {"city": f"City {i}"}}
                           for i in ids]
        body["id"] = f"msg_{ids[0]}"
    elif wire == "chat":
        call = body["choices"][0]["message"]["tool_calls"][0]
        body["choices"][0]["message"]["tool_calls"] = [
            dict(copy.deepcopy(call), id=i, function={"name": "get_weather", "arguments": json.dumps({"city": i})})
            for i in ids]
        body["id"] = f"chatcmpl_{ids[0]}"
    else:
        call = next(o for o in body["output"] if o["type"] == "function_call")
        body["output"] = [dict(copy.deepcopy(call), id=f"fc_{i}", call_id=i, arguments=json.dumps({"city": i}))
                          for i in ids]
        body["id"] = f"resp_{ids[0]}"
    return sdk(wire, body)


def round_trip(c, conv, turn, wire, ids):
    c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, turn, json.dumps(calls_response(wire, ids))))
    results = [{"call_id": i, "content": json.dumps({"city": i, "temp_c": 15})} for i in ids]
    c.execute("SELECT prompt.record_tool_results(%s, %s, %s)", (conv, turn, json.dumps(results)))
    return compiled(c, conv, turn)


def run(c, wire, rounds):
    """The run's requests: the sealed first one, then one after each round of `rounds`
    parallel calls."""
    conv, turn = run_turn(c, wire)
    bodies = [compiled(c, conv, turn)]
    n = 0
    for k in rounds:
        bodies.append(round_trip(c, conv, turn, wire, [f"call_{wire}_{n + j}" for j in range(k)]))
        n += k
    return conv, turn, bodies


LIST = {"anthropic": "messages", "chat": "messages", "responses": "input"}


def assert_each_extends_the_last(bodies, wire):
    """Byte for byte: each request, up to where its list closes, starts the next one."""
    key = f'"{LIST[wire]}":['
    for before, after in zip(bodies, bodies[1:]):
        start = before.index(key) + len(key) - 1
        end = json.JSONDecoder().raw_decode(before, start)[1]
        assert after.startswith(before[:end - 1] + ","), "each request extends the one before it"


def marks(message):
    content = message.get("content")
    return [i for i, b in enumerate(content) if isinstance(b, dict) and "cache_control" in b] \
        if isinstance(content, list) else []


def test_a_round_of_twelve_parallel_calls_carries_the_breakpoint_the_lookback_needs(db):
    c = db
    conv, turn, bodies = run(c, "anthropic", [1, 12, 1])
    parsed = [json.loads(b) for b in bodies]
    for p in parsed:
        assert_valid(ANTHROPIC, p)
    assert "cache_control" not in parsed[0], "the sealed first request carries no request-level marker"
    assert all(p["cache_control"] == {"type": "ephemeral"} for p in parsed[1:])
    # The rounds' messages: round 1 (call, result), round 2 (12 calls, 12 results), round 3.
    sealed = len(parsed[0]["messages"])
    assert [marks(m) for m in parsed[1]["messages"][sealed:]] == [[], []]
    # Round 1 ends at the block of its result; 19 blocks on is the 7th result of round 2
    # (12 calls, then results): its cache_control, and no other in the rounds.
    assert [marks(m) for m in parsed[2]["messages"][sealed:]] == [[], [], [], [6]]
    assert [marks(m) for m in parsed[3]["messages"][sealed:]] == [[], [], [], [6], [], []]
    assert_each_extends_the_last(bodies, "anthropic")
    # Under the provider's rules each continuation reads the whole request before it;
    # without the intermediate mark the request after the big round would read only the
    # sealed prefix.
    count = counter(c)
    sent = [r[0] for r in c.execute(
        "SELECT extract(epoch FROM sealed_at)::float8 FROM prompt.seals WHERE conversation_id = %s", (conv,))]
    sent += [r[0] for r in c.execute(
        "SELECT DISTINCT extract(epoch FROM sent_at)::float8 AS t FROM prompt.rounds "
        "WHERE conversation_id = %s ORDER BY t", (conv,))]
    provider = Provider(minimum=50)
    blocks = [cache_rules.Blocks(p, count) for p in parsed]
    expected = [provider.send(b, t) for b, t in zip(blocks, sent)]
    for before, now in zip(blocks[1:], expected[2:]):
        assert now["predicted_cache_read"] == before.total
    stripped = copy.deepcopy(parsed[2])
    del stripped["messages"][sealed + 3]["content"][6]["cache_control"]
    without = Provider(minimum=50)
    without.send(blocks[0], sent[0])
    without.send(blocks[1], sent[1])
    assert without.send(cache_rules.Blocks(stripped, count), sent[2])["predicted_cache_read"] < blocks[1].total
    # The cache report predicts what the rules say.
    rows = c.execute("SELECT input_tokens, predicted_cache_read, predicted_cache_write, predicted_uncached "
                     "FROM prompt.cache_report(%s)", (conv,)).fetchall()
    assert [dict(zip(("input_tokens", "predicted_cache_read", "predicted_cache_write", "predicted_uncached"), r))
            for r in rows] == expected


@pytest.mark.parametrize("wire", ["chat", "responses"])
def test_openai_explicit_breakpoints_close_every_round(db, wire):
    c = db
    conv, turn, bodies = run(c, wire, [1, 2, 1])
    parsed = [json.loads(b) for b in bodies]
    for p in parsed:
        assert_valid(CHAT if wire == "chat" else RESPONSES, p)
        assert p["prompt_cache_options"]["mode"] == "explicit"
    items = parsed[-1][LIST[wire]][len(parsed[0][LIST[wire]]):]
    mark = {"mode": "explicit"}
    if wire == "chat":
        results = [m for m in items if m["role"] == "tool"]
        content = [m["content"] for m in results]
        # Every result a list of one text part (one form, marked or not: the next turn's
        # history holds the same prefix); the last result of each round marked.
        assert all(isinstance(x, list) and len(x) == 1 for x in content)
        assert ["prompt_cache_breakpoint" in x[0] for x in content] == [True, False, True, True]
        assert all(x[0]["prompt_cache_breakpoint"] == mark for x in content if "prompt_cache_breakpoint" in x[0])
        assert json.loads(content[1][0]["text"])["city"] == "call_chat_1"
    else:
        results = [m for m in items if m["type"] == "function_call_output"]
        outputs = [m["output"] for m in results]
        assert all(isinstance(x, list) and len(x) == 1 for x in outputs)
        assert ["prompt_cache_breakpoint" in x[0] for x in outputs] == [True, False, True, True]
        assert all(x[0] == {"type": "input_text", "text": x[0]["text"], "prompt_cache_breakpoint": mark}
                   for x in outputs if "prompt_cache_breakpoint" in x[0])
    assert_each_extends_the_last(bodies, wire)
    # Each continuation reads from cache everything the request before it held.
    rows = c.execute("SELECT input_tokens, predicted_cache_read FROM prompt.cache_report(%s)", (conv,)).fetchall()
    assert [r[1] for r in rows[2:]] == [r[0] for r in rows[1:-1]]


def reply_turn(c, conv, wire, prompt, mode="direct_reply"):
    return str(c.execute(
        "INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model, mode, tools) "
        "VALUES (%s, 'reply', %s, %s, %s, %s, %s) RETURNING id",
        (conv, ADA, prompt, MODELS[wire][0], mode, TOOLS if mode == "run" else None)).fetchone()[0])


def marked_items(body, wire):
    """The indexes of the request's items that carry an explicit breakpoint."""
    return [i for i, m in enumerate(body[LIST[wire]]) if "prompt_cache_breakpoint" in json.dumps(m)]


@pytest.mark.parametrize("wire", ["chat", "responses"])
def test_openai_explicit_the_next_turn_reads_the_whole_request_before_it(db, wire):
    """OpenAI caches nothing it is not told to, so a sealed request marks
    its last input part besides its history, and the next turn's request, which holds it
    whole, reads all of it (before, only up to the earlier request's history mark). A
    history entry that ends in a run's rounds is marked on its last tool output, as the
    run's own continuations are, not back on its prompt."""
    c = db
    conv = str(c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) "
                         "VALUES (%s, %s, %s) RETURNING id", (WS, LARK, ADA)).fetchone()[0])
    words = " ".join(f"word{i}" for i in range(120))
    first = reply_turn(c, conv, wire, f"First question: {words}")
    body1 = json.loads(compiled(c, conv, first))
    assert marked_items(body1, wire)[-1] == len(body1[LIST[wire]]) - 1, "the request's last input part is marked"
    c.execute("UPDATE prompt.turns SET content = %s WHERE id = %s", (f"First answer: {words}", first))
    second = reply_turn(c, conv, wire, f"Second question: {words}")
    body2 = json.loads(compiled(c, conv, second))
    for b in (body1, body2):
        assert_valid(CHAT if wire == "chat" else RESPONSES, b)
    rows = c.execute("SELECT input_tokens, predicted_cache_read FROM prompt.cache_report(%s)", (conv,)).fetchall()
    assert rows[1][1] == rows[0][0], rows
    # A run in history: its last round's tool output carries the history mark.
    c.execute("UPDATE prompt.turns SET content = 'ok' WHERE id = %s", (second,))
    run_id = reply_turn(c, conv, wire, "Now the weather, please.", mode="run")
    compiled(c, conv, run_id)
    # Two rounds: the first one's result is marked in the run's requests and not in
    # the next turn's history.
    round_trip(c, conv, run_id, wire, [f"call_{wire}_h1"])
    round_trip(c, conv, run_id, wire, [f"call_{wire}_h2"])
    c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, run_id, json.dumps(final(wire))))
    # The next run: the same tools first, so the run before it is a prefix it can read.
    after = reply_turn(c, conv, wire, f"Third question: {words}", mode="run")
    body3 = json.loads(compiled(c, conv, after))
    items = body3[LIST[wire]]
    outputs = [i for i, m in enumerate(items) if m.get("role") == "tool" or m.get("type") == "function_call_output"]
    assert outputs and outputs[-1] in marked_items(body3, wire), (outputs, marked_items(body3, wire))
    # It reads the run's last request whole: its rounds are the same prefix in history.
    rows = c.execute("SELECT input_tokens, predicted_cache_read FROM prompt.cache_report(%s)", (conv,)).fetchall()
    assert rows[-1][1] >= rows[-2][0], rows
