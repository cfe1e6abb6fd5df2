#!/usr/bin/env python3
"""Every file that names pgprompt's version agrees with Cargo.toml (run by scripts/lint.sh):
the core and lints crates, META.json (its version and its file), the README's install section,
docs/cloudnativepg.md, the frozen release script, the newest update script, and the version
the package names are built from. Prints what disagrees and exits 1."""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def cargo_version(path):
    return re.search(r'^version = "([^"]+)"', (ROOT / path).read_text(), re.M).group(1)


def main():
    v = cargo_version("Cargo.toml")
    wrong = []
    for crate in ("core/Cargo.toml", "lints/Cargo.toml"):
        if cargo_version(crate) != v:
            wrong.append(f"{crate} says {cargo_version(crate)}")
    meta = json.loads((ROOT / "META.json").read_text())
    provided = meta["provides"]["pgprompt"]
    for what, found in (("version", meta["version"]), ("provides.pgprompt.version", provided["version"]),
                        ("provides.pgprompt.file", provided["file"])):
        if v not in found:
            wrong.append(f"META.json {what} says {found}")
    if not (ROOT / provided["file"]).exists():
        wrong.append(f"META.json names {provided['file']}, which is not there")
    if not (ROOT / f"sql/releases/pgprompt--{v}.sql").exists():
        wrong.append(f"sql/releases/pgprompt--{v}.sql is missing (the frozen install script)")
    updates = sorted((p.name for p in (ROOT / "sql").glob("pgprompt--*--*.sql")),
                     key=lambda n: [int(x) for x in n.split("--")[2][:-4].split(".")])
    if not updates or not updates[-1].endswith(f"--{v}.sql"):
        wrong.append(f"the newest update script is {updates[-1] if updates else 'none'}, not one to {v}")
    for path in ("README.md", "docs/cloudnativepg.md"):
        p = ROOT / path
        if not p.exists():
            continue
        text = p.read_text()
        # Names of artifacts and images that carry a version (postgresql-15-pgprompt_X_amd64.deb,
        # pgprompt-X-pg18-…, pgprompt:X, pgprompt-extension:X).
        for m in re.finditer(r"(?:pgprompt_|pgprompt-|pgprompt:|pgprompt-extension:)(\d+\.\d+\.\d+)", text):
            if m.group(1) != v:
                line = text[: m.start()].count("\n") + 1
                wrong.append(f"{path}:{line} names {m.group(0)}")
    if wrong:
        print(f"version {v} (Cargo.toml) is not what every file says:", *wrong, sep="\n  ")
        return 1
    print(f"version {v}: every file agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
