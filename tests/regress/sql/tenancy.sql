-- Least privilege and row-level security (examples/tenancy.sql): ordinary roles with
-- USAGE on prompt and table grants use everything; each tenant sees only its workspace
-- and writes only what no other tenant's compile reads.
\set VERBOSITY default
\set SHOW_CONTEXT never
\i examples/tenancy.sql
-- A second tenant: Globex, with its own room, person, memory and skill; Lark serves both.
INSERT INTO prompt.workspaces (id, name) VALUES ('00000000-0000-4000-8000-00000000a002', 'Globex');
INSERT INTO prompt.users (id, handle, display_name, kind) VALUES ('00000000-0000-4000-8000-000000000009', 'bob', 'Bob', 'human');
INSERT INTO prompt.documents (workspace_id, name, body) VALUES ('00000000-0000-4000-8000-00000000a002', 'character', 'Globex secret room.');
INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES
    ('00000000-0000-4000-8000-00000000c0b1', '00000000-0000-4000-8000-00000000a002',
     '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000009');
INSERT INTO prompt.memories (scope, workspace_id, path, body) VALUES
    ('workspace', '00000000-0000-4000-8000-00000000a002', 'globex.md', 'Globex secret memory.');
INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c0b1', '00000000-0000-4000-8000-0000000b0001', 1, 'reply',
     '00000000-0000-4000-8000-000000000009', 'Hello from Globex.', '2026-11-30 10:00+00');
-- Globex rows that Acme's compile would read were row-level security off: Bob's persona
-- and the (Lark, Bob) speaker memory, selected by the loader's own predicates once Bob
-- posts in Acme's conversation (a guest from another tenant).
INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-4000-8000-000000000009', 'persona', 'Globex secret persona.');
INSERT INTO prompt.memories (scope, user_id, speaker_id, path, body) VALUES
    ('speaker', '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000009', 'bob.md', 'Globex secret speaker memory.');
DO $$ BEGIN
    CREATE ROLE tenant_acme NOLOGIN;
    CREATE ROLE tenant_globex NOLOGIN;
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;
GRANT prompt_tenant TO tenant_acme, tenant_globex;
INSERT INTO prompt.tenants VALUES
    ('tenant_acme', '00000000-0000-4000-8000-00000000a001'),
    ('tenant_globex', '00000000-0000-4000-8000-00000000a002');
INSERT INTO prompt.workspace_members
SELECT '00000000-0000-4000-8000-00000000a001'::uuid, id FROM prompt.users WHERE handle IN ('ada', 'omar', 'lark', 'grace', 'wren')
UNION ALL
SELECT '00000000-0000-4000-8000-00000000a002'::uuid, id FROM prompt.users WHERE handle IN ('bob', 'lark');

SET ROLE tenant_acme;
SELECT name FROM prompt.workspaces;
SELECT count(*) AS visible_conversations FROM prompt.conversations;
-- B's conversation does not exist for A.
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c0b1', '00000000-0000-4000-8000-0000000b0001');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
-- Bob, a Globex user, posts in Acme's conversation; Acme compiles (and seals) the turn.
-- Nothing of Globex's is read: Bob is a correspondent Acme cannot see (@unknown), his
-- persona and the speaker memory are not there.
RESET ROLE;
INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0007', 7, 'reply',
     '00000000-0000-4000-8000-000000000009', 'One more thing.', '2026-12-01 10:00+00');
SET ROLE tenant_acme;
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0007')::text LIKE '%Globex%' AS reads_globex;
SELECT position('<message from=\"@unknown\"' IN prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0007')::text) > 0 AS bob_unknown;
SELECT sealed_at IS NOT NULL AS sealed FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0007';
SELECT block, tokens > 0 AS present FROM prompt.estimate_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0007') WHERE block IN ('memory', 'history');
SELECT count(*) AS problems FROM prompt.validate_template('{"blocks": [{"type": "history"}, {"type": "input"}]}');
SELECT prompt.count_tokens('tenants count too') AS tokens;
-- A cannot write into B's conversation.
INSERT INTO prompt.turns (conversation_id, kind, role, content) VALUES
    ('00000000-0000-4000-8000-00000000c0b1', 'message', 'user', 'sneaky');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
-- Nor change what B's compiles read: Lark (an agent both serve), its documents and its
-- memory, the models, the shared skills. Its own rows stay writable.
UPDATE prompt.documents SET body = 'You serve Acme only.' WHERE name = 'system_prompt' RETURNING name;
UPDATE prompt.users SET display_name = 'Lark of Acme' WHERE handle = 'lark' RETURNING handle;
UPDATE prompt.models SET max_output_tokens = 1 RETURNING name;
INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-4000-8000-000000000002', 'SOUL', 'Acme first.');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
INSERT INTO prompt.memories (scope, user_id, path, body) VALUES ('agent', '00000000-0000-4000-8000-000000000002', 'acme.md', 'Acme first.');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
INSERT INTO prompt.skills (source, application, name) VALUES ('application', 'support', 'acme_refunds');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
DELETE FROM prompt.memories WHERE scope = 'agent' RETURNING path;
UPDATE prompt.users SET display_name = 'Ada L.' WHERE handle = 'ada' RETURNING handle;
UPDATE prompt.documents SET body = 'Acme''s own room.' WHERE name = 'character' RETURNING name;
RESET ROLE;

SET ROLE tenant_globex;
SELECT name FROM prompt.workspaces;
SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT prompt.explain_turn('00000000-0000-4000-8000-00000000c0b1', '00000000-0000-4000-8000-0000000b0001') -> 'messages' -> 0 -> 'parts' AS globex_system;
RESET ROLE;

-- Clean up the cluster-wide roles.
DELETE FROM prompt.tenants;
DROP OWNED BY tenant_acme, tenant_globex, prompt_tenant;
DROP ROLE tenant_acme, tenant_globex, prompt_tenant;
