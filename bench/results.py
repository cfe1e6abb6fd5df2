"""bench/RESULTS.md's sections: the compile benchmark (bench/bench.py report) rewrites the
file; the agent-run cache benchmark (bench/cache_runs.py) and the scale-out benchmark
(bench/scale_out.py) each write their own section, which the rewrite keeps."""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench/RESULTS.md"
OUT = ROOT / "bench/out"


def write_section(name: str, head: str, section: list) -> None:
    """Replaces the section that starts with `head` (or appends it), and keeps a copy in
    bench/out/NAME.md for the next rewrite."""
    OUT.mkdir(exist_ok=True)
    (OUT / f"{name}.md").write_text("\n".join(section) + "\n")
    text = RESULTS.read_text() if RESULTS.exists() else "# pgprompt benchmark results\n"
    if head in text:
        before, rest = text.split(head, 1)
        after = rest[rest.index("\n## "):] if "\n## " in rest else ""
        text = before + "\n".join(section) + "\n" + after
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(section) + "\n"
    RESULTS.write_text(text)


def saved_section(name: str, head: str) -> list:
    """The section as last written here (bench/out/NAME.md), else as RESULTS.md holds it
    (measured on another machine or day), else nothing; with a blank line before it."""
    path = OUT / f"{name}.md"
    if path.exists():
        text = path.read_text()
    elif RESULTS.exists() and head in RESULTS.read_text():
        rest = RESULTS.read_text().split(head, 1)[1]
        text = head + (rest[: rest.index("\n## ")] if "\n## " in rest else rest)
    else:
        return []
    return [""] + text.rstrip("\n").split("\n")
