-- Write-time refusals: each with its SQLSTATE, a message starting with its name, the
-- offending value, and nothing written.
\set VERBOSITY default
\set SHOW_CONTEXT never
INSERT INTO prompt.documents (user_id, name, body)
VALUES ('00000000-0000-4000-8000-000000000002', 'MISSION', 'Close every ticket for {{usr}} today.');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
INSERT INTO prompt.documents (user_id, name, body)
VALUES ('00000000-0000-4000-8000-000000000002', 'MISSION', 'Recent turns: {{history}}');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
INSERT INTO prompt.documents (user_id, name, body)
VALUES ('00000000-0000-4000-8000-000000000002', 'DESIGN', repeat('x', 65537));
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT count(*) AS refused_documents_written FROM prompt.documents WHERE name IN ('MISSION', 'DESIGN');
-- Literal braces that are not macro tokens are text.
INSERT INTO prompt.documents (user_id, name, body)
VALUES ('00000000-0000-4000-8000-000000000002', 'SOUL', 'Use {{ }} and {{#if x}} and {{a b}} freely.');
-- A write bumps version and updated_at.
UPDATE prompt.documents SET body = body || ' Twice.' WHERE name = 'SOUL';
SELECT name, version FROM prompt.documents WHERE name = 'SOUL';
UPDATE prompt.turns SET inline = '[{"text": "Hello {{whoami}}"}]'
WHERE id = '00000000-0000-4000-8000-0000000d0004';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
UPDATE prompt.turns SET inline = '[{"text": "x", "position": "middle"}]'
WHERE id = '00000000-0000-4000-8000-0000000d0004';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
UPDATE prompt.users SET prompt_mechanism = 'assembly',
    prompt_template = '{"blocks": [{"type": "history"}, {"type": "slot", "slot": "persona"}, {"type": "input"}]}'
WHERE handle = 'lark';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
UPDATE prompt.users SET prompt_mechanism = 'assembly' WHERE handle = 'lark';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
INSERT INTO prompt.workspaces (name, timezone) VALUES ('Mars base', 'Mars/Olympus_Mons');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
INSERT INTO prompt.users (id, handle, kind) VALUES ('00000000-0000-4000-8000-0000000000ee', 'Not A Handle', 'human');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0002', 1,
     '[{"type": "tool_call", "id": "c1", "name": "lookup", "input": {}}]', '[{"call_id": "c9", "content": "x"}]');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
-- A turn's shape: a reply without its poster, a message without its role.
INSERT INTO prompt.turns (conversation_id, id, kind, prompt) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d00e1', 'reply', 'Who asked?');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
INSERT INTO prompt.turns (conversation_id, id, kind, author_id, content) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d00e2', 'message', '00000000-0000-4000-8000-000000000001', 'In what role?');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
-- Variables are {name: string}, named like template variables.
INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, variables) VALUES
    ('00000000-0000-4000-8000-00000000c001', 'reply', '00000000-0000-4000-8000-000000000001', 'x', '{"Scene": "a storm"}');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
-- Rounds belong to run reply turns, numbered from 1 without a gap.
INSERT INTO prompt.rounds (conversation_id, turn_id, n) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0001', 1);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
INSERT INTO prompt.rounds (conversation_id, turn_id, n) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0002', 1);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
UPDATE prompt.turns SET mode = 'run' WHERE id = '00000000-0000-4000-8000-0000000d0002';
INSERT INTO prompt.rounds (conversation_id, turn_id, n) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0002', 2);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
UPDATE prompt.turns SET mode = 'direct_reply' WHERE id = '00000000-0000-4000-8000-0000000d0002';
SELECT count(*) AS refused_turns_and_rounds_written FROM prompt.rounds;
