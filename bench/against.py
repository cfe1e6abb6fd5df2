#!/usr/bin/env python3
"""Issue 43's ratios for two builds of pgprompt in one interleaved run on one server.

bench/against.sh builds an older commit under another module name (pgprompt_old.so and
extension pgprompt_old) and loads the same data into a database of its own with that
commit's bench/bench.py; this script then measures both databases' calls in one run:
every round calls each once, in an order that rotates, so the machine's drift falls on
both builds alike. The floors are measured in each database, on its own rows.

    python3 bench/against.py OLD_DB NEW_DB [LABEL_OLD LABEL_NEW]

With BENCH_WRITE=0 (another older commit than 0.3.0's) it prints and writes nothing.
"""
import json
import os
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


def main():
    old_db, new_db = sys.argv[1], sys.argv[2]
    labels = sys.argv[3:5] if len(sys.argv) >= 5 else ["old", "new"]
    with bench.connect(old_db) as old, bench.connect(new_db) as new:
        both = {**calls(old, "old"), **calls(new, "new")}
        i = bench.interleaved(both)
        out = {labels[0]: ratios(i, "old", old), labels[1]: ratios(i, "new", new)}
    print(json.dumps(out, indent=1))
    a, b = (out[k] for k in labels)
    lines = [HEAD, "",
             f"Machine: {bench.machine()}. Date: {time.strftime('%Y-%m-%d')}. `bench/against.sh {labels[0]}`: "
             f"{labels[0]} (the last commit of 0.3.0) built under another name beside this build ({labels[1]}) in one "
             f"server, each database loaded by its own commit's bench.py (the same seeded rows), every call of both "
             f"measured in one interleaved run ({bench.RUNS} rounds).", "",
             f"| ratio | issue 43's 0.3.0 | {labels[0]} here | {labels[1]} here | target |", "|---|---:|---:|---:|---|"]
    for (label, old, issue, target), (_, new, _, _) in zip(a["ratios"], b["ratios"]):
        lines.append(f"| {label} | {issue} | {old:.2f} | {new:.2f} | {target} {bench.ok(new, target)} |")
    lines += ["", "Medians, ms: " + "; ".join(
        f"{label}: " + ", ".join(f"{k} {v:.2f}" for k, v in out[label]["medians"].items()) for label in labels) + "."]
    print("\n".join(lines))
    if os.environ.get("BENCH_WRITE", "1") == "1":
        write_section("against", HEAD, lines)


if __name__ == "__main__":
    main()
