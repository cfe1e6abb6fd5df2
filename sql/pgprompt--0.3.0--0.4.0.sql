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
-- * model profiles (prompt.model_profiles, shipped rows replaced by updates): a model
--   follows the profile it names or the longest prefix of its name; request options
--   are checked against it on write and at compile (thinking modes, efforts, displays,
--   budgets, sampling, thinking beside a forced tool); models.cache_ttl takes 30m and
--   12h; responses keep cache writes by TTL;
-- * the turns trigger counts again a write of its own counters; responses.body_digest
--   makes a response without an id recorded twice a no-op; the procedures pin
--   search_path.

CREATE TABLE prompt.model_profiles (
    name                      text PRIMARY KEY CONSTRAINT model_profiles_name_valid CHECK (name <> ''),
    provider                  text NOT NULL
                              CONSTRAINT model_profiles_provider_valid CHECK (provider IN ('anthropic', 'openai', 'google')),
    wires                     text[] NOT NULL
                              CONSTRAINT model_profiles_wires_valid
                              CHECK (wires <> '{}' AND wires <@ ARRAY['anthropic', 'chat', 'responses', 'gemini']),
    advisory_window           int CONSTRAINT model_profiles_advisory_window_positive CHECK (advisory_window > 0),
    hard_window               int CONSTRAINT model_profiles_hard_window_positive CHECK (hard_window > 0),
    max_output_tokens         int CONSTRAINT model_profiles_max_output_tokens_positive CHECK (max_output_tokens > 0),
    tokenizer                 text CONSTRAINT model_profiles_tokenizer_valid CHECK (tokenizer IN ('cl100k_base', 'o200k_base')),
    thinking_modes            text[] NOT NULL DEFAULT '{}'
                              CONSTRAINT model_profiles_thinking_modes_valid CHECK (thinking_modes <@ ARRAY['adaptive', 'enabled', 'disabled']),
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
    CONSTRAINT model_profiles_budget_range CHECK ((budget_min IS NULL) = (budget_max IS NULL) AND budget_min <= budget_max)
);

ALTER TABLE prompt.models DROP CONSTRAINT models_cache_ttl_valid,
    ADD CONSTRAINT models_cache_ttl_valid CHECK (cache_ttl IN ('5m', '1h', '30m', '12h')),
    ADD COLUMN profile text REFERENCES prompt.model_profiles (name) ON UPDATE CASCADE ON DELETE SET NULL;
ALTER TABLE prompt.responses ADD COLUMN body_digest bytea, ADD COLUMN cache_creation_by_ttl jsonb;
ALTER TABLE prompt.workspaces ADD COLUMN paths text[];
ALTER TABLE prompt.conversations ADD COLUMN captured_round int, ADD COLUMN captured_content text,
    ADD COLUMN captured_summary text, ADD COLUMN captured_summary_round int;
-- A Side of 0.3 read its captured turn live: it keeps the turn as it stands now.
UPDATE prompt.conversations c
   SET captured_round = (SELECT max(r.n) FROM prompt.rounds r
                          WHERE r.conversation_id = t.conversation_id AND r.turn_id = t.id),
       captured_content = t.content, captured_summary = t.summary, captured_summary_round = t.summary_round
  FROM prompt.turns t
 WHERE c.kind = 'side' AND t.conversation_id = c.parent_id AND t.id = c.captured_turn_id;

CREATE TABLE prompt.tenants (
    role_name    name NOT NULL,
    workspace_id uuid NOT NULL REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    PRIMARY KEY (role_name, workspace_id)
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

SELECT pg_catalog.pg_extension_config_dump('prompt.model_profiles', 'WHERE NOT shipped');
SELECT pg_catalog.pg_extension_config_dump('prompt.tenants', '');
SELECT pg_catalog.pg_extension_config_dump('prompt.workspace_members', '');

-- The shipped model profiles (sql/profiles.sql).
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
    ('gpt-5.2-pro',  'openai', '{responses}', NULL, 400000, 128000, 'o200k_base',
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
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true);

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
CREATE FUNCTION prompt."_check_options_wire"(
	"level" TEXT,
	"options" TEXT,
	"wire" TEXT,
	"max_output_tokens" INT,
	"model" TEXT,
	"profile" TEXT
) RETURNS void
IMMUTABLE PARALLEL SAFE 
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_check_options_wire_v4_wrapper';
CREATE FUNCTION prompt."skills_for_turn"(
	"conversation_id" uuid,
	"turn_id" uuid
) RETURNS TABLE (
	"callable" TEXT, 
	"source" TEXT, 
	"name" TEXT, 
	"description" TEXT, 
	"recall_only" bool 
)
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'skills_for_turn_wrapper';
CREATE FUNCTION prompt."cache_report"(
	"conversation_id" uuid
) RETURNS TABLE (
	"turn_id" uuid, 
	"step" INT, 
	"input_tokens" INT, 
	"shared_prefix_tokens" INT, 
	"first_difference" jsonb, 
	"predicted_cache_read" INT, 
	"predicted_cache_write" INT, 
	"predicted_uncached" INT, 
	"billed_cache_read" INT, 
	"billed_cache_write" INT 
)
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'cache_report_wrapper';

CREATE OR REPLACE FUNCTION prompt."_history_rewrite_allowed"() RETURNS bool
STRICT VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_history_rewrite_allowed_wrapper';

-- The profile a model follows (its JSON, as core/src/profile.rs reads it): the one its
-- row names, else the one whose name is the model's name or the longest prefix of it.
CREATE FUNCTION prompt._model_profile(model_name text, profile_name text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT row_to_json(p)::text FROM prompt.model_profiles p
     WHERE p.name = coalesce($2, (SELECT q.name FROM prompt.model_profiles q WHERE starts_with($1, q.name)
                                  ORDER BY length(q.name) DESC LIMIT 1))
$$;

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

CREATE OR REPLACE FUNCTION prompt._options_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.request_options IS DISTINCT FROM OLD.request_options THEN
        PERFORM prompt._check_request_options(TG_TABLE_NAME, NEW.request_options::text);
    END IF;
    IF NEW.request_options <> '{}'::jsonb AND NEW.model IS NOT NULL
       AND (TG_OP = 'INSERT' OR NEW.request_options IS DISTINCT FROM OLD.request_options
            OR NEW.model IS DISTINCT FROM OLD.model) THEN
        PERFORM prompt._check_options_wire('agent', NEW.request_options::text, m.wire, m.max_output_tokens,
                                           m.name, prompt._model_profile(m.name, m.profile))
           FROM prompt.models m WHERE m.name = NEW.model;
    END IF;
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION prompt._model_options_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    profile text;
BEGIN
    IF TG_OP = 'INSERT'
       OR NEW.request_options IS DISTINCT FROM OLD.request_options
       OR NEW.wire IS DISTINCT FROM OLD.wire
       OR NEW.max_output_tokens IS DISTINCT FROM OLD.max_output_tokens
       OR NEW.name IS DISTINCT FROM OLD.name
       OR NEW.profile IS DISTINCT FROM OLD.profile THEN
        profile := prompt._model_profile(NEW.name, NEW.profile);
        IF NEW.request_options <> '{}'::jsonb OR profile IS NOT NULL THEN
            PERFORM prompt._check_options_wire('model', NEW.request_options::text, NEW.wire, NEW.max_output_tokens,
                                               NEW.name, profile);
        END IF;
    END IF;
    RETURN NEW;
END
$$;

DROP TRIGGER models_options ON prompt.models;
CREATE TRIGGER models_options BEFORE INSERT OR UPDATE OF request_options, wire, max_output_tokens, name, profile ON prompt.models
    FOR EACH ROW EXECUTE FUNCTION prompt._model_options_write();
DROP FUNCTION prompt._check_options_wire(text, text, text, integer);

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
        ARRAY['model_profiles', 'true', 'false'],
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

COMMENT ON TABLE prompt.model_profiles IS
    'The rules of known models: the wires that serve them, windows and output limit, the thinking modes, efforts, displays and budgets they take, sampling options and their ranges, cache rules (breakpoint spelling and count, minimum cached prefix, TTLs, lookback). Shipped rows come with the extension and its updates; add your own and name them in models.profile.';
COMMENT ON COLUMN prompt.models.profile IS
    'The profile the model follows; NULL: the profile named like the model, or by the longest prefix of its name (dated ids). A model without one keeps its wire''s rules.';
COMMENT ON FUNCTION prompt._model_profile(text, text) IS
    'Internal: the profile a model follows, as JSON (the one it names, else the longest prefix of its name).';
COMMENT ON FUNCTION prompt._history_rewrite_allowed() IS
    'Internal: whether the transaction set pgprompt.allow_history_rewrite = on, as a role that may (a superuser, or one granted SET on it); 42501 for one that may not.';
COMMENT ON FUNCTION prompt._in_cascade() IS
    'Internal: whether the statement runs as a foreign-key action (a conversation''s or a turn''s delete reaching what belongs to it).';
COMMENT ON FUNCTION prompt._replayed_by_later_seal(uuid, bigint) IS
    'Internal: whether a turn later than the given seq is sealed (so it replayed the earlier turns), looked up as the tables'' owner.';
COMMENT ON FUNCTION prompt._seal_storage_guard(text, text) IS
    'Internal: refuses an UPDATE, DELETE or TRUNCATE of seal storage that is neither pgprompt''s own writer nor a foreign-key cascade.';
COMMENT ON TABLE prompt.tenants IS
    'Tenancy: a role listed here is confined to its workspaces (it reads their rows and the shared ones, and writes only rows no other tenant''s compile reads). Managed by the extension''s owner; kept by pg_dump, and the policies come back with the extension.';
COMMENT ON TABLE prompt.workspace_members IS
    'The people and agents of each workspace: what its tenants read of prompt.users and their documents, memory and skills. A user in two workspaces is read by both tenants and written by neither.';
COMMENT ON FUNCTION prompt._tenant_writes_user(uuid) IS
    'Internal (tenancy policies): whether the current tenant may write the rows of this user (a member of its workspaces only), looked up past row-level security.';
COMMENT ON FUNCTION prompt._seal_storage_write() IS
    'Internal trigger: seal storage (seals, seal_nodes, seals_02) changes only through pgprompt or a cascade.';
COMMENT ON FUNCTION prompt._turns_delete() IS
    'Internal trigger: refuses deleting a sealed turn, or one a later seal replayed, unless a permitted pgprompt.allow_history_rewrite is on or the whole conversation goes.';
COMMENT ON FUNCTION prompt.verify_seals(uuid) IS
    'For an auditor: every seal (of one conversation, or of every one the caller can see) whose bytes do not read back as sealed, with the problem (missing, a lost node, pointers that do not fit, bytes that do not match the digest). Pruned bodies are not checked.';
COMMENT ON FUNCTION prompt.memo_stats() IS
    'This backend''s token-count memo as the calling role sees it (each role finds only its own counts): its entries, the capacity (pgprompt.memo_capacity), its lookups answered from the memo and its lookups that counted.';
COMMENT ON FUNCTION prompt._turns_write() IS
    'Internal trigger: numbers a turn written without seq; refuses changes to a sealed turn, a reply without poster_id, a message without role, and invalid inline entries, variables, history intent, input, tools, callables or request options; stores token counts and entry counts.';
COMMENT ON FUNCTION prompt._check_options_wire(text, text, text, integer, text, text) IS
    'Internal: the write-time checks of one level''s request options (a model''s, an agent''s or a turn''s) against the wire, max_output_tokens and profile of the model it names.';
COMMENT ON FUNCTION prompt._model_options_write() IS
    'Internal trigger: refuses request options of a model that are invalid, that its wire cannot carry or that its profile refuses, and a model its profile does not serve on its wire or with its max_output_tokens.';
COMMENT ON FUNCTION prompt._conversations_capture() IS
    'Internal trigger: a Side answers as its captured turn''s answerer (filled in when NULL, refused when another) and keeps the captured turn as it stood (captured_round, captured_content, captured_summary, captured_summary_round).';
COMMENT ON COLUMN prompt.conversations.captured_round IS
    'A Side''s captured turn as it stood at the capture: its newest round then (NULL: none). Rounds written after are not the Side''s. Filled in by the capture trigger.';
COMMENT ON COLUMN prompt.conversations.captured_content IS
    'A Side''s captured turn as it stood at the capture: its content (the answer) then. Filled in by the capture trigger.';
COMMENT ON COLUMN prompt.conversations.captured_summary IS
    'A Side''s captured turn as it stood at the capture: its in-turn summary then. Filled in by the capture trigger.';
COMMENT ON COLUMN prompt.conversations.captured_summary_round IS
    'A Side''s captured turn as it stood at the capture: the round its in-turn summary starts from. Filled in by the capture trigger.';
COMMENT ON FUNCTION prompt.skills_for_turn(uuid, uuid) IS
    'The complete effective skill set of a turn''s callables (a skill_view backend): what its catalog lists, then the recall-only skills, each with its callable, source, name and description, as the skills stand now.';
COMMENT ON COLUMN prompt.workspaces.paths IS
    'The workspace''s paths: when set, the runtime block renders a line "Workspace paths: a, b".';
COMMENT ON FUNCTION prompt.cache_report(uuid) IS
    'A row per request the conversation sent (each sealed first request, step 0, and each continuation, step = the newest round it carried), in order: its input tokens, the prefix it shares with the request before it, where it first differs and why (tools, system, trim, messages or model), and what the provider''s cache should read, write and leave uncached under the model''s rules (breakpoints, lookback, minimum prefix, TTL from the times sent), beside the cache read and write billed.';
COMMENT ON FUNCTION prompt.explain_turn(uuid, uuid) IS
    'How the body is made: mechanism, model, wire, whether sealed, the compiled messages, cache breakpoints, the preface, the full estimate, a stateful turn''s chain (stateful) and what the provider''s cache should do with it sent now (cache: as prompt.cache_report predicts). Never raises for a budget problem.';

-- An in-turn summary of a direct reply now stands in for its answer too: its entry
-- count is recounted (the trigger counts own_entries whenever it is written).
UPDATE prompt.turns SET own_entries = -1
 WHERE kind = 'reply' AND mode = 'direct_reply' AND coalesce(summary, '') <> '';
