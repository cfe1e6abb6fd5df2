"""No match on a wire ends in a wildcard: in every `match` whose scrutinee
names a wire (`wire`, `self.wire`, `frozen.wire`, `(wire, ...)`, a `Wire`), no arm of its
own is `_`; a new wire is then a compile error wherever it must be decided. Heuristic,
on the source text: scrutinees are read up to the match's `{`, arms at the match's
own depth. And a wire is a place: outside `core/src/wire/` (its folders and
the trait `Form` they implement) and `core/src/kinds.rs` (where `Wire` is declared), no
code names a wire's variant (`Wire::Anthropic`, ...): the rest of the core asks the
wire's form. And in the wire folder, no match on a part's kind (one whose arms name
`PartKind::`) ends in a wildcard: each wire names every kind it renders, sends or leaves
out, so a new kind is a compile error wherever a wire must decide it, never a silent
drop. Tests aside. Usage: wire-matches.py DIR..."""
import pathlib
import re
import sys

MATCH = re.compile(r"\bmatch\s+([^{;]*?)\s*\{")


def arms_wildcard(text: str, start: int) -> list[int]:
    """Offsets of `_ =>` / `_ if` arms at depth 1 of the block opening at `start`."""
    return [i for i in arm_heads(text, start) if re.match(r"_\s*(=>|if\b)", text[i:])]


def arm_heads(text: str, start: int) -> list[int]:
    """Offsets where each arm's pattern starts, at depth 1 of the block opening at `start`."""
    depth, i, out = 0, start, []
    at_arm_start = True
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        char = re.match(r"'(\\.|[^\\'])'", text[i:]) if c == "'" else None
        if char:
            i += char.end()
            continue
        if text.startswith("//", i):
            i = text.index("\n", i)
            continue
        if c in "{([":
            if depth == 1 and at_arm_start and c in "([":
                # An arm whose pattern opens with a tuple or a slice.
                out.append(i)
                at_arm_start = False
            depth += 1
        elif c in "})]":
            depth -= 1
            if depth == 0:
                return out
        elif depth == 1:
            if c == "," or c == "{":
                at_arm_start = True
            elif not c.isspace():
                if at_arm_start:
                    out.append(i)
                at_arm_start = False
        if depth == 1 and c == "}":
            at_arm_start = True
        i += 1
    return out


def elements(text: str) -> list[str]:
    """The elements of a tuple `(a, b, ...)` at `text`'s start, split at its own commas."""
    depth, out, start = 0, [], 1
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                out.append(text[start:i].strip())
                return out
        elif c == "," and depth == 1:
            out.append(text[start:i].strip())
            start = i + 1
    return out


def tuple_wildcards(text: str, scrutinee: str, heads: list[int]) -> list[int]:
    """Offsets of the arms of a match on a tuple, `match (wire, other)`, whose pattern
    takes any wire in the wire's place (`(_, Some(p)) =>`): a wildcard on the wire as
    surely as `_ =>`."""
    if not scrutinee.startswith("("):
        return []
    places = [i for i, e in enumerate(elements(scrutinee)) if re.search(r"\bwire\b|\bshape\b", e)]
    out = []
    for h in heads:
        if text[h] != "(":
            continue
        pattern = elements(text[h:])
        if any(i < len(pattern) and re.fullmatch(r"_|\w+ @ _|\.\.", pattern[i]) for i in places):
            out.append(h)
    return out


# A variant is CamelCase (`Wire::Converse`); `Wire::ALL` and `Wire::DEFAULT` are not
# variants. A new wire needs no edit here.
VARIANT = re.compile(r"\bWire::[A-Z][a-z]\w*\b")


def placed(path: pathlib.Path) -> bool:
    """Whether `path` may name a wire's variant: the wire folder and the enum's file."""
    parts = path.as_posix()
    return "/core/src/wire/" in "/" + parts or parts.endswith("core/src/kinds.rs")


def main(dirs):
    bad = []
    for d in dirs:
        for path in sorted(pathlib.Path(d).rglob("*.rs")):
            text = path.read_text()
            cut = text.find("#[cfg(test)]")
            body = text if cut < 0 else text[:cut]
            if not placed(path) and path.name != "testing.rs":
                for m in VARIANT.finditer(body):
                    line = body.count("\n", 0, m.start()) + 1
                    bad.append(f"{path}:{line}: names {m.group(0)} outside core/src/wire/ (ask the wire's form)")
            for m in MATCH.finditer(body):
                scrutinee = m.group(1)
                heads = arm_heads(body, m.end() - 1)
                if placed(path) and any(re.match(r"&?\s*PartKind::", body[i:]) for i in heads):
                    for off in arms_wildcard(body, m.end() - 1):
                        line = body.count("\n", 0, off) + 1
                        bad.append(f"{path}:{line}: a match on a part's kind (`{scrutinee}`) ends in a wildcard arm")
                if not re.search(r"\bwire\b|\bshape\b", scrutinee):
                    continue
                for off in arms_wildcard(body, m.end() - 1) + tuple_wildcards(body, scrutinee, heads):
                    line = body.count("\n", 0, off) + 1
                    bad.append(f"{path}:{line}: a match on `{scrutinee}` ends in a wildcard arm")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
