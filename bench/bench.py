"""pgprompt benchmark: builds realistic data in a local cluster and reports, side by side
in one run, medians and p95 of compiling a turn's body against two floors of reading its
rows (as text, and as JSON), a Python client receiving the body against the same client
receiving the rows, an application-side compiler, a tool-round conversation against a
message conversation of the same text, throughput under concurrency (pgbench), the first
compile that writes a seal, seal storage per exchange, count_tokens against Python
tiktoken, first compiles on fresh connections, and backend memory.

    bench/run.sh            # one command: builds, starts a cluster, runs this

Phases (the cluster is restarted between them by run.sh):
    python3 bench/bench.py build      # data (and a copy compressed with lz4, where the server has it)
    python3 bench/bench.py measure    # everything but the preloaded first compile
    python3 bench/bench.py preload    # first compile on fresh connections, preloaded
    python3 bench/bench.py report     # prints and writes bench/RESULTS.md
"""
import json
import os
import pathlib
import platform
import random
import statistics
import sys
import time

import psycopg

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/python"))
from tiktoken_offline import encoding  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from results import saved_section  # noqa: E402

DB = "pgprompt_bench"
DB_LZ4 = "pgprompt_bench_lz4"
OUT = ROOT / "bench/out"
WS = "00000000-0000-4000-8000-0000000be001"
ADA = "00000000-0000-4000-8000-0000000be101"
LARK = "00000000-0000-4000-8000-0000000be102"
C_SMALL = "00000000-0000-4000-8000-0000000bec00"
C200 = "00000000-0000-4000-8000-0000000bec01"
C10K = "00000000-0000-4000-8000-0000000bec02"
T_SMALL = "00000000-0000-4000-8000-0000000bed00"
T200 = "00000000-0000-4000-8000-0000000bed01"
T10K = "00000000-0000-4000-8000-0000000bed02"
T200_O200K = "00000000-0000-4000-8000-0000000bed03"
C_TOOLS = "00000000-0000-4000-8000-0000000bec03"
T_TOOLS = "00000000-0000-4000-8000-0000000bed04"
C_SEAL = "00000000-0000-4000-8000-0000000bec04"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
WINDOW = 120_000  # fits 200 turns of ~2 KB, and so ~200 of the 10,000
RUNS = int(os.environ.get("BENCH_RUNS", "40"))


def connect(dbname=DB):
    return psycopg.connect(
        host=os.environ["PGHOST"], port=int(os.environ["PGPORT"]), user="postgres", dbname=dbname, autocommit=True
    )


WORDS = (
    "the invoice customer refund charge payment account billing support ticket order shipment "
    "delivery status update please thanks question answer issue problem error duplicate amount "
    "total credit note receipt date month year week today yesterday tomorrow team agent human "
    "system export import report data table query index database server client request response "
    "and or but with without from into over under about after before during while because "
    "we you they it this that these those is are was were be been being have has had do does did "
    "can could should would will may might must not no yes very more most less least"
).split()


def text(rng: random.Random, size: int = 2000) -> str:
    out, n = [], 0
    while n < size:
        w = rng.choice(WORDS)
        if rng.random() < 0.08:
            w = w.capitalize() + rng.choice([",", ".", "?", ":"])
        if rng.random() < 0.03:
            w = f"INV-{rng.randint(1000, 9999)}"
        out.append(w)
        n += len(w) + 1
    return " ".join(out)[:size]


def lz4_available():
    with connect("postgres") as c:
        try:
            c.execute("SET default_toast_compression = 'lz4'")
            return True
        except psycopg.Error:
            return False


def build(db=DB, compression=None):
    """The data. With `compression`, the database compresses long texts with it
    (default_toast_compression) instead of PostgreSQL's default pglz."""
    with connect("postgres") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {db}")
        admin.execute(f"CREATE DATABASE {db}")
        if compression:
            admin.execute(f"ALTER DATABASE {db} SET default_toast_compression = '{compression}'")
    rng = random.Random(42)
    with connect(db) as c:
        c.execute("CREATE EXTENSION pgprompt")
        agent(c, rng)
        for conv, turn, n in [(C_SMALL, T_SMALL, 6), (C200, T200, 200), (C10K, T10K, 10_000)]:
            conversation(c, rng, conv, n)
            c.execute(
                "INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, mode, callables) "
                "VALUES (%s, %s, %s, 'reply', %s, %s, 'run', '[{\"name\": \"skill\"}]')",
                (conv, turn, n + 1, ADA, "What should we do next?"),
            )
        c.execute(
            "INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, model) "
            "VALUES (%s, %s, 100000, 'reply', %s, 'And in o200k?', 'bench-o200k')",
            (C200, T200_O200K, ADA),
        )
        build_tools(c, rng)
        conversation(c, rng, C_SEAL, 200)
        c.execute("VACUUM ANALYZE")


def agent(c, rng, handles=("ada", "lark")):
    """The models, the workspace, Ada and her agent Lark (`handles`: theirs, beside other
    rows): a ~1 KB system prompt, character and persona, 10 memory entries, a 40-skill
    catalog."""
    c.execute(
        "INSERT INTO prompt.models (name, wire, tokenizer, advisory_window, max_output_tokens) VALUES "
        "('bench', 'anthropic', 'cl100k_base', %s, 4096), ('bench-o200k', 'anthropic', 'o200k_base', %s, 4096)",
        (WINDOW, WINDOW),
    )
    c.execute("INSERT INTO prompt.workspaces (id, name, timezone) VALUES (%s, 'Bench', 'UTC')", (WS,))
    c.execute("INSERT INTO prompt.users (id, handle, display_name, kind) VALUES (%s, %s, 'Ada', 'human')", (ADA, handles[0]))
    c.execute(
        "INSERT INTO prompt.users (id, handle, display_name, kind, model, application) "
        "VALUES (%s, %s, 'Lark', 'agent', 'bench', 'helpdesk')",
        (LARK, handles[1]),
    )
    c.execute(
        "INSERT INTO prompt.documents (user_id, workspace_id, name, body) VALUES "
        "(%s, NULL, 'system_prompt', %s), (NULL, %s, 'character', %s), (%s, NULL, 'persona', %s)",
        (LARK, "You are {{agent}}, helping {{user}} on {{date}}. " + text(rng, 1000), WS, text(rng, 600), ADA, text(rng, 400)),
    )
    for i in range(10):
        c.execute(
            "INSERT INTO prompt.memories (scope, user_id, path, body) VALUES ('agent', %s, %s, %s)",
            (LARK, f"notes/{i:02}.md", text(rng, 300)),
        )
    for i in range(40):
        c.execute(
            "INSERT INTO prompt.skills (source, user_id, name, description) VALUES ('agent', %s, %s, %s)",
            (LARK, f"skill-{i:02}", text(rng, 120)),
        )


def conversation(c, rng, conv, n):
    """A conversation of Ada and Lark: `n` message turns of ~2 KB, alternating."""
    c.execute(
        "INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)",
        (conv, WS, LARK, ADA),
    )
    with c.cursor().copy("COPY prompt.turns (conversation_id, seq, kind, role, author_id, content) FROM STDIN") as copy:
        for i in range(n):
            role, who = ("user", ADA) if i % 2 == 0 else ("assistant", LARK)
            copy.write_row((conv, i + 1, "message", role, who, text(rng)))


def build_tools(c, rng):
    """200 run turns of Lark's own, each a question, one round (text and a call), its
    result and a screenshot: about the text of 200 message turns of ~2 KB."""
    c.execute(
        "INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)",
        (C_TOOLS, WS, LARK, ADA),
    )
    turns, rounds = [], []
    for i in range(200):
        tid = f"00000000-0000-4000-8000-{0xbe0000 + i:012x}"
        turns.append((C_TOOLS, tid, i + 1, "reply", ADA, text(rng, 600), "run"))
        call = f"call_{i}"
        rounds.append((
            C_TOOLS, tid, 1,
            json.dumps([{"type": "text", "text": text(rng, 400)},
                        {"type": "tool_call", "id": call, "name": "lookup", "input": {"invoice": f"INV-{i}"}}]),
            json.dumps([{"call_id": call, "content": text(rng, 1000),
                         "captures": [{"name": "shot.png", "media_type": "image/png", "data": PNG}]}]),
        ))
    with c.cursor().copy("COPY prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, mode) FROM STDIN") as copy:
        for row in turns:
            copy.write_row(row)
    with c.cursor().copy("COPY prompt.rounds (conversation_id, turn_id, n, assistant, results) FROM STDIN") as copy:
        for row in rounds:
            copy.write_row(row)
    c.execute(
        "INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, mode) VALUES (%s, %s, 201, 'reply', %s, %s, 'run')",
        (C_TOOLS, T_TOOLS, ADA, "What should we do next?"),
    )


def timed(fn, runs=RUNS, warmup=3):
    for _ in range(warmup):
        fn()
    xs = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - t0)
    return xs


def interleaved(calls, runs=RUNS, warmup=3):
    """Each call's times, measured in one run: every round calls each once, in an order
    that rotates, so the machine's drift falls on all of them alike."""
    names = list(calls)
    xs = {n: [] for n in names}
    for i in range(warmup + runs):
        k = i % len(names)
        for n in names[k:] + names[:k]:
            t0 = time.perf_counter()
            calls[n]()
            if i >= warmup:
                xs[n].append(time.perf_counter() - t0)
    return {n: summary(v) for n, v in xs.items()}


def summary(xs):
    xs = sorted(xs)
    return {"median_ms": statistics.median(xs) * 1e3, "p95_ms": xs[min(len(xs) - 1, int(len(xs) * 0.95))] * 1e3}


def rendered_turns(c, conv, turn):
    est = c.execute("SELECT prompt.explain_turn(%s, %s) -> 'estimate' -> 'history'", (conv, turn)).fetchone()[0]
    return est["selected"], est["available"]


def app_side_compiler(conn, enc, conv, turn):
    """What an application does without pgprompt: fetch the rows, count with tiktoken,
    trim newest-first with langchain, build the messages."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages

    seq = conn.execute("SELECT seq, prompt FROM prompt.turns WHERE conversation_id = %s AND id = %s", (conv, turn)).fetchone()
    docs = conn.execute(
        "SELECT d.body FROM prompt.documents d WHERE d.user_id = %s AND d.name = 'system_prompt' "
        "UNION ALL SELECT body FROM prompt.documents WHERE workspace_id = %s "
        "UNION ALL SELECT body FROM prompt.documents WHERE user_id = %s AND name = 'persona'",
        (LARK, WS, ADA),
    ).fetchall()
    mem = conn.execute("SELECT path, body FROM prompt.memories WHERE user_id = %s ORDER BY path", (LARK,)).fetchall()
    skills = conn.execute("SELECT name, description FROM prompt.skills WHERE user_id = %s ORDER BY name", (LARK,)).fetchall()
    rows = conn.execute(
        "SELECT role, content FROM prompt.turns WHERE conversation_id = %s AND seq < %s ORDER BY seq", (conv, seq[0])
    ).fetchall()
    system = "\n\n".join(d[0] for d in docs)
    system += "\n\nMemory available now." + "".join(f"\n\n### agent/{p}\n{b}" for p, b in mem)
    system += "\n\nSkills available now." + "".join(f"\n- skill / {n}: {d}" for n, d in skills)
    messages = [SystemMessage(system)]
    for role, content in rows:
        messages.append(HumanMessage(content) if role == "user" else AIMessage(content))
    messages.append(HumanMessage(seq[1]))

    def counter(msgs):
        return sum(len(enc.encode_ordinary(m.content)) + 3 for m in msgs) + 3

    kept = trim_messages(messages, max_tokens=WINDOW, token_counter=counter, strategy="last", include_system=True, start_on="human")
    return {
        "model": "bench",
        "max_tokens": 4096,
        "system": [{"type": "text", "text": kept[0].content}],
        "messages": [{"role": "user" if m.type == "human" else "assistant", "content": [{"type": "text", "text": m.content}]} for m in kept[1:]],
    }


def rss(c, pid):
    status = pathlib.Path(f"/proc/{pid}/status").read_text()
    get = lambda k: int(next(l for l in status.splitlines() if l.startswith(k)).split()[1])  # noqa: E731
    return get("VmRSS:"), get("VmHWM:")


def smaps_kb(pid):
    """A backend's own memory (KiB, what it does not share with the postmaster or other
    backends) and its proportional share (Pss: each shared page divided among its users)."""
    rollup = pathlib.Path(f"/proc/{pid}/smaps_rollup").read_text()
    get = lambda k: int(next(l for l in rollup.splitlines() if l.startswith(k)).split()[1])  # noqa: E731
    return get("Private_Clean:") + get("Private_Dirty:"), get("Pss:")


def compiled_on_both(c):
    """RSS and private memory of a fresh backend after compiling on both tokenizers."""
    pid = c.execute("SELECT pg_backend_pid()").fetchone()[0]
    c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C200, T200)).fetchone()
    c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C200, T200_O200K)).fetchone()
    private, pss = smaps_kb(pid)
    return {"rss_kb": rss(c, pid)[0], "private_kb": private, "pss_kb": pss}


def library_sizes():
    """The installed shared library's size, beside pgvector's where it is installed (the
    anchor: an extension of a few hundred kilobytes)."""
    import subprocess
    pkglib = pathlib.Path(subprocess.check_output([os.environ.get("PG_CONFIG", "pg_config"), "--pkglibdir"], text=True).strip())
    size = lambda path: path.stat().st_size if path.exists() else None  # noqa: E731
    # pgvector where this server has it, else Debian 13's package in the root that
    # scripts/debian13.sh makes (Debian 12 has no pgvector package).
    vectors = [pkglib / "vector.so", *sorted(pathlib.Path("/var/tmp/pgprompt-trixie/usr/lib/postgresql").glob("*/lib/vector.so"))]
    vector = next((v for v in vectors if v.exists()), None)
    return {"pgprompt_bytes": size(pkglib / "pgprompt.so"), "pgvector_bytes": size(vector) if vector else None,
            "pgvector_path": str(vector) if vector else None}


def first_reads(c):
    """The rows a preview of the 200-turn conversation reads, as plain statements of one
    table each: its conversation, its turns, its workspace, its users, its model, the
    workspace's documents and the turn's seal. Their first run in a fresh backend is the
    floor of a first compile (issue 62 item 1): PostgreSQL's own first work for those
    relations (catalog and relation caches, plans, the first touches of shared buffers)."""
    ws, answerer, creator = c.execute(
        "SELECT workspace_id, answerer_id, creator_id FROM prompt.conversations WHERE id = %s", (C200,)).fetchone()
    return [
        ("SELECT * FROM prompt.conversations WHERE id = %s", (C200,)),
        ("SELECT * FROM prompt.turns WHERE conversation_id = %s ORDER BY seq DESC LIMIT 201", (C200,)),
        ("SELECT * FROM prompt.workspaces WHERE id = %s", (ws,)),
        ("SELECT * FROM prompt.users WHERE id = ANY(%s)", ([answerer, creator],)),
        ("SELECT * FROM prompt.models WHERE name = (SELECT model FROM prompt.users WHERE id = %s)", (answerer,)),
        ("SELECT * FROM prompt.documents WHERE workspace_id = %s", (ws,)),
        ("SELECT * FROM prompt.seals WHERE conversation_id = %s AND turn_id = %s", (C200, T200)),
    ]


def first_compile(c_runs=12):
    """Fresh connections, each's first preview_turn against the same call warm in the same
    backend (the median of its sixth to tenth: issue 62 asks the first to cost what the
    tenth does); and beside them, on fresh connections
    alternating with those, the floor: the rows it reads as plain one-table statements
    (`first_reads`), first and warm the same way."""
    with connect() as c:
        reads = first_reads(c)

    def preview(c):
        t0 = time.perf_counter()
        c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C200, T200)).fetchone()
        return time.perf_counter() - t0

    def read_all(c):
        t0 = time.perf_counter()
        for q, args in reads:
            c.execute(q, args, prepare=True).fetchall()
        return time.perf_counter() - t0

    # The lowest floor: one statement that counts the same rows (one parse and one plan,
    # no value returned).
    one = "SELECT " + " + ".join(f"(SELECT count(*) FROM ({q}) r{i})" for i, (q, _) in enumerate(reads))
    one_args = tuple(a for _, args in reads for a in args)

    def count_all(c):
        t0 = time.perf_counter()
        c.execute(one, one_args, prepare=True).fetchone()
        return time.perf_counter() - t0

    times = {k: ([], []) for k in ("compile", "floor", "one")}
    for _ in range(c_runs):
        for key, call in (("compile", preview), ("floor", read_all), ("one", count_all)):
            with connect() as c:
                times[key][0].append(call(c))
                times[key][1].append(statistics.median([call(c) for _ in range(9)][4:]))
    floor = {k: {"first": summary(times[k][0]), "warm": summary(times[k][1])} for k in ("floor", "one")}
    return summary(times["compile"][0]), summary(times["compile"][1]), {**floor["floor"], "one": floor["one"]}


def sealing(c, runs=RUNS):
    """The first compile_turn of a turn (it writes the seal) against preview_turn of the
    same turn: each run posts a new reply turn after the conversation's 200 turns."""
    seq = [1000]

    def post():
        seq[0] += 1
        turn = f"00000000-0000-4000-8000-{0x5ea1000 + seq[0]:012x}"
        c.execute("INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt) VALUES (%s, %s, %s, 'reply', %s, 'And now?')",
                  (C_SEAL, turn, seq[0], ADA))
        return turn

    previews, seals = [], []
    for _ in range(runs):
        turn = post()
        t0 = time.perf_counter()
        c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C_SEAL, turn)).fetchone()
        previews.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        c.execute("SELECT length(prompt.compile_turn(%s, %s)::text)", (C_SEAL, turn)).fetchone()
        seals.append(time.perf_counter() - t0)
        c.execute("UPDATE prompt.turns SET content = 'ok' WHERE id = %s", (turn,))
    t0 = time.perf_counter()
    for _ in range(runs):
        c.execute("SELECT length(prompt.compile_turn(%s, %s)::text)", (C_SEAL, turn)).fetchone()
    again = (time.perf_counter() - t0) / runs
    return summary(previews), summary(seals), again * 1e3


def storage(rng):
    """Seal storage per exchange after 100, 200 and 400 sealed exchanges of ~2 KB."""
    db = "pgprompt_bench_storage"
    with connect("postgres") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {db}")
        admin.execute(f"CREATE DATABASE {db}")
    out = {}
    with connect(db) as c:
        c.execute("CREATE EXTENSION pgprompt")
        c.execute("INSERT INTO prompt.models (name, wire, advisory_window) VALUES ('bench', 'anthropic', %s)", (WINDOW,))
        c.execute("INSERT INTO prompt.workspaces (id, name) VALUES (%s, 'Bench')", (WS,))
        c.execute("INSERT INTO prompt.users (id, handle, kind) VALUES (%s, 'ada', 'human')", (ADA,))
        c.execute("INSERT INTO prompt.users (id, handle, kind, model) VALUES (%s, 'lark', 'agent', 'bench')", (LARK,))
        c.execute("INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)", (C_SEAL, WS, LARK, ADA))
        raw = 0
        for i in range(1, 401):
            turn, prompt, answer = f"00000000-0000-4000-8000-{i:012x}", text(rng, 1000), text(rng, 1000)
            c.execute("INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt) VALUES (%s, %s, 'reply', %s, %s)", (C_SEAL, turn, ADA, prompt))
            c.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (C_SEAL, turn))
            c.execute("UPDATE prompt.turns SET content = %s WHERE id = %s", (answer, turn))
            raw += len(prompt) + len(answer)
            if i in (100, 200, 400):
                c.execute("VACUUM prompt.seals, prompt.seal_nodes")
                size = c.execute("SELECT pg_total_relation_size('prompt.seals') + pg_total_relation_size('prompt.seal_nodes')").fetchone()[0]
                out[str(i)] = {"bytes": size, "text": raw}
    return out


def pgbench(clients, seconds=10):
    """Transactions per second and latency percentiles of preview_turn (200 turns) with
    `clients` concurrent clients."""
    import glob
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "compile.sql")
        with open(script, "w") as f:
            f.write(f"SELECT length(prompt.preview_turn('{C200}', '{T200}')::text);\n")
        out = subprocess.run(
            ["pgbench", "-n", "-h", os.environ["PGHOST"], "-p", os.environ["PGPORT"], "-U", "postgres",
             "-f", script, "-c", str(clients), "-j", str(clients), "-T", str(seconds), "-l", "--log-prefix", os.path.join(tmp, "log"), DB],
            capture_output=True, text=True, check=True, cwd=tmp,
        ).stdout
        tps = float(next(l for l in out.splitlines() if l.startswith("tps")).split("=")[1].split()[0])
        lat = sorted(int(line.split()[2]) / 1e3 for path in glob.glob(os.path.join(tmp, "log*")) for line in open(path))
    pct = lambda q: lat[min(len(lat) - 1, int(len(lat) * q))]  # noqa: E731
    return {"tps": tps, "p50_ms": pct(0.5), "p95_ms": pct(0.95), "p99_ms": pct(0.99)}


def build_all():
    build()
    if lz4_available():
        build(DB_LZ4, "lz4")


# The floors and the body, as the benchmark reads them: the rendered rows of a
# conversation's seq range as one text, and as JSON; the body's length.
ROWS = "FROM prompt.turns WHERE conversation_id = %s AND seq >= %s AND seq < %s"
STRING_FLOOR = f"SELECT length(string_agg(content, '' ORDER BY seq)) {ROWS}"
JSON_ROWS = f"SELECT json_agg(json_build_object('role', role, 'content', content) ORDER BY seq) {ROWS}"
JSON_FLOOR = f"SELECT length(({JSON_ROWS})::text)"
PREVIEW = "SELECT length(prompt.preview_turn(%s, %s)::text)"


def issue_43_calls(c):
    """The calls issue 43's ratios compare, on connection `c` (bench/against.py times
    two builds' in one run)."""
    return {
        "floor_200": lambda: c.execute(STRING_FLOOR, (C200, 1, 201)).fetchone(),
        "json_floor_200": lambda: c.execute(JSON_FLOOR, (C200, 1, 201)).fetchone(),
        "preview_200": lambda: c.execute(PREVIEW, (C200, T200)).fetchone(),
        "tools_200": lambda: c.execute(PREVIEW, (C_TOOLS, T_TOOLS)).fetchone(),
        "client_pgprompt_200": lambda: c.execute("SELECT prompt.preview_turn(%s, %s)", (C200, T200)).fetchone()[0],
        "client_floor_200": lambda: c.execute(JSON_ROWS, (C200, 1, 201)).fetchone()[0],
    }


def issue_43(i, body_bytes, tools_bytes):
    """Issue 43's ratios from the calls' medians `i` (ms) and the two bodies' sizes:
    (label, value, issue 43's 0.3.0 figure, target)."""
    per_byte = (i["tools_200"] / tools_bytes) / (i["preview_200"] / body_bytes)
    return [
        ("body / `json_agg` of the same rows (server)", i["preview_200"] / i["json_floor_200"], "0.84", "<= 0.85"),
        ("body / `string_agg` of the rendered rows", i["preview_200"] / i["floor_200"], "1.46", "<= 1.3"),
        ("Python client end to end / client floor", i["client_pgprompt_200"] / i["client_floor_200"], "0.87", "<= 0.9"),
        ("tool-round conversation / message conversation, per body byte", per_byte, "1.31", "<= 1.3"),
    ]


def measure():
    OUT.mkdir(exist_ok=True)
    r = {}
    with connect() as c:
        enc = encoding("cl100k_base")
        sel200, avail200 = rendered_turns(c, C200, T200)
        sel10k, avail10k = rendered_turns(c, C10K, T10K)
        r["rendered"] = {"200": [sel200, avail200], "10000": [sel10k, avail10k]}
        seq10k = c.execute("SELECT seq FROM prompt.turns WHERE id = %s", (T10K,)).fetchone()[0]
        r["floor_200"] = summary(timed(lambda: c.execute(STRING_FLOOR, (C200, 1, 201)).fetchone()))
        r["json_floor_200"] = summary(timed(lambda: c.execute(JSON_FLOOR, (C200, 1, 201)).fetchone()))
        r["preview_200"] = summary(timed(lambda: c.execute(PREVIEW, (C200, T200)).fetchone()))
        r["preview_200_alone"] = summary(timed(lambda: c.execute("SELECT prompt.preview_turn(%s, %s) IS NOT NULL", (C200, T200)).fetchone()))
        r["floor_10k"] = summary(timed(lambda: c.execute(STRING_FLOOR, (C10K, seq10k - sel10k, seq10k)).fetchone()))
        r["preview_10k"] = summary(timed(lambda: c.execute(PREVIEW, (C10K, T10K)).fetchone()))
        r["tools_200"] = summary(timed(lambda: c.execute(PREVIEW, (C_TOOLS, T_TOOLS)).fetchone()))
        r["tools_text"] = c.execute(
            "SELECT sum(length(t.prompt) + length(r.assistant::text) + length(r.results::text)) "
            "FROM prompt.turns t JOIN prompt.rounds r ON (r.conversation_id, r.turn_id) = (t.conversation_id, t.id) WHERE t.conversation_id = %s",
            (C_TOOLS,),
        ).fetchone()[0]
        r["message_text"] = c.execute(f"SELECT sum(length(content)) {ROWS}", (C200, 1, 201)).fetchone()[0]
        r["body_bytes_200"] = c.execute("SELECT octet_length(prompt.preview_turn(%s, %s)::text)", (C200, T200)).fetchone()[0]
        r["tools_body_bytes"] = c.execute("SELECT octet_length(prompt.preview_turn(%s, %s)::text)", (C_TOOLS, T_TOOLS)).fetchone()[0]
        # Issue 43's ratios against 0.3, from one interleaved run (the figures above are
        # each measured on its own).
        r["interleaved"] = interleaved(issue_43_calls(c))
        r["estimate_10k"] = summary(timed(lambda: c.execute("SELECT count(*) FROM prompt.estimate_turn(%s, %s)", (C10K, T10K)).fetchone()))

        # End to end in a Python client: the body parsed as JSON, against the same
        # client receiving the rows the compile renders as JSON and parsing them.
        r["client_pgprompt_200"] = summary(timed(lambda: c.execute("SELECT prompt.preview_turn(%s, %s)", (C200, T200)).fetchone()[0]))
        r["client_floor_200"] = summary(timed(lambda: c.execute(JSON_ROWS, (C200, 1, 201)).fetchone()[0]))
        r["client_app_side_200"] = summary(timed(lambda: app_side_compiler(c, enc, C200, T200), runs=max(10, RUNS // 3)))
        # The same over 10,000 turns: the application fetches and counts the whole
        # conversation to find what fits; pgprompt reads the newest rows it renders.
        r["client_pgprompt_10k"] = summary(timed(lambda: c.execute("SELECT prompt.preview_turn(%s, %s)", (C10K, T10K)).fetchone()[0]))
        last = {}
        app_10k = lambda: last.update(request=app_side_compiler(c, enc, C10K, T10K))  # noqa: E731
        r["client_app_side_10k"] = summary(timed(app_10k, runs=5, warmup=1))
        r["app_side_10k_kept"] = len(last["request"]["messages"])
        r["preview_sealing"], r["compile_sealing"], r["compile_sealed_ms"] = sealing(c)

        # count_tokens against the reference tiktoken, the same texts.
        texts = [t for (t,) in c.execute("SELECT content FROM prompt.turns WHERE conversation_id = %s AND kind = 'message'", (C200,))]
        mb = sum(len(t.encode()) for t in texts) / 1e6
        sql_counts = summary(timed(lambda: c.execute("SELECT sum(prompt.count_tokens(content)) FROM prompt.turns WHERE conversation_id = %s AND kind = 'message'", (C200,)).fetchone(), runs=15))
        py_counts = summary(timed(lambda: sum(len(enc.encode_ordinary(t)) for t in texts), runs=15))
        r["count_tokens_mb_per_s"] = mb / (sql_counts["median_ms"] / 1e3)
        r["tiktoken_mb_per_s"] = mb / (py_counts["median_ms"] / 1e3)

        # Memory: peak RSS of a backend after compiling on each tokenizer.
        pid = c.execute("SELECT pg_backend_pid()").fetchone()[0]
        r["rss_kb_after_cl100k"] = rss(c, pid)
    with connect() as c:
        pid = c.execute("SELECT pg_backend_pid()").fetchone()[0]
        r["rss_kb_fresh"] = rss(c, pid)
        c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C200, T200)).fetchone()
        r["rss_kb_cl100k"] = rss(c, pid)
        c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C200, T200_O200K)).fetchone()
        r["rss_kb_both"] = rss(c, pid)
        # No per-compile leak: 10,000 compiles in one backend.
        samples = []
        for i in range(10_000):
            c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C_SMALL, T_SMALL)).fetchone()
            if i % 2000 == 1999:
                samples.append(rss(c, pid)[0])
        for _ in range(200):
            c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C200, T200)).fetchone()
        samples.append(rss(c, pid)[0])
        r["rss_kb_over_10k_compiles"] = samples
    with connect() as c:
        r["memory_both"] = compiled_on_both(c)
    # The same rows compressed with lz4 rather than pglz: reading them, and the compile.
    if lz4_available():
        with connect(DB_LZ4) as c:
            r["lz4"] = {
                "floor_200": summary(timed(lambda: c.execute(STRING_FLOOR, (C200, 1, 201)).fetchone())),
                "json_floor_200": summary(timed(lambda: c.execute(JSON_FLOOR, (C200, 1, 201)).fetchone())),
                "preview_200": summary(timed(lambda: c.execute(PREVIEW, (C200, T200)).fetchone())),
            }
    r["first_no_preload"], r["warm_no_preload"], r["first_floor_no_preload"] = first_compile()
    r["library"] = library_sizes()
    r["pgbench"] = {str(n): pgbench(n) for n in (1, 2, 4)}
    r["storage"] = storage(random.Random(7))
    (OUT / "measure.json").write_text(json.dumps(r, indent=1))


def preload():
    with connect() as c:
        assert "pgprompt" in c.execute("SHOW shared_preload_libraries").fetchone()[0]
    first, warm, floor = first_compile()
    with connect() as c:
        memory = compiled_on_both(c)
    out = {"first_preload": first, "warm_preload": warm, "first_floor_preload": floor, "memory_both_preload": memory}
    (OUT / "preload.json").write_text(json.dumps(out, indent=1))


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in pathlib.Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("model name")), "?")
    mem = next(l.split()[1] for l in pathlib.Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal"))
    return f"{os.cpu_count()} cores ({cpu}), {int(mem) // 1024 // 1024} GiB, {platform.system()} {platform.release()}, PostgreSQL 15"


def cache_lines() -> list:
    """The cache simulator's section (bench/cache_sim.py), when it has run."""
    path = OUT / "cache.json"
    if not path.exists():
        # Not run this time (`bench/run.sh measure`): the section as the last run wrote it.
        return saved_section("cache", "## Prompt cache")
    c = json.loads(path.read_text())
    n, s, lc = c["newest"], c["stable"], c["langchain"]
    lines = [
        "",
        "## Prompt cache",
        "",
        f"`bench/cache_sim.py`: {c['turns']:,} turns of ~1 KB (a ~500-byte question, a ~500-byte answer) on a "
        f"{c['window']:,}-token window; every turn compiled (and sealed) after the previous answer was written, and "
        "compared with the previous request: the longest common prefix of their parts, in tokens, is what a provider's "
        "prefix cache can serve. Cost: cached tokens at 0.1, the rest written at 1.25 (relative to base input price 1). "
        f"Newest-first trimming first cuts history at turn {c['first_trim_turn']}. Plot: `bench/cache.png`.",
        "",
        "| trimming | input tokens | served from cache | cached share | below the window | relative cost | history / allowance |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, v in (("pgprompt, newest first (default)", n), (f"pgprompt, stable (low_water {c['low_water']})", s),
                     ("langchain_core trim_messages, strategy last", lc)):
        lines.append(f"| {label} | {v['total_tokens']:,} | {v['cached_tokens']:,} | {v['cached_share']:.3f} | "
                     f"{v['below_window_cached_share']:.3f} | {v['cost'] / n['cost']:.3f} | {v['history_use']:.3f} |")
    targets = [
        ("stable: share of input tokens servable from cache", s["cached_share"], ">= 0.9"),
        ("stable: input cost / newest-first's", s["cost"] / n["cost"], "<= 0.25"),
        ("stable: history's average use of its allowance", s["history_use"], ">= 0.65"),
        ("below the window: newest first, cached share", n["below_window_cached_share"], ">= 0.95"),
        ("below the window: stable, cached share", s["below_window_cached_share"], ">= 0.95"),
    ]
    lines += ["", "| ratio | value | target | |", "|---|---:|---|---|"]
    for label, v, target in targets:
        lines.append(f"| {label} | {v:.3f} | {target} | {ok(v, target)} |")
    return lines


def later_sections() -> list:
    """The sections other benchmarks write (bench/cache_runs.py, bench/statements.py,
    bench/cache_report.py, bench/scale_out.py, bench/against.py)."""
    return (saved_section("cache_runs", "## Prompt cache over agent runs")
            + saved_section("clearing_runs", "## Clearing tool results over a long run")
            + saved_section("statements", "## Statements per call")
            + saved_section("against", "## 0.3.0 and this build in one run")
            + saved_section("cache_report", "## Cache report") + saved_section("scale_out", "## Scale-out"))


def ok(v, target):
    if target.startswith("<="):
        return "met" if v <= float(target[2:]) else "MISSED"
    if target.startswith(">="):
        return "met" if v >= float(target[2:]) else "MISSED"
    return ""


def issue_43_ratios(r):
    """Issue 43's targets for 0.5 against 0.3's figures, from one interleaved run
    (cache_report's are bench/cache_report.py's)."""
    i = {k: v["median_ms"] for k, v in r["interleaved"].items()}
    rows = issue_43(i, r["body_bytes_200"], r["tools_body_bytes"])
    lines = ["", f"Against 0.3, one interleaved run ({RUNS} rounds, each call once per round in a rotating order; medians ms: "
             + ", ".join(f"{k} {v:.2f}" for k, v in i.items()) + "):", "",
             "| ratio | 0.3.0 | this run | target | |", "|---|---:|---:|---|---|"]
    lines += [f"| {label} | {old} | {v:.2f} | {t} | {ok(v, t)} |" for label, v, old, t in rows]
    return lines


def report():
    if not (OUT / "measure.json").exists():
        text = "\n".join(["# pgprompt benchmark results", "", f"Machine: {machine()}. Date: {time.strftime('%Y-%m-%d')}.",
                          "The compile benchmark has not run here (`bench/run.sh`)."] + cache_lines() + later_sections()) + "\n"
        print(text)
        (ROOT / "bench/RESULTS.md").write_text(text)
        return
    r = json.loads((OUT / "measure.json").read_text())
    r.update(json.loads((OUT / "preload.json").read_text()))
    med = lambda k: r[k]["median_ms"]  # noqa: E731
    sel200, sel10k = r["rendered"]["200"][0], r["rendered"]["10000"][0]
    client_floor = med("client_floor_200")
    st = r["storage"]
    per = {n: st[n]["bytes"] / int(n) for n in st}
    ratios = [
        ("preview body / `json_agg` floor, 200 turns (server side)", med("preview_200") / med("json_floor_200"), "<= 1.0"),
        ("preview body / `string_agg` floor, 200 turns (server side)", med("preview_200") / med("floor_200"), "<= 1.6"),
        ("per rendered entry, 10,000 turns / 200 turns", (med("preview_10k") / sel10k) / (med("preview_200") / sel200), "<= 1.2"),
        ("Python client: body / client floor (the rows as JSON, parsed), 200 turns", med("client_pgprompt_200") / client_floor, "<= 1.25"),
        ("app-side compiler / pgprompt, Python client, 200 turns", med("client_app_side_200") / med("client_pgprompt_200"), ">= 5"),
        ("app-side compiler / pgprompt, Python client, 10,000 turns", med("client_app_side_10k") / med("client_pgprompt_10k"), ">= 100"),
        ("tool-round conversation / message conversation of equal text", (med("tools_200") / r["tools_text"]) / (med("preview_200") / r["message_text"]), "<= 1.5"),
        ("throughput, 2 clients / 1 client (pgbench, tps)", r["pgbench"]["2"]["tps"] / r["pgbench"]["1"]["tps"], ">= 1.7"),
        ("seal storage per exchange, 400 / 100 exchanges", per["400"] / per["100"], "<= 1.3"),
        ("seal storage / text written, 400 exchanges", st["400"]["bytes"] / st["400"]["text"], "<= 3"),
        ("count_tokens / Python tiktoken throughput", r["count_tokens_mb_per_s"] / r["tiktoken_mb_per_s"], ">= 1.5"),
        ("first compile on a fresh connection / warm, preloaded", med("first_preload") / med("warm_preload"), "<= 1.3"),
        ("first compile on a fresh connection / warm, not preloaded", med("first_no_preload") / med("warm_no_preload"), "<= 2"),
        *[(f"floor, {how}: (warm compile + the first-run excess of {what}) / warm compile",
           (med(warm) + f["first"]["median_ms"] - f["warm"]["median_ms"]) / med(warm), "")
          for how, warm, floor in (("preloaded", "warm_preload", "first_floor_preload"),
                                   ("not preloaded", "warm_no_preload", "first_floor_no_preload")) if floor in r
          for what, f in (("the rows it reads, 7 statements", r[floor]), ("one statement counting them", r[floor].get("one")))
          if f],
        *([("the shared library, MB", r["library"]["pgprompt_bytes"] / 1e6, "<= 25")] if r.get("library", {}).get("pgprompt_bytes") else []),
    ]

    lines = [
        "# pgprompt benchmark results",
        "",
        f"Machine: {machine()}. Date: {time.strftime('%Y-%m-%d')}. Runs per figure: {RUNS} (after 3 warm-up calls).",
        "Reproduce: `bench/run.sh` (builds the release extension, starts a throwaway cluster, loads the data, measures).",
        "",
        "Data: one agent with a ~1 KB system prompt, character and persona, 10 memory entries, a 40-skill catalog;",
        f"conversations of 200 and 10,000 message turns of ~2 KB; model window {WINDOW} tokens, which fits all 200",
        f"turns ({sel200} entries rendered) and the newest {sel10k} of the 10,000; a conversation of 200 run turns,",
        "each a question, one round (text and a tool call), its result and a screenshot, of about the same text.",
        "",
        "| measure | median ms | p95 ms |",
        "|---|---:|---:|",
    ]
    for key, label in [
        ("floor_200", "floor: `string_agg(content ORDER BY seq)` of the 200 rendered rows"),
        ("json_floor_200", "floor: `json_agg(json_build_object('role', role, 'content', content) ORDER BY seq)::text`"),
        ("preview_200", "`length(preview_turn(...)::text)`, 200 turns: the body"),
        ("preview_200_alone", "`preview_turn(...) IS NOT NULL`, 200 turns"),
        ("tools_200", "`length(preview_turn(...)::text)`, 200 run turns with tool rounds"),
        ("floor_10k", f"floor: the {sel10k} rendered rows of the 10,000-turn conversation"),
        ("preview_10k", "`length(preview_turn(...)::text)`, 10,000 turns"),
        ("estimate_10k", "`estimate_turn(...)`, 10,000 turns"),
        ("client_floor_200", "Python client: the rendered rows as `json_agg`, fetched and parsed (client floor)"),
        ("client_pgprompt_200", "Python client: `preview_turn` fetched and parsed, 200 turns"),
        ("client_app_side_200", "Python client: app-side compiler (psycopg + tiktoken + langchain trim_messages), 200 turns"),
        ("client_pgprompt_10k", "Python client: `preview_turn` fetched and parsed, 10,000 turns"),
        ("client_app_side_10k", f"Python client: app-side compiler, 10,000 turns (all fetched and counted, {r['app_side_10k_kept']} messages kept)"),
        ("preview_sealing", "`preview_turn` of a new turn after 200 turns"),
        ("compile_sealing", "its first `compile_turn`: compiles and writes the seal"),
        ("first_no_preload", "first compile on a fresh connection, no preload"),
        ("warm_no_preload", "the same compile, warm (the sixth to tenth in each connection)"),
        ("first_preload", "first compile on a fresh connection, `shared_preload_libraries = 'pgprompt'`"),
        ("warm_preload", "the same compile, warm, preloaded (the sixth to tenth)"),
    ]:
        lines.append(f"| {label} | {r[key]['median_ms']:.2f} | {r[key]['p95_ms']:.2f} |")
    for key, how in (("first_floor_no_preload", "no preload"), ("first_floor_preload", "preloaded")):
        if key in r:
            lines.append(f"| floor, {how}: the rows a compile reads (7 one-table statements), first on a fresh connection | "
                         f"{r[key]['first']['median_ms']:.2f} | {r[key]['first']['p95_ms']:.2f} |")
            lines.append(f"| floor, {how}: the same statements, warm | {r[key]['warm']['median_ms']:.2f} | {r[key]['warm']['p95_ms']:.2f} |")
            if "one" in r[key]:
                one = r[key]["one"]
                lines.append(f"| floor, {how}: one statement counting those rows, first on a fresh connection | "
                             f"{one['first']['median_ms']:.2f} | {one['first']['p95_ms']:.2f} |")
                lines.append(f"| floor, {how}: the same statement, warm | {one['warm']['median_ms']:.2f} | {one['warm']['p95_ms']:.2f} |")
    lines.append(f"| a sealed turn's `compile_turn` again (read from storage), mean | {r['compile_sealed_ms']:.2f} | |")
    for key, label in [
        ("floor_200", "with lz4 (`default_toast_compression`): the `string_agg` floor, 200 turns"),
        ("json_floor_200", "with lz4: the `json_agg` floor, 200 turns"),
        ("preview_200", "with lz4: the body, 200 turns"),
    ]:
        if "lz4" in r:
            lines.append(f"| {label} | {r['lz4'][key]['median_ms']:.2f} | {r['lz4'][key]['p95_ms']:.2f} |")
    lines += [
        "",
        "Throughput (pgbench, `preview_turn` of the 200-turn conversation, 10 s per run):",
        "",
        "| clients | tps | p50 ms | p95 ms | p99 ms |",
        "|---:|---:|---:|---:|---:|",
    ]
    for n, v in r["pgbench"].items():
        lines.append(f"| {n} | {v['tps']:.0f} | {v['p50_ms']:.2f} | {v['p95_ms']:.2f} | {v['p99_ms']:.2f} |")
    lines += ["", "Seal storage (`prompt.seals` and `prompt.seal_nodes` with TOAST and indexes, after VACUUM):", "",
              "| sealed exchanges | bytes | per exchange | text written | ratio |", "|---:|---:|---:|---:|---:|"]
    for n, v in st.items():
        lines.append(f"| {n} | {v['bytes']} | {v['bytes'] / int(n):.0f} | {v['text']} | {v['bytes'] / v['text']:.2f} |")
    lines += [
        "",
        f"Token counting: `count_tokens` {r['count_tokens_mb_per_s']:.1f} MB/s, Python tiktoken {r['tiktoken_mb_per_s']:.1f} MB/s (cl100k_base, the same 200 texts).",
        f"The 200-turn body is {r['body_bytes_200'] / 1e6:.2f} MB of JSON for {r['message_text'] / 1e6:.2f} MB of rendered rows.",
        "",
        "| ratio | value | target | |",
        "|---|---:|---|---|",
    ]
    for label, v, target in ratios:
        lines.append(f"| {label} | {v:.2f} | {target} | {ok(v, target)} |")
    lines += issue_43_ratios(r)
    fresh, cl, both = r["rss_kb_fresh"], r["rss_kb_cl100k"], r["rss_kb_both"]
    lines += [
        "",
        "Backend memory (KiB, VmRSS / VmHWM peak):",
        f"fresh connection {fresh[0]} / {fresh[1]}; after compiling on cl100k_base {cl[0]} / {cl[1]}; after o200k_base too {both[0]} / {both[1]}.",
        f"RSS every 2,000 of 10,000 compiles in one backend, then after 200 compiles of the 200-turn conversation: {r['rss_kb_over_10k_compiles']}.",
        "A fresh backend after compiling on both tokenizers, RSS / its own (private) memory / its proportional share (Pss, "
        "`/proc/PID/smaps_rollup`): "
        f"{r['memory_both']['rss_kb']} / {r['memory_both']['private_kb']} / {r['memory_both'].get('pss_kb', '-')} without preload; "
        f"{r['memory_both_preload']['rss_kb']} / {r['memory_both_preload']['private_kb']} / {r['memory_both_preload'].get('pss_kb', '-')} with "
        "`shared_preload_libraries`. The tokenizers' tables are the library's read-only pages, shared by every backend "
        "through the page cache in both cases.",
    ]
    lib = r.get("library", {})
    if lib.get("pgprompt_bytes"):
        vec = lib.get("pgvector_bytes")
        lines.append(f"The shared library: {lib['pgprompt_bytes'] / 1e6:.1f} MB"
                     + (f" (pgvector's: {vec / 1e6:.2f} MB, `{lib['pgvector_path']}`)." if vec else " (pgvector is not installed here to compare)."))
    notes = ROOT / "bench/NOTES.md"
    if notes.exists():
        lines += ["", notes.read_text().rstrip()]
    lines += cache_lines() + later_sections()
    text = "\n".join(lines) + "\n"
    print(text)
    if os.environ.get("BENCH_WRITE", "1") == "1":
        (ROOT / "bench/RESULTS.md").write_text(text)


if __name__ == "__main__":
    {"build": build_all, "measure": measure, "preload": preload, "report": report}[sys.argv[1]]()
