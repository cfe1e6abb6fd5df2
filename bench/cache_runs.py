"""The prompt-cache benchmark over agent runs (issue 28): 200 turns, each a run of 20
rounds (a tool call and a ~1 KB result each) and a final answer, through pgprompt's
response loop on the anthropic wire (compile_turn, record_response,
record_tool_results), every request run through Anthropic's documented cache rules
(tests/python/cache_rules.py: the prefix up to a breakpoint, the 20-block lookback, the
minimum prefix, the 5-minute TTL) — beside the same agent written the way a LangChain user
would: the whole message list trimmed by langchain_core's trim_messages (strategy "last")
to the same history allowance, with the last message marked for caching (what
langchain's AnthropicPromptCachingMiddleware does).

Reports the share of input tokens served from cache and the input cost relative to no
caching (read 0.1, write 1.25, uncached 1), and checks that prompt.cache_report predicts
the same reads as the simulator on every request pgprompt sent.

    bench/run.sh runs       # one command; or, with a cluster running:
    python3 bench/cache_runs.py [TURNS [ROUNDS]]

Writes bench/out/cache_runs.json, its section of bench/RESULTS.md, and
bench/cache_runs.png.
"""
import json
import pathlib
import random
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEAD = "## Prompt cache over agent runs"
sys.path.insert(0, str(ROOT / "tests/python"))
sys.path.insert(0, str(ROOT / "bench"))
from bench import WORDS, connect  # noqa: E402
from cache_optimum import cost, optimum  # noqa: E402
from cache_rules import Blocks, Provider  # noqa: E402
from results import write_section  # noqa: E402
from tiktoken_offline import encoding  # noqa: E402

DB = "pgprompt_cache_runs"
TURNS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
WINDOW = 120_000
# History's cap: the rest of the window is the run's room (its rounds are appended to the
# sealed first request, whose history was chosen before they existed).
HISTORY = 96_000
MINIMUM = 1024  # Anthropic's minimum cacheable prefix for a model without a profile here
# The wires the placement is measured on: the model row, and the cache's rules (TTL,
# lookback in blocks). OpenAI's explicit breakpoints: a Responses model whose profile
# takes them (the shipped gpt-5.6-sol), 1024-token minimum, 30-minute TTL, no lookback limit.
WIRES = {"anthropic": {"model": "sim", "profile": None, "ttl": 300, "lookback": 20},
         "responses": {"model": "sim-openai", "profile": "gpt-5.6-sol", "ttl": 1800, "lookback": None}}
READ, WRITE = 0.1, 1.25
WS, ADA, AGENT = ("00000000-0000-4000-8000-0000000cb001", "00000000-0000-4000-8000-0000000cb101",
                  "00000000-0000-4000-8000-0000000cb102")
CONV = "00000000-0000-4000-8000-0000000cbc01"
TOOLS = [{"name": "lookup", "description": "Look a record up.",
          "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}]
ENC = encoding("cl100k_base")
COUNTS = {}


def count(text: str) -> int:
    if text not in COUNTS:
        COUNTS[text] = len(ENC.encode(text, disallowed_special=()))
    return COUNTS[text]


def words(rng, size):
    out, n = [], 0
    while n < size:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)[:size]


def setup(admin, wire: str = "anthropic"):
    admin.execute(f"DROP DATABASE IF EXISTS {DB}")
    admin.execute(f"CREATE DATABASE {DB}")
    c = connect(DB)
    c.execute("CREATE EXTENSION pgprompt")
    model = WIRES[wire]
    c.execute("INSERT INTO prompt.models (name, wire, advisory_window, profile) VALUES (%s, %s, %s, %s)",
              (model["model"], wire, WINDOW, model["profile"]))
    c.execute("INSERT INTO prompt.workspaces (id, name) VALUES (%s, 'Sim')", (WS,))
    c.execute("INSERT INTO prompt.users (id, handle, display_name, kind) VALUES (%s, 'ada', 'Ada', 'human')", (ADA,))
    template = json.dumps({"blocks": [{"type": "slot", "slot": "system_prompt"},
                                      {"type": "history", "budget": {"trim": "stable", "low_water": 0.7,
                                                                                 "max_tokens": HISTORY}},
                                      {"type": "input"}]})
    c.execute("INSERT INTO prompt.users (id, handle, display_name, kind, model, prompt_mechanism, prompt_template) "
              "VALUES (%s, 'agent', 'Agent', 'agent', %s, 'assembly', %s)", (AGENT, model["model"], template))
    c.execute("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, 'system_prompt', %s)",
              (AGENT, words(random.Random(7), 6000)))
    c.execute("INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)",
              (CONV, WS, AGENT, ADA))
    return c


def message(rid, content, stop):
    return {"id": rid, "type": "message", "role": "assistant", "model": "sim", "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}


def response(wire: str, rid: str, call=None, text=None) -> dict:
    """The model's answer on `wire`: a tool call (`call`, Anthropic's tool_use block) or text."""
    if wire == "anthropic":
        if call:
            return message(rid, [call], "tool_use")
        return message(rid, [{"type": "text", "text": text}], "end_turn")
    if call:
        output = [{"type": "function_call", "id": f"fc_{rid}", "call_id": call["id"], "name": call["name"],
                   "arguments": json.dumps(call["input"]), "status": "completed"}]
    else:
        output = [{"type": "message", "id": f"msg_{rid}", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]}]
    return {"id": f"resp_{rid}", "object": "response", "created_at": 0, "status": "completed", "model": "sim-openai",
            "output": output, "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}


class Peer:
    """The LangChain agent: every message in memory, trimmed to the allowance, the last
    block marked."""

    def __init__(self, system):
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, trim_messages

        self.AI, self.Human, self.Tool, self.trim = AIMessage, HumanMessage, ToolMessage, trim_messages
        self.system, self.messages, self.sizes = system, [], []

    def add(self, m):
        self.messages.append(m)
        text = m.content if isinstance(m.content, str) else json.dumps(m.content)
        self.sizes.append(count(text) + 3 + sum(count(json.dumps(t["args"])) + 10 for t in getattr(m, "tool_calls", [])))

    def counter(self, messages):
        return sum(self.size[id(m)] for m in messages)

    def request(self, allowance):
        # trim_messages is quadratic in the list it is given; the tail that can fit (and one
        # more message) gives it the same answer.
        tail, total = len(self.messages), 0
        while tail > 0 and total <= allowance:
            tail -= 1
            total += self.sizes[tail]
        window = self.messages[max(0, tail - 1):]
        self.size = {id(m): s for m, s in zip(window, self.sizes[max(0, tail - 1):])}
        kept = self.trim(window, max_tokens=allowance, token_counter=self.counter, strategy="last",
                         start_on="human", allow_partial=False)
        messages = []
        for m in kept:
            if m.type == "human":
                role, blocks = "user", [{"type": "text", "text": m.content}]
            elif m.type == "tool":
                role, blocks = "user", [{"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}]
            else:
                role = "assistant"
                blocks = ([{"type": "text", "text": m.content}] if m.content else []) + [
                    {"type": "tool_use", "id": t["id"], "name": t["name"], "input": t["args"]} for t in m.tool_calls]
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"] += blocks
            else:
                messages.append({"role": role, "content": blocks})
        if messages:
            messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
        return {"model": "sim", "max_tokens": 4096, "system": [{"type": "text", "text": self.system}],
                "messages": messages, "tools": TOOLS}


def simulate(rounds: int = ROUNDS, wire: str = "anthropic"):
    """The benchmark's conversation with `rounds` rounds a turn (0: a chat, each turn a
    direct reply without tools) on `wire`: the simulator's rows for pgprompt and (on
    anthropic) its peer, the cache report, how long it took, and pgprompt's requests
    (blocks, when sent)."""
    with connect("postgres") as admin:
        c = setup(admin, wire)
    rng = random.Random(11)
    rules = WIRES[wire]
    ours, theirs = Provider(MINIMUM, rules["ttl"], rules["lookback"]), Provider(MINIMUM)
    rows = {"pgprompt": [], "langchain": []}
    sent = []
    peer, start, allowance = None, time.time(), None

    def send(body, at):
        blocks = Blocks(body, count, wire)
        sent.append((blocks, at))
        rows["pgprompt"].append(ours.send(blocks, at))

    mode, tools = ("run", json.dumps(TOOLS)) if rounds else ("direct_reply", None)
    for i in range(TURNS):
        turn = f"00000000-0000-4000-8000-{i + 1:08x}0001"
        prompt = words(rng, 500)
        c.execute("INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, mode, tools) "
                  "VALUES (%s, %s, 'reply', %s, %s, %s, %s)", (CONV, turn, ADA, prompt, mode, tools))
        body = c.execute("SELECT prompt.compile_turn(%s, %s)", (CONV, turn)).fetchone()[0]
        if peer is None and wire == "anthropic":
            peer = Peer(body["system"][0]["text"])
        h = c.execute("SELECT prompt.explain_turn(%s, %s) -> 'estimate' -> 'history'", (CONV, turn)).fetchone()[0]
        allowance = h["budget"] or allowance or WINDOW // 2
        send(body, time.time())
        if peer:
            peer.add(peer.Human(content=prompt))
            rows["langchain"].append(theirs.send(Blocks(peer.request(allowance), count), time.time()))
        for r in range(1, rounds + 1):
            call = {"type": "tool_use", "id": f"toolu_{i:04d}_{r:02d}", "name": "lookup", "input": {"q": f"record {i}.{r}"}}
            c.execute("SELECT prompt.record_response(%s, %s, %s)",
                      (CONV, turn, json.dumps(response(wire, f"{i:04d}_{r:02d}", call=call))))
            result = words(rng, 1000)
            c.execute("SELECT prompt.record_tool_results(%s, %s, %s)",
                      (CONV, turn, json.dumps([{"call_id": call["id"], "content": result}])))
            body = c.execute("SELECT prompt.compile_turn(%s, %s)", (CONV, turn)).fetchone()[0]
            send(body, time.time())
            if peer:
                peer.add(peer.AI(content="", tool_calls=[{"id": call["id"], "name": "lookup", "args": call["input"]}]))
                peer.add(peer.Tool(content=result, tool_call_id=call["id"]))
                rows["langchain"].append(theirs.send(Blocks(peer.request(allowance), count), time.time()))
        final = words(rng, 500)
        c.execute("SELECT prompt.record_response(%s, %s, %s)",
                  (CONV, turn, json.dumps(response(wire, f"{i:04d}_final", text=final))))
        if peer:
            peer.add(peer.AI(content=final))
        if (i + 1) % 20 == 0:
            print(f"runs: {i + 1} turns ({time.time() - start:.0f} s)", file=sys.stderr)
    began = time.time()
    report = c.execute("SELECT predicted_cache_read, predicted_cache_write, input_tokens "
                       "FROM prompt.cache_report(%s)", (CONV,)).fetchall()
    took = time.time() - began
    return rows, report, took, sent


def summary(rows):
    total = sum(r["input_tokens"] for r in rows)
    read = sum(r["predicted_cache_read"] for r in rows)
    write = sum(r["predicted_cache_write"] for r in rows)
    cost = READ * read + WRITE * write + (total - read - write)
    return {"requests": len(rows), "input_tokens": total, "cache_read": read, "cache_write": write,
            "cached_share": read / total if total else 0.0, "relative_cost": cost / total if total else 0.0}


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=110)
    for name, style in (("pgprompt", "-"), ("langchain", ":")):
        share = [r["predicted_cache_read"] / r["input_tokens"] for r in rows[name]]
        ax.plot(range(1, len(share) + 1), share, style, linewidth=0.8, label=name)
    ax.set_xlabel("request (model call)")
    ax.set_ylabel("share of input tokens read from cache")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Agent runs: {TURNS} turns x {ROUNDS} rounds of ~1 KB results, {WINDOW:,}-token window")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path)


def lines(out):
    p, lc = out["pgprompt"], out["langchain"]
    text = [
        HEAD,
        "",
        f"`bench/cache_runs.py`: {out['turns']} turns on the anthropic wire, each a run of {out['rounds']} rounds "
        "(a tool call and a ~1 KB result) and a final answer, through compile_turn, record_response and "
        f"record_tool_results, on a {out['window']:,}-token window, history capped at {out.get('history', HISTORY):,} "
        "(the rest is the run's room) with stable trimming; every request run through "
        "Anthropic's documented cache rules (`tests/python/cache_rules.py`: prefix up to a breakpoint, 20-block "
        f"lookback, {out['minimum']}-token minimum, 5-minute TTL). The peer: the same agent's messages trimmed by "
        "langchain_core's `trim_messages` (strategy last) to the same allowance, the last message marked for caching "
        "(what langchain's `AnthropicPromptCachingMiddleware` does). Cost: read 0.1, write 1.25, uncached 1, "
        "relative to no caching. Plot: `bench/cache_runs.png`.",
        "",
        "| requests by | requests | input tokens | read from cache | written | cached share | cost / no caching |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, v in (("pgprompt", p), ("LangChain trim_messages + last-message cache mark", lc)):
        text.append(f"| {label} | {v['requests']:,} | {v['input_tokens']:,} | {v['cache_read']:,} | "
                    f"{v['cache_write']:,} | {v['cached_share']:.3f} | {v['relative_cost']:.3f} |")
    targets = [("pgprompt: share of input tokens read from cache", p["cached_share"], ">= 0.95"),
               ("pgprompt: input cost / no caching", p["relative_cost"], "<= 0.15"),
               ("cache_report's predicted reads equal the simulator's, requests", out["report_agrees"], f"== {p['requests']}")]
    text += ["", "| ratio | value | target | |", "|---|---:|---|---|"]
    for label, v, target in targets:
        met = (v >= float(target[2:]) if target.startswith(">=") else v <= float(target[2:])
               if target.startswith("<=") else v == int(target[2:]))
        text.append(f"| {label} | {v:.3f} | {target} | {'met' if met else 'MISSED'} |" if isinstance(v, float)
                    else f"| {label} | {v} | {target} | {'met' if met else 'MISSED'} |")
    text += ["", f"`cache_report` over the {p['requests']:,} requests took {out['report_seconds']:.1f} s."]
    if "placements" in out:
        text += placement_lines(out)
    return text


def placement_lines(out):
    """pgprompt's breakpoints against the offline optimum (bench/cache_optimum.py)."""
    text = ["", "### The cheapest cache writes", "",
            "The requests pgprompt sent, against an offline optimum placement of breakpoints that knows every "
            "later request (`bench/cache_optimum.py`: the rules relaxed — a breakpoint after any block, no "
            "lookback or breakpoint limit, so a lower bound of the real optimum; checked against an exhaustive "
            "search by `tests/python/test_cache_optimum.py`). Runs: the benchmark above; chat: the same "
            f"{out['turns']} turns as direct replies without tools or rounds. OpenAI explicit: the Responses wire "
            "with the shipped gpt-5.6-sol profile (`prompt_cache_breakpoint`, 1024-token minimum, 30-minute TTL, "
            "no lookback limit), the same prices.", "",
            "| wire, conversation | requests | pgprompt written | optimum written | pgprompt cost / no caching | "
            "optimum cost / no caching | pgprompt / optimum | target | |", "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for label, pl in out["placements"].items():
        mine, best = pl["mine"], pl["optimum"]
        text.append(f"| {label} | {mine['requests']:,} | {mine['cache_write']:,} | {best['cache_write']:,} | "
                    f"{mine['relative_cost']:.4f} | {best['relative_cost']:.4f} | {pl['ratio']:.3f} | <= 1.05 | "
                    f"{'met' if pl['ratio'] <= 1.05 else 'MISSED'} |")
    return text


def placement(rows, sent, wire: str = "anthropic") -> dict:
    """pgprompt's cost against the offline optimum of the same requests (bench/cache_optimum.py)."""
    best = optimum(sent, MINIMUM, WIRES[wire]["ttl"], READ, WRITE)
    return {"mine": summary(rows), "optimum": best, "ratio": cost(rows, READ, WRITE) / best["relative_cost"]}


def main():
    rows, report, took, sent = simulate()
    placements = {"anthropic, runs": placement(rows["pgprompt"], sent)}
    for wire, rounds, label in (("anthropic", 0, "anthropic, chat"), ("responses", ROUNDS, "OpenAI explicit, runs"),
                                ("responses", 0, "OpenAI explicit, chat")):
        other, _, _, other_sent = simulate(rounds, wire)
        placements[label] = placement(other["pgprompt"], other_sent, wire)
    predicted = [r[0] for r in report]
    simulated = [r["predicted_cache_read"] for r in rows["pgprompt"]]
    agrees = sum(a == b for a, b in zip(predicted, simulated)) if len(predicted) == len(simulated) else 0
    out = {name: summary(r) for name, r in rows.items()}
    out.update(turns=TURNS, rounds=ROUNDS, window=WINDOW, history=HISTORY, minimum=MINIMUM, report_agrees=agrees,
               report_rows=len(predicted), report_seconds=took, placements=placements)
    (ROOT / "bench/out").mkdir(exist_ok=True)
    (ROOT / "bench/out/cache_runs.json").write_text(json.dumps(out, indent=1))
    plot(rows, ROOT / "bench/cache_runs.png")
    write_section("cache_runs", HEAD, lines(out))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
