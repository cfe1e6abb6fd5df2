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
--   the seals so far sent (a turn before a sealed turn of its conversation), with their
--   complete rounds; verify_seals checks them; the digest of a round is spelled where it
--   is written, prompt._round_digest is gone;
-- * a retired model is refused however its id is spelled (case, spaces, invisible
--   characters, Vertex's @date, :latest): the profile lookup reads those as the id;
-- * tenancy is declared: prompt.tenancy and prompt.set_tenancy(); turned on here where a
--   tenant is listed; the tenancy rows an administrator's to write.

-- Code that is not pgprompt's, off its tables before anything is written -----------------

DO $foreign$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT t.tgname, c.relname, t.tgfoid::pg_catalog.regprocedure AS fn
          FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
         WHERE c.relnamespace = 'prompt'::pg_catalog.regnamespace AND NOT t.tgisinternal
           AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
                            WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = t.tgfoid
                              AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
                              AND e.extname = 'pgprompt' AND d.deptype = 'e')
    LOOP
        RAISE WARNING 'pgprompt 0.6.0: dropped trigger % on prompt.% (function %), which pgprompt did not create',
            pg_catalog.quote_ident(g.tgname), g.relname, g.fn
            USING DETAIL = 'A trigger of another role''s on pgprompt''s tables would run inside its writes, with the rights of whoever writes (a superuser compiling, this update).';
        EXECUTE pg_catalog.format('DROP TRIGGER %I ON prompt.%I', g.tgname, g.relname);
    END LOOP;
END
$foreign$;

-- Schema ------------------------------------------------------------------------------

ALTER TABLE prompt.turns ADD COLUMN sent_at timestamptz, ADD COLUMN sent_digest bytea;
CREATE INDEX turns_unsent ON prompt.turns (conversation_id, seq) WHERE sent_digest IS NULL;
CREATE TABLE prompt.tenancy (
    enabled_at timestamptz NOT NULL DEFAULT now(),
    enabled_by name NOT NULL
);
CREATE UNIQUE INDEX tenancy_one_row ON prompt.tenancy ((true));
SELECT pg_catalog.pg_extension_config_dump('prompt.tenancy', '');

-- What a seal sent --------------------------------------------------------------------

-- The turns the seals so far sent (each before a sealed turn of its conversation) and
-- their complete rounds, marked with the digest of what was sent (the write triggers step
-- aside for it: 0.5's know no sent mark).
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
   SET sent_at = now(), sent_digest = sha256(convert_to(jsonb_build_array(r.assistant, r.results, r.steers, r.aborted)::text, 'UTF8'))
 WHERE r.sent_at IS NULL AND (r.results <> '[]' OR NOT r.assistant @> '[{"type": "tool_call"}]')
   AND EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = r.conversation_id AND t.id = r.turn_id AND t.sent_at IS NOT NULL);
ALTER TABLE prompt.rounds ENABLE TRIGGER rounds_write;

CREATE OR REPLACE FUNCTION prompt._turns_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tokenizers text[];
    changed text;
BEGIN
    IF TG_OP = 'INSERT' AND NEW.seq IS NULL THEN
        -- One writer of a conversation's next seq at a time: a lock on the conversation's
        -- row, which only a role that may write the conversation can take (an advisory lock
        -- on a key anyone can compute would let anyone block it).
        PERFORM prompt._lock_conversation(NEW.conversation_id);
        NEW.seq := coalesce((SELECT max(seq) FROM prompt.turns WHERE conversation_id = NEW.conversation_id), 0) + 1;
    END IF;
    -- A turn's seal is written by sealing alone (a restore by an administrator brings
    -- sealed turns back as they were).
    IF TG_OP = 'INSERT' AND (NEW.sealed_at IS NOT NULL OR NEW.sealed_preface IS NOT NULL OR NEW.sealed_catalog IS NOT NULL
                             OR NEW.sealed_mechanism IS NOT NULL OR NEW.sealed_versions IS NOT NULL) THEN
        PERFORM prompt._storage_guard(format('turn %s of conversation %s is sealed', NEW.id, NEW.conversation_id), 'INSERT');
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.sealed_at IS NULL
       AND (NEW.sealed_at IS NOT NULL OR NEW.sealed_preface IS DISTINCT FROM OLD.sealed_preface
            OR NEW.sealed_catalog IS DISTINCT FROM OLD.sealed_catalog OR NEW.sealed_mechanism IS DISTINCT FROM OLD.sealed_mechanism
            OR NEW.sealed_versions IS DISTINCT FROM OLD.sealed_versions) THEN
        PERFORM prompt._storage_guard(format('the seal of turn %s of conversation %s', OLD.id, OLD.conversation_id), 'UPDATE');
    END IF;
    -- A turn is marked sent by the seal that first sent it (a later turn's), with the
    -- digest of what was sent of it: by sealing alone (a restore by an administrator
    -- brings the marks back as they were).
    IF (TG_OP = 'INSERT' AND (NEW.sent_at IS NOT NULL OR NEW.sent_digest IS NOT NULL))
       OR (TG_OP = 'UPDATE' AND (NEW.sent_at IS DISTINCT FROM OLD.sent_at OR NEW.sent_digest IS DISTINCT FROM OLD.sent_digest)) THEN
        PERFORM prompt._storage_guard(format('the sent mark of turn %s of conversation %s', NEW.id, NEW.conversation_id), TG_OP);
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.sent_at IS NOT NULL THEN
        -- What a later seal sent of the turn never changes, unless this transaction
        -- rewrites history on purpose. What it did not send yet (an answer or an in-turn
        -- summary that came after) may be filled in: the next seal writes the digest anew.
        changed := CASE
            WHEN NEW.kind                   IS DISTINCT FROM OLD.kind                   THEN 'kind'
            WHEN NEW.role                   IS DISTINCT FROM OLD.role                   THEN 'role'
            WHEN NEW.author_id              IS DISTINCT FROM OLD.author_id              THEN 'author_id'
            WHEN NEW.answerer_id            IS DISTINCT FROM OLD.answerer_id            THEN 'answerer_id'
            WHEN NEW.poster_id              IS DISTINCT FROM OLD.poster_id              THEN 'poster_id'
            WHEN NEW.prompt                 IS DISTINCT FROM OLD.prompt                 THEN 'prompt'
            WHEN NEW.origin                 IS DISTINCT FROM OLD.origin                 THEN 'origin'
            WHEN NEW.sender_conversation_id IS DISTINCT FROM OLD.sender_conversation_id THEN 'sender_conversation_id'
            WHEN NEW.mode                   IS DISTINCT FROM OLD.mode                   THEN 'mode'
            WHEN NEW.inline                 IS DISTINCT FROM OLD.inline                 THEN 'inline'
            WHEN NEW.variables              IS DISTINCT FROM OLD.variables              THEN 'variables'
            WHEN NEW.input                  IS DISTINCT FROM OLD.input                  THEN 'input'
            WHEN NEW.tools                  IS DISTINCT FROM OLD.tools                  THEN 'tools'
            WHEN NEW.callables              IS DISTINCT FROM OLD.callables              THEN 'callables'
            WHEN NEW.model                  IS DISTINCT FROM OLD.model                  THEN 'model'
            WHEN NEW.history                IS DISTINCT FROM OLD.history                THEN 'history'
            WHEN NEW.memory_user_id         IS DISTINCT FROM OLD.memory_user_id         THEN 'memory_user_id'
            WHEN NEW.request_options        IS DISTINCT FROM OLD.request_options        THEN 'request_options'
            WHEN NEW.created_at             IS DISTINCT FROM OLD.created_at             THEN 'created_at'
            WHEN OLD.content       IS NOT NULL AND NEW.content       IS DISTINCT FROM OLD.content       THEN 'content'
            WHEN OLD.summary       IS NOT NULL AND NEW.summary       IS DISTINCT FROM OLD.summary       THEN 'summary'
            WHEN OLD.summary_round IS NOT NULL AND NEW.summary_round IS DISTINCT FROM OLD.summary_round THEN 'summary_round'
        END;
        IF changed IS NOT NULL AND NOT prompt._history_rewrite_allowed() THEN
            PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, 'sent:' || changed, true);
        END IF;
        IF changed IS NOT NULL OR NEW.content IS DISTINCT FROM OLD.content OR NEW.summary IS DISTINCT FROM OLD.summary
           OR NEW.summary_round IS DISTINCT FROM OLD.summary_round THEN
            NEW.sent_digest := NULL;
        END IF;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.sealed_at IS NOT NULL THEN
        -- What was sent never changes: the seal's own columns, and every column the seal
        -- was compiled from, unless this transaction rewrites history on purpose. The
        -- answer (content) and an in-turn summary stay writable.
        changed := CASE
            WHEN NEW.sealed_at        IS DISTINCT FROM OLD.sealed_at        THEN 'sealed_at'
            WHEN NEW.sealed_preface   IS DISTINCT FROM OLD.sealed_preface   THEN 'sealed_preface'
            WHEN NEW.sealed_catalog   IS DISTINCT FROM OLD.sealed_catalog   THEN 'sealed_catalog'
            WHEN NEW.sealed_mechanism IS DISTINCT FROM OLD.sealed_mechanism THEN 'sealed_mechanism'
            WHEN NEW.sealed_versions  IS DISTINCT FROM OLD.sealed_versions  THEN 'sealed_versions'
        END;
        IF changed IS NOT NULL THEN
            PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, changed, false);
        END IF;
        changed := CASE
            WHEN NEW.prompt          IS DISTINCT FROM OLD.prompt          THEN 'prompt'
            WHEN NEW.inline          IS DISTINCT FROM OLD.inline          THEN 'inline'
            WHEN NEW.variables       IS DISTINCT FROM OLD.variables       THEN 'variables'
            WHEN NEW.input           IS DISTINCT FROM OLD.input           THEN 'input'
            WHEN NEW.tools           IS DISTINCT FROM OLD.tools           THEN 'tools'
            WHEN NEW.callables       IS DISTINCT FROM OLD.callables       THEN 'callables'
            WHEN NEW.model           IS DISTINCT FROM OLD.model           THEN 'model'
            WHEN NEW.mode            IS DISTINCT FROM OLD.mode            THEN 'mode'
            WHEN NEW.answerer_id     IS DISTINCT FROM OLD.answerer_id     THEN 'answerer_id'
            WHEN NEW.poster_id       IS DISTINCT FROM OLD.poster_id       THEN 'poster_id'
            WHEN NEW.history         IS DISTINCT FROM OLD.history         THEN 'history'
            WHEN NEW.memory_user_id  IS DISTINCT FROM OLD.memory_user_id  THEN 'memory_user_id'
            WHEN NEW.seq             IS DISTINCT FROM OLD.seq             THEN 'seq'
            WHEN NEW.kind            IS DISTINCT FROM OLD.kind            THEN 'kind'
            WHEN NEW.request_options IS DISTINCT FROM OLD.request_options THEN 'request_options'
            WHEN NEW.conversation_id IS DISTINCT FROM OLD.conversation_id THEN 'conversation_id'
        END;
        IF changed IS NOT NULL AND NOT prompt._history_rewrite_allowed() THEN
            PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, changed, true);
        END IF;
    END IF;
    IF TG_OP = 'INSERT'
       OR NEW.kind      IS DISTINCT FROM OLD.kind
       OR NEW.role      IS DISTINCT FROM OLD.role
       OR NEW.poster_id IS DISTINCT FROM OLD.poster_id
       OR NEW.mode      IS DISTINCT FROM OLD.mode THEN
        PERFORM prompt._check_turn_shape(NEW.id, NEW.kind, NEW.role, NEW.poster_id, NEW.mode,
            TG_OP = 'UPDATE' AND NEW.mode IS DISTINCT FROM OLD.mode
            AND EXISTS (SELECT 1 FROM prompt.rounds r WHERE r.conversation_id = NEW.conversation_id AND r.turn_id = NEW.id));
    END IF;
    IF NEW.memory_user_id IS NOT NULL
       AND (TG_OP = 'INSERT' OR NEW.memory_user_id IS DISTINCT FROM OLD.memory_user_id)
       AND NOT EXISTS (SELECT 1 FROM prompt.users u WHERE u.id = NEW.memory_user_id AND u.kind = 'human') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('turn_field_invalid: memory_user_id of turn %s names %s, which is not a Human at /memory_user_id',
                             NEW.id, NEW.memory_user_id),
            HINT = 'memory_user_id selects a Human whose user memory and skills the turn reads; an agent''s are its own.';
    END IF;
    IF TG_OP = 'INSERT'
       OR NEW.inline          IS DISTINCT FROM OLD.inline
       OR NEW.variables       IS DISTINCT FROM OLD.variables
       OR NEW.history         IS DISTINCT FROM OLD.history
       OR NEW.input           IS DISTINCT FROM OLD.input
       OR NEW.tools           IS DISTINCT FROM OLD.tools
       OR NEW.callables       IS DISTINCT FROM OLD.callables
       OR NEW.request_options IS DISTINCT FROM OLD.request_options THEN
        PERFORM prompt._check_turn(NEW.inline::text, NEW.variables::text, NEW.history::text,
                                   NEW.input::text, NEW.tools::text, NEW.callables::text,
                                   NEW.request_options::text);
    END IF;
    IF NEW.request_options <> '{}'::jsonb AND NEW.model IS NOT NULL
       AND (TG_OP = 'INSERT' OR NEW.request_options IS DISTINCT FROM OLD.request_options
            OR NEW.model IS DISTINCT FROM OLD.model) THEN
        PERFORM prompt._check_options_wire('turn', NEW.request_options::text, m.wire, m.max_output_tokens,
                                           m.name, prompt._model_profile(m.name, m.profile))
           FROM prompt.models m WHERE m.name = NEW.model;
    END IF;
    IF TG_OP = 'INSERT'
       OR NEW.content IS DISTINCT FROM OLD.content
       OR NEW.prompt  IS DISTINCT FROM OLD.prompt
       OR NEW.kind    IS DISTINCT FROM OLD.kind
       -- Counts are the trigger's: a write of its own is counted again.
       OR NEW.content_tokens IS DISTINCT FROM OLD.content_tokens
       OR NEW.prompt_tokens  IS DISTINCT FROM OLD.prompt_tokens THEN
        tokenizers := prompt._tokenizers_in_use();
        NEW.content_tokens := prompt._row_tokens(NEW.kind, NEW.content, tokenizers);
        NEW.prompt_tokens := prompt._row_tokens('message', NEW.prompt, tokenizers);
    END IF;
    IF NEW.kind <> 'reply' THEN
        NEW.own_entries := 1;
    ELSIF TG_OP = 'INSERT'
       OR NEW.kind          IS DISTINCT FROM OLD.kind
       OR NEW.content       IS DISTINCT FROM OLD.content
       OR NEW.summary       IS DISTINCT FROM OLD.summary
       OR NEW.summary_round IS DISTINCT FROM OLD.summary_round
       OR NEW.own_entries   IS DISTINCT FROM OLD.own_entries THEN
        NEW.own_entries := prompt._own_entries(NEW.summary, NEW.summary_round, NEW.content,
            ARRAY(SELECT n FROM prompt.rounds r WHERE r.conversation_id = NEW.conversation_id AND r.turn_id = NEW.id));
    END IF;
    RETURN NEW;
END
$$;
CREATE OR REPLACE FUNCTION prompt._turns_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF prompt._parent_gone(OLD.conversation_id, NULL) THEN
        RETURN OLD;
    END IF;
    IF OLD.sealed_at IS NOT NULL THEN
        IF NOT prompt._history_rewrite_allowed() THEN
            PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, 'delete', true);
        END IF;
    ELSIF OLD.sent_at IS NOT NULL AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, 'delete_replayed', true);
    END IF;
    RETURN OLD;
END
$$;
DROP FUNCTION prompt._replayed_by_later_seal(uuid, bigint);
DROP FUNCTION prompt._round_digest(jsonb, jsonb, jsonb, boolean);

-- Identities never change -------------------------------------------------------------

CREATE FUNCTION prompt._keys_fixed() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    k text;
    was jsonb := to_jsonb(OLD);
    now_ jsonb := to_jsonb(NEW);
BEGIN
    FOREACH k IN ARRAY TG_ARGV LOOP
        IF was -> k IS DISTINCT FROM now_ -> k THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = format('key_immutable: %s of a row of prompt.%s never changes (%s, not %s)',
                                 k, TG_TABLE_NAME, was ->> k, now_ ->> k),
                DETAIL = 'A row''s key is its identity: seals, rounds, responses and tenancy name rows by it.',
                HINT = 'Insert a row under the new key instead (and delete the old one where that is allowed).';
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
DO $keys$
DECLARE
    -- table => its key columns
    keys constant text[][] := ARRAY[
        ['model_profiles', 'name'], ['models', 'name'], ['users', 'id'], ['workspaces', 'id'], ['documents', 'id'],
        ['conversations', 'id'], ['memories', 'id'], ['skills', 'id'], ['turns', 'conversation_id,id,seq'],
        ['rounds', 'conversation_id,turn_id,n'], ['seal_nodes', 'conversation_id,id'], ['seals', 'conversation_id,turn_id'],
        ['seals_02', 'conversation_id,turn_id'], ['responses', 'conversation_id,turn_id,step'],
        ['counts', 'conversation_id,turn_id,step'], ['tenants', 'role_name,workspace_id'], ['administrators', 'role_name'],
        ['workspace_members', 'workspace_id,user_id']];
    k text[];
BEGIN
    FOREACH k SLICE 1 IN ARRAY keys LOOP
        EXECUTE format('CREATE TRIGGER %1$I AFTER UPDATE ON prompt.%2$I FOR EACH ROW WHEN (%3$s) '
                       'EXECUTE FUNCTION prompt._keys_fixed(%4$s)',
                       k[1] || '_keys', k[1],
                       (SELECT string_agg(format('OLD.%1$I IS DISTINCT FROM NEW.%1$I', c), ' OR ')
                          FROM unnest(string_to_array(k[2], ',')) AS c),
                       (SELECT string_agg(quote_literal(c), ', ') FROM unnest(string_to_array(k[2], ',')) AS c));
    END LOOP;
END
$keys$;

-- Tenancy, declared -------------------------------------------------------------------

CREATE FUNCTION prompt."_administers"() RETURNS bool /* bool */
STRICT STABLE PARALLEL RESTRICTED
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_administers_wrapper';
CREATE FUNCTION prompt."_tenancy_guard"(
	"op" TEXT /* Option < & str > */
) RETURNS void
VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_tenancy_guard_wrapper';
CREATE FUNCTION prompt."set_tenancy"(
	"enabled" bool /* bool */
) RETURNS bool /* bool */
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'set_tenancy_wrapper';
-- On where 0.5 had it on: a tenant is listed.
INSERT INTO prompt.tenancy (enabled_by) SELECT 'pgprompt 0.6.0 update' WHERE EXISTS (SELECT 1 FROM prompt.tenants);
CREATE POLICY pgprompt_administrators ON prompt.tenants
    USING ((SELECT prompt._administers())) WITH CHECK ((SELECT prompt._administers()));
CREATE POLICY pgprompt_administrators ON prompt.administrators
    USING ((SELECT prompt._administers())) WITH CHECK ((SELECT prompt._administers()));
ALTER TABLE prompt.tenancy ENABLE ROW LEVEL SECURITY;
CREATE POLICY pgprompt_reads ON prompt.tenancy FOR SELECT USING (true);
GRANT SELECT ON prompt.tenancy TO PUBLIC;
CREATE FUNCTION prompt._tenancy_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._tenancy_guard(TG_OP);
    RETURN NULL;
END
$$;
CREATE TRIGGER tenancy_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON prompt.tenancy
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._tenancy_write();

-- A model's profile, however its id is spelled --------------------------------------------

CREATE OR REPLACE FUNCTION prompt._model_profile_of(model_name text, profile_name text) RETURNS TABLE (profile text)
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    -- A Bedrock cross-region inference profile (us.amazon.nova-pro-v1:0, global.anthropic.…)
    -- is its model's id behind a geography: matched as the id. Other spellings of an id
    -- are matched as the id too (a retired model is refused however it is spelled): in
    -- another case, with spaces or invisible characters, Vertex's @date for -date, an
    -- Ollama-style :latest.
    SELECT (to_jsonb(p) - 'imported')::text FROM prompt.model_profiles p
     WHERE p.name = coalesce(profile_name, (SELECT q.name FROM prompt.model_profiles q
                                   WHERE q.name = ANY (ARRAY(
                                         WITH k (id) AS (VALUES (model_name), (lower(regexp_replace(regexp_replace(regexp_replace(
                                                  model_name, '[[:space:]\u00ad\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]', '', 'g'),
                                                  '@', '-', 'g'), ':latest$', '')))),
                                              n (id) AS (SELECT k.id FROM k
                                                         UNION SELECT regexp_replace(k.id, '^(us|eu|apac|global|us-gov|jp|au|ca)[.](?=[a-z]+[.])', '') FROM k)
                                         SELECT n.id FROM n
                                         UNION ALL
                                         SELECT array_to_string(a[1:i], '-')
                                           FROM n, LATERAL string_to_array(left(n.id, 512), '-') a,
                                                LATERAL generate_series(1, cardinality(a) - 1) i))
                                   ORDER BY length(q.name) DESC, q.name LIMIT 1))
     OFFSET 0;
END;

-- Least privilege ---------------------------------------------------------------------

CREATE FUNCTION prompt.security_check()
RETURNS TABLE (severity text, object text, problem text, fix text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH ext AS (SELECT e.oid, e.extowner FROM pg_extension e WHERE e.extname = 'pgprompt'),
    nsp AS (SELECT n.oid, n.nspowner, n.nspacl FROM pg_namespace n WHERE n.nspname = 'prompt'),
    own AS (SELECT c.relowner AS owner FROM pg_class c WHERE c.oid = 'prompt.turns'::regclass),
    members AS (SELECT d.classid, d.objid FROM pg_depend d, ext
                 WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'),
    tables AS (SELECT c.oid, c.relname, c.relowner, c.relacl, c.relrowsecurity, c.relkind FROM pg_class c, nsp
                WHERE c.relnamespace = nsp.oid AND c.relkind IN ('r', 'p', 'v')),
    who (oid, name) AS (SELECT 0::oid, 'PUBLIC' UNION ALL SELECT r.oid, quote_ident(r.rolname) FROM pg_roles r)
    SELECT 'critical', format('prompt.%s', t.relname),
           format('%s holds %s: the tables'' owner''s alone', w.name, a.privilege_type),
           format('REVOKE %s ON prompt.%I FROM %s CASCADE;', a.privilege_type, t.relname, w.name)
      FROM tables t, LATERAL aclexplode(t.relacl) a, who w
     WHERE a.grantee = w.oid AND a.grantee <> t.relowner
       AND a.privilege_type IN ('TRIGGER', 'TRUNCATE', 'REFERENCES', 'MAINTAIN')
    UNION ALL
    SELECT 'critical', format('trigger %I on prompt.%s', g.tgname, t.relname),
           CASE WHEN g.tgisinternal THEN format('a foreign key of %s runs its actions inside pgprompt''s writes', g.tgconstrrelid::regclass)
                ELSE format('a trigger pgprompt did not create (function %s): pgprompt''s writes refuse to run it', g.tgfoid::regprocedure) END,
           CASE WHEN g.tgisinternal THEN format('ALTER TABLE %s DROP CONSTRAINT %I;', g.tgconstrrelid::regclass,
                                                 (SELECT k.conname FROM pg_constraint k WHERE k.oid = g.tgconstraint))
                ELSE format('DROP TRIGGER %I ON prompt.%I;', g.tgname, t.relname) END
      FROM tables t JOIN pg_trigger g ON g.tgrelid = t.oid
     WHERE CASE WHEN g.tgisinternal
                THEN g.tgconstrrelid <> 0 AND NOT EXISTS (SELECT 1 FROM members m WHERE m.classid = 'pg_class'::regclass AND m.objid = g.tgconstrrelid)
                ELSE NOT EXISTS (SELECT 1 FROM members m WHERE m.classid = 'pg_proc'::regclass AND m.objid = g.tgfoid) END
    UNION ALL
    SELECT 'critical', format('trigger %I on prompt.%s', g.tgname, t.relname),
           'pgprompt''s own trigger is disabled (or fires only for replication): what it refuses goes through',
           format('ALTER TABLE prompt.%I ENABLE TRIGGER %I;', t.relname, g.tgname)
      FROM tables t JOIN pg_trigger g ON g.tgrelid = t.oid
     WHERE NOT g.tgisinternal AND g.tgenabled IN ('D', 'R')
       AND EXISTS (SELECT 1 FROM members m WHERE m.classid = 'pg_proc'::regclass AND m.objid = g.tgfoid)
    UNION ALL
    SELECT 'critical', 'event trigger ' || quote_ident(v.evtname),
           'pgprompt''s event trigger is disabled: a GRANT of TRIGGER, TRUNCATE, REFERENCES or MAINTAIN on its tables goes through',
           format('ALTER EVENT TRIGGER %I ENABLE;', v.evtname)
      FROM pg_event_trigger v WHERE v.evtname IN ('pgprompt_privileges', 'pgprompt_privileges_before') AND v.evtenabled IN ('D', 'R')
    UNION ALL
    SELECT 'critical', format('prompt.%s', t.relname), 'row-level security is off: tenancy and the policies do not apply',
           format('ALTER TABLE prompt.%I ENABLE ROW LEVEL SECURITY;', t.relname)
      FROM tables t WHERE t.relkind IN ('r', 'p') AND NOT t.relrowsecurity
    UNION ALL
    SELECT 'critical', format('%s prompt.%s', CASE WHEN m.classid = 'pg_proc'::regclass THEN 'function' ELSE 'relation' END, o.name),
           format('owned by %s, not by the tables'' owner %s', o.owner::regrole, (SELECT owner FROM own)::regrole),
           format('ALTER %s prompt.%s OWNER TO %s;', CASE WHEN m.classid = 'pg_proc'::regclass THEN 'ROUTINE' ELSE 'TABLE' END,
                  o.name, (SELECT owner FROM own)::regrole)
      FROM members m
      JOIN LATERAL (SELECT c.relname::text AS name, c.relowner AS owner FROM pg_class c WHERE m.classid = 'pg_class'::regclass AND c.oid = m.objid
                    UNION ALL
                    SELECT p.oid::regprocedure::text, p.proowner FROM pg_proc p WHERE m.classid = 'pg_proc'::regclass AND p.oid = m.objid) o ON true
     WHERE o.owner <> (SELECT owner FROM own)
    UNION ALL
    SELECT 'critical', format('%s %s', CASE WHEN x.kind = 'f' THEN 'function' ELSE 'relation' END, x.name),
           'an object in schema prompt that pgprompt did not create: it could stand in for one of pgprompt''s',
           format('DROP %s %s;', CASE WHEN x.kind = 'f' THEN 'ROUTINE' ELSE 'TABLE' END, x.name)
      FROM (SELECT 'r' AS kind, c.oid::regclass::text AS name, 'pg_class'::regclass AS classid, c.oid FROM pg_class c, nsp
             WHERE c.relnamespace = nsp.oid AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
            UNION ALL
            SELECT 'f', p.oid::regprocedure::text, 'pg_proc'::regclass, p.oid FROM pg_proc p, nsp WHERE p.pronamespace = nsp.oid) x
     WHERE NOT EXISTS (SELECT 1 FROM members m WHERE m.classid = x.classid AND m.objid = x.oid)
    UNION ALL
    SELECT 'critical', 'schema prompt', format('owned by %s, not by the tables'' owner', nsp.nspowner::regrole),
           format('ALTER SCHEMA prompt OWNER TO %s;', (SELECT owner FROM own)::regrole)
      FROM nsp WHERE nsp.nspowner <> (SELECT owner FROM own)
    UNION ALL
    SELECT 'critical', 'schema prompt', format('%s may create objects in it, which could stand in for pgprompt''s', w.name),
           format('REVOKE CREATE ON SCHEMA prompt FROM %s CASCADE;', w.name)
      FROM nsp, LATERAL aclexplode(nsp.nspacl) a, who w
     WHERE a.grantee = w.oid AND a.grantee <> nsp.nspowner AND a.privilege_type = 'CREATE'
    UNION ALL
    SELECT 'warning', 'prompt.tenancy', 'tenants are listed and tenancy is off: grants decide what every role reads',
           'SELECT prompt.set_tenancy(true);'
     WHERE EXISTS (SELECT 1 FROM prompt.tenants) AND NOT EXISTS (SELECT 1 FROM prompt.tenancy)
    UNION ALL
    SELECT 'warning', format('tenant %I', t.role_name), 'no role of that name existed when the row was written: it confines nobody',
           format('UPDATE prompt.tenants SET role_name = role_name WHERE role_name = %L;  -- once the role exists (or DELETE the row)', t.role_name)
      FROM prompt.tenants t WHERE t.role_oid IS NULL OR NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.oid = t.role_oid)
    UNION ALL
    SELECT CASE WHEN c.setting LIKE 'session_replication_role=%' THEN 'critical' ELSE 'warning' END,
           CASE WHEN s.setrole = 0 THEN 'database ' || quote_ident(d.datname) ELSE 'role ' || s.setrole::regrole::text END,
           format('%s is set for every session of it: %s', c.setting,
                  CASE WHEN c.setting LIKE 'session_replication_role=%' THEN 'pgprompt''s triggers do not fire'
                       ELSE 'the history rewrite is on wherever that role may turn it on' END),
           format('ALTER %s RESET %s;', CASE WHEN s.setrole = 0 THEN 'DATABASE ' || quote_ident(d.datname) ELSE 'ROLE ' || s.setrole::regrole::text END,
                  split_part(c.setting, '=', 1))
      FROM pg_db_role_setting s LEFT JOIN pg_database d ON d.oid = s.setdatabase, LATERAL unnest(s.setconfig) c(setting)
     WHERE (s.setdatabase = 0 OR d.datname = current_database())
       AND (c.setting IN ('session_replication_role=replica', 'session_replication_role=local')
            OR c.setting ~* '^pgprompt\.allow_history_rewrite=(on|true|yes|1)$')
    UNION ALL
    SELECT 'info', format('policy %I on prompt.%s', p.polname, t.relname),
           'a policy of a user''s: it confines as PostgreSQL defines, and pgprompt''s permissive policy yields to a permissive one',
           'none needed; DROP POLICY to let grants and tenancy decide again'
      FROM tables t JOIN pg_policy p ON p.polrelid = t.oid WHERE p.polname NOT LIKE 'pgprompt\_%'
$$;
CREATE OR REPLACE VIEW prompt.status WITH (security_invoker = true) AS
SELECT c.id AS conversation_id,
       (SELECT count(*) FROM prompt.turns t WHERE t.conversation_id = c.id) AS turns,
       (SELECT count(*) FROM prompt.turns t WHERE t.conversation_id = c.id AND EXISTS (
            SELECT 1 FROM pg_catalog.unnest(prompt._tokenizers_in_use()) AS k(tokenizer),
                 LATERAL (SELECT pg_catalog.array_position(ARRAY['cl100k_base', 'o200k_base']::text[], k.tokenizer) AS slot) s
             WHERE (t.content IS NOT NULL AND t.content_tokens[s.slot] IS NULL)
                OR (t.prompt IS NOT NULL AND t.prompt_tokens[s.slot] IS NULL))) AS turns_missing_counts,
       (SELECT count(*) FROM prompt.seals s WHERE s.conversation_id = c.id) AS seals,
       (SELECT count(*) FROM prompt.seals s WHERE s.conversation_id = c.id AND s.pruned_at IS NOT NULL) AS pruned_seals,
       (SELECT count(*) FROM prompt.seals_02 p WHERE p.conversation_id = c.id) AS unconverted_02_seals,
       (SELECT coalesce(sum(s.bytes), 0) FROM prompt.seals s WHERE s.conversation_id = c.id) AS sealed_bytes,
       (SELECT coalesce(sum(pg_catalog.pg_column_size(n.body)), 0) FROM prompt.seal_nodes n
         WHERE n.conversation_id = c.id) AS seal_storage_bytes,
       (SELECT count(*) FROM prompt.responses r WHERE r.conversation_id = c.id) AS responses,
       (SELECT coalesce(sum(r.billed_input_tokens), 0) FROM prompt.responses r WHERE r.conversation_id = c.id) AS billed_input_tokens,
       (SELECT coalesce(sum(r.cache_read_tokens), 0) FROM prompt.responses r WHERE r.conversation_id = c.id) AS cache_read_tokens,
       (SELECT coalesce(sum(r.output_tokens), 0) FROM prompt.responses r WHERE r.conversation_id = c.id) AS output_tokens,
       -- The database's, on every row (not to be summed): what prompt.security_check() lists
       -- as critical or a warning.
       (SELECT count(*) FROM prompt.security_check() k WHERE k.severity <> 'info') AS security_problems
  FROM prompt.conversations c;
DO $owner$
BEGIN
    IF pg_catalog.quote_ident(current_user) <> '@extowner@' THEN
        GRANT USAGE ON SCHEMA prompt TO @extowner@ WITH GRANT OPTION;
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO @extowner@ WITH GRANT OPTION;
    END IF;
END
$owner$;
DO $privileges$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT c.oid::pg_catalog.regclass AS tbl, a.privilege_type,
               CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END AS who
          FROM pg_catalog.pg_class c, LATERAL pg_catalog.aclexplode(c.relacl) a
         WHERE c.relnamespace = 'prompt'::pg_catalog.regnamespace AND a.grantee <> c.relowner AND a.grantor = c.relowner
           AND a.privilege_type IN ('TRIGGER', 'TRUNCATE', 'REFERENCES', 'MAINTAIN')
    LOOP
        EXECUTE format('REVOKE %s ON %s FROM %s CASCADE', g.privilege_type, g.tbl, g.who);
    END LOOP;
END
$privileges$;
CREATE FUNCTION prompt."_grants_before"() RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_grants_before_wrapper';
CREATE FUNCTION prompt."_grants_after"() RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_grants_after_wrapper';
CREATE FUNCTION prompt._grants_snapshot() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._grants_before();
END
$$;
CREATE FUNCTION prompt._grants_guard() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._grants_after();
END
$$;
CREATE EVENT TRIGGER pgprompt_privileges_before ON ddl_command_start WHEN TAG IN ('GRANT')
    EXECUTE FUNCTION prompt._grants_snapshot();
CREATE EVENT TRIGGER pgprompt_privileges ON ddl_command_end WHEN TAG IN ('GRANT')
    EXECUTE FUNCTION prompt._grants_guard();

-- Comments ----------------------------------------------------------------------------

COMMENT ON VIEW prompt.status IS
    'Per conversation: turns, turns lacking a stored token count for a tokenizer in use (backfill_token_counts), seals, pruned seals, 0.2 seals not converted yet (convert_seals_02), sealed body bytes and their stored size, recorded responses and their billed tokens (sum these for the whole database); and, on every row, the database''s security problems (the critical and warning rows of prompt.security_check()).';
COMMENT ON FUNCTION prompt._unconfined() IS
    'Internal (tenancy policies): whether the current role is not confined: tenancy is off, or it administers the extension (its owner, prompt.administrators, superuser, BYPASSRLS).';
COMMENT ON COLUMN prompt.rounds.sent_digest IS
    'The SHA-256 of what the first request that carried the round sent (its assistant, results, steers and abort); every later read checks it.';
COMMENT ON TABLE prompt.tenants IS
    'Tenancy: once an administrator turned tenancy on (prompt.set_tenancy), every role is confined to the workspaces it is listed for here (it reads their rows and the shared ones, and writes only rows no other tenant''s compile reads); a role listed nowhere reads and writes no tenant''s rows unless it administers the extension. Written by administrators only; kept by pg_dump, and the policies come back with the extension.';
COMMENT ON TABLE prompt.tenancy IS
    'Whether tenancy is on: one row (who turned it on, and when) while it is. Written by prompt.set_tenancy, an administrator''s; kept by pg_dump. Declared, never inferred from the other tenancy tables: emptying prompt.tenants confines every unlisted role to nothing.';
COMMENT ON FUNCTION prompt.set_tenancy(boolean) IS
    'Turns tenancy on (true) or off (false), as an administrator (the extension''s owner, a role in prompt.administrators, a superuser or BYPASSRLS role); returns whether it is on. On, every other role reads and writes only the rows of the workspaces prompt.tenants lists it for.';
COMMENT ON FUNCTION prompt.security_check() IS
    'Every grant, trigger, disabled trigger, row-level security switch, owner, object, tenancy state or setting that weakens what pgprompt promises (README, "Security"), as (severity, object, problem, fix): critical, warning or info. No rows on a correct install; prompt.status counts the critical and warning ones.';
COMMENT ON FUNCTION prompt._administers() IS
    'Internal (the tenancy tables'' write policies, prompt.tenancy''s guard): whether the current role administers the extension.';
COMMENT ON FUNCTION prompt._tenancy_guard(text) IS
    'Internal: refuses a write of prompt.tenancy by a role that does not administer the extension (administrator_required).';
COMMENT ON FUNCTION prompt._tenancy_write() IS
    'Internal trigger: any write of prompt.tenancy, TRUNCATE included, is an administrator''s.';
COMMENT ON FUNCTION prompt._keys_fixed() IS
    'Internal trigger: refuses an UPDATE of a row''s key (key_immutable); its arguments are the key''s columns.';
COMMENT ON FUNCTION prompt._grants_guard() IS
    'Internal event trigger (the end of a GRANT): refuses one that gave TRIGGER, TRUNCATE, REFERENCES or MAINTAIN on a prompt table to a role other than the tables'' owner (privilege_refused).';
COMMENT ON FUNCTION prompt._grants_snapshot() IS
    'Internal event trigger (the start of a GRANT): remembers who holds the tables'' owner''s four privileges before it.';
COMMENT ON FUNCTION prompt._grants_before() IS
    'Internal (the event trigger at the start of a GRANT): remembers who holds TRIGGER, TRUNCATE, REFERENCES or MAINTAIN on a prompt table besides its owner.';
COMMENT ON FUNCTION prompt._grants_after() IS
    'Internal (the event trigger at the end of a GRANT): refuses the statement when it gave one of those four privileges (privilege_refused).';
COMMENT ON COLUMN prompt.turns.sent_at IS
    'When a seal first sent this turn (a later turn of its conversation was sealed): from then on what was sent of it never changes without a permitted history rewrite.';
COMMENT ON COLUMN prompt.turns.sent_digest IS
    'The SHA-256 of what was sent of the turn (the columns history renders it from), written by the seal that sent it; verify_seals checks it. NULL again when its answer or summary came after that seal, until the next seal.';
COMMENT ON FUNCTION prompt._turns_write() IS
    'Internal trigger: numbers a turn written without seq; refuses changes to a sealed turn or to what a later seal sent of a turn, a reply without poster_id, a message without role, and invalid inline entries, variables, history intent, input, tools, callables or request options; stores token counts and entry counts.';
COMMENT ON FUNCTION prompt._turns_delete() IS
    'Internal trigger: refuses deleting a sealed turn, or one a later seal sent, unless a permitted pgprompt.allow_history_rewrite is on or the whole conversation goes.';

