-- pgprompt on Citus: the extension's tables distributed by conversation (docs/scale-out.md).
--
-- Run on the coordinator, as a superuser, in the database where `CREATE EXTENSION citus`
-- and then `CREATE EXTENSION pgprompt` were run (Citus propagates the second to the
-- workers), before loading any rows:
--
--   psql -v ON_ERROR_STOP=1 -d app -f docs/citus.sql
--
-- Run against Citus 13.2.2 on PostgreSQL 15 with a coordinator and two workers; the
-- demo's rows then load through the coordinator and every compile_turn returns the bytes
-- a single node returns.

-- The tables have write triggers (checks at the door, sealed means sealed). Each reads
-- only its own row's conversation or a reference table; Citus refuses to distribute a
-- table with triggers unless this is on, in this session, before it does.
SET citus.enable_unsafe_triggers = on;

-- `SET LOCAL pgprompt.allow_history_rewrite = on` must reach the workers, where the
-- triggers that read it run: Citus sends a transaction's SET LOCAL commands along only
-- with this setting (here for every session of this database).
DO $$ BEGIN
    EXECUTE format('ALTER DATABASE %I SET citus.propagate_set_commands = %L', current_database(), 'local');
END $$;
SET citus.propagate_set_commands = 'local';

-- 1. The foreign keys among the extension's tables go first, on every node. Making the
--    first table a reference table makes Citus convert every local table linked to it by
--    a key and create it on the workers, where CREATE EXTENSION pgprompt already did:
--    "relation users already exists". The workers' copies (which become the tables
--    queries there are planned against) keep their keys unless dropped there too, and
--    step 3 would then fail adding them back. Step 3 adds them back, all but two.
DO $do$
DECLARE
    drop_keys constant text := $keys$
ALTER TABLE prompt.models DROP CONSTRAINT models_profile_fkey;
ALTER TABLE prompt.tenants DROP CONSTRAINT tenants_workspace_id_fkey;
ALTER TABLE prompt.workspace_members
    DROP CONSTRAINT workspace_members_workspace_id_fkey,
    DROP CONSTRAINT workspace_members_user_id_fkey;
ALTER TABLE prompt.users
    DROP CONSTRAINT users_model_fkey,
    DROP CONSTRAINT users_steward_id_fkey;
ALTER TABLE prompt.documents
    DROP CONSTRAINT documents_user_id_fkey,
    DROP CONSTRAINT documents_workspace_id_fkey;
ALTER TABLE prompt.memories
    DROP CONSTRAINT memories_user_id_fkey,
    DROP CONSTRAINT memories_speaker_id_fkey,
    DROP CONSTRAINT memories_workspace_id_fkey,
    DROP CONSTRAINT memories_conversation_id_fkey;     -- not added back (see below)
ALTER TABLE prompt.skills
    DROP CONSTRAINT skills_user_id_fkey,
    DROP CONSTRAINT skills_speaker_id_fkey,
    DROP CONSTRAINT skills_workspace_id_fkey;
ALTER TABLE prompt.conversations
    DROP CONSTRAINT conversations_workspace_id_fkey,
    DROP CONSTRAINT conversations_answerer_id_fkey,
    DROP CONSTRAINT conversations_creator_id_fkey,
    DROP CONSTRAINT conversations_parent_id_fkey;      -- not added back (see below)
ALTER TABLE prompt.turns
    DROP CONSTRAINT turns_conversation_id_fkey,
    DROP CONSTRAINT turns_author_id_fkey,
    DROP CONSTRAINT turns_answerer_id_fkey,
    DROP CONSTRAINT turns_poster_id_fkey,
    DROP CONSTRAINT turns_memory_user_id_fkey,
    DROP CONSTRAINT turns_model_fkey;
ALTER TABLE prompt.rounds DROP CONSTRAINT rounds_conversation_id_turn_id_fkey;
ALTER TABLE prompt.seal_nodes DROP CONSTRAINT seal_nodes_conversation_id_fkey;
ALTER TABLE prompt.seals DROP CONSTRAINT seals_conversation_id_turn_id_fkey;
ALTER TABLE prompt.seals_02 DROP CONSTRAINT seals_02_conversation_id_turn_id_fkey;
ALTER TABLE prompt.responses DROP CONSTRAINT responses_conversation_id_turn_id_fkey;
ALTER TABLE prompt.counts DROP CONSTRAINT counts_conversation_id_turn_id_fkey;
-- The tenants' restrictive policies (README, "Tenants") look their workspaces up in
-- subqueries, which Citus refuses in a distributed or reference table's policy ("Subqueries
-- are not supported in policies on distributed tables"): on Citus, row-level tenancy is
-- not available; keep tenants apart by database or in the application.
DROP POLICY pgprompt_tenant_reads ON prompt.workspace_members; DROP POLICY pgprompt_tenant_inserts ON prompt.workspace_members; DROP POLICY pgprompt_tenant_updates ON prompt.workspace_members; DROP POLICY pgprompt_tenant_deletes ON prompt.workspace_members;
DROP POLICY pgprompt_tenant_reads ON prompt.workspaces; DROP POLICY pgprompt_tenant_inserts ON prompt.workspaces; DROP POLICY pgprompt_tenant_updates ON prompt.workspaces; DROP POLICY pgprompt_tenant_deletes ON prompt.workspaces;
DROP POLICY pgprompt_tenant_reads ON prompt.users; DROP POLICY pgprompt_tenant_inserts ON prompt.users; DROP POLICY pgprompt_tenant_updates ON prompt.users; DROP POLICY pgprompt_tenant_deletes ON prompt.users;
DROP POLICY pgprompt_tenant_reads ON prompt.models; DROP POLICY pgprompt_tenant_inserts ON prompt.models; DROP POLICY pgprompt_tenant_updates ON prompt.models; DROP POLICY pgprompt_tenant_deletes ON prompt.models;
DROP POLICY pgprompt_tenant_reads ON prompt.model_profiles; DROP POLICY pgprompt_tenant_inserts ON prompt.model_profiles; DROP POLICY pgprompt_tenant_updates ON prompt.model_profiles; DROP POLICY pgprompt_tenant_deletes ON prompt.model_profiles;
DROP POLICY pgprompt_tenant_reads ON prompt.documents; DROP POLICY pgprompt_tenant_inserts ON prompt.documents; DROP POLICY pgprompt_tenant_updates ON prompt.documents; DROP POLICY pgprompt_tenant_deletes ON prompt.documents;
DROP POLICY pgprompt_tenant_reads ON prompt.memories; DROP POLICY pgprompt_tenant_inserts ON prompt.memories; DROP POLICY pgprompt_tenant_updates ON prompt.memories; DROP POLICY pgprompt_tenant_deletes ON prompt.memories;
DROP POLICY pgprompt_tenant_reads ON prompt.skills; DROP POLICY pgprompt_tenant_inserts ON prompt.skills; DROP POLICY pgprompt_tenant_updates ON prompt.skills; DROP POLICY pgprompt_tenant_deletes ON prompt.skills;
DROP POLICY pgprompt_tenant_reads ON prompt.conversations; DROP POLICY pgprompt_tenant_inserts ON prompt.conversations; DROP POLICY pgprompt_tenant_updates ON prompt.conversations; DROP POLICY pgprompt_tenant_deletes ON prompt.conversations;
DROP POLICY pgprompt_tenant_reads ON prompt.turns; DROP POLICY pgprompt_tenant_inserts ON prompt.turns; DROP POLICY pgprompt_tenant_updates ON prompt.turns; DROP POLICY pgprompt_tenant_deletes ON prompt.turns;
DROP POLICY pgprompt_tenant_reads ON prompt.rounds; DROP POLICY pgprompt_tenant_inserts ON prompt.rounds; DROP POLICY pgprompt_tenant_updates ON prompt.rounds; DROP POLICY pgprompt_tenant_deletes ON prompt.rounds;
DROP POLICY pgprompt_tenant_reads ON prompt.seals; DROP POLICY pgprompt_tenant_inserts ON prompt.seals; DROP POLICY pgprompt_tenant_updates ON prompt.seals; DROP POLICY pgprompt_tenant_deletes ON prompt.seals;
DROP POLICY pgprompt_tenant_reads ON prompt.seal_nodes; DROP POLICY pgprompt_tenant_inserts ON prompt.seal_nodes; DROP POLICY pgprompt_tenant_updates ON prompt.seal_nodes; DROP POLICY pgprompt_tenant_deletes ON prompt.seal_nodes;
DROP POLICY pgprompt_tenant_reads ON prompt.seals_02; DROP POLICY pgprompt_tenant_inserts ON prompt.seals_02; DROP POLICY pgprompt_tenant_updates ON prompt.seals_02; DROP POLICY pgprompt_tenant_deletes ON prompt.seals_02;
DROP POLICY pgprompt_tenant_reads ON prompt.responses; DROP POLICY pgprompt_tenant_inserts ON prompt.responses; DROP POLICY pgprompt_tenant_updates ON prompt.responses; DROP POLICY pgprompt_tenant_deletes ON prompt.responses;
DROP POLICY pgprompt_tenant_reads ON prompt.counts; DROP POLICY pgprompt_tenant_inserts ON prompt.counts; DROP POLICY pgprompt_tenant_updates ON prompt.counts; DROP POLICY pgprompt_tenant_deletes ON prompt.counts;
-- The tenancy tables' administrator policy (0.6) asks `(SELECT prompt._administers())`
-- once per statement, a subquery Citus refuses too: here it calls the function in the
-- policy itself (the same decision, made per row).
DROP POLICY pgprompt_administrators ON prompt.tenants;
CREATE POLICY pgprompt_administrators ON prompt.tenants
    USING (prompt._administers()) WITH CHECK (prompt._administers());
DROP POLICY pgprompt_administrators ON prompt.administrators;
CREATE POLICY pgprompt_administrators ON prompt.administrators
    USING (prompt._administers()) WITH CHECK (prompt._administers());
-- The extension's own permissive policy (pgprompt_rows) yields to a policy of the user's
-- own through a subquery too, `(SELECT prompt._grants_decide(...))`, evaluated once per
-- statement: Citus refuses that as well. Here it calls the function in the policy itself
-- (the same decision, made per row).
DO $rows$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['workspace_members', 'workspaces', 'users', 'models', 'model_profiles', 'documents',
                             'memories', 'skills', 'conversations', 'turns', 'rounds', 'seals', 'seal_nodes',
                             'seals_02', 'responses', 'counts'] LOOP
        EXECUTE format('DROP POLICY pgprompt_rows ON prompt.%I', t);
        EXECUTE format('CREATE POLICY pgprompt_rows ON prompt.%1$I USING (prompt._grants_decide(%2$L))'
                       ' WITH CHECK (prompt._grants_decide(%2$L))', t, 'prompt.' || t);
    END LOOP;
END
$rows$;
$keys$;
    failed text;
BEGIN
    EXECUTE drop_keys;
    SELECT string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') INTO failed
      FROM run_command_on_workers(drop_keys) WHERE NOT success;
    IF failed IS NOT NULL THEN
        RAISE EXCEPTION 'dropping the keys on the workers failed: %', failed;
    END IF;
END
$do$;

-- 2. Shared tables on every node; one conversation's rows on one shard.
SELECT create_reference_table('prompt.model_profiles');
SELECT create_reference_table('prompt.models');
SELECT create_reference_table('prompt.workspaces');
SELECT create_reference_table('prompt.users');
SELECT create_reference_table('prompt.documents');
SELECT create_reference_table('prompt.skills');
SELECT create_reference_table('prompt.memories');
SELECT create_reference_table('prompt.tenants');
SELECT create_reference_table('prompt.workspace_members');
SELECT create_reference_table('prompt.administrators');
SELECT create_distributed_table('prompt.conversations', 'id');
SELECT create_distributed_table('prompt.turns', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_table('prompt.rounds', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_table('prompt.seal_nodes', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_table('prompt.seals', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_table('prompt.seals_02', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_table('prompt.responses', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_table('prompt.counts', 'conversation_id', colocate_with := 'prompt.conversations');

-- A reference table's triggers run on each node's copy of the row, where Citus allows
-- no query on another node's shards. The one that reads every conversation's turns (the
-- NOTICE naming backfill_token_counts when a model brings a new tokenizer) is turned off:
-- read prompt.status.turns_missing_counts after adding a model instead.
ALTER TABLE prompt.models DISABLE TRIGGER models_tokenizer;

-- Likewise a Side's capture (the check, and the copy of what the Side reads of its
-- captured turn) reads its parent's turns, which may live on another node: it is turned
-- off, and a Side's row is written with its answerer and captured columns copied from
-- the parent's turn in one INSERT … SELECT, as docs/scale-out.md shows.
ALTER TABLE prompt.conversations DISABLE TRIGGER conversations_capture;

-- The profile lookup a model's write check makes (prompt._model_profile) is a SQL function
-- whose query (the longest matching profile name, in a subquery) Citus cannot plan with
-- its parameters unbound: "parameterized queries for SQL functions referencing distributed
-- tables are not supported". On every node it becomes the same query in PL/pgSQL, which
-- Citus plans with the values bound, on every node. (An extension's function replaced
-- here: a dump of the database restores the extension's own, so run this again after a
-- restore.)
DO $profile$
DECLARE
    plpgsql constant text := $fn$
CREATE OR REPLACE FUNCTION prompt._model_profile(model_name text, profile_name text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $body$ BEGIN RETURN (SELECT p.profile FROM prompt._model_profile_of(model_name, profile_name) p); END $body$
$fn$;
    failed text;
BEGIN
    EXECUTE plpgsql;
    -- A worker takes DDL on the extension's objects only as Citus sends it, with its own
    -- propagation off.
    PERFORM run_command_on_workers('SET citus.enable_ddl_propagation TO off; ' || plpgsql);
    SELECT string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') INTO failed
      FROM run_command_on_workers($q$SELECT l.lanname FROM pg_catalog.pg_proc f JOIN pg_catalog.pg_language l ON l.oid = f.prolang
                                     WHERE f.oid = 'prompt._model_profile(text, text)'::regprocedure$q$)
     WHERE NOT success OR result <> 'plpgsql';
    IF failed IS NOT NULL THEN
        RAISE EXCEPTION 'prompt._model_profile is not the PL/pgSQL one on every worker: %', failed;
    END IF;
END
$profile$;

-- 3. The keys back, as the extension declares them. Two cannot be kept: Citus has no key
--    from a distributed table to another shard of itself (conversations.parent_id: a
--    Side and its parent may live on different shards), nor from a reference table to a
--    distributed one (memories.conversation_id). Deleting a conversation then leaves its
--    conversation-scoped memory rows and its Sides' parent_id to the application.
-- (Citus takes one ADD CONSTRAINT per statement on a distributed table.)
ALTER TABLE prompt.models ADD CONSTRAINT models_profile_fkey FOREIGN KEY (profile) REFERENCES prompt.model_profiles(name) ON UPDATE CASCADE ON DELETE SET NULL;
ALTER TABLE prompt.tenants ADD CONSTRAINT tenants_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES prompt.workspaces(id) ON DELETE CASCADE;
ALTER TABLE prompt.workspace_members ADD CONSTRAINT workspace_members_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES prompt.workspaces(id) ON DELETE CASCADE;
ALTER TABLE prompt.workspace_members ADD CONSTRAINT workspace_members_user_id_fkey FOREIGN KEY (user_id) REFERENCES prompt.users(id) ON DELETE CASCADE;
ALTER TABLE prompt.users ADD CONSTRAINT users_model_fkey FOREIGN KEY (model) REFERENCES prompt.models(name) ON UPDATE CASCADE ON DELETE SET NULL;
ALTER TABLE prompt.users ADD CONSTRAINT users_steward_id_fkey FOREIGN KEY (steward_id) REFERENCES prompt.users(id) ON DELETE SET NULL;
ALTER TABLE prompt.documents ADD CONSTRAINT documents_user_id_fkey FOREIGN KEY (user_id) REFERENCES prompt.users(id) ON DELETE CASCADE;
ALTER TABLE prompt.documents ADD CONSTRAINT documents_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES prompt.workspaces(id) ON DELETE CASCADE;
ALTER TABLE prompt.memories ADD CONSTRAINT memories_user_id_fkey FOREIGN KEY (user_id) REFERENCES prompt.users(id) ON DELETE CASCADE;
ALTER TABLE prompt.memories ADD CONSTRAINT memories_speaker_id_fkey FOREIGN KEY (speaker_id) REFERENCES prompt.users(id) ON DELETE CASCADE;
ALTER TABLE prompt.memories ADD CONSTRAINT memories_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES prompt.workspaces(id) ON DELETE CASCADE;
ALTER TABLE prompt.skills ADD CONSTRAINT skills_user_id_fkey FOREIGN KEY (user_id) REFERENCES prompt.users(id) ON DELETE CASCADE;
ALTER TABLE prompt.skills ADD CONSTRAINT skills_speaker_id_fkey FOREIGN KEY (speaker_id) REFERENCES prompt.users(id) ON DELETE CASCADE;
ALTER TABLE prompt.skills ADD CONSTRAINT skills_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES prompt.workspaces(id) ON DELETE CASCADE;
ALTER TABLE prompt.conversations ADD CONSTRAINT conversations_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES prompt.workspaces(id) ON DELETE CASCADE;
ALTER TABLE prompt.conversations ADD CONSTRAINT conversations_answerer_id_fkey FOREIGN KEY (answerer_id) REFERENCES prompt.users(id);
ALTER TABLE prompt.conversations ADD CONSTRAINT conversations_creator_id_fkey FOREIGN KEY (creator_id) REFERENCES prompt.users(id);
ALTER TABLE prompt.turns ADD CONSTRAINT turns_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES prompt.conversations(id) ON DELETE CASCADE;
ALTER TABLE prompt.turns ADD CONSTRAINT turns_author_id_fkey FOREIGN KEY (author_id) REFERENCES prompt.users(id);
ALTER TABLE prompt.turns ADD CONSTRAINT turns_answerer_id_fkey FOREIGN KEY (answerer_id) REFERENCES prompt.users(id);
ALTER TABLE prompt.turns ADD CONSTRAINT turns_poster_id_fkey FOREIGN KEY (poster_id) REFERENCES prompt.users(id);
ALTER TABLE prompt.turns ADD CONSTRAINT turns_memory_user_id_fkey FOREIGN KEY (memory_user_id) REFERENCES prompt.users(id);
ALTER TABLE prompt.turns ADD CONSTRAINT turns_model_fkey FOREIGN KEY (model) REFERENCES prompt.models(name) ON UPDATE CASCADE;
ALTER TABLE prompt.rounds ADD CONSTRAINT rounds_conversation_id_turn_id_fkey FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns(conversation_id, id) ON DELETE CASCADE;
ALTER TABLE prompt.seal_nodes ADD CONSTRAINT seal_nodes_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES prompt.conversations(id) ON DELETE CASCADE;
ALTER TABLE prompt.seals ADD CONSTRAINT seals_conversation_id_turn_id_fkey FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns(conversation_id, id) ON DELETE CASCADE;
ALTER TABLE prompt.seals_02 ADD CONSTRAINT seals_02_conversation_id_turn_id_fkey FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns(conversation_id, id) ON DELETE CASCADE;
ALTER TABLE prompt.responses ADD CONSTRAINT responses_conversation_id_turn_id_fkey FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns(conversation_id, id) ON DELETE CASCADE;
ALTER TABLE prompt.counts ADD CONSTRAINT counts_conversation_id_turn_id_fkey FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns(conversation_id, id) ON DELETE CASCADE;

-- 4. Each call runs on the node that holds its conversation (the first argument). Only a
--    bare `SELECT prompt.compile_turn(c, t)` is sent there; see docs/scale-out.md.
SELECT create_distributed_function('prompt.compile_turn(uuid,uuid)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.preview_turn(uuid,uuid)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.explain_turn(uuid,uuid)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.sealed_body(uuid,uuid)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.record_response(uuid,uuid,jsonb)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.record_tool_results(uuid,uuid,jsonb)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.estimate_turn(uuid,uuid)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.search_deferred(uuid,uuid,text)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.transcript(uuid,uuid)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.prune_seals(uuid,timestamptz)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.count_body(uuid,uuid)', 'conversation_id', colocate_with := 'prompt.conversations');
SELECT create_distributed_function('prompt.record_count(uuid,uuid,integer)', 'conversation_id', colocate_with := 'prompt.conversations');

-- 5. Inside BEGIN … COMMIT (a driver's default mode) Citus delegates only a function
--    distributed with force_delegation, and then every query the call runs must name
--    its conversation's key (docs/scale-out.md, "In a transaction"). prompt_tx holds the
--    compile functions in that form: the same calls, the same bytes. A Side's unsealed
--    turns (they read the parent, which may live elsewhere), a model with
--    token_margin_auto on, and a turn id of another conversation are refused there by
--    Citus: call those through prompt.* in autocommit.
CREATE SCHEMA prompt_tx;
COMMENT ON SCHEMA prompt_tx IS 'pgprompt''s compile functions in the form Citus delegates inside a transaction block (docs/scale-out.md).';
CREATE FUNCTION prompt_tx.compile_turn(conversation_id uuid, turn_id uuid) RETURNS json
    LANGUAGE plpgsql STRICT SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RETURN prompt.compile_turn(conversation_id, turn_id); END $$;
CREATE FUNCTION prompt_tx.preview_turn(conversation_id uuid, turn_id uuid) RETURNS json
    LANGUAGE plpgsql STRICT STABLE SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RETURN prompt.preview_turn(conversation_id, turn_id); END $$;
CREATE FUNCTION prompt_tx.explain_turn(conversation_id uuid, turn_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STRICT STABLE SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RETURN prompt.explain_turn(conversation_id, turn_id); END $$;
CREATE FUNCTION prompt_tx.sealed_body(conversation_id uuid, turn_id uuid) RETURNS json
    LANGUAGE plpgsql STRICT STABLE SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RETURN prompt.sealed_body(conversation_id, turn_id); END $$;
CREATE FUNCTION prompt_tx.estimate_turn(conversation_id uuid, turn_id uuid)
    RETURNS TABLE (block text, role text, tokens int, floor_unmet bool, selected int, available int, skipped_reason text)
    LANGUAGE plpgsql STRICT STABLE SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RETURN QUERY SELECT * FROM prompt.estimate_turn(conversation_id, turn_id); END $$;
-- The same bodies as text: the coordinator relays a delegated call's result through its
-- type's input function, and json_in (jsonb_in for explain_turn) parses the whole body
-- again where textin copies it. For a client that forwards the body as it is.
CREATE FUNCTION prompt_tx.compile_turn_text(conversation_id uuid, turn_id uuid) RETURNS text
    LANGUAGE plpgsql STRICT SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RETURN prompt.compile_turn(conversation_id, turn_id)::text; END $$;
CREATE FUNCTION prompt_tx.preview_turn_text(conversation_id uuid, turn_id uuid) RETURNS text
    LANGUAGE plpgsql STRICT STABLE SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RETURN prompt.preview_turn(conversation_id, turn_id)::text; END $$;
CREATE FUNCTION prompt_tx.explain_turn_text(conversation_id uuid, turn_id uuid) RETURNS text
    LANGUAGE plpgsql STRICT STABLE SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RETURN prompt.explain_turn(conversation_id, turn_id)::text; END $$;
CREATE FUNCTION prompt_tx.sealed_body_text(conversation_id uuid, turn_id uuid) RETURNS text
    LANGUAGE plpgsql STRICT STABLE SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RETURN prompt.sealed_body(conversation_id, turn_id)::text; END $$;
DO $$ DECLARE f text; BEGIN
    FOREACH f IN ARRAY ARRAY['compile_turn_text', 'preview_turn_text', 'explain_turn_text', 'sealed_body_text'] LOOP
        EXECUTE format('COMMENT ON FUNCTION prompt_tx.%I(uuid, uuid) IS %L', f,
                       format('prompt.%s as text, in the form Citus delegates inside a transaction block: the coordinator passes it through unparsed.',
                              replace(f, '_text', '')));
        PERFORM create_distributed_function(format('prompt_tx.%I(uuid,uuid)', f)::regprocedure, 'conversation_id'::text,
                                            colocate_with := 'prompt.conversations', force_delegation := true);
    END LOOP;
END $$;
DO $$ DECLARE f text; BEGIN
    FOREACH f IN ARRAY ARRAY['compile_turn', 'preview_turn', 'explain_turn', 'sealed_body', 'estimate_turn'] LOOP
        EXECUTE format('COMMENT ON FUNCTION prompt_tx.%I(uuid, uuid) IS %L', f,
                       format('prompt.%s in the form Citus delegates inside a transaction block (force_delegation).', f));
        PERFORM create_distributed_function(format('prompt_tx.%I(uuid,uuid)', f)::regprocedure, 'conversation_id'::text,
                                            colocate_with := 'prompt.conversations', force_delegation := true);
    END LOOP;
END $$;
