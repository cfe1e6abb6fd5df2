//! The assembly and raw mechanisms: every block type under a template,
//! the seed-003 layout, raw entries sent verbatim, and one grammar for validation and
//! compilation.

use serde_json::{json, Value};

use pgprompt_core::rows::{Mechanism, Mode, Role, TurnKind};
use pgprompt_core::template;
use pgprompt_core::testing::*;
use pgprompt_core::Code;
use pgprompt_core::Purpose;

fn assembled(template: Value) -> Scenario {
    let mut s = Scenario::new("Ship it?")
        .doc(LARK, "system_prompt", "You are {{agent}}.")
        .doc(0, "character", "The {{workspace}} room.")
        .doc(ADA, "persona", "Ada decides.")
        .doc(LARK, "SOUL", "Calm and exact.")
        .doc(LARK, "MISSION", "Ship {{workspace}}'s release on {{date}}.")
        .doc(LARK, "DESIGN", "Plain text, no tables.")
        .memory("agent", "notes.md", "Release train is weekly.")
        .skill("agent", "deploy", "Deploy a build.", |_| {})
        .skill("agent", "recall", "Recall only.", |k| k.recall_only = true)
        .message(Role::User, ADA, "The build is green.")
        .earlier(TurnKind::Reply, |r| {
            r.turn.poster_id = Some(id(ADA));
            r.turn.prompt = Some("Anything blocking?".into());
            r.turn.content = Some("No blockers.".into());
        });
    let lark = s.user_mut(LARK);
    lark.prompt_mechanism = Mechanism::Assembly;
    lark.prompt_template = Some(template);
    s
}

/// The layout of seed 003 as a template: core instructions, the durable documents, the
/// catalog without recall-only skills, runtime context; transcript and turn-local input
/// outside the system prompt.
fn seed_003_template() -> Value {
    json!({
        "blocks": [
            {"type": "slot", "slot": "system_prompt"},
            {"type": "document", "name": "SOUL"},
            {"type": "document", "name": "MISSION"},
            {"type": "document", "name": "DESIGN"},
            {"type": "skills"},
            {"type": "runtime"},
            {"type": "history"},
            {"type": "input"}
        ]
    })
}

#[test]
fn the_seed_003_layout() {
    let s = assembled(seed_003_template()).turn(|t| {
        t.mode = Mode::Run;
        t.callables = callables(r#"[{"name": "skill"}]"#);
        t.tools = Some(tools(r#"[{"name": "bash", "input_schema": {"type": "object"}}, {"name": "read_file", "input_schema": {"type": "object"}}]"#));
    });
    let out = s.run(Purpose::Compile).unwrap();
    let v = golden("seed_003_layout", &out);
    assert_eq!(
        outline(&v),
        vec![
            "system: You are Lark. | Calm and exact. | Ship Acme's release on 2026-11-30. | Plain text, no tables. | Skills available now.\n- skill / deploy: Deploy a build. | Runtime context.\nOrigin channel: email\nTimezone: Europe/Paris\nTools: bash, read_file",
            "user: The build is green. | Anything blocking?",
            "assistant: No blockers.",
            "user: Ship it?",
        ]
    );
    assert_eq!(v["mechanism"], "assembly");
    assert_eq!(out.seal.unwrap().frozen.mechanism, Mechanism::Assembly);
    let names: Vec<&str> = v["estimate"]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["block"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "system_prompt",
            "document:SOUL",
            "document:MISSION",
            "document:DESIGN",
            "skills",
            "runtime",
            "history",
            "input",
            "tools"
        ]
    );
}

#[test]
fn every_block_type_under_a_template() {
    let t = json!({
        "blocks": [
            {"type": "slot", "slot": "system_prompt"},
            {"type": "inline", "role": "system", "text": "Scene: {{scene}}, mood {{mood}}."},
            {"type": "document", "name": "SOUL"},
            {"type": "slot", "slot": "persona"},
            {"type": "memory"},
            {"type": "runtime"},
            {"type": "inline", "role": "developer", "text": "Tools are listed above."},
            {"type": "lead"},
            {"type": "history", "max_entries": 10},
            {"type": "inline", "role": "user", "text": "Remember {{user}} decides."},
            {"type": "tail"},
            {"type": "input"}
        ],
        "variables": {"scene": "release day", "mood": "calm"}
    });
    let s = assembled(t).turn(|t| {
        t.variables = variables(r#"{"mood": "tense"}"#);
        t.inline =
            inline(r#"[{"text": "Lead words."}, {"text": "Tail words.", "position": "tail", "role": "assistant"}]"#);
    });
    let out = s.run(Purpose::Compile).unwrap();
    let v = golden("assembly_every_block", &out);
    assert_eq!(
        outline(&v),
        vec![
            "system: You are Lark. | Scene: release day, mood tense. | Calm and exact. | Ada decides. | Memory available now.\n\n### agent/notes.md\nRelease train is weekly. | Runtime context.\nOrigin channel: email\nTimezone: Europe/Paris",
            "developer: Tools are listed above.",
            // The earlier reply was never sealed: its preface is laid down as this
            // template would have, its inline block after history included.
            "user: Lead words. | The build is green. | Remember Ada decides. | Anything blocking?",
            "assistant: No blockers.",
            "user: Remember Ada decides.",
            "assistant: Tail words.",
            "user: Ship it?",
        ]
    );
    // The slot the template does not name (character) is neither rendered nor read.
    let versions: Value = serde_json::from_str(&out.seal.unwrap().versions).unwrap();
    assert_eq!(
        versions["documents"].as_object().unwrap().len(),
        3,
        "system_prompt, SOUL, persona: {versions}"
    );
    assert!(!v["messages"].to_string().contains("room."));
    // Inline blocks between history and input ride the preface.
    assert_eq!(v["preface"].as_array().unwrap().len(), 2);
    // The lead block ahead of history is part of the stable prefix.
    assert_eq!(v["cache_marker"], 3);
}

#[test]
fn the_preface_of_an_assembly_turn_is_replayed_by_the_next_turn() {
    let t = json!({"blocks": [{"type": "history"}, {"type": "inline", "role": "user", "text": "It is {{date}}."}, {"type": "input"}]});
    let first = assembled(t.clone()).run(Purpose::Compile).unwrap().seal.unwrap();
    let s = assembled(t).earlier(TurnKind::Reply, |r| {
        r.turn.id = id(TURN);
        r.turn.poster_id = Some(id(ADA));
        r.turn.prompt = Some("Ship it?".into());
        r.turn.date = "2026-11-30".into();
        r.turn.sealed_preface = Some(first.frozen.preface.clone());
    });
    let s = s.turn(|t| {
        t.id = id(0xd1);
        t.prompt = Some("Done?".into());
        t.date = "2026-12-01".into();
    });
    let v = explain(&s.run(Purpose::Preview).unwrap());
    assert_eq!(
        outline(&v).last().unwrap(),
        "user: It is 2026-11-30. | Ship it? | It is 2026-12-01. | Done?"
    );
}

#[test]
fn raw_sends_the_input_entries_verbatim() {
    let mut s = Scenario::new("ignored under raw")
        .doc(LARK, "system_prompt", "Not read under raw.")
        .message(Role::User, ADA, "Not read either.")
        .turn(|t| {
            t.input = Some(raw_input(
                r#"[{"role": "system", "content": "Be terse."}, {"role": "user", "content": "One."}, {"role": "user", "content": [{"type": "text", "text": "Two."}]}, {"role": "assistant", "content": "Three."}]"#,
            ))
        });
    s.user_mut(LARK).prompt_mechanism = Mechanism::Raw;
    let out = s.run(Purpose::Compile).unwrap();
    let v = golden("raw_verbatim", &out);
    assert_eq!(
        outline(&v),
        ["system: Be terse.", "user: One.", "user: Two.", "assistant: Three."]
    );
    assert_eq!(v["mechanism"], "raw");
    let req = body(&out);
    assert_eq!(req["system"], json!([{"type": "text", "text": "Be terse."}]));
    assert_eq!(v["estimate"]["history"]["skipped_reason"], "raw_mechanism");
    // A lone string entry stays a string; the wire merges the two user entries.
    assert_eq!(req["messages"][1], json!({"role": "assistant", "content": "Three."}));
    let mut chat = Scenario {
        ctx: s.ctx.clone(),
        history: Vec::new(),
    };
    chat.ctx.turn.model = Some("gpt".into());
    let c = body(&chat.run(Purpose::Compile).unwrap());
    assert_eq!(
        c["messages"],
        json!([{"role": "system", "content": "Be terse."}, {"role": "user", "content": "One."},
               {"role": "user", "content": [{"type": "text", "text": "Two."}]}, {"role": "assistant", "content": "Three."}]),
        "the chat wire sends the entries exactly as stored"
    );
    // The gate still applies.
    s.model_mut("claude").advisory_window = Some(5);
    assert_eq!(
        s.run(Purpose::Compile).unwrap_err().code,
        Code::EstimatedInputExceedsModelLimit
    );
    // A raw turn without entries, or with bad ones, is refused with the path.
    let mut bad = Scenario {
        ctx: s.ctx.clone(),
        history: Vec::new(),
    };
    bad.model_mut("claude").advisory_window = None;
    bad.ctx.turn.input = None;
    assert_eq!(bad.run(Purpose::Compile).unwrap_err().code, Code::RawInputInvalid);
    // Bad entries are refused where they are read (the write trigger, the loader).
    let e = pgprompt_core::fields::parse_raw_input(r#"[{"role": "tool", "content": "x"}]"#).unwrap_err();
    assert_eq!(e.code, Code::RawInputInvalid);
    assert!(e.message.ends_with("at /input/0/role"));
}

#[test]
fn a_system_entry_may_extend_the_leading_run_when_its_block_follows_it() {
    let t = json!({"blocks": [{"type": "slot", "slot": "system_prompt"}, {"type": "lead"}, {"type": "history"}, {"type": "input"}]});
    let s = assembled(t.clone()).turn(|t| t.inline = inline(r#"[{"text": "Also: be kind.", "role": "system"}]"#));
    let v = explain(&s.run(Purpose::Preview).unwrap());
    assert_eq!(outline(&v)[0], "system: You are Lark. | Also: be kind.");
    let s = assembled(t)
        .turn(|t| t.inline = inline(r#"[{"text": "First."}, {"text": "Also: be kind.", "role": "system"}]"#));
    assert_eq!(
        s.run(Purpose::Preview).unwrap_err().code,
        Code::InlineSystemOutsideLeadingRun
    );
}

/// Property: every template `validate_template` accepts compiles (only the budget
/// gate may refuse), so validation and compilation share one grammar.
#[test]
fn property_a_template_that_validates_always_compiles() {
    let pool = [
        json!({"type": "slot", "slot": "system_prompt"}),
        json!({"type": "slot", "slot": "character"}),
        json!({"type": "slot", "slot": "persona"}),
        json!({"type": "document", "name": "SOUL"}),
        json!({"type": "document", "name": "MISSING"}),
        json!({"type": "inline", "role": "system", "text": "sys {{agent}} {{v1}}"}),
        json!({"type": "inline", "role": "developer", "text": "dev {{date}}"}),
        json!({"type": "inline", "role": "user", "text": "user {{v2}}"}),
        json!({"type": "inline", "role": "assistant", "text": "assistant"}),
        json!({"type": "memory"}),
        json!({"type": "skills"}),
        json!({"type": "runtime"}),
        json!({"type": "lead"}),
        json!({"type": "tail"}),
        json!({"type": "history"}),
        json!({"type": "history", "max_entries": 1, "budget": {"max_tokens": 5}}),
        json!({"type": "history", "budget": {"share": 0.5, "min_tokens": 10}}),
        json!({"type": "input"}),
    ];
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut next = move |m: u64| rng.below(m);
    let mut valid = 0;
    for _ in 0..4000 {
        // Mostly well-formed shapes (blocks, one history, blocks, input), sometimes any.
        let mut blocks: Vec<Value> = Vec::new();
        let pick = |from: usize, to: usize, blocks: &mut Vec<Value>, k: u64| {
            blocks.push(pool[from + (k % (to - from) as u64) as usize].clone());
        };
        if next(5) == 0 {
            for _ in 0..1 + next(9) {
                pick(0, pool.len(), &mut blocks, next(1000));
            }
        } else {
            for _ in 0..next(6) {
                pick(0, 14, &mut blocks, next(1000));
            }
            pick(14, 17, &mut blocks, next(1000));
            for _ in 0..next(4) {
                pick(5, 14, &mut blocks, next(1000));
            }
            pick(17, 18, &mut blocks, 0);
        }
        let t = json!({"blocks": blocks, "variables": {"v1": "one", "v2": "two"}});
        let (parsed, problems) = template::parse(&t);
        if parsed.is_none() {
            assert!(!problems.is_empty());
            continue;
        }
        valid += 1;
        let s = assembled(t.clone()).turn(|t| {
            t.mode = Mode::Run;
            t.callables = callables(r#"[{"name": "skill"}]"#);
        });
        match s.run(Purpose::Compile) {
            Ok(out) => assert!(!out.body.text().is_empty()),
            Err(e) => panic!("{t} validated but did not compile: {e}"),
        }
    }
    assert!(valid > 50, "only {valid} valid templates generated");
}
