-- After the first compiles sealed r2: a round each, then the Side.
INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results)
SELECT md5('conv' || n)::uuid, md5('r2' || n)::uuid, 1,
       '[{"type": "tool_call", "id": "call_1", "name": "lookup", "input": {"id": "INV-1"}}]',
       '[{"call_id": "call_1", "content": "paid twice"}]' FROM generate_series(1, 16) n;
INSERT INTO prompt.conversations (id, workspace_id, creator_id, answerer_id, kind, parent_id, captured_turn_id)
VALUES (md5('side1')::uuid, '00000000-0000-4000-8000-00000000a001', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002',
        'side', md5('conv1')::uuid, md5('r11')::uuid);
INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, created_at)
VALUES (md5('side1')::uuid, md5('sideturn')::uuid, 'reply', '00000000-0000-4000-8000-000000000001', 'Aside: why?', '2026-11-30 10:03+00');
