"""The property Citus push-down depends on (issue 29, docs/scale-out.md): every query a
compile path runs — the loader's, the seals', the response loop's and the triggers' —
reads a conversation-scoped table (the distributed ones of docs/citus.sql) only through
its distribution key, so each runs on one shard. Checked on a single node by reading
every plan the functions run (auto_explain, nested statements, at NOTICE level). And the
form force delegation needs (prompt_tx, docs/scale-out.md "In a transaction"): no compile
query of a conversation that is not a Side reads a distributed and a reference table in
one statement.

The one exception is documented: a model with token_margin_auto reads its calibration,
an aggregate over prompt.responses of every conversation (a distributed subplan on
Citus); the compile reads it for such a model only."""
import json
import re

import psycopg
import pytest

from conftest import make_database
from test_response_loop import CALL_IDS, TOOLS, final_response, sdk, fixture

WS, ADA, LARK = ("00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-000000000001",
                 "00000000-0000-4000-8000-000000000002")
# Distributed by (docs/citus.sql): the conversation's key.
KEYS = {"conversations": "id", "turns": "conversation_id", "rounds": "conversation_id",
        "seal_nodes": "conversation_id", "seals": "conversation_id", "seals_02": "conversation_id",
        "responses": "conversation_id"}


@pytest.fixture(scope="module")
def odb():
    c = make_database("pgprompt_one_shard")
    yield c
    c.close()


def scans(plan):
    """Every scan node of a plan (JSON), with the conditions it reads rows by."""
    # A ModifyTable node names its target; the rows it changes come from the scans below
    # it (an INSERT's VALUES carry the key and route by it).
    if "Relation Name" in plan and plan.get("Node Type") != "ModifyTable":
        conds = " ".join(str(plan.get(k, "")) for k in ("Index Cond", "Filter", "Recheck Cond", "Join Filter"))
        yield plan["Relation Name"], conds
    for sub in plan.get("Plans", []):
        yield from scans(sub)


def keyless(notices):
    """The (query, table) pairs where a distributed table is read without its key."""
    out = []
    for text in notices:
        if "plan:" not in text:
            continue
        doc = json.loads(text.split("plan:", 1)[1])
        for table, conds in scans(doc["Plan"]):
            key = KEYS.get(table)
            if key and not re.search(rf"\b{key} = ", conds):
                out.append((doc["Query Text"][:160], table))
    return out


# Reference tables (docs/citus.sql): every node holds them whole.
REFERENCE = {"users", "models", "model_profiles", "workspaces", "workspace_members", "tenants",
             "documents", "skills", "memories"}


def mixed(notices):
    """The queries that read a distributed table and a reference table in one statement:
    Citus refuses those in a call delegated with force_delegation (prompt_tx)."""
    out = []
    for text in notices:
        if "plan:" not in text:
            continue
        doc = json.loads(text.split("plan:", 1)[1])
        tables = {t for t, _ in scans(doc["Plan"])}
        if tables & KEYS.keys() and tables & REFERENCE:
            out.append((doc["Query Text"][:160], ", ".join(sorted(tables))))
    return out


def traced(c, sql, args=()):
    """Runs `sql`, returning what auto_explain said of every statement it ran."""
    notices = []

    def keep(d):
        notices.append(d.message_primary or "")

    c.add_notice_handler(keep)
    try:
        c.execute("LOAD 'auto_explain'")
        for s in ("auto_explain.log_min_duration = 0", "auto_explain.log_nested_statements = on",
                  "auto_explain.log_level = 'notice'", "auto_explain.log_format = 'json'"):
            c.execute(f"SET {s}")
        c.execute(sql, args)
    finally:
        c.execute("RESET auto_explain.log_min_duration")
        c.remove_notice_handler(keep)
    return notices


def call(c, fn, *args):
    return traced(c, f"SELECT prompt.{fn}({', '.join(['%s'] * len(args))})", args)


def test_every_compile_path_reads_one_conversation_by_its_key(odb):
    c = odb
    conv = str(c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) "
                         "VALUES (%s, %s, %s) RETURNING id", (WS, LARK, ADA)).fetchone()[0])
    c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) "
              "VALUES (%s, 'message', 'user', %s, 'Hello.')", (conv, ADA))
    first = str(c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model, request_options) "
                          "VALUES (%s, 'reply', %s, 'Hi there.', 'gpt-5.6-sol', '{\"stateful\": true}') RETURNING id",
                          (conv, ADA)).fetchone()[0])
    seen, compiled = [], []  # compiled: the calls prompt_tx forwards (docs/scale-out.md, "In a transaction")
    for fn in ("preview_turn", "estimate_turn", "explain_turn", "compile_turn", "compile_turn"):
        compiled += call(c, fn, conv, first)
    seen += compiled
    answer = final_response("responses")
    answer["id"] = "resp_one_shard_1"
    seen += call(c, "record_response", conv, first, json.dumps(answer))
    # A run (stateful, chained to the answer above) with a round, its results and its continuation.
    run = str(c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, mode, model, tools, "
                        "request_options) VALUES (%s, 'reply', %s, 'Weather in Lyon?', 'run', 'gpt-5.6-sol', %s, "
                        "'{\"stateful\": true}') RETURNING id", (conv, ADA, TOOLS)).fetchone()[0])
    step = call(c, "compile_turn", conv, run)
    seen, compiled = seen + step, compiled + step
    seen += call(c, "record_response", conv, run, json.dumps(sdk("responses", fixture("responses"))))
    results = json.dumps([{"call_id": CALL_IDS["responses"], "content": "15 C"}])
    seen += call(c, "record_tool_results", conv, run, results)
    for fn in ("preview_turn", "explain_turn", "compile_turn", "sealed_body"):
        step = call(c, fn, conv, run)
        seen, compiled = seen + step, compiled + step
    # A Side across conversations: its parent is read by the parent's key.
    side = str(c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id, kind, parent_id, "
                         "captured_turn_id) VALUES (%s, %s, %s, 'side', %s, %s) RETURNING id",
                         (WS, LARK, ADA, conv, run)).fetchone()[0])
    ask = str(c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                        "VALUES (%s, 'reply', %s, 'Why?', 'claude-sonnet-5') RETURNING id", (side, ADA)).fetchone()[0])
    for fn in ("preview_turn", "compile_turn", "compile_turn"):
        seen += call(c, fn, side, ask)
    plans = [n for n in seen if "plan:" in n]
    assert len(plans) > 50, "auto_explain saw the nested statements"
    assert any("prompt.responses" in p for p in plans) and any("prompt.seal_nodes" in p for p in plans)
    bad = keyless(seen)
    assert bad == [], "\n".join(f"{t}: {q}" for q, t in sorted(set(bad)))
    # What a compile of a conversation that is not a Side runs, force delegation runs too.
    assert any("prompt.workspaces" in p for p in compiled), "the compiles read reference tables"
    both = mixed(compiled)
    assert both == [], "\n".join(f"{t}: {q}" for q, t in sorted(set(both)))

    # token_margin_auto: the calibration (over every conversation) is read, for that model only.
    c.execute("UPDATE prompt.models SET token_margin_auto = true WHERE name = 'claude-sonnet-5'")
    try:
        again = str(c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                              "VALUES (%s, 'reply', %s, 'And?', 'claude-sonnet-5') RETURNING id", (side, ADA)).fetchone()[0])
        auto = keyless(call(c, "preview_turn", side, again))
        assert auto and {t for _, t in auto} == {"responses"}
        assert all("model_calibration" in q for q, _ in auto)
        assert keyless(call(c, "preview_turn", conv, first)) == [], "another model's compile does not read it"
    finally:
        c.execute("UPDATE prompt.models SET token_margin_auto = false WHERE name = 'claude-sonnet-5'")


def tables_of(text):
    """The distributed tables a statement's plan reads, one entry per scan (a table read
    twice, as by a subquery, counts twice)."""
    doc = json.loads(text.split("plan:", 1)[1])
    return doc["Query Text"], [t for t, _ in scans(doc["Plan"]) if t in KEYS]


def with_reads(c, mode, sql, args, trace=False):
    """`sql`'s first value (or its error's SQLSTATE and message) with
    pgprompt.citus `mode`, and what auto_explain said of its statements."""
    c.execute(f"SET pgprompt.citus = {mode}")
    try:
        seen = []
        if trace:
            seen = [n for n in traced(c, sql, args) if "plan:" in n]
            return None, seen
        try:
            return c.execute(sql, args).fetchone()[0], seen
        except psycopg.Error as e:
            return (e.sqlstate, e.diag.message_primary), seen
    finally:
        c.execute("RESET pgprompt.citus")


def both_ways(c, fn, conv, turn, first="off"):
    """`fn`'s result with pgprompt.citus `first`, then the other way (equal),
    and what auto_explain said of the statements of the call made with it on."""
    other = "on" if first == "off" else "off"
    sql = f"SELECT prompt.{fn}(%s, %s)::text"
    before, _ = with_reads(c, first, sql, (conv, turn))
    after, _ = with_reads(c, other, sql, (conv, turn))
    assert before == after, f"{fn} returns other bytes with pgprompt.citus {other}"
    _, seen = with_reads(c, "on", sql, (conv, turn), trace=True)
    return seen


def sealed_both_ways(c, conv, turn, mode):
    """The turn's first compile with the setting `mode` (it seals) against its preview with
    the setting the other way, made before (two compiles, neither read from the other's
    seal); then the stored body read both ways. What the sealing compile ran, traced."""
    other = "on" if mode == "off" else "off"
    preview, _ = with_reads(c, other, "SELECT prompt.preview_turn(%s, %s)::text", (conv, turn))
    c.execute(f"SET pgprompt.citus = {mode}")
    try:
        seen = [n for n in traced(c, "SELECT prompt.compile_turn(%s, %s)", (conv, turn)) if "plan:" in n]
    finally:
        c.execute("RESET pgprompt.citus")
    stored, _ = with_reads(c, other, "SELECT prompt.compile_turn(%s, %s)::text", (conv, turn))
    assert stored == preview, f"the compile sealed with pgprompt.citus {mode} is not the preview {other}"
    both_ways(c, "compile_turn", conv, turn)
    return seen


def test_citus_mode_returns_the_same_bytes_one_distributed_table_a_statement_planned_with_its_arguments(odb):
    """pgprompt.citus (docs/scale-out.md): the conversation, its seal and its turn read one
    distributed table a statement (Citus's fast path), every statement planned with its
    arguments (a kept plan with the distribution key a parameter grows at every execution
    on Citus 13.2), and every compile returns the bytes the joined read returns, sealed,
    pruned, with rounds, stateful and for a Side."""
    c = odb
    conv = str(c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) "
                         "VALUES (%s, %s, %s) RETURNING id", (WS, LARK, ADA)).fetchone()[0])
    c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content) "
              "VALUES (%s, 'message', 'user', %s, 'Hello.')", (conv, ADA))
    c.execute("INSERT INTO prompt.turns (conversation_id, kind, role, author_id, content, summary) "
              "VALUES (%s, 'summary', 'user', %s, 'So far.', 'They said hello.')", (conv, ADA))

    def reply(prompt, model="claude-sonnet-5", extra="", values=()):
        return str(c.execute(f"INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model{extra}) "
                             f"VALUES (%s, 'reply', %s, %s, %s{', %s' * len(values)}) RETURNING id",
                             (conv, ADA, prompt, model, *values)).fetchone()[0])

    plain = reply("Hi there.")
    one_table = []
    for fn in ("preview_turn", "estimate_turn"):
        one_table += both_ways(c, fn, conv, plain)
    # explain_turn also reads the conversation's earlier requests (turns, seals and rounds
    # in one statement): the same bytes, not the single-table property.
    both_ways(c, "explain_turn", conv, plain)
    # Sealed by the single-table read, then by the joined one: each against the other's preview.
    sealing = sealed_both_ways(c, conv, plain, "on")
    one_table += both_ways(c, "compile_turn", conv, plain)
    other = reply("And now?")
    sealed_both_ways(c, conv, other, "off")
    stateful = reply("Stateful?", "gpt-5.6-sol", ", request_options", ('{"stateful": true}',))
    sealed_both_ways(c, conv, stateful, "on")
    run = reply("Weather in Lyon?", "gpt-5.6-sol", ", mode, tools", ("run", TOOLS))
    sealed_both_ways(c, conv, run, "on")
    c.execute("SELECT prompt.record_response(%s, %s, %s)", (conv, run, json.dumps(sdk("responses", fixture("responses")))))
    c.execute("SELECT prompt.record_tool_results(%s, %s, %s)",
              (conv, run, json.dumps([{"call_id": CALL_IDS["responses"], "content": "15 C"}])))
    # The turn has rounds now: its seal is not its stored body.
    for fn in ("preview_turn", "explain_turn", "compile_turn", "compile_turn"):
        both_ways(c, fn, conv, run)
    side = str(c.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id, kind, parent_id, "
                         "captured_turn_id) VALUES (%s, %s, %s, 'side', %s, %s) RETURNING id",
                         (WS, LARK, ADA, conv, run)).fetchone()[0])
    ask = str(c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                        "VALUES (%s, 'reply', %s, 'Why?', 'claude-sonnet-5') RETURNING id", (side, ADA)).fetchone()[0])
    sealed_both_ways(c, side, ask, "on")
    # What cannot be compiled says so the same way: a turn of another conversation, no
    # such turn, no such conversation, and (below) a pruned seal.
    nowhere = "00000000-0000-4000-8000-00000000dead"
    for conv_id, turn_id in ((side, plain), (conv, nowhere), (nowhere, plain)):
        for fn in ("compile_turn", "preview_turn"):
            said = [with_reads(c, m, f"SELECT prompt.{fn}(%s, %s)", (conv_id, turn_id))[0] for m in ("off", "on")]
            assert said[0] == said[1] and isinstance(said[0], tuple), said
    c.execute("SELECT prompt.prune_seals(%s, now() + interval '1 day')", (conv,))
    said = [with_reads(c, m, "SELECT prompt.compile_turn(%s, %s)", (conv, other))[0] for m in ("off", "on")]
    assert said[0] == said[1] and "prun" in said[0][1], said

    # What a plain turn's previews and compiles (the first, which seals, among them) ran with
    # the setting on: no statement reads two
    # distributed tables, or one twice (a join or a subquery: Citus plans those again at
    # every call).
    assert len(one_table) > 10, "auto_explain saw the nested statements"
    assert any("prompt.seals" in p for p in sealing), "the sealing compile was traced"
    joined = [(q[:120], ts) for q, ts in map(tables_of, one_table + sealing) if len(ts) > 1]
    assert joined == [], "\n".join(f"{ts}: {q}" for q, ts in joined)

    # Planned with its arguments: after the plan cache's five custom plans a kept plan
    # would be generic (its conditions name $1); in pgprompt.citus mode no scan of a
    # distributed table names a parameter, ever. Off, the same calls run on kept generic
    # plans (the control: the check sees parameters where they are).
    fresh = reply("Once more?")

    def parameters(mode, fn="compile_turn", turn=fresh):
        for _ in range(7):
            with_reads(c, mode, f"SELECT prompt.{fn}(%s, %s)::text", (conv, turn))
        _, seen = with_reads(c, mode, f"SELECT prompt.{fn}(%s, %s)::text", (conv, turn), trace=True)
        doc_scans = [scan for n in seen for scan in scans(json.loads(n.split("plan:", 1)[1])["Plan"])]
        assert any(t in KEYS for t, _ in doc_scans), "the compile's scans were traced"
        return [(t, cond) for t, cond in doc_scans if t in KEYS and re.search(r"\$\d", cond)]
    assert parameters("off"), "off, the kept plans are generic"
    assert parameters("on") == [], "pgprompt.citus plans every statement with its arguments"
    # The unsealed path too: a turn never compiled, previewed.
    unsealed = reply("And the preview?")
    assert parameters("off", "preview_turn", unsealed), "off, the kept plans are generic"
    assert parameters("on", "preview_turn", unsealed) == [], "the preview's statements too"
