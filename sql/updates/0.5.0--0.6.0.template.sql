-- pgprompt 0.5.0 -> 0.6.0 (frozen: never edit once released)
--
-- * no code pgprompt did not create runs inside its writes: a trigger of another's on a
--   prompt table is dropped here first, before the update writes anything (0.5 gave a
--   trusted install's database owner TRIGGER: its trigger would have run as the bootstrap
--   superuser), with a WARNING naming it; pgprompt's writes refuse one from now on;
-- * least privilege: TRIGGER, TRUNCATE, REFERENCES and MAINTAIN taken back from everyone
--   but the tables' owner (with what was granted on from them), the installing role of a
--   trusted install given SELECT, INSERT, UPDATE and DELETE by name, and an event trigger
--   that refuses a GRANT of the four; prompt.security_check() and prompt.status's
--   security_problems;
-- * identities never change: every key refuses UPDATE (AFTER triggers, key_immutable);
-- * what a seal sent is frozen: turns.sent_at and sent_digest, written here for the turns
--   the seals so far sent (a turn before a sealed turn of its conversation), and the
--   digest of their complete rounds; verify_seals checks them; a conversation's answerer
--   is frozen once it sealed a turn; the digest of a round is spelled where it is
--   written, prompt._round_digest is gone;
-- * pgprompt's own triggers carry its comment (only the tables' owner comments on a
--   trigger): what tells them from a trigger another role made with one of its functions;
-- * the two procedures that commit declare their variables with qualified types (read
--   with the caller's search_path, before their first statement pins it);
-- * tenancy: a tenant's Side names a parent it may write; a delete a foreign-key action
--   runs for a tenant is checked as the tenant's;
-- * compatible providers: prompt.models.provider names the dialect a wire speaks (chat's
--   compatible providers, Vertex AI on anthropic and gemini); the options checks read it;
-- * lifecycle with its source (model_profiles.lifecycle_source): a retires_at no source
--   gives warns, never refuses; the shipped catalog replaced by 0.6's (the ids of anthropic
--   2.17, openai 3.63 and google-genai 3.6.1; a replacement on its model's wire);
-- * a retired model is refused however its id is spelled (case, spaces, invisible
--   characters, Vertex's @date, :latest): the profile lookup reads those as the id;
-- * prompt history: prompt.document_versions (each document's current version seeded
--   here), written by pgprompt on every write of a document; prompt.restore_document();
--   a seal's sealed_versions names each slot's document and version (slots);
-- * tenancy is declared: prompt.tenancy and prompt.set_tenancy(); turned on here where a
--   tenant is listed; the tenancy rows an administrator's to write.
-- * what is sent keeps its cache layout (seals.layout, seal_nodes.layout,
--   rounds.sent_layout): cache_report and explain_turn read them, not the bodies' text,
--   and compile no request again that stored one; NULL for what 0.5 sent.

-- Code that is not pgprompt's, off its tables before anything is written -----------------

DO $foreign$
DECLARE
    -- 0.5.0's triggers (sql/releases/pgprompt--0.5.0.sql): table.trigger, none with a WHEN.
    own constant text[] := ARRAY[
        'administrators.administrators_role', 'conversations.conversations_capture', 'conversations.conversations_tenant_delete',
        'documents.documents_write', 'memories.memories_touch', 'models.models_options', 'models.models_tokenizer',
        'rounds.rounds_count', 'rounds.rounds_placed', 'rounds.rounds_truncate', 'rounds.rounds_write',
        'seal_nodes.seal_nodes_guard', 'seal_nodes.seal_nodes_statement', 'seals.seals_guard', 'seals.seals_statement',
        'seals_02.seals_02_guard', 'seals_02.seals_02_statement', 'skills.skills_touch', 'tenants.tenants_role',
        'turns.turns_delete', 'turns.turns_truncate', 'turns.turns_write', 'users.users_options',
        'users.users_tenant_delete', 'users.users_write', 'workspaces.workspaces_write'];
    g record;
BEGIN
    FOR g IN
        SELECT t.tgname, c.relname, t.tgfoid::pg_catalog.regprocedure AS fn
          FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
         WHERE c.relnamespace = 'prompt'::pg_catalog.regnamespace AND NOT t.tgisinternal
           AND NOT (c.relname || '.' || t.tgname = ANY (own) AND t.tgqual IS NULL
                    AND EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
                                 WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = t.tgfoid
                                   AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
                                   AND e.extname = 'pgprompt' AND d.deptype = 'e'))
    LOOP
        RAISE WARNING 'pgprompt 0.6.0: dropped trigger % on prompt.% (function %), which pgprompt did not create',
            pg_catalog.quote_ident(g.tgname), g.relname, g.fn
            USING DETAIL = 'A trigger of another role''s on pgprompt''s tables would run inside its writes, with the rights of whoever writes (a superuser compiling, this update).';
        EXECUTE pg_catalog.format('DROP TRIGGER %I ON prompt.%I', g.tgname, g.relname);
    END LOOP;
    -- A foreign key of another table onto pgprompt's runs its actions inside pgprompt's
    -- writes (0.5 gave a trusted install's database owner REFERENCES with ALL).
    FOR g IN
        SELECT k.conname, k.conrelid::pg_catalog.regclass AS tbl, k.confrelid::pg_catalog.regclass AS target
          FROM pg_catalog.pg_constraint k
          JOIN pg_catalog.pg_class r ON r.oid = k.conrelid
          JOIN pg_catalog.pg_class f ON f.oid = k.confrelid
         WHERE k.contype = 'f' AND k.conparentid = 0
           AND f.relnamespace = 'prompt'::pg_catalog.regnamespace AND r.relnamespace <> 'prompt'::pg_catalog.regnamespace
    LOOP
        RAISE WARNING 'pgprompt 0.6.0: dropped foreign key % of % onto %, which pgprompt did not create',
            pg_catalog.quote_ident(g.conname), g.tbl, g.target
            USING DETAIL = 'A foreign key of another table onto pgprompt''s runs its actions inside pgprompt''s writes.';
        EXECUTE pg_catalog.format('ALTER TABLE %s DROP CONSTRAINT %I', g.tbl, g.conname);
    END LOOP;
END
$foreign$;

-- Schema ------------------------------------------------------------------------------

ALTER TABLE prompt.turns ADD COLUMN sent_at timestamptz, ADD COLUMN sent_digest bytea;
ALTER TABLE prompt.model_profiles ADD COLUMN lifecycle_source text;
ALTER TABLE prompt.models ADD COLUMN provider text;
-- What the request that first carried a round cleared (request_options.clear_tool_results).
ALTER TABLE prompt.rounds ADD COLUMN cleared jsonb;
-- The cache layouts stored when a request is sent (core laid.rs); NULL for what 0.5 sent.
ALTER TABLE prompt.rounds ADD COLUMN sent_layout bytea;
ALTER TABLE prompt.seal_nodes ADD COLUMN layout bytea;
ALTER TABLE prompt.seals ADD COLUMN layout bytea;
-- What a Side's captured turn had cleared at the capture (0.5's Sides: nothing).
ALTER TABLE prompt.conversations ADD COLUMN captured_cleared jsonb;
{{block:schema:CREATE TABLE prompt.document_versions}}
SELECT pg_catalog.pg_extension_config_dump('prompt.document_versions', '');
-- Each document's current version is the first its history holds (who wrote it is not
-- known: written_by NULL).
INSERT INTO prompt.document_versions (document_id, version, role, body, written_at)
SELECT d.id, d.version, d.role, d.body, d.updated_at FROM prompt.documents d;
{{block:schema:CREATE TABLE prompt.tenancy}}
{{block:schema:CREATE UNIQUE INDEX tenancy_one_row}}
SELECT pg_catalog.pg_extension_config_dump('prompt.tenancy', '');

-- What a seal sent --------------------------------------------------------------------

-- The turns the seals so far sent (each before a sealed turn of its conversation), marked
-- sent with the digest of what was sent, and their complete rounds with the digest (sent_at
-- stays a continuation's); the write triggers step aside for it: 0.5's know no such mark.
ALTER TABLE prompt.turns DISABLE TRIGGER turns_write;
UPDATE prompt.turns t
   SET sent_at = now(),
       sent_digest = sha256(convert_to(jsonb_build_array(t.kind, t.role, t.author_id, t.answerer_id, t.poster_id, t.content,
           t.prompt, t.origin, t.sender_conversation_id, t.mode, t.inline, t.variables, t.input, t.tools, t.callables, t.model,
           t.history, t.memory_user_id, t.summary, t.summary_round, t.request_options, t.seq, t.sealed_preface,
           t.created_at AT TIME ZONE 'UTC')::text, 'UTF8'))
 WHERE t.seq < (SELECT max(s.seq) FROM prompt.turns s WHERE s.conversation_id = t.conversation_id AND s.sealed_at IS NOT NULL);
ALTER TABLE prompt.turns ENABLE TRIGGER turns_write;
ALTER TABLE prompt.rounds DISABLE TRIGGER rounds_write;
UPDATE prompt.rounds r
   SET sent_digest = sha256(convert_to(jsonb_build_array(r.assistant, r.results, r.steers, r.aborted)::text, 'UTF8'))
 WHERE r.sent_digest IS NULL AND (r.results <> '[]' OR NOT r.assistant @> '[{"type": "tool_call"}]')
   AND EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = r.conversation_id AND t.id = r.turn_id AND t.sent_at IS NOT NULL);
ALTER TABLE prompt.rounds ENABLE TRIGGER rounds_write;

{{fn-replace:_turns_write}}
{{fn-replace:_turns_delete}}
{{fn-replace:_rounds_write}}
{{fn:_rounds_stored}}
{{triggers:rounds_stored}}
{{fn-replace:_conversations_capture}}
DROP TRIGGER conversations_capture ON prompt.conversations;
{{triggers:conversations_capture}}
{{proc-replace:backfill_token_counts}}
{{proc-replace:convert_seals_02}}
DROP FUNCTION prompt._replayed_by_later_seal(uuid, bigint);
DROP FUNCTION prompt._round_digest(jsonb, jsonb, jsonb, boolean);

-- Prompt history ----------------------------------------------------------------------

{{pgrx:_document_first_version}}
{{pgrx:_restores}}
{{fn-replace:_documents_write}}
{{pgrx:_document_version}}
{{pgrx:_document_version_recorded}}
{{fn:_documents_versioned}}
{{triggers:documents_versioned}}
{{fn:_document_versions_write}}
{{triggers:document_versions_guard,document_versions_truncate}}
{{fn:restore_document}}

-- Identities never change -------------------------------------------------------------

{{fn:_keys_fixed}}
{{block:finalize:DO $keys$}}

-- Tenancy, declared -------------------------------------------------------------------

{{pgrx:_administers}}
{{pgrx:_tenancy_guard}}
{{pgrx:set_tenancy}}
{{pgrx:_tenant_writes_conversation}}
-- On where 0.5 had it on: a tenant is listed.
INSERT INTO prompt.tenancy (enabled_by) SELECT 'pgprompt 0.6.0 update' WHERE EXISTS (SELECT 1 FROM prompt.tenants);
-- Every policy of the tables' own made again (a Side's parent is now one the tenant
-- may write).
DO $drop$
DECLARE
    p record;
BEGIN
    FOR p IN SELECT c.relname, pol.polname FROM pg_catalog.pg_policy pol JOIN pg_catalog.pg_class c ON c.oid = pol.polrelid
              WHERE c.relnamespace = 'prompt'::regnamespace AND c.relname NOT IN ('tenants', 'administrators')
                AND pol.polname IN ('pgprompt_rows', 'pgprompt_tenant_reads', 'pgprompt_tenant_inserts',
                                    'pgprompt_tenant_updates', 'pgprompt_tenant_deletes') LOOP
        EXECUTE format('DROP POLICY %I ON prompt.%I', p.polname, p.relname);
    END LOOP;
END
$drop$;
{{block:finalize:DO $rls$}}
{{block:finalize:CREATE POLICY pgprompt_administrators ON prompt.tenants}}
{{block:finalize:CREATE POLICY pgprompt_administrators ON prompt.administrators}}
{{block:finalize:ALTER TABLE prompt.tenancy ENABLE ROW LEVEL SECURITY}}
{{block:finalize:CREATE POLICY pgprompt_reads ON prompt.tenancy}}
{{block:finalize:GRANT SELECT ON prompt.tenancy TO PUBLIC}}
{{fn:_tenancy_write}}
{{triggers:tenancy_guard}}

-- A model's profile, however its id is spelled; the catalog of the newest SDKs -----------

{{fn-replace:_model_profile_of}}
{{fn-replace:_model_list_entry}}

-- Compatible providers and cloud hosts: the dialect a model row speaks ---------------------

{{pgrx:_dialect_known}}
{{pgrx:_check_options_wire~native_images}}
{{block:finalize:ALTER TABLE prompt.models ADD CONSTRAINT models_provider_valid}}
{{fn-replace:_model_options_write}}
DROP TRIGGER models_options ON prompt.models;
{{triggers:models_options}}
{{fn-replace:_options_write}}

{{fn:_openai_wires}}
{{fn-replace:_model_list_base}}
{{fn-replace:import_models}}
{{view-replace:model_status}}

-- The shipped catalog of 0.6 replaces 0.5's (lifecycle with its sources, the ids the newest
-- SDKs list); a model that named a shipped profile keeps naming it (the rows go out and come
-- back in one transaction).
CREATE TEMP TABLE pgprompt_named_profiles ON COMMIT DROP AS
    SELECT m.name, m.profile FROM prompt.models m WHERE m.profile IS NOT NULL;
ALTER TABLE prompt.models DISABLE TRIGGER models_options;
DELETE FROM prompt.model_profiles WHERE shipped;
{{file:profiles}}
UPDATE prompt.models m SET profile = n.profile FROM pgprompt_named_profiles n
 WHERE m.name = n.name AND m.profile IS DISTINCT FROM n.profile
   AND EXISTS (SELECT 1 FROM prompt.model_profiles p WHERE p.name = n.profile);
ALTER TABLE prompt.models ENABLE TRIGGER models_options;
DROP TABLE pgprompt_named_profiles;

-- Least privilege ---------------------------------------------------------------------

{{fn:security_check}}
{{view-replace:status}}
{{block:finalize:DO $owner$}}
{{block:finalize:DO $privileges$}}
{{pgrx:_grants_before}}
{{pgrx:_grants_after}}
{{fn:_grants_snapshot}}
{{fn:_grants_guard}}
{{block:finalize:CREATE EVENT TRIGGER pgprompt_privileges_before}}
{{block:finalize:CREATE EVENT TRIGGER pgprompt_privileges ON}}

-- Comments ----------------------------------------------------------------------------

{{comments}}

-- pgprompt's own triggers, marked (after the comments of their functions).
{{block:finalize:DO $own_triggers$}}
