//! Cache-stable trimming (docs/design.md, "Budget"): a conversation that outgrows its
//! window, compiled turn after turn the way an application drives it (compile, seal,
//! write the answer). Under `"trim": "stable"` consecutive requests share their whole
//! prefix except on the turns where history is cut down to its low water; newest-first
//! trimming moves the first history entry on every turn once the window is full.

use serde_json::{json, Value};

use pgprompt_core::history::EntryAt;
use pgprompt_core::rows::{Mechanism, TurnKind};
use pgprompt_core::template;
use pgprompt_core::testing::*;
use pgprompt_core::Purpose;

const WINDOW: i32 = 1_500;

/// The request as (role, text) parts, cache markers aside: what a prefix cache compares.
fn parts(body: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = body["system"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| ("system".to_string(), b["text"].as_str().unwrap().to_string()))
        .collect();
    for m in body["messages"].as_array().unwrap() {
        for p in m["content"].as_array().unwrap() {
            out.push((m["role"].as_str().unwrap().into(), p["text"].as_str().unwrap().into()));
        }
    }
    out
}

/// Turn `i` of the conversation, compiled after turns 0..i were answered.
fn turn(i: usize, trim: &str, exchanges: &[(String, String)]) -> Scenario {
    let mut s = Scenario::new(&exchanges[i].0).doc(LARK, "system_prompt", "You are {{agent}}, terse.");
    for (prompt, answer) in &exchanges[..i] {
        s = s.earlier(TurnKind::Reply, |r| {
            r.turn.answerer_id = Some(id(LARK));
            r.turn.poster_id = Some(id(ADA));
            r.turn.prompt = Some(prompt.clone());
            r.turn.content = Some(answer.clone());
        });
    }
    let lark = s.user_mut(LARK);
    lark.prompt_mechanism = Mechanism::Assembly;
    lark.prompt_template = Some(json!({"blocks": [
        {"type": "slot", "slot": "system_prompt"},
        {"type": "history", "budget": {"trim": trim}},
        {"type": "input"}
    ]}));
    s.model_mut("claude").advisory_window = Some(WINDOW);
    s
}

fn exchanges(n: usize) -> Vec<(String, String)> {
    let mut r = Rng(0x5eed_cace);
    let words = [
        "invoice", "refund", "charge", "ledger", "export", "ticket", "the", "a", "of", "today",
    ];
    let mut text = |i: usize, who: &str| {
        let len = 8 + r.below(30) as usize;
        let body: Vec<&str> = (0..len).map(|_| r.pick(&words)).collect();
        format!("{who} {i}: {}", body.join(" "))
    };
    (0..n).map(|i| (text(i, "question"), text(i, "answer"))).collect()
}

struct Step {
    parts: Vec<(String, String)>,
    reason: Option<String>,
    tokens: u64,
    budget: u64,
}

/// Drives the conversation: each turn is compiled with the previous seal's cut.
fn drive(trim: &str, n: usize) -> Vec<Step> {
    let ex = exchanges(n);
    let mut cut: Option<EntryAt> = None;
    let mut steps = Vec::new();
    for i in 0..n {
        let out = turn(i, trim, &ex).run_after(Purpose::Compile, cut).unwrap();
        // As the loader reads it: from the seal's record as stored.
        let stored = serde_json::to_value(&out.seal.as_ref().unwrap().frozen).unwrap();
        cut = pgprompt_core::seal::history_from(stored.get(pgprompt_core::seal::HISTORY_FROM)).unwrap();
        let h = &explain(&out)["estimate"]["history"];
        steps.push(Step {
            parts: parts(&body(&out)),
            reason: h["skipped_reason"].as_str().map(str::to_string),
            tokens: h["tokens"].as_u64().unwrap_or(0),
            budget: h["budget"].as_u64().unwrap(),
        });
    }
    steps
}

fn extends(earlier: &Step, later: &Step) -> bool {
    later.parts.len() >= earlier.parts.len() && later.parts[..earlier.parts.len()] == earlier.parts[..]
}

#[test]
fn stable_trimming_keeps_the_prefix_except_where_it_cuts_to_low_water() {
    let steps = drive("stable", 120);
    let mut cuts = 0;
    for (i, pair) in steps.windows(2).enumerate() {
        let (earlier, later) = (&pair[0], &pair[1]);
        match later.reason.as_deref() {
            Some("low_water") => {
                cuts += 1;
                assert!(
                    later.tokens as f64 <= 0.7 * later.budget as f64,
                    "turn {}: a cut goes down to low water: {} of {}",
                    i + 1,
                    later.tokens,
                    later.budget
                );
            }
            reason => assert!(
                extends(earlier, later),
                "turn {}: no cut ({reason:?}), so the request extends the previous one",
                i + 1
            ),
        }
    }
    assert!(
        cuts >= 3,
        "the conversation outgrows its window several times ({cuts} cuts)"
    );
    assert!(cuts < 120 / 4, "cuts are rare ({cuts})");
    let full: Vec<&Step> = steps.iter().filter(|s| s.reason.is_some()).collect();
    let use_share = full.iter().map(|s| s.tokens as f64 / s.budget as f64).sum::<f64>() / full.len() as f64;
    assert!(
        use_share >= 0.75,
        "history uses most of its allowance on average: {use_share:.2}"
    );
    assert!(steps.iter().any(|s| s.reason.as_deref() == Some("stable_cut")));
}

#[test]
fn newest_first_trimming_moves_the_prefix_once_the_window_is_full() {
    let steps = drive("newest", 60);
    let trimmed: Vec<usize> = (1..steps.len()).filter(|i| steps[*i].reason.is_some()).collect();
    assert!(!trimmed.is_empty());
    for i in &trimmed[1..] {
        assert!(
            !extends(&steps[i - 1], &steps[*i]),
            "turn {i}: newest first drops the oldest entry"
        );
    }
    for i in 1..trimmed[0] {
        assert!(
            extends(&steps[i - 1], &steps[i]),
            "below the window every request extends the last"
        );
    }
}

#[test]
fn the_cut_is_a_function_of_the_rows() {
    let ex = exchanges(40);
    let s = turn(39, "stable", &ex);
    let cut = Some(EntryAt {
        depth: 0,
        seq: 20,
        entry: 0,
    });
    let (a, b) = (
        s.run_after(Purpose::Compile, cut).unwrap(),
        s.run_after(Purpose::Compile, cut).unwrap(),
    );
    assert_eq!(a.body.text(), b.body.text());
    assert_eq!(a.seal.unwrap().frozen.history_from, b.seal.unwrap().frozen.history_from);
    // Kept while it fits: history begins exactly at the previous cut.
    let h = explain(&s.run_after(Purpose::Preview, cut).unwrap())["estimate"]["history"].clone();
    assert_eq!(h["skipped_reason"], "stable_cut");
    assert_eq!(
        h["selected"],
        2 * 20,
        "turns 20 to 39 (seq), a seed and an answer each: {h}"
    );
}

#[test]
fn trim_and_low_water_are_checked_on_write() {
    let (t, problems) = template::parse(&json!({"blocks": [
        {"type": "history", "budget": {"trim": "oldest", "low_water": 1.0}},
        {"type": "input"}
    ]}));
    assert!(t.is_none());
    let found: Vec<(&str, &str)> = problems.iter().map(|p| (p.path.as_str(), p.code)).collect();
    assert_eq!(
        found,
        vec![
            ("/blocks/0/budget/trim", "trim_invalid"),
            ("/blocks/0/budget/low_water", "low_water_invalid")
        ]
    );
    let (t, problems) = template::parse(&json!({"blocks": [
        {"type": "history", "budget": {"trim": "stable", "low_water": 0.5}},
        {"type": "input"}
    ]}));
    assert!(t.is_some(), "{problems:?}");
}
