// pgprompt quick-start in Go: compile a turn, POST it to the OpenAI Responses API with
// net/http, record the answer, run the tool, record its result, compile the
// continuation, post it, record the final answer. A Go module (go.mod: Go 1.19 or newer,
// github.com/lib/pq):
//
//	cd examples/go && go mod tidy
//	PGHOST=... PGDATABASE=... OPENAI_BASE_URL=http://127.0.0.1:8765/v1 go run .
//
// The database needs `CREATE EXTENSION pgprompt`; the program writes its own rows.
package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"

	_ "github.com/lib/pq"
)

const tools = `[{"name": "get_weather", "description": "Current weather for a city.",
  "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]`

type call struct {
	ID    string                 `json:"id"`
	Name  string                 `json:"name"`
	Input map[string]interface{} `json:"input"`
}

type step struct {
	Step       int    `json:"step"`
	StopReason string `json:"stop_reason"`
	ToolCalls  []call `json:"tool_calls"`
}

func one(db *sql.DB, query string, args ...interface{}) string {
	var out string
	if err := db.QueryRow(query, args...).Scan(&out); err != nil {
		log.Fatalf("%s: %v", query, err)
	}
	return out
}

func post(body string) string {
	base := os.Getenv("OPENAI_BASE_URL")
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	req, _ := http.NewRequest("POST", base+"/responses", bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+os.Getenv("OPENAI_API_KEY"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		log.Fatalf("the provider answered %d: %s", resp.StatusCode, data)
	}
	return string(data)
}

func main() {
	db, err := sql.Open("postgres", "sslmode=disable")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	one(db, `INSERT INTO prompt.models (name, wire, tokenizer, advisory_window) VALUES ('gpt-5.6-sol', 'responses', 'o200k_base', 400000)
	         ON CONFLICT (name) DO UPDATE SET wire = excluded.wire RETURNING name`)
	ws := one(db, `INSERT INTO prompt.workspaces (name) VALUES ('Quick-start') RETURNING id`)
	ada := one(db, `INSERT INTO prompt.users (handle, display_name, kind) VALUES ('ada_go', 'Ada', 'human')
	                ON CONFLICT (handle) DO UPDATE SET display_name = excluded.display_name RETURNING id`)
	lark := one(db, `INSERT INTO prompt.users (handle, display_name, kind, model) VALUES ('lark_go', 'Lark', 'agent', 'gpt-5.6-sol')
	                 ON CONFLICT (handle) DO UPDATE SET model = excluded.model RETURNING id`)
	if _, err := db.Exec(`INSERT INTO prompt.documents (user_id, name, body) VALUES ($1, 'system_prompt', 'You are {{agent}}.')
	                      ON CONFLICT DO NOTHING`, lark); err != nil {
		log.Fatal(err)
	}
	conv := one(db, `INSERT INTO prompt.conversations (workspace_id, answerer_id, creator_id) VALUES ($1, $2, $3) RETURNING id`, ws, lark, ada)
	turn := one(db, `INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, mode, tools)
	                 VALUES ($1, 'reply', $2, 'What is the weather in Paris?', 'run', $3) RETURNING id`, conv, ada, tools)

	var answer string
	for {
		body := one(db, `SELECT prompt.compile_turn($1, $2)::text`, conv, turn) // the request, as is
		response := post(body)                                                // post it
		var s step
		if err := json.Unmarshal([]byte(one(db, `SELECT prompt.record_response($1, $2, $3)::text`, conv, turn, response)), &s); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("step %d: %s, %d tool call(s)\n", s.Step, s.StopReason, len(s.ToolCalls))
		if len(s.ToolCalls) == 0 {
			answer = response
			break
		}
		var results []map[string]interface{}
		for _, c := range s.ToolCalls {
			out, _ := json.Marshal(map[string]interface{}{"city": c.Input["city"], "temp_c": 18, "sky": "sunny"})
			results = append(results, map[string]interface{}{"call_id": c.ID, "content": string(out)})
		}
		encoded, _ := json.Marshal(results)
		one(db, `SELECT prompt.record_tool_results($1, $2, $3)::text`, conv, turn, string(encoded))
	}
	var parsed struct {
		Output []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	json.Unmarshal([]byte(answer), &parsed)
	fmt.Println("answer:", parsed.Output[0].Content[0].Text)
	fmt.Println("done")
}
