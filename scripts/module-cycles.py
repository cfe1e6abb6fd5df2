#!/usr/bin/env python3
"""Fails when the files of a crate import each other in a cycle (comments and test
modules aside). The graph is per file: a path (`crate::a::b::item`, `super::x`,
`self::x`, or a child module's name) is an edge to the file that defines the longest
module prefix of it; a `use` tree's braces are expanded first. A parent module that
declares a child (`mod x;`) does not depend on it by that alone.

    scripts/module-cycles.py core/src [src ...]
"""
import pathlib
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_of(root, p):
    parts = list(p.relative_to(root).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def strip(code):
    code = code.split("#[cfg(test)]")[0]
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    lines = []
    for line in code.split("\n"):
        # Comments, and string literals on the line (crude but enough for paths).
        line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        lines.append(line.split("//")[0])
    return "\n".join(lines)


def expand(tree):
    """A use tree (`a::{b, c::{d, e}}`) as its paths."""
    tree = tree.strip()
    depth, start = 0, None
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
    if start is None:
        return [tree]
    prefix = tree[:start].rstrip(":").strip()
    inner = tree[start + 1:tree.rindex("}")]
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    items.append(cur)
    out = []
    for item in items:
        if item.strip():
            for sub in expand(item):
                out.append(f"{prefix}::{sub}" if prefix else sub)
    return out


def main(root):
    root = pathlib.Path(root)
    files = {module_of(root, p): p for p in root.rglob("*.rs")}
    files = {m: p for m, p in files.items() if not (m and m[0] == "testing")}
    graph = {}
    for mod, p in files.items():
        code = strip(p.read_text())
        children = set(re.findall(rf"^\s*(?:pub(?:\([a-z]+\))?\s+)?mod ({IDENT})\s*;", code, flags=re.M))
        paths = []
        for tree in re.findall(r"\buse\s+([^;]+);", code, flags=re.S):
            paths += [x.split(" as ")[0].strip() for x in expand(re.sub(r"\s+", " ", tree))]
        paths += re.findall(rf"\b(?:crate|super|self)(?:::{IDENT})+", code)
        paths += [m.group(0) for c in children for m in re.finditer(rf"(?<![:\w]){c}(?:::{IDENT})+", code)]
        deps = set()
        for path in paths:
            segs = [s for s in path.split("::") if s]
            if not segs:
                continue
            if segs[0] == "crate":
                base, segs = (), segs[1:]
            elif segs[0] == "super":
                # A file's `super` is its parent module (for a mod.rs, the folder's parent).
                base, segs = mod[:-1], segs[1:]
                while segs and segs[0] == "super":
                    base, segs = base[:-1], segs[1:]
            elif segs[0] == "self":
                base, segs = mod, segs[1:]
            elif segs[0] in children:
                base = mod
            else:
                continue
            target = base
            for i in range(len(segs), 0, -1):
                if base + tuple(segs[:i]) in files:
                    target = base + tuple(segs[:i])
                    break
            if target != mod and target in files:
                deps.add(target)
        graph[mod] = deps
    return graph


def cycles(graph):
    found, color, stack = [], {}, []

    def visit(u):
        color[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if color.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif not color.get(v):
                visit(v)
        stack.pop()
        color[u] = 2

    for u in sorted(graph):
        if not color.get(u):
            visit(u)
    return found


def name(root, mod):
    return str(pathlib.Path(root, *mod)) if mod else f"{root}/lib"


status = 0
for root in sys.argv[1:]:
    for cycle in cycles(main(root)):
        print("file cycle: " + " -> ".join(name(root, m) for m in cycle), file=sys.stderr)
        status = 1
sys.exit(status)
