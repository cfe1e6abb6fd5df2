"""The response loop on every wire: compile, post (here: a response built with the SDK's
own response model), record_response, record_tool_results, compile the continuation —
whose body is compared with a golden file — then the final answer; a direct reply's
answer; the refusals; the calibration view and token_margin_auto.

Responses come from tests/fixtures/responses/*.json, validated by (and dumped from) the
SDKs' models: anthropic.types.Message, openai ChatCompletion and Response, google-genai
GenerateContentResponse, and botocore's ConverseResponse shape. GOLDEN_UPDATE=1 rewrites tests/fixtures/response_loop/*.json.
"""
import copy
import json
import os
import statistics

import psycopg
import pytest
from anthropic.types import Message
from google.genai import types as genai
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from conftest import ROOT, make_database
from converse_types import assert_valid_converse, converse_response
from test_wire_types import ANTHROPIC, CHAT, RESPONSES, assert_valid, assert_valid_gemini

NAME = "pgprompt_response_loop"
WS, ADA, LARK = ("00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-000000000001",
                 "00000000-0000-4000-8000-000000000002")
MODELS = {"anthropic": "claude-sonnet-5", "chat": "gpt-5.5", "responses": "gpt-5.6-sol", "gemini": "gemini-3.5-flash",
          "converse": "us.anthropic.claude-sonnet-5-v1:0"}
CALL_IDS = {"anthropic": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "chat": "call_def456", "responses": "call_def456",
            "gemini": "call_lyon_1", "converse": "tooluse_lyon_1"}
TOOLS = json.dumps([{"name": "get_weather", "description": "Current weather for a city.",
                     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}])
GOLDEN = ROOT / "tests/fixtures/response_loop"


def fixture(wire: str) -> dict:
    return json.loads((ROOT / f"tests/fixtures/responses/{wire}.json").read_text())


def sdk(wire: str, body: dict) -> dict:
    """The body as the SDK's response model reads and writes it."""
    if wire == "anthropic":
        return Message.model_validate(body).model_dump(mode="json", exclude_none=True)
    if wire == "chat":
        return ChatCompletion.model_validate(body).model_dump(mode="json", exclude_none=True)
    if wire == "responses":
        return Response.model_validate(body).model_dump(mode="json", exclude_none=True)
    if wire == "converse":
        # botocore has no response model to dump: the body, checked against ConverseResponse.
        return converse_response(body)
    return genai.GenerateContentResponse.model_validate(body).model_dump(mode="json", exclude_none=True, by_alias=True)


def tool_call_response(wire: str) -> dict:
    return sdk(wire, fixture(wire))


def final_response(wire: str) -> dict:
    """The model's last step: text only, a response id of its own."""
    b = copy.deepcopy(fixture(wire))
    text = "Lyon is 15 °C and cloudy."
    if wire == "anthropic":
        b.update(id="msg_final", content=[{"type": "text", "text": text}], stop_reason="end_turn")
    elif wire == "chat":
        b["id"] = "chatcmpl-final"
        b["choices"][0].update(finish_reason="stop", message={"role": "assistant", "content": text})
    elif wire == "responses":
        b["id"] = "resp_final"
        b["output"] = [{"type": "message", "id": "msg_final", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}]
    elif wire == "converse":
        b["output"]["message"]["content"] = [{"text": text}]
        b["stopReason"] = "end_turn"
    else:
        b["responseId"] = "gemini-final"
        b["candidates"][0]["content"]["parts"] = [{"text": text}]
    return sdk(wire, b)


@pytest.fixture(scope="module")
def rdb():
    c = make_database(NAME)
    yield c
    c.close()


def new_conversation(c, wire: str, conv_id: str = None) -> str:
    conv = c.execute("INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) "
                     "VALUES (coalesce(%s::uuid, gen_random_uuid()), %s, %s, %s) RETURNING id",
                     (conv_id, WS, LARK, ADA)).fetchone()[0]
    c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) VALUES (%s, 'message', 'user', %s, %s)",
              (conv, ADA, f"We are testing the {wire} wire."))
    return str(conv)


def new_turn(c, conv: str, wire: str, mode: str = "run", prompt: str = "What's the weather in Paris, then Lyon?") -> str:
    return str(c.execute(
        "INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, mode, model, tools, created_at) "
        "VALUES (%s, 'reply', %s, %s, %s, %s, %s, '2026-12-01 10:00+00') RETURNING id",
        (conv, ADA, prompt, mode, MODELS[wire], TOOLS if mode == "run" else None)).fetchone()[0])


def record(c, conv, turn, response) -> dict:
    return c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, turn, json.dumps(response))).fetchone()[0]


def golden(name: str, text: str):
    path = GOLDEN / f"{name}.json"
    pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("GOLDEN_UPDATE"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(pretty)
    assert path.exists(), f"{path} is missing (GOLDEN_UPDATE=1 writes it)"
    assert pretty == path.read_text(), f"{name}: the continuation differs from {path}"


@pytest.mark.parametrize("wire", ["anthropic", "chat", "responses", "gemini", "converse"])
def test_the_loop_on_every_wire(rdb, wire):
    c = rdb
    # A fixed id: the body carries it as prompt_cache_key on the OpenAI wires.
    conv = new_conversation(c, wire, f"00000000-0000-4000-8000-0000000e10{list(MODELS).index(wire):02x}")
    turn = new_turn(c, conv, wire)
    first = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
    estimated = c.execute("SELECT (prompt.explain_turn(%s, %s) -> 'estimate' ->> 'total')::int", (conv, turn)).fetchone()[0]

    step = record(c, conv, turn, tool_call_response(wire))
    assert step["step"] == 1 and step["recorded"] == "round" and step["shape"] == wire
    assert [t["id"] for t in step["tool_calls"]] == [CALL_IDS[wire]]
    assert step["tool_calls"][0]["input"]["city"] == "Lyon"
    assert step["estimated_input_tokens"] == estimated
    assert record(c, conv, turn, tool_call_response(wire)) == step, "recording the same response again writes nothing"
    assert c.execute("SELECT count(*) FROM prompt.rounds WHERE turn_id = %s", (turn,)).fetchone()[0] == 1

    results = json.dumps([{"call_id": CALL_IDS[wire], "content": '{"temp_c": 15, "sky": "cloudy"}'}])
    assert c.execute("SELECT prompt.record_tool_results(%s, %s, %s)", (conv, turn, results)).fetchone()[0] == 1

    continued = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
    golden(f"{wire}_continuation", continued)
    # The continuation, thinking and reasoning replayed, is still a valid request.
    if wire == "gemini":
        assert_valid_gemini(json.loads(continued))
    elif wire == "converse":
        assert_valid_converse(json.loads(continued))
    else:
        assert_valid({"anthropic": ANTHROPIC, "chat": CHAT, "responses": RESPONSES}[wire], json.loads(continued))
    list_key = {"anthropic": "messages", "chat": "messages", "responses": "input", "gemini": "contents",
                "converse": "messages"}[wire]
    sealed_list = json.dumps(json.loads(first)[list_key], separators=(",", ":"), ensure_ascii=False)[:-1]
    assert sealed_list in continued, "the sealed request is a prefix of the continuation's list"

    last = record(c, conv, turn, final_response(wire))
    assert last["step"] == 2 and last["tool_calls"] == []
    usage = c.execute("SELECT billed_input_tokens, estimated_input_tokens, stop_reason FROM prompt.responses "
                      "WHERE turn_id = %s ORDER BY step", (turn,)).fetchall()
    assert len(usage) == 2 and all(u[0] > 0 and u[1] > 0 for u in usage)


def test_a_direct_reply_records_its_answer(rdb):
    c = rdb
    conv = new_conversation(c, "anthropic")
    turn = new_turn(c, conv, "anthropic", mode="direct_reply", prompt="Hello?")
    c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
    r = record(c, conv, turn, final_response("anthropic"))
    assert (r["step"], r["recorded"]) == (0, "answer")
    assert c.execute("SELECT content FROM prompt.turns WHERE id = %s", (turn,)).fetchone()[0] == "Lyon is 15 °C and cloudy."
    # The next turn reads it as Lark's answer.
    nxt = new_turn(c, conv, "anthropic", mode="direct_reply", prompt="Thanks.")
    body = c.execute("SELECT prompt.preview_turn(%s, %s)", (conv, nxt)).fetchone()[0]
    assert any(m["role"] == "assistant" and m["content"][0]["text"] == "Lyon is 15 °C and cloudy." for m in body["messages"])


def refused(c, sql, args, pointer):
    with pytest.raises(psycopg.Error) as e:
        c.execute(sql, args)
    assert e.value.sqlstate == "22023", e.value
    assert str(e.value).startswith("response_invalid:") and f" at {pointer}" in str(e.value), str(e.value)


def test_what_does_not_fit_is_refused_and_nothing_is_written(rdb):
    c = rdb
    conv = new_conversation(c, "chat")
    direct = new_turn(c, conv, "chat", mode="direct_reply", prompt="Hi")
    sql = "SELECT prompt.record_response(%s, %s, %s)"
    refused(c, sql, (conv, direct, json.dumps(final_response("chat"))), "/")  # never compiled
    c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, direct))
    refused(c, sql, (conv, direct, json.dumps({"hello": "world"})), "/")  # no known shape
    refused(c, sql, (conv, direct, json.dumps(tool_call_response("chat"))), "/choices/0/message/tool_calls/0")
    bad = tool_call_response("chat")
    bad["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "not json"
    refused(c, sql, (conv, direct, json.dumps(bad)), "/choices/0/message/tool_calls/0/function/arguments")
    assert c.execute("SELECT content IS NULL FROM prompt.turns WHERE id = %s", (direct,)).fetchone()[0]
    run = new_turn(c, conv, "chat")
    c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, run))
    record(c, conv, run, tool_call_response("chat"))
    # The calls have no results yet: the next response cannot be recorded.
    refused(c, sql, (conv, run, json.dumps(final_response("chat"))), "/")
    assert c.execute("SELECT count(*) FROM prompt.responses WHERE turn_id = %s", (run,)).fetchone()[0] == 1
    # The same response id for another turn.
    other = new_turn(c, conv, "chat")
    c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, other))
    refused(c, sql, (conv, other, json.dumps(tool_call_response("chat"))), "/id")


def percentile_cont(values, q):
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo, hi = int(pos), min(int(pos) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def test_calibration_and_token_margin_auto(rdb):
    c = rdb
    # Billed over estimated as a tokenizer differs (the fixtures' usage is no real count).
    conv, turn = c.execute("SELECT conversation_id, turn_id FROM prompt.responses LIMIT 1").fetchone()
    for step, billed in ((50, 1180), (51, 1240), (52, 1310)):
        c.execute("INSERT INTO prompt.responses (conversation_id, turn_id, step, shape, compiled_model, billed_input_tokens, "
                  "estimated_input_tokens) VALUES (%s, %s, %s, 'anthropic', 'claude-sonnet-5', %s, 1000)", (conv, turn, step, billed))
    rows = c.execute("SELECT compiled_model, billed_input_tokens::float8 / estimated_input_tokens FROM prompt.responses "
                     "WHERE billed_input_tokens IS NOT NULL").fetchall()
    by_model = {}
    for model, ratio in rows:
        # A ratio outside 0.1-10 is no tokenizer's difference: the view sets it aside.
        if 0.1 <= ratio <= 10:
            by_model.setdefault(model, []).append(ratio)
    view = {m: (n, med, p95) for m, n, med, p95 in c.execute("SELECT model, recorded, median_ratio, p95_ratio FROM prompt.model_calibration")}
    assert by_model
    assert set(view) == set(by_model) and "claude-sonnet-5" in view
    for m, ratios in by_model.items():
        n, med, p95 = view[m]
        assert n == len(ratios)
        assert med == pytest.approx(statistics.median(ratios)) and p95 == pytest.approx(percentile_cont(ratios, 0.95))

    c.execute("UPDATE prompt.models SET token_margin_auto = true WHERE name = 'claude-sonnet-5'")
    try:
        conv = new_conversation(c, "anthropic")
        turn = new_turn(c, conv, "anthropic", mode="direct_reply", prompt="Margin?")
        margin = lambda: c.execute("SELECT (prompt.explain_turn(%s, %s) -> 'estimate' -> 'window' ->> 'token_margin')::float8",  # noqa: E731
                                   (conv, turn)).fetchone()[0]
        expected = max(0.0, view["claude-sonnet-5"][2] - 1)
        assert margin() == pytest.approx(expected, rel=1e-6)
        c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
        # Frozen into the seal: more calibration data does not move a sealed turn's margin.
        c.execute("INSERT INTO prompt.responses (conversation_id, turn_id, step, shape, compiled_model, billed_input_tokens, "
                  "estimated_input_tokens) VALUES (%s, %s, 7, 'anthropic', 'claude-sonnet-5', 1000000, 1)", (conv, turn))
        assert margin() == pytest.approx(expected, rel=1e-6)
    finally:
        c.execute("UPDATE prompt.models SET token_margin_auto = false WHERE name = 'claude-sonnet-5'")
        c.execute("DELETE FROM prompt.responses WHERE step BETWEEN 50 AND 52")


def test_record_response_reads_what_the_compile_stored(rdb):
    """record_response never compiles the turn again. It takes the model and
    the estimate from the seal (the first request) or from the newest sent round (the
    request that carried it): in its transaction no table a compile reads (users,
    documents, models, memories, skills, workspaces) is scanned."""
    c = rdb
    conv = new_conversation(c, "anthropic")
    turn = new_turn(c, conv, "anthropic")
    c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
    first = c.execute("SELECT (prompt.explain_turn(%s, %s) -> 'estimate' ->> 'total')::int", (conv, turn)).fetchone()[0]

    def scans() -> dict:
        # The backend's counts not flushed yet (this transaction's, and maybe earlier ones'):
        # compared before and after, within one transaction.
        return dict(c.execute("SELECT relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables "
                              "WHERE schemaname = 'prompt' AND relname IN ('users', 'documents', 'models', 'memories', "
                              "'skills', 'workspaces')").fetchall())

    def recorded_without_a_compile(response) -> dict:
        c.execute("BEGIN")
        try:
            before = scans()
            r = record(c, conv, turn, response)
            after = scans()
        finally:
            c.execute("COMMIT")
        read = {t: n - before.get(t, 0) for t, n in after.items() if n != before.get(t, 0)}
        assert read == {}, f"record_response compiled the turn again: it read {read}"
        return r

    step = recorded_without_a_compile(tool_call_response("anthropic"))
    assert step["estimated_input_tokens"] == first
    results = json.dumps([{"call_id": CALL_IDS["anthropic"], "content": "15 C"}])
    c.execute("SELECT prompt.record_tool_results(%s, %s, %s)", (conv, turn, results))
    c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
    second = c.execute("SELECT (prompt.explain_turn(%s, %s) -> 'estimate' ->> 'total')::int", (conv, turn)).fetchone()[0]
    assert c.execute("SELECT sent_estimate FROM prompt.rounds WHERE turn_id = %s", (turn,)).fetchone()[0] == second
    last = recorded_without_a_compile(final_response("anthropic"))
    assert last["estimated_input_tokens"] == second > first


def statements_run(c, sql, args) -> list:
    """The statements a call runs inside it (auto_explain, its nested statements sent to
    the client as notices): each one's query text, in order."""
    seen = []
    handler = lambda d: seen.append(d.message_primary or "")
    c.execute("LOAD 'auto_explain'")
    c.execute("SET auto_explain.log_min_duration = 0")
    c.execute("SET auto_explain.log_nested_statements = on")
    c.execute("SET auto_explain.log_level = notice")
    c.add_notice_handler(handler)
    try:
        c.execute(sql, args).fetchone()
    finally:
        c.remove_notice_handler(handler)
        c.execute("SET auto_explain.log_min_duration = -1")
    texts = [m.split("Query Text:", 1)[1].strip() for m in seen if "Query Text:" in m]
    # The call itself is logged last, as the top-level statement.
    assert texts and texts[-1].startswith("SELECT prompt."), texts
    return texts[:-1]


def test_an_unsealed_compile_reads_in_at_most_six_statements(rdb):
    """An unsealed compile runs at most 6 statements, history's batches counted
    as one: the conversation with its seal's pointers, the turn and where history starts;
    the workspace, users and models (the profile's lookup inlined, no statement of its
    own); the answerer's documents, memory and skills; history's batches; their rounds."""
    c = rdb
    conv = new_conversation(c, "anthropic")
    for i in range(60):
        c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) "
                  "VALUES (%s, 'message', 'user', %s, %s)", (conv, ADA, f"Message {i}: " + "words " * 200))
        if i % 10 == 0:
            reply = new_turn(c, conv, "anthropic", mode="direct_reply")
            c.execute("UPDATE prompt.turns SET content = 'Noted.' WHERE id = %s", (reply,))
    turn = new_turn(c, conv, "anthropic", mode="direct_reply")
    ran = statements_run(c, "SELECT prompt.preview_turn(%s, %s)::text", (conv, turn))
    batches = [q for q in ran if "ORDER BY t.seq DESC LIMIT" in q]
    assert batches, ran
    counted = len(ran) - len(batches) + 1
    assert counted <= 6, "\n".join(ran)
    assert not any("model_profiles" in q and "prompt.models" not in q for q in ran), "the profile's lookup ran apart"


def test_history_reads_its_replies_rounds_with_their_batch(rdb):
    """History's rounds are read for the replies a batch holds, in one statement beside
    the batch (counted with history's batches), where the conversation has rounds at all:
    a conversation without a round reads none. Every reply's round reaches the body, a
    direct reply's too (one written before the rounds trigger refused it there)."""
    c = rdb
    conv = new_conversation(c, "anthropic")
    for i in range(3):
        c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) "
                  "VALUES (%s, 'message', 'user', %s, %s)", (conv, ADA, f"Question {i}."))
        run = new_turn(c, conv, "anthropic", mode="run")
        c.execute("INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results) VALUES (%s, %s, 1, %s, '[]')",
                  (conv, run, json.dumps([{"type": "text", "text": f"Working on question {i}."}])))
        c.execute("UPDATE prompt.turns SET content = %s WHERE id = %s", (f"Answer {i}.", run))
    direct = new_turn(c, conv, "anthropic", mode="direct_reply")
    c.execute("UPDATE prompt.turns SET content = 'Direct answer.' WHERE id = %s", (direct,))
    c.execute("SET session_replication_role = replica")
    try:
        c.execute("INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results) VALUES (%s, %s, 1, %s, '[]')",
                  (conv, direct, json.dumps([{"type": "text", "text": "An old round of a direct reply."}])))
    finally:
        c.execute("SET session_replication_role = origin")
    turn = new_turn(c, conv, "anthropic", mode="direct_reply")
    ran = statements_run(c, "SELECT prompt.preview_turn(%s, %s)::text", (conv, turn))
    body = c.execute("SELECT prompt.preview_turn(%s, %s)::text", (conv, turn)).fetchone()[0]
    assert all(f"Working on question {i}." in body for i in range(3)), body
    assert "An old round of a direct reply." in body, body
    history = [q for q in ran if "ORDER BY t.seq DESC LIMIT" in q or "r.turn_id = ANY" in q]
    assert any("r.turn_id = ANY" in q for q in history), ran
    counted = len(ran) - len(history) + 1
    assert counted <= 6, "\n".join(ran)
    # A conversation without a round asks for none, replies or not.
    plain = new_conversation(c, "anthropic")
    reply = new_turn(c, plain, "anthropic", mode="direct_reply")
    c.execute("UPDATE prompt.turns SET content = 'Noted.' WHERE id = %s", (reply,))
    ran = statements_run(c, "SELECT prompt.preview_turn(%s, %s)::text", (plain, new_turn(c, plain, "anthropic", mode="direct_reply")))
    assert not any("r.turn_id = ANY" in q for q in ran), ran


def test_a_sealed_compile_reads_its_conversation_seal_and_nodes_only(rdb):
    """A sealed compile_turn runs at most 2 statements — the conversation row
    with the seal's pointers (where no round was written since), then the body's nodes.
    In its transaction only those tables are scanned (and, within the first statement, the
    turn's row and its rounds for their existence): not its workspace, users, models or
    the answerer's rows. A run with rounds reads everything as before. A policy of the
    user's that hides the turn hides its sealed body too."""
    c = rdb
    conv = new_conversation(c, "anthropic")
    turn = new_turn(c, conv, "anthropic", mode="direct_reply")
    first = c.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn)).fetchone()[0]

    def scanned(sql, args) -> tuple:
        query = ("SELECT relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables "
                 "WHERE schemaname = 'prompt'")
        c.execute("BEGIN")
        try:
            before = dict(c.execute(query).fetchall())
            out = c.execute(sql, args).fetchone()[0]
            after = dict(c.execute(query).fetchall())
        finally:
            c.execute("COMMIT")
        return out, {t for t, n in after.items() if n != before.get(t, 0)}

    again, tables = scanned("SELECT prompt.compile_turn(%s, %s)::text", (conv, turn))
    assert again == first
    assert tables <= {"conversations", "seals", "turns", "rounds", "seal_nodes"}, tables
    assert "workspaces" not in tables and "users" not in tables, tables
    assert {"conversations", "seals", "seal_nodes"} <= tables, tables
    # A restrictive policy of the user's on prompt.turns (as a role it confines): the
    # sealed turn is not found, as on the full path.
    c.execute("DROP ROLE IF EXISTS sealed_reader")
    c.execute("CREATE ROLE sealed_reader")
    c.execute("GRANT USAGE ON SCHEMA prompt TO sealed_reader")
    c.execute("GRANT SELECT ON ALL TABLES IN SCHEMA prompt TO sealed_reader")
    c.execute("CREATE POLICY hide_replies ON prompt.turns AS RESTRICTIVE TO sealed_reader USING (kind <> 'reply')")
    try:
        c.execute("BEGIN")
        c.execute("SET LOCAL ROLE sealed_reader")
        with pytest.raises(psycopg.Error) as e:
            c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn))
        assert e.value.sqlstate == "P0002" and "does not exist" in str(e.value), e.value
    finally:
        c.execute("ROLLBACK")
        c.execute("DROP POLICY hide_replies ON prompt.turns")
        c.execute("DROP OWNED BY sealed_reader")
        c.execute("DROP ROLE sealed_reader")
    # A run with a round written since its seal is compiled from its rows, as before.
    run = new_turn(c, conv, "anthropic")
    c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, run))
    record(c, conv, run, tool_call_response("anthropic"))
    _, tables = scanned("SELECT prompt.compile_turn(%s, %s)::text", (conv, run))
    assert "turns" in tables, tables


def calls_and_results(wire: str, b: dict):
    """The call ids a body sends and the call ids it answers."""
    calls, results = [], []
    if wire in ("anthropic", "converse"):
        for m in b["messages"]:
            for p in m["content"] if isinstance(m["content"], list) else []:
                if wire == "anthropic":
                    if p.get("type") == "tool_use":
                        calls.append(p["id"])
                    if p.get("type") == "tool_result":
                        results.append(p["tool_use_id"])
                else:
                    if "toolUse" in p:
                        calls.append(p["toolUse"]["toolUseId"])
                    if "toolResult" in p:
                        results.append(p["toolResult"]["toolUseId"])
    elif wire == "chat":
        for m in b["messages"]:
            calls += [c["id"] for c in m.get("tool_calls") or []]
            if m["role"] == "tool":
                results.append(m["tool_call_id"])
    elif wire == "responses":
        calls = [i["call_id"] for i in b["input"] if i.get("type") == "function_call"]
        results = [i["call_id"] for i in b["input"] if i.get("type") == "function_call_output"]
    else:
        for m in b["contents"]:
            for p in m["parts"]:
                if "functionCall" in p:
                    calls.append(p["functionCall"].get("id") or p["functionCall"]["name"])
                if "functionResponse" in p:
                    results.append(p["functionResponse"].get("id") or p["functionResponse"]["name"])
    return calls, results


@pytest.mark.parametrize("wire", ["anthropic", "chat", "responses", "gemini", "converse"])
def test_a_round_waiting_for_its_results_is_never_sent_as_a_bare_call(rdb, wire):
    """D-s5-4 (issue 60): a Side taken between record_response (a tool call) and
    record_tool_results, and a new turn of the parent while the run waits, sent the call
    with no result (which anthropic, chat and converse refuse), and the Side's snapshot kept
    it so. Each now carries the round without its calls; a Side taken mid-round and
    compiled after the results arrive carries the call with its result."""
    c = rdb
    conv = new_conversation(c, wire)
    run = new_turn(c, conv, wire)
    c.execute("SELECT prompt.compile_turn(%s, %s)", (conv, run))
    record(c, conv, run, tool_call_response(wire))

    def side_turn():
        side = c.execute("INSERT INTO prompt.conversations (workspace_id, kind, parent_id, captured_turn_id) "
                         "VALUES (%s, 'side', %s, %s) RETURNING id::text", (WS, conv, run)).fetchone()[0]
        return side, new_turn(c, side, wire, prompt="Meanwhile: which city first?")

    early_side, early = side_turn()
    sibling = new_turn(c, conv, wire, prompt="Also, is it raining in Nice?")
    for where, turn in ((early_side, early), (conv, sibling)):
        body = json.loads(c.execute("SELECT prompt.compile_turn(%s, %s)::text", (where, turn)).fetchone()[0])
        calls, results = calls_and_results(wire, body)
        assert sorted(calls) == sorted(results), (where == conv, body)
    # The results arrive; a Side taken before them, compiled now, carries the call answered.
    late_side, late = side_turn()
    c.execute("SELECT prompt.record_tool_results(%s, %s, %s)",
              (conv, run, json.dumps([{"call_id": CALL_IDS[wire], "content": "15 C"}])))
    body = json.loads(c.execute("SELECT prompt.compile_turn(%s, %s)::text", (late_side, late)).fetchone()[0])
    calls, results = calls_and_results(wire, body)
    assert calls and sorted(calls) == sorted(results), body
