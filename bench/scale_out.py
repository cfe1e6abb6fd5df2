"""pgprompt through Citus's coordinator against a single node, side by side in one run.

    bench/scale-out.sh      # one command, as root: the nodes from docs/scale-out.md, this

Phases (bench/scale-out.sh runs them):
    python3 bench/scale_out.py load PORT                  # the bench's rows into `app` on PORT
    python3 bench/scale_out.py measure SINGLE COORDINATOR # measures, writes RESULTS.md's section
    python3 bench/scale_out.py report                     # the section again from bench/out/scale_out.json

Each figure is the median of RUNS calls (after 3 warm-up calls), the single node's and
the coordinator's alternating call by call, over TCP to localhost, the body fetched as
text. Measured: the demo's turn and a 200-turn x 2 KB conversation, sealed `compile_turn`
(read from storage) and unsealed `preview_turn`; the first `compile_turn` of a new turn
(it writes the seal), after 6 and after 200 turns; each in autocommit (`prompt.*`) and in
a transaction (`BEGIN`, the call, `COMMIT`: `prompt_tx.*` on Citus, `prompt.*` on the
single node), and the same through prompt_tx's `*_text` forms, whose result the
coordinator passes through without parsing it as json. The hop is the coordinator's time for a delegated `sealed_body` of the
demo's sealed turn less the single node's; figures "net of the hop" subtract it. The
same calls made directly on the worker that holds the conversation's shard say how much
of the difference is the hop and how much the worker's own execution.
"""
import json
import os
import random
import statistics
import sys
import time

import psycopg
from psycopg.types.string import TextLoader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ADA, agent, conversation, machine  # noqa: E402
from results import write_section  # noqa: E402

HEAD = "## Scale-out"
SAVED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "scale_out.json")
RUNS = int(os.environ.get("BENCH_RUNS", "30"))
DEMO_C = "00000000-0000-4000-8000-00000000c001"
DEMO_SEALED = "00000000-0000-4000-8000-0000000d0002"
DEMO_OPEN = "00000000-0000-4000-8000-0000000d0004"
C200 = "00000000-0000-4000-8000-0000005c0001"  # its reply turn sealed
C200_OPEN = "00000000-0000-4000-8000-0000005c0002"  # its reply turn never compiled
C_SEAL = "00000000-0000-4000-8000-0000005c0003"  # 200 turns; each run seals a new turn
C_SEAL_SMALL = "00000000-0000-4000-8000-0000005c0004"  # 6 turns; the same
T200 = "00000000-0000-4000-8000-0000005d0001"
T200_OPEN = "00000000-0000-4000-8000-0000005d0002"


def connect(port, autocommit=True):
    c = psycopg.connect(host="localhost", port=port, user="postgres", dbname="app", autocommit=autocommit)
    for name in ("json", "jsonb"):  # the body as text, as a driver that forwards it would take it
        c.adapters.register_loader(name, TextLoader)
    return c


def load(port):
    rng = random.Random(42)
    with connect(port) as c:
        agent(c, rng, handles=("bench_ada", "bench_lark"))  # beside the demo's Ada and Lark
        for conv, n in [(C200, 200), (C200_OPEN, 200), (C_SEAL, 200), (C_SEAL_SMALL, 6)]:
            conversation(c, rng, conv, n)
        for conv, turn in [(C200, T200), (C200_OPEN, T200_OPEN)]:
            c.execute(
                "INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt) VALUES (%s, %s, 201, 'reply', %s, %s)",
                (conv, turn, ADA, "What should we do next?"),
            )
        c.execute("SELECT prompt.compile_turn(%s, %s)", (C200, T200))
        c.execute("VACUUM ANALYZE")


class Side:
    """One server's connections: autocommit, and a transaction-mode one whose compile
    functions live in `schema`, named with `suffix` (prompt_tx's `_text` forms)."""

    def __init__(self, port, schema, suffix=""):
        self.auto, self.tx, self.schema = connect(port), connect(port, autocommit=False), schema
        self.suffix = suffix

    def call(self, fn, conv, turn, tx):
        if tx:
            self.tx.execute(f"SELECT {self.schema}.{fn}{self.suffix}(%s, %s)", (conv, turn)).fetchone()
            self.tx.commit()
        else:
            self.auto.execute(f"SELECT prompt.{fn}(%s, %s)", (conv, turn)).fetchone()


def alternating(sides, fn, conv, turn, tx, runs=RUNS):
    """Each side's times (s) for the same call, alternating call by call."""
    times = {name: [] for name in sides}
    for i in range(runs + 3):
        for name, side in sides.items():
            t0 = time.perf_counter()
            side.call(fn, conv, turn, tx)
            if i >= 3:
                times[name].append(time.perf_counter() - t0)
    return times


def sealing(sides, conv, tx, seq, runs=RUNS):
    """The first compile_turn of a new reply turn, alternating: each side posts its own
    new turn (not timed), compiles it (timed) and answers it (not timed)."""
    times = {name: [] for name in sides}
    for i in range(runs + 3):
        seq[conv] = seq.get(conv, 1000) + 1
        turn = f"00000000-0000-4000-8000-{0x5ea1000 + seq[conv]:012x}"
        for name, side in sides.items():
            side.auto.execute(
                "INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt) VALUES (%s, %s, %s, 'reply', %s, 'And now?')",
                (conv, turn, seq[conv], ADA),
            )
            t0 = time.perf_counter()
            side.call("compile_turn", conv, turn, tx)
            if i >= 3:
                times[name].append(time.perf_counter() - t0)
            side.auto.execute("UPDATE prompt.turns SET content = 'ok' WHERE conversation_id = %s AND id = %s", (conv, turn))
    return times


def worker_of(coordinator, conv):
    with connect(coordinator) as c:
        return c.execute(
            "SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('prompt.conversations', %s::uuid)",
            (conv,),
        ).fetchone()[0]


def ssl_between_nodes(coordinator, conv):
    """Whether the coordinator's connections to the worker use SSL (Citus's default
    citus.node_conninfo is sslmode=require)."""
    with connect(worker_of(coordinator, conv)) as w:
        rows = w.execute(
            "SELECT DISTINCT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
            "WHERE a.application_name LIKE 'citus_internal%%' AND a.pid <> pg_backend_pid()"
        ).fetchall()
    with connect(coordinator) as c:
        conninfo = c.execute("SHOW citus.node_conninfo").fetchone()[0]
    return conninfo, sorted({r[0] for r in rows})


MEASURES = [
    # key, label, function, conversation, turn (each also called on the worker holding it)
    ("hop", "demo: `sealed_body` of its sealed turn (the hop)", "sealed_body", DEMO_C, DEMO_SEALED),
    ("demo_sealed", "demo: sealed `compile_turn`", "compile_turn", DEMO_C, DEMO_SEALED),
    ("demo_open", "demo: unsealed `preview_turn`", "preview_turn", DEMO_C, DEMO_OPEN),
    ("c200_sealed", "200 turns x 2 KB: sealed `compile_turn`", "compile_turn", C200, T200),
    ("c200_open", "200 turns x 2 KB: unsealed `preview_turn`", "preview_turn", C200_OPEN, T200_OPEN),
]
SEALING = [
    ("seal_small", "the first `compile_turn` of a new turn after 6 turns (writes the seal)", C_SEAL_SMALL),
    ("seal_200", "the first `compile_turn` of a new turn after 200 turns (writes the seal)", C_SEAL),
]


# autocommit; a transaction through prompt_tx; the same through prompt_tx's text forms.
FORMS = {"auto": "autocommit", "tx": "transaction", "text": "transaction, `prompt_tx.*_text`"}


def med(xs):
    return statistics.median(xs) * 1e3


def measure(single_port, coordinator_port):
    out = {"runs": RUNS, "machine": machine(), "date": time.strftime("%Y-%m-%d")}
    single = Side(single_port, "prompt")
    through = Side(coordinator_port, "prompt_tx")
    # The transaction form's text results, which the coordinator passes through unparsed.
    coordinator = {"auto": through, "tx": through, "text": Side(coordinator_port, "prompt_tx", suffix="_text")}
    # The worker that holds each conversation's shard, called directly (no coordinator:
    # Citus's planner on every query the compile runs, local shard execution).
    workers = {conv: Side(worker_of(coordinator_port, conv), "prompt") for _, _, _, conv, _ in MEASURES}
    seq = {}
    for form in FORMS:
        tx, citus = form != "auto", coordinator[form]
        for key, _, fn, conv, turn in MEASURES:
            # The three servers alternating call by call: the single node, the worker
            # holding the shard, the coordinator.
            t = alternating({"single": single, "worker": workers[conv], "citus": citus}, fn, conv, turn, tx)
            out[f"{form}_{key}"] = {name: med(xs) for name, xs in t.items()}
        for key, _, conv in SEALING:
            t = sealing({"single": single, "citus": citus}, conv, tx, seq)
            out[f"{form}_{key}"] = {name: med(xs) for name, xs in t.items()}
    out["node_conninfo"], out["node_ssl"] = ssl_between_nodes(coordinator_port, DEMO_C)
    out["c200_body_bytes"] = len(single.auto.execute("SELECT prompt.compile_turn(%s, %s)", (C200, T200)).fetchone()[0])
    os.makedirs(os.path.dirname(SAVED), exist_ok=True)
    with open(SAVED, "w") as f:
        json.dump(out, f, indent=1)
    publish(out)


def publish(out):
    section = lines(out)
    print("\n".join(section))
    write_section("scale_out", HEAD, section)


# Citus adds its hop and nothing more: through the coordinator, net of the hop, a compile
# costs at most 1.3 times the same call made directly on the worker holding its shard; and
# on that worker, a 200-turn compile at most 1.3 times a single node's.
NET_OVER_WORKER = ("demo_sealed", "demo_open", "c200_sealed", "c200_open")
WORKER_OVER_SINGLE = ("c200_sealed", "c200_open")
TARGET = 1.3


def verdict(value, applies):
    if not applies:
        return "", ""
    return f"<= {TARGET}", "met" if value <= TARGET else "MISSED"


def lines(out):
    text = [
        HEAD,
        "",
        f"`bench/scale-out.sh` (as root): a Citus 13.2.2 coordinator and two workers set up by the blocks of "
        f"docs/scale-out.md, against a single node, all four PostgreSQL 15 servers on this machine with their "
        f"default settings; the demo's rows and the bench's agent (bench.py's) on both. Machine: {out['machine']}. "
        f"Date: {out['date']}. Medians of {out['runs']} calls after 3 warm-up calls, the single node, the worker "
        "holding the conversation's shard (called directly) and the coordinator alternating call by call, from "
        "psycopg over TCP to localhost, parameters bound, bodies fetched as text. "
        "In a transaction: `BEGIN`, the call, `COMMIT` (`prompt_tx.*` on the coordinator, `prompt.*` on the "
        "single node and the worker). The hop: the coordinator's time for a delegated `sealed_body` of the "
        "demo's sealed turn less the single node's, in the same form; \"net\" subtracts it from the coordinator's.",
        "",
        "| call | form | single ms | worker ms | coordinator ms | coordinator net / worker | target | "
        "| worker / single | target | |",
        "|---|---|---:|---:|---:|---:|---|---|---:|---|---|",
    ]
    labels = {k: label for k, label, *_ in MEASURES}
    forms = [(f, FORMS[f]) for f in FORMS if f"{f}_hop" in out]
    hops = {form: out[f"{form}_hop"]["citus"] - out[f"{form}_hop"]["single"] for form, _ in forms}
    for form, name in forms:
        for key, *_ in MEASURES:
            m = out[f"{form}_{key}"]
            net = (m["citus"] - hops[form]) / m["worker"]
            local = m["worker"] / m["single"]
            a, b = verdict(net, key in NET_OVER_WORKER), verdict(local, key in WORKER_OVER_SINGLE)
            text.append(f"| {labels[key]} | {name} | {m['single']:.2f} | {m['worker']:.2f} | {m['citus']:.2f} | "
                        f"{net:.3f} | {a[0]} | {a[1]} | {local:.3f} | {b[0]} | {b[1]} |")
    text += [
        "",
        "The hop: " + ", ".join(f"{hops[f]:.2f} ms ({name})" for f, name in forms) + ". "
        "The text forms return the same bytes as `text`; the single node and the worker are called as in a "
        "transaction (`prompt.*`, json). "
        f"The coordinator's connections to the workers: `citus.node_conninfo = '{out['node_conninfo']}'`, "
        f"SSL in use: {', '.join(str(s) for s in out['node_ssl']) or 'no connection seen'}. "
        f"The 200-turn body is {out['c200_body_bytes'] / 1e3:.0f} KB.",
        "",
        "The first `compile_turn` of a new turn (it writes the seal), through the coordinator against the single "
        "node (reported; no target):",
        "",
        "| call | form | single ms | coordinator ms | ratio | net of the hop |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for form, name in forms:
        for key, label, _ in SEALING:
            m = out[f"{form}_{key}"]
            text.append(f"| {label} | {name} | {m['single']:.2f} | {m['citus']:.2f} | "
                        f"{m['citus'] / m['single']:.2f} | {(m['citus'] - hops[form]) / m['single']:.2f} |")
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "NOTES-scale-out.md")
    if os.path.exists(notes):
        with open(notes) as f:
            text += [""] + f.read().rstrip("\n").split("\n")
    return text


if __name__ == "__main__":
    if sys.argv[1] == "load":
        load(int(sys.argv[2]))
    elif sys.argv[1] == "measure":
        measure(int(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1] == "report":  # the section again from the last measurement's figures
        with open(SAVED) as f:
            publish(json.load(f))
