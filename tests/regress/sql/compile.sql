-- Compiling the example's turn: the body, the explanation, the estimate, sealing, and
-- the refusals.
\set VERBOSITY default
\set SHOW_CONTEXT never
\pset tuples_only on
\pset format unaligned
-- The body, ready to POST, its keys in the provider's order.
SELECT prompt.pretty(prompt.preview_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004'));
-- How it was made: everything but the body.
SELECT jsonb_pretty(prompt.explain_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004') - 'messages' - 'documents');
-- Which prompt documents it compiled, and their versions (the ids are the rows').
SELECT e ->> 'block' AS block, d.name AS document, (e ->> 'version')::int AS version
  FROM jsonb_array_elements(prompt.explain_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004') -> 'documents') e
  JOIN prompt.documents d ON d.id = (e ->> 'document_id')::uuid;
\pset tuples_only off
\pset format aligned
SELECT * FROM prompt.estimate_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004');
-- preview never writes; compile seals; later calls return the same bytes.
SELECT sealed_at IS NULL AS unsealed FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0004';
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004')::text
     = prompt.preview_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004')::text AS same;
SELECT t.sealed_mechanism, s.bytes, s.digest = sha256(convert_to(prompt.compile_turn(t.conversation_id, t.id)::text, 'UTF8')) AS digest_matches
FROM prompt.turns t JOIN prompt.seals s ON (s.conversation_id, s.turn_id) = (t.conversation_id, t.id)
WHERE t.id = '00000000-0000-4000-8000-0000000d0004';
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004')::text AS sealed_body \gset
UPDATE prompt.documents SET body = 'Changed after sealing.' WHERE name = 'persona';
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004')::text = :'sealed_body' AS unchanged;
-- What the seal was compiled from cannot change; the answer can.
UPDATE prompt.turns SET prompt = 'Something else.' WHERE id = '00000000-0000-4000-8000-0000000d0004';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
UPDATE prompt.turns SET sealed_at = NULL WHERE id = '00000000-0000-4000-8000-0000000d0004';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
DELETE FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0004';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
UPDATE prompt.turns SET content = 'Done: the credit note is on its way.' WHERE id = '00000000-0000-4000-8000-0000000d0004';
-- The chat wire, for the same conversation, on a model of OpenAI's (turn d0002 was sent by
-- d0004's seal: its model changes only on purpose, as a superuser rewrites history).
BEGIN;
SET LOCAL pgprompt.allow_history_rewrite = on;
UPDATE prompt.turns SET model = 'gpt-5.5' WHERE id = '00000000-0000-4000-8000-0000000d0002';
COMMIT;
INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, model, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005', 5, 'reply',
     '00000000-0000-4000-8000-000000000001', 'Thanks!', 'gpt-5.5', '2026-12-01 08:00+00');
\pset tuples_only on
\pset format unaligned
SELECT prompt.pretty(prompt.preview_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005'));
\pset tuples_only off
\pset format aligned
-- Refusals of compile_turn.
SELECT prompt.compile_turn('00000000-0000-4000-8000-0000000000ff', '00000000-0000-4000-8000-0000000d0004');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000000ff');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0001');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
