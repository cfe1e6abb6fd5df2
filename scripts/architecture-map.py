#!/usr/bin/env python3
"""The map in ARCHITECTURE.md, checked by path (run by scripts/lint.sh): its tree is read
as paths (an entry's indentation places it under the nearest folder above it), and every
Rust file of the three crates must be an entry at its own path, every entry a file or
folder that exists. The wire folders listed on one line share the files their note names
("each: mod.rs ..., options.rs ..., response.rs ...; anthropic, ... also replay.rs ...").

    scripts/architecture-map.py            # the repository's map
    scripts/architecture-map.py MAP ROOT   # another map and tree (the lint's own test)
"""
import pathlib
import re
import sys

# An entry starts a line at an indentation of at most this (notes are indented deeper).
ENTRY_INDENT = 8
CRATES = ("core/src", "src", "lints/src")


def tree(text: str) -> str:
    """The first fenced block: the map."""
    m = re.search(r"```\n(.*?)```", text, re.S)
    return m.group(1) if m else ""


def entries(block: str):
    """(path, note) of every entry, the note being the entry's text and its continuation
    lines."""
    out, folders = [], []  # folders: (indent, [paths])
    current = None
    for line in block.split("\n"):
        m = re.match(r"^( *)(\S+(?: \S+/)*)(.*)$", line)
        if not m:
            continue
        indent, head, rest = len(m.group(1)), m.group(2), m.group(3)
        names = head.split(" ")
        if indent > ENTRY_INDENT or not all(n.endswith((".rs", "/")) or n == "lib.rs" for n in names):
            if current is not None:
                current[1].append(line.strip())
            continue
        while folders and folders[-1][0] >= indent:
            folders.pop()
        parents = folders[-1][1] if folders else [""]
        paths = [parent + n for parent in parents for n in names]
        current = (paths, [rest.strip()])
        out.append(current)
        if all(n.endswith("/") for n in names):
            folders.append((indent, paths))
    return [(paths, " ".join(note)) for paths, note in out]


def shared_files(folders: list[str], note: str) -> set[str]:
    """The files a line of several folders names for them: each one's, then each clause's
    "A, B and C also x.rs"."""
    out = set()
    clauses = note.split(";")
    each = re.search(r"each:(.*)", clauses[0])
    if each:
        for f in re.findall(r"\b(\w+\.rs)\b", each.group(1)):
            out |= {d + f for d in folders}
    for clause in clauses[1:]:
        m = re.match(r"\s*(.*?)\balso\b(.*)", clause)
        if not m:
            continue
        named = set(re.findall(r"\b(\w+)\b", m.group(1)))
        files = re.findall(r"\b(\w+\.rs)\b", m.group(2).split("(")[0])
        for d in folders:
            if d.rstrip("/").split("/")[-1] in named:
                out |= {d + f for f in files}
    return out


def check(map_text: str, root: pathlib.Path) -> list[str]:
    mapped, problems = set(), []
    for paths, note in entries(tree(map_text)):
        folders = [p for p in paths if p.endswith("/")]
        if len(folders) > 1:
            mapped |= shared_files(folders, note)
        for p in paths:
            mapped.add(p)
            if not (root / p).exists():
                problems.append(f"ARCHITECTURE.md names {p}, which does not exist")
    for crate in CRATES:
        for p in sorted((root / crate).rglob("*.rs")):
            rel = p.relative_to(root).as_posix()
            if rel not in mapped:
                problems.append(f"{rel} is not named in ARCHITECTURE.md at its path")
    for p in sorted(mapped):
        if p.endswith(".rs") and not (root / p).exists() and f"ARCHITECTURE.md names {p}, which does not exist" not in problems:
            problems.append(f"ARCHITECTURE.md names {p}, which does not exist")
    return problems


def main(argv):
    root = pathlib.Path(argv[1]) if len(argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    map_text = pathlib.Path(argv[0]).read_text() if argv else (root / "ARCHITECTURE.md").read_text()
    problems = check(map_text, root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
