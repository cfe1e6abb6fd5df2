-- pgprompt 0.2.0 -> 0.3.0 (frozen: never edit once released)
--
-- * compile_turn and preview_turn return the wire body itself, as json (exactly the
--   sealed bytes); explain_turn (jsonb) tells how it was made; sealed_body, prune_seals
--   and pretty are new;
-- * seals live in prompt.seals and prompt.seal_nodes, each element of a body stored once
--   per conversation (linear storage); every 0.2 seal (turns.sealed_request) moves to
--   prompt.seals_02 as it is, and the column goes; CALL prompt.convert_seals_02()
--   converts them in committed batches (resumable), and compile_turn of such a turn
--   converts its conversation's first;
-- * every table is registered with pg_extension_config_dump: pg_dump keeps the rows;
-- * a sealed turn's inputs, a sealed or replayed turn's deletion and a sent round's
--   rewrite are refused unless pgprompt.allow_history_rewrite is on; a reply needs its
--   poster, a message its role, rounds a run turn and no gap;
-- * models.wire takes responses and gemini; models.cache_ttl, models.token_margin_auto,
--   and request_options on models, users and turns; rounds.sent_at;
-- * the response loop: record_response, record_tool_results, prompt.responses (usage
--   as billed beside the estimate) and the prompt.model_calibration view;
-- * Sides: conversations.captured_turn_id, and a Side answers as the captured turn's
--   answerer.

ALTER TABLE prompt.models DROP CONSTRAINT models_wire_valid,
    ADD CONSTRAINT models_wire_valid CHECK (wire IN ('anthropic', 'chat', 'responses', 'gemini')),
    ADD COLUMN cache_ttl text NOT NULL DEFAULT '5m'
        CONSTRAINT models_cache_ttl_valid CHECK (cache_ttl IN ('5m', '1h')),
    ADD COLUMN token_margin_auto bool NOT NULL DEFAULT false,
    ADD COLUMN request_options jsonb NOT NULL DEFAULT '{}';
ALTER TABLE prompt.users ADD COLUMN request_options jsonb NOT NULL DEFAULT '{}';
ALTER TABLE prompt.turns ADD COLUMN request_options jsonb NOT NULL DEFAULT '{}';
ALTER TABLE prompt.rounds ADD COLUMN sent_at timestamptz;
ALTER TABLE prompt.conversations ADD COLUMN captured_turn_id uuid,
    ADD CONSTRAINT conversations_capture_is_a_sides
        CHECK (captured_turn_id IS NULL OR kind = 'side');

CREATE TABLE prompt.seal_nodes (
    conversation_id uuid NOT NULL REFERENCES prompt.conversations (id) ON DELETE CASCADE,
    id              bigint NOT NULL,
    parent          bigint,
    digest          bytea NOT NULL,
    body            text NOT NULL,
    PRIMARY KEY (conversation_id, id),
    CONSTRAINT seal_nodes_parent_digest_key UNIQUE NULLS NOT DISTINCT (conversation_id, parent, digest)
);

CREATE TABLE prompt.seals (
    conversation_id uuid NOT NULL,
    turn_id         uuid NOT NULL,
    sealed_at       timestamptz NOT NULL DEFAULT now(),
    frozen          jsonb NOT NULL,
    head            bigint,
    lead            bigint[] NOT NULL DEFAULT '{}',
    chain           bigint,
    chain_length    int NOT NULL DEFAULT 0,
    chain_low       bigint,
    tail            bigint,
    patches         jsonb NOT NULL DEFAULT '[]',
    digest          bytea NOT NULL,
    bytes           int NOT NULL,
    pruned_at       timestamptz,
    PRIMARY KEY (conversation_id, turn_id),
    FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns (conversation_id, id) ON DELETE CASCADE
);

SELECT pg_catalog.pg_extension_config_dump('prompt.models', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.users', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.workspaces', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.documents', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.conversations', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.memories', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.skills', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.turns', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.rounds', '');
-- What the provider answered each request of a turn: one row per recorded response
-- (step 0: a direct reply's answer; n: the run's round n it became), with the usage as
-- billed beside the estimate of the request it answered (prompt.model_calibration).
CREATE TABLE prompt.responses (
    conversation_id        uuid NOT NULL,
    turn_id                uuid NOT NULL,
    step                   int NOT NULL CONSTRAINT responses_step_valid CHECK (step >= 0),
    response_id            text,
    shape                  text NOT NULL
        CONSTRAINT responses_shape_valid CHECK (shape IN ('anthropic', 'chat', 'responses', 'gemini')),
    model                  text,
    compiled_model         text,
    stop_reason            text,
    input_tokens           int,
    cache_creation_tokens  int,
    cache_read_tokens      int,
    output_tokens          int,
    billed_input_tokens    int,
    estimated_input_tokens int NOT NULL,
    recorded_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (conversation_id, turn_id, step),
    CONSTRAINT responses_response_id_key UNIQUE (conversation_id, response_id),
    FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns (conversation_id, id) ON DELETE CASCADE
);
CREATE INDEX responses_compiled_model_idx ON prompt.responses (compiled_model);

-- Per model, how the billed prompt compares with the estimate (Anthropic's tokenizer is
-- not public: cl100k counts are off for Claude); token_margin_auto compiles with the p95.
CREATE VIEW prompt.model_calibration WITH (security_invoker = true) AS
SELECT compiled_model AS model,
       count(*) AS recorded,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY billed_input_tokens::float8 / estimated_input_tokens) AS median_ratio,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY billed_input_tokens::float8 / estimated_input_tokens) AS p95_ratio
  FROM prompt.responses
 WHERE compiled_model IS NOT NULL AND billed_input_tokens IS NOT NULL AND estimated_input_tokens > 0
 GROUP BY compiled_model;

SELECT pg_catalog.pg_extension_config_dump('prompt.seal_nodes', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.seals', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.responses', '');

-- 0.2 seals not converted yet: the update from 0.2 moves them here (as 0.2 stored them)
-- and CALL prompt.convert_seals_02() converts them in committed batches (compile_turn
-- converts its own conversation's first). Empty on a fresh install and once converted.
CREATE TABLE prompt.seals_02 (
    conversation_id uuid NOT NULL,
    turn_id         uuid NOT NULL,
    request         jsonb NOT NULL,
    PRIMARY KEY (conversation_id, turn_id),
    FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns (conversation_id, id) ON DELETE CASCADE
);
SELECT pg_catalog.pg_extension_config_dump('prompt.seals_02', '');

-- The functions whose signature or result changed, and the new ones.
DROP FUNCTION prompt.compile_turn(uuid, uuid);
DROP FUNCTION prompt.preview_turn(uuid, uuid);
DROP FUNCTION prompt._check_turn(text, text, text, text, text, text);
DROP FUNCTION prompt._refuse_sealed_update(uuid, uuid);

CREATE FUNCTION prompt."_check_request_options"(
	"table" TEXT,
	"options" TEXT
) RETURNS void
IMMUTABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_check_request_options_wrapper';
CREATE FUNCTION prompt."_check_options_wire"(
	"level" TEXT,
	"options" TEXT,
	"wire" TEXT,
	"max_output_tokens" INT
) RETURNS void
IMMUTABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_check_options_wire_wrapper';
CREATE FUNCTION prompt."_check_round_place"(
	"turn_id" uuid,
	"n" INT,
	"kind" TEXT,
	"mode" TEXT,
	"previous_exists" bool
) RETURNS void
IMMUTABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_check_round_place_wrapper';
CREATE FUNCTION prompt."_check_turn"(
	"inline" TEXT,
	"variables" TEXT,
	"history" TEXT,
	"input" TEXT,
	"tools" TEXT,
	"callables" TEXT,
	"request_options" TEXT
) RETURNS void
IMMUTABLE PARALLEL SAFE 
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_check_turn_v3_wrapper';
CREATE FUNCTION prompt."_check_turn_shape"(
	"id" uuid,
	"kind" TEXT,
	"role" TEXT,
	"poster_id" uuid,
	"mode" TEXT,
	"leaves_run_with_rounds" bool
) RETURNS void
IMMUTABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_check_turn_shape_wrapper';
CREATE FUNCTION prompt."_refuse_sealed"(
	"conversation_id" uuid,
	"turn_id" uuid,
	"what" TEXT,
	"rewritable" bool
) RETURNS void
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_refuse_sealed_wrapper';
CREATE FUNCTION prompt."_refuse_sent_round"(
	"conversation_id" uuid,
	"turn_id" uuid,
	"n" INT,
	"op" TEXT
) RETURNS void
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_refuse_sent_round_wrapper';
CREATE FUNCTION prompt."compile_turn"(
	"conversation_id" uuid,
	"turn_id" uuid
) RETURNS json
STRICT VOLATILE PARALLEL UNSAFE 
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'compile_turn_json_wrapper';
CREATE FUNCTION prompt."explain_turn"(
	"conversation_id" uuid,
	"turn_id" uuid
) RETURNS jsonb
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'explain_turn_wrapper';
CREATE FUNCTION prompt."pretty"(
	"body" json
) RETURNS TEXT
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'pretty_wrapper';
CREATE FUNCTION prompt."preview_turn"(
	"conversation_id" uuid,
	"turn_id" uuid
) RETURNS json
STRICT STABLE PARALLEL SAFE 
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'preview_turn_json_wrapper';
CREATE FUNCTION prompt."prune_seals"(
	"conversation_id" uuid,
	"before" timestamp with time zone
) RETURNS bigint
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'prune_seals_wrapper';
CREATE FUNCTION prompt."sealed_body"(
	"conversation_id" uuid,
	"turn_id" uuid
) RETURNS json
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'sealed_body_wrapper';

-- The memo's statistics.
CREATE FUNCTION prompt."memo_stats"() RETURNS TABLE (
	"entries" bigint, 
	"capacity" bigint, 
	"hits" bigint, 
	"misses" bigint 
)
STRICT VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'memo_stats_wrapper';

-- The tool-search backend of deferred callables and tools.
CREATE FUNCTION prompt."search_deferred"(
	"conversation_id" uuid,
	"turn_id" uuid,
	"query" TEXT DEFAULT ''
) RETURNS jsonb
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'search_deferred_wrapper';
-- The summarizer's transcript.
CREATE FUNCTION prompt."transcript"(
	"conversation_id" uuid,
	"through_turn_id" uuid
) RETURNS TEXT
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'transcript_wrapper';

-- The response loop.
CREATE FUNCTION prompt."record_response"(
	"conversation_id" uuid,
	"turn_id" uuid,
	"response" jsonb
) RETURNS jsonb
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'record_response_wrapper';
CREATE FUNCTION prompt."record_tool_results"(
	"conversation_id" uuid,
	"turn_id" uuid,
	"results" jsonb
) RETURNS INT
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'record_tool_results_wrapper';

-- Converting 0.2 seals (a batch of CALL prompt.convert_seals_02()).
CREATE FUNCTION prompt."_convert_seals_02"(
	"conversation_id" uuid,
	"batch_size" bigint DEFAULT 100
) RETURNS bigint
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_convert_seals_02_wrapper';

-- The 0.2 seals move, as they are, to prompt.seals_02: the update copies rows and does no
-- conversion, so it takes the time of a copy. CALL prompt.convert_seals_02() then converts
-- them in committed batches (resumable); compile_turn converts its conversation's first.
INSERT INTO prompt.seals_02 (conversation_id, turn_id, request)
SELECT conversation_id, id, sealed_request FROM prompt.turns WHERE sealed_request IS NOT NULL;
ALTER TABLE prompt.turns DROP COLUMN sealed_request;
DO $$
DECLARE
    n bigint := (SELECT count(*) FROM prompt.seals_02);
BEGIN
    IF n > 0 THEN
        -- PostgreSQL runs an extension script at client_min_messages = warning.
        SET LOCAL client_min_messages = notice;
        RAISE NOTICE 'pgprompt: % sealed turns of 0.2 wait for conversion in prompt.seals_02', n
            USING HINT = 'CALL prompt.convert_seals_02() converts them in committed batches (resumable); until then compile_turn of such a turn converts its conversation''s first.';
        SET LOCAL client_min_messages = warning;
    END IF;
END
$$;
-- A round a later round followed was sent: it never changes again.
UPDATE prompt.rounds r SET sent_at = r.created_at
 WHERE EXISTS (SELECT 1 FROM prompt.rounds x WHERE x.conversation_id = r.conversation_id
               AND x.turn_id = r.turn_id AND x.n > r.n);

-- Triggers: sealed means sealed, refusals at the door.
CREATE FUNCTION prompt._history_rewrite_allowed() RETURNS bool
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT coalesce(current_setting('pgprompt.allow_history_rewrite', true), 'off') IN ('on', 'true', 'yes', '1') $$;

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
       OR NEW.kind    IS DISTINCT FROM OLD.kind THEN
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
       OR NEW.summary_round IS DISTINCT FROM OLD.summary_round THEN
        NEW.own_entries := prompt._own_entries(NEW.summary, NEW.summary_round, NEW.content,
            ARRAY(SELECT n FROM prompt.rounds r WHERE r.conversation_id = NEW.conversation_id AND r.turn_id = NEW.id));
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION prompt._turns_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF prompt._history_rewrite_allowed()
       OR NOT EXISTS (SELECT 1 FROM prompt.conversations c WHERE c.id = OLD.conversation_id) THEN
        RETURN OLD;
    END IF;
    IF OLD.sealed_at IS NOT NULL THEN
        PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, 'delete', true);
    END IF;
    IF EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = OLD.conversation_id
               AND t.seq > OLD.seq AND t.sealed_at IS NOT NULL) THEN
        PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, 'delete_replayed', true);
    END IF;
    RETURN OLD;
END
$$;

CREATE TRIGGER turns_delete BEFORE DELETE ON prompt.turns
    FOR EACH ROW EXECUTE FUNCTION prompt._turns_delete();

CREATE OR REPLACE FUNCTION prompt._rounds_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.sent_at IS NOT NULL
       AND NOT prompt._history_rewrite_allowed()
       AND EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = OLD.conversation_id AND t.id = OLD.turn_id) THEN
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

DROP TRIGGER rounds_write ON prompt.rounds;
CREATE TRIGGER rounds_write BEFORE INSERT OR UPDATE OR DELETE ON prompt.rounds
    FOR EACH ROW EXECUTE FUNCTION prompt._rounds_write();

-- A round added or removed changes its turn's entry count.
CREATE OR REPLACE FUNCTION prompt._rounds_count() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    ns int[];
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    -- Two statements keyed by the conversation, not one correlated UPDATE: on Citus each
    -- is then a query on this shard, which a trigger there may run.
    ns := ARRAY(SELECT x.n FROM prompt.rounds x WHERE x.conversation_id = r.conversation_id AND x.turn_id = r.turn_id);
    UPDATE prompt.turns t
       SET own_entries = prompt._own_entries(t.summary, t.summary_round, t.content, ns)
     WHERE t.conversation_id = r.conversation_id AND t.id = r.turn_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION prompt._rounds_placed() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
BEGIN
    SELECT kind, mode INTO t FROM prompt.turns
     WHERE conversation_id = NEW.conversation_id AND id = NEW.turn_id;
    PERFORM prompt._check_round_place(NEW.turn_id, NEW.n, t.kind, t.mode,
        NEW.n = 1 OR EXISTS (SELECT 1 FROM prompt.rounds r WHERE r.conversation_id = NEW.conversation_id
                             AND r.turn_id = NEW.turn_id AND r.n = NEW.n - 1));
    RETURN NULL;
END
$$;

CREATE TRIGGER rounds_placed AFTER INSERT OR UPDATE OF n, turn_id ON prompt.rounds
    FOR EACH ROW EXECUTE FUNCTION prompt._rounds_placed();

CREATE FUNCTION prompt._options_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.request_options IS DISTINCT FROM OLD.request_options THEN
        PERFORM prompt._check_request_options(TG_TABLE_NAME, NEW.request_options::text);
    END IF;
    IF NEW.request_options <> '{}'::jsonb AND NEW.model IS NOT NULL
       AND (TG_OP = 'INSERT' OR NEW.request_options IS DISTINCT FROM OLD.request_options
            OR NEW.model IS DISTINCT FROM OLD.model) THEN
        PERFORM prompt._check_options_wire('agent', NEW.request_options::text, m.wire, m.max_output_tokens)
           FROM prompt.models m WHERE m.name = NEW.model;
    END IF;
    RETURN NEW;
END
$$;

-- A model's own options meet its wire when written: a model row knows it.
CREATE FUNCTION prompt._model_options_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.request_options <> '{}'::jsonb AND (TG_OP = 'INSERT'
       OR NEW.request_options IS DISTINCT FROM OLD.request_options
       OR NEW.wire IS DISTINCT FROM OLD.wire
       OR NEW.max_output_tokens IS DISTINCT FROM OLD.max_output_tokens) THEN
        PERFORM prompt._check_options_wire('model', NEW.request_options::text, NEW.wire, NEW.max_output_tokens);
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER models_options BEFORE INSERT OR UPDATE OF request_options, wire, max_output_tokens ON prompt.models
    FOR EACH ROW EXECUTE FUNCTION prompt._model_options_write();
CREATE TRIGGER users_options BEFORE INSERT OR UPDATE OF request_options, model ON prompt.users
    FOR EACH ROW EXECUTE FUNCTION prompt._options_write();

-- A Side answers as its captured turn's answerer: filled in when not given, refused
-- when another. A capture that names no turn of the parent is refused unless the row
-- already names its answerer (as pg_dump's restore does, conversations before turns).
CREATE FUNCTION prompt._conversations_capture() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found_answerer uuid;
BEGIN
    -- Not a Side's capture, nothing of it changed, or the parent was deleted (its
    -- parent_id set NULL: the Side keeps its rows and no longer compiles).
    IF NEW.captured_turn_id IS NULL OR NEW.parent_id IS NULL
       OR (TG_OP = 'UPDATE' AND NEW.parent_id IS NOT DISTINCT FROM OLD.parent_id
           AND NEW.captured_turn_id IS NOT DISTINCT FROM OLD.captured_turn_id
           AND NEW.answerer_id IS NOT DISTINCT FROM OLD.answerer_id) THEN
        RETURN NEW;
    END IF;
    SELECT coalesce(t.answerer_id, p.answerer_id) INTO found_answerer
      FROM prompt.turns t JOIN prompt.conversations p ON p.id = t.conversation_id
     WHERE t.conversation_id = NEW.parent_id AND t.id = NEW.captured_turn_id;
    IF NOT FOUND THEN
        -- pg_dump's restore writes conversations before turns, answerer_id included.
        IF TG_OP = 'UPDATE' OR NEW.answerer_id IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = format('side_invalid: the captured turn %s is not a turn of conversation %s',
                                 NEW.captured_turn_id, NEW.parent_id),
                HINT = 'A Side is captured from a turn of its parent_id.';
        END IF;
    ELSIF found_answerer IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('side_invalid: the captured turn %s has no answerer (nor has conversation %s)',
                             NEW.captured_turn_id, NEW.parent_id),
            HINT = 'A Side answers as its captured turn''s answerer: capture a turn that has one.';
    ELSIF NEW.answerer_id IS NULL THEN
        NEW.answerer_id := found_answerer;
    ELSIF found_answerer <> NEW.answerer_id THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('side_invalid: a Side answers as its captured turn''s answerer %s, not %s',
                             found_answerer, NEW.answerer_id),
            HINT = 'Leave answerer_id NULL: it is filled in from the captured turn.';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER conversations_capture BEFORE INSERT OR UPDATE OF parent_id, captured_turn_id, answerer_id
    ON prompt.conversations FOR EACH ROW EXECUTE FUNCTION prompt._conversations_capture();

-- A model with a tokenizer the stored turns have no counts for says so once, when it
-- is written: until backfill_token_counts runs, compiles count those texts themselves.
CREATE FUNCTION prompt._models_tokenizer() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    slot int := array_position(ARRAY['cl100k_base', 'o200k_base']::text[], NEW.tokenizer);
BEGIN
    IF slot IS NOT NULL AND EXISTS (
        SELECT 1 FROM prompt.turns t
        WHERE (t.content IS NOT NULL AND t.content_tokens[slot] IS NULL)
           OR (t.prompt IS NOT NULL AND t.prompt_tokens[slot] IS NULL)) THEN
        RAISE NOTICE 'model "%" uses %, which stored turns have no token counts for', NEW.name, NEW.tokenizer
            USING HINT = format('CALL prompt.backfill_token_counts(%L) stores them; until then compiles count those texts themselves.', NEW.tokenizer);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER models_tokenizer AFTER INSERT OR UPDATE OF tokenizer ON prompt.models
    FOR EACH ROW EXECUTE FUNCTION prompt._models_tokenizer();

-- Stored counts for a tokenizer the turns were written without (a model with a new
-- tokenizer was added): filled in batches, each committed, so an interrupted run loses
-- at most one batch and the next run goes on from what is missing. No SET clause: a
-- procedure with one cannot commit; every name is schema-qualified instead.
CREATE PROCEDURE prompt.backfill_token_counts(tokenizer text, batch_size int DEFAULT 1000)
LANGUAGE plpgsql
AS $$
DECLARE
    slot int := pg_catalog.array_position(ARRAY['cl100k_base', 'o200k_base']::text[], tokenizer);
    last_c uuid;
    last_id uuid;
    seen bigint := 0;
    counted bigint := 0;
    batch_seen bigint;
    batch_counted bigint;
BEGIN
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
        RAISE NOTICE 'backfill_token_counts(%): % turns read, % counted', tokenizer, seen, counted;
    END LOOP;
    RAISE NOTICE 'backfill_token_counts(%): done, % turns read, % counted', tokenizer, seen, counted;
END
$$;

-- The 0.2 seals the update moved to prompt.seals_02, converted in batches, each committed
-- with a NOTICE: an interrupted run loses at most one batch, and the next run goes on
-- with what is left. No SET clause: a procedure with one cannot commit.
CREATE PROCEDURE prompt.convert_seals_02(batch_size int DEFAULT 100)
LANGUAGE plpgsql
AS $$
DECLARE
    total bigint;
    converted bigint := 0;
    n bigint;
BEGIN
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

-- The operator's view: per conversation, what the backfill, retention and the response
-- loop have to do with (sum its columns for the whole database).
CREATE VIEW prompt.status WITH (security_invoker = true) AS
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
       (SELECT coalesce(sum(r.output_tokens), 0) FROM prompt.responses r WHERE r.conversation_id = c.id) AS output_tokens
  FROM prompt.conversations c;

-- Comments -----------------------------------------------------------------------

COMMENT ON TABLE prompt.models IS
    'A model a request is compiled for: its wire (anthropic, chat, responses, gemini), tokenizer, windows, image support, token margin, max_output_tokens, cache TTL and request options. name is the provider''s model id.';
COMMENT ON TABLE prompt.users IS
    'People and agents. An agent has a steward (its controlling Human), a prompt_mechanism (default, assembly, raw), an optional prompt_template, a model, an application and request options.';
COMMENT ON TABLE prompt.workspaces IS
    'The room a conversation lives in; its timezone dates {{date}}.';
COMMENT ON TABLE prompt.documents IS
    'Prompt documents: slot rows (system_prompt on an agent, character on a workspace, persona on a human) and durable documents (SOUL, MISSION, ...) on an agent. One per owner and name; a write bumps version and updated_at. Macros are checked on write.';
COMMENT ON TABLE prompt.memories IS
    'Memory entries by scope (agent, workspace, speaker, user, conversation) and path; rows under skills/ never render as memory.';
COMMENT ON TABLE prompt.skills IS
    'Skill documents for the catalog, by source (runner, application, agent, workspace, speaker, user); recall_only skills are never listed.';
COMMENT ON TABLE prompt.conversations IS
    'One timeline: its workspace, kind, stored answerer, creator and origin channel; a Side names its parent and the turn captured there.';
COMMENT ON FUNCTION prompt._conversations_capture() IS
    'Internal trigger: a Side answers as its captured turn''s answerer (filled in when NULL, refused when another).';
COMMENT ON COLUMN prompt.conversations.captured_turn_id IS
    'A Side''s captured turn, in parent_id: its history is the parent''s turns through that turn, in its answerer''s reading, then its own.';
COMMENT ON TABLE prompt.turns IS
    'The timeline, ordered by seq: message, reply and summary turns. A reply turn is what compile_turn compiles; once sealed, its sealed_* columns and every column its request was compiled from never change (content stays writable).';
COMMENT ON TABLE prompt.rounds IS
    'The model rounds of a run-backed reply turn: the assistant''s text and tool calls, the results with their captures, the steers read mid-round, and whether it was aborted. A round a request carried (sent_at) never changes.';
COMMENT ON TABLE prompt.seals IS
    'One row per sealed turn: what its first compile froze (frozen), where its body is stored (head, lead, chain, chain_length, tail in prompt.seal_nodes), and the body''s SHA-256 and size, kept when prune_seals drops the body.';
COMMENT ON TABLE prompt.seal_nodes IS
    'The pieces of sealed bodies, each stored once per conversation: list elements chained newest to oldest (parent), and the text around the lists. Written by compile_turn; prune_seals removes what no body uses.';

COMMENT ON COLUMN prompt.turns.content_tokens IS
    'Token counts of content as history renders it bare, {cl100k_base, o200k_base}; kept by the write trigger.';
COMMENT ON COLUMN prompt.turns.prompt_tokens IS
    'Token counts of prompt, {cl100k_base, o200k_base}; kept by the write trigger.';
COMMENT ON COLUMN prompt.turns.own_entries IS
    'The history entries of this turn read by its own answerer; kept by the write triggers so a budget counts what it leaves out without reading it.';
COMMENT ON COLUMN prompt.turns.sealed_preface IS
    'What the turn laid between history and its input when it was sealed; later turns of the same answerer replay it byte for byte.';
COMMENT ON COLUMN prompt.rounds.sent_at IS
    'When a compile_turn first sent this round; from then on the round never changes.';

COMMENT ON FUNCTION prompt.compile_turn(uuid, uuid) IS
    'The request body for the reply turn''s next model call, as json ready to POST. The first call seals it; later calls return exactly the sealed bytes, plus the rounds written since.';
COMMENT ON FUNCTION prompt.preview_turn(uuid, uuid) IS
    'The body compile_turn would return, without writing anything; works read-only and on hot standbys.';
COMMENT ON FUNCTION prompt.sealed_body(uuid, uuid) IS
    'The body a turn''s seal stored, exactly as its first compile_turn returned it (without the rounds written since); NULL for a turn that is not sealed.';
COMMENT ON FUNCTION prompt.explain_turn(uuid, uuid) IS
    'How the body is made: mechanism, model, wire, whether sealed, the compiled messages, cache breakpoints, the preface and the full estimate. Never raises for a budget problem.';
COMMENT ON FUNCTION prompt.estimate_turn(uuid, uuid) IS
    'The token budget of a turn, one row per block in block order, then the tools; reports budget problems instead of raising them.';
COMMENT ON FUNCTION prompt.prune_seals(uuid, timestamptz) IS
    'Drops the bodies of the conversation''s seals older than the given time, keeping each seal''s digest, size and estimate; returns how many it pruned. A pruned turn''s compile_turn raises sealed_request_pruned.';
COMMENT ON FUNCTION prompt.pretty(json) IS
    'A body (or any JSON) indented for reading, its keys in the order they were written (jsonb_pretty would sort them).';
COMMENT ON FUNCTION prompt.validate_template(jsonb) IS
    'Every problem of an assembly template as (JSON-pointer path, code, message); no rows means valid.';
COMMENT ON FUNCTION prompt.count_tokens(text, text) IS
    'The number of tokens of a text as ordinary text, for cl100k_base (default) or o200k_base, exactly as tiktoken counts.';
COMMENT ON FUNCTION prompt.escape_envelope(text) IS
    'Escapes a body for the inside of a speaker envelope, so it can neither open nor close one.';
COMMENT ON FUNCTION prompt.unescape_envelope(text) IS
    'The exact inverse of escape_envelope.';
COMMENT ON PROCEDURE prompt.backfill_token_counts(text, integer) IS
    'Stores the token counts of every turn for a tokenizer they lack (after adding a model with a new tokenizer), in committed batches with a NOTICE each; restartable. CALL it outside a transaction block.';
COMMENT ON FUNCTION prompt._models_tokenizer() IS
    'Internal trigger: a NOTICE naming backfill_token_counts when a model brings a tokenizer stored turns have no counts for.';
COMMENT ON FUNCTION prompt.record_response(uuid, uuid, jsonb) IS
    'Records a provider''s response body (Anthropic Message, OpenAI ChatCompletion or Response, Gemini GenerateContentResponse) where the next compile reads it: a direct reply''s text as the turn''s content, a run''s step as its next round; stores the usage beside the estimate of the request it answered. Idempotent per response id.';
COMMENT ON FUNCTION prompt.record_tool_results(uuid, uuid, jsonb) IS
    'Writes the results of the newest round''s tool calls ([{call_id, content, is_error?, captures?}]); returns the round''s number.';
COMMENT ON TABLE prompt.responses IS
    'One row per recorded provider response: step 0 a direct reply''s answer, step n the run''s round n; the usage as billed (input, cache writes, cache reads, output) beside the estimate of the request it answered.';
COMMENT ON VIEW prompt.model_calibration IS
    'Per model: the recorded responses, and the median and p95 of billed over estimated input tokens. models.token_margin_auto compiles with the p95 as the margin.';
COMMENT ON VIEW prompt.status IS
    'Per conversation: turns, turns lacking a stored token count for a tokenizer in use (backfill_token_counts), seals, pruned seals, 0.2 seals not converted yet (convert_seals_02), sealed body bytes and their stored size, recorded responses and their billed tokens. Sum it for the whole database.';
COMMENT ON TABLE prompt.seals_02 IS
    '0.2 seals not converted yet, as 0.2 stored them (the update from 0.2 moves them here). CALL prompt.convert_seals_02() converts them; compile_turn converts its conversation''s first. Empty on a fresh install.';
COMMENT ON PROCEDURE prompt.convert_seals_02(int) IS
    'Converts the 0.2 seals left in prompt.seals_02 into 0.3 seals, in committed batches with a NOTICE each; resumable. CALL it outside a transaction block.';
COMMENT ON FUNCTION prompt._convert_seals_02(uuid, bigint) IS
    'Internal: converts up to batch_size 0.2 seals (of one conversation, or any when NULL), oldest first; returns how many. One batch of convert_seals_02.';
COMMENT ON FUNCTION prompt.memo_stats() IS
    'This backend''s token-count memo: entries, capacity (pgprompt.memo_capacity), lookups answered from it and lookups that counted.';
COMMENT ON FUNCTION prompt.search_deferred(uuid, uuid, text) IS
    'The tool-search backend of a turn''s deferred callables and tools: the catalog lines and tool definitions it deferred (as its seal froze them) that match every term of the query, case-insensitively.';
COMMENT ON FUNCTION prompt.transcript(uuid, uuid) IS
    'The summarizer''s transcript: every turn from the newest summary turn through the given one, as spoken (each speaker''s words in its envelope, kernel rows bare), blank-line separated. Write the summary as a summary turn.';
COMMENT ON FUNCTION prompt._tokenizers_in_use() IS
    'Internal: the tokenizers of the models in use, whose counts the turns trigger stores.';
COMMENT ON FUNCTION prompt._history_rewrite_allowed() IS
    'Internal: whether the transaction set pgprompt.allow_history_rewrite = on.';
COMMENT ON FUNCTION prompt._documents_write() IS
    'Internal trigger: refuses unknown macros and bodies over 64 KiB; bumps version and updated_at.';
COMMENT ON FUNCTION prompt._users_write() IS
    'Internal trigger: refuses an invalid prompt_template with its JSON-pointer path.';
COMMENT ON FUNCTION prompt._workspaces_write() IS
    'Internal trigger: refuses an unknown timezone.';
COMMENT ON FUNCTION prompt._touch_updated_at() IS
    'Internal trigger: sets updated_at on update.';
COMMENT ON FUNCTION prompt._turns_write() IS
    'Internal trigger: numbers a turn written without seq; refuses changes to a sealed turn, a reply without poster_id, a message without role, and invalid inline entries, variables, history intent, input, tools, callables or request options; stores token counts and entry counts.';
COMMENT ON FUNCTION prompt._turns_delete() IS
    'Internal trigger: refuses deleting a sealed turn, or one a later seal replayed, unless pgprompt.allow_history_rewrite is on or the whole conversation goes.';
COMMENT ON FUNCTION prompt._rounds_write() IS
    'Internal trigger: refuses a round whose JSON is not a valid round, naming the path, and any change to a round a request carried.';
COMMENT ON FUNCTION prompt._rounds_placed() IS
    'Internal trigger: refuses a round on anything but a run reply turn, or numbered after a gap.';
COMMENT ON FUNCTION prompt._rounds_count() IS
    'Internal trigger: keeps turns.own_entries when rounds are added or removed.';
COMMENT ON FUNCTION prompt._options_write() IS
    'Internal trigger: refuses invalid request options of an agent.';
COMMENT ON FUNCTION prompt._model_options_write() IS
    'Internal trigger: refuses request options of a model that are invalid or that its wire cannot carry.';
COMMENT ON FUNCTION prompt._own_entries(text, integer, text, integer[]) IS
    'Internal: the history entries of a reply turn read by its own answerer, as the compiler plans them.';
COMMENT ON FUNCTION prompt._check_document(text, text) IS
    'Internal: the write-time checks of a document body.';
COMMENT ON FUNCTION prompt._check_template(text, text, jsonb) IS
    'Internal: the write-time checks of a prompt_template.';
COMMENT ON FUNCTION prompt._check_turn(text, text, text, text, text, text, text) IS
    'Internal: the write-time checks of a turn''s JSON columns.';
COMMENT ON FUNCTION prompt._check_turn_shape(uuid, text, text, uuid, text, boolean) IS
    'Internal: the write-time checks of a turn''s shape (a reply''s poster, a message''s role, a run''s rounds).';
COMMENT ON FUNCTION prompt._check_request_options(text, text) IS
    'Internal: the write-time checks of request options.';
COMMENT ON FUNCTION prompt._check_options_wire(text, text, text, integer) IS
    'Internal: the write-time checks of one level''s request options (a model''s, an agent''s or a turn''s) against the wire and max_output_tokens of the model it names.';
COMMENT ON FUNCTION prompt._check_round(uuid, integer, text, text, text) IS
    'Internal: the write-time checks of a round.';
COMMENT ON FUNCTION prompt._check_round_place(uuid, integer, text, text, boolean) IS
    'Internal: the write-time checks of where a round sits.';
COMMENT ON FUNCTION prompt._row_tokens(text, text, text[]) IS
    'Internal: the stored token counts of a turn text, one slot per tokenizer.';
COMMENT ON FUNCTION prompt._refuse_sealed(uuid, uuid, text, boolean) IS
    'Internal: raises sealed_turn_immutable for a change to a sealed turn.';
COMMENT ON FUNCTION prompt._refuse_sent_round(uuid, uuid, integer, text) IS
    'Internal: raises sealed_turn_immutable for a change to a sent round.';
COMMENT ON FUNCTION prompt._refuse_timezone(text) IS
    'Internal: raises timezone_invalid.';
