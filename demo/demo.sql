-- The demo: what a psql user sees. Run by scripts/demo.sh against a throwaway cluster.
\set ON_ERROR_STOP 0
\set VERBOSITY default
\set SHOW_CONTEXT never
\pset pager off
CREATE EXTENSION pgprompt;
\ir example.sql

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
\echo '=== 3. The compiled turn (compile_turn seals it; later calls return the same bytes)'
\pset tuples_only on
\pset format unaligned
SELECT jsonb_pretty(prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004'));

\echo
\echo '=== 4. Its Anthropic request, ready to POST to /v1/messages'
SELECT jsonb_pretty(prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004') -> 'request');
\pset tuples_only off
\pset format aligned

\echo
\echo '=== 5. The budget, block by block'
SELECT * FROM prompt.estimate_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004');

\echo
\echo '=== 6. A conversation that overflows: a model with a 160-token window'
INSERT INTO prompt.models (name, wire, advisory_window) VALUES ('tiny', 'anthropic', 160);
INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, model, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005', 5, 'reply',
     '00000000-0000-4000-8000-000000000001', 'Is the refund through?', 'tiny', '2026-12-01 08:00+00');
SELECT * FROM prompt.estimate_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005');
UPDATE prompt.models SET advisory_window = 100 WHERE name = 'tiny';
SELECT * FROM prompt.estimate_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005');
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0005');
\echo SQLSTATE :LAST_ERROR_SQLSTATE

\echo
\echo '=== 7. The seed-003 layout as an assembly template: core instructions, SOUL / MISSION / DESIGN,'
\echo '===    the skills catalog (recall-only skills omitted), runtime context; transcript and input outside'
INSERT INTO prompt.documents (user_id, name, body) VALUES
    ('00000000-0000-4000-8000-000000000002', 'SOUL',    'Calm, exact, never guesses an amount.'),
    ('00000000-0000-4000-8000-000000000002', 'MISSION', 'Resolve billing tickets for {{workspace}} within the day.'),
    ('00000000-0000-4000-8000-000000000002', 'DESIGN',  'Plain text. Invoice numbers in full.');
INSERT INTO prompt.skills (source, user_id, name, description, recall_only) VALUES
    ('agent', '00000000-0000-4000-8000-000000000002', 'refunds', 'Issue a refund for a duplicate charge.', false),
    ('agent', '00000000-0000-4000-8000-000000000002', 'ledger-recall', 'Recall the ledger.', true);
UPDATE prompt.users SET prompt_mechanism = 'assembly', prompt_template = '{
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
}' WHERE handle = 'lark';
INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, mode, tools, callables, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0006', 6, 'reply',
     '00000000-0000-4000-8000-000000000001', 'Please issue the refund now.', 'run',
     '[{"name": "refund", "description": "Refund a charge.", "input_schema": {"type": "object", "properties": {"invoice": {"type": "string"}}}}]',
     '[{"name": "skill"}]', '2026-12-01 09:00+00');
\pset tuples_only on
\pset format unaligned
SELECT jsonb_pretty(prompt.preview_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0006') -> 'messages' -> 0);
\pset tuples_only off
\pset format aligned
SELECT block, role, tokens FROM prompt.estimate_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0006');
