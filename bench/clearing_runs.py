"""Tool-result clearing over one long run (issue 60, SPEC §16.3): a run of ROUNDS rounds
(a tool call and a ~2 KB result each) through pgprompt's response loop on the anthropic
wire, three ways:

- pgprompt without clearing;
- pgprompt with `request_options.clear_tool_results` (TRIGGER, keep 3, CLEAR_AT_LEAST);
- Anthropic's server-side context editing (`clear_tool_uses_20250919`) emulated with the
  same settings: the requests of the run without clearing, each cleared as the server
  clears it (per request, from the whole list it is sent: above the trigger, every
  tool result but the newest `keep`, when that clears at least `clear_at_least`).

Every request runs through Anthropic's documented cache rules (tests/python/cache_rules.py),
and for pgprompt's own runs `prompt.cache_report` gives the same reads and writes. Reports
input tokens, cache reads and writes, and the input cost relative to no caching (read 0.1,
write 1.25, uncached 1).

    bench/run.sh clearing   # one command; or, with a cluster running:
    python3 bench/clearing_runs.py [ROUNDS]

Writes bench/out/clearing_runs.json and its section of bench/RESULTS.md.
"""
import json
import pathlib
import random
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEAD = "## Clearing tool results over a long run"
sys.path.insert(0, str(ROOT / "tests/python"))
sys.path.insert(0, str(ROOT / "bench"))
from bench import connect  # noqa: E402
from cache_rules import Blocks, Provider  # noqa: E402
from cache_runs import CONV, MINIMUM, READ, TOOLS, WRITE, count, response, setup, summary, words  # noqa: E402
from results import write_section  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
TRIGGER, KEEP, CLEAR_AT_LEAST = 30_000, 3, 15_000
PLACEHOLDER = "[tool result cleared]"
RULE = {"trigger": TRIGGER, "keep": KEEP, "clear_at_least": CLEAR_AT_LEAST}


def run(clearing: bool):
    """One run turn of ROUNDS rounds; its requests as sent, and cache_report's rows."""
    with connect("postgres") as admin:
        c = setup(admin)
    rng = random.Random(5)
    turn = "00000000-0000-4000-8000-00000000c1e1"
    options = json.dumps({"clear_tool_results": RULE} if clearing else {})
    c.execute("INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, mode, tools, request_options) "
              "SELECT %s, %s, 'reply', id, %s, 'run', %s, %s FROM prompt.users WHERE handle = 'ada'",
              (CONV, turn, words(rng, 500), json.dumps(TOOLS), options))
    bodies = [c.execute("SELECT prompt.compile_turn(%s, %s)", (CONV, turn)).fetchone()[0]]
    for r in range(1, ROUNDS + 1):
        call = {"type": "tool_use", "id": f"toolu_{r:04d}", "name": "lookup", "input": {"q": f"record {r}"}}
        c.execute("SELECT prompt.record_response(%s, %s, %s)", (CONV, turn, json.dumps(response("anthropic", f"{r:04d}", call=call))))
        c.execute("SELECT prompt.record_tool_results(%s, %s, %s)",
                  (CONV, turn, json.dumps([{"call_id": call["id"], "content": words(rng, 2000)}])))
        bodies.append(c.execute("SELECT prompt.compile_turn(%s, %s)", (CONV, turn)).fetchone()[0])
    report = c.execute("SELECT predicted_cache_read, predicted_cache_write, input_tokens FROM prompt.cache_report(%s)",
                       (CONV,)).fetchall()
    steps = c.execute("SELECT count(*) FROM prompt.rounds WHERE turn_id = %s AND cleared IS NOT NULL", (turn,)).fetchone()[0]
    c.close()
    return bodies, report, steps


def server_cleared(body: dict) -> dict:
    """The request as Anthropic's context editing clears it, from the whole list sent."""
    b = json.loads(json.dumps(body))
    results = [blk for m in b["messages"] if m["role"] == "user" for blk in m["content"]
               if blk.get("type") == "tool_result"]
    total = count(json.dumps(b))
    older = results[: max(0, len(results) - KEEP)]
    cleared = sum(count(r["content"]) for r in older if r["content"] != PLACEHOLDER)
    if total > TRIGGER and older and cleared >= CLEAR_AT_LEAST:
        for r in older:
            r["content"] = PLACEHOLDER
    return b


def simulated(bodies):
    """Each request through Anthropic's cache rules, a second apart (within the TTL)."""
    p, at = Provider(MINIMUM), time.time()
    return [p.send(Blocks(b, count), at + i) for i, b in enumerate(bodies)]


def lines(out):
    text = [
        HEAD,
        "",
        f"`bench/clearing_runs.py`: one run of {out['rounds']} rounds (a tool call and a ~2 KB result each) on the "
        "anthropic wire through compile_turn, record_response and record_tool_results; "
        f"`clear_tool_results` {json.dumps(RULE)}; every request through Anthropic's documented cache rules "
        "(`tests/python/cache_rules.py`). Anthropic's server-side clearing is emulated on the requests of the run "
        "without clearing, with the same settings, per request as the server applies it. Cost: read 0.1, "
        "write 1.25, uncached 1, relative to sending every token uncached without clearing.",
        "",
        "| run | requests | input tokens | read from cache | written | cost / no caching, no clearing | steps |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    base = out["without"]["input_tokens"]
    for label, key in (("pgprompt, no clearing", "without"), ("pgprompt, clear_tool_results", "with"),
                       ("Anthropic server-side clearing, emulated", "server")):
        v = out[key]
        cost = READ * v["cache_read"] + WRITE * v["cache_write"] + (v["input_tokens"] - v["cache_read"] - v["cache_write"])
        text.append(f"| {label} | {v['requests']:,} | {v['input_tokens']:,} | {v['cache_read']:,} | "
                    f"{v['cache_write']:,} | {cost / base:.3f} | {v.get('steps', '')} |")
    text += ["", f"`cache_report` agrees with the simulator on {out['report_agrees']['without']} and "
             f"{out['report_agrees']['with']} of the requests of the two pgprompt runs."]
    return text


def main():
    out = {"rounds": ROUNDS, "rule": RULE, "report_agrees": {}}
    plain = None
    for key, clearing in (("without", False), ("with", True)):
        bodies, report, steps = run(clearing)
        rows = simulated(bodies)
        out[key] = dict(summary(rows), steps=steps)
        out["report_agrees"][key] = sum(a[0] == b["predicted_cache_read"] and a[1] == b["predicted_cache_write"]
                                        for a, b in zip(report, rows))
        if not clearing:
            plain = bodies
    out["server"] = summary(simulated([server_cleared(b) for b in plain]))
    (ROOT / "bench/out").mkdir(exist_ok=True)
    (ROOT / "bench/out/clearing_runs.json").write_text(json.dumps(out, indent=1))
    write_section("clearing_runs", HEAD, lines(out))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
