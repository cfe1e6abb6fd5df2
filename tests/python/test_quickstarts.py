"""The quick-starts run: examples/python (Anthropic SDK; and a local Ollama through the chat
wire with the OpenAI SDK), examples/node (OpenAI SDK, Chat Completions) and examples/go
(net/http, Responses API), each against a local fake
provider (examples/fake_provider.py) that validates every request with the official
SDK's request type and answers in the documented shapes: a tool call, then the final
answer. Each quick-start compiles, posts, records, writes the tool's result, compiles
the continuation, posts and records again."""
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from conftest import ROOT, connect, make_database

NAME = "pgprompt_quickstarts"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def provider():
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "examples/fake_provider.py"), str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait()


@pytest.fixture(scope="module")
def qdb():
    c = make_database(NAME)
    yield c
    c.close()


def env(provider: str) -> dict:
    e = dict(os.environ)
    e.update(PGDATABASE=NAME, PGUSER=os.environ.get("PGUSER", "postgres"),
             ANTHROPIC_BASE_URL=provider, ANTHROPIC_API_KEY="test",
             OPENAI_BASE_URL=f"{provider}/v1", OPENAI_API_KEY="test")
    return e


def check(qdb, out: str, handle: str, stop: str):
    assert f"step 1: {stop}, 1 tool call(s)" in out, out
    assert "step 2:" in out and "0 tool call(s)" in out and "answer: Paris is 18 °C and sunny." in out, out
    assert out.rstrip().endswith("done"), out
    rows = qdb.execute(
        "SELECT r.step, r.billed_input_tokens, r.estimated_input_tokens FROM prompt.responses r "
        "JOIN prompt.turns t ON (t.conversation_id, t.id) = (r.conversation_id, r.turn_id) "
        "JOIN prompt.users u ON u.id = coalesce(t.answerer_id, "
        "(SELECT answerer_id FROM prompt.conversations c WHERE c.id = t.conversation_id)) "
        "WHERE u.handle = %s ORDER BY r.step", (handle,)).fetchall()
    assert [r[0] for r in rows] == [1, 2] and all(r[1] == 120 and r[2] > 0 for r in rows), rows


def test_python_quickstart(qdb, provider):
    p = subprocess.run([sys.executable, str(ROOT / "examples/python/quickstart.py")], env=env(provider),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    check(qdb, p.stdout, "lark_py", "tool_use")


def test_python_ollama_quickstart(qdb, provider):
    """A compatible provider through the chat wire: the body Ollama's endpoint reads (the
    fake refuses a field it does not), posted with the OpenAI SDK, its answers recorded."""
    e = env(provider)
    e["OLLAMA_BASE_URL"] = f"{provider}/ollama/v1"
    p = subprocess.run([sys.executable, str(ROOT / "examples/python/quickstart_ollama.py")], env=e,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    check(qdb, p.stdout, "lark_ollama", "tool_calls")


def test_node_quickstart(qdb, provider):
    assert shutil.which("node"), "node is installed by scripts/setup.sh"
    assert (ROOT / "examples/node/node_modules/openai").exists(), "scripts/setup.sh runs npm install in examples/node"
    p = subprocess.run(["node", str(ROOT / "examples/node/quickstart.mjs")], env=env(provider),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    check(qdb, p.stdout, "lark_node", "tool_calls")


def test_go_quickstart(qdb, provider, tmp_path):
    """The module as a Go user runs it (go mod tidy, go run .), in a copy whose lib/pq is
    Debian's packaged source (this machine reaches no Go module proxy)."""
    assert shutil.which("go"), "go is installed by scripts/setup.sh"
    module = tmp_path / "go"
    shutil.copytree(ROOT / "examples/go", module)
    e = env(provider)
    e.update(GO111MODULE="on", GOFLAGS="-mod=mod", GOPROXY="off", GOSUMDB="off", GOPATH=str(tmp_path / "gopath"),
             GOCACHE=str(ROOT / "target/go-cache"))
    for cmd in (["go", "mod", "edit", "-replace", "github.com/lib/pq=/usr/share/gocode/src/github.com/lib/pq"],
                ["go", "mod", "tidy"]):
        done = subprocess.run(cmd, cwd=module, env=e, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (cmd, done.stderr)
    p = subprocess.run(["go", "run", "."], cwd=module, env=e, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    check(qdb, p.stdout, "lark_go", "completed")


def test_the_readme_minimal_recipe_runs_as_written():
    """The README's "A first compile, the minimum" block, run as it is written on a fresh
    database: it compiles to exactly this body, and the answer it stores is read back."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### A first compile, the minimum"):]
    recipe = section[section.index("```sql\n") + 7:section.index("```", section.index("```sql\n") + 7)]
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_recipe")
        admin.execute("CREATE DATABASE pgprompt_recipe")
    with connect("pgprompt_recipe") as c:
        c.execute("CREATE EXTENSION pgprompt")
        cur = c.cursor()
        cur.execute(recipe)
        bodies = []
        while True:
            if cur.description and cur.description[0].name == "compile_turn":
                bodies.append(cur.fetchone()[0])
            if not cur.nextset():
                break
        assert len(bodies) == 1
        body = c.execute("SELECT prompt.sealed_body('00000000-0000-4000-8000-0000000000c1', "
                         "'00000000-0000-4000-8000-0000000000d2')::text").fetchone()[0]
        assert body == (
            '{"model":"claude-sonnet-5","max_tokens":4096,'
            '"system":[{"type":"text","text":"You are Lark. You are helping Ada."}],'
            '"messages":[{"role":"user","content":[{"type":"text","text":"I was charged twice for INV-2041."},'
            '{"type":"text","text":"Can you check?"}]}]}'
        ), "no cache breakpoint: the prefix is below claude-sonnet-5's 2048-token minimum"
        assert c.execute("SELECT content FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000000d2'"
                         ).fetchone()[0] == "Yes: the second charge will be refunded."
