//! The refusals of every JSON reader of the core, pinned: a deterministic corpus of
//! inputs (valid values of each reader, then one to three random mutations of each: a
//! value replaced, a key dropped or added, an item repeated or dropped) goes through
//! `fields`, `options`, `template`, `rounds` and `response`, and the result of each (the
//! value read, or the refusal's code, message, detail and hint) is digested per reader
//! into `tests/golden/refusals.json`. A change of any message, pointer or code, or of
//! what a reader accepts, changes a digest.
//!
//!     GOLDEN_UPDATE=1 cargo test -p pgprompt-core --lib suite_golden_refusals   # rewrite
//!     REFUSALS_DUMP=/tmp/a.txt cargo test -p pgprompt-core --lib suite_golden_refusals   # every case, to diff two checkouts
//!
//! The JSON readers moved onto one mechanism (`json_at`) with this corpus, and one of
//! 4,000 cases a reader, identical before and after (run in two checkouts), but for the
//! options reader's pointers of keys holding `/` or `~`, now escaped as RFC 6901 says (as
//! the other readers did). Its random values are `testing::random_json`, the fuzzer's.
use pgprompt_core::testing::{random_json, Rng};
use pgprompt_core::{fields, options, rounds, template};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The cases a reader gets, its seed aside.
const CASES: usize = 2000;

/// Keys and strings the random values draw from: the readers' own words.
const HINTS: &[&str] = &[
    "type",
    "blocks",
    "variables",
    "slot",
    "name",
    "role",
    "text",
    "history",
    "input",
    "budget",
    "share",
    "min_tokens",
    "max_tokens",
    "trim",
    "low_water",
    "max_entries",
    "position",
    "content",
    "tool_call",
    "tool_result",
    "image",
    "id",
    "input_schema",
    "description",
    "runner",
    "call_id",
    "captures",
    "media_type",
    "data",
    "eligible",
    "is_error",
    "author_id",
    "aGk=",
    "!!",
    "image/png",
    "lead",
    "tail",
    "system",
    "user",
    "assistant",
    "persona",
    "parts",
    "deferred",
    "signature",
    "item_id",
    "phase",
    "thinking",
    "reasoning",
    "summary",
    "encrypted_content",
    "wire",
    "block",
    "provider",
    "anthropic",
    "message",
    "choices",
    "output",
    "candidates",
    "function",
    "arguments",
    "tool_calls",
    "functionCall",
    "args",
    "thought",
    "tool_choice",
    "temperature",
    "stop",
    "response_format",
    "json_schema",
    "schema",
    "strict",
    "mode",
    "effort",
    "display",
    "include_thoughts",
    "budget_tokens",
    "metadata",
    "store",
    "include",
    "stateful",
    "auto",
    "required",
    "none",
    "a/b",
    "~x",
    "redacted_thinking",
    "output_text",
    "refusal",
    "usage",
    "object",
    "chat.completion",
    "response",
    "function_call",
    "inline",
    "document",
    "memory",
    "SOUL",
    "stable",
    "newest",
    "ephemeral",
];

fn mutate(v: &mut Value, r: &mut Rng) {
    // walk down randomly
    let go_deeper = r.below(3) != 0;
    match v {
        Value::Object(m) if go_deeper && !m.is_empty() => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let k = &keys[r.below(keys.len() as u64) as usize];
            if r.below(6) == 0 {
                m.remove(k);
                return;
            }
            if r.below(6) == 0 {
                m.insert(r.pick(HINTS).into(), random_json(r, 2, HINTS));
                return;
            }
            mutate(m.get_mut(k).unwrap(), r);
        }
        Value::Array(a) if go_deeper && !a.is_empty() => {
            let i = r.below(a.len() as u64) as usize;
            if r.below(8) == 0 {
                let x = a[i].clone();
                a.push(x);
                return;
            }
            if r.below(8) == 0 {
                a.remove(i);
                return;
            }
            mutate(&mut a[i], r);
        }
        _ => *v = random_json(r, 2, HINTS),
    }
}

/// The seed, then `n` mutations of it.
fn variants(seed: &Value, r: &mut Rng, n: usize) -> Vec<Value> {
    let mut out = vec![seed.clone()];
    for _ in 0..n {
        let mut v = seed.clone();
        for _ in 0..1 + r.below(3) {
            mutate(&mut v, r);
        }
        out.push(v);
    }
    out
}

/// Each reader of the corpus, in the order it runs (the order draws the mutations).
const READERS: [&str; 16] = [
    "inline",
    "variables",
    "history",
    "tools",
    "callables",
    "input",
    "preface",
    "options",
    "options2",
    "template",
    "round",
    "resp_anthropic",
    "resp_chat",
    "resp_responses",
    "resp_gemini",
    "resp_converse",
];

/// What reader `name` makes of `v`, as text.
fn read(name: &str, v: &Value) -> String {
    match name {
        "inline" => format!("{:?}", fields::parse_inline(v)),
        "variables" => format!("{:?}", fields::parse_variables(v)),
        "history" => format!("{:?}", fields::parse_history(v)),
        "tools" => format!("{:?}", fields::parse_tools(v)),
        "callables" => format!("{:?}", fields::parse_callables(v)),
        "input" => format!("{:?}", fields::parse_raw_input(v)),
        "preface" => format!("{:?}", fields::parse_preface(v)),
        "options" | "options2" => format!(
            "{:?}",
            pgprompt_core::wire::options::parse_request_options(v)
                .and_then(|o| options::parse(&o.0, pgprompt_core::wire::options::every_wire()))
        ),
        "template" => format!("{:?}", template::parse(v)),
        "round" => format!(
            "{:?}",
            rounds::parse_values(
                1,
                [&v["a"], &v["r"], &v["s"]],
                false,
                Some(uuid::Uuid::nil()),
                pgprompt_core::wire::replay::part
            )
        ),
        _ => format!("{:?}", pgprompt_core::wire::read_response_value(v, None)),
    }
}

#[test]
fn every_readers_refusals_are_pinned() {
    let golden = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let seeds: Value = serde_json::from_str(
        &std::fs::read_to_string(golden.join("refusal_seeds.json")).expect("tests/golden/refusal_seeds.json"),
    )
    .expect("the seeds are JSON");
    let (mut r, mut dump, mut digests) = (Rng(0x1234_5678_9abc_def1), String::new(), BTreeMap::new());
    for name in READERS {
        let (mut hash, mut refused, mut distinct) = (Sha256::new(), 0, BTreeSet::new());
        let cases = variants(&seeds[name], &mut r, CASES);
        for v in &cases {
            let out = read(name, v);
            if out.starts_with("Err(") || out.starts_with("(None") {
                refused += 1;
                distinct.insert(out.clone());
            }
            hash.update(format!("{v}\n{out}\n"));
            writeln!(dump, "{name} {v}\n=> {out}").expect("a string takes a line");
        }
        let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        digests.insert(
            name,
            json!({"cases": cases.len(), "refused": refused, "distinct_refusals": distinct.len(), "sha256": hex}),
        );
    }
    if let Some(path) = std::env::var_os("REFUSALS_DUMP") {
        std::fs::write(path, &dump).expect("the dump is written");
    }
    let text = serde_json::to_string_pretty(&digests).expect("digests serialize") + "\n";
    let path = golden.join("refusals.json");
    if std::env::var_os("GOLDEN_UPDATE").is_some() {
        std::fs::write(&path, &text).expect("the golden file is written");
        return;
    }
    let want = std::fs::read_to_string(&path).expect("tests/golden/refusals.json");
    assert_eq!(
        want, text,
        "a reader's results changed (REFUSALS_DUMP=FILE lists every case, to diff with the previous checkout; GOLDEN_UPDATE=1 rewrites)"
    );
}
