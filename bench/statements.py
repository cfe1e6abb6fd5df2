"""Statements per call, counted with pg_stat_statements (`track = all`, so the
statements pgprompt runs inside a call are counted, the call itself left out), and the
time of the calls beside the compile, interleaved medians from one run.

Needs a server started with `shared_preload_libraries = pg_stat_statements`
(bench/run.sh restarts it so for this phase). Builds its own database: the benchmark's
agent and a 200-turn conversation of ~2 KB turns, 60 replies sealed after it, and a new
reply turn. Writes its section of bench/RESULTS.md.

    bench/run.sh statements
"""
import statistics
import sys
import time

import bench as B
from results import write_section

DB = "pgprompt_bench_statements"
HEAD = "## Statements per call"
SEALED = [f"00000000-0000-4000-8000-{0x5ea1000 + i:012x}" for i in range(60)]
NEXT = "00000000-0000-4000-8000-0000000ffff1"
RUNS = 15
# record_response against the compile: more runs, for a median that holds from run to run.
RECORD_RUNS = 60


def build():
    import random
    with B.connect("postgres") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB}")
        admin.execute(f"CREATE DATABASE {DB}")
    rng = random.Random(42)
    with B.connect(DB) as c:
        c.execute("CREATE EXTENSION pgprompt")
        c.execute("CREATE EXTENSION pg_stat_statements")
        B.agent(c, rng)
        B.conversation(c, rng, B.C_SEAL, 200)
        for i, t in enumerate(SEALED):
            c.execute("INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt) "
                      "VALUES (%s, %s, %s, 'reply', %s, 'And now?')", (B.C_SEAL, t, 1000 + i, B.ADA))
            c.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (B.C_SEAL, t))
            c.execute("UPDATE prompt.turns SET content = 'ok' WHERE id = %s", (t,))
        c.execute("INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt) "
                  "VALUES (%s, %s, 2000, 'reply', %s, 'And next?')", (B.C_SEAL, NEXT, B.ADA))
        c.execute("VACUUM ANALYZE")


CALLS = [
    ("a sealed `compile_turn` (read from storage)", "SELECT length(prompt.compile_turn(%s, %s)::text)", SEALED[-1], "<= 2"),
    ("an unsealed `preview_turn`, 200 turns", "SELECT length(prompt.preview_turn(%s, %s)::text)", NEXT, "<= 6"),
    ("`explain_turn` of the unsealed turn", "SELECT length(prompt.explain_turn(%s, %s)::text)", NEXT, ""),
]


# History's batches (a query run once per batch, and the rounds of a batch's replies where
# the conversation has rounds) count as one statement.
BATCH = ("ORDER BY t.seq DESC LIMIT", "r.turn_id = ANY(")


def statements(c, sql, turn) -> tuple:
    """The statements one call runs: (counted, run, what each is), history's batches
    counted as one."""
    c.execute(sql, (B.C_SEAL, turn)).fetchone()
    c.execute("SELECT pg_stat_statements_reset()")
    c.execute(sql, (B.C_SEAL, turn)).fetchone()
    rows = c.execute("SELECT query, calls FROM pg_stat_statements WHERE dbid = "
                     "(SELECT oid FROM pg_database WHERE datname = current_database())").fetchall()
    # Everything but the call itself and the reset.
    rows = [(q, n) for q, n in rows if "pg_stat_statements_reset" not in q and not q.startswith("SELECT length(prompt.")]
    run = sum(n for _, n in rows)
    history = [q for q, _ in rows if any(b in q for b in BATCH)]
    counted = sum(n for q, n in rows if q not in history) + (1 if history else 0)
    return counted, run, sorted(f"{n}× {' '.join(q.split())[:70]}" for q, n in rows)


def planned(c) -> dict:
    """The statements a warm call plans again (`track_planning`), after `timed` ran each
    call more often than the plan cache's five custom plans: a statement planned here is
    planned at every call."""
    out = {}
    for name, sql, turn, _ in CALLS:
        c.execute("SELECT pg_stat_statements_reset()")
        c.execute(sql, (B.C_SEAL, turn)).fetchone()
        rows = c.execute("SELECT query, plans, total_plan_time FROM pg_stat_statements WHERE dbid = "
                         "(SELECT oid FROM pg_database WHERE datname = current_database()) AND plans > 0").fetchall()
        out[name] = [(" ".join(q.split())[:60], p, ms) for q, p, ms in rows
                     if "pg_stat_statements_reset" not in q and not q.startswith("SELECT length(prompt.")
                     and "IS NOT NULL" not in q]
    return out


# The ratio SPEC 16.5 sets is of the calls' `IS NOT NULL` forms (what they compute, not
# their output printed as text); timed interleaved with the calls above.
NOT_NULL = [
    ("preview IS NOT NULL", "SELECT prompt.preview_turn(%s, %s) IS NOT NULL", NEXT, ""),
    ("explain IS NOT NULL", "SELECT prompt.explain_turn(%s, %s) IS NOT NULL", NEXT, ""),
]


def timed(c) -> dict:
    xs = {name: [] for name, *_ in CALLS + NOT_NULL}
    for _ in range(RUNS):
        for name, sql, turn, _ in CALLS + NOT_NULL:
            t0 = time.perf_counter()
            c.execute(sql, (B.C_SEAL, turn)).fetchone()
            xs[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e3 for k, v in xs.items()}


def response(i: int) -> str:
    """The model's answer to a reply turn, as Anthropic's Messages API returns it."""
    import json
    return json.dumps({"id": f"msg_bench_{i}", "type": "message", "role": "assistant", "model": "bench",
                       "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
                       "usage": {"input_tokens": 50000, "output_tokens": 1, "cache_read_input_tokens": 0,
                                 "cache_creation_input_tokens": 0}})


def recorded(c) -> tuple:
    """`record_response` of a freshly sealed reply against that reply's sealed
    `compile_turn`, interleaved: medians (ms), and the statements of one record_response."""
    rec, comp, count = [], [], 0
    for i in range(RECORD_RUNS + 1):
        turn = f"00000000-0000-4000-8000-{0x5eb1000 + i:012x}"
        c.execute("INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt) "
                  "VALUES (%s, %s, %s, 'reply', %s, 'And then?')", (B.C_SEAL, turn, 3000 + i, B.ADA))
        c.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (B.C_SEAL, turn))
        t0 = time.perf_counter()
        c.execute("SELECT length(prompt.compile_turn(%s, %s)::text)", (B.C_SEAL, turn)).fetchone()
        comp.append(time.perf_counter() - t0)
        if i == RECORD_RUNS:
            c.execute("SELECT pg_stat_statements_reset()")
        t0 = time.perf_counter()
        c.execute("SELECT prompt.record_response(%s, %s, %s) IS NOT NULL", (B.C_SEAL, turn, response(i))).fetchone()
        rec.append(time.perf_counter() - t0)
        if i == RECORD_RUNS:
            rows = c.execute("SELECT query, calls FROM pg_stat_statements WHERE dbid = "
                             "(SELECT oid FROM pg_database WHERE datname = current_database())").fetchall()
            count = sum(n for q, n in rows if "pg_stat_statements_reset" not in q and "prompt.record_response" not in q)
    return statistics.median(rec) * 1e3, statistics.median(comp) * 1e3, count


def main():
    build()
    with B.connect(DB) as c:
        if not c.execute("SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'").fetchone()[0]:
            sys.exit("pg_stat_statements is not installed")
        c.execute("SET pg_stat_statements.track = 'all'")
        c.execute("SET pg_stat_statements.track_planning = on")
        counted = {name: statements(c, sql, turn) for name, sql, turn, _ in CALLS}
        counts = {name: n for name, (n, _, _) in counted.items()}
        ms = timed(c)
        again = planned(c)
        rec, comp, rec_statements = recorded(c)
    lines = [HEAD, "", f"Machine: {B.machine()}. Date: {time.strftime('%Y-%m-%d')}. "
             f"`bench/statements.py`: pg_stat_statements with `track = all` (the statements a call runs inside it); "
             f"a 200-turn conversation of ~2 KB turns with 60 sealed replies; medians of {RUNS} interleaved runs ({RECORD_RUNS} for `record_response` against the compile).", "",
             "| call | statements (history's batches as one) | run | target | median ms |", "|---|---:|---:|---|---:|"]
    for name, _, _, target in CALLS:
        met = "" if not target else (" met" if counts[name] <= int(target[2:]) else " MISSED")
        lines.append(f"| {name} | {counts[name]} | {counted[name][1]} | {target}{met} | {ms[name]:.2f} |")
    lines.append(f"| `record_response` of a freshly sealed reply | {rec_statements} | {rec_statements} |  | {rec:.2f} |")
    explain, preview = ms[CALLS[2][0]], ms[CALLS[1][0]]
    e_nn, p_nn = ms["explain IS NOT NULL"], ms["preview IS NOT NULL"]
    met = "met" if e_nn / p_nn <= 1.5 else "MISSED"
    lines += ["", f"`explain_turn(...) IS NOT NULL` / `preview_turn(...) IS NOT NULL` of the same turn: "
              f"{e_nn / p_nn:.2f} ({e_nn:.2f} / {p_nn:.2f} ms; target <= 1.5, {met}; bench/NOTES.md says where the time goes); "
              f"their `::text` forms, above: {explain / preview:.2f}.",
              f"`record_response` / that reply's sealed `compile_turn` ({comp:.2f} ms): {rec / comp:.3f} (target <= 0.5).",
              "", "What the compiles run (calls × statement, from pg_stat_statements):", ""]
    for name, _, _, _ in CALLS[:2]:
        lines += [f"- {name}:"] + [f"  - `{q}`" for q in counted[name][2]]
    lines += ["", f"Statements a warm call plans again (`track_planning`, after the {RUNS} runs above; "
              "one planned here is planned at every call):", ""]
    for name, _, _, _ in CALLS:
        lines.append(f"- {name}: " + ("none" if not again[name] else
                     "; ".join(f"`{q}` ({p}, {ms:.2f} ms)" for q, p, ms in again[name])))
    print("\n".join(lines))
    write_section("statements", HEAD, lines)


if __name__ == "__main__":
    main()
