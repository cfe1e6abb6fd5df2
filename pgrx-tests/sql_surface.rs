// `#[pg_test]`s of the SQL surface, included into `mod tests` (schema `tests`) by
// src/lib.rs. Each runs in its own transaction, rolled back after.
//
// Refusals are asserted by SQLSTATE through `tests.outcome(sql)`, which runs the
// statement in a subtransaction and returns 'ok' or 'SQLSTATE message'.

use pgrx::prelude::*;

const OUTCOME: &str = r#"
CREATE OR REPLACE FUNCTION tests.outcome(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    state text;
    msg text;
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    RETURN state || ' ' || msg;
END
$$;
"#;

fn outcome(sql: &str) -> String {
    Spi::run(OUTCOME).expect("helper created");
    Spi::get_one_with_args::<String>("SELECT tests.outcome($1)", &[sql.into()])
        .expect("outcome runs")
        .expect("outcome returns text")
}

fn one<T: pgrx::FromDatum + pgrx::IntoDatum>(sql: &str) -> Option<T> {
    Spi::get_one::<T>(sql).expect("query runs")
}

/// Asserts the statement is refused with `sqlstate` and a message starting `name`.
fn assert_refused(sql: &str, sqlstate: &str, name: &str) {
    let got = outcome(sql);
    let want = format!("{sqlstate} {name}");
    assert!(got.starts_with(&want), "{sql}\n  expected {want}…\n  got {got}");
}

#[pg_test]
fn count_tokens_matches_tiktoken_and_is_immutable_parallel_safe() {
    assert_eq!(one::<i32>("SELECT prompt.count_tokens('hello world')"), Some(2));
    assert_eq!(one::<i32>("SELECT prompt.count_tokens('hello world', 'o200k_base')"), Some(2));
    assert_eq!(one::<i32>("SELECT prompt.count_tokens('')"), Some(0));
    assert_eq!(
        one::<String>("SELECT provolatile::text || proparallel::text FROM pg_proc WHERE oid = 'prompt.count_tokens(text,text)'::regprocedure"),
        Some("is".into())
    );
    assert_refused("SELECT prompt.count_tokens('x', 'gpt2')", "22023", "tokenizer_unknown");
    // A million spaces: never an error.
    assert!(one::<i32>("SELECT prompt.count_tokens(repeat(' ', 1000000))").unwrap() > 0);
}

#[pg_test]
fn turn_dates_are_spelled_as_to_char_spells_them() {
    // A compile reads `created_at` as a date and spells it in Rust (`{{date}}`);
    // PostgreSQL's to_char is the reference over the whole timestamp range: BC years,
    // leap days, years past 9999, and infinity (no spelling).
    // Read as a compile reads a turn's day: through the core's `Columns::date`.
    use pgprompt_core::Columns as _;
    let q = crate::pg::spi::Query::new(
        "a date row",
        "SELECT d, to_char(d, 'YYYY-MM-DD') AS want FROM (SELECT DATE '4713-11-24 BC' + n AS d \
         FROM generate_series(0, 109000000, 997) n UNION ALL \
         VALUES (DATE '2000-02-29'), (DATE '1900-02-28'), (DATE '0001-01-01'), \
         (DATE '0001-12-31 BC'), (DATE 'infinity'), (DATE '-infinity')) s",
        &[("d", pgrx::pg_sys::DATEOID), ("want", pgrx::pg_sys::TEXTOID)],
    );
    let rows: Vec<(String, String)> = Spi::connect(|client| {
        crate::pg::spi::run(client, &q, &[], |c| {
            Ok::<_, pgprompt_core::Error>(Some((c.date("d")?, c.text("want").unwrap_or_default())))
        })
    })
    .expect("dates");
    assert!(rows.len() > 100_000);
    for (got, want) in rows {
        assert_eq!(got, want, "the day spelled {want} by to_char");
    }
}

#[pg_test]
fn every_sqlstate_is_packed_as_postgres_packs_it() {
    // The core's table spells each SQLSTATE; the extension packs it (MAKE_SQLSTATE).
    use pgprompt_core::Code;
    use pgrx::PgSqlErrorCode::*;
    let sqlstate = crate::pg::errors::sqlstate;
    assert_eq!(sqlstate(Code::DocumentTooLarge), ERRCODE_PROGRAM_LIMIT_EXCEEDED);
    assert_eq!(sqlstate(Code::DataCorrupted), ERRCODE_DATA_CORRUPTED);
    assert_eq!(sqlstate(Code::TenantWriteRefused), ERRCODE_INSUFFICIENT_PRIVILEGE);
    assert_eq!(sqlstate(Code::TurnNotFound), ERRCODE_NO_DATA_FOUND);
    assert_eq!(sqlstate(Code::SealConversionPending), ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
    assert_eq!(sqlstate(Code::SealReadOnly), ERRCODE_READ_ONLY_SQL_TRANSACTION);
    assert_eq!(sqlstate(Code::CountUnavailable), ERRCODE_FEATURE_NOT_SUPPORTED);
    assert_eq!(sqlstate(Code::MacroUnknown), ERRCODE_INVALID_PARAMETER_VALUE);
}

#[pg_test]
fn every_function_and_table_has_a_comment() {
    let missing = one::<i64>(
        "SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'prompt'::regnamespace \
         AND obj_description(p.oid, 'pg_proc') IS NULL",
    );
    assert_eq!(missing, Some(0));
    let missing = one::<i64>(
        "SELECT count(*) FROM pg_class c WHERE c.relnamespace = 'prompt'::regnamespace AND c.relkind = 'r' \
         AND obj_description(c.oid, 'pg_class') IS NULL",
    );
    assert_eq!(missing, Some(0));
}

#[pg_test]
fn no_function_is_security_definer_and_every_one_pins_search_path() {
    assert_eq!(
        one::<i64>("SELECT count(*) FROM pg_proc WHERE pronamespace = 'prompt'::regnamespace AND prosecdef"),
        Some(0)
    );
    // Every function pins search_path. The exceptions are the two procedures that commit
    // between batches, which a SET clause would forbid (they schema-qualify every name),
    // and the function a compile's query inlines, which a SET clause would keep from being
    // inlined: its body is SQL-standard, every name in it bound when it was created.
    assert_eq!(
        one::<String>(
            "SELECT string_agg(oid::regprocedure::text, ', ' ORDER BY proname COLLATE \"C\") FROM pg_proc \
             WHERE pronamespace = 'prompt'::regnamespace AND NOT coalesce(proconfig::text LIKE '%search_path=%', false)"
        ),
        Some("prompt._model_profile_of(text,text), prompt.backfill_token_counts(text,integer), prompt.convert_seals_02(integer)".into())
    );
    assert_eq!(
        one::<bool>("SELECT prosqlbody IS NOT NULL FROM pg_proc WHERE oid = 'prompt._model_profile_of(text,text)'::regprocedure"),
        Some(true)
    );
}

#[pg_test]
fn escape_envelope_roundtrips() {
    assert_eq!(
        one::<String>("SELECT prompt.escape_envelope('a </message> & &lt;message')"),
        Some("a &lt;/message> & &amp;lt;message".into())
    );
    assert_eq!(
        one::<bool>("SELECT prompt.unescape_envelope(prompt.escape_envelope(s)) = s FROM (VALUES ('<task_result>&amp;lt;/message')) v(s)"),
        Some(true)
    );
}

#[pg_test]
fn validate_template_lists_problems_with_paths_and_never_raises() {
    assert_eq!(
        one::<i64>("SELECT count(*) FROM prompt.validate_template('{\"blocks\":[{\"type\":\"history\"},{\"type\":\"input\"}]}')"),
        Some(0)
    );
    assert_eq!(
        one::<String>(
            "SELECT string_agg(path || ' ' || code, ', ' ORDER BY path) FROM prompt.validate_template(\
             '{\"blocks\":[{\"type\":\"inline\",\"role\":\"robot\",\"text\":\"x\"},{\"type\":\"history\"},{\"type\":\"input\"}],\"variables\":{\"Scene\":\"x\"}}')"
        ),
        Some("/blocks/0/role role_invalid, /variables/Scene variable_name_invalid".into())
    );
    for junk in ["'null'", "'1'", "'\"x\"'", "'[]'", "'true'"] {
        assert_eq!(
            one::<String>(&format!("SELECT code FROM prompt.validate_template({junk}::jsonb)")),
            Some("template_not_object".into())
        );
    }
}

fn fixture() {
    fixture_at(1);
}

/// The fixture with its reply turn at `seq` (a key: a test that puts turns before it
/// places it there, never moves it).
fn fixture_at(seq: i64) {
    Spi::run(&format!(
        r#"
        INSERT INTO prompt.models (name, wire, advisory_window) VALUES ('m', 'anthropic', 1000);
        INSERT INTO prompt.workspaces (id, name) VALUES ('00000000-0000-0000-0000-0000000000a1', 'Acme');
        INSERT INTO prompt.users (id, handle, display_name, kind)
            VALUES ('00000000-0000-0000-0000-000000000001', 'ada', 'Ada', 'human');
        INSERT INTO prompt.users (id, handle, display_name, kind, steward_id, model)
            VALUES ('00000000-0000-0000-0000-000000000002', 'lark', 'Lark', 'agent', '00000000-0000-0000-0000-000000000001', 'm');
        INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id)
            VALUES ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000a1',
                    '00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000001');
        INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, created_at)
            VALUES ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1', {seq}, 'reply',
                    '00000000-0000-0000-0000-000000000001', 'Hello?', '2026-11-30 12:00Z');
        "#,
    ))
    .expect("fixture loads");
}

#[pg_test]
fn documents_refuse_unknown_macros_and_write_nothing() {
    fixture();
    assert_refused(
        "INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-0000-0000-000000000002', 'system_prompt', 'Hi {{usr}}')",
        "22023",
        "prompt_document_macro_unknown",
    );
    assert_refused(
        "INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-0000-0000-000000000002', 'system_prompt', '{{history}}')",
        "22023",
        "prompt_document_macro_unknown",
    );
    assert_eq!(one::<i64>("SELECT count(*) FROM prompt.documents"), Some(0));
    assert_eq!(
        outcome("INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-0000-0000-000000000002', 'system_prompt', '{{ }} {{#if x}} {{a b}} {{agent}}')"),
        "ok"
    );
    assert_refused(
        "INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-0000-0000-000000000002', 'SOUL', repeat('x', 65537))",
        "54000",
        "document_too_large",
    );
    assert_eq!(
        outcome("INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-0000-0000-000000000002', 'SOUL', repeat('x', 65536))"),
        "ok"
    );
}

#[pg_test]
fn document_writes_bump_version_and_one_row_per_owner_and_name() {
    fixture();
    Spi::run("INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-0000-0000-000000000002', 'system_prompt', 'v1')").unwrap();
    Spi::run("UPDATE prompt.documents SET body = 'v2'").unwrap();
    Spi::run("UPDATE prompt.documents SET body = 'v3'").unwrap();
    assert_eq!(one::<i32>("SELECT version FROM prompt.documents"), Some(3));
    assert_refused(
        "INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-0000-0000-000000000002', 'system_prompt', 'again')",
        "23505",
        "duplicate key",
    );
    assert_refused(
        "INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-0000-0000-000000000002', 'soul', 'x')",
        "23514",
        "new row",
    );
}

#[pg_test]
fn users_refuse_invalid_templates_with_the_path() {
    fixture();
    let got = outcome(
        "UPDATE prompt.users SET prompt_mechanism = 'assembly', prompt_template = '{\"blocks\":[{\"type\":\"history\"},{\"type\":\"input\"},{\"type\":\"memory\"}]}' WHERE handle = 'lark'",
    );
    assert!(got.starts_with("22023 template_invalid"), "{got}");
    assert!(got.contains("/blocks/2"), "{got}");
    assert_eq!(one::<String>("SELECT prompt_mechanism FROM prompt.users WHERE handle = 'lark'"), Some("default".into()));
    assert_refused("UPDATE prompt.users SET prompt_mechanism = 'assembly' WHERE handle = 'lark'", "22023", "template_invalid");
    assert_refused("INSERT INTO prompt.users (handle, kind) VALUES ('Bad Handle', 'human')", "23514", "new row");
    // A template is bounded like a document.
    assert_refused(
        &format!(
            "UPDATE prompt.users SET prompt_template = '{{\"blocks\":[{{\"type\":\"inline\",\"role\":\"user\",\"text\":\"{}\"}},{{\"type\":\"history\"}},{{\"type\":\"input\"}}]}}' WHERE handle = 'lark'",
            "x".repeat(70_000)
        ),
        "54000",
        "document_too_large",
    );
}

#[pg_test]
fn turns_refuse_unknown_macros_in_inline_entries() {
    fixture();
    assert_refused(
        "UPDATE prompt.turns SET inline = '[{\"text\":\"{{whoami}}\"}]'",
        "22023",
        "prompt_document_macro_unknown",
    );
    assert_refused("UPDATE prompt.turns SET inline = '[{\"text\":\"x\",\"position\":\"middle\"}]'", "22023", "inline_entry_invalid");
    assert_refused(
        &format!("UPDATE prompt.turns SET inline = '[{{\"text\":\"{}\"}}]'", "x".repeat(65537)),
        "54000",
        "document_too_large",
    );
}

#[pg_test]
fn workspaces_refuse_unknown_timezones() {
    assert_refused("INSERT INTO prompt.workspaces (name, timezone) VALUES ('x', 'Mars/Olympus')", "22023", "timezone_invalid");
    assert_eq!(outcome("INSERT INTO prompt.workspaces (name, timezone) VALUES ('x', 'Asia/Shanghai')"), "ok");
}

const COMPILE: &str =
    "SELECT prompt.compile_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1')::text";

#[pg_test]
fn compile_returns_the_body_as_json_and_seals_once() {
    fixture();
    assert_eq!(
        one::<String>("SELECT prorettype::regtype::text FROM pg_proc WHERE oid = 'prompt.compile_turn(uuid,uuid)'::regprocedure"),
        Some("json".into())
    );
    let first = one::<String>(COMPILE).unwrap();
    let body: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(body["messages"][0]["content"][0]["text"], "Hello?");
    assert_eq!(body["model"], "m");
    assert!(first.starts_with(r#"{"model":"m","max_tokens":4096,"#), "keys in the provider's order: {first}");
    assert_eq!(one::<bool>("SELECT sealed_at IS NOT NULL FROM prompt.turns"), Some(true));
    assert_eq!(one::<String>(COMPILE), Some(first.clone()), "two calls, the same bytes");
    assert_eq!(
        one::<bool>(
            "SELECT digest = sha256(convert_to(prompt.compile_turn(conversation_id, turn_id)::text, 'UTF8')) \
             AND bytes = octet_length(prompt.compile_turn(conversation_id, turn_id)::text) FROM prompt.seals"
        ),
        Some(true)
    );
}

#[pg_test]
fn a_sealed_turn_cannot_change_or_go_unless_history_is_rewritten_on_purpose() {
    fixture();
    let first = one::<String>(COMPILE).unwrap();
    for (column, value) in [
        ("prompt", "'Changed'"),
        ("inline", "'[{\"text\": \"x\"}]'"),
        ("variables", "'{\"a\": \"b\"}'"),
        ("input", "'[]'"),
        ("tools", "'[]'"),
        ("callables", "'[{\"name\": \"skill\"}]'"),
        ("model", "'m'"),
        ("mode", "'run'"),
        ("answerer_id", "'00000000-0000-0000-0000-000000000001'"),
        ("poster_id", "'00000000-0000-0000-0000-000000000002'"),
        ("history", "'{\"max_entries\": 3}'"),
        ("memory_user_id", "'00000000-0000-0000-0000-000000000001'"),
        ("seq", "seq + 10"),
        ("sealed_at", "NULL"),
        ("sealed_mechanism", "'raw'"),
        ("sealed_catalog", "'x'"),
    ] {
        let got = outcome(&format!("UPDATE prompt.turns SET {column} = {value}"));
        assert!(got.starts_with("55000 sealed_turn_immutable"), "{column}: {got}");
        assert!(got.contains(&format!("{column} cannot change")), "{column}: {got}");
    }
    // The answer stays editable.
    assert_eq!(outcome("UPDATE prompt.turns SET content = 'Hi!'"), "ok");
    assert_refused("DELETE FROM prompt.turns", "55000", "sealed_turn_immutable");
    // On purpose: the rewrite happens, the seal stays what was sent.
    Spi::run("SET LOCAL pgprompt.allow_history_rewrite = on").unwrap();
    assert_eq!(outcome("UPDATE prompt.turns SET prompt = 'Edited'"), "ok");
    assert_eq!(one::<String>(COMPILE), Some(first));
    assert_refused("UPDATE prompt.turns SET sealed_at = NULL", "55000", "sealed_turn_immutable");
    assert_eq!(outcome("DELETE FROM prompt.turns"), "ok");
    assert_eq!(one::<i64>("SELECT count(*) FROM prompt.seals"), Some(0), "its seal goes with it");
}

#[pg_test]
fn a_turn_a_later_seal_replayed_is_deleted_only_on_purpose_and_conversations_always() {
    fixture_at(10);
    Spi::run(
        "INSERT INTO prompt.turns (conversation_id, id, seq, kind, role, author_id, content) VALUES \
         ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e1', 1, 'message', 'user', \
          '00000000-0000-0000-0000-000000000001', 'earlier')",
    )
    .unwrap();
    one::<String>(COMPILE);
    assert_refused(
        "DELETE FROM prompt.turns WHERE id = '00000000-0000-0000-0000-0000000000e1'",
        "55000",
        "sealed_turn_immutable",
    );
    assert_eq!(outcome("DELETE FROM prompt.conversations"), "ok");
    assert_eq!(one::<i64>("SELECT count(*) FROM prompt.turns"), Some(0));
    assert_eq!(one::<i64>("SELECT count(*) FROM prompt.seal_nodes"), Some(0));
}

#[pg_test]
fn rounds_a_request_carried_are_append_only() {
    fixture();
    Spi::run("UPDATE prompt.turns SET mode = 'run'").unwrap();
    one::<String>(COMPILE);
    Spi::run(
        "INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results) VALUES \
         ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1', 1, \
          '[{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"x\",\"input\":{}}]', '[]')",
    )
    .unwrap();
    // Not sent yet: its results are written on it.
    assert_eq!(
        outcome("UPDATE prompt.rounds SET results = '[{\"call_id\":\"c1\",\"content\":\"ok\"}]'"),
        "ok"
    );
    let continued = one::<String>(COMPILE).unwrap();
    assert!(continued.contains("tool_result"), "{continued}");
    assert_eq!(one::<bool>("SELECT sent_at IS NOT NULL FROM prompt.rounds"), Some(true));
    assert_refused("UPDATE prompt.rounds SET aborted = true", "55000", "sealed_turn_immutable");
    assert_refused("DELETE FROM prompt.rounds", "55000", "sealed_turn_immutable");
    assert_eq!(one::<String>(COMPILE), Some(continued), "the same bytes again");
}

#[pg_test]
fn newcomer_mistakes_are_refused_on_write_with_their_paths() {
    fixture();
    let insert = |cols: &str, vals: &str| {
        outcome(&format!(
            "INSERT INTO prompt.turns (conversation_id, {cols}) VALUES ('00000000-0000-0000-0000-0000000000c1', {vals})"
        ))
    };
    let got = insert("kind, prompt", "'reply', 'no poster'");
    assert!(got.starts_with("22023 turn_invalid") && got.contains("at /poster_id"), "{got}");
    let got = insert("kind, content", "'message', 'no role'");
    assert!(got.starts_with("22023 turn_invalid") && got.contains("at /role"), "{got}");
    let got = insert("kind, poster_id, variables", "'reply', '00000000-0000-0000-0000-000000000001', '{\"Bad\": \"x\"}'");
    assert!(got.starts_with("22023 turn_field_invalid") && got.contains("/variables/Bad"), "{got}");
    let got = insert("kind, poster_id, variables", "'reply', '00000000-0000-0000-0000-000000000001', '{\"a\": 1}'");
    assert!(got.starts_with("22023 turn_field_invalid") && got.contains("/variables/a"), "{got}");
    let got = insert("kind, poster_id, inline", "'reply', '00000000-0000-0000-0000-000000000001', '[{\"slot\": \"soul\", \"text\": \"x\"}]'");
    assert!(got.starts_with("22023 inline_entry_invalid") && got.contains("/inline/0/slot"), "{got}");
    let got = insert("kind, poster_id, inline", "'reply', '00000000-0000-0000-0000-000000000001', '[{\"role\": \"robot\", \"text\": \"x\"}]'");
    assert!(got.starts_with("22023 inline_entry_invalid") && got.contains("/inline/0/role"), "{got}");
    let got = insert("kind, poster_id, inline", "'reply', '00000000-0000-0000-0000-000000000001', '[{\"position\": \"middle\", \"text\": \"x\"}]'");
    assert!(got.starts_with("22023 inline_entry_invalid") && got.contains("/inline/0/position"), "{got}");
    assert_eq!(one::<i64>("SELECT count(*) FROM prompt.turns"), Some(1), "nothing written");
    // Rounds: on a direct reply, on a message turn, numbered after a gap.
    let round = |turn: &str, n: i32| {
        outcome(&format!(
            "INSERT INTO prompt.rounds (conversation_id, turn_id, n) VALUES ('00000000-0000-0000-0000-0000000000c1', '{turn}', {n})"
        ))
    };
    let got = round("00000000-0000-0000-0000-0000000000d1", 1);
    assert!(got.starts_with("22023 round_invalid") && got.contains("direct reply"), "{got}");
    Spi::run(
        "INSERT INTO prompt.turns (conversation_id, id, kind, role, author_id, content) VALUES \
         ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e1', 'message', 'user', \
          '00000000-0000-0000-0000-000000000001', 'hi')",
    )
    .unwrap();
    let got = round("00000000-0000-0000-0000-0000000000e1", 1);
    assert!(got.starts_with("22023 round_invalid") && got.contains("message turn"), "{got}");
    Spi::run("UPDATE prompt.turns SET mode = 'run' WHERE id = '00000000-0000-0000-0000-0000000000d1'").unwrap();
    let got = round("00000000-0000-0000-0000-0000000000d1", 2);
    assert!(got.starts_with("22023 round_invalid") && got.contains("round 1 is missing") && got.contains("at /n"), "{got}");
    assert_eq!(round("00000000-0000-0000-0000-0000000000d1", 1), "ok");
    assert_eq!(round("00000000-0000-0000-0000-0000000000d1", 2), "ok");
    let got = outcome("UPDATE prompt.turns SET mode = 'direct_reply' WHERE id = '00000000-0000-0000-0000-0000000000d1'");
    assert!(got.starts_with("22023 turn_invalid") && got.contains("at /mode"), "{got}");
}

#[pg_test]
fn a_variable_the_template_does_not_declare_is_refused_at_compile_naming_it() {
    fixture();
    Spi::run("UPDATE prompt.turns SET variables = '{\"scene\": \"a storm\"}'").unwrap();
    let got = outcome(COMPILE);
    assert!(got.starts_with("22023 turn_field_invalid"), "{got}");
    assert!(got.contains("00000000-0000-0000-0000-0000000000d1") && got.contains("/variables/scene"), "{got}");
}

#[pg_test]
fn pruned_seals_keep_digest_size_and_estimate_and_refuse_compiles() {
    fixture();
    let body = one::<String>(COMPILE).unwrap();
    assert!(one::<i64>("SELECT count(*) FROM prompt.seal_nodes").unwrap() > 0);
    assert_eq!(
        one::<i64>("SELECT prompt.prune_seals('00000000-0000-0000-0000-0000000000c1', now() + interval '1 minute')"),
        Some(1)
    );
    assert_eq!(one::<i64>("SELECT count(*) FROM prompt.seal_nodes"), Some(0), "no body uses them");
    assert_eq!(
        one::<bool>(&format!(
            "SELECT digest = sha256(convert_to({}, 'UTF8')) AND bytes = {} AND frozen->'estimate'->>'total' IS NOT NULL FROM prompt.seals",
            quote_literal(&body),
            body.len()
        )),
        Some(true)
    );
    assert_refused(COMPILE, "55000", "sealed_request_pruned");
    assert_eq!(
        one::<bool>("SELECT (prompt.explain_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1')->>'sealed')::bool"),
        Some(true)
    );
}

fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[pg_test]
fn explain_turn_shows_everything_but_the_body() {
    fixture();
    let e = one::<pgrx::JsonB>(
        "SELECT prompt.explain_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1')",
    )
    .unwrap()
    .0;
    for key in ["version", "conversation_id", "turn_id", "mechanism", "model", "wire", "sealed", "messages",
                "cache_marker", "cache_breakpoints", "preface", "estimate"] {
        assert!(e.get(key).is_some(), "{key} in {e}");
    }
    assert_eq!(e["version"], 2);
    assert_eq!(e["sealed"], false);
    assert!(e.get("request").is_none() && e.get("body").is_none(), "the body is never carried twice");
    assert_eq!(e["messages"][0]["parts"][0]["text"], "Hello?");
}

#[pg_test]
fn every_table_is_dumped_with_its_rows() {
    assert_eq!(
        one::<i64>(
            "SELECT count(*) FROM pg_class c WHERE c.relnamespace = 'prompt'::regnamespace AND c.relkind = 'r' \
             AND c.oid <> ALL (SELECT unnest(extconfig) FROM pg_extension WHERE extname = 'pgprompt')"
        ),
        Some(0)
    );
}

#[pg_test]
fn preview_never_writes() {
    fixture();
    let a = one::<String>("SELECT prompt.preview_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1')::text");
    let b = one::<String>("SELECT prompt.preview_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1')::text");
    assert_eq!(a, b);
    assert_eq!(one::<bool>("SELECT sealed_at IS NULL FROM prompt.turns"), Some(true));
    assert_eq!(
        one::<String>("SELECT provolatile::text FROM pg_proc WHERE oid = 'prompt.preview_turn(uuid,uuid)'::regprocedure"),
        Some("s".into())
    );
}

#[pg_test]
fn unknown_ids_and_wrong_turns_are_refused_with_their_codes() {
    fixture();
    assert_refused(
        "SELECT prompt.compile_turn('00000000-0000-0000-0000-0000000000ff', '00000000-0000-0000-0000-0000000000d1')",
        "P0002",
        "conversation_not_found",
    );
    assert_refused(
        "SELECT prompt.compile_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000ff')",
        "P0002",
        "turn_not_found",
    );
    Spi::run(
        "INSERT INTO prompt.turns (conversation_id, id, kind, role, author_id, content) VALUES \
         ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e1', 'message', 'user', \
          '00000000-0000-0000-0000-000000000001', 'hi')",
    )
    .unwrap();
    assert_refused(
        "SELECT prompt.compile_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e1')",
        "55000",
        "turn_not_compilable",
    );
    Spi::run(
        "INSERT INTO prompt.conversations (id, workspace_id, answerer_id) VALUES \
         ('00000000-0000-0000-0000-0000000000c2', '00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-000000000002')",
    )
    .unwrap();
    assert_refused(
        "SELECT prompt.compile_turn('00000000-0000-0000-0000-0000000000c2', '00000000-0000-0000-0000-0000000000d1')",
        "55000",
        "turn_not_compilable",
    );
}

#[pg_test]
fn the_gate_refuses_and_writes_no_seal() {
    fixture();
    Spi::run("UPDATE prompt.models SET advisory_window = 30").unwrap();
    Spi::run("INSERT INTO prompt.documents (user_id, name, body) VALUES ('00000000-0000-0000-0000-000000000002', 'system_prompt', repeat('word ', 200))").unwrap();
    assert_refused(
        "SELECT prompt.compile_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1')",
        "54000",
        "estimated_input_exceeds_model_limit",
    );
    assert_eq!(one::<bool>("SELECT sealed_at IS NULL FROM prompt.turns"), Some(true));
    // estimate_turn explains instead of raising: the block the window cannot fund.
    assert_eq!(
        one::<String>("SELECT string_agg(block, ',' ORDER BY block) FROM prompt.estimate_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1') WHERE floor_unmet"),
        Some("input,system_prompt".into())
    );
    assert_eq!(
        one::<String>("SELECT string_agg(block, ',') FROM prompt.estimate_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1')"),
        Some("system_prompt,character,persona,memory,skills,history,lead,tail,input,tools".into()),
        "one row per block, in block order"
    );
}

#[pg_test]
fn rounds_are_checked_on_write() {
    fixture();
    assert_refused(
        "INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant, results) VALUES \
         ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1', 1, '[]', '{}')",
        "22023",
        "round_invalid",
    );
}

/// What the budget leaves out is counted from the stored entry counts; it must equal
/// what the compiler counts when it reads every turn.
#[pg_test]
fn available_counts_agree_whether_history_is_read_or_counted() {
    fixture_at(1000);
    Spi::run(
        r#"
        INSERT INTO prompt.users (id, handle, display_name, kind) VALUES ('00000000-0000-0000-0000-000000000005', 'wren', 'Wren', 'agent');
        INSERT INTO prompt.turns (conversation_id, id, seq, kind, role, author_id, content) VALUES
            ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e1', 101, 'message', 'user', '00000000-0000-0000-0000-000000000001', repeat('hello ', 50));
        INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, content, mode) VALUES
            ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e2', 102, 'reply', '00000000-0000-0000-0000-000000000001', 'q', 'a', 'run'),
            ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e3', 103, 'reply', '00000000-0000-0000-0000-000000000001', 'q', 'a', 'direct_reply');
        INSERT INTO prompt.rounds (conversation_id, turn_id, n, assistant) VALUES
            ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e2', 1, '[{"type":"text","text":"r1"}]'),
            ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e2', 2, '[{"type":"text","text":"r2"}]'),
            ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e2', 3, '[{"type":"text","text":"r3"}]');
        UPDATE prompt.turns SET summary = 'so far', summary_round = 3 WHERE id = '00000000-0000-0000-0000-0000000000e2';
        INSERT INTO prompt.turns (conversation_id, id, seq, kind, answerer_id, poster_id, prompt, content) VALUES
            ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e4', 104, 'reply', '00000000-0000-0000-0000-000000000005', '00000000-0000-0000-0000-000000000001', 'q', 'wren says');
        "#,
    )
    .unwrap();
    assert_eq!(one::<i32>("SELECT own_entries FROM prompt.turns WHERE id = '00000000-0000-0000-0000-0000000000e2'"), Some(2));
    assert_eq!(one::<i32>("SELECT own_entries FROM prompt.turns WHERE id = '00000000-0000-0000-0000-0000000000e3'"), Some(2));
    let available = |window: i32| {
        Spi::run(&format!("UPDATE prompt.models SET advisory_window = {window}")).unwrap();
        one::<i32>(
            "SELECT available FROM prompt.estimate_turn('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000d1') WHERE block = 'history'",
        )
    };
    // message 1 + (summary + round 3) + (seed + answer) + wren's reply 1 = 6
    assert_eq!(available(100_000), Some(6));
    assert_eq!(available(40), Some(6));
    Spi::run("DELETE FROM prompt.rounds WHERE n = 3").unwrap();
    assert_eq!(one::<i32>("SELECT own_entries FROM prompt.turns WHERE id = '00000000-0000-0000-0000-0000000000e2'"), Some(1));
    assert_eq!(available(40), Some(5));
    assert_eq!(available(100_000), Some(5));
}

/// docs/scale-out.md: every conversation-scoped primary, unique and foreign key (between
/// conversation-scoped tables) starts with conversation_id, so the tables distribute by
/// it (docs/scale-out.md). Keys to the shared tables (users, models) need not.
#[pg_test]
fn conversation_scoped_keys_start_with_conversation_id() {
    let bad = one::<i64>(
        "SELECT count(*) FROM pg_constraint c \
         WHERE c.conrelid IN ('prompt.turns'::regclass, 'prompt.rounds'::regclass, 'prompt.seals'::regclass, 'prompt.seal_nodes'::regclass) \
         AND (c.contype IN ('p', 'u') OR (c.contype = 'f' AND c.confrelid IN \
              ('prompt.conversations'::regclass, 'prompt.turns'::regclass, 'prompt.rounds'::regclass))) \
         AND (SELECT attname FROM pg_attribute WHERE attrelid = c.conrelid AND attnum = c.conkey[1]) <> 'conversation_id'",
    );
    assert_eq!(bad, Some(0));
    assert_eq!(
        one::<String>("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'rounds_conversation_id_turn_id_fkey'"),
        Some("FOREIGN KEY (conversation_id, turn_id) REFERENCES prompt.turns(conversation_id, id) ON DELETE CASCADE".into())
    );
}

/// The message of the error `f` raises (`None`: it raised none).
fn raised(f: impl FnOnce() + std::panic::UnwindSafe) -> Option<String> {
    use pgrx::pg_sys::panic::CaughtError;
    PgTryBuilder::new(|| {
        f();
        None
    })
    .catch_others(|e| match e {
        CaughtError::PostgresError(r) | CaughtError::ErrorReport(r) | CaughtError::RustPanic { ereport: r, .. } => {
            Some(r.message().to_string())
        }
    })
    .execute()
}

#[pg_test]
fn a_reader_takes_columns_by_name_and_a_swapped_column_or_a_null_is_an_error_naming_it() {
    use crate::pg::load::{turn_columns, TURN};
    use pgprompt_core::Turn;
    use crate::pg::spi::{run, Query};
    let read = |sql: String| {
        let q = Query::new("a turn row", sql, &TURN);
        Spi::connect(|client| run(client, &q, &[], |c| Turn::from_columns(c, true)).map(|rows| rows.len()))
    };
    let columns = turn_columns("'UTC'");
    let sql = |cols: &str| format!("SELECT {cols} FROM prompt.turns t");
    assert_eq!(read(sql(&columns)).expect("the declared columns read"), 0);
    // Two text columns swapped in the SQL: the first run refuses it, naming the column.
    let swapped = columns.replace("t.content, t.prompt", "t.prompt, t.content");
    assert_ne!(swapped, columns);
    let message = raised(|| {
        let _ = read(sql(&swapped));
    })
    .expect("a swapped column is refused");
    assert!(
        message.contains(r#"column 7 of a query is "prompt""#) && message.contains(r#"not the declared "content""#),
        "{message}"
    );
    // A NULL where the compile needs a value: data_corrupted naming the column.
    use pgprompt_core::Columns as _;
    let q = Query::new("a turn row", "SELECT NULL::text AS kind", &[("kind", pgrx::pg_sys::TEXTOID)]);
    let err = Spi::connect(|client| run(client, &q, &[], |c| c.need_text("kind").map(Some))).unwrap_err();
    assert_eq!(err.code, pgprompt_core::Code::DataCorrupted);
    assert!(err.message.contains(r#"column "kind" of a turn row is NULL"#), "{}", err.message);
}

/// Stable trimming through SQL: the next turn's history begins where the answerer's
/// previous sealed request's did, read from that seal's record by the part the core
/// names and hands over (`HistorySource::previous_frozen`), while it fits (`stable_cut`);
/// without that start everything would fit, and nothing would be skipped.
#[pg_test]
fn stable_trimming_begins_where_the_previous_sealed_request_began() {
    fixture_at(100);
    let template = |max: u32| {
        format!(
            r#"UPDATE prompt.users SET prompt_mechanism = 'assembly', prompt_template =
               '{{"blocks": [{{"type": "history", "budget": {{"trim": "stable", "max_tokens": {max}}}}}, {{"type": "input"}}]}}'
               WHERE handle = 'lark'"#
        )
    };
    Spi::run(&template(300)).unwrap();
    Spi::run(
        r#"
        INSERT INTO prompt.turns (conversation_id, id, seq, kind, role, author_id, content)
            SELECT '00000000-0000-0000-0000-0000000000c1', gen_random_uuid(), g, 'message', 'user',
                   '00000000-0000-0000-0000-000000000001', 'message ' || g || ': ' || repeat('word ', 60)
              FROM generate_series(1, 12) g;
        "#,
    )
    .unwrap();
    let skipped = |turn: &str| {
        one::<String>(&format!(
            "SELECT prompt.explain_turn('00000000-0000-0000-0000-0000000000c1', '{turn}') -> 'estimate' -> 'history' ->> 'skipped_reason'"
        ))
    };
    let first = "00000000-0000-0000-0000-0000000000d1";
    Spi::run(&format!("SELECT prompt.compile_turn('00000000-0000-0000-0000-0000000000c1', '{first}')")).unwrap();
    assert_eq!(skipped(first).as_deref(), Some("low_water"), "the first request's history was cut");
    let second = "00000000-0000-0000-0000-0000000000d2";
    Spi::run(&format!(
        "UPDATE prompt.turns SET content = 'an answer' WHERE id = '{first}';
         INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt)
             VALUES ('00000000-0000-0000-0000-0000000000c1', '{second}', 101, 'reply',
                     '00000000-0000-0000-0000-000000000001', 'And then?');"
    ))
    .unwrap();
    // Room for everything now: only the previous start keeps the older messages out.
    Spi::run(&template(100_000)).unwrap();
    assert_eq!(skipped(second).as_deref(), Some("stable_cut"));
}

#[pg_test]
fn a_jsonb_result_built_in_binary_is_the_one_its_text_parses_to() {
    use crate::pg::jsonb::JsonbOut;
    use pgrx::datum::DatumWithOid;
    let corpus = [
        r#"{"b": 1, "a": [true, false, null], "": "", "long key first": {"x": []}}"#,
        r#"[0, -1, 1.5, 0.1, 1e300, -2.5e-7, 12345678901234567890, -9223372036854775808]"#,
        r#"{"text": "line\nbreak \"quoted\" \\ tab\t é ✓ 𝄞 \u001f", "empty": {}, "list": [[], {}, [[1]]]}"#,
        r#"{"a": {"a": {"a": {"a": [1, {"b": "deep"}]}}}, "z": 0}"#,
        r#"[]"#,
        r#"{}"#,
    ];
    for text in corpus {
        let value: serde_json::Value = serde_json::from_str(text).expect("corpus parses");
        assert!(JsonbOut(value.clone()).binary().is_some(), "{text} is built in binary");
        let args: [DatumWithOid; 2] = [JsonbOut(value.clone()).into(), pgrx::JsonB(value).into()];
        let same = Spi::get_one_with_args::<bool>(
            "SELECT $1 = $2 AND $1::text = $2::text AND pg_column_size($1) = pg_column_size($2)",
            &args,
        )
        .expect("query runs");
        assert_eq!(same, Some(true), "{text}");
    }
    // What jsonb cannot hold, and a top-level scalar, go through the text (and its errors).
    for value in [serde_json::json!({"a": "nul \u{0}"}), serde_json::json!([1, "\u{0}"]), serde_json::json!("scalar")] {
        assert!(JsonbOut(value).binary().is_none());
    }
}

/// The bytes of a jsonb datum, whole (a fresh palloc: never toasted).
fn jsonb_bytes(datum: pg_sys::Datum) -> Vec<u8> {
    let at = datum.cast_mut_ptr::<pg_sys::varlena>();
    // SAFETY: a jsonb varlena just built in this memory context, not toasted.
    unsafe { std::slice::from_raw_parts(at.cast::<u8>(), pgrx::varsize_any(at)).to_vec() }
}

/// What `jsonb_in` writes for `text`.
fn jsonb_in_bytes(text: &str) -> Vec<u8> {
    let text = std::ffi::CString::new(text).expect("no NUL");
    // SAFETY: jsonb_in reads a NUL-terminated text and returns a fresh jsonb.
    let datum = unsafe {
        pgrx::direct_function_call_as_datum(pg_sys::jsonb_in, &[Some(pg_sys::Datum::from(text.as_ptr()))])
    }
    .expect("jsonb_in returns a value");
    jsonb_bytes(datum)
}

/// A document drawn from `seed`: containers up to four deep, arrays past the 32 entries
/// after which jsonb stores an offset, keys of many lengths (multibyte too), numbers and
/// containers after strings of every length modulo four (their alignment).
fn drawn(seed: &mut u64, depth: u32) -> serde_json::Value {
    use serde_json::{json, Value};
    fn next(seed: &mut u64, n: u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed % n
    }
    // The top a container; past four deep, scalars only.
    let kind = match depth {
        0 => 5 + next(seed, 3),
        4.. => next(seed, 5),
        _ => next(seed, 8),
    };
    let wide = depth <= 1;
    let text = |k: u64| ["", "a", "bé", "ccc", "dddd", "ééééé", "x\"y\\z\n", "東京"][k as usize].to_string();
    match kind {
        0 => Value::Null,
        1 => Value::Bool(next(seed, 2) == 1),
        2 => [json!(0), json!(-1), json!(1.5), json!(123_456_789_012_i64), json!(1e-7), json!(u64::MAX), json!(-2.5e300)]
            [next(seed, 7) as usize]
            .clone(),
        3 | 4 => {
            let t = text(next(seed, 8));
            Value::String(t.repeat(next(seed, 4) as usize + 1))
        }
        5 | 6 => {
            let n = if wide { [0, 1, 3, 33, 70][next(seed, 5) as usize] } else { next(seed, 4) };
            Value::Array((0..n).map(|_| drawn(seed, depth + 1)).collect())
        }
        _ => {
            let n = if wide { [0, 1, 2, 5, 40][next(seed, 5) as usize] } else { next(seed, 4) };
            let mut members = serde_json::Map::new();
            for i in 0..n {
                let t = text(next(seed, 8));
                let key = format!("{}{i}", t.repeat(next(seed, 3) as usize));
                members.insert(key, drawn(seed, depth + 1));
            }
            Value::Object(members)
        }
    }
}

#[pg_test]
fn jsonb_results_are_the_bytes_jsonb_in_writes() {
    // explain_turn's document is written straight into jsonb's binary form; jsonb_in of the
    // same document as text is the reference, byte for byte.
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    for _ in 0..300 {
        let doc = drawn(&mut seed, 0);
        let ours = crate::pg::jsonb_ser::binary(&doc).expect("held by the writer");
        assert_eq!(jsonb_bytes(ours), jsonb_in_bytes(&doc.to_string()), "{doc}");
    }
    // A struct's fields (static names), a flattened map, a RawValue read as its JSON.
    #[derive(serde::Serialize)]
    struct Doc {
        zeta: u32,
        a: &'static str,
        raw: Box<serde_json::value::RawValue>,
        #[serde(flatten)]
        more: std::collections::BTreeMap<String, serde_json::Value>,
    }
    let doc = Doc {
        zeta: 7,
        a: "b",
        raw: serde_json::value::RawValue::from_string(r#"{ "y": [1, 2.5, "三"], "x": null }"#.into()).expect("json"),
        more: [("mm".to_string(), serde_json::json!([true, {}]))].into(),
    };
    let ours = crate::pg::jsonb_ser::binary(&doc).expect("held by the writer");
    assert_eq!(jsonb_bytes(ours), jsonb_in_bytes(&serde_json::to_string(&doc).expect("json")));
    // What the writer does not hold goes through the text: a key twice (jsonb keeps the
    // last), a 128-bit integer, a RawValue whose number serde_json cannot read (kept as
    // written); a top-level scalar.
    #[derive(serde::Serialize)]
    struct Twice {
        k: u8,
        #[serde(flatten)]
        more: std::collections::BTreeMap<String, u8>,
    }
    let twice = Twice {
        k: 1,
        more: [("k".to_string(), 2)].into(),
    };
    let raw = serde_json::value::RawValue::from_string(r#"{"amount": 1e400}"#.into()).expect("json");
    let texts = [
        (crate::pg::jsonb_ser::binary(&twice), crate::pg::jsonb_ser::to_jsonb(&twice), r#"{"k": 1, "k": 2}"#),
        (crate::pg::jsonb_ser::binary(&[u128::MAX]), crate::pg::jsonb_ser::to_jsonb(&[u128::MAX]), "[340282366920938463463374607431768211455]"),
        (crate::pg::jsonb_ser::binary(&[&raw]), crate::pg::jsonb_ser::to_jsonb(&[&raw]), r#"[{"amount": 1e400}]"#),
        (crate::pg::jsonb_ser::binary(&7), crate::pg::jsonb_ser::to_jsonb(&7), "7"),
    ];
    for (held, through_text, text) in texts {
        assert!(held.is_none(), "{text}");
        assert_eq!(jsonb_bytes(through_text.expect("a datum")), jsonb_in_bytes(text), "{text}");
    }
}

#[pg_test]
fn a_rows_int_arrays_and_json_columns_read_as_stored() {
    // A turn's int4[] columns are read with int4's layout given, and its JSON columns'
    // empty defaults from their root header alone: every other value, NULL elements,
    // nested empties, scalars and a compressed document must read as the full path does.
    use pgprompt_core::Columns;
    use pgrx::pg_sys::{INT4ARRAYOID, JSONBOID, TEXTOID};
    Spi::run(
        "CREATE TEMP TABLE reads (k text, a int4[], j jsonb);
         INSERT INTO reads VALUES
           ('1', '{1,NULL,3}', '{}'), ('2', '{}', '[]'), ('3', NULL, '[[]]'), ('4', '{7}', '{\"a\":{}}'),
           ('5', '{NULL}', 'null'), ('6', '{-2147483648,2147483647}', '0'), ('7', '{0}', '\"\"'),
           ('8', '{{1,2},{3,4}}', '[{}]'), ('9', '{5}', NULL),
           ('a', '{}', (SELECT jsonb_agg(g) FROM generate_series(1, 5000) g)),
           ('b', '{}', jsonb_build_object('e', '{}'::jsonb, 'big', repeat('x', 9000))),
           ('c', '[0:1]={5,6}', (SELECT jsonb_agg(md5(g::text)) FROM generate_series(1, 20) g)),
           ('d', (SELECT array_agg(g) FROM generate_series(1, 3000) g), '[]')",
    )
    .expect("rows");
    let compressed: bool = one("SELECT pg_column_compression(j) IS NOT NULL FROM reads WHERE k = 'a'").expect("row");
    assert!(compressed, "the 5,000-element document is stored compressed");
    let in_line: bool = one(
        "SELECT pg_column_compression(j) IS NOT NULL AND pg_column_size(j) < 2000 FROM reads WHERE k = 'b'",
    )
    .expect("row");
    assert!(in_line, "the repeated text's document is compressed in line");
    // Values of more than 126 bytes keep a 4-byte header; 'd''s 12 KB array is toasted.
    let four_byte: bool = one("SELECT pg_column_size(j) > 130 AND pg_column_compression(j) IS NULL FROM reads WHERE k = 'c'").expect("row");
    assert!(four_byte, "the md5 list is stored uncompressed with a 4-byte header");
    let q = crate::pg::spi::Query::new(
        "a test row",
        "SELECT k, a, j, j::text AS t FROM (SELECT k, a, j FROM reads \
         UNION ALL SELECT 'e', '{}', jsonb_build_object() UNION ALL SELECT 'f', NULL, jsonb_build_array()) r ORDER BY k",
        &[("k", TEXTOID), ("a", INT4ARRAYOID), ("j", JSONBOID), ("t", TEXTOID)],
    );
    let rows = Spi::connect(|client| {
        crate::pg::spi::run(client, &q, &[], |c| {
            let json = c.jsonb("j").expect("shallow");
            let text = c.text("t").map(|t| serde_json::from_str::<serde_json::Value>(&t).expect("json"));
            assert_eq!(json, text, "row {:?}", c.text("k"));
            Ok::<_, ()>(Some(c.ints("a")))
        })
    })
    .expect("read");
    let n = None;
    assert_eq!(
        rows,
        vec![
            vec![Some(1), n, Some(3)],
            vec![],
            vec![],
            vec![Some(7)],
            vec![n],
            vec![Some(i32::MIN), Some(i32::MAX)],
            vec![Some(0)],
            vec![Some(1), Some(2), Some(3), Some(4)],
            vec![Some(5)],
            vec![],
            vec![],
            vec![Some(5), Some(6)],
            (1..=3000).map(Some).collect(),
            vec![],
            vec![],
        ]
    );
}
