"""pgprompt quick-start in Python: compile a turn, post it with the official Anthropic
SDK, record the answer, run the tool, record its result, compile the continuation,
post it, record the final answer.

    pip install psycopg anthropic
    PGHOST=... PGDATABASE=... ANTHROPIC_BASE_URL=http://127.0.0.1:8765 python3 examples/python/quickstart.py

The database needs `CREATE EXTENSION pgprompt`; the script writes its own rows.
"""
import json
import os

import anthropic
import psycopg

TOOLS = [{"name": "get_weather", "description": "Current weather for a city.",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]


def run_tool(name: str, arguments: dict) -> str:
    return json.dumps({"city": arguments["city"], "temp_c": 18, "sky": "sunny"})


def main():
    db = psycopg.connect(autocommit=True)
    client = anthropic.Anthropic(api_key=os.environ.get("ANTHROPIC_API_KEY", "test"),
                                 base_url=os.environ.get("ANTHROPIC_BASE_URL"))

    # Rows: a model, a person, an agent with a system prompt, a conversation, a run turn.
    db.execute("INSERT INTO prompt.models (name, wire, advisory_window) VALUES ('claude-sonnet-5', 'anthropic', 180000) "
               "ON CONFLICT (name) DO NOTHING")
    ws = db.execute("INSERT INTO prompt.workspaces (name) VALUES ('Quick-start') RETURNING id").fetchone()[0]
    ada = db.execute("INSERT INTO prompt.users (handle, display_name, kind) VALUES ('ada_py', 'Ada', 'human') "
                     "ON CONFLICT (handle) DO UPDATE SET display_name = excluded.display_name RETURNING id").fetchone()[0]
    lark = db.execute("INSERT INTO prompt.users (handle, display_name, kind, model) VALUES ('lark_py', 'Lark', 'agent', "
                      "'claude-sonnet-5') ON CONFLICT (handle) DO UPDATE SET model = excluded.model RETURNING id").fetchone()[0]
    db.execute("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, 'system_prompt', 'You are {{agent}}.') "
               "ON CONFLICT DO NOTHING", (lark,))
    conv = db.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s) "
                      "RETURNING id", (ws, lark, ada)).fetchone()[0]
    turn = db.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, mode, tools) "
                      "VALUES (%s, 'reply', %s, 'What is the weather in Paris?', 'run', %s) RETURNING id",
                      (conv, ada, json.dumps(TOOLS))).fetchone()[0]

    while True:
        body = db.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn)).fetchone()[0]   # the request, as is
        message = client.messages.create(**body)                                             # post it
        step = db.execute("SELECT prompt.record_response(%s, %s, %s)",
                          (conv, turn, json.dumps(message.model_dump(mode="json")))).fetchone()[0]
        print(f"step {step['step']}: {step['stop_reason']}, {len(step['tool_calls'])} tool call(s)")
        if not step["tool_calls"]:
            break
        results = [{"call_id": c["id"], "content": run_tool(c["name"], c["input"])} for c in step["tool_calls"]]
        db.execute("SELECT prompt.record_tool_results(%s, %s, %s)", (conv, turn, json.dumps(results)))
    print("answer:", message.content[-1].text)
    print("done")


if __name__ == "__main__":
    main()
