-- pgprompt 0.3.0 -> 0.4.0 (frozen: never edit once released)
--
-- * seals are tamper-evident: every read checks the body against its digest
--   (data_corrupted, XX001, otherwise) and bounds what the seal row says before it sizes
--   anything; prompt.verify_seals() lists seals that no longer match; seal storage
--   (seals, seal_nodes, seals_02) refuses UPDATE, DELETE and TRUNCATE except through
--   pgprompt or a foreign-key cascade; sealing and prune_seals take one lock (a row
--   update of the conversation: 40001 under REPEATABLE READ or SERIALIZABLE);
-- * rewriting sealed history is a privilege: pgprompt.allow_history_rewrite turns on
--   only for a superuser or a role granted SET on it (42501 otherwise); the guards look
--   rows up whatever the caller's row-level security lets it see;
-- * tenancy with the extension's own row-level security policies over prompt.tenants and
--   prompt.workspace_members (kept by pg_dump as data): a tenant reads its workspaces'
--   rows and writes only what no other tenant's compile reads;
-- * the turns trigger counts again a write of its own counters; responses.body_digest
--   makes a response without an id recorded twice a no-op; the procedures pin
--   search_path.

ALTER TABLE prompt.responses ADD COLUMN body_digest bytea;

CREATE TABLE prompt.tenants (
    role_name    name NOT NULL,
    workspace_id uuid NOT NULL REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    PRIMARY KEY (role_name, workspace_id)
);
CREATE TABLE prompt.workspace_members (
    workspace_id uuid NOT NULL REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES prompt.users (id) ON DELETE CASCADE,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user ON prompt.workspace_members (user_id);
SELECT pg_catalog.pg_extension_config_dump('prompt.tenants', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.workspace_members', '');

CREATE FUNCTION prompt."_in_cascade"() RETURNS bool
STRICT VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_in_cascade_wrapper';
CREATE FUNCTION prompt."_replayed_by_later_seal"(
	"conversation_id" uuid,
	"seq" bigint
) RETURNS bool
STRICT VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_replayed_by_later_seal_wrapper';
CREATE FUNCTION prompt."_seal_storage_guard"(
	"table" TEXT,
	"op" TEXT
) RETURNS void
STRICT VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_seal_storage_guard_wrapper';
CREATE FUNCTION prompt."_tenant_writes_user"(
	"user_id" uuid
) RETURNS bool
STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_tenant_writes_user_wrapper';
CREATE FUNCTION prompt."verify_seals"(
	"conversation_id" uuid DEFAULT NULL
) RETURNS TABLE (
	"conversation_id" uuid, 
	"turn_id" uuid, 
	"problem" TEXT 
)
STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'verify_seals_wrapper';

CREATE OR REPLACE FUNCTION prompt."_history_rewrite_allowed"() RETURNS bool
STRICT VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_history_rewrite_allowed_wrapper';

CREATE OR REPLACE FUNCTION prompt._turns_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tokenizers text[];
    changed text;
BEGIN
    IF TG_OP = 'INSERT' AND NEW.seq IS NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended(NEW.conversation_id::text, 20261130));
        NEW.seq := coalesce((SELECT max(seq) FROM prompt.turns WHERE conversation_id = NEW.conversation_id), 0) + 1;
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
        PERFORM prompt._check_options_wire('turn', NEW.request_options::text, m.wire, m.max_output_tokens)
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
    IF prompt._in_cascade() THEN
        RETURN OLD;
    END IF;
    IF OLD.sealed_at IS NOT NULL THEN
        IF NOT prompt._history_rewrite_allowed() THEN
            PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, 'delete', true);
        END IF;
    ELSIF prompt._replayed_by_later_seal(OLD.conversation_id, OLD.seq) AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, 'delete_replayed', true);
    END IF;
    RETURN OLD;
END
$$;

CREATE OR REPLACE FUNCTION prompt._rounds_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- A sent round goes with its turn (a foreign-key cascade), or on purpose.
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.sent_at IS NOT NULL
       AND NOT (TG_OP = 'DELETE' AND prompt._in_cascade())
       AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._refuse_sent_round(OLD.conversation_id, OLD.turn_id, OLD.n, lower(TG_OP));
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    IF TG_OP = 'INSERT'
       OR NEW.assistant IS DISTINCT FROM OLD.assistant
       OR NEW.results   IS DISTINCT FROM OLD.results
       OR NEW.steers    IS DISTINCT FROM OLD.steers
       OR NEW.n         IS DISTINCT FROM OLD.n THEN
        PERFORM prompt._check_round(NEW.turn_id, NEW.n, NEW.assistant::text, NEW.results::text, NEW.steers::text);
    END IF;
    RETURN NEW;
END
$$;

-- Seal storage is what was sent: it changes only through pgprompt (sealing, prune_seals,
-- the 0.2 conversion hold it open) or by a foreign-key cascade (deleting a conversation,
-- or a sealed turn with a permitted history rewrite). TRUNCATE needs a permitted rewrite.
CREATE FUNCTION prompt._seal_storage_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._seal_storage_guard(TG_TABLE_NAME, TG_OP);
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER seals_guard BEFORE UPDATE OR DELETE ON prompt.seals
    FOR EACH ROW EXECUTE FUNCTION prompt._seal_storage_write();
CREATE TRIGGER seals_truncate BEFORE TRUNCATE ON prompt.seals
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_write();
CREATE TRIGGER seal_nodes_guard BEFORE UPDATE OR DELETE ON prompt.seal_nodes
    FOR EACH ROW EXECUTE FUNCTION prompt._seal_storage_write();
CREATE TRIGGER seal_nodes_truncate BEFORE TRUNCATE ON prompt.seal_nodes
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_write();
CREATE TRIGGER seals_02_guard BEFORE UPDATE OR DELETE ON prompt.seals_02
    FOR EACH ROW EXECUTE FUNCTION prompt._seal_storage_write();
CREATE TRIGGER seals_02_truncate BEFORE TRUNCATE ON prompt.seals_02
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_write();

CREATE OR REPLACE PROCEDURE prompt.backfill_token_counts(tokenizer text, batch_size int DEFAULT 1000)
LANGUAGE plpgsql
AS $$
DECLARE
    slot int;
    last_c uuid;
    last_id uuid;
    seen bigint := 0;
    counted bigint := 0;
    batch_seen bigint;
    batch_counted bigint;
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    slot := pg_catalog.array_position(ARRAY['cl100k_base', 'o200k_base']::text[], tokenizer);
    IF slot IS NULL THEN
        PERFORM prompt.count_tokens('', tokenizer);  -- raises tokenizer_unknown (22023)
    END IF;
    IF batch_size IS NULL OR batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, not %', batch_size
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    LOOP
        WITH batch AS (
            SELECT t.conversation_id, t.id FROM prompt.turns t
            WHERE last_c IS NULL OR (t.conversation_id, t.id) > (last_c, last_id)
            ORDER BY t.conversation_id, t.id
            LIMIT batch_size
        ), done AS (
            UPDATE prompt.turns t SET
                content_tokens = CASE
                    WHEN t.content IS NULL OR t.content_tokens[slot] IS NOT NULL THEN t.content_tokens
                    WHEN slot = 1 THEN ARRAY[(prompt._row_tokens(t.kind, t.content, ARRAY[tokenizer]))[1], t.content_tokens[2]]
                    ELSE ARRAY[t.content_tokens[1], (prompt._row_tokens(t.kind, t.content, ARRAY[tokenizer]))[2]] END,
                prompt_tokens = CASE
                    WHEN t.prompt IS NULL OR t.prompt_tokens[slot] IS NOT NULL THEN t.prompt_tokens
                    WHEN slot = 1 THEN ARRAY[(prompt._row_tokens('message', t.prompt, ARRAY[tokenizer]))[1], t.prompt_tokens[2]]
                    ELSE ARRAY[t.prompt_tokens[1], (prompt._row_tokens('message', t.prompt, ARRAY[tokenizer]))[2]] END
            FROM batch b
            WHERE t.conversation_id = b.conversation_id AND t.id = b.id
              AND ((t.content IS NOT NULL AND t.content_tokens[slot] IS NULL)
                OR (t.prompt IS NOT NULL AND t.prompt_tokens[slot] IS NULL))
            RETURNING 1
        )
        SELECT (SELECT count(*) FROM batch), (SELECT count(*) FROM done), l.conversation_id, l.id
          INTO batch_seen, batch_counted, last_c, last_id
          FROM (SELECT b.conversation_id, b.id FROM batch b ORDER BY b.conversation_id DESC, b.id DESC LIMIT 1) l;
        EXIT WHEN NOT FOUND;
        seen := seen + batch_seen;
        counted := counted + batch_counted;
        COMMIT;
        PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        RAISE NOTICE 'backfill_token_counts(%): % turns read, % counted', tokenizer, seen, counted;
    END LOOP;
    RAISE NOTICE 'backfill_token_counts(%): done, % turns read, % counted', tokenizer, seen, counted;
END
$$;

CREATE OR REPLACE PROCEDURE prompt.convert_seals_02(batch_size int DEFAULT 100)
LANGUAGE plpgsql
AS $$
DECLARE
    total bigint;
    converted bigint := 0;
    n bigint;
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    IF batch_size IS NULL OR batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, not %', batch_size
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT pg_catalog.count(*) INTO total FROM prompt.seals_02;
    LOOP
        n := prompt._convert_seals_02(NULL, batch_size);
        EXIT WHEN n = 0;
        converted := converted + n;
        COMMIT;
        PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        RAISE NOTICE 'convert_seals_02: % of % converted', converted, total;
    END LOOP;
    -- Seals another session is converting at the same time are skipped, not waited for.
    SELECT pg_catalog.count(*) INTO total FROM prompt.seals_02;
    IF total > 0 THEN
        RAISE NOTICE 'convert_seals_02: % converted here; % being converted by another session', converted, total;
    ELSE
        RAISE NOTICE 'convert_seals_02: done, % converted', converted;
    END IF;
END
$$;

ALTER TABLE prompt.tenants ENABLE ROW LEVEL SECURITY;
CREATE POLICY pgprompt_own_rows ON prompt.tenants FOR SELECT USING (role_name = current_user);
GRANT SELECT ON prompt.tenants TO PUBLIC;

DO $rls$
DECLARE
    free constant text := '(SELECT NOT EXISTS (SELECT 1 FROM prompt.tenants t WHERE t.role_name = current_user))';
    mine constant text := '(SELECT t.workspace_id FROM prompt.tenants t WHERE t.role_name = current_user)';
    members text;
    conversations text;
    -- table => (what a tenant reads, what it may write)
    rules text[][];
    r text[];
BEGIN
    members := format('(SELECT m.user_id FROM prompt.workspace_members m WHERE m.workspace_id IN %s)', mine);
    conversations := format('(SELECT c.id FROM prompt.conversations c WHERE c.workspace_id IN %s)', mine);
    rules := ARRAY[
        ARRAY['workspace_members', format('workspace_id IN %s', mine), 'false'],
        ARRAY['workspaces', format('id IN %s', mine), format('id IN %s', mine)],
        ARRAY['users', format('id IN %s', members), 'prompt._tenant_writes_user(id)'],
        ARRAY['models', 'true', 'false'],
        ARRAY['documents',
              format('workspace_id IN %s OR user_id IN %s', mine, members),
              format('workspace_id IN %s OR prompt._tenant_writes_user(user_id)', mine)],
        ARRAY['memories',
              format('CASE scope WHEN ''workspace'' THEN workspace_id IN %1$s WHEN ''conversation'' THEN conversation_id IN %2$s '
                     'WHEN ''speaker'' THEN user_id IN %3$s AND speaker_id IN %3$s ELSE user_id IN %3$s END',
                     mine, conversations, members),
              format('CASE scope WHEN ''workspace'' THEN workspace_id IN %1$s WHEN ''conversation'' THEN conversation_id IN %2$s '
                     'WHEN ''speaker'' THEN user_id IN %3$s AND speaker_id IN %3$s '
                     'AND (prompt._tenant_writes_user(user_id) OR prompt._tenant_writes_user(speaker_id)) '
                     'ELSE prompt._tenant_writes_user(user_id) END',
                     mine, conversations, members)],
        ARRAY['skills',
              format('CASE source WHEN ''workspace'' THEN workspace_id IN %1$s WHEN ''speaker'' THEN user_id IN %2$s AND speaker_id IN %2$s '
                     'WHEN ''runner'' THEN true WHEN ''application'' THEN true ELSE user_id IN %2$s END',
                     mine, members),
              format('CASE source WHEN ''workspace'' THEN workspace_id IN %1$s WHEN ''speaker'' THEN user_id IN %2$s AND speaker_id IN %2$s '
                     'AND (prompt._tenant_writes_user(user_id) OR prompt._tenant_writes_user(speaker_id)) '
                     'WHEN ''runner'' THEN false WHEN ''application'' THEN false ELSE prompt._tenant_writes_user(user_id) END',
                     mine, members)],
        ARRAY['conversations', format('workspace_id IN %s', mine), format('workspace_id IN %s', mine)],
        ARRAY['turns', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['rounds', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['seals', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['seal_nodes', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['seals_02', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['responses', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)]
    ];
    FOREACH r SLICE 1 IN ARRAY rules LOOP
        -- A table already under policies of its own (0.3's examples/tenancy.sql) keeps
        -- them as they are: the baseline would widen them. They are not kept by pg_dump.
        IF EXISTS (SELECT 1 FROM pg_catalog.pg_policy p WHERE p.polrelid = pg_catalog.format('prompt.%I', r[1])::regclass) THEN
            RAISE NOTICE 'prompt.% keeps its own row-level security policies; pg_dump does not keep them: move them to prompt.tenants (README, "Upgrading")', r[1];
        ELSE
            EXECUTE format('CREATE POLICY pgprompt_rows ON prompt.%I USING (true) WITH CHECK (true)', r[1]);
        END IF;
        EXECUTE format('ALTER TABLE prompt.%I ENABLE ROW LEVEL SECURITY', r[1]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_reads ON prompt.%I AS RESTRICTIVE FOR SELECT USING (%s OR %s)', r[1], free, r[2]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_inserts ON prompt.%I AS RESTRICTIVE FOR INSERT WITH CHECK (%s OR %s)', r[1], free, r[3]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_updates ON prompt.%1$I AS RESTRICTIVE FOR UPDATE USING (%2$s OR %3$s) WITH CHECK (%2$s OR %3$s)',
                       r[1], free, r[3]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_deletes ON prompt.%I AS RESTRICTIVE FOR DELETE USING (%s OR %s)', r[1], free, r[3]);
    END LOOP;
END
$rls$;
GRANT SELECT ON prompt.workspace_members TO PUBLIC;

COMMENT ON FUNCTION prompt._history_rewrite_allowed() IS
    'Internal: whether the transaction set pgprompt.allow_history_rewrite = on, as a role that may (a superuser, or one granted SET on it); 42501 for one that may not.';
COMMENT ON FUNCTION prompt._in_cascade() IS
    'Internal: whether the statement runs as a foreign-key action (a conversation''s or a turn''s delete reaching what belongs to it).';
COMMENT ON FUNCTION prompt._replayed_by_later_seal(uuid, bigint) IS
    'Internal: whether a turn later than the given seq is sealed (so it replayed the earlier turns), looked up as the tables'' owner.';
COMMENT ON FUNCTION prompt._seal_storage_guard(text, text) IS
    'Internal: refuses an UPDATE, DELETE or TRUNCATE of seal storage that is neither pgprompt''s own writer nor a foreign-key cascade.';
COMMENT ON FUNCTION prompt._seal_storage_write() IS
    'Internal trigger: seal storage (seals, seal_nodes, seals_02) changes only through pgprompt or a cascade.';
COMMENT ON FUNCTION prompt._tenant_writes_user(uuid) IS
    'Internal (tenancy policies): whether the current tenant may write the rows of this user (a member of its workspaces only), looked up past row-level security.';
COMMENT ON FUNCTION prompt._turns_delete() IS
    'Internal trigger: refuses deleting a sealed turn, or one a later seal replayed, unless a permitted pgprompt.allow_history_rewrite is on or the whole conversation goes.';
COMMENT ON FUNCTION prompt.verify_seals(uuid) IS
    'For an auditor: every seal (of one conversation, or of every one the caller can see) whose bytes do not read back as sealed, with the problem (missing, a lost node, pointers that do not fit, bytes that do not match the digest). Pruned bodies are not checked.';
COMMENT ON FUNCTION prompt.memo_stats() IS
    'This backend''s token-count memo as the calling role sees it (each role finds only its own counts): its entries, the capacity (pgprompt.memo_capacity), its lookups answered from the memo and its lookups that counted.';
COMMENT ON FUNCTION prompt._turns_write() IS
    'Internal trigger: numbers a turn written without seq; refuses changes to a sealed turn, a reply without poster_id, a message without role, and invalid inline entries, variables, history intent, input, tools, callables or request options; stores token counts and entry counts.';
COMMENT ON TABLE prompt.tenants IS
    'Tenancy: a role listed here is confined to its workspaces (it reads their rows and the shared ones, and writes only rows no other tenant''s compile reads). Managed by the extension''s owner; kept by pg_dump, and the policies come back with the extension.';
COMMENT ON TABLE prompt.workspace_members IS
    'The people and agents of each workspace: what its tenants read of prompt.users and their documents, memory and skills. A user in two workspaces is read by both tenants and written by neither.';
