-- pgprompt 0.4.0 -> 0.5.0 (frozen: never edit once released)
--
-- * fail closed: what was sent (seal storage, a turn's seal columns, a sent round, a
--   Side's capture) changes only through pgprompt's own writer, a backend-local value
--   the library sets with the trigger depth its statements fire at (no security-context
--   flag, setting, temporary object or trigger of a caller's unlocks it); a delete goes
--   with its conversation or turn once that is gone; an administrator's INSERT is a
--   restore. prompt._in_cascade and prompt._seal_storage_guard are replaced;
-- * every byte returned is covered: rounds.sent_digest and seals.frozen_digest, checked on
--   every read and by verify_seals (written here for what 0.4 sealed and sent), and
--   seals.pieces_digest, what the cache report checks a seal's stored pieces against
--   without hashing its body whole (NULL for what 0.4 sealed: hashed whole);
-- * tenancy fails closed: once a tenant is listed, a role listed nowhere reads and writes
--   no tenant's rows; tenancy follows the role's OID (tenants.role_oid, stamped from the
--   name); prompt.administrators; a delete whose foreign-key action would change another
--   tenant's row is refused; the extension's permissive policy yields to a user's own;
--   turns are numbered under the conversation's row lock;
-- * the model catalog: lifecycle columns (deprecated_at, retires_at, replacement),
--   system_messages, cache_diagnostics, imported; thinking mode between_tools; a name
--   matches a profile whole or at a '-'; prompt.import_models, prompt.model_status; the
--   shipped catalog replaced by 0.5's (a user's explicit profile kept);
-- * count bodies: prompt.count_body, prompt.record_count, prompt.counts; the calibration
--   reads counts beside billed usage and sets aside ratios outside 0.1-10;
-- * today's forms: models.history_cache_ttl (history's breakpoints' TTL), responses.
--   billed_miss (a provider's cache diagnostics) and cache_report's billed_miss;
-- * the fifth wire, Amazon Bedrock's Converse (models.wire, responses.shape, the
--   profiles' wires, and the profiles' providers: checked by the library,
--   prompt._wire_known, _wires_known and _provider_known, not a list; Bedrock's Claude,
--   Nova and Llama profiles (providers amazon and meta); a cross-region inference
--   profile's id matches as its model's);
-- * responses.answer_digest: a stateful chain holds only while the answer it continues
--   reads as it was recorded;
-- * a trusted install: a database owner that runs the update is given USAGE and every
--   table with grant option (the objects are the bootstrap superuser's);
-- * a role granted what every table of 0.3 grants is named in a WARNING with the one
--   statement that gives it the tables added since (model_profiles, which 0.4 added, too).

-- Schema ------------------------------------------------------------------------------

ALTER TABLE prompt.rounds ADD COLUMN sent_digest bytea, ADD COLUMN sent_estimate int;
ALTER TABLE prompt.responses ADD COLUMN billed_miss jsonb;
-- A response recorded before 0.5 has no answer digest: a stateful turn after it sends
-- the full body once (whether its answer was edited since cannot be told).
ALTER TABLE prompt.responses ADD COLUMN answer_digest bytea;
ALTER TABLE prompt.models
    ADD COLUMN history_cache_ttl text
        CONSTRAINT models_history_cache_ttl_valid CHECK (history_cache_ttl IN ('5m', '1h', '30m', '12h')),
    ADD CONSTRAINT models_history_cache_ttl_not_longer
        CHECK (array_position(ARRAY['5m', '30m', '1h', '12h'], history_cache_ttl)
               <= array_position(ARRAY['5m', '30m', '1h', '12h'], cache_ttl));
ALTER TABLE prompt.seals ADD COLUMN frozen_digest bytea;
-- A seal of 0.4 keeps no pieces digest: the cache report hashes its body whole.
ALTER TABLE prompt.seals ADD COLUMN pieces_digest bytea;
ALTER TABLE prompt.tenants ADD COLUMN role_oid oid;
CREATE INDEX tenants_role_oid ON prompt.tenants (role_oid);
{{block:schema:CREATE TABLE prompt.administrators}}
{{block:schema:CREATE TABLE prompt.counts}}
CREATE INDEX counts_compiled_model_idx ON prompt.counts (compiled_model);
SELECT pg_catalog.pg_extension_config_dump('prompt.counts', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.administrators', '');

ALTER TABLE prompt.model_profiles
    ADD COLUMN deprecated_at date,
    ADD COLUMN retires_at date,
    ADD COLUMN replacement text,
    ADD COLUMN system_messages bool NOT NULL DEFAULT false,
    ADD COLUMN cache_diagnostics bool NOT NULL DEFAULT false,
    ADD COLUMN imported jsonb,
    DROP CONSTRAINT model_profiles_thinking_modes_valid,
    ADD CONSTRAINT model_profiles_thinking_modes_valid
        CHECK (thinking_modes <@ ARRAY['adaptive', 'enabled', 'disabled', 'between_tools']),
    DROP CONSTRAINT model_profiles_wires_valid,
    DROP CONSTRAINT model_profiles_provider_valid;

-- The fifth wire, Amazon Bedrock's Converse: the lists of wires and of providers give way
-- to the library's (their CHECKs are made again below, once prompt._wire_known and
-- prompt._provider_known exist).
ALTER TABLE prompt.models DROP CONSTRAINT models_wire_valid;
ALTER TABLE prompt.responses DROP CONSTRAINT responses_shape_valid;

{{block-replace:schema:CREATE VIEW prompt.model_calibration}}

-- The library's functions -------------------------------------------------------------

DROP FUNCTION prompt._in_cascade();
DROP FUNCTION prompt._seal_storage_guard(text, text);
{{pgrx:_storage_guard}}
{{pgrx:_parent_gone}}
{{pgrx:_truncate_guard}}
{{pgrx:_lock_conversation}}
{{pgrx:_unconfined}}
{{pgrx:_my_workspaces}}
{{pgrx:_role}}
{{pgrx:_wire_known}}
{{pgrx:_wires_known}}
{{block:finalize:ALTER TABLE prompt.models ADD CONSTRAINT models_wire_valid}}
{{block:finalize:ALTER TABLE prompt.responses ADD CONSTRAINT responses_shape_valid}}
{{block:finalize:ALTER TABLE prompt.model_profiles ADD CONSTRAINT model_profiles_wires_valid}}
{{pgrx:_provider_known}}
{{block:finalize:ALTER TABLE prompt.model_profiles ADD CONSTRAINT model_profiles_provider_valid}}
{{pgrx:_tenant_delete_guard}}
{{pgrx:count_body}}
{{pgrx:record_count}}
{{pgrx-replace:_tenant_writes_user}}
-- cache_report gains billed_miss (a new result column: dropped and made again).
DROP FUNCTION prompt.cache_report(uuid);
{{pgrx:cache_report}}
{{comment:FUNCTION prompt.cache_report(uuid)}}

-- What was sent -----------------------------------------------------------------------

{{fn-replace:_tokenizers_in_use}}
{{fn-replace:_turns_write}}
{{fn-replace:_turns_delete}}
{{fn-replace:_rounds_write}}
{{fn:_round_digest}}
{{fn:_history_truncate}}
CREATE TRIGGER turns_truncate BEFORE TRUNCATE ON prompt.turns
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._history_truncate();
CREATE TRIGGER rounds_truncate BEFORE TRUNCATE ON prompt.rounds
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._history_truncate();

{{fn-replace:_seal_storage_write}}
{{fn:_seal_storage_statement}}
DROP TRIGGER seals_guard ON prompt.seals;
DROP TRIGGER seals_truncate ON prompt.seals;
DROP TRIGGER seal_nodes_guard ON prompt.seal_nodes;
DROP TRIGGER seal_nodes_truncate ON prompt.seal_nodes;
DROP TRIGGER seals_02_guard ON prompt.seals_02;
DROP TRIGGER seals_02_truncate ON prompt.seals_02;
{{triggers:seals_guard,seals_statement,seal_nodes_guard,seal_nodes_statement,seals_02_guard,seals_02_statement}}

{{fn-replace:_conversations_capture}}
DROP TRIGGER conversations_capture ON prompt.conversations;
{{triggers:conversations_capture}}

-- What 0.4 sealed and sent, with the digests 0.5 checks (the guards step aside for it).
ALTER TABLE prompt.seals DISABLE TRIGGER seals_guard;
UPDATE prompt.seals SET frozen_digest = sha256(convert_to(frozen::text, 'UTF8'));
ALTER TABLE prompt.seals ENABLE TRIGGER seals_guard;
ALTER TABLE prompt.rounds DISABLE TRIGGER rounds_write;
UPDATE prompt.rounds SET sent_digest = prompt._round_digest(assistant, results, steers, aborted) WHERE sent_at IS NOT NULL;
ALTER TABLE prompt.rounds ENABLE TRIGGER rounds_write;

-- The model catalog -------------------------------------------------------------------

{{fn:_model_profile_of}}
{{fn-replace:_model_profile}}
{{fn:_model_list_entry}}
{{fn:_model_list_base}}
{{fn:import_models}}
{{view:model_status}}

-- The shipped catalog of 0.5 replaces 0.4's; a model that named a shipped profile keeps
-- naming it (the rows go out and come back in one transaction).
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

-- Tenancy -----------------------------------------------------------------------------

UPDATE prompt.tenants t SET role_oid = r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = t.role_name;
{{fn:_grants_decide}}
{{fn:_role_row_write}}
{{triggers:tenants_role,administrators_role}}
DROP POLICY pgprompt_own_rows ON prompt.tenants;
CREATE POLICY pgprompt_own_rows ON prompt.tenants FOR SELECT USING (role_oid = prompt._role());
ALTER TABLE prompt.administrators ENABLE ROW LEVEL SECURITY;
CREATE POLICY pgprompt_own_rows ON prompt.administrators FOR SELECT USING (role_oid = prompt._role());
GRANT SELECT ON prompt.administrators TO PUBLIC;
{{fn:_tenant_delete}}
{{triggers:users_tenant_delete,conversations_tenant_delete}}

-- Every policy of the extension's, made again (0.4's tenancy looked roles up by name and
-- its permissive policy passed every row).
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

-- Grants: a role granted a privilege on every table 0.3 made needs it on the tables added
-- since (0.4's model_profiles included) and SELECT on the new view. Grants an extension
-- script makes are the extension's own and pg_dump leaves them out (a restore would lose
-- them), so the update names the statement to run, role by role, in a WARNING (an
-- extension script's NOTICEs are not shown) (README, "Upgrading").
DO $grants$
DECLARE
    g record;
    old constant text[] := ARRAY['models', 'users', 'workspaces', 'documents', 'conversations', 'memories', 'skills',
                                 'turns', 'rounds', 'seals', 'seal_nodes', 'seals_02', 'responses'];
BEGIN
    FOR g IN
        SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END AS role,
               pg_catalog.string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type) AS privileges,
               bool_or(a.privilege_type = 'SELECT') AS reads
          FROM (SELECT a.grantee, a.privilege_type
                  FROM pg_catalog.pg_class c, LATERAL pg_catalog.aclexplode(c.relacl) a
                 WHERE c.relnamespace = 'prompt'::regnamespace AND c.relname = ANY (old) AND a.grantee <> c.relowner
                 GROUP BY a.grantee, a.privilege_type
                HAVING count(DISTINCT c.relname) = pg_catalog.array_length(old, 1)) a
         GROUP BY a.grantee
    LOOP
        RAISE WARNING 'pgprompt 0.5.0: role % has % on every table of 0.3; give it the tables added since', g.role, g.privileges
            USING HINT = format('GRANT %s ON prompt.model_profiles, prompt.counts TO %s;%s', g.privileges, g.role,
                                CASE WHEN g.reads THEN format(' GRANT SELECT ON prompt.model_status TO %s;', g.role) ELSE '' END);
    END LOOP;
END
$grants$;

{{block:finalize:DO $owner$}}

-- Comments ----------------------------------------------------------------------------

{{comments}}
