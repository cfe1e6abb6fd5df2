#!/usr/bin/env python3
"""Fails when a function (outside the test modules) is longer than the limit: the core
is split by stage and the extension by concern, so that each function reads on one
screen. scripts/lint.sh runs it over both crates.

    scripts/function-length.py core/src 80
    scripts/function-length.py src 80
"""
import pathlib
import re
import sys

root, limit = pathlib.Path(sys.argv[1]), int(sys.argv[2])
FN = re.compile(r"^(\s*)(pub(\([a-z]+\))? )?(const )?(unsafe )?fn (\w+)")
long = []
for path in sorted(root.rglob("*.rs")):
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines):
        if re.match(r"\s*#\[cfg\(test\)\]", line):
            break  # test modules come last in each file
        m = FN.match(line)
        if not m:
            continue
        # A declaration without a body (a trait's required method) ends with ";".
        opens = next((k for k in range(i, len(lines)) if lines[k].rstrip().endswith(("{", ";"))), i)
        if lines[opens].rstrip().endswith(";"):
            continue
        end = " " * len(m.group(1)) + "}"
        for j in range(i + 1, len(lines)):
            if lines[j] == end:
                if j - i + 1 > limit:
                    long.append(f"{path}:{i + 1}: fn {m.group(6)} is {j - i + 1} lines (limit {limit})")
                break
for entry in long:
    print(entry, file=sys.stderr)
sys.exit(1 if long else 0)
