-- 16 conversations spread over the shards: messages (seq assigned by the trigger), a
-- direct reply, a run reply with a tool and two rounds, and a Side of conversation 1.
INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id)
SELECT md5('conv' || n)::uuid, '00000000-0000-4000-8000-00000000a001',
       '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001'
  FROM generate_series(1, 16) n;
INSERT INTO prompt.turns (conversation_id, id, kind, role, author_id, content, created_at)
SELECT md5('conv' || n)::uuid, md5('m1' || n)::uuid, 'message', 'user', '00000000-0000-4000-8000-000000000001',
       'Question number ' || n, '2026-11-30 10:00+00' FROM generate_series(1, 16) n;
INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, content, created_at)
SELECT md5('conv' || n)::uuid, md5('r1' || n)::uuid, 'reply', '00000000-0000-4000-8000-000000000001',
       'Please answer.', 'Answer ' || n, '2026-11-30 10:01+00' FROM generate_series(1, 16) n;
INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, mode, tools, created_at)
SELECT md5('conv' || n)::uuid, md5('r2' || n)::uuid, 'reply', '00000000-0000-4000-8000-000000000001',
       'Look up invoice ' || n, 'run',
       '[{"name": "lookup", "description": "Find an invoice", "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}}}]',
       '2026-11-30 10:02+00' FROM generate_series(1, 16) n;
