"""The prompt-cache simulator: what a provider's prefix cache can serve, turn after turn,
over a 2,000-turn conversation of ~1 KB exchanges on a 120,000-token window, for three
ways of trimming history side by side in one run:

- pgprompt, newest-first trimming (the default);
- pgprompt, stable trimming (`"trim": "stable"`, `low_water` 0.7);
- the application-side peer: the same messages trimmed by langchain_core's
  `trim_messages(strategy="last")` to the same history allowance.

For every turn the request is compiled (pgprompt: `compile_turn`, which seals it, as an
application would), and compared with the previous turn's request: the longest common
prefix, in tokens, of their parts (role and content, cache markers ignored) is what a
prefix cache can serve. Input cost uses published relative prices: a token read from
cache costs 0.1, a token written to it 1.25 (everything not served is written: the
request's breakpoints cover it all but the newest words).

    bench/run.sh cache      # one command; or, with a cluster running:
    python3 bench/cache_sim.py

Writes bench/out/cache.json (read by bench.py report into RESULTS.md) and
bench/cache.png (cached share per turn).
"""
import json
import pathlib
import random
import sys
import time

import psycopg

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/python"))
sys.path.insert(0, str(ROOT / "bench"))
from tiktoken_offline import encoding  # noqa: E402
from bench import WORDS, connect  # noqa: E402

DB = "pgprompt_cache"
TURNS = 2000
WINDOW = 120_000
LOW_WATER = 0.7
READ, WRITE = 0.1, 1.25
WS = "00000000-0000-4000-8000-0000000ca001"
ADA = "00000000-0000-4000-8000-0000000ca101"
NEWEST = "00000000-0000-4000-8000-0000000ca102"
STABLE = "00000000-0000-4000-8000-0000000ca103"
CONV = {"newest": "00000000-0000-4000-8000-0000000cac01", "stable": "00000000-0000-4000-8000-0000000cac02"}
AGENT = {"newest": NEWEST, "stable": STABLE}
ENC = encoding("cl100k_base")


def count(text: str) -> int:
    return len(ENC.encode(text, disallowed_special=()))


def words(rng: random.Random, size: int) -> str:
    out, n = [], 0
    while n < size:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)[:size]


def template(trim: str) -> str:
    budget = {"trim": trim, "low_water": LOW_WATER} if trim == "stable" else {}
    return json.dumps({"blocks": [
        {"type": "slot", "slot": "system_prompt"},
        {"type": "memory"},
        {"type": "history", "budget": budget},
        {"type": "input"},
    ]})


def setup(admin) -> psycopg.Connection:
    admin.execute(f"DROP DATABASE IF EXISTS {DB}")
    admin.execute(f"CREATE DATABASE {DB}")
    c = connect(DB)
    c.execute("CREATE EXTENSION pgprompt")
    c.execute("INSERT INTO prompt.models (name, wire, advisory_window) VALUES ('sim', 'anthropic', %s)", (WINDOW,))
    c.execute("INSERT INTO prompt.workspaces (id, name) VALUES (%s, 'Sim')", (WS,))
    c.execute("INSERT INTO prompt.users (id, handle, display_name, kind) VALUES (%s, 'ada', 'Ada', 'human')", (ADA,))
    rng = random.Random(7)
    system = words(rng, 1500)
    for name, agent in AGENT.items():
        c.execute(
            "INSERT INTO prompt.users (id, handle, display_name, kind, model, prompt_mechanism, prompt_template) "
            "VALUES (%s, %s, %s, 'agent', 'sim', 'assembly', %s)",
            (agent, f"agent_{name}", name, template(name)),
        )
        c.execute("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, 'system_prompt', %s)", (agent, system))
        c.execute(
            "INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)",
            (CONV[name], WS, agent, ADA),
        )
    return c


def parts(body: dict) -> list:
    """The request as a list of (role, content) parts, cache markers dropped, and each
    part's tokens."""
    out = []
    for b in body.get("system", []):
        out.append(("system", b["text"]))
    for m in body["messages"]:
        for p in m["content"]:
            out.append((m["role"], p.get("text", json.dumps({k: v for k, v in p.items() if k != "cache_control"}))))
    return out


class Tracker:
    """The longest common prefix of consecutive requests, in tokens, and the cost."""

    def __init__(self):
        self.prev, self.rows, self.counts = [], [], {}

    def tokens(self, part) -> int:
        if part not in self.counts:
            self.counts[part] = count(part[1]) + 1
        return self.counts[part]

    def add(self, ps: list, history_tokens: int, allowance: int, trimmed: bool = False):
        total = sum(self.tokens(p) for p in ps)
        read = 0
        for a, b in zip(self.prev, ps):
            if a != b:
                break
            read += self.tokens(b)
        self.prev = ps
        self.rows.append({"total": total, "read": read, "history": history_tokens, "allowance": allowance,
                          "trimmed": trimmed})


def summary(rows: list) -> dict:
    total = sum(r["total"] for r in rows)
    read = sum(r["read"] for r in rows)
    cost = sum(READ * r["read"] + WRITE * (r["total"] - r["read"]) for r in rows)
    used = [r["history"] / r["allowance"] for r in rows if r["allowance"]]
    return {
        "total_tokens": total,
        "cached_tokens": read,
        "cached_share": read / total if total else 0.0,
        "cost": cost,
        "history_use": sum(used) / len(used) if used else 0.0,
    }


def simulate():
    with connect("postgres") as admin:
        c = setup(admin)
    rng = random.Random(11)
    exchanges = [(words(rng, 500), words(rng, 500)) for _ in range(TURNS)]
    trackers = {"newest": Tracker(), "stable": Tracker(), "langchain": Tracker()}
    peer = Peer()
    start = time.time()
    for i, (prompt, answer) in enumerate(exchanges):
        for name in ("newest", "stable"):
            turn = f"00000000-0000-4000-8000-{i + 1:04x}0000{1 if name == 'newest' else 2:04x}"
            c.execute(
                "INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt) VALUES (%s, %s, 'reply', %s, %s)",
                (CONV[name], turn, ADA, prompt),
            )
            body = c.execute("SELECT prompt.compile_turn(%s, %s)", (CONV[name], turn)).fetchone()[0]
            h = c.execute("SELECT prompt.explain_turn(%s, %s) -> 'estimate' -> 'history'", (CONV[name], turn)).fetchone()[0]
            trackers[name].add(parts(body), h["tokens"], h["budget"] or 0, h["selected"] < h["available"])
            c.execute("UPDATE prompt.turns SET content = %s WHERE conversation_id = %s AND id = %s", (answer, CONV[name], turn))
            if name == "newest":
                allowance, system = h["budget"] or 0, body["system"]
        ps, used = peer.request(system, prompt, allowance)
        trackers["langchain"].add(ps, used, allowance)
        peer.answer(prompt, answer)
        if (i + 1) % 250 == 0:
            print(f"cache: {i + 1} turns ({time.time() - start:.0f} s)", file=sys.stderr)
    return {name: t.rows for name, t in trackers.items()}


class Peer:
    """The application-side compiler: the whole conversation in memory, trimmed by
    langchain_core's trim_messages (strategy "last") to the history allowance."""

    def __init__(self):
        from langchain_core.messages import AIMessage, HumanMessage, trim_messages

        self.ai, self.human, self.trim = AIMessage, HumanMessage, trim_messages
        self.history = []
        self.counts = {}

    def counter(self, messages) -> int:
        total = 0
        for m in messages:
            key = (m.type, m.content)
            if key not in self.counts:
                self.counts[key] = count(m.content) + 3
            total += self.counts[key]
        return total

    def request(self, system, prompt, allowance):
        kept = self.trim(self.history, max_tokens=allowance, token_counter=self.counter,
                         strategy="last", start_on="human", allow_partial=False)
        used = self.counter(kept)
        ps = [("system", b["text"]) for b in system]
        ps += [("user" if m.type == "human" else "assistant", m.content) for m in kept]
        ps.append(("user", prompt))
        return ps, used

    def answer(self, prompt, answer):
        self.history += [self.human(content=prompt), self.ai(content=answer)]


def first_trim(newest: list) -> int:
    """The index of the first turn whose history newest-first trimming cut."""
    return next((i for i, r in enumerate(newest) if r["trimmed"]), len(newest))


def plot(rows: dict, path: pathlib.Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=110)
    for name, style in (("newest", "-"), ("stable", "-"), ("langchain", ":")):
        share = [r["read"] / r["total"] for r in rows[name]]
        ax.plot(range(1, len(share) + 1), share, style, linewidth=1, label=name)
    ax.set_xlabel("turn")
    ax.set_ylabel("share of input tokens served from cache")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Prefix-cache share per turn, {TURNS} turns of ~1 KB, {WINDOW:,}-token window")
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(path)


def main():
    rows = simulate()
    out = {name: summary(r) for name, r in rows.items()}
    below = first_trim(rows["newest"])
    for name in rows:
        out[name]["below_window_cached_share"] = summary(rows[name][:below])["cached_share"]
    out["first_trim_turn"] = below + 1
    out["turns"], out["window"], out["low_water"] = TURNS, WINDOW, LOW_WATER
    (ROOT / "bench/out").mkdir(exist_ok=True)
    (ROOT / "bench/out/cache.json").write_text(json.dumps(out, indent=1))
    plot(rows, ROOT / "bench/cache.png")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
