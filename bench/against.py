#!/usr/bin/env python3
"""Issue 43's ratios for two builds of pgprompt in one interleaved run on one server.

bench/against.sh builds an older commit under another module name (pgprompt_old.so and
extension pgprompt_old) and loads the same data into a database of its own with that
commit's bench/bench.py; this script then measures both databases' calls in one run:
every round calls each once, in an order that rotates, so the machine's drift falls on
both builds alike. The floors are one query (this checkout's) over each database's rows,
and the rows the floors and the calls read are checked equal in both databases first.
`AGAINST_RUNS` runs (default 5), each on fresh connections (fresh backends), the builds'
order alternated from run to run; the report keeps every run and the spread.

    python3 bench/against.py OLD_DB NEW_DB [LABEL_OLD LABEL_NEW]

With BENCH_WRITE=0 (another older commit than 0.3.0's) it prints and writes nothing.
"""
import json
import os
import statistics
import sys
import time

import bench
from bench import C10K, C200, C_TOOLS, T10K, T200, T_TOOLS
from results import write_section

HEAD = "## 0.3.0 and this build in one run"
def calls(c, tag):
    """Issue 43's calls on connection `c`, and the 10,000-turn preview, named `tag:call`."""
    both = {**bench.issue_43_calls(c), "preview_10k": lambda: c.execute(bench.PREVIEW, (C10K, T10K)).fetchone()}
    return {f"{tag}:{k}": f for k, f in both.items()}


def ratios(i, tag, c):
    """Issue 43's ratios of one build (`tag`) from the run's medians `i`, and the medians."""
    body = c.execute("SELECT octet_length(prompt.preview_turn(%s, %s)::text)", (C200, T200)).fetchone()[0]
    tools = c.execute("SELECT octet_length(prompt.preview_turn(%s, %s)::text)", (C_TOOLS, T_TOOLS)).fetchone()[0]
    m = {k.split(":", 1)[1]: v["median_ms"] for k, v in i.items() if k.startswith(tag + ":")}
    return {"ratios": bench.issue_43(m, body, tools), "medians": m}


# What the floors and the calls read: every turn of the benchmark's conversations, as
# one digest per conversation (role, sequence, content and prompt, in order).
ROWS_DIGEST = ("SELECT conversation_id::text, md5(string_agg(concat_ws('|', seq, kind, role, content, prompt), "
               "E'\\n' ORDER BY seq)) FROM prompt.turns WHERE conversation_id = ANY(%s::uuid[]) "
               "GROUP BY conversation_id ORDER BY 1")


def same_rows(old, new):
    """The benchmark's conversations hold the same rows in both databases."""
    convs = [C200, C10K, C_TOOLS]
    a = old.execute(ROWS_DIGEST, (convs,)).fetchall()
    b = new.execute(ROWS_DIGEST, (convs,)).fetchall()
    if a != b or len(a) != len(convs):
        sys.exit(f"the two databases' rows differ: {a} against {b}")
    return len(a)


def one_run(old_db, new_db, run):
    """One interleaved run on fresh connections; the builds' order alternates by run."""
    with bench.connect(old_db) as old, bench.connect(new_db) as new:
        first = [calls(old, "old"), calls(new, "new")]
        if run % 2:
            first.reverse()
        i = bench.interleaved({**first[0], **first[1]})
        return {"old": ratios(i, "old", old), "new": ratios(i, "new", new)}


def main():
    old_db, new_db = sys.argv[1], sys.argv[2]
    labels = sys.argv[3:5] if len(sys.argv) >= 5 else ["old", "new"]
    n_runs = int(os.environ.get("AGAINST_RUNS", "5"))
    with bench.connect(old_db) as old, bench.connect(new_db) as new:
        checked = same_rows(old, new)
    runs = [one_run(old_db, new_db, r) for r in range(n_runs)]
    print(json.dumps(runs, indent=1))
    med = lambda xs: statistics.median(xs)  # noqa: E731
    span = lambda xs: f"{min(xs):.2f}-{max(xs):.2f}"  # noqa: E731
    lines = [HEAD, "",
             f"Machine: {bench.machine()}. Date: {time.strftime('%Y-%m-%d')}. `bench/against.sh {labels[0]}`: "
             f"{labels[0]} (the last commit of 0.3.0) built under another name beside this build ({labels[1]}) in one "
             f"server, each database loaded by its own commit's bench.py; the rows of the {checked} conversations the "
             f"calls and floors read checked equal in both (md5 of every turn); the floors one query over each. "
             f"{n_runs} runs, each on fresh connections with the builds' order alternated, each an interleaved run "
             f"of {bench.RUNS} rounds. Medians of the runs' medians, and their spread.", "",
             f"| ratio | issue 43's 0.3.0 | {labels[0]} here | {labels[1]} here | target |", "|---|---:|---:|---:|---|"]
    for k, (label, _, issue, target) in enumerate(runs[0]["old"]["ratios"]):
        olds = [r["old"]["ratios"][k][1] for r in runs]
        news = [r["new"]["ratios"][k][1] for r in runs]
        worse = "no worse" if med(news) <= med(olds) else "WORSE"
        lines.append(f"| {label} | {issue} | {med(olds):.2f} ({span(olds)}) | {med(news):.2f} ({span(news)}) | "
                     f"{target} {bench.ok(med(news), target)}; than {labels[0]}: {worse} |")
    lines += ["", f"| call, median ms | {labels[0]} | {labels[1]} | {labels[1]} / {labels[0]} |", "|---|---:|---:|---:|"]
    for call in runs[0]["old"]["medians"]:
        olds = [r["old"]["medians"][call] for r in runs]
        news = [r["new"]["medians"][call] for r in runs]
        lines.append(f"| {call} | {med(olds):.2f} ({span(olds)}) | {med(news):.2f} ({span(news)}) | "
                     f"{med(news) / med(olds):.3f} |")
    print("\n".join(lines))
    if os.environ.get("BENCH_WRITE", "1") == "1":
        write_section("against", HEAD, lines)


if __name__ == "__main__":
    main()
