#!/usr/bin/env python3
"""Fails when a Rust file of either crate is not named in ARCHITECTURE.md (the map lists
every file: by its path under its crate's `src/`, or, inside a folder the map lists file
by file, by its name; a wire's `mod.rs`, `options.rs` and `response.rs` are named once for
every wire folder).

    scripts/architecture-map.py
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAP = (ROOT / "ARCHITECTURE.md").read_text()
# Named once for all five wire folders ("each: mod.rs (...), options.rs (...), response.rs").
PER_WIRE = {"mod.rs", "options.rs", "response.rs"}

missing = []
for crate in ("core/src", "src"):
    for p in sorted((ROOT / crate).rglob("*.rs")):
        rel = p.relative_to(ROOT / crate)
        parts = rel.parts
        in_wire_folder = crate == "core/src" and len(parts) == 3 and parts[0] == "wire"
        if str(rel) in MAP or p.name == "mod.rs" or (in_wire_folder and p.name in PER_WIRE):
            continue
        if len(parts) > 1 and p.name in MAP:
            continue
        missing.append(f"{crate}/{rel}")
for m in missing:
    print(f"{m} is not named in ARCHITECTURE.md")
sys.exit(1 if missing else 0)
