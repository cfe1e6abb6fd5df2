"""Every compiled request validates against the official SDKs' request types.

pydantic checks `Iterable` fields lazily: the validated value holds iterators that
validate as they are consumed. `materialize` walks the validated value whole (with the
adapter alive), and the walked value must equal the request: nothing was dropped as an
unknown key, nothing coerced.
"""
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from pydantic import BaseModel, TypeAdapter

from conftest import compile_turn

ANTHROPIC = TypeAdapter(MessageCreateParamsNonStreaming)
CHAT = TypeAdapter(CompletionCreateParamsNonStreaming)

C1 = "00000000-0000-4000-8000-00000000c001"
C2 = "00000000-0000-4000-8000-00000000c002"
C3 = "00000000-0000-4000-8000-00000000c003"
R1 = "00000000-0000-4000-8000-0000000f0001"


def materialize(value):
    if isinstance(value, BaseModel):
        # Unions of the SDKs admit response models too (TextBlock beside TextBlockParam).
        return materialize(value.model_dump(exclude_unset=True))
    if isinstance(value, dict):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    return [materialize(v) for v in value]


def assert_valid(adapter: TypeAdapter, request: dict) -> None:
    validated = adapter.validate_python(request)
    assert materialize(validated) == request


def with_model(db, conversation, turn, model):
    """The turn compiled for another model (and so another wire), without sealing."""
    db.execute("BEGIN")
    try:
        db.execute("UPDATE prompt.turns SET model = %s WHERE conversation_id = %s AND id = %s", (model, conversation, turn))
        return compile_turn(db, conversation, turn)
    finally:
        db.execute("ROLLBACK")


CASES = [
    ("demo", C1, "00000000-0000-4000-8000-0000000d0004"),
    ("group, read by lark", C3, "00000000-0000-4000-8000-0000000f1006"),
    ("group, read by wren", C3, "00000000-0000-4000-8000-0000000f1007"),
]


@pytest.mark.parametrize("name,conversation,turn", CASES)
def test_anthropic_wire_validates(db, name, conversation, turn):
    result = with_model(db, conversation, turn, "claude-sonnet-4-5")
    assert result["wire"] == "anthropic"
    assert_valid(ANTHROPIC, result["request"])


@pytest.mark.parametrize("name,conversation,turn", CASES)
def test_chat_wire_validates(db, name, conversation, turn):
    result = with_model(db, conversation, turn, "gpt-4o")
    assert result["wire"] == "chat"
    assert_valid(CHAT, result["request"])


@pytest.mark.parametrize("model", ["claude-vision", "claude-sonnet-4-5", "gpt-4o-vision", "gpt-4o"])
def test_a_run_with_tools_rounds_and_pictures_validates(db, model):
    db.execute("BEGIN")
    try:
        # A fresh seal for this model: drop the fixture's rounds' turn seal in a rollback.
        db.execute("ALTER TABLE prompt.turns DISABLE TRIGGER turns_write")
        db.execute(
            "UPDATE prompt.turns SET model = %s, sealed_at = NULL, sealed_request = NULL, sealed_preface = NULL, "
            "sealed_catalog = NULL, sealed_mechanism = NULL, sealed_versions = NULL WHERE id = %s",
            (model, R1),
        )
        db.execute("ALTER TABLE prompt.turns ENABLE TRIGGER turns_write")
        result = compile_turn(db, C2, R1)
    finally:
        db.execute("ROLLBACK")
    request = result["request"]
    assert request["tools"], "the turn's tools ride the request"
    if result["wire"] == "anthropic":
        assert_valid(ANTHROPIC, request)
        kinds = [b["type"] for m in request["messages"] for b in m["content"]]
        assert "tool_use" in kinds and "tool_result" in kinds
        assert ("image" in kinds) == model.endswith("vision")
    else:
        assert_valid(CHAT, request)
        roles = [m["role"] for m in request["messages"]]
        assert "tool" in roles
        assert any("tool_calls" in m for m in request["messages"])


def test_the_sealed_continuation_validates_and_extends_the_seal(db):
    sealed = db.execute("SELECT sealed_request FROM prompt.turns WHERE id = %s", (R1,)).fetchone()[0]
    result = compile_turn(db, C2, R1, "compile_turn")
    assert_valid(ANTHROPIC, result["request"])
    n = len(sealed["request"]["messages"])
    assert result["request"]["messages"][:n] == sealed["request"]["messages"]
    assert result["request"]["system"] == sealed["request"]["system"]
    assert len(result["request"]["messages"]) > n
