-- The model profiles pgprompt ships (README, "Model profiles"): the current models of the
-- three providers and the rules each enforces, as their SDKs (anthropic 2.17, openai
-- 3.63, google-genai 3.6.1) and published references give them; scripts/catalog.py checks
-- that every id those SDKs list resolves here, on the wires they list it for. The update scripts run
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
    ('gpt-6-astra',   '{"name": "gpt-6-astra-healthcare", "wires": ["responses"]}'),
    ('gpt-6-astra',   '{"name": "gpt-6.2-astra-healthcare", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-6.1-sol-healthcare", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-6.2-sol-healthcare", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-6-cyber", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-6-rosalind", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-rosalind-research", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-daybreak-blue-latest", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-daybreak-red-latest", "wires": ["responses"]}'),
    ('gpt-4o',        '{"name": "computer-use-preview", "wires": ["responses"], "hard_window": 8192, "max_output_tokens": 1024}'),
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
    ('gemini-3.8-flash', '{"name": "gemini-3.8-flash-lite-tts", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    -- The aliases google-genai 3.6.1 lists ("Latest release of Gemini Flash", "...
    -- Flash-Lite", "... Pro"): the newest of each line it lists.
    ('gemini-3.8-flash',       '{"name": "gemini-flash-latest"}'),
    ('gemini-3.5-flash-lite',  '{"name": "gemini-flash-lite-latest"}'),
    ('gemini-3.1-pro-preview', '{"name": "gemini-pro-latest"}'),
    -- google-genai 3.6.1's other generateContent ids: images, speech, music, transcription,
    -- robotics, omni and the Gemma open models, each on its nearest family's window (the
    -- SDK gives none; prompt.import_models corrects it), without thinking but the robotics
    -- reasoners'.
    ('gemini-2.5-flash', '{"name": "gemini-3-pro-image", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-2.5-flash', '{"name": "gemini-3.1-flash-image", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-2.5-flash', '{"name": "gemini-3.1-flash-lite-image", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-2.5-flash', '{"name": "gemini-nano-banana-2.1", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-2.5-flash', '{"name": "nano-banana-pro-preview", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-3.1-flash-tts-preview", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-3.5-transcribe", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-omni-1.2-flash", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-omni-1.1-flash", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-omni-flash-preview", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.5-flash', '{"name": "gemini-robotics-er-1.6-preview"}'),
    ('gemini-3.5-flash', '{"name": "gemini-robotics-er-2-preview"}'),
    ('gemini-3.5-flash-lite', '{"name": "gemma-4-26b-a4b-it", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.5-flash-lite', '{"name": "gemma-4-31b-it", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "lyria-3-clip-preview", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "lyria-3-pro-preview", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "lyria-3.5", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}')
  ) AS v(base, changes) ON p.name = v.base
ON CONFLICT (name) DO NOTHING;

-- Lifecycle: the day a provider stops serving a model and the model it names instead, each
-- with its source (model_profiles.lifecycle_source): anthropic's _data/deprecated_models.py
-- (DEPRECATED_MODELS), the "Deprecated values" of openai's ChatModel and of the Responses
-- model field. google-genai gives no date and still lists gemini-2.5-pro, -flash and
-- -flash-lite: the Gemini rows carry no lifecycle (0.5's days had no source; an operator who
-- reads one on Google's deprecations page sets it with its lifecycle_source, or
-- import_models does). The replacement is the provider's where it names one, else the
-- family's current model, served on the same wire and by the same provider. deprecated_at
-- is left to prompt.import_models (Anthropic's list gives it). A compile for a model past a
-- sourced retires_at is refused (model_retired); one whose retirement is announced, or that
-- is deprecated, compiles with a NOTICE.
UPDATE prompt.model_profiles p
   SET retires_at = v.retires_at::date, replacement = v.replacement,
       lifecycle_source = CASE v.source
           WHEN 'anthropic' THEN 'anthropic 2.17.0: anthropic/_data/deprecated_models.py, DEPRECATED_MODELS'
           WHEN 'anthropic-2.14' THEN 'anthropic 2.14.0: anthropic/_data/deprecated_models.py, DEPRECATED_MODELS (the model left the SDK in 2.15.0)'
           WHEN 'chat' THEN 'openai 3.63.0: openai/types/shared/chat_model.py, ChatModel ("Deprecated values")'
           WHEN 'responses' THEN 'openai 3.63.0: openai/types/responses/response_compact_params.py, model ("Deprecated values")'
       END
  FROM (VALUES
    ('claude-mythos-preview', '2026-06-30', 'claude-mythos-5', 'anthropic'),
    ('claude-opus-4-5', '2027-01-22', 'claude-opus-4-8', 'anthropic'),
    ('claude-sonnet-4-5', '2026-11-30', 'claude-sonnet-4-6', 'anthropic-2.14'),
    ('gpt-5', '2026-12-11', 'gpt-5.5', 'chat'),
    ('o3', '2026-12-11', 'gpt-5.5', 'chat'),
    ('gpt-5.1', '2027-04-01', 'gpt-5.5', 'chat'),
    ('gpt-5.4-nano', '2027-04-01', 'gpt-5.6-luna', 'chat'),
    ('gpt-5.1-codex', '2026-07-23', 'gpt-5.5', 'chat'),
    ('gpt-5.3-chat-latest', '2026-08-10', 'gpt-5.5', 'chat'),
    ('gpt-5.2-chat-latest', '2026-08-10', 'gpt-5.5', 'chat'),
    ('gpt-5.1-chat-latest', '2026-07-23', 'gpt-5.5', 'chat'),
    ('gpt-5-chat-latest', '2026-07-23', 'gpt-5.5', 'chat'),
    ('gpt-4.1', '2027-01-14', 'gpt-5.4', 'chat'),
    ('gpt-4.1-nano', '2026-10-23', 'gpt-5.4-nano', 'chat'),
    ('gpt-4o', '2027-01-14', 'gpt-5.4-mini', 'chat'),
    ('gpt-4o-2024-05-13', '2026-10-23', 'gpt-5.4-mini', 'chat'),
    ('gpt-4o-audio-preview', '2026-05-07', 'gpt-audio-mini', 'chat'),
    ('gpt-4o-audio-preview-2024-10-01', '2025-10-10', 'gpt-audio-mini', 'chat'),
    ('gpt-4o-mini-audio-preview', '2026-05-07', 'gpt-audio-mini', 'chat'),
    ('gpt-4o-search-preview', '2026-07-23', 'gpt-5.4-mini', 'chat'),
    ('gpt-4o-mini-search-preview', '2026-07-23', 'gpt-5.4-mini', 'chat'),
    ('gpt-audio-mini', '2027-01-20', NULL, 'chat'),
    ('chatgpt-4o-latest', '2026-02-17', 'gpt-5.4-mini', 'chat'),
    ('codex-mini-latest', '2026-02-12', 'gpt-5.5', 'chat'),
    ('o4-mini', '2026-10-23', 'gpt-5.4-mini', 'chat'),
    ('o3-mini', '2026-10-23', 'gpt-5.4-mini', 'chat'),
    ('o1', '2026-10-23', 'gpt-5.5', 'chat'),
    ('o1-mini', '2025-10-27', 'gpt-5.4-mini', 'chat'),
    ('o1-preview', '2025-07-28', 'gpt-5.5', 'chat'),
    ('gpt-4', '2026-10-23', 'gpt-5.4', 'chat'),
    ('gpt-4-turbo', '2026-10-23', 'gpt-5.4', 'chat'),
    ('gpt-4-0314', '2026-03-26', 'gpt-5.4', 'chat'),
    ('gpt-4-turbo-preview', '2026-03-26', 'gpt-5.4', 'chat'),
    ('gpt-4-0125-preview', '2026-03-26', 'gpt-5.4', 'chat'),
    ('gpt-4-vision-preview', '2024-12-06', 'gpt-5.4', 'chat'),
    ('gpt-4-32k', '2025-06-06', 'gpt-5.4', 'chat'),
    ('gpt-3.5-turbo', '2026-10-23', 'gpt-5.4-nano', 'chat'),
    ('gpt-3.5-turbo-1106', '2026-09-28', 'gpt-5.4-nano', 'chat'),
    ('gpt-3.5-turbo-16k', '2024-09-13', 'gpt-5.4-nano', 'chat'),
    ('gpt-3.5-turbo-0301', '2024-09-13', 'gpt-5.4-nano', 'chat'),
    ('gpt-3.5-turbo-0613', '2024-09-13', 'gpt-5.4-nano', 'chat'),
    ('o3-deep-research', '2026-07-23', 'gpt-5.5', 'responses'),
    ('o4-mini-deep-research', '2026-07-23', 'gpt-5.5', 'responses'),
    ('computer-use-preview', '2026-07-23', 'gpt-5.5', 'responses'),
    ('gpt-5-codex', '2026-07-23', 'gpt-5.5', 'responses'),
    ('gpt-5.1-codex-max', '2026-07-23', 'gpt-5.5', 'responses'),
    ('o1-pro', '2026-10-23', 'gpt-5.5', 'responses'),
    ('o3-pro', '2026-12-11', 'gpt-5.5', 'responses'),
    ('gpt-5-pro', '2026-12-11', 'gpt-5.5-pro', 'responses')
  ) AS v(name, retires_at, replacement, source)
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
-- with their family's rules and lifecycle (the replacement named by its Bedrock id);
-- Converse returns no cache diagnostics.
INSERT INTO prompt.model_profiles
SELECT (pg_catalog.jsonb_populate_record(p, pg_catalog.jsonb_build_object(
            'name', 'anthropic.' || p.name, 'wires', '["converse"]'::jsonb, 'cache_diagnostics', false,
            -- The replacement on the same wire: the Bedrock id of the Anthropic model named.
            'replacement', 'anthropic.' || p.replacement))).*
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

-- Compatible providers of the chat wire (docs/guide.md, "Compatible providers"): a model
-- row names its provider (models.provider) and speaks its dialect; these are the models
-- whose rules a first-party page gives. Anything else a host serves, its own model list
-- brings in (prompt.import_models('mistral' | 'groq' | ..., list): windows, output limits,
-- Mistral's deprecations), as that provider's.
-- DeepSeek (api-docs.deepseek.com, "Models & Pricing", the copy of 2026-04-26, read
-- 2026-12-05): V4 Flash and Pro, 1M context, 384K output, thinking on by default with a
-- reasoning effort of high or max; deepseek-chat and deepseek-reasoner are V4 Flash's
-- aliases (without and with thinking), not served after 2026-07-24. No prompt cache key
-- (DeepSeek caches by prefix on its own).
-- gpt-oss (developers.openai.com/api/docs/models/gpt-oss-120b and -20b, read 2026-12-05):
-- OpenAI's open-weight models as the hosts name them (Groq, OpenRouter and Together:
-- openai/gpt-oss-120b; Ollama: gpt-oss:120b), 131,072 tokens in and out, a reasoning effort
-- of low, medium or high; the row names the host (models.provider).
INSERT INTO prompt.model_profiles (name, provider, wires, advisory_window, hard_window, max_output_tokens, tokenizer,
    thinking_modes, thinking_default, efforts, thinking_display, budget_min, budget_max, include_thoughts,
    thinking_with_forced_tool, temperature_max, top_p_max, sampling_together,
    cache_breakpoints, max_breakpoints, min_cache_tokens, cache_ttls, cache_lookback, replays_thinking, shipped)
VALUES
    ('deepseek-v4-pro', 'deepseek', '{chat}', NULL, 1000000, 384000, 'o200k_base',
     '{}', NULL, '{high,max}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 64, '{}', NULL, true, true),
    ('deepseek-v4-flash', 'deepseek', '{chat}', NULL, 1000000, 384000, 'o200k_base',
     '{}', NULL, '{high,max}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 64, '{}', NULL, true, true),
    ('deepseek-chat', 'deepseek', '{chat}', NULL, 1000000, 384000, 'o200k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 64, '{}', NULL, false, true),
    ('deepseek-reasoner', 'deepseek', '{chat}', NULL, 1000000, 384000, 'o200k_base',
     '{}', NULL, '{high,max}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 64, '{}', NULL, true, true),
    ('openai/gpt-oss-120b', 'openai', '{chat}', NULL, 131072, 131072, 'o200k_base',
     '{}', NULL, '{low,medium,high}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true),
    ('openai/gpt-oss-20b', 'openai', '{chat}', NULL, 131072, 131072, 'o200k_base',
     '{}', NULL, '{low,medium,high}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true),
    ('gpt-oss:120b', 'ollama', '{chat}', NULL, 131072, 131072, 'o200k_base',
     '{}', NULL, '{low,medium,high}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true),
    ('gpt-oss:20b', 'ollama', '{chat}', NULL, 131072, 131072, 'o200k_base',
     '{}', NULL, '{low,medium,high}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true)
ON CONFLICT (name) DO NOTHING;
UPDATE prompt.model_profiles
   SET retires_at = '2026-07-24', replacement = 'deepseek-v4-flash',
       lifecycle_source = 'api-docs.deepseek.com, "Models & Pricing" (the copy of 2026-04-26, read 2026-12-05): deepseek-chat and deepseek-reasoner are not served after 2026-07-24'
 WHERE shipped AND name IN ('deepseek-chat', 'deepseek-reasoner');
