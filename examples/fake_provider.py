"""A local stand-in for the providers, for the quick-starts' tests: it answers
POST /v1/messages (Anthropic), /v1/chat/completions and /v1/responses (OpenAI) in their
documented shapes, and /ollama/v1/chat/completions as a local Ollama does. Each request is
validated with the official SDK's request type first (Ollama's: the fields its
OpenAI-compatible endpoint reads, openai/openai.go; a 400 names the problem); the answer
is a tool call (get_weather) until the request carries a tool result, then the final text.

    python3 examples/fake_provider.py 8765
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import BaseModel, TypeAdapter

ADAPTERS = {
    "/v1/messages": TypeAdapter(MessageCreateParamsNonStreaming),
    "/v1/chat/completions": TypeAdapter(CompletionCreateParamsNonStreaming),
    "/v1/responses": TypeAdapter(ResponseCreateParamsNonStreaming),
}
# What Ollama's OpenAI-compatible endpoint reads of a request (ollama/ollama,
# openai/openai.go, ChatCompletionRequest; it ignores the rest, max_completion_tokens too).
OLLAMA_FIELDS = {"model", "messages", "stream", "stream_options", "max_tokens", "seed", "stop", "temperature",
                 "frequency_penalty", "presence_penalty", "top_p", "response_format", "tools", "reasoning",
                 "reasoning_effort", "logprobs", "top_logprobs"}
FINAL = "Paris is 18 °C and sunny."
USAGE_IN = 120


def materialize(v):
    if isinstance(v, BaseModel):
        return materialize(v.model_dump(exclude_unset=True))
    if isinstance(v, dict):
        return {k: materialize(x) for k, x in v.items()}
    if isinstance(v, (str, bytes, int, float, bool)) or v is None:
        return v
    return [materialize(x) for x in v]


def has_result(path: str, body: dict) -> bool:
    if path == "/v1/messages":
        return any(isinstance(m["content"], list) and any(b.get("type") == "tool_result" for b in m["content"])
                   for m in body["messages"])
    if path == "/v1/chat/completions":
        return any(m["role"] == "tool" for m in body["messages"])
    return any(i.get("type") == "function_call_output" for i in body["input"])


def answer(path: str, body: dict, n: int) -> dict:
    done = has_result(path, body)
    if path == "/v1/messages":
        content = [{"type": "text", "text": FINAL}] if done else [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": f"toolu_{n}", "name": "get_weather", "input": {"city": "Paris"}}]
        return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": body["model"], "content": content,
                "stop_reason": "end_turn" if done else "tool_use", "stop_sequence": None,
                "usage": {"input_tokens": USAGE_IN, "output_tokens": 20, "cache_creation_input_tokens": 0,
                          "cache_read_input_tokens": 0}}
    if path == "/v1/chat/completions":
        message = {"role": "assistant", "content": FINAL} if done else {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": f"call_{n}", "type": "function",
                            "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}
        return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1764500000, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop" if done else "tool_calls", "message": message,
                             "logprobs": None}],
                "usage": {"prompt_tokens": USAGE_IN, "completion_tokens": 20, "total_tokens": USAGE_IN + 20}}
    output = [{"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": FINAL, "annotations": []}]}] if done else [
        {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "get_weather",
         "arguments": "{\"city\":\"Paris\"}", "status": "completed"}]
    return {"id": f"resp_{n}", "object": "response", "created_at": 1764500000, "status": "completed",
            "model": body["model"], "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": USAGE_IN, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                      "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": USAGE_IN + 20}}


class Handler(BaseHTTPRequestHandler):
    count = 0

    def do_POST(self):  # noqa: N802
        path = self.path.split("?")[0]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if path == "/ollama/v1/chat/completions":
            unread = set(body) - OLLAMA_FIELDS
            if unread:
                return self.reply(400, {"error": {"message": f"Ollama reads no {sorted(unread)}"}})
            Handler.count += 1
            reply = answer("/v1/chat/completions", body, Handler.count)
            # As Ollama answers: its fingerprint, each call's index, no cached tokens.
            reply["system_fingerprint"] = "fp_ollama"
            for i, call in enumerate(reply["choices"][0]["message"].get("tool_calls", [])):
                call["index"] = i
            return self.reply(200, reply)
        adapter = ADAPTERS.get(path)
        if adapter is None:
            return self.reply(404, {"error": {"message": f"no route {path}"}})
        try:
            if materialize(adapter.validate_python(body)) != body:
                raise ValueError("the SDK type dropped or changed a key")
        except Exception as e:  # noqa: BLE001 - the test reads the message
            return self.reply(400, {"error": {"type": "invalid_request_error", "message": str(e)[:2000]}})
        Handler.count += 1
        self.reply(200, answer(path, body, Handler.count))

    def reply(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print(f"fake provider on http://127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()
