-- pgprompt schema (docs/design.md, "Tables"). Runs first (bootstrap): tables, keys,
-- checks, indexes. Triggers, which call the extension's functions, are in finalize.sql.
--
-- Layout (docs/scale-out.md): conversation-scoped tables (turns, rounds, seals,
-- seal_nodes) carry conversation_id and their primary and foreign keys start with it, so
-- they can be distributed by it and colocated; models, users, workspaces, documents,
-- skills and memories are small shared tables.

-- Every text pgprompt reads and writes is UTF-8 (the bodies it returns, the counts it
-- stores): a database in another encoding is refused at CREATE EXTENSION.
DO $$
BEGIN
    IF pg_catalog.getdatabaseencoding() <> 'UTF8' THEN
        RAISE EXCEPTION 'pgprompt needs a UTF8 database, and "%" is %', pg_catalog.current_database(), pg_catalog.getdatabaseencoding()
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Request bodies are JSON, which is UTF-8; pgprompt reads and writes every text as UTF-8.',
                  HINT = 'Create the database with ENCODING ''UTF8'' (and TEMPLATE template0), then CREATE EXTENSION pgprompt there.';
    END IF;
END
$$;

-- The schema is the extension's own: CREATE EXTENSION creates it (the control file names
-- it) as the role that runs CREATE EXTENSION — a database owner, when the extension is
-- installed as trusted, whose script then runs as the bootstrap superuser. A schema that
-- was there before holding objects, owned by another role or letting another role create
-- in it, is refused: whoever owns a schema can replace what is in it, and a function
-- pgprompt's next compile calls would be theirs. The schema is then given to the role the
-- script runs as (the objects' owner), so that no database owner owns it.
DO $$
DECLARE
    found record;
    installer oid := (SELECT e.extowner FROM pg_catalog.pg_extension e WHERE e.extname = 'pgprompt');
BEGIN
    SELECT n.nspname, pg_catalog.pg_get_userbyid(n.nspowner) AS owner,
           n.nspowner NOT IN ((SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user),
                              coalesce(installer, 0)) AS foreign_owner,
           n.nspowner <> (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) AS to_give,
           EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                    WHERE d.refclassid = 'pg_catalog.pg_namespace'::pg_catalog.regclass AND d.refobjid = n.oid
                      AND d.classid <> 'pg_catalog.pg_extension'::pg_catalog.regclass) AS holds,
           EXISTS (SELECT 1 FROM pg_catalog.aclexplode(n.nspacl) a
                    WHERE a.privilege_type = 'CREATE' AND a.grantee <> n.nspowner) AS granted
      INTO found FROM pg_catalog.pg_namespace n WHERE n.nspname = 'prompt';
    IF found.foreign_owner OR found.holds OR found.granted THEN
        RAISE EXCEPTION 'pgprompt''s schema "prompt" already exists (owned by %), and CREATE EXTENSION did not create it', found.owner
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = 'pgprompt creates its schema itself: a schema made before it, by another role or holding objects, could hold code its functions would run.',
                  HINT = 'Drop or rename that schema (ALTER SCHEMA prompt RENAME TO prompt_old), then run CREATE EXTENSION pgprompt again.';
    END IF;
    IF found.to_give THEN
        EXECUTE 'ALTER SCHEMA prompt OWNER TO ' || pg_catalog.quote_ident(current_user);
    END IF;
END
$$;

-- The rules of known models (README, "Model profiles"; core/src/profile.rs): which wires
-- serve a model, its windows and output limit, the thinking modes, efforts, displays and
-- budgets it takes, which sampling options and their ranges, its cache rules. The rows
-- the extension ships (sql/profiles.sql, shipped = true) come with its script and are
-- replaced by an update; pg_dump keeps the rows users add.
CREATE TABLE prompt.model_profiles (
    name                      text PRIMARY KEY CONSTRAINT model_profiles_name_valid CHECK (name <> ''),
    -- Its CHECK, model_profiles_provider_valid, asks the library (finalize.sql).
    provider                  text NOT NULL,
    -- Its CHECK, model_profiles_wires_valid, asks the library (finalize.sql).
    wires                     text[] NOT NULL,
    advisory_window           int CONSTRAINT model_profiles_advisory_window_positive CHECK (advisory_window > 0),
    hard_window               int CONSTRAINT model_profiles_hard_window_positive CHECK (hard_window > 0),
    max_output_tokens         int CONSTRAINT model_profiles_max_output_tokens_positive CHECK (max_output_tokens > 0),
    tokenizer                 text CONSTRAINT model_profiles_tokenizer_valid CHECK (tokenizer IN ('cl100k_base', 'o200k_base')),
    thinking_modes            text[] NOT NULL DEFAULT '{}'
                              CONSTRAINT model_profiles_thinking_modes_valid CHECK (thinking_modes <@ ARRAY['adaptive', 'enabled', 'disabled', 'between_tools']),
    thinking_default          text CONSTRAINT model_profiles_thinking_default_valid CHECK (thinking_default IN ('adaptive', 'enabled', 'disabled')),
    efforts                   text[] NOT NULL DEFAULT '{}'
                              CONSTRAINT model_profiles_efforts_valid
                              CHECK (efforts <@ ARRAY['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']),
    thinking_display          text[] NOT NULL DEFAULT '{}'
                              CONSTRAINT model_profiles_thinking_display_valid CHECK (thinking_display <@ ARRAY['summarized', 'omitted']),
    budget_min                bigint,
    budget_max                bigint,
    include_thoughts          bool NOT NULL DEFAULT false,
    thinking_with_forced_tool bool NOT NULL DEFAULT true,
    temperature_max           float8 CONSTRAINT model_profiles_temperature_max_valid CHECK (temperature_max >= 0),
    top_p_max                 float8 CONSTRAINT model_profiles_top_p_max_valid CHECK (top_p_max > 0 AND top_p_max <= 1),
    sampling_together         bool NOT NULL DEFAULT true,
    cache_breakpoints         text CONSTRAINT model_profiles_cache_breakpoints_valid
                              CHECK (cache_breakpoints IN ('cache_control', 'prompt_cache_breakpoint')),
    max_breakpoints           int NOT NULL DEFAULT 0 CONSTRAINT model_profiles_max_breakpoints_valid CHECK (max_breakpoints >= 0),
    min_cache_tokens          int NOT NULL DEFAULT 0 CONSTRAINT model_profiles_min_cache_tokens_valid CHECK (min_cache_tokens >= 0),
    cache_ttls                text[] NOT NULL DEFAULT '{}'
                              CONSTRAINT model_profiles_cache_ttls_valid CHECK (cache_ttls <@ ARRAY['5m', '1h', '30m', '12h']),
    cache_lookback            int CONSTRAINT model_profiles_cache_lookback_positive CHECK (cache_lookback > 0),
    replays_thinking          bool NOT NULL DEFAULT false,
    shipped                   bool NOT NULL DEFAULT false,
    -- Lifecycle (0.5): the day the provider deprecated the model, the day it stops serving
    -- it (a compile past it is refused), and the model it names instead.
    deprecated_at             date,
    retires_at                date,
    replacement               text,
    -- Takes {"role": "system"} messages after the leading run (a system entry in history
    -- is sent so, in place).
    system_messages           bool NOT NULL DEFAULT false,
    -- Takes request_options.cache_diagnostics (the provider explains a cache miss).
    cache_diagnostics         bool NOT NULL DEFAULT false,
    -- What prompt.import_models last wrote of the row (NULL: never imported); a row whose
    -- columns differ from it was changed by a user, and an import keeps it.
    imported                  jsonb,
    -- Where deprecated_at, retires_at and replacement come from (0.6): the SDK file and
    -- constant, or the provider's page and the day it was read. A retires_at no source
    -- gives is a NOTICE, never a refusal.
    lifecycle_source          text,
    CONSTRAINT model_profiles_budget_range CHECK ((budget_min IS NULL) = (budget_max IS NULL) AND budget_min <= budget_max)
);

CREATE TABLE prompt.models (
    name              text PRIMARY KEY,
    -- Its CHECK, models_wire_valid, asks the library (finalize.sql).
    wire              text NOT NULL,
    tokenizer         text NOT NULL DEFAULT 'cl100k_base'
                      CONSTRAINT models_tokenizer_valid CHECK (tokenizer IN ('cl100k_base', 'o200k_base')),
    advisory_window   int CONSTRAINT models_advisory_window_positive CHECK (advisory_window > 0),
    hard_window       int CONSTRAINT models_hard_window_positive CHECK (hard_window > 0),
    native_images     bool NOT NULL DEFAULT false,
    token_margin      real NOT NULL DEFAULT 0
                      CONSTRAINT models_token_margin_valid CHECK (token_margin >= 0 AND token_margin <= 10),
    max_output_tokens int NOT NULL DEFAULT 4096
                      CONSTRAINT models_max_output_tokens_positive CHECK (max_output_tokens > 0),
    cache_ttl         text NOT NULL DEFAULT '5m'
                      CONSTRAINT models_cache_ttl_valid CHECK (cache_ttl IN ('5m', '1h', '30m', '12h')),
    token_margin_auto bool NOT NULL DEFAULT false,
    request_options   jsonb NOT NULL DEFAULT '{}',
    -- The profile whose rules the model follows; NULL: the profile whose name is the
    -- model's name or the longest prefix of it (dated ids), if any.
    profile           text REFERENCES prompt.model_profiles (name) ON UPDATE CASCADE ON DELETE SET NULL,
    -- The TTL of the breakpoints after the stable prefix (history, a run's rounds); NULL:
    -- cache_ttl. Never longer than cache_ttl (a provider reads the longer TTLs first).
    history_cache_ttl text
                      CONSTRAINT models_history_cache_ttl_valid CHECK (history_cache_ttl IN ('5m', '1h', '30m', '12h')),
    CONSTRAINT models_history_cache_ttl_not_longer
        CHECK (array_position(ARRAY['5m', '30m', '1h', '12h'], history_cache_ttl)
               <= array_position(ARRAY['5m', '30m', '1h', '12h'], cache_ttl)),
    -- Whose dialect of the wire the request speaks (a compatible provider on chat, Vertex
    -- AI on anthropic and gemini); NULL: the profile's provider where the wire speaks it,
    -- else the wire's maker. Its CHECK, models_provider_valid, asks the library
    -- (finalize.sql).
    provider          text
);

CREATE TABLE prompt.users (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    handle           text NOT NULL
                     CONSTRAINT users_handle_key UNIQUE
                     CONSTRAINT users_handle_valid CHECK (handle ~ '^[a-z0-9_][a-z0-9_.-]{0,63}$'),
    display_name     text,
    kind             text NOT NULL CONSTRAINT users_kind_valid CHECK (kind IN ('human', 'agent')),
    steward_id       uuid REFERENCES prompt.users (id) ON DELETE SET NULL,
    prompt_mechanism text NOT NULL DEFAULT 'default'
                     CONSTRAINT users_prompt_mechanism_valid CHECK (prompt_mechanism IN ('default', 'assembly', 'raw')),
    prompt_template  jsonb,
    model            text REFERENCES prompt.models (name) ON UPDATE CASCADE ON DELETE SET NULL,
    reasoning_replay bool NOT NULL DEFAULT false,
    application      text,
    request_options  jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT users_steward_is_for_agents CHECK (steward_id IS NULL OR kind = 'agent')
);

CREATE TABLE prompt.workspaces (
    id       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name     text,
    timezone text NOT NULL DEFAULT 'UTC',
    paths    text[]
);

CREATE TABLE prompt.documents (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid REFERENCES prompt.users (id) ON DELETE CASCADE,
    workspace_id uuid REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    name         text NOT NULL,
    role         text NOT NULL DEFAULT 'system'
                 CONSTRAINT documents_role_valid CHECK (role IN ('system', 'developer', 'user')),
    body         text NOT NULL,
    version      int NOT NULL DEFAULT 1,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT documents_one_owner CHECK ((user_id IS NULL) <> (workspace_id IS NULL)),
    CONSTRAINT documents_name_valid
        CHECK (name IN ('system_prompt', 'character', 'persona') OR name ~ '^[A-Z][A-Z0-9_]{0,31}$'),
    -- character is the workspace's slot; a workspace holds no other document.
    CONSTRAINT documents_character_is_the_workspaces CHECK ((name = 'character') = (workspace_id IS NOT NULL)),
    CONSTRAINT documents_owner_name_key UNIQUE NULLS NOT DISTINCT (user_id, workspace_id, name)
);

CREATE TABLE prompt.conversations (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id   uuid NOT NULL REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    kind           text NOT NULL DEFAULT 'conversation'
                   CONSTRAINT conversations_kind_valid
                   CHECK (kind IN ('standalone', 'conversation', 'child', 'scheduled', 'side')),
    answerer_id    uuid REFERENCES prompt.users (id),
    creator_id     uuid REFERENCES prompt.users (id),
    parent_id      uuid REFERENCES prompt.conversations (id) ON DELETE SET NULL,
    origin_channel text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- A Side's captured turn, in parent_id (no foreign key: turns reference
    -- conversations, and pg_dump restores the two tables one after the other).
    captured_turn_id uuid,
    -- The captured turn as it stood when the Side was created (filled in by the
    -- capture trigger): its newest round then, its content, its in-turn summary.
    captured_round         int,
    captured_content       text,
    captured_summary       text,
    captured_summary_round int,
    -- What the requests of the captured turn had cleared of its rounds then (the records
    -- of rounds.cleared, oldest first; NULL: none).
    captured_cleared       jsonb,
    CONSTRAINT conversations_capture_is_a_sides
        CHECK (captured_turn_id IS NULL OR kind = 'side')
);

-- Prompt history (README, "Prompt history"): every version of every prompt document, as
-- each write of prompt.documents left it, kept by pgprompt (append-only: refused but to
-- pgprompt's own writer and a restore; a document's history goes with the document). A
-- seal names the versions it compiled from (turns.sealed_versions); this is their text.
CREATE TABLE prompt.document_versions (
    -- No foreign key: a document's history outlives the document (what a seal names stays
    -- readable, and a document written again under its id continues it).
    document_id uuid NOT NULL,
    version     int NOT NULL,
    role        text NOT NULL,
    body        text NOT NULL,
    written_at  timestamptz NOT NULL DEFAULT now(),
    written_by  regrole,
    PRIMARY KEY (document_id, version)
);

CREATE TABLE prompt.memories (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    scope           text NOT NULL
                    CONSTRAINT memories_scope_valid
                    CHECK (scope IN ('agent', 'workspace', 'speaker', 'user', 'conversation')),
    user_id         uuid REFERENCES prompt.users (id) ON DELETE CASCADE,
    speaker_id      uuid REFERENCES prompt.users (id) ON DELETE CASCADE,
    workspace_id    uuid REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    conversation_id uuid REFERENCES prompt.conversations (id) ON DELETE CASCADE,
    path            text NOT NULL CONSTRAINT memories_path_valid CHECK (path <> '' AND path !~ '^/'),
    body            text NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT memories_owner_fits_scope CHECK (CASE scope
        WHEN 'agent'        THEN user_id IS NOT NULL
        WHEN 'workspace'    THEN workspace_id IS NOT NULL
        WHEN 'speaker'      THEN user_id IS NOT NULL AND speaker_id IS NOT NULL
        WHEN 'user'         THEN user_id IS NOT NULL
        WHEN 'conversation' THEN conversation_id IS NOT NULL
    END),
    CONSTRAINT memories_path_key
        UNIQUE NULLS NOT DISTINCT (scope, user_id, speaker_id, workspace_id, conversation_id, path)
);

CREATE TABLE prompt.skills (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    source       text NOT NULL
                 CONSTRAINT skills_source_valid
                 CHECK (source IN ('runner', 'application', 'agent', 'workspace', 'speaker', 'user')),
    user_id      uuid REFERENCES prompt.users (id) ON DELETE CASCADE,
    speaker_id   uuid REFERENCES prompt.users (id) ON DELETE CASCADE,
    workspace_id uuid REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    runner       text,
    application  text,
    name         text NOT NULL CONSTRAINT skills_name_valid CHECK (name <> ''),
    description  text NOT NULL DEFAULT '',
    executor_id  uuid,
    recall_only  bool NOT NULL DEFAULT false,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT skills_owner_fits_source CHECK (CASE source
        WHEN 'runner'      THEN runner IS NOT NULL
        WHEN 'application' THEN application IS NOT NULL
        WHEN 'agent'       THEN user_id IS NOT NULL
        WHEN 'workspace'   THEN workspace_id IS NOT NULL
        WHEN 'speaker'     THEN user_id IS NOT NULL AND speaker_id IS NOT NULL
        WHEN 'user'        THEN user_id IS NOT NULL
    END),
    CONSTRAINT skills_name_key
        UNIQUE NULLS NOT DISTINCT (source, runner, application, user_id, speaker_id, workspace_id, name)
);

CREATE TABLE prompt.turns (
    conversation_id        uuid NOT NULL REFERENCES prompt.conversations (id) ON DELETE CASCADE,
    id                     uuid NOT NULL DEFAULT gen_random_uuid(),
    -- The timeline order. Written without it, a turn lands after every earlier turn of
    -- its conversation (the write trigger: max + 1, one writer per conversation at a time).
    seq                    bigint NOT NULL,
    kind                   text NOT NULL CONSTRAINT turns_kind_valid CHECK (kind IN ('message', 'reply', 'summary')),
    role                   text CONSTRAINT turns_role_valid CHECK (role IN ('user', 'assistant', 'system', 'developer')),
    author_id              uuid REFERENCES prompt.users (id),
    answerer_id            uuid REFERENCES prompt.users (id),
    poster_id              uuid REFERENCES prompt.users (id),
    content                text,
    prompt                 text,
    origin                 text CONSTRAINT turns_origin_valid CHECK (origin IN ('task_result', 'child')),
    sender_conversation_id uuid,
    mode                   text NOT NULL DEFAULT 'direct_reply'
                           CONSTRAINT turns_mode_valid CHECK (mode IN ('direct_reply', 'run')),
    inline                 jsonb NOT NULL DEFAULT '[]',
    variables              jsonb NOT NULL DEFAULT '{}',
    input                  jsonb,
    tools                  jsonb,
    callables              jsonb NOT NULL DEFAULT '[]',
    model                  text REFERENCES prompt.models (name) ON UPDATE CASCADE,
    history                jsonb,
    memory_user_id         uuid REFERENCES prompt.users (id),
    summary                text,
    summary_round          int CONSTRAINT turns_summary_round_positive CHECK (summary_round >= 1),
    created_at             timestamptz NOT NULL DEFAULT now(),
    -- Token counts of content and prompt as rendered bare, one slot per tokenizer
    -- ({cl100k_base, o200k_base}), kept by the write trigger so a compile sums integers.
    content_tokens         int[],
    prompt_tokens          int[],
    -- Sealed by the first compile_turn; never changed after. The body itself is in
    -- prompt.seals and prompt.seal_nodes.
    sealed_at              timestamptz,
    sealed_preface         jsonb,
    sealed_catalog         text,
    sealed_mechanism       text,
    sealed_versions        jsonb,
    -- The history entries of this turn when read by its own answerer (seed or in-turn
    -- summary, rounds, answer), kept by the write triggers: counting the history a
    -- budget leaves out needs no turn text.
    own_entries            int NOT NULL DEFAULT 1,
    -- The turn's request options (tool_choice, temperature, ...), over the agent's and
    -- the model's.
    request_options        jsonb NOT NULL DEFAULT '{}',
    -- Set by the first compile_turn whose seal sent the turn (a later turn of its
    -- conversation was sealed): from then on what was sent of it never changes without a
    -- permitted history rewrite. sent_digest is the SHA-256 of what was sent of it, which
    -- verify_seals checks; NULL again when its answer arrived after the seal (the next
    -- seal writes it anew).
    sent_at                timestamptz,
    sent_digest            bytea,
    PRIMARY KEY (conversation_id, id),
    CONSTRAINT turns_seq_key UNIQUE (conversation_id, seq) INCLUDE (kind, answerer_id, own_entries),
    CONSTRAINT turns_message_has_role CHECK (kind <> 'message' OR role IS NOT NULL)
);

-- History starts at the newest summary turn: found without reading the timeline.
CREATE INDEX turns_summaries ON prompt.turns (conversation_id, seq) WHERE kind = 'summary';
-- A turn id given with the wrong conversation is told apart from one that does not exist.
CREATE INDEX turns_id ON prompt.turns (id);

CREATE TABLE prompt.rounds (
    conversation_id uuid NOT NULL,
    turn_id         uuid NOT NULL,
    n               int NOT NULL CONSTRAINT rounds_n_positive CHECK (n >= 1),
    assistant       jsonb NOT NULL DEFAULT '[]',
    results         jsonb NOT NULL DEFAULT '[]',
    steers          jsonb NOT NULL DEFAULT '[]',
    aborted         bool NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- Set by the first compile_turn whose request carried this round: from then on the
    -- round is what was sent, and it never changes.
    sent_at         timestamptz,
    -- The SHA-256 of what the first request that carried the round sent of it (its
    -- assistant, results, steers and abort): every later read checks it.
    sent_digest     bytea,
    -- The estimate of that request (what record_response keeps beside the usage of the
    -- response that answers it, without compiling the turn again).
    sent_estimate   int,
    -- What that request cleared (request_options.clear_tool_results), written with
    -- sent_at: {"placeholder", "results": [{"round", "call_id"}]}; NULL: nothing.
    cleared         jsonb,
    -- On the newest round a continuation carried, that request's cache layout (core
    -- laid.rs): what the cache report and explain_turn's prediction read, never compiling
    -- the request again. NULL on other rounds, a stateful turn's, and before 0.6.
    sent_layout     bytea,
    PRIMARY KEY (conversation_id, turn_id, n),
    FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns (conversation_id, id) ON DELETE CASCADE
);

-- Sealed bodies, stored once per element (docs/design.md, "Seals"). A node is one piece
-- of a body: an element of its list (a message, an input item, a content) or the text
-- around the list. Chain nodes point to the next older element; a seal is its head,
-- a few leading elements, its newest chain node with a length, and its tail, so
-- consecutive seals share every element they repeat and storage grows linearly.
CREATE TABLE prompt.seal_nodes (
    conversation_id uuid NOT NULL REFERENCES prompt.conversations (id) ON DELETE CASCADE,
    id              bigint NOT NULL,
    parent          bigint,
    digest          bytea NOT NULL,
    body            text NOT NULL,
    -- An element node's cache blocks, cut and counted when its seal was written (core
    -- laid.rs): what the cache report and explain_turn's prediction read, never the text.
    -- NULL for the text around a list and for a node written before 0.6.
    layout          bytea,
    PRIMARY KEY (conversation_id, id),
    CONSTRAINT seal_nodes_parent_digest_key UNIQUE NULLS NOT DISTINCT (conversation_id, parent, digest)
);

CREATE TABLE prompt.seals (
    conversation_id uuid NOT NULL,
    turn_id         uuid NOT NULL,
    sealed_at       timestamptz NOT NULL DEFAULT now(),
    -- What a continuation renders from (mechanism, wire, model, answerer, cache
    -- breakpoints, preface, estimate, where an in-turn summary cuts), never current rows.
    frozen          jsonb NOT NULL,
    head            bigint,
    lead            bigint[] NOT NULL DEFAULT '{}',
    chain           bigint,
    chain_length    int NOT NULL DEFAULT 0,
    chain_low       bigint,
    tail            bigint,
    -- The edits that put this body's cache breakpoints into its shared elements.
    patches         jsonb NOT NULL DEFAULT '[]',
    -- The body's SHA-256 and length in bytes, kept when prune_seals drops the body.
    digest          bytea NOT NULL,
    bytes           int NOT NULL,
    pruned_at       timestamptz,
    -- The SHA-256 of frozen's jsonb text: what every request of the turn is rendered
    -- from is checked like its bytes.
    frozen_digest   bytea,
    -- The SHA-256 of the body's pieces (its nodes' digests and its patches): with each
    -- node checked against its own digest, it covers the body without hashing it whole.
    pieces_digest   bytea,
    -- The seal's own cache blocks (the text around its list, the elements its patches
    -- mark), written with it; NULL for a seal written before 0.6 (the report reads its text).
    layout          bytea,
    PRIMARY KEY (conversation_id, turn_id),
    FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns (conversation_id, id) ON DELETE CASCADE
);

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

-- What the provider answered each request of a turn: one row per recorded response
-- (step 0: a direct reply's answer; n: the run's round n it became), with the usage as
-- billed beside the estimate of the request it answered (prompt.model_calibration).
CREATE TABLE prompt.responses (
    conversation_id        uuid NOT NULL,
    turn_id                uuid NOT NULL,
    step                   int NOT NULL CONSTRAINT responses_step_valid CHECK (step >= 0),
    response_id            text,
    -- Its CHECK, responses_shape_valid, asks the library (finalize.sql).
    shape                  text NOT NULL,
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
    -- The SHA-256 of the response as recorded (its jsonb text): a response without an id
    -- recorded again for the same turn is found by it, and written once.
    body_digest            bytea,
    -- Cache writes by TTL, as the provider split them ({"5m": N, "1h": M} on Anthropic,
    -- {"30m": N, "12h": M} on Responses); NULL when it did not.
    cache_creation_by_ttl  jsonb,
    -- What the provider said about the cache against the previous response the request
    -- named (request_options.cache_diagnostics): Anthropic's diagnostics, OpenAI's
    -- prompt_cache_diagnostics, as they came.
    billed_miss            jsonb,
    -- The SHA-256 of the answer as record_response wrote it (a direct reply's content,
    -- a round's assistant as jsonb text): a stateful turn chains to this response only
    -- while that answer still reads so (an edited answer is sent in a full body).
    answer_digest          bytea,
    PRIMARY KEY (conversation_id, turn_id, step),
    CONSTRAINT responses_response_id_key UNIQUE (conversation_id, response_id),
    FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns (conversation_id, id) ON DELETE CASCADE
);
CREATE INDEX responses_compiled_model_idx ON prompt.responses (compiled_model);

-- What a provider's token-count endpoint answered for a request of a turn (record_count):
-- one row per request (step: the newest round it carried, 0 for none), beside the
-- estimate; prompt.model_calibration reads them with billed usage.
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

-- Per model, how the billed prompt compares with the estimate (Anthropic's tokenizer is
-- not public: cl100k counts are off for Claude); token_margin_auto compiles with the p95.
-- security_invoker: it sees the responses the caller's row-level security lets it see.
-- Counts a provider's count endpoint answered (prompt.counts) are read beside billed
-- usage. A ratio outside 0.1-10 is no tokenizer's difference (a response of another request, a
-- typing error, a poisoned row): it is set aside, so no single row can make every estimate
-- of a model exceed its window.
CREATE VIEW prompt.model_calibration WITH (security_invoker = true) AS
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

-- Tenancy (README, "Security"; the policies are in finalize.sql, src/pg/tenancy.rs decides
-- who they confine). Once an administrator turned tenancy on (prompt.set_tenancy, a row of
-- prompt.tenancy), every role is confined to the workspaces it is listed for here — none,
-- for a role listed nowhere — unless it administers the extension (its owner, a role in
-- prompt.administrators, a superuser or BYPASSRLS role). With tenancy off, grants decide.
-- A row names its role by name (what a dump keeps) and by OID, stamped from the name
-- whenever the row is written (a restore included): a renamed role keeps what it is, a
-- new role with an old name gains nothing.
CREATE TABLE prompt.tenants (
    role_name    name NOT NULL,
    workspace_id uuid NOT NULL REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    role_oid     oid,
    PRIMARY KEY (role_name, workspace_id)
);
CREATE INDEX tenants_role_oid ON prompt.tenants (role_oid);

-- Administrators: roles that read and write every tenant's rows (their grants decide),
-- beside the extension's owner and the roles that bypass row-level security.
CREATE TABLE prompt.administrators (
    role_name name PRIMARY KEY,
    role_oid  oid
);

-- The people and agents of a workspace: what its tenants see of prompt.users (and their
-- documents, memory and skills). A user in several workspaces (an agent serving two
-- tenants) is read by each and written by none of them.
CREATE TABLE prompt.workspace_members (
    workspace_id uuid NOT NULL REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES prompt.users (id) ON DELETE CASCADE,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user ON prompt.workspace_members (user_id);

-- Whether tenancy is on: one row, written by prompt.set_tenancy (an administrator's), kept
-- by pg_dump. Declared, never inferred from what the other tenancy tables hold: emptying
-- prompt.tenants leaves every unlisted role confined to nothing.
CREATE TABLE prompt.tenancy (
    enabled_at timestamptz NOT NULL DEFAULT now(),
    enabled_by name NOT NULL
);
CREATE UNIQUE INDEX tenancy_one_row ON prompt.tenancy ((true));

-- pg_dump keeps every row of every table: the extension's tables are its users' data.
SELECT pg_catalog.pg_extension_config_dump('prompt.models', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.users', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.workspaces', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.documents', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.conversations', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.memories', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.skills', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.turns', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.rounds', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.seal_nodes', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.seals', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.seals_02', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.responses', '');
-- Only the profiles users add: the shipped ones come with the extension's script.
SELECT pg_catalog.pg_extension_config_dump('prompt.model_profiles', 'WHERE NOT shipped');
SELECT pg_catalog.pg_extension_config_dump('prompt.tenants', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.workspace_members', '');
-- 0.5's tables, after 0.4's (the order an update registers them in).
SELECT pg_catalog.pg_extension_config_dump('prompt.counts', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.administrators', '');
-- 0.6's.
SELECT pg_catalog.pg_extension_config_dump('prompt.tenancy', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.document_versions', '');
