-- The demo: what a psql user sees. Run by scripts/demo.sh against a throwaway cluster;
-- re-runnable (it starts from a fresh extension every time).
\set ON_ERROR_STOP 0
\set VERBOSITY default
\set SHOW_CONTEXT never
\pset pager off
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS pgprompt CASCADE;
RESET client_min_messages;
CREATE EXTENSION pgprompt;
\ir example.sql
\set ECHO queries

\echo
\echo '=== 1. A document with a typo in a macro is refused on write, and nothing is written'
INSERT INTO prompt.documents (user_id, name, body)
VALUES ('00000000-0000-4000-8000-000000000002', 'MISSION', 'Close every ticket for {{usr}} today.');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT count(*) AS mission_documents FROM prompt.documents WHERE name = 'MISSION';

\echo
\echo '=== 2. validate_template: a good template (no rows), then a bad one (one row per problem)'
SELECT * FROM prompt.validate_template('{
  "blocks": [
    {"type": "slot", "slot": "system_prompt"},
    {"type": "document", "name": "SOUL"},
    {"type": "memory"},
    {"type": "history", "max_entries": 40, "budget": {"share": 0.6}},
    {"type": "tail"},
    {"type": "input"}
  ]
}');
SELECT * FROM prompt.validate_template('{
  "blocks": [
    {"type": "memory"},
    {"type": "inline", "role": "system", "text": "Scene: {{scene}}"},
    {"type": "history", "max_entries": 500},
    {"type": "input"},
    {"type": "tail"}
  ],
  "variables": {"Scene": "a storm"}
}');

\echo
\echo '=== 3. The request body, exactly as it is POSTed to /v1/messages (compile_turn seals it)'
\pset tuples_only on
\pset format unaligned
SELECT prompt.pretty(prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004'));
\pset tuples_only off
\pset format aligned
-- Later calls return the same bytes, whatever changes in the rows it was compiled from.
UPDATE prompt.documents SET body = 'Ada prefers long answers now.' WHERE name = 'persona';
SELECT md5(prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004')::text)
     = md5(prompt.sealed_body('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004')::text) AS same_bytes;

\echo
\echo '=== 4. Why it looks like that: explain_turn (everything but the body) and estimate_turn'
SELECT e ->> 'mechanism' AS mechanism, e ->> 'wire' AS wire, e ->> 'sealed' AS sealed,
       e -> 'estimate' ->> 'total' AS total_tokens, e -> 'cache_breakpoints' AS cache_breakpoints
FROM prompt.explain_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004') AS e;
SELECT * FROM prompt.estimate_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004');

\echo
\echo '=== 5. A conversation that overflows: a model with a 160-token window, then 100 tokens'
INSERT INTO prompt.models (name, wire, advisory_window) VALUES ('tiny', 'anthropic', 160);
INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, model, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005', 'reply',
     '00000000-0000-4000-8000-000000000001', 'Is the refund through?', 'tiny', '2026-12-01 08:00+00');
SELECT * FROM prompt.estimate_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005');
UPDATE prompt.models SET advisory_window = 100 WHERE name = 'tiny';
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005');
\echo SQLSTATE :LAST_ERROR_SQLSTATE

\echo
\echo '=== 6. A tool loop: the first call seals the request; each round written extends it'
INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, mode, tools, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0006', 'reply',
     '00000000-0000-4000-8000-000000000001', 'Please issue the refund now.', 'run',
     '[{"name": "refund", "description": "Refund a charge.",
        "input_schema": {"type": "object", "properties": {"invoice": {"type": "string"}}, "required": ["invoice"]}}]',
     '2026-12-01 09:00+00');
SELECT json_array_length(prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0006') -> 'messages') AS sealed_messages \gset
INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0006', 1,
     '[{"type": "text", "text": "Refunding the duplicate."},
       {"type": "tool_call", "id": "toolu_01", "name": "refund", "input": {"invoice": "INV-2041"}}]',
     '[{"call_id": "toolu_01", "content": "Refunded EUR 49.00 (RF-88)."}]');
-- The request for the next round: the sealed request byte for byte, then the round.
SELECT left(next::text, length(head) + length(sealed_messages)) = head || sealed_messages AS sealed_bytes_are_a_prefix
FROM prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0006') AS next,
     prompt.sealed_body('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0006') AS sealed,
     LATERAL (SELECT left((sealed -> 'messages')::text, -1) AS sealed_messages) AS m,
     LATERAL (SELECT left(sealed::text, strpos(sealed::text, sealed_messages) - 1) AS head) AS h;
\pset tuples_only on
\pset format unaligned
SELECT prompt.pretty(json_agg(m ORDER BY i))
FROM json_array_elements(prompt.compile_turn('00000000-0000-4000-8000-00000000c001',
                                             '00000000-0000-4000-8000-0000000d0006') -> 'messages') WITH ORDINALITY AS x(m, i)
WHERE i > :sealed_messages;
\pset tuples_only off
\pset format aligned
-- The round was sent: it is now part of what the provider saw, and cannot change.
UPDATE prompt.rounds SET results = '[{"call_id": "toolu_01", "content": "Failed."}]'
WHERE turn_id = '00000000-0000-4000-8000-0000000d0006';
\echo SQLSTATE :LAST_ERROR_SQLSTATE

\echo
\echo '=== 7. The seed-003 layout as an assembly template: core instructions, SOUL / MISSION / DESIGN,'
\echo '===    the skills catalog (recall-only skills omitted), runtime context; transcript and input outside'
INSERT INTO prompt.users (id, handle, display_name, kind, steward_id, model, prompt_mechanism, prompt_template) VALUES
    ('00000000-0000-4000-8000-000000000004', 'wren', 'Wren', 'agent', '00000000-0000-4000-8000-000000000003',
     'claude-sonnet-5', 'assembly', '{
  "blocks": [
    {"type": "slot", "slot": "system_prompt"},
    {"type": "document", "name": "SOUL"},
    {"type": "document", "name": "MISSION"},
    {"type": "document", "name": "DESIGN"},
    {"type": "skills"},
    {"type": "runtime"},
    {"type": "history"},
    {"type": "input"}
  ]
}');
INSERT INTO prompt.documents (user_id, name, body) VALUES
    ('00000000-0000-4000-8000-000000000004', 'system_prompt', 'You are {{agent}}, a billing worker of {{workspace}}.'),
    ('00000000-0000-4000-8000-000000000004', 'SOUL',    'Calm, exact, never guesses an amount.'),
    ('00000000-0000-4000-8000-000000000004', 'MISSION', 'Resolve billing tickets for {{workspace}} within the day.'),
    ('00000000-0000-4000-8000-000000000004', 'DESIGN',  'Plain text. Invoice numbers in full.');
INSERT INTO prompt.skills (source, user_id, name, description, recall_only) VALUES
    ('agent', '00000000-0000-4000-8000-000000000004', 'refunds', 'Issue a refund for a duplicate charge.', false),
    ('agent', '00000000-0000-4000-8000-000000000004', 'ledger-recall', 'Recall the ledger.', true);
INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id, origin_channel) VALUES
    ('00000000-0000-4000-8000-00000000c002', '00000000-0000-4000-8000-00000000a001',
     '00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000001', 'email');
INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt, mode, tools, callables, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c002', '00000000-0000-4000-8000-0000000e0001', 'reply',
     '00000000-0000-4000-8000-000000000001', 'Refund INV-2041, please.', 'run',
     '[{"name": "refund", "description": "Refund a charge.", "input_schema": {"type": "object"}}]',
     '[{"name": "skill"}]', '2026-12-01 09:00+00');
\pset tuples_only on
\pset format unaligned
SELECT prompt.pretty(prompt.preview_turn('00000000-0000-4000-8000-00000000c002', '00000000-0000-4000-8000-0000000e0001'));
\pset tuples_only off
\pset format aligned
SELECT block, role, tokens FROM prompt.estimate_turn('00000000-0000-4000-8000-00000000c002', '00000000-0000-4000-8000-0000000e0001');

\echo
\echo '=== 8. Security: what weakens pgprompt''s promises (README, "Security"), with the fix: nothing, here'
SELECT * FROM prompt.security_check();
