-- count_tokens: tiktoken's counts, ordinary text, never an error on valid text.
SELECT prompt.count_tokens('hello world') AS cl100k, prompt.count_tokens('hello world', 'o200k_base') AS o200k;
SELECT prompt.count_tokens('<|endoftext|>') AS special_spelling_is_text;
SELECT prompt.count_tokens('日本語のテキスト') AS cl100k, prompt.count_tokens('日本語のテキスト', 'o200k_base') AS o200k;
SELECT prompt.count_tokens(repeat(' ', 1000000)) > 0 AS a_million_spaces;
SELECT prompt.count_tokens(repeat('{', 65536)) > 0 AS braces;
\set VERBOSITY default
SELECT prompt.count_tokens('x', 'gpt2');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT provolatile, proparallel FROM pg_proc WHERE oid = 'prompt.count_tokens(text, text)'::regprocedure;
