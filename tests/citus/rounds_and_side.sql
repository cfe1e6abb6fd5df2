-- After the first compiles sealed r2: a round each, then the Side.
INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results)
SELECT md5('conv' || n)::uuid, md5('r2' || n)::uuid, 1,
       '[{"type": "tool_call", "id": "call_1", "name": "lookup", "input": {"id": "INV-1"}}]',
       '[{"call_id": "call_1", "content": "paid twice"}]' FROM generate_series(1, 16) n;
-- The Side is written as docs/scale-out.md says for Citus (its capture trigger is off
-- there): its row copies the captured turn's answerer, content, summary and newest round
-- from the parent, in one INSERT … SELECT (on a single node the trigger fills the same).
INSERT INTO prompt.conversations (id, workspace_id, creator_id, kind, parent_id, captured_turn_id,
                                  answerer_id, captured_content, captured_summary, captured_summary_round, captured_round)
SELECT md5('side1')::uuid, p.workspace_id, '00000000-0000-4000-8000-000000000001', 'side', t.conversation_id, t.id,
       coalesce(t.answerer_id, p.answerer_id), t.content, t.summary, t.summary_round,
       (SELECT max(r.n) FROM prompt.rounds r WHERE r.conversation_id = t.conversation_id AND r.turn_id = t.id)
  FROM prompt.turns t JOIN prompt.conversations p ON p.id = t.conversation_id
 WHERE t.conversation_id = md5('conv1')::uuid AND t.id = md5('r11')::uuid;
INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, created_at)
VALUES (md5('side1')::uuid, md5('sideturn')::uuid, 'reply', '00000000-0000-4000-8000-000000000001', 'Aside: why?', '2026-11-30 10:03+00');
-- A reply with a deferred tool in each conversation: search_deferred's catalog, frozen by the seal.
INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, tools, created_at)
SELECT md5('conv' || n)::uuid, md5('r3' || n)::uuid, 'reply', '00000000-0000-4000-8000-000000000001',
       'Refund the duplicate charge.',
       '[{"name": "read_invoice", "description": "Read an invoice.", "input_schema": {"type": "object"}},
         {"name": "issue_refund", "description": "Refund a duplicate charge.", "deferred": true,
          "input_schema": {"type": "object", "properties": {"invoice": {"type": "string"}}}}]',
       '2026-11-30 10:04+00' FROM generate_series(1, 16) n;
