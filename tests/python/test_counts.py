"""count_tokens against the reference Python tiktoken, and the estimate's total
against a recount of the compiled messages."""
import json
import pathlib

import pytest

from conftest import compile_turn, explain
from tiktoken_offline import count

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = json.loads((ROOT / "tests/fixtures/tiktoken_counts.json").read_text())


@pytest.mark.parametrize("tokenizer", ["cl100k_base", "o200k_base"])
def test_count_tokens_equals_python_tiktoken(db, tokenizer):
    texts = [row["text"] for row in FIXTURES]
    texts += ["Invoice INV-%d was charged %d times.\n" % (i, i % 3) * (i % 7 + 1) for i in range(50)]
    for text in texts:
        got = db.execute("SELECT prompt.count_tokens(%s, %s)", (text, tokenizer)).fetchone()[0]
        assert got == count(tokenizer, text), text[:80]


def dumps(value) -> str:
    """JSON as the body spells it: compact, keys in their order, UTF-8 as is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def count_body(body: dict, wire: str, tokenizer: str) -> int:
    """An independent count of a wire body, from the body alone: every text, tool call
    (name and arguments as JSON), tool result and image (85), 3 per message (and per
    system field), 3 for the request, and the tool definitions' JSON."""
    c = lambda text: count(tokenizer, text)  # noqa: E731
    total = 3
    if "tools" in body:
        total += c(dumps(body["tools"]))
    if wire == "converse":
        # Bedrock's Converse: the tools under toolConfig; a cachePoint is no block.
        if "toolConfig" in body:
            total += c(dumps(body["toolConfig"]["tools"]))

        def cblock(b):
            if "cachePoint" in b:
                return 0
            if "text" in b:
                return c(b["text"])
            if "image" in b:
                return 85
            if "toolUse" in b:
                return c(b["toolUse"]["name"]) + c(dumps(b["toolUse"]["input"]))
            if "toolResult" in b:
                return c(b["toolResult"]["content"][0]["text"])
            return c(dumps(b))
        if "system" in body:
            total += 3 + sum(cblock(b) for b in body["system"])
        return total + sum(3 + sum(cblock(b) for b in m["content"]) for m in body["messages"])
    if wire == "anthropic":
        def block(b):
            return {"text": lambda: c(b["text"]), "image": lambda: 85,
                    "tool_use": lambda: c(b["name"]) + c(dumps(b["input"])),
                    "tool_result": lambda: c(b["content"])}[b["type"]]()
        if "system" in body:
            total += 3 + sum(block(b) for b in body["system"])
        for m in body["messages"]:
            content = m["content"]
            total += 3 + (c(content) if isinstance(content, str) else sum(block(b) for b in content))
        return total
    if wire == "responses":
        def item(i):
            if i["type"] == "function_call":
                return c(i["name"]) + c(i["arguments"])
            if i["type"] == "function_call_output":
                # A string, or (a model taking explicit breakpoints) a list of input_text.
                out = i["output"]
                return c(out) if isinstance(out, str) else sum(c(p["text"]) for p in out)
            content = i["content"]
            if isinstance(content, str):
                return c(content)
            return sum(c(p["text"]) if p["type"] == "input_text" else 85 for p in content)
        return total + sum(3 + item(i) for i in body["input"])
    if wire == "gemini":
        def part(p):
            if "text" in p:
                return c(p["text"])
            if "inlineData" in p:
                return 85
            if "functionCall" in p:
                return c(p["functionCall"]["name"]) + c(dumps(p["functionCall"]["args"]))
            r = p["functionResponse"]["response"]
            return c(r.get("output", r.get("error")))
        if "systemInstruction" in body:
            total += 3 + sum(part(p) for p in body["systemInstruction"]["parts"])
        return total + sum(3 + sum(part(p) for p in content["parts"]) for content in body["contents"])
    for m in body["messages"]:
        total += 3
        content = m.get("content")
        if isinstance(content, str):
            total += c(content)
        elif content:
            total += sum(c(p["text"]) if p["type"] == "text" else 85 for p in content)
        for call in m.get("tool_calls", []):
            total += c(call["function"]["name"]) + c(call["function"]["arguments"])
    return total


@pytest.mark.parametrize(
    "conversation,turn",
    [
        ("00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"),
        ("00000000-0000-4000-8000-00000000c003", "00000000-0000-4000-8000-0000000f1006"),
        ("00000000-0000-4000-8000-00000000c003", "00000000-0000-4000-8000-0000000f1007"),
        ("00000000-0000-4000-8000-00000000c002", "00000000-0000-4000-8000-0000000f0001"),
    ],
)
@pytest.mark.parametrize("model", [None, "gpt-5.5", "claude-vision", "gpt-5.5-vision", "gpt-5.6-sol-vision", "gemini-vision",
                                   "converse-vision"])
def test_estimate_total_is_an_independent_count_of_the_body(db, conversation, turn, model):
    db.execute("BEGIN")
    try:
        if model:
            db.execute("SET LOCAL pgprompt.allow_history_rewrite = on")
            db.execute("ALTER TABLE prompt.turns DISABLE TRIGGER turns_write")
            db.execute("UPDATE prompt.turns SET model = %s, sealed_at = NULL WHERE id = %s", (model, turn))
            db.execute("ALTER TABLE prompt.seals DISABLE TRIGGER seals_guard")
            db.execute("DELETE FROM prompt.seals WHERE turn_id = %s", (turn,))
            db.execute("ALTER TABLE prompt.seals ENABLE TRIGGER seals_guard")
            db.execute("ALTER TABLE prompt.turns ENABLE TRIGGER turns_write")
        body = compile_turn(db, conversation, turn)
        e = explain(db, conversation, turn)
    finally:
        db.execute("ROLLBACK")
    assert e["estimate"]["total"] == count_body(body, e["wire"], e["estimate"]["window"]["tokenizer"])
    tools = next(b for b in e["estimate"]["blocks"] if b["block"] == "tools")
    listed = body.get("tools", body.get("toolConfig", {}).get("tools"))
    assert tools["tokens"] == (count(e["estimate"]["window"]["tokenizer"], dumps(listed)) if listed else 0)


def test_preview_is_deterministic_and_never_writes(db):
    c, t = "00000000-0000-4000-8000-00000000c003", "00000000-0000-4000-8000-0000000f1007"
    before = db.execute("SELECT count(*) FROM prompt.turns WHERE sealed_at IS NOT NULL").fetchone()[0]
    a = db.execute("SELECT prompt.preview_turn(%s, %s)::text", (c, t)).fetchone()[0]
    b = db.execute("SELECT prompt.preview_turn(%s, %s)::text", (c, t)).fetchone()[0]
    assert a == b
    assert db.execute("SELECT count(*) FROM prompt.turns WHERE sealed_at IS NOT NULL").fetchone()[0] == before


def test_preview_runs_in_a_read_only_transaction(db):
    db.execute("BEGIN READ ONLY")
    try:
        r = compile_turn(db, "00000000-0000-4000-8000-00000000c003", "00000000-0000-4000-8000-0000000f1007")
        assert r["messages"]
    finally:
        db.execute("ROLLBACK")


def test_compile_turn_of_an_unsealed_turn_in_a_read_only_transaction_is_refused(db):
    import psycopg

    db.execute("BEGIN READ ONLY")
    try:
        with pytest.raises(psycopg.Error) as e:
            db.execute("SELECT prompt.compile_turn(%s, %s)", ("00000000-0000-4000-8000-00000000c003", "00000000-0000-4000-8000-0000000f1007"))
        assert e.value.sqlstate == "25006"
    finally:
        db.execute("ROLLBACK")
