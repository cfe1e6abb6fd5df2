#!/usr/bin/env python3
"""Fails when the compiler core's modules import each other in a cycle (comments and
test modules aside): the core is layered, kinds and rows at the bottom, compile and
the wires at the top.

    scripts/module-cycles.py core/src
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
graph = {}
for p in root.rglob("*.rs"):
    name = str(p.relative_to(root).with_suffix("")).replace("/mod", "")
    top = name.split("/")[0]
    if top in ("lib", "testing"):
        continue
    code = p.read_text().split("#[cfg(test)]")[0]
    code = "\n".join(line for line in code.split("\n") if not line.lstrip().startswith("//"))
    deps = set(re.findall(r"crate::([a-z_]+)", code))
    graph.setdefault(top, set()).update(d for d in deps if d not in (top, "testing"))

found, color, stack = [], {}, []


def visit(u):
    color[u] = 1
    stack.append(u)
    for v in sorted(graph.get(u, ())):
        if color.get(v) == 1:
            found.append(stack[stack.index(v):] + [v])
        elif v in graph and not color.get(v):
            visit(v)
    stack.pop()
    color[u] = 2


for u in sorted(graph):
    if not color.get(u):
        visit(u)
for cycle in found:
    print("module cycle: " + " -> ".join(cycle), file=sys.stderr)
sys.exit(1 if found else 0)
