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
CREATE TABLE prompt.administrators (
    role_name name PRIMARY KEY,
    role_oid  oid
);
CREATE TABLE prompt.counts (
    conversation_id        uuid NOT NULL,
    turn_id                uuid NOT NULL,
    step                   int NOT NULL CONSTRAINT counts_step_valid CHECK (step >= 0),
    input_tokens           int NOT NULL CONSTRAINT counts_input_tokens_valid CHECK (input_tokens >= 0),
    estimated_input_tokens int NOT NULL,
    compiled_model         text,
    counted_at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (conversation_id, turn_id, step),
    FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns (conversation_id, id) ON DELETE CASCADE
);
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

CREATE OR REPLACE VIEW prompt.model_calibration WITH (security_invoker = true) AS
SELECT x.compiled_model AS model,
       count(*) FILTER (WHERE x.billed) AS recorded,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY x.ratio) AS median_ratio,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY x.ratio) AS p95_ratio,
       count(*) FILTER (WHERE NOT x.billed) AS counted
  FROM (SELECT r.compiled_model, r.billed_input_tokens::float8 / r.estimated_input_tokens AS ratio, true AS billed
          FROM prompt.responses r
         WHERE r.billed_input_tokens IS NOT NULL AND r.estimated_input_tokens > 0
        UNION ALL
        SELECT c.compiled_model, c.input_tokens::float8 / c.estimated_input_tokens, false
          FROM prompt.counts c
         WHERE c.estimated_input_tokens > 0) x
 WHERE x.compiled_model IS NOT NULL AND x.ratio BETWEEN 0.1 AND 10
 GROUP BY x.compiled_model;

-- The library's functions -------------------------------------------------------------

DROP FUNCTION prompt._in_cascade();
DROP FUNCTION prompt._seal_storage_guard(text, text);
CREATE FUNCTION prompt."_storage_guard"(
	"subject" TEXT, /* & str */
	"op" TEXT /* & str */
) RETURNS void
STRICT VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_storage_guard_wrapper';
CREATE FUNCTION prompt."_parent_gone"(
	"conversation_id" uuid, /* pgrx :: Uuid */
	"turn_id" uuid /* Option < pgrx :: Uuid > */
) RETURNS bool /* bool */
VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_parent_gone_wrapper';
CREATE FUNCTION prompt."_truncate_guard"(
	"table" TEXT /* & str */
) RETURNS void
STRICT VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_truncate_guard_wrapper';
CREATE FUNCTION prompt."_lock_conversation"(
	"conversation_id" uuid /* pgrx :: Uuid */
) RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_lock_conversation_wrapper';
CREATE FUNCTION prompt."_unconfined"() RETURNS bool /* bool */
STRICT STABLE PARALLEL RESTRICTED
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_unconfined_wrapper';
CREATE FUNCTION prompt."_my_workspaces"() RETURNS uuid[] /* Vec < pgrx :: Uuid > */
STRICT STABLE PARALLEL RESTRICTED
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_my_workspaces_wrapper';
CREATE FUNCTION prompt."_role"() RETURNS oid /* pg_sys :: Oid */
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_role_wrapper';
CREATE FUNCTION prompt."_wire_known"(
	"wire" TEXT /* & str */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_wire_known_wrapper';
CREATE FUNCTION prompt."_wires_known"(
	"wires" TEXT[] /* Vec < Option < String > > */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_wires_known_wrapper';
ALTER TABLE prompt.models ADD CONSTRAINT models_wire_valid CHECK (prompt._wire_known(wire));
ALTER TABLE prompt.responses ADD CONSTRAINT responses_shape_valid CHECK (prompt._wire_known(shape));
ALTER TABLE prompt.model_profiles ADD CONSTRAINT model_profiles_wires_valid CHECK (wires <> '{}' AND prompt._wires_known(wires));
CREATE FUNCTION prompt."_provider_known"(
	"provider" TEXT /* & str */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_provider_known_wrapper';
ALTER TABLE prompt.model_profiles ADD CONSTRAINT model_profiles_provider_valid CHECK (prompt._provider_known(provider));
CREATE FUNCTION prompt."_tenant_delete_guard"(
	"table" TEXT, /* & str */
	"id" uuid /* pgrx :: Uuid */
) RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_tenant_delete_guard_wrapper';
CREATE FUNCTION prompt."count_body"(
	"conversation_id" uuid, /* pgrx :: Uuid */
	"turn_id" uuid /* pgrx :: Uuid */
) RETURNS json /* JsonBody */
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'count_body_wrapper';
CREATE FUNCTION prompt."record_count"(
	"conversation_id" uuid, /* pgrx :: Uuid */
	"turn_id" uuid, /* pgrx :: Uuid */
	"input_tokens" INT /* i32 */
) RETURNS jsonb /* JsonbOut */
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'record_count_wrapper';
CREATE OR REPLACE FUNCTION prompt."_tenant_writes_user"(
	"user_id" uuid /* Option < pgrx :: Uuid > */
) RETURNS bool /* bool */
STABLE PARALLEL RESTRICTED
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_tenant_writes_user_wrapper';
-- cache_report gains billed_miss (a new result column: dropped and made again).
DROP FUNCTION prompt.cache_report(uuid);
CREATE FUNCTION prompt."cache_report"(
	"conversation_id" uuid /* pgrx :: Uuid */
) RETURNS TABLE (
	"turn_id" uuid,  /* pgrx :: Uuid */
	"step" INT,  /* i32 */
	"input_tokens" INT,  /* i32 */
	"shared_prefix_tokens" INT,  /* i32 */
	"first_difference" jsonb,  /* Option < JsonbOut > */
	"predicted_cache_read" INT,  /* i32 */
	"predicted_cache_write" INT,  /* i32 */
	"predicted_uncached" INT,  /* i32 */
	"billed_cache_read" INT,  /* Option < i32 > */
	"billed_cache_write" INT,  /* Option < i32 > */
	"billed_miss" jsonb  /* Option < JsonbOut > */
)
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'cache_report_wrapper';
COMMENT ON FUNCTION prompt.cache_report(uuid) IS
    'A row per request the conversation sent (each sealed first request, step 0, and each continuation, step = the newest round it carried), in order: its input tokens, the prefix it shares with the request before it, where it first differs and why (tools, system, trim, messages or model), and what the provider''s cache should read, write and leave uncached under the model''s rules (breakpoints, lookback, minimum prefix, TTL from the times sent), beside the cache read and write billed.';

-- What was sent -----------------------------------------------------------------------

CREATE OR REPLACE FUNCTION prompt._tokenizers_in_use() RETURNS text[]
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ BEGIN
    RETURN (SELECT coalesce(array_agg(DISTINCT tokenizer ORDER BY tokenizer), ARRAY['cl100k_base']) FROM prompt.models);
END $$;
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
    -- A sent round goes with its turn (the cascade of its delete: the turn is gone), or
    -- on purpose. Only pgprompt marks a round sent (with the digest of what was sent); an
    -- administrator's restore brings sent rounds back as they were.
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.sent_at IS NOT NULL
       AND NOT (TG_OP = 'DELETE' AND prompt._parent_gone(OLD.conversation_id, OLD.turn_id))
       AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._refuse_sent_round(OLD.conversation_id, OLD.turn_id, OLD.n, lower(TG_OP));
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    IF (TG_OP = 'INSERT' AND (NEW.sent_at IS NOT NULL OR NEW.sent_digest IS NOT NULL OR NEW.sent_estimate IS NOT NULL))
       OR (TG_OP = 'UPDATE' AND OLD.sent_at IS NULL
           AND (NEW.sent_at IS NOT NULL OR NEW.sent_digest IS DISTINCT FROM OLD.sent_digest
                OR NEW.sent_estimate IS DISTINCT FROM OLD.sent_estimate)) THEN
        PERFORM prompt._storage_guard(format('round %s of turn %s of conversation %s', NEW.n, NEW.turn_id, NEW.conversation_id),
                                      TG_OP);
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
CREATE FUNCTION prompt._round_digest(assistant jsonb, results jsonb, steers jsonb, aborted bool) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT sha256(convert_to(jsonb_build_array($1, $2, $3, $4)::text, 'UTF8')) $$;
CREATE FUNCTION prompt._history_truncate() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._truncate_guard(TG_TABLE_NAME);
    RETURN NULL;
END
$$;
CREATE TRIGGER turns_truncate BEFORE TRUNCATE ON prompt.turns
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._history_truncate();
CREATE TRIGGER rounds_truncate BEFORE TRUNCATE ON prompt.rounds
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._history_truncate();

CREATE OR REPLACE FUNCTION prompt._seal_storage_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        -- (Two statements: a row of seal_nodes has no turn_id to name.)
        IF TG_ARGV[0] = 'turn' THEN
            IF prompt._parent_gone(OLD.conversation_id, OLD.turn_id) THEN
                RETURN OLD;
            END IF;
        ELSIF prompt._parent_gone(OLD.conversation_id, NULL) THEN
            RETURN OLD;
        END IF;
    END IF;
    PERFORM prompt._storage_guard('prompt.' || TG_TABLE_NAME, TG_OP);
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;
CREATE FUNCTION prompt._seal_storage_statement() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._storage_guard('prompt.' || TG_TABLE_NAME, TG_OP);
    RETURN NULL;
END
$$;
DROP TRIGGER seals_guard ON prompt.seals;
DROP TRIGGER seals_truncate ON prompt.seals;
DROP TRIGGER seal_nodes_guard ON prompt.seal_nodes;
DROP TRIGGER seal_nodes_truncate ON prompt.seal_nodes;
DROP TRIGGER seals_02_guard ON prompt.seals_02;
DROP TRIGGER seals_02_truncate ON prompt.seals_02;
CREATE TRIGGER seals_guard BEFORE UPDATE OR DELETE ON prompt.seals
    FOR EACH ROW EXECUTE FUNCTION prompt._seal_storage_write('turn');
CREATE TRIGGER seals_statement BEFORE INSERT OR TRUNCATE ON prompt.seals
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_statement();
CREATE TRIGGER seal_nodes_guard BEFORE UPDATE OR DELETE ON prompt.seal_nodes
    FOR EACH ROW EXECUTE FUNCTION prompt._seal_storage_write('conversation');
CREATE TRIGGER seal_nodes_statement BEFORE INSERT OR TRUNCATE ON prompt.seal_nodes
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_statement();
CREATE TRIGGER seals_02_guard BEFORE UPDATE OR DELETE ON prompt.seals_02
    FOR EACH ROW EXECUTE FUNCTION prompt._seal_storage_write('turn');
CREATE TRIGGER seals_02_statement BEFORE INSERT OR TRUNCATE ON prompt.seals_02
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_statement();

CREATE OR REPLACE FUNCTION prompt._conversations_capture() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found_answerer uuid;
    found_content text;
    found_summary text;
    found_summary_round int;
    found_round int;
    captured boolean;
BEGIN
    -- What a Side read of its captured turn is the capture's own: written here, never by
    -- an ordinary UPDATE, and captured again only before the Side sealed a turn (or under
    -- a permitted history rewrite).
    IF TG_OP = 'UPDATE'
       AND (NEW.captured_round IS DISTINCT FROM OLD.captured_round OR NEW.captured_content IS DISTINCT FROM OLD.captured_content
            OR NEW.captured_summary IS DISTINCT FROM OLD.captured_summary
            OR NEW.captured_summary_round IS DISTINCT FROM OLD.captured_summary_round)
       AND NEW.parent_id IS NOT DISTINCT FROM OLD.parent_id AND NEW.captured_turn_id IS NOT DISTINCT FROM OLD.captured_turn_id
       AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._storage_guard(format('the capture of Side %s', OLD.id), 'UPDATE');
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.captured_turn_id IS NOT NULL AND NEW.parent_id IS NOT NULL
       AND (NEW.parent_id IS DISTINCT FROM OLD.parent_id OR NEW.captured_turn_id IS DISTINCT FROM OLD.captured_turn_id)
       AND EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = OLD.id AND t.sealed_at IS NOT NULL)
       AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._storage_guard(format('the capture of Side %s, which sealed a turn', OLD.id), 'UPDATE');
    END IF;
    -- Not a Side's capture, nothing of it changed, or the parent was deleted (its
    -- parent_id set NULL: the Side keeps its rows and no longer compiles).
    IF NEW.captured_turn_id IS NULL OR NEW.parent_id IS NULL
       OR (TG_OP = 'UPDATE' AND NEW.parent_id IS NOT DISTINCT FROM OLD.parent_id
           AND NEW.captured_turn_id IS NOT DISTINCT FROM OLD.captured_turn_id
           AND NEW.answerer_id IS NOT DISTINCT FROM OLD.answerer_id) THEN
        RETURN NEW;
    END IF;
    SELECT coalesce(t.answerer_id, p.answerer_id), t.content, t.summary, t.summary_round,
           (SELECT max(r.n) FROM prompt.rounds r
             WHERE r.conversation_id = t.conversation_id AND r.turn_id = t.id)
      INTO found_answerer, found_content, found_summary, found_summary_round, found_round
      FROM prompt.turns t JOIN prompt.conversations p ON p.id = t.conversation_id
     WHERE t.conversation_id = NEW.parent_id AND t.id = NEW.captured_turn_id;
    captured := FOUND;
    IF NOT captured THEN
        -- pg_dump's restore writes conversations before turns, answerer_id and the capture
        -- included: an administrator's (a restore), never anyone's to write by hand.
        IF TG_OP = 'UPDATE' OR NEW.answerer_id IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = format('side_invalid: the captured turn %s is not a turn of conversation %s',
                                 NEW.captured_turn_id, NEW.parent_id),
                HINT = 'A Side is captured from a turn of its parent_id.';
        END IF;
        IF NEW.captured_round IS NOT NULL OR NEW.captured_content IS NOT NULL OR NEW.captured_summary IS NOT NULL
           OR NEW.captured_summary_round IS NOT NULL THEN
            PERFORM prompt._storage_guard(format('the capture of Side %s', NEW.id), 'INSERT');
        END IF;
    ELSIF found_answerer IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('side_invalid: the captured turn %s has no answerer (nor has conversation %s)',
                             NEW.captured_turn_id, NEW.parent_id),
            HINT = 'A Side answers as its captured turn''s answerer: capture a turn that has one.';
    ELSIF NEW.answerer_id IS NOT NULL AND found_answerer <> NEW.answerer_id THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('side_invalid: a Side answers as its captured turn''s answerer %s, not %s',
                             found_answerer, NEW.answerer_id),
            HINT = 'Leave answerer_id NULL: it is filled in from the captured turn.';
    END IF;
    IF captured THEN
        NEW.answerer_id := found_answerer;
        -- What the Side reads of its captured turn, from now on.
        IF TG_OP = 'INSERT' OR NEW.parent_id IS DISTINCT FROM OLD.parent_id
           OR NEW.captured_turn_id IS DISTINCT FROM OLD.captured_turn_id THEN
            NEW.captured_content := found_content;
            NEW.captured_summary := found_summary;
            NEW.captured_summary_round := found_summary_round;
            NEW.captured_round := found_round;
        END IF;
    END IF;
    RETURN NEW;
END
$$;
DROP TRIGGER conversations_capture ON prompt.conversations;
CREATE TRIGGER conversations_capture BEFORE INSERT OR UPDATE OF parent_id, captured_turn_id, answerer_id,
    captured_round, captured_content, captured_summary, captured_summary_round
    ON prompt.conversations FOR EACH ROW EXECUTE FUNCTION prompt._conversations_capture();

-- What 0.4 sealed and sent, with the digests 0.5 checks (the guards step aside for it).
ALTER TABLE prompt.seals DISABLE TRIGGER seals_guard;
UPDATE prompt.seals SET frozen_digest = sha256(convert_to(frozen::text, 'UTF8'));
ALTER TABLE prompt.seals ENABLE TRIGGER seals_guard;
ALTER TABLE prompt.rounds DISABLE TRIGGER rounds_write;
UPDATE prompt.rounds SET sent_digest = prompt._round_digest(assistant, results, steers, aborted) WHERE sent_at IS NOT NULL;
ALTER TABLE prompt.rounds ENABLE TRIGGER rounds_write;

-- The model catalog -------------------------------------------------------------------

CREATE FUNCTION prompt._model_profile_of(model_name text, profile_name text) RETURNS TABLE (profile text)
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    -- A Bedrock cross-region inference profile (us.amazon.nova-pro-v1:0, global.anthropic.…)
    -- is its model's id behind a geography: matched as the id.
    SELECT (to_jsonb(p) - 'imported')::text FROM prompt.model_profiles p
     WHERE p.name = coalesce(profile_name, (SELECT q.name FROM prompt.model_profiles q
                                   WHERE q.name = ANY (ARRAY(
                                         WITH n (id) AS (VALUES (model_name), (regexp_replace(model_name, '^(us|eu|apac|global|us-gov|jp|au|ca)[.](?=[a-z]+[.])', '')))
                                         SELECT n.id FROM n
                                         UNION ALL
                                         SELECT array_to_string(a[1:i], '-')
                                           FROM n, LATERAL string_to_array(left(n.id, 512), '-') a,
                                                LATERAL generate_series(1, cardinality(a) - 1) i))
                                   ORDER BY length(q.name) DESC, q.name LIMIT 1))
     OFFSET 0;
END;
CREATE OR REPLACE FUNCTION prompt._model_profile(model_name text, profile_name text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT profile FROM prompt._model_profile_of($1, $2) $$;
CREATE FUNCTION prompt._model_list_entry(provider text, entry jsonb, at text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    said jsonb := '{}';
    name text;
    caps jsonb;
    modes text[];
    efforts text[];
    lifecycle text;
BEGIN
    IF jsonb_typeof(entry) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('model_list_invalid: the entry at %s is not an object', at),
            HINT = 'Pass what the provider''s model-list endpoint returned, or its data (Anthropic, OpenAI) or models (Gemini) array.';
    END IF;
    IF provider = 'anthropic' THEN
        -- Anthropic's ModelInfo (GET /v1/models).
        name := entry ->> 'id';
        IF jsonb_typeof(entry -> 'max_input_tokens') = 'number' THEN
            said := said || jsonb_build_object('hard_window', (entry ->> 'max_input_tokens')::int);
        END IF;
        IF jsonb_typeof(entry -> 'max_tokens') = 'number' THEN
            said := said || jsonb_build_object('max_output_tokens', (entry ->> 'max_tokens')::int);
        END IF;
        caps := entry -> 'capabilities';
        IF jsonb_typeof(caps -> 'thinking' -> 'types') = 'object' THEN
            modes := ARRAY(SELECT m FROM unnest(ARRAY['adaptive', 'enabled', 'disabled', 'between_tools']) AS m
                            WHERE (caps -> 'thinking' -> 'types' -> m ->> 'supported')::boolean);
            said := said || jsonb_build_object('thinking_modes', to_jsonb(modes),
                'thinking_default', CASE WHEN 'adaptive' = ANY (modes) THEN 'adaptive'
                                         WHEN 'enabled' = ANY (modes) THEN 'enabled' END);
        END IF;
        IF jsonb_typeof(caps -> 'effort') = 'object' THEN
            efforts := ARRAY(SELECT e FROM unnest(ARRAY['low', 'medium', 'high', 'xhigh', 'max']) AS e
                              WHERE (caps -> 'effort' ->> 'supported')::boolean
                                AND (caps -> 'effort' -> e ->> 'supported')::boolean);
            said := said || jsonb_build_object('efforts', to_jsonb(efforts));
        END IF;
        lifecycle := entry ->> 'lifecycle';
        said := said || jsonb_build_object(
            'deprecated_at', (entry ->> 'deprecated_at')::timestamptz::date,
            'retires_at', coalesce((entry ->> 'retires_at')::timestamptz::date,
                                   CASE WHEN lifecycle = 'retired'
                                        THEN coalesce((entry ->> 'deprecated_at')::timestamptz::date,
                                                      (entry ->> 'created_at')::timestamptz::date) END));
    ELSIF provider = 'openai' THEN
        -- OpenAI's Model (GET /v1/models): its id and the day it shuts down.
        name := entry ->> 'id';
        said := jsonb_build_object('retires_at', (entry ->> 'shutdown_date')::date);
    ELSIF provider = 'gemini' THEN
        -- Gemini's Model (models.list): only what generates content.
        name := regexp_replace(entry ->> 'name', '^models/', '');
        IF jsonb_typeof(entry -> 'supportedGenerationMethods') = 'array'
           AND NOT (entry -> 'supportedGenerationMethods') ? 'generateContent' THEN
            RETURN NULL;
        END IF;
        IF jsonb_typeof(entry -> 'inputTokenLimit') = 'number' THEN
            said := said || jsonb_build_object('hard_window', (entry ->> 'inputTokenLimit')::int);
        END IF;
        IF jsonb_typeof(entry -> 'outputTokenLimit') = 'number' THEN
            said := said || jsonb_build_object('max_output_tokens', (entry ->> 'outputTokenLimit')::int);
        END IF;
        IF jsonb_typeof(entry -> 'maxTemperature') = 'number' THEN
            said := said || jsonb_build_object('temperature_max', (entry ->> 'maxTemperature')::float8);
        END IF;
        IF jsonb_typeof(entry -> 'thinking') = 'boolean' THEN
            said := said || jsonb_build_object('include_thoughts', (entry ->> 'thinking')::boolean);
        END IF;
    ELSE
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('model_list_invalid: provider %L is not anthropic, openai or gemini', provider);
    END IF;
    IF name IS NULL OR name = '' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('model_list_invalid: the entry at %s names no model (%s)', at,
                             CASE provider WHEN 'gemini' THEN 'name' ELSE 'id' END);
    END IF;
    RETURN said || jsonb_build_object('name', name);
EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow OR invalid_text_representation
               OR numeric_value_out_of_range THEN
    RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
        MESSAGE = format('model_list_invalid: the entry at %s holds a value of the wrong kind (%s)', at, SQLERRM);
END
$$;
CREATE FUNCTION prompt._model_list_base(provider text, name text) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(
        (SELECT to_jsonb(p) - 'imported' - 'deprecated_at' - 'retires_at' - 'replacement'
           FROM prompt.model_profiles p WHERE p.name = (prompt._model_profile($2, NULL)::jsonb ->> 'name')),
        jsonb_build_object('thinking_modes', '[]'::jsonb, 'efforts', '[]'::jsonb, 'thinking_display', '[]'::jsonb,
                           'include_thoughts', false, 'thinking_with_forced_tool', true, 'sampling_together', true,
                           'max_breakpoints', 0, 'min_cache_tokens', 1024, 'cache_ttls', '[]'::jsonb,
                           'replays_thinking', false, 'system_messages', false, 'cache_diagnostics', false)
        || CASE $1
            WHEN 'anthropic' THEN '{"provider": "anthropic", "wires": ["anthropic"], "tokenizer": "cl100k_base",
                "cache_breakpoints": "cache_control", "max_breakpoints": 4, "cache_ttls": ["5m", "1h"],
                "cache_lookback": 20, "replays_thinking": true, "thinking_with_forced_tool": false,
                "sampling_together": false}'::jsonb
            WHEN 'openai' THEN '{"provider": "openai", "wires": ["responses", "chat"], "tokenizer": "o200k_base"}'::jsonb
            WHEN 'gemini' THEN '{"provider": "google", "wires": ["gemini"], "tokenizer": "o200k_base", "temperature_max": 2,
                "top_p_max": 1}'::jsonb
        END) -- NULL for a list of another provider's (import_models refuses it first)
$$;
CREATE FUNCTION prompt.import_models(provider text, models jsonb, overwrite boolean DEFAULT false)
RETURNS TABLE (name text, action text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    entries jsonb;
    path text;
    i int := 0;
    e jsonb;
    said jsonb;
    existing prompt.model_profiles;
    current jsonb;
    row_json jsonb;
    edited boolean;
BEGIN
    IF provider IS NULL OR provider NOT IN ('anthropic', 'openai', 'gemini') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('model_list_invalid: provider %L is not anthropic, openai or gemini', provider),
            HINT = 'Name the provider whose model-list endpoint returned the list.';
    END IF;
    IF jsonb_typeof(models) = 'array' THEN
        entries := models;
        path := '';
    ELSE
        entries := coalesce(models -> 'data', models -> 'models');
        path := CASE WHEN models ? 'data' THEN '/data' ELSE '/models' END;
    END IF;
    IF jsonb_typeof(entries) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'model_list_invalid: models holds no list of models (an array, or one under data or models)',
            HINT = 'Pass what GET /v1/models (Anthropic, OpenAI) or models.list (Gemini) returned.';
    END IF;
    FOR e IN SELECT x FROM jsonb_array_elements(entries) AS x LOOP
        said := prompt._model_list_entry(provider, e, path || '/' || i);
        i := i + 1;
        CONTINUE WHEN said IS NULL;
        name := said ->> 'name';
        SELECT * INTO existing FROM prompt.model_profiles p WHERE p.name = said ->> 'name';
        IF NOT FOUND THEN
            row_json := prompt._model_list_base(provider, name) || said
                        || jsonb_build_object('shipped', false, 'imported', said);
            -- The family's budget range follows the list's output limit.
            IF row_json ? 'budget_min' AND jsonb_typeof(row_json -> 'budget_min') = 'number' AND said ? 'max_output_tokens' THEN
                row_json := row_json || jsonb_build_object('budget_max', (said ->> 'max_output_tokens')::int - 1);
            END IF;
            INSERT INTO prompt.model_profiles SELECT (jsonb_populate_record(NULL::prompt.model_profiles, row_json)).*;
            action := 'inserted';
            RETURN NEXT;
            CONTINUE;
        END IF;
        current := to_jsonb(existing);
        -- Changed by a user: never imported and not shipped, or what the last import wrote
        -- no longer stands.
        edited := CASE WHEN existing.imported IS NULL THEN NOT existing.shipped
                       ELSE EXISTS (SELECT 1 FROM jsonb_each(existing.imported) AS w(k, v)
                                     WHERE current -> w.k IS DISTINCT FROM w.v) END;
        IF NOT EXISTS (SELECT 1 FROM jsonb_each(said) AS w(k, v) WHERE current -> w.k IS DISTINCT FROM w.v) THEN
            action := 'unchanged';
        ELSIF edited AND NOT overwrite THEN
            action := 'kept';
        ELSE
            row_json := current || said || jsonb_build_object('shipped', false, 'imported', said);
            UPDATE prompt.model_profiles p SET (provider, wires, advisory_window, hard_window, max_output_tokens, tokenizer,
                    thinking_modes, thinking_default, efforts, thinking_display, budget_min, budget_max, include_thoughts,
                    thinking_with_forced_tool, temperature_max, top_p_max, sampling_together, cache_breakpoints,
                    max_breakpoints, min_cache_tokens, cache_ttls, cache_lookback, replays_thinking, shipped,
                    deprecated_at, retires_at, replacement, system_messages, cache_diagnostics, imported) =
                   (SELECT r.provider, r.wires, r.advisory_window, r.hard_window, r.max_output_tokens, r.tokenizer,
                           r.thinking_modes, r.thinking_default, r.efforts, r.thinking_display, r.budget_min, r.budget_max,
                           r.include_thoughts, r.thinking_with_forced_tool, r.temperature_max, r.top_p_max,
                           r.sampling_together, r.cache_breakpoints, r.max_breakpoints, r.min_cache_tokens, r.cache_ttls,
                           r.cache_lookback, r.replays_thinking, r.shipped, r.deprecated_at, r.retires_at, r.replacement,
                           r.system_messages, r.cache_diagnostics, r.imported
                      FROM jsonb_populate_record(NULL::prompt.model_profiles, row_json) r)
             WHERE p.name = existing.name;
            action := 'updated';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;
CREATE VIEW prompt.model_status WITH (security_invoker = true) AS
SELECT m.name AS model, p.name AS profile, p.deprecated_at, p.retires_at, p.replacement,
       CASE WHEN p.retires_at <= current_date THEN 'retired'
            WHEN p.deprecated_at <= current_date OR p.retires_at IS NOT NULL THEN 'deprecated'
            WHEN p.name IS NULL THEN 'unprofiled'
            ELSE 'active' END AS lifecycle,
       p.retires_at IS NOT NULL AND p.retires_at > current_date AND p.retires_at <= current_date + 30 AS retiring_soon,
       p.retires_at - current_date AS days_left
  FROM prompt.models m
  LEFT JOIN LATERAL (SELECT q.* FROM prompt.model_profiles q
                      WHERE q.name = (prompt._model_profile(m.name, m.profile)::jsonb ->> 'name')) p ON true;

-- The shipped catalog of 0.5 replaces 0.4's; a model that named a shipped profile keeps
-- naming it (the rows go out and come back in one transaction).
CREATE TEMP TABLE pgprompt_named_profiles ON COMMIT DROP AS
    SELECT m.name, m.profile FROM prompt.models m WHERE m.profile IS NOT NULL;
ALTER TABLE prompt.models DISABLE TRIGGER models_options;
DELETE FROM prompt.model_profiles WHERE shipped;
-- The model profiles pgprompt ships (README, "Model profiles"): the current models of the
-- three providers and the rules each enforces, as their SDKs (anthropic 2.16, openai
-- 3.57, google-genai 3.6.1) and published references give them. The update scripts run
-- this file as it is (a user's row of a shipped name is left alone). Shipped rows say
-- shipped = true: an update replaces them, pg_dump leaves them to the extension's script
-- and keeps the rows users add. To change a shipped profile, add a row of your own and
-- name it in models.profile.
--
-- Windows and output limits are the providers' published figures; Claude's tokenizer is
-- not public (cl100k_base is the closest count; models.token_margin_auto learns the rest).

INSERT INTO prompt.model_profiles (name, provider, wires, advisory_window, hard_window, max_output_tokens, tokenizer,
    thinking_modes, thinking_default, efforts, thinking_display, budget_min, budget_max, include_thoughts,
    thinking_with_forced_tool, temperature_max, top_p_max, sampling_together,
    cache_breakpoints, max_breakpoints, min_cache_tokens, cache_ttls, cache_lookback, replays_thinking, shipped)
VALUES
-- Anthropic, the 5 family, Opus 4.8 and 4.7, Mythos Preview: adaptive thinking only (a
-- budget is refused with a 400), effort up to max, no sampling options, no thinking beside
-- a forced tool.
    ('claude-opus-5-5',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-sonnet-5-5', 'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
    ('claude-haiku-5-5',  'anthropic', '{anthropic}', NULL, 400000, 64000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-fable-5-2',  'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
    ('claude-mythos-5-2', 'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-fable-5-1',  'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
    ('claude-mythos-5-1', 'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-opus-5',     'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-sonnet-5',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
    ('claude-fable-5',    'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
    ('claude-mythos-5',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-opus-4-8',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-opus-4-7',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-mythos-preview', 'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
-- Opus 4.6, Sonnet 4.6: adaptive or a budget (enabled is deprecated on Opus 4.6), effort,
-- temperature 0-1 or top_p, not both.
    ('claude-opus-4-6',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,enabled,disabled}', 'adaptive', '{low,medium,high,max}', '{summarized,omitted}', 1024, 127999, false,
     false, 1, 1, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-sonnet-4-6', 'anthropic', '{anthropic}', NULL, 1000000, 64000, 'cl100k_base',
     '{adaptive,enabled,disabled}', 'adaptive', '{low,medium,high,max}', '{summarized,omitted}', 1024, 63999, false,
     false, 1, 1, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
-- The 4.5 family: a thinking budget, effort on Opus 4.5 only, temperature 0-1 or top_p.
    ('claude-opus-4-5',   'anthropic', '{anthropic}', NULL, 200000, 64000, 'cl100k_base',
     '{enabled,disabled}', 'enabled', '{low,medium,high}', '{}', 1024, 63999, false,
     false, 1, 1, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-sonnet-4-5', 'anthropic', '{anthropic}', NULL, 200000, 64000, 'cl100k_base',
     '{enabled,disabled}', 'enabled', '{}', '{}', 1024, 63999, false,
     false, 1, 1, false, 'cache_control', 4, 1024, '{5m,1h}', 20, true, true),
    ('claude-haiku-4-5',  'anthropic', '{anthropic}', NULL, 200000, 64000, 'cl100k_base',
     '{enabled,disabled}', 'enabled', '{}', '{}', 1024, 63999, false,
     false, 1, 1, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
-- OpenAI, gpt-6 and gpt-5.6 (the first with prompt_cache_options): reasoning effort none
-- to max (thinking mode disabled is effort none), explicit cache breakpoints (up to four
-- a request, TTL 30m or 12h; Chat 30m).
    ('gpt-6-astra',  'openai', '{responses,chat}', NULL, 2000000, 256000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh,max}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
    ('gpt-6-sol',    'openai', '{responses,chat}', NULL, 1050000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh,max}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
    ('gpt-6-luna',   'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
    ('gpt-5.6-sol',  'openai', '{responses,chat}', NULL, 1050000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh,max}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
    ('gpt-5.6-terra', 'openai', '{responses,chat}', NULL, 1050000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh,max}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
    ('gpt-5.6-luna', 'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
-- gpt-5.5 to gpt-5.2: reasoning none to xhigh, implicit caching by prompt_cache_key.
    ('gpt-5.5',      'openai', '{responses,chat}', NULL, 1050000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.5-pro',  'openai', '{responses}', NULL, 1050000, 128000, 'o200k_base',
     '{}', NULL, '{medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.4',      'openai', '{responses,chat}', NULL, 1050000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.4-mini', 'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.4-nano', 'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.2',      'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.2-pro',  'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{}', NULL, '{medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
-- gpt-5.1: none to high; gpt-5: minimal to high.
    ('gpt-5.1',      'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5',        'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{}', NULL, '{minimal,low,medium,high}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
-- Not reasoning models: temperature 0-2 and top_p, together.
    ('gpt-4.1',      'openai', '{responses,chat}', NULL, 1047576, 32768, 'o200k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true),
    ('gpt-4o',       'openai', '{responses,chat}', NULL, 128000, 16384, 'o200k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true),
-- Google, Gemini 3.5 on: thinking levels (a budget is refused), thoughts on request,
-- temperature 0-2 and top_p, implicit caching by prefix.
    ('gemini-4-argon',   'google', '{gemini}', NULL, 2097152, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high,xhigh}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
    ('gemini-3.8-flash', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
    ('gemini-3.7-flash', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
    ('gemini-3.6-flash', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
    ('gemini-3.5-flash', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
    ('gemini-3.5-flash-lite', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
-- Gemini 3 and 3.1 previews: levels, or a budget (still accepted before 3.5).
    ('gemini-3.1-pro-preview', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive,enabled}', 'adaptive', '{low,medium,high}', '{}', 128, 32768, true,
     true, 2, 1, true, NULL, 0, 2048, '{}', NULL, true, true),
    ('gemini-3-pro-preview',   'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive,enabled}', 'adaptive', '{low,high}', '{}', 128, 32768, true,
     true, 2, 1, true, NULL, 0, 2048, '{}', NULL, true, true),
    ('gemini-3-flash-preview', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive,enabled,disabled}', 'adaptive', '{minimal,low,medium,high}', '{}', 0, 24576, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
-- Gemini 2.5: a budget (0 turns it off on Flash), thoughts on request.
    ('gemini-2.5-pro',   'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive,enabled}', 'adaptive', '{}', '{}', 128, 32768, true,
     true, 2, 1, true, NULL, 0, 2048, '{}', NULL, false, true),
    ('gemini-2.5-flash', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive,enabled,disabled}', 'adaptive', '{}', '{}', 0, 24576, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true)
ON CONFLICT (name) DO NOTHING;

-- Ids the SDKs list that follow a family above: each a row of its own, its family's rules
-- with what differs (name, wires; the SDK's model lists say which wires: ChatModel for
-- chat, ResponsesModel for the Responses-only ids). Windows the SDKs do not give are the
-- family's; prompt.import_models corrects them from the provider's own list.
INSERT INTO prompt.model_profiles
SELECT (pg_catalog.jsonb_populate_record(p, v.changes)).*
  FROM prompt.model_profiles p
  JOIN (VALUES
    -- OpenAI, gpt-6: new sizes of the shipped families.
    ('gpt-6-astra',   '{"name": "gpt-6.2-astra"}'::jsonb),
    ('gpt-6-sol',     '{"name": "gpt-6.1-sol"}'),
    ('gpt-6-sol',     '{"name": "gpt-6.2-sol"}'),
    ('gpt-5.6-terra', '{"name": "gpt-6.1-terra"}'),
    -- Responses-only (ResponsesModel, not ChatModel).
    ('gpt-6-astra',   '{"name": "gpt-6.2-astra-law", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-6-cyber", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-6-rosalind", "wires": ["responses"]}'),
    ('gpt-5.6-sol',   '{"name": "gpt-5.6-cyber", "wires": ["responses"]}'),
    ('gpt-5',         '{"name": "gpt-5-pro", "wires": ["responses"], "efforts": ["high"]}'),
    ('gpt-5',         '{"name": "gpt-5-codex", "wires": ["responses"], "efforts": ["low", "medium", "high"]}'),
    ('gpt-5.1',       '{"name": "gpt-5.1-codex-max", "wires": ["responses"], "efforts": ["none", "low", "medium", "high", "xhigh"]}'),
    ('gpt-5',         '{"name": "o3-pro", "wires": ["responses"], "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    ('gpt-5',         '{"name": "o3-deep-research", "wires": ["responses"], "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["medium"]}'),
    ('gpt-5',         '{"name": "o4-mini-deep-research", "wires": ["responses"], "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["medium"]}'),
    ('gpt-5',         '{"name": "o1-pro", "wires": ["responses"], "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    -- Reasoning models of the chat list that are gone or going (lifecycle below).
    ('gpt-5.1',       '{"name": "gpt-5.1-codex"}'),
    ('gpt-5',         '{"name": "o3", "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    ('gpt-5',         '{"name": "o3-mini", "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    ('gpt-5',         '{"name": "o4-mini", "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    ('gpt-5',         '{"name": "o1", "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    ('gpt-5',         '{"name": "o1-mini", "hard_window": 128000, "max_output_tokens": 65536, "efforts": []}'),
    ('gpt-5',         '{"name": "o1-preview", "hard_window": 128000, "max_output_tokens": 32768, "efforts": []}'),
    -- The chat-latest aliases: no reasoning options.
    ('gpt-4o',        '{"name": "gpt-5.3-chat-latest", "hard_window": 128000, "max_output_tokens": 16384}'),
    ('gpt-4o',        '{"name": "gpt-5.2-chat-latest", "hard_window": 128000, "max_output_tokens": 16384}'),
    ('gpt-4o',        '{"name": "gpt-5.1-chat-latest", "hard_window": 128000, "max_output_tokens": 16384}'),
    ('gpt-4o',        '{"name": "gpt-5-chat-latest", "hard_window": 128000, "max_output_tokens": 16384}'),
    ('gpt-4o',        '{"name": "chatgpt-4o-latest"}'),
    ('gpt-4o',        '{"name": "codex-mini-latest", "hard_window": 200000, "max_output_tokens": 100000}'),
    -- Ids of the gpt-4.1 and gpt-4o families that leave before their family.
    ('gpt-4.1',       '{"name": "gpt-4.1-nano"}'),
    ('gpt-4o',        '{"name": "gpt-4o-2024-05-13"}'),
    ('gpt-4o',        '{"name": "gpt-4o-audio-preview"}'),
    ('gpt-4o',        '{"name": "gpt-4o-audio-preview-2024-10-01"}'),
    ('gpt-4o',        '{"name": "gpt-4o-mini-audio-preview"}'),
    ('gpt-4o',        '{"name": "gpt-4o-search-preview"}'),
    ('gpt-4o',        '{"name": "gpt-4o-mini-search-preview"}'),
    ('gpt-4o',        '{"name": "gpt-audio-mini"}'),
    -- gpt-4 and gpt-3.5, all retired or retiring.
    ('gpt-4o',        '{"name": "gpt-4", "hard_window": 8192, "max_output_tokens": 8192, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-0314", "hard_window": 8192, "max_output_tokens": 8192, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-32k", "hard_window": 32768, "max_output_tokens": 8192, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-turbo", "hard_window": 128000, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-turbo-preview", "hard_window": 128000, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-0125-preview", "hard_window": 128000, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-vision-preview", "hard_window": 128000, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-3.5-turbo", "hard_window": 16385, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-3.5-turbo-16k", "hard_window": 16385, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-3.5-turbo-0301", "hard_window": 4096, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-3.5-turbo-0613", "hard_window": 4096, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-3.5-turbo-1106", "hard_window": 16385, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    -- Google: Gemini 4 beside argon, 3.1 Flash-Lite, and the speech models a flash prefix
    -- would otherwise take (they take no thinking).
    ('gemini-4-argon',   '{"name": "gemini-4-carbon"}'),
    ('gemini-4-argon',   '{"name": "gemini-4-hydrogen"}'),
    ('gemini-4-argon',   '{"name": "gemini-4-neon"}'),
    ('gemini-3.5-flash-lite', '{"name": "gemini-3.1-flash-lite"}'),
    ('gemini-2.5-flash', '{"name": "gemini-2.5-flash-lite"}'),
    ('gemini-2.5-flash', '{"name": "gemini-2.5-flash-image", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-3.8-flash-tts", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-3.8-flash-lite-tts", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}')
  ) AS v(base, changes) ON p.name = v.base
ON CONFLICT (name) DO NOTHING;

-- Lifecycle: the day a provider stops serving a model, from the SDKs' own tables
-- (anthropic 2.16's _data/deprecated_models.py; the deprecation list under openai 3.57's
-- ChatModel) and Google's deprecations page. The replacement is the one the provider names
-- where it names one (Google's); otherwise pgprompt's suggestion, the family's current
-- model. deprecated_at is left to prompt.import_models (Anthropic's list gives it). A
-- compile for a model past retires_at is refused (model_retired); one whose retirement
-- is announced, or that is deprecated, compiles with a NOTICE.
UPDATE prompt.model_profiles p
   SET retires_at = v.retires_at::date, replacement = v.replacement
  FROM (VALUES
    ('claude-mythos-preview', '2026-06-30', 'claude-mythos-5'),
    ('claude-opus-4-5', '2027-01-22', 'claude-opus-4-8'),
    ('gpt-5', '2026-12-11', 'gpt-5.5'),
    ('o3', '2026-12-11', 'gpt-5.5'),
    ('gpt-5.1', '2027-04-01', 'gpt-5.5'),
    ('gpt-5.4-nano', '2027-04-01', 'gpt-5.6-luna'),
    ('gpt-5.1-codex', '2026-07-23', 'gpt-5.1-codex-max'),
    ('gpt-5.3-chat-latest', '2026-08-10', 'gpt-5.5'),
    ('gpt-5.2-chat-latest', '2026-08-10', 'gpt-5.5'),
    ('gpt-5.1-chat-latest', '2026-07-23', 'gpt-5.5'),
    ('gpt-5-chat-latest', '2026-07-23', 'gpt-5.5'),
    ('gpt-4.1', '2027-01-14', 'gpt-5.4'),
    ('gpt-4.1-nano', '2026-10-23', 'gpt-5.4-nano'),
    ('gpt-4o', '2027-01-14', 'gpt-5.4-mini'),
    ('gpt-4o-2024-05-13', '2026-10-23', 'gpt-5.4-mini'),
    ('gpt-4o-audio-preview', '2026-05-07', 'gpt-audio-mini'),
    ('gpt-4o-audio-preview-2024-10-01', '2025-10-10', 'gpt-audio-mini'),
    ('gpt-4o-mini-audio-preview', '2026-05-07', 'gpt-audio-mini'),
    ('gpt-4o-search-preview', '2026-07-23', 'gpt-5.4-mini'),
    ('gpt-4o-mini-search-preview', '2026-07-23', 'gpt-5.4-mini'),
    ('gpt-audio-mini', '2027-01-20', NULL),
    ('chatgpt-4o-latest', '2026-02-17', 'gpt-5.4-mini'),
    ('codex-mini-latest', '2026-02-12', 'gpt-5.1-codex-max'),
    ('o4-mini', '2026-10-23', 'gpt-5.4-mini'),
    ('o3-mini', '2026-10-23', 'gpt-5.4-mini'),
    ('o1', '2026-10-23', 'gpt-5.5'),
    ('o1-mini', '2025-10-27', 'gpt-5.4-mini'),
    ('o1-preview', '2025-07-28', 'gpt-5.5'),
    ('gpt-4', '2026-10-23', 'gpt-5.4'),
    ('gpt-4-turbo', '2026-10-23', 'gpt-5.4'),
    ('gpt-4-0314', '2026-03-26', 'gpt-5.4'),
    ('gpt-4-turbo-preview', '2026-03-26', 'gpt-5.4'),
    ('gpt-4-0125-preview', '2026-03-26', 'gpt-5.4'),
    ('gpt-4-vision-preview', '2024-12-06', 'gpt-5.4'),
    ('gpt-4-32k', '2025-06-06', 'gpt-5.4'),
    ('gpt-3.5-turbo', '2026-10-23', 'gpt-5.4-nano'),
    ('gpt-3.5-turbo-1106', '2026-09-28', 'gpt-5.4-nano'),
    ('gpt-3.5-turbo-16k', '2024-09-13', 'gpt-5.4-nano'),
    ('gpt-3.5-turbo-0301', '2024-09-13', 'gpt-5.4-nano'),
    ('gpt-3.5-turbo-0613', '2024-09-13', 'gpt-5.4-nano'),
    ('gemini-3-pro-preview', '2026-03-09', 'gemini-3.1-pro-preview'),
    ('gemini-2.5-pro', '2026-12-01', 'gemini-3.8-flash'),
    ('gemini-2.5-flash', '2026-12-01', 'gemini-3.5-flash-lite'),
    ('gemini-2.5-flash-image', '2026-10-02', 'gemini-3.1-flash-image'),
    ('gemini-3.1-flash-lite', '2027-05-07', NULL)
  ) AS v(name, retires_at, replacement)
 WHERE p.name = v.name AND p.shipped;

-- Claude's 5 family takes a system message in place, after the leading run
-- ({"role": "system"} in messages), and thinking between tools (thinking off, the short
-- notes between tool calls returned as thinking blocks): anthropic 2.16's MessageParam and
-- ThinkingConfigParam. prompt.import_models reads what Anthropic's own list says of a model.
UPDATE prompt.model_profiles
   SET system_messages = true, thinking_modes = thinking_modes || '{between_tools}', cache_diagnostics = true
 WHERE shipped AND provider = 'anthropic' AND name ~ '^claude-(opus|sonnet|haiku|fable|mythos)-5';

-- Cache diagnostics against a previous response: Anthropic's diagnostics (the 5 family,
-- above) and OpenAI's prompt_cache_options.comparison_response_id (the Responses models
-- with explicit breakpoints, gpt-5.6 and later).
UPDATE prompt.model_profiles SET cache_diagnostics = true
 WHERE shipped AND provider = 'openai' AND cache_breakpoints = 'prompt_cache_breakpoint' AND 'responses' = ANY (wires);

-- Amazon Bedrock's Converse API (wire converse; botocore's bedrock-runtime service model).
-- Anthropic's models under their Bedrock ids (anthropic.<id>: the version suffix -v1:0,
-- and a cross-region inference profile's geography, us. or global., match as the id),
-- with their family's rules and lifecycle; Converse returns no cache diagnostics.
INSERT INTO prompt.model_profiles
SELECT (pg_catalog.jsonb_populate_record(p, pg_catalog.jsonb_build_object(
            'name', 'anthropic.' || p.name, 'wires', '["converse"]'::jsonb, 'cache_diagnostics', false))).*
  FROM prompt.model_profiles p
 WHERE p.shipped AND p.provider = 'anthropic'
ON CONFLICT (name) DO NOTHING;

-- Amazon Nova and Meta Llama, as Bedrock publishes them: Nova caches at up to four
-- cachePoints of at least 1,000 tokens each, for 5 minutes; Llama caches nothing (no
-- cachePoint is sent). Temperature and top_p from 0 to 1, together. No thinking options.
INSERT INTO prompt.model_profiles (name, provider, wires, advisory_window, hard_window, max_output_tokens, tokenizer,
    thinking_modes, thinking_default, efforts, thinking_display, budget_min, budget_max, include_thoughts,
    thinking_with_forced_tool, temperature_max, top_p_max, sampling_together,
    cache_breakpoints, max_breakpoints, min_cache_tokens, cache_ttls, cache_lookback, replays_thinking, shipped)
VALUES
    ('amazon.nova-premier', 'amazon', '{converse}', NULL, 1000000, 32000, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, 'cache_control', 4, 1000, '{5m}', 20, false, true),
    ('amazon.nova-pro', 'amazon', '{converse}', NULL, 300000, 10000, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, 'cache_control', 4, 1000, '{5m}', 20, false, true),
    ('amazon.nova-lite', 'amazon', '{converse}', NULL, 300000, 10000, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, 'cache_control', 4, 1000, '{5m}', 20, false, true),
    ('amazon.nova-micro', 'amazon', '{converse}', NULL, 128000, 10000, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, 'cache_control', 4, 1000, '{5m}', 20, false, true),
    ('meta.llama4-maverick-17b-instruct', 'meta', '{converse}', NULL, 1000000, 8192, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, NULL, 0, 0, '{}', NULL, false, true),
    ('meta.llama4-scout-17b-instruct', 'meta', '{converse}', NULL, 3500000, 8192, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, NULL, 0, 0, '{}', NULL, false, true),
    ('meta.llama3-3-70b-instruct', 'meta', '{converse}', NULL, 128000, 8192, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, NULL, 0, 0, '{}', NULL, false, true)
ON CONFLICT (name) DO NOTHING;
UPDATE prompt.models m SET profile = n.profile FROM pgprompt_named_profiles n
 WHERE m.name = n.name AND m.profile IS DISTINCT FROM n.profile
   AND EXISTS (SELECT 1 FROM prompt.model_profiles p WHERE p.name = n.profile);
ALTER TABLE prompt.models ENABLE TRIGGER models_options;
DROP TABLE pgprompt_named_profiles;

-- Tenancy -----------------------------------------------------------------------------

UPDATE prompt.tenants t SET role_oid = r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = t.role_name;
CREATE FUNCTION prompt._grants_decide(tbl regclass) RETURNS bool
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT NOT EXISTS (SELECT 1 FROM pg_catalog.pg_policy p
                        WHERE p.polrelid = $1 AND p.polpermissive AND p.polname <> 'pgprompt_rows')
$$;
CREATE FUNCTION prompt._role_row_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.role_oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = NEW.role_name);
    RETURN NEW;
END
$$;
CREATE TRIGGER tenants_role BEFORE INSERT OR UPDATE ON prompt.tenants
    FOR EACH ROW EXECUTE FUNCTION prompt._role_row_write();
CREATE TRIGGER administrators_role BEFORE INSERT OR UPDATE ON prompt.administrators
    FOR EACH ROW EXECUTE FUNCTION prompt._role_row_write();
DROP POLICY pgprompt_own_rows ON prompt.tenants;
CREATE POLICY pgprompt_own_rows ON prompt.tenants FOR SELECT USING (role_oid = prompt._role());
ALTER TABLE prompt.administrators ENABLE ROW LEVEL SECURITY;
CREATE POLICY pgprompt_own_rows ON prompt.administrators FOR SELECT USING (role_oid = prompt._role());
GRANT SELECT ON prompt.administrators TO PUBLIC;
CREATE FUNCTION prompt._tenant_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._tenant_delete_guard(TG_TABLE_NAME, OLD.id);
    RETURN OLD;
END
$$;
CREATE TRIGGER users_tenant_delete BEFORE DELETE ON prompt.users
    FOR EACH ROW EXECUTE FUNCTION prompt._tenant_delete();
CREATE TRIGGER conversations_tenant_delete BEFORE DELETE ON prompt.conversations
    FOR EACH ROW EXECUTE FUNCTION prompt._tenant_delete();

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
DO $rls$
DECLARE
    free constant text := '(SELECT prompt._unconfined())';
    mine constant text := '((SELECT prompt._my_workspaces())::uuid[])';
    members text;
    conversations text;
    -- table => (what a tenant reads, what it may write)
    rules text[][];
    r text[];
BEGIN
    members := format('(SELECT m.user_id FROM prompt.workspace_members m WHERE m.workspace_id = ANY %s)', mine);
    conversations := format('(SELECT c.id FROM prompt.conversations c WHERE c.workspace_id = ANY %s)', mine);
    rules := ARRAY[
        ARRAY['workspace_members', format('workspace_id = ANY %s', mine), 'false'],
        ARRAY['workspaces', format('id = ANY %s', mine), format('id = ANY %s', mine)],
        ARRAY['users', format('id IN %s', members), 'prompt._tenant_writes_user(id)'],
        ARRAY['models', 'true', 'false'],
        ARRAY['model_profiles', 'true', 'false'],
        ARRAY['documents',
              format('workspace_id = ANY %s OR user_id IN %s', mine, members),
              format('workspace_id = ANY %s OR prompt._tenant_writes_user(user_id)', mine)],
        ARRAY['memories',
              format('CASE scope WHEN ''workspace'' THEN workspace_id = ANY %1$s WHEN ''conversation'' THEN conversation_id IN %2$s '
                     'WHEN ''speaker'' THEN user_id IN %3$s AND speaker_id IN %3$s ELSE user_id IN %3$s END',
                     mine, conversations, members),
              format('CASE scope WHEN ''workspace'' THEN workspace_id = ANY %1$s WHEN ''conversation'' THEN conversation_id IN %2$s '
                     'WHEN ''speaker'' THEN user_id IN %3$s AND speaker_id IN %3$s '
                     'AND (prompt._tenant_writes_user(user_id) OR prompt._tenant_writes_user(speaker_id)) '
                     'ELSE prompt._tenant_writes_user(user_id) END',
                     mine, conversations, members)],
        ARRAY['skills',
              format('CASE source WHEN ''workspace'' THEN workspace_id = ANY %1$s WHEN ''speaker'' THEN user_id IN %2$s AND speaker_id IN %2$s '
                     'WHEN ''runner'' THEN true WHEN ''application'' THEN true ELSE user_id IN %2$s END',
                     mine, members),
              format('CASE source WHEN ''workspace'' THEN workspace_id = ANY %1$s WHEN ''speaker'' THEN user_id IN %2$s AND speaker_id IN %2$s '
                     'AND (prompt._tenant_writes_user(user_id) OR prompt._tenant_writes_user(speaker_id)) '
                     'WHEN ''runner'' THEN false WHEN ''application'' THEN false ELSE prompt._tenant_writes_user(user_id) END',
                     mine, members)],
        ARRAY['conversations', format('workspace_id = ANY %s', mine), format('workspace_id = ANY %s', mine)],
        ARRAY['turns', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['rounds', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['seals', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['seal_nodes', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['seals_02', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['responses', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['counts', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)]
    ];
    FOREACH r SLICE 1 IN ARRAY rules LOOP
        EXECUTE format('ALTER TABLE prompt.%I ENABLE ROW LEVEL SECURITY', r[1]);
        EXECUTE format('CREATE POLICY pgprompt_rows ON prompt.%1$I USING ((SELECT prompt._grants_decide(%2$L)))'
                       ' WITH CHECK ((SELECT prompt._grants_decide(%2$L)))', r[1], 'prompt.' || r[1]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_reads ON prompt.%I AS RESTRICTIVE FOR SELECT USING (%s OR %s)', r[1], free, r[2]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_inserts ON prompt.%I AS RESTRICTIVE FOR INSERT WITH CHECK (%s OR %s)', r[1], free, r[3]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_updates ON prompt.%1$I AS RESTRICTIVE FOR UPDATE USING (%2$s OR %3$s) WITH CHECK (%2$s OR %3$s)',
                       r[1], free, r[3]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_deletes ON prompt.%I AS RESTRICTIVE FOR DELETE USING (%s OR %s)', r[1], free, r[3]);
    END LOOP;
END
$rls$;

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

DO $owner$
BEGIN
    IF pg_catalog.quote_ident(current_user) <> '@extowner@' THEN
        GRANT USAGE ON SCHEMA prompt TO @extowner@ WITH GRANT OPTION;
        GRANT ALL ON ALL TABLES IN SCHEMA prompt TO @extowner@ WITH GRANT OPTION;
    END IF;
END
$owner$;

-- Comments ----------------------------------------------------------------------------

COMMENT ON FUNCTION prompt._model_profile_of(text, text) IS
    'Internal: the profile a model follows, as a row of its JSON (none: no profile); inlined where a query calls it from FROM.';
COMMENT ON TABLE prompt.models IS
    'A model a request is compiled for: its wire (anthropic, chat, responses, gemini, converse), tokenizer, windows, image support, token margin, max_output_tokens, cache TTL and request options. name is the provider''s model id.';
COMMENT ON FUNCTION prompt.record_response(uuid, uuid, jsonb) IS
    'Records a provider''s response body (Anthropic Message, OpenAI ChatCompletion or Response, Gemini GenerateContentResponse, Bedrock ConverseResponse) where the next compile reads it: a direct reply''s text as the turn''s content, a run''s step as its next round; stores the usage beside the estimate of the request it answered (as its compile stored it). Idempotent per response id (a response without one, per body).';
COMMENT ON FUNCTION prompt._storage_guard(text, text) IS
    'Internal: refuses a write of what was sent (seal storage, a turn''s seal columns, a round''s sent mark, a Side''s capture) unless pgprompt''s own writer runs it, an administrator inserts it (a restore) or a permitted rewrite truncates.';
COMMENT ON FUNCTION prompt._parent_gone(uuid, uuid) IS
    'Internal: whether a conversation (or a turn of it) no longer exists, looked up as the tables'' owner: its rows go with it.';
COMMENT ON FUNCTION prompt._truncate_guard(text) IS
    'Internal: refuses TRUNCATE of turns or rounds that hold a sealed turn or a sent round, unless a permitted history rewrite is on.';
COMMENT ON FUNCTION prompt._lock_conversation(uuid) IS
    'Internal: the conversation''s row lock, one writer of its next seq at a time (taken only when the caller can see the conversation).';
COMMENT ON FUNCTION prompt._round_digest(jsonb, jsonb, jsonb, boolean) IS
    'Internal: the SHA-256 of what a request carried of a round (its assistant, results, steers and abort), kept in rounds.sent_digest.';
COMMENT ON FUNCTION prompt._history_truncate() IS
    'Internal trigger: TRUNCATE of turns or rounds holding what was sent needs a permitted history rewrite.';
COMMENT ON FUNCTION prompt._seal_storage_statement() IS
    'Internal trigger: INSERT into seal storage is pgprompt''s (or an administrator''s restore); TRUNCATE needs a permitted history rewrite.';
COMMENT ON FUNCTION prompt._grants_decide(regclass) IS
    'Internal (row-level security): whether a table has no permissive policy of a user''s own; the extension''s permissive policy yields to one.';
COMMENT ON FUNCTION prompt._role_row_write() IS
    'Internal trigger: stamps role_oid from role_name on a tenant''s or administrator''s row (NULL for a role that does not exist: it matches nobody).';
COMMENT ON FUNCTION prompt._tenant_delete() IS
    'Internal trigger: refuses a confined role''s delete whose foreign-key action would change a row another tenant reads.';
COMMENT ON FUNCTION prompt._tenant_delete_guard(text, uuid) IS
    'Internal: the check of _tenant_delete (a shared agent stewarded by the user, a conversation of another workspace captured from the conversation).';
COMMENT ON FUNCTION prompt._unconfined() IS
    'Internal (tenancy policies): whether the current role is not confined: no tenant is listed, or it administers the extension (its owner, prompt.administrators, superuser, BYPASSRLS).';
COMMENT ON FUNCTION prompt._my_workspaces() IS
    'Internal (tenancy policies): the workspaces the current role is a tenant of, by its OID; empty for a role listed nowhere.';
COMMENT ON FUNCTION prompt._role() IS
    'Internal: the current role''s OID.';
COMMENT ON FUNCTION prompt._wire_known(text) IS
    'Internal (the CHECK of models.wire and responses.shape): whether the text names one of the library''s wires.';
COMMENT ON FUNCTION prompt._wires_known(text[]) IS
    'Internal (the CHECK of model_profiles.wires): whether every entry names one of the library''s wires (a NULL entry does not).';
COMMENT ON FUNCTION prompt._provider_known(text) IS
    'Internal (the CHECK of model_profiles.provider): whether the text names one of the library''s providers.';
COMMENT ON TABLE prompt.administrators IS
    'Tenancy''s administrators: roles that, once tenants are listed, read and write every tenant''s rows (their grants decide), beside the extension''s owner and roles with BYPASSRLS. Managed by the extension''s owner; kept by pg_dump.';
COMMENT ON COLUMN prompt.tenants.role_oid IS
    'The role''s OID, stamped from role_name whenever the row is written (a restore included): tenancy follows the role, not its name. NULL: no role of that name exists, and the row confines nobody.';
COMMENT ON COLUMN prompt.administrators.role_oid IS
    'The role''s OID, stamped from role_name whenever the row is written.';
COMMENT ON COLUMN prompt.rounds.sent_digest IS
    'The SHA-256 of what the first request that carried the round sent (prompt._round_digest); every later read checks it.';
COMMENT ON COLUMN prompt.rounds.sent_estimate IS
    'The estimate of the first request that carried the round, written with sent_at: what record_response keeps beside the usage of the response to it.';
COMMENT ON COLUMN prompt.seals.frozen_digest IS
    'The SHA-256 of frozen''s jsonb text, written with the seal; every read of the seal checks it.';
COMMENT ON COLUMN prompt.seals.pieces_digest IS
    'The SHA-256 of the body''s pieces as stored (its head''s, tail''s and elements'' node digests in order, then its patch list), written with the seal: with each node checked against its own digest it covers the body, so cache_report and explain_turn check every request they replay at the cost of what it adds. NULL on a seal written before 0.5 (its body is hashed whole).';
COMMENT ON TABLE prompt.tenants IS
    'Tenancy: once any row exists, every role is confined to the workspaces it is listed for here (it reads their rows and the shared ones, and writes only rows no other tenant''s compile reads); a role listed nowhere reads and writes no tenant''s rows unless it administers the extension. Managed by the extension''s owner; kept by pg_dump, and the policies come back with the extension.';
COMMENT ON FUNCTION prompt._seal_storage_write() IS
    'Internal trigger: seal storage (seals, seal_nodes, seals_02) changes only through pgprompt''s own writer, or goes with the conversation or turn it belongs to.';
COMMENT ON FUNCTION prompt.import_models(text, jsonb, boolean) IS
    'Inserts or updates model profiles from what a provider''s model list returned (anthropic: GET /v1/models; openai: GET /v1/models; gemini: models.list), or its data/models array: windows, output limit, thinking modes and efforts, lifecycle. Returns (name, action): inserted, updated, unchanged, or kept (a row a user changed; overwrite => true replaces it).';
COMMENT ON FUNCTION prompt._model_list_entry(text, jsonb, text) IS
    'Internal: the profile columns one entry of a provider''s model list gives (NULL for a model that generates no content).';
COMMENT ON FUNCTION prompt._model_list_base(text, text) IS
    'Internal: the rules a model imported for the first time starts from: its family''s profile, or the provider''s defaults.';
COMMENT ON VIEW prompt.model_status IS
    'Every model row and where its profile puts it in its provider''s lifecycle (active, deprecated, retired, unprofiled), its retirement day, replacement, days left, and retiring_soon (within 30 days).';
COMMENT ON COLUMN prompt.model_profiles.retires_at IS
    'The day the provider stops serving the model: from then on a fresh compile for it is refused (model_retired), naming the replacement.';
COMMENT ON COLUMN prompt.model_profiles.deprecated_at IS
    'The day the provider deprecated the model: from then on (or once retires_at is announced) a compile for it raises a NOTICE.';
COMMENT ON COLUMN prompt.model_profiles.replacement IS
    'The model that replaces this one (the provider''s recommendation where it gives one).';
COMMENT ON COLUMN prompt.model_profiles.system_messages IS
    'Whether the model takes {"role": "system"} messages after the leading run: a system entry in history is then sent so, in place.';
COMMENT ON COLUMN prompt.model_profiles.cache_diagnostics IS
    'Whether the model takes request_options.cache_diagnostics (the provider explains a cache miss against the previous response).';
COMMENT ON COLUMN prompt.model_profiles.imported IS
    'What prompt.import_models last wrote of the row (NULL: never imported); an import keeps a row whose columns no longer match it.';
COMMENT ON FUNCTION prompt.count_body(uuid, uuid) IS
    'The body a provider''s token-count endpoint takes for the request compile_turn returns (anthropic: /v1/messages/count_tokens; responses: /v1/responses/input_tokens; gemini: models/{model}:countTokens, as generateContentRequest; converse: /model/{modelId}/count-tokens, as input.converse). The chat wire has none (0A000).';
COMMENT ON FUNCTION prompt.record_count(uuid, uuid, integer) IS
    'Records the input tokens a provider''s count endpoint answered for the turn''s request as it stands, beside its estimate (prompt.counts); model_calibration and token_margin_auto read counts beside billed usage.';
COMMENT ON TABLE prompt.counts IS
    'One row per request counted by a provider''s token-count endpoint (record_count): its input tokens beside the estimate of the request.';
COMMENT ON COLUMN prompt.models.history_cache_ttl IS
    'The TTL of the cache breakpoints after the stable prefix (history, a run''s rounds); NULL: cache_ttl. Never longer than cache_ttl; each provider takes it as its profile allows (Anthropic 5m or 1h; OpenAI 30m or 12h).';

