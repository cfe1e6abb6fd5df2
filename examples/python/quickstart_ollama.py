"""pgprompt quick-start with a compatible provider: a local Ollama through the chat wire,
posted with the official OpenAI SDK. The model row names its provider (models.provider
'ollama'): the body is spelled as Ollama's endpoint reads it (max_tokens, no
prompt_cache_key, each tool call's index).

    ollama pull gpt-oss:20b
    pip install psycopg openai
    PGHOST=... PGDATABASE=... OLLAMA_BASE_URL=http://localhost:11434/v1 python3 examples/python/quickstart_ollama.py

The database needs `CREATE EXTENSION pgprompt`; the script writes its own rows.
"""
import json
import os

import openai
import psycopg

TOOLS = [{"name": "get_weather", "description": "Current weather for a city.",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]


def run_tool(name: str, arguments: dict) -> str:
    return json.dumps({"city": arguments["city"], "temp_c": 18, "sky": "sunny"})


def main():
    db = psycopg.connect(autocommit=True)
    # Ollama asks for no key; the SDK wants one.
    client = openai.OpenAI(api_key="ollama", base_url=os.environ.get("OLLAMA_BASE_URL", "http://localhost:11434/v1"))

    # The model: Ollama's id, on the chat wire, in Ollama's dialect (gpt-oss:20b's shipped
    # profile names Ollama already; the column says it for any model Ollama serves).
    db.execute("INSERT INTO prompt.models (name, wire, provider, max_output_tokens) "
               "VALUES ('gpt-oss:20b', 'chat', 'ollama', 2048) ON CONFLICT (name) DO NOTHING")
    ws = db.execute("INSERT INTO prompt.workspaces (name) VALUES ('Quick-start') RETURNING id").fetchone()[0]
    ada = db.execute("INSERT INTO prompt.users (handle, display_name, kind) VALUES ('ada_ollama', 'Ada', 'human') "
                     "ON CONFLICT (handle) DO UPDATE SET display_name = excluded.display_name RETURNING id").fetchone()[0]
    lark = db.execute("INSERT INTO prompt.users (handle, display_name, kind, model) VALUES ('lark_ollama', 'Lark', "
                      "'agent', 'gpt-oss:20b') ON CONFLICT (handle) DO UPDATE SET model = excluded.model RETURNING id"
                      ).fetchone()[0]
    db.execute("INSERT INTO prompt.documents (user_id, name, body) VALUES (%s, 'system_prompt', 'You are {{agent}}.') "
               "ON CONFLICT DO NOTHING", (lark,))
    conv = db.execute("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s) "
                      "RETURNING id", (ws, lark, ada)).fetchone()[0]
    turn = db.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, mode, tools) "
                      "VALUES (%s, 'reply', %s, 'What is the weather in Paris?', 'run', %s) RETURNING id",
                      (conv, ada, json.dumps(TOOLS))).fetchone()[0]

    while True:
        body = db.execute("SELECT prompt.compile_turn(%s, %s)", (conv, turn)).fetchone()[0]   # the request, as is
        completion = client.chat.completions.create(**body)                                  # post it
        step = db.execute("SELECT prompt.record_response(%s, %s, %s)",
                          (conv, turn, completion.model_dump_json())).fetchone()[0]
        print(f"step {step['step']}: {step['stop_reason']}, {len(step['tool_calls'])} tool call(s)")
        if not step["tool_calls"]:
            break
        results = [{"call_id": c["id"], "content": run_tool(c["name"], c["input"])} for c in step["tool_calls"]]
        db.execute("SELECT prompt.record_tool_results(%s, %s, %s)", (conv, turn, json.dumps(results)))
    print("answer:", completion.choices[0].message.content)
    print("done")


if __name__ == "__main__":
    main()
