"""count_tokens against the reference Python tiktoken, and the estimate's total
against a recount of the compiled messages."""
import json
import pathlib

import pytest

from conftest import compile_turn
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


def recount(result: dict, tokenizer: str) -> int:
    total = 3
    for message in result["messages"]:
        total += 3
        for part in message["parts"]:
            if part["type"] == "text":
                total += count(tokenizer, part["text"])
            elif part["type"] == "tool_call":
                total += count(tokenizer, part["name"]) + count(tokenizer, json.dumps(part["input"], separators=(",", ":")))
            elif part["type"] == "tool_result":
                total += count(tokenizer, part["content"])
            else:
                total += 85
    return total


@pytest.mark.parametrize(
    "conversation,turn",
    [
        ("00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"),
        ("00000000-0000-4000-8000-00000000c003", "00000000-0000-4000-8000-0000000f1006"),
        ("00000000-0000-4000-8000-00000000c003", "00000000-0000-4000-8000-0000000f1007"),
    ],
)
def test_estimate_total_is_an_exact_recount(db, conversation, turn):
    result = compile_turn(db, conversation, turn)
    tokenizer = result["estimate"]["window"]["tokenizer"]
    assert result["estimate"]["total"] == recount(result, tokenizer)


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
