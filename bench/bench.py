"""pgprompt benchmark: builds realistic data in a local cluster and reports, side by side
in one run, medians and p95 of compiling a turn against the floor of reading its rows,
an application-side compiler, count_tokens against Python tiktoken, first compiles on
fresh connections, and backend memory.

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
        c.execute(
            "INSERT INTO prompt.models (name, wire, tokenizer, advisory_window, max_output_tokens) VALUES "
            "('bench', 'anthropic', 'cl100k_base', %s, 4096), ('bench-o200k', 'anthropic', 'o200k_base', %s, 4096)",
            (WINDOW, WINDOW),
        )
        c.execute("INSERT INTO prompt.workspaces (id, name, timezone) VALUES (%s, 'Bench', 'UTC')", (WS,))
        c.execute("INSERT INTO prompt.users (id, handle, display_name, kind) VALUES (%s, 'ada', 'Ada', 'human')", (ADA,))
        c.execute(
            "INSERT INTO prompt.users (id, handle, display_name, kind, model, application) "
            "VALUES (%s, 'lark', 'Lark', 'agent', 'bench', 'helpdesk')",
            (LARK,),
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
        for conv, turn, n in [(C_SMALL, T_SMALL, 6), (C200, T200, 200), (C10K, T10K, 10_000)]:
            c.execute(
                "INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)",
                (conv, WS, LARK, ADA),
            )
            with c.cursor().copy(
                "COPY prompt.turns (conversation_id, seq, kind, role, author_id, content) FROM STDIN"
            ) as copy:
                for i in range(n):
                    role, who = ("user", ADA) if i % 2 == 0 else ("assistant", LARK)
                    copy.write_row((conv, i + 1, "message", role, who, text(rng)))
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
        c.execute("VACUUM ANALYZE")


def timed(fn, runs=RUNS, warmup=3):
    for _ in range(warmup):
        fn()
    xs = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - t0)
    return xs


def summary(xs):
    xs = sorted(xs)
    return {"median_ms": statistics.median(xs) * 1e3, "p95_ms": xs[min(len(xs) - 1, int(len(xs) * 0.95))] * 1e3}


def rendered_turns(c, conv, turn):
    est = c.execute("SELECT prompt.preview_turn(%s, %s) -> 'estimate' -> 'history'", (conv, turn)).fetchone()[0]
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


def private_kb(pid):
    """A backend's own memory (KiB): what it does not share with the postmaster."""
    rollup = pathlib.Path(f"/proc/{pid}/smaps_rollup").read_text()
    get = lambda k: int(next(l for l in rollup.splitlines() if l.startswith(k)).split()[1])  # noqa: E731
    return get("Private_Clean:") + get("Private_Dirty:")


def compiled_on_both(c):
    """RSS and private memory of a fresh backend after compiling on both tokenizers."""
    pid = c.execute("SELECT pg_backend_pid()").fetchone()[0]
    c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C200, T200)).fetchone()
    c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C200, T200_O200K)).fetchone()
    return {"rss_kb": rss(c, pid)[0], "private_kb": private_kb(pid)}


def first_compile(c_runs=12):
    """Fresh connection, first preview_turn, against the same call warm."""
    firsts = []
    for _ in range(c_runs):
        with connect() as c:
            t0 = time.perf_counter()
            c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C200, T200)).fetchone()
            firsts.append(time.perf_counter() - t0)
    with connect() as c:
        warm = timed(lambda: c.execute("SELECT length(prompt.preview_turn(%s, %s)::text)", (C200, T200)).fetchone(), runs=20)
    return summary(firsts), summary(warm)


def build_all():
    build()
    if lz4_available():
        build(DB_LZ4, "lz4")


def measure():
    OUT.mkdir(exist_ok=True)
    r = {}
    with connect() as c:
        enc = encoding("cl100k_base")
        sel200, avail200 = rendered_turns(c, C200, T200)
        sel10k, avail10k = rendered_turns(c, C10K, T10K)
        r["rendered"] = {"200": [sel200, avail200], "10000": [sel10k, avail10k]}
        seq10k = c.execute("SELECT seq FROM prompt.turns WHERE id = %s", (T10K,)).fetchone()[0]
        floor = "SELECT length(string_agg(content, '' ORDER BY seq)) FROM prompt.turns WHERE conversation_id = %s AND seq >= %s AND seq < %s"
        preview = "SELECT length(prompt.preview_turn(%s, %s)::text)"
        r["floor_200"] = summary(timed(lambda: c.execute(floor, (C200, 1, 201)).fetchone()))
        r["preview_200"] = summary(timed(lambda: c.execute(preview, (C200, T200)).fetchone()))
        r["floor_10k"] = summary(timed(lambda: c.execute(floor, (C10K, seq10k - sel10k, seq10k)).fetchone()))
        r["preview_10k"] = summary(timed(lambda: c.execute(preview, (C10K, T10K)).fetchone()))
        # The compile alone: the jsonb built, not converted to text.
        r["preview_200_jsonb"] = summary(timed(lambda: c.execute("SELECT prompt.preview_turn(%s, %s) IS NOT NULL", (C200, T200)).fetchone()))
        r["result_bytes_200"] = c.execute("SELECT octet_length(prompt.preview_turn(%s, %s)::text)", (C200, T200)).fetchone()[0]
        r["estimate_10k"] = summary(timed(lambda: c.execute("SELECT count(*) FROM prompt.estimate_turn(%s, %s)", (C10K, T10K)).fetchone()))

        # End to end in a Python client: the request parsed as JSON.
        r["client_pgprompt_200"] = summary(timed(lambda: c.execute("SELECT prompt.preview_turn(%s, %s)", (C200, T200)).fetchone()[0]["request"]))
        r["client_request_only_200"] = summary(timed(lambda: c.execute("SELECT prompt.preview_turn(%s, %s) -> 'request'", (C200, T200)).fetchone()[0]))
        r["client_app_side_200"] = summary(timed(lambda: app_side_compiler(c, enc, C200, T200), runs=max(10, RUNS // 3)))
        # The same over 10,000 turns: the application fetches and counts the whole
        # conversation to find what fits; pgprompt reads the newest rows it renders.
        r["client_pgprompt_10k"] = summary(timed(lambda: c.execute("SELECT prompt.preview_turn(%s, %s)", (C10K, T10K)).fetchone()[0]["request"]))
        last = {}
        app_10k = lambda: last.update(request=app_side_compiler(c, enc, C10K, T10K))  # noqa: E731
        r["client_app_side_10k"] = summary(timed(app_10k, runs=5, warmup=1))
        r["app_side_10k_kept"] = len(last["request"]["messages"])

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
                "floor_200": summary(timed(lambda: c.execute(floor, (C200, 1, 201)).fetchone())),
                "preview_200_jsonb": summary(
                    timed(lambda: c.execute("SELECT prompt.preview_turn(%s, %s) IS NOT NULL", (C200, T200)).fetchone())
                ),
                "preview_200": summary(timed(lambda: c.execute(preview, (C200, T200)).fetchone())),
            }
    r["first_no_preload"], r["warm_no_preload"] = first_compile()
    (OUT / "measure.json").write_text(json.dumps(r, indent=1))


def preload():
    with connect() as c:
        assert "pgprompt" in c.execute("SHOW shared_preload_libraries").fetchone()[0]
    first, warm = first_compile()
    with connect() as c:
        memory = compiled_on_both(c)
    out = {"first_preload": first, "warm_preload": warm, "memory_both_preload": memory}
    (OUT / "preload.json").write_text(json.dumps(out, indent=1))


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in pathlib.Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("model name")), "?")
    mem = next(l.split()[1] for l in pathlib.Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal"))
    return f"{os.cpu_count()} cores ({cpu}), {int(mem) // 1024 // 1024} GiB, {platform.system()} {platform.release()}, PostgreSQL 15"


def report():
    r = json.loads((OUT / "measure.json").read_text())
    r.update(json.loads((OUT / "preload.json").read_text()))
    sel200, sel10k = r["rendered"]["200"][0], r["rendered"]["10000"][0]
    ratios = [
        ("preview_turn / floor, 200 turns (server side)", r["preview_200"]["median_ms"] / r["floor_200"]["median_ms"], "<= 1.2"),
        (
            "per rendered entry, 10,000 turns / 200 turns",
            (r["preview_10k"]["median_ms"] / sel10k) / (r["preview_200"]["median_ms"] / sel200),
            "<= 1.2",
        ),
        ("app-side compiler / pgprompt, Python client end to end, 200 turns", r["client_app_side_200"]["median_ms"] / r["client_pgprompt_200"]["median_ms"], ">= 10"),
        (
            "the same, fetching only `preview_turn(...) -> 'request'`, 200 turns",
            r["client_app_side_200"]["median_ms"] / r["client_request_only_200"]["median_ms"],
            ">= 10",
        ),
        ("app-side compiler / pgprompt, Python client end to end, 10,000 turns", r["client_app_side_10k"]["median_ms"] / r["client_pgprompt_10k"]["median_ms"], ">= 10"),
        ("count_tokens / Python tiktoken throughput", r["count_tokens_mb_per_s"] / r["tiktoken_mb_per_s"], ">= 1.5"),
        ("first compile on a fresh connection / warm, preloaded", r["first_preload"]["median_ms"] / r["warm_preload"]["median_ms"], "<= 3"),
        ("first compile on a fresh connection / warm, not preloaded", r["first_no_preload"]["median_ms"] / r["warm_no_preload"]["median_ms"], "(reported)"),
    ]

    def ok(v, target):
        if target.startswith("<="):
            return "met" if v <= float(target[2:]) else "MISSED"
        if target.startswith(">="):
            return "met" if v >= float(target[2:]) else "MISSED"
        return ""

    lines = [
        "# pgprompt benchmark results",
        "",
        f"Machine: {machine()}. Date: {time.strftime('%Y-%m-%d')}. Runs per figure: {RUNS} (after 3 warm-up calls).",
        "Reproduce: `bench/run.sh` (builds the release extension, starts a throwaway cluster, loads the data, measures).",
        "",
        "Data: one agent with a ~1 KB system prompt, character and persona, 10 memory entries, a 40-skill catalog;",
        f"conversations of 200 and 10,000 message turns of ~2 KB; model window {WINDOW} tokens, which fits all 200",
        f"turns ({sel200} entries rendered) and the newest {sel10k} of the 10,000.",
        "",
        "| measure | median ms | p95 ms |",
        "|---|---:|---:|",
    ]
    for key, label in [
        ("floor_200", "floor: `string_agg(content ORDER BY seq)` of the 200 rendered rows"),
        ("preview_200", "`length(preview_turn(...)::text)`, 200 turns"),
        ("preview_200_jsonb", "`preview_turn(...) IS NOT NULL`, 200 turns: the compile alone, no text conversion"),
        ("floor_10k", f"floor: the {sel10k} rendered rows of the 10,000-turn conversation"),
        ("preview_10k", "`length(preview_turn(...)::text)`, 10,000 turns"),
        ("estimate_10k", "`estimate_turn(...)`, 10,000 turns"),
        ("client_pgprompt_200", "Python client: `preview_turn` fetched and parsed, 200 turns"),
        ("client_request_only_200", "Python client: `preview_turn(...) -> 'request'` fetched and parsed, 200 turns"),
        ("client_app_side_200", "Python client: app-side compiler (psycopg + tiktoken + langchain trim_messages), 200 turns"),
        ("client_pgprompt_10k", "Python client: `preview_turn` fetched and parsed, 10,000 turns"),
        ("client_app_side_10k", f"Python client: app-side compiler, 10,000 turns (all fetched and counted, {r['app_side_10k_kept']} messages kept)"),
        ("first_no_preload", "first compile on a fresh connection, no preload"),
        ("warm_no_preload", "the same compile, warm"),
        ("first_preload", "first compile on a fresh connection, `shared_preload_libraries = 'pgprompt'`"),
        ("warm_preload", "the same compile, warm, preloaded"),
    ]:
        lines.append(f"| {label} | {r[key]['median_ms']:.2f} | {r[key]['p95_ms']:.2f} |")
    for key, label in [
        ("floor_200", "with lz4 (`default_toast_compression`): the floor, 200 turns"),
        ("preview_200_jsonb", "with lz4: the compile alone, 200 turns"),
        ("preview_200", "with lz4: `length(preview_turn(...)::text)`, 200 turns"),
    ]:
        if "lz4" in r:
            lines.append(f"| {label} | {r['lz4'][key]['median_ms']:.2f} | {r['lz4'][key]['p95_ms']:.2f} |")
    lines += [
        "",
        f"Token counting: `count_tokens` {r['count_tokens_mb_per_s']:.1f} MB/s, Python tiktoken {r['tiktoken_mb_per_s']:.1f} MB/s (cl100k_base, the same 200 texts).",
        "",
        "| ratio | value | target | |",
        "|---|---:|---|---|",
    ]
    for label, v, target in ratios:
        lines.append(f"| {label} | {v:.2f} | {target} | {ok(v, target)} |")
    fresh, cl, both = r["rss_kb_fresh"], r["rss_kb_cl100k"], r["rss_kb_both"]
    lines += [
        "",
        "Backend memory (KiB, VmRSS / VmHWM peak):",
        f"fresh connection {fresh[0]} / {fresh[1]}; after compiling on cl100k_base {cl[0]} / {cl[1]}; after o200k_base too {both[0]} / {both[1]}.",
        f"RSS every 2,000 of 10,000 compiles in one backend, then after 200 compiles of the 200-turn conversation: {r['rss_kb_over_10k_compiles']}.",
        "A fresh backend after compiling on both tokenizers, RSS / its own (private) memory: "
        f"{r['memory_both']['rss_kb']} / {r['memory_both']['private_kb']} without preload; "
        f"{r['memory_both_preload']['rss_kb']} / {r['memory_both_preload']['private_kb']} with "
        "`shared_preload_libraries`, where the encoders are built once in the postmaster and shared.",
    ]
    # What the result's shape alone costs: converting it to text (server side), or writing it
    # out, sending and parsing it (client side), whatever the compile itself costs.
    convert = r["preview_200"]["median_ms"] - r["preview_200_jsonb"]["median_ms"]
    out_path = r["client_pgprompt_200"]["median_ms"] - r["preview_200_jsonb"]["median_ms"]
    floor = r["floor_200"]["median_ms"]
    lines += [
        "",
        "Where the missed targets stand (200 turns). SPEC §10 makes the result carry the rendered text",
        "twice, `messages` (the compiled list) and `request` (the wire body): "
        f"{r['result_bytes_200'] / 1e6:.2f} MB of JSON for 0.40 MB of rows.",
        f"- Server side: converting that result to text and taking its `length()` costs {convert:.2f} ms",
        f"  (`length(preview_turn(...)::text)` minus `preview_turn(...) IS NOT NULL`), {convert / floor:.2f}x the floor",
        "  by itself. A compile that read its rows at the cost of the floor and did nothing else would",
        f"  still measure {1 + convert / floor:.2f}x; this one measures {r['preview_200']['median_ms'] / floor:.2f}x. "
        f"The compile alone is {r['preview_200_jsonb']['median_ms'] / floor:.2f}x the floor.",
        f"- Python client: writing the result out, sending it and parsing it costs {out_path:.2f} ms",
        "  (the client row minus the compile alone). With the floor added, the app-side compiler could be",
        f"  at most {r['client_app_side_200']['median_ms'] / (floor + out_path):.1f}x slower than any server-side compiler "
        "returning this result,",
        "  against the 10x asked. Over 10,000 turns, where the application must fetch and count the",
        "  whole conversation to know what fits, the ratio is the 10,000-turn row above.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if os.environ.get("BENCH_WRITE", "1") == "1":
        (ROOT / "bench/RESULTS.md").write_text(text)


if __name__ == "__main__":
    {"build": build_all, "measure": measure, "preload": preload, "report": report}[sys.argv[1]]()
