"""`cache_report` against the requests it reports (issue 43: linear in them), from one run.

Two conversations of ~2 KB exchanges, built side by side, each exchange compiled (and
sealed) after the one before was answered; `cache_report` timed over each after 40 and
after 400 exchanges (medians):
- growing: a 120,000-token window, so history grows through the first ~200 exchanges and
  a request at 400 is several times the length of one at 40 (the storage benchmark's);
- sliding: an 8,000-token window, so history slides after about a dozen exchanges and
  nearly every request is as long as the next.

Per request, 400 / 40 tells whether the report's cost grows with the number of requests;
per input token, whether it grows with what they hold. Writes its section of
bench/RESULTS.md.

    bench/run.sh cache_report
    python3 bench/cache_report.py report   # the section again from bench/out/cache_report.json
"""
import json
import os
import random
import sys
import time

import bench as B
from results import write_section

DB = "pgprompt_bench_cache_report"
HEAD = "## Cache report"
CASES = [  # name, window, agent, conversation
    ("growing", 120_000, "00000000-0000-4000-8000-0000000ce101", "00000000-0000-4000-8000-0000000cec01"),
    ("sliding", 8_000, "00000000-0000-4000-8000-0000000ce102", "00000000-0000-4000-8000-0000000cec02"),
]
AT = (40, 400)
RUNS = 50
SAVED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "cache_report.json")


def report_once(c, conv):
    return c.execute("SELECT count(*), sum(input_tokens) FROM prompt.cache_report(%s)", (conv,)).fetchone()


def measure():
    with B.connect("postgres") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB}")
        admin.execute(f"CREATE DATABASE {DB}")
    rng = random.Random(7)
    out = {"machine": B.machine(), "date": time.strftime("%Y-%m-%d")}
    with B.connect(DB) as c:
        c.execute("CREATE EXTENSION pgprompt")
        c.execute("INSERT INTO prompt.workspaces (id, name) VALUES (%s, 'Bench')", (B.WS,))
        c.execute("INSERT INTO prompt.users (id, handle, kind) VALUES (%s, 'ada', 'human')", (B.ADA,))
        for name, window, agent, conv in CASES:
            c.execute("INSERT INTO prompt.models (name, wire, advisory_window) VALUES (%s, 'anthropic', %s)", (name, window))
            c.execute("INSERT INTO prompt.users (id, handle, kind, model) VALUES (%s, %s, 'agent', %s)", (agent, f"bench_{name}", name))
            c.execute("INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)",
                      (conv, B.WS, agent, B.ADA))
        for i in range(1, max(AT) + 1):
            for k, (_, _, _, conv) in enumerate(CASES):
                turn = f"00000000-0000-4000-8000-{0xc0000000 + i * 16 + k:012x}"
                c.execute("INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt) VALUES (%s, %s, 'reply', %s, %s)",
                          (conv, turn, B.ADA, B.text(rng, 1000)))
                c.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (conv, turn))
                c.execute("UPDATE prompt.turns SET content = %s WHERE id = %s", (B.text(rng, 1000), turn))
            if i in AT:
                # Planned as a table that size is (autovacuum's statistics, taken now).
                c.execute("ANALYZE prompt.turns, prompt.seals, prompt.seal_nodes, prompt.rounds, prompt.responses")
                for name, _, _, conv in CASES:
                    requests, tokens = report_once(c, conv)
                    ms = B.summary(B.timed(lambda: report_once(c, conv), RUNS, warmup=1))["median_ms"]
                    out[f"{name}_{i}"] = {"ms": ms, "requests": requests, "tokens": int(tokens)}
    os.makedirs(os.path.dirname(SAVED), exist_ok=True)
    with open(SAVED, "w") as f:
        json.dump(out, f, indent=1)
    publish(out)


def publish(out):
    lo, hi = AT
    text = [
        HEAD,
        "",
        f"`bench/cache_report.py` (`bench/run.sh cache_report`): `cache_report` over a conversation of {lo} and of {hi} "
        "sealed exchanges of ~2 KB, each compiled after the one before was answered; two conversations built side by "
        "side: growing (a 120,000-token window: history grows through the first ~200 exchanges) and sliding (an "
        "8,000-token window: history slides after about a dozen, so nearly every request is as long as the next). "
        f"Medians of {RUNS} calls, the tables analyzed first. Machine: {out['machine']}. Date: {out['date']}.",
        "",
        "| conversation | requests | input tokens | ms | ms per request | µs per 1,000 input tokens |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    ratios = []
    for name, *_ in CASES:
        for n in AT:
            m = out[f"{name}_{n}"]
            text.append(f"| {name} | {m['requests']} | {m['tokens']:,} | {m['ms']:.1f} | {m['ms'] / m['requests']:.3f} | "
                        f"{m['ms'] * 1e6 / m['tokens']:.2f} |")
        a, b = out[f"{name}_{lo}"], out[f"{name}_{hi}"]
        per_request = (b["ms"] / b["requests"]) / (a["ms"] / a["requests"])
        per_token = (b["ms"] / b["tokens"]) / (a["ms"] / a["tokens"])
        length = (b["tokens"] / b["requests"]) / (a["tokens"] / a["requests"])
        ratios.append((name, per_request, per_token, length))
    text += ["", f"| conversation | per request, {hi} / {lo} | target | | per input token, {hi} / {lo} | "
             "average request length, {hi} / {lo} |".format(hi=hi, lo=lo), "|---|---:|---|---|---:|---:|"]
    for name, per_request, per_token, length in ratios:
        text.append(f"| {name} | {per_request:.2f} | <= 1.2 | {'met' if per_request <= 1.2 else 'MISSED'} | "
                    f"{per_token:.2f} | {length:.2f} |")
    worst = max(r[2] for r in ratios)
    text += ["", f"Per input token the report costs {worst:.2f}× at most at {hi} requests what it costs at {lo} "
             f"({', '.join(f'{r[0]} {r[2]:.2f}' for r in ratios)}): linear in what the requests hold. Per request it "
             "costs more where the requests grow longer (growing; sliding's average request is also longer at "
             f"{hi} than at {lo}, its history not yet full at {lo}): replaying a request walks its blocks (its stored "
             "layout's pieces, its prefix hashes, the comparison with the request before). The figures at "
             f"{lo} requests are under a millisecond, within this machine's drift from one run to the next."]
    print("\n".join(text))
    write_section("cache_report", HEAD, text)


if __name__ == "__main__":
    if sys.argv[1:] == ["report"]:  # the section again from the last measurement's figures
        with open(SAVED) as f:
            publish(json.load(f))
    else:
        measure()
