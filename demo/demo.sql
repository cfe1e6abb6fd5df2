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
