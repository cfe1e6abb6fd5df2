//! Fuzzing the pure core (a property-test corpus; cargo-fuzz needs a nightly toolchain
//! this machine cannot fetch). Random and pathological templates, documents, inline
//! entries, turn fields, rounds and texts go through every entry point; nothing may
//! panic, and every refusal carries its code.
//!
//!     cargo test -p pgprompt-core --lib suite_fuzz   # the short run (tests)
//!     PGPROMPT_FUZZ_ITERATIONS=200000 cargo test -p pgprompt-core --release --lib suite_fuzz   # a long run
//!
//! Seeds of interest live in tests/fuzz/corpus.json and are always run.

use serde_json::{json, Value};

use pgprompt_core::rows::{Mechanism, Mode, Role, TurnKind};
use pgprompt_core::testing::*;
use pgprompt_core::wire::replay;
use pgprompt_core::Purpose;
use pgprompt_core::{envelope, fields, macros, rounds, template};

fn iterations() -> usize {
    std::env::var("PGPROMPT_FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500)
}

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
    "memory",
    "skills",
    "runtime",
    "lead",
    "tail",
    "inline",
    "document",
    "max_entries",
    "budget",
    "share",
    "min_tokens",
    "max_tokens",
    "system_prompt",
    "persona",
    "character",
    "system",
    "user",
    "assistant",
    "developer",
    "SOUL",
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
];

fn block(r: &mut Rng) -> Value {
    let t = r.pick(&[
        "slot", "document", "inline", "memory", "skills", "runtime", "lead", "tail", "history", "input",
    ]);
    let mut b = json!({"type": t});
    match t {
        "slot" => b["slot"] = json!(r.pick(&["system_prompt", "character", "persona", "soul"])),
        "document" => b["name"] = json!(r.pick(&["SOUL", "MISSION", "bad name"])),
        "inline" => {
            b["role"] = json!(r.pick(&["system", "user", "assistant", "developer", "tool"]));
            b["text"] = json!(text(r));
        }
        "history" if r.below(2) == 0 => {
            b["budget"] = json!({"share": r.below(12) as f64 / 10.0, "max_tokens": r.below(50)})
        }
        _ => {}
    }
    if r.below(8) == 0 {
        b[r.pick(HINTS)] = random_json(r, 2, HINTS);
    }
    b
}

fn template_value(r: &mut Rng) -> Value {
    if r.below(4) == 0 {
        return random_json(r, 4, HINTS);
    }
    let n = r.below(10);
    let blocks: Vec<Value> = (0..n).map(|_| block(r)).collect();
    json!({"blocks": blocks, "variables": {"scene": "x", "v": text(r)}})
}

fn round_json(r: &mut Rng) -> (String, String, String) {
    let assistant = if r.below(3) == 0 {
        random_json(r, 3, HINTS)
    } else {
        json!([{"type": "text", "text": text(r)}, {"type": "tool_call", "id": "c1", "name": "x", "input": {}}])
    };
    let results = if r.below(3) == 0 {
        random_json(r, 3, HINTS)
    } else {
        json!([{"call_id": r.pick(&["c1", "c2"]), "content": text(r),
                "captures": [{"name": "a", "media_type": r.pick(&["image/png", "text/plain"]), "data": r.pick(&["aGk=", "!!", ""])}]}])
    };
    let steers = if r.below(3) == 0 {
        random_json(r, 2, HINTS)
    } else {
        json!([{"text": text(r)}])
    };
    (assistant.to_string(), results.to_string(), steers.to_string())
}

#[test]
fn fuzz_the_grammar_and_the_texts() {
    let mut r = Rng(0x51ed_2701_55aa_7c3d);
    for _ in 0..iterations() * 4 {
        let t = template_value(&mut r);
        let (parsed, problems) = template::parse(&t);
        assert_eq!(parsed.is_some(), problems.is_empty());
        for p in &problems {
            assert!(p.path.is_empty() || p.path.starts_with('/'), "{p:?}");
        }
        let s = text(&mut r);
        let _ = macros::check(&s, &|v| v == "scene", "fuzz");
        let value = text(&mut Rng(3));
        let values = macros::Values::default();
        let _ = macros::substitute(&s, &values, &|_| Some(value.as_str()), 1 << 16, "fuzz");
        assert_eq!(envelope::unescape(&envelope::escape(&s)), s);
        let field = random_json(&mut r, 3, HINTS).to_string();
        let _ = fields::check_turn(&field, &field, Some(&field), Some(&field), Some(&field), &field);
        let _ = crate::wire::options::parse_request_options(field.as_str());
        let _ = fields::parse_inline(&field);
        let (a, b, c) = round_json(&mut r);
        let _ = rounds::parse(&row(1, &a, &b, &c, r.below(2) == 0), None, replay::part);
    }
}

fn row(n: i32, assistant: &str, results: &str, steers: &str, aborted: bool) -> rounds::RoundRow {
    rounds::RoundRow {
        n,
        assistant: assistant.into(),
        results: results.into(),
        steers: steers.into(),
        aborted,
    }
}

/// The turn's JSON columns as the loader reads them: each parsed once, or refused.
struct Columns {
    inline: String,
    variables: String,
    history: Option<String>,
    input: Option<String>,
    tools: Option<String>,
    callables: String,
}

impl Columns {
    fn load(&self, t: &mut pgprompt_core::rows::Turn) -> pgprompt_core::Result<()> {
        t.inline = fields::parse_inline(&self.inline)?;
        t.variables = fields::parse_variables(&self.variables)?;
        t.history = self.history.as_deref().map(fields::parse_history).transpose()?;
        t.input = self.input.as_deref().map(fields::parse_raw_input).transpose()?;
        t.tools = self.tools.as_deref().map(fields::parse_tools).transpose()?;
        t.callables = fields::parse_callables(&self.callables)?;
        Ok(())
    }
}

#[test]
fn fuzz_whole_compiles() {
    let mut r = Rng(0x0dd_b1ad_cafe_f00d);
    let (mut compiled, mut refused) = (0, 0);
    for i in 0..iterations() {
        let mut s = Scenario::new(&text(&mut r))
            .doc(LARK, "system_prompt", &text(&mut r))
            .doc(LARK, "SOUL", &text(&mut r))
            .message(Role::User, [ADA, GRACE, LARK][i % 3], &text(&mut r))
            .earlier(TurnKind::Reply, |h| {
                h.turn.prompt = Some(text(&mut Rng(i as u64 + 1)));
                h.turn.content = Some("answer".into());
                h.turn.mode = if i % 2 == 0 { Mode::Run } else { Mode::DirectReply };
            });
        if r.below(3) == 0 {
            let lark = s.user_mut(LARK);
            lark.prompt_mechanism = [Mechanism::Assembly, Mechanism::Raw, Mechanism::Default][r.below(3) as usize];
            lark.prompt_template = Some(template_value(&mut r));
        }
        let field = |r: &mut Rng| random_json(r, 3, HINTS).to_string();
        // Each field is junk now and then, well formed otherwise.
        let columns = Columns {
            inline: if r.below(8) == 0 {
                field(&mut r)
            } else {
                json!([{"text": text(&mut r)}]).to_string()
            },
            variables: if r.below(8) == 0 { field(&mut r) } else { "{}".into() },
            history: (r.below(8) == 0).then(|| field(&mut r)),
            input: match r.below(8) {
                0 => Some(field(&mut r)),
                1..=3 => Some(json!([{"role": "user", "content": text(&mut r)}]).to_string()),
                _ => None,
            },
            tools: (r.below(8) == 0).then(|| field(&mut r)),
            callables: if r.below(8) == 0 {
                field(&mut r)
            } else {
                r#"[{"name": "skill"}]"#.into()
            },
        };
        s.ctx.turn.mode = if r.below(2) == 0 { Mode::Run } else { Mode::DirectReply };
        s.model_mut("claude").advisory_window = Some(r.below(2000) as i32 + 1);
        let mut loaded = columns.load(&mut s.ctx.turn);
        if r.below(4) == 0 {
            let (a, b, c) = round_json(&mut r);
            match rounds::parse(&row(1, &a, &b, &c, false), None, replay::part) {
                Ok(round) => s.ctx.rounds = vec![round],
                Err(e) => loaded = loaded.and(Err(e)),
            }
        }
        if let Err(e) = loaded {
            assert!(e.message.starts_with(e.code.name()), "{e}");
            refused += 1;
            continue;
        }
        for purpose in [Purpose::Compile, Purpose::Estimate] {
            match s.run(purpose) {
                Ok(out) => {
                    assert!(serde_json::from_str::<Value>(&out.body.text()).is_ok());
                    compiled += 1;
                }
                Err(e) => {
                    assert!(e.message.starts_with(e.code.name()), "{e}");
                    refused += 1;
                }
            }
        }
    }
    // The generator reaches both sides.
    assert!(
        compiled > iterations() / 10 && refused > iterations() / 10,
        "{compiled} compiled, {refused} refused"
    );
}

#[test]
fn pathological_inputs() {
    // A million spaces as a turn's words and a document; 64 KiB of braces; deep JSON.
    let spaces = " ".repeat(1_000_000);
    let s = Scenario::new(&spaces).doc(LARK, "system_prompt", &"{".repeat(65_536));
    let out = s.run(Purpose::Estimate).unwrap();
    assert!(out.estimate().total > 0);
    assert!(macros::check(&"{{".repeat(40_000), &|_| false, "x").is_ok());
    assert!(macros::check(&"}}{{".repeat(20_000), &|_| false, "x").is_ok());
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert_eq!(template::parse_text(&deep).1[0].code, "template_not_json");
    assert!(fields::parse_inline(&deep).is_err());
    assert!(rounds::parse(&row(1, &deep, "[]", "[]", false), None, replay::part).is_err());
    let wide = format!("[{}]", vec![r#"{"text":"x"}"#; 20_000].join(","));
    assert!(fields::parse_inline(&wide).is_ok());
}

#[test]
fn the_corpus() {
    let corpus: Value = serde_json::from_str(include_str!("../tests/fuzz/corpus.json")).unwrap();
    for t in corpus["templates"].as_array().unwrap() {
        let (parsed, problems) = template::parse(t);
        assert_eq!(parsed.is_some(), problems.is_empty());
    }
    for s in corpus["texts"].as_array().unwrap() {
        let s = s.as_str().unwrap();
        assert_eq!(envelope::unescape(&envelope::escape(s)), s);
        let _ = macros::check(s, &|_| false, "corpus");
    }
    for f in corpus["turn_fields"].as_array().unwrap() {
        let f = f.to_string();
        let _ = fields::check_turn(&f, &f, Some(&f), Some(&f), Some(&f), &f);
        let _ = crate::wire::options::parse_request_options(f.as_str());
    }
    for rd in corpus["rounds"].as_array().unwrap() {
        let _ = rounds::parse(
            &row(
                1,
                &rd["assistant"].to_string(),
                &rd["results"].to_string(),
                &rd["steers"].to_string(),
                false,
            ),
            None,
            replay::part,
        );
    }
}
