// pgprompt quick-start in Node: compile a turn, post it with the official OpenAI SDK
// (Chat Completions), record the answer, run the tool, record its result, compile the
// continuation, post it, record the final answer.
//
//   npm install            # openai, pg (package.json)
//   PGHOST=... PGDATABASE=... OPENAI_BASE_URL=http://127.0.0.1:8765/v1 node examples/node/quickstart.mjs
//
// The database needs `CREATE EXTENSION pgprompt`; the script writes its own rows.
import OpenAI from "openai";
import pg from "pg";

const TOOLS = [{ name: "get_weather", description: "Current weather for a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];

const runTool = (name, args) => JSON.stringify({ city: args.city, temp_c: 18, sky: "sunny" });

const db = new pg.Client();
await db.connect();
const one = async (sql, params = []) => (await db.query(sql, params)).rows[0];
const openai = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? "test" });

await db.query("INSERT INTO prompt.models (name, wire, tokenizer, advisory_window) VALUES ('gpt-5.5', 'chat', 'o200k_base', 128000) " +
  "ON CONFLICT (name) DO NOTHING");
const ws = (await one("INSERT INTO prompt.workspaces (name) VALUES ('Quick-start') RETURNING id")).id;
const ada = (await one("INSERT INTO prompt.users (handle, display_name, kind) VALUES ('ada_node', 'Ada', 'human') " +
  "ON CONFLICT (handle) DO UPDATE SET display_name = excluded.display_name RETURNING id")).id;
const lark = (await one("INSERT INTO prompt.users (handle, display_name, kind, model) VALUES ('lark_node', 'Lark', 'agent', 'gpt-5.5') " +
  "ON CONFLICT (handle) DO UPDATE SET model = excluded.model RETURNING id")).id;
await db.query("INSERT INTO prompt.documents (user_id, name, body) VALUES ($1, 'system_prompt', 'You are {{agent}}.') " +
  "ON CONFLICT DO NOTHING", [lark]);
const conv = (await one("INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) VALUES ($1, $2, $3) RETURNING id",
  [ws, lark, ada])).id;
const turn = (await one("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, mode, tools) " +
  "VALUES ($1, 'reply', $2, 'What is the weather in Paris?', 'run', $3) RETURNING id", [conv, ada, JSON.stringify(TOOLS)])).id;

let completion;
for (;;) {
  const { body } = await one("SELECT prompt.compile_turn($1, $2) AS body", [conv, turn]);   // the request, as is
  completion = await openai.chat.completions.create(body);                                   // post it
  const { step } = await one("SELECT prompt.record_response($1, $2, $3) AS step", [conv, turn, JSON.stringify(completion)]);
  console.log(`step ${step.step}: ${step.stop_reason}, ${step.tool_calls.length} tool call(s)`);
  if (step.tool_calls.length === 0) break;
  const results = step.tool_calls.map((c) => ({ call_id: c.id, content: runTool(c.name, c.input) }));
  await db.query("SELECT prompt.record_tool_results($1, $2, $3)", [conv, turn, JSON.stringify(results)]);
}
console.log("answer:", completion.choices[0].message.content);
console.log("done");
await db.end();
