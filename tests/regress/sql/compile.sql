-- Compiling the example's turn: the request, the estimate, sealing, and the refusals.
\set VERBOSITY default
\set SHOW_CONTEXT never
\pset tuples_only on
\pset format unaligned
SELECT jsonb_pretty(prompt.preview_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004'));
\pset tuples_only off
\pset format aligned
SELECT * FROM prompt.estimate_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004');
-- preview never writes; compile seals; later calls return the same bytes.
SELECT sealed_at IS NULL AS unsealed FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0004';
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004')
     = prompt.preview_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004') AS same;
SELECT sealed_mechanism, sealed_request IS NOT NULL AS sealed FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0004';
UPDATE prompt.documents SET body = 'Changed after sealing.' WHERE name = 'persona';
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004') = sealed_request AS unchanged
FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0004';
UPDATE prompt.turns SET sealed_request = '{}' WHERE id = '00000000-0000-4000-8000-0000000d0004';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
-- The chat wire, for the same conversation, on a model of OpenAI's.
UPDATE prompt.turns SET model = 'gpt-4o' WHERE id = '00000000-0000-4000-8000-0000000d0002';
INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, model, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005', 5, 'reply',
     '00000000-0000-4000-8000-000000000001', 'Thanks!', 'gpt-4o', '2026-12-01 08:00+00');
\pset tuples_only on
\pset format unaligned
SELECT jsonb_pretty(prompt.preview_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005') -> 'request');
\pset tuples_only off
\pset format aligned
-- Refusals of compile_turn.
SELECT prompt.compile_turn('00000000-0000-4000-8000-0000000000ff', '00000000-0000-4000-8000-0000000d0004');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000000ff');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0001');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
