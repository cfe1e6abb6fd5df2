//! The budget (docs/design.md, "Budget") over whole compiles: windows, knobs, the gate, and properties
//! of the selection.

use serde_json::Value;

use pgprompt_core::rows::{Mechanism, Role, TurnKind, Wire};
use pgprompt_core::testing::*;
use pgprompt_core::Code;
use pgprompt_core::Purpose;

/// A conversation of `n` user/assistant message turns, each `words` words long.
fn long_conversation(n: usize, words: usize) -> Scenario {
    let mut s = Scenario::new("What next?").doc(LARK, "system_prompt", "You are {{agent}}.");
    for i in 0..n {
        let (role, who) = if i % 2 == 0 {
            (Role::User, ADA)
        } else {
            (Role::Assistant, LARK)
        };
        s = s.message(role, who, &format!("turn {i}: {}", "word ".repeat(words)));
    }
    s
}

fn with_window(mut s: Scenario, advisory: i32) -> Scenario {
    s.model_mut("claude").advisory_window = Some(advisory);
    s
}

fn history_texts(v: &Value) -> Vec<String> {
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap().iter())
        .filter_map(|p| p["text"].as_str())
        .filter(|t| t.starts_with("turn "))
        .map(|t| t.split(':').next().unwrap().to_string())
        .collect()
}

#[test]
fn history_is_trimmed_newest_first_to_the_window() {
    let s = with_window(long_conversation(10, 20), 150);
    let out = s.run(Purpose::Compile).unwrap();
    let v = explain(&out);
    let h = &v["estimate"]["history"];
    assert_eq!(h["available"], 10);
    let selected = h["selected"].as_u64().unwrap() as usize;
    assert!(selected > 0 && selected < 10, "{h}");
    assert_eq!(h["skipped_reason"], "budget_exceeded");
    let want: Vec<String> = (10 - selected..10).map(|i| format!("turn {i}")).collect();
    assert_eq!(
        history_texts(&v),
        want,
        "a newest-first contiguous suffix, oldest first in the request"
    );
    assert!(v["estimate"]["total"].as_u64().unwrap() <= 150);
}

#[test]
fn nothing_fits_means_selected_zero_budget_exceeded() {
    let s = with_window(long_conversation(4, 50), 40);
    let v = explain(&s.run(Purpose::Compile).unwrap());
    assert_eq!(v["estimate"]["history"]["selected"], 0);
    assert_eq!(v["estimate"]["history"]["skipped_reason"], "budget_exceeded");
    assert_eq!(v["estimate"]["history"]["available"], 4);
    assert!(history_texts(&v).is_empty());
}

#[test]
fn knobs_of_the_template_and_of_the_turn() {
    let base = || with_window(long_conversation(10, 5), 100_000);
    let selected = |s: Scenario| explain(&s.run(Purpose::Preview).unwrap())["estimate"]["history"].clone();

    // A turn's history intent: max_entries.
    let h = selected(base().turn(|t| t.history = Some(history_intent(r#"{"max_entries": 3}"#))));
    assert_eq!(
        (h["selected"].as_u64(), h["skipped_reason"].as_str()),
        (Some(3), Some("max_entries"))
    );

    // max_tokens caps; each entry here costs 11 tokens (8 + 3).
    let h = selected(base().turn(|t| t.history = Some(history_intent(r#"{"budget": {"max_tokens": 40}}"#))));
    assert_eq!((h["budget"].as_u64(), h["selected"].as_u64()), (Some(40), Some(3)));

    // share of the window.
    let h = selected(
        with_window(long_conversation(10, 5), 200)
            .turn(|t| t.history = Some(history_intent(r#"{"budget": {"share": 0.2}}"#))),
    );
    assert_eq!(h["budget"], 40);

    // min_tokens lifts a small share, as far as room remains.
    let h = selected(
        with_window(long_conversation(10, 5), 200)
            .turn(|t| t.history = Some(history_intent(r#"{"budget": {"share": 0.1, "min_tokens": 60}}"#))),
    );
    assert_eq!(h["budget"], 60);

    // The template's knobs, overridden field by field by the turn's intent.
    let mut s = base().turn(|t| t.history = Some(history_intent(r#"{"max_entries": 5}"#)));
    let lark = s.user_mut(LARK);
    lark.prompt_mechanism = Mechanism::Assembly;
    lark.prompt_template = Some(template(
        r#"{"blocks": [{"type": "slot", "slot": "system_prompt"}, {"type": "history", "max_entries": 2, "budget": {"max_tokens": 1000}}, {"type": "input"}]}"#,
    ));
    let h = selected(s);
    assert_eq!((h["selected"].as_u64(), h["budget"].as_u64()), (Some(5), Some(1000)));
}

#[test]
fn a_share_on_a_windowless_model_is_history_budget_unavailable() {
    let mut s = long_conversation(3, 5).turn(|t| t.history = Some(history_intent(r#"{"budget": {"share": 0.5}}"#)));
    s.model_mut("claude").advisory_window = None;
    let e = s.run(Purpose::Preview).unwrap_err();
    assert_eq!(e.code, Code::HistoryBudgetUnavailable);
    assert_eq!(e.code.sqlstate(), "22023");
    // The estimate explains instead.
    let out = s.run(Purpose::Estimate).unwrap();
    assert_eq!(
        out.estimate().history.skipped_reason.as_deref(),
        Some("history_budget_unavailable")
    );
    assert_eq!(out.estimate().history.available, 3);
}

#[test]
fn a_windowless_model_funds_all_history() {
    let mut s = long_conversation(30, 200);
    s.model_mut("claude").advisory_window = None;
    let v = explain(&s.run(Purpose::Compile).unwrap());
    assert_eq!(v["estimate"]["history"]["selected"], 30);
    assert!(v["estimate"]["history"]["budget"].is_null());
}

#[test]
fn the_gate_refuses_a_request_whose_floors_exceed_the_window() {
    let s = with_window(long_conversation(2, 5), 20)
        .doc(LARK, "SOUL", "x")
        .turn(|t| t.prompt = Some("word ".repeat(40)));
    let e = s.run(Purpose::Compile).unwrap_err();
    assert_eq!(e.code, Code::EstimatedInputExceedsModelLimit);
    assert_eq!(e.code.sqlstate(), "54000");
    assert!(e.message.contains("takes 20"), "{}", e.message);
    assert!(e.hint.unwrap().contains("estimate_turn"));
    let out = s.run(Purpose::Estimate).unwrap();
    assert!(out.estimate().blocks.iter().any(|b| b.floor_unmet));
    assert_eq!(out.estimate().history.selected, 0);
    assert!(
        out.seal.is_some(),
        "the core leaves sealing to the caller, who seals only on Compile"
    );
}

#[test]
fn reasoning_replay_takes_an_eighth_and_the_margin_inflates() {
    let mut s = with_window(long_conversation(2, 5), 800);
    s.user_mut(LARK).reasoning_replay = true;
    let v = explain(&s.run(Purpose::Preview).unwrap());
    assert_eq!(v["estimate"]["window"]["tokens"], 700);

    // A request that exactly fills its window fits; with a 10% margin it does not.
    let s = Scenario::new(&"word ".repeat(97));
    let total = s.run(Purpose::Preview).unwrap().estimate().total;
    assert_eq!(
        total,
        pgprompt_core::tokens::Tokenizer::Cl100kBase.count(&"word ".repeat(97)) + 3 + 3
    );
    let mut s = with_window(s, total as i32);
    assert!(s.run(Purpose::Preview).is_ok());
    s.model_mut("claude").token_margin = 0.1;
    assert_eq!(
        s.run(Purpose::Preview).unwrap_err().code,
        Code::EstimatedInputExceedsModelLimit
    );
}

#[test]
fn estimate_blocks_add_up_to_the_total() {
    let s = with_window(long_conversation(6, 10), 120);
    let out = s.run(Purpose::Estimate).unwrap();
    let sum: u32 = out.estimate().blocks.iter().map(|b| b.tokens).sum();
    assert_eq!(sum + 3, out.estimate().total);
    let h = out.estimate().blocks.iter().find(|b| b.block == "history").unwrap();
    assert_eq!(h.tokens, out.estimate().history.tokens);
}

/// Property: over random conversations and windows, the request never exceeds the
/// window, the selection is a newest-first contiguous suffix of whole entries, and it
/// is monotone in the window.
#[test]
fn property_selection_fits_is_a_suffix_and_is_monotone() {
    let mut rng = Rng(0x853c49e6748fea9b);
    let mut next = move |m: u64| rng.below(m);
    for _ in 0..60 {
        let n = 1 + next(25) as usize;
        let mut s = Scenario::new("Go on.").doc(LARK, "system_prompt", "You are {{agent}}.");
        for i in 0..n {
            match next(4) {
                0 => {
                    s = s.earlier(TurnKind::Reply, |r| {
                        r.turn.poster_id = Some(id(ADA));
                        r.turn.prompt = Some(format!("turn {i}: ask"));
                        r.turn.content = Some(format!("turn {i}: {}", "answer ".repeat(1 + i % 7)));
                    })
                }
                1 => {
                    s = s.message(
                        Role::Assistant,
                        LARK,
                        &format!("turn {i}: {}", "said ".repeat(1 + i % 5)),
                    )
                }
                _ => s = s.message(Role::User, ADA, &format!("turn {i}: {}", "asked ".repeat(1 + i % 9))),
            }
        }
        let mut last_selected = 0;
        let mut window = 20 + next(40) as i32;
        for _ in 0..6 {
            window += next(120) as i32;
            let mut s2 = Scenario {
                ctx: s.ctx.clone(),
                history: s.history.clone(),
            };
            s2.model_mut("claude").advisory_window = Some(window);
            match s2.run(Purpose::Compile) {
                Err(e) => assert_eq!(e.code, Code::EstimatedInputExceedsModelLimit),
                Ok(out) => {
                    let v = explain(&out);
                    let total = v["estimate"]["total"].as_u64().unwrap() as i32;
                    assert!(total <= window, "total {total} over window {window}");
                    let turns = history_texts(&v);
                    let mut seen: Vec<usize> = turns.iter().map(|t| t[5..].parse().unwrap()).collect();
                    seen.dedup();
                    if let (Some(first), Some(last)) = (seen.first(), seen.last()) {
                        assert_eq!(*last, n - 1, "the newest turn is kept first");
                        assert_eq!(seen, (*first..n).collect::<Vec<_>>(), "contiguous");
                    }
                    let selected = v["estimate"]["history"]["selected"].as_u64().unwrap();
                    assert!(selected >= last_selected, "monotone in the window");
                    last_selected = selected;
                }
            }
        }
    }
}

#[test]
fn a_window_the_exact_size_of_the_request_keeps_every_entry() {
    // The newest entry is a user message that merges into the input: charged exactly.
    let mut s = long_conversation(7, 12);
    s.model_mut("claude").advisory_window = None;
    let total = s.run(Purpose::Preview).unwrap().estimate().total;
    let exact = with_window(
        Scenario {
            ctx: s.ctx.clone(),
            history: s.history.clone(),
        },
        total as i32,
    );
    let out = exact.run(Purpose::Compile).unwrap();
    assert_eq!(out.estimate().total, total);
    assert_eq!(
        (
            out.estimate().history.selected,
            out.estimate().history.skipped_reason.as_deref()
        ),
        (7, None)
    );
    // One token less and the oldest entry goes.
    let tight = with_window(
        Scenario {
            ctx: s.ctx.clone(),
            history: s.history.clone(),
        },
        total as i32 - 1,
    );
    let out = tight.run(Purpose::Compile).unwrap();
    assert_eq!(out.estimate().history.selected, 6);
    assert_eq!(
        out.estimate().history.skipped_reason.as_deref(),
        Some("budget_exceeded")
    );
}

/// Seed rule: a model without a window sizes nothing, so it funds all
/// history — neither the template's nor the turn's max_tokens or max_entries caps it.
#[test]
fn a_windowless_model_funds_all_history_whatever_the_caps() {
    let mut s = long_conversation(9, 12)
        .turn(|t| t.history = Some(history_intent(r#"{"max_entries": 2, "budget": {"max_tokens": 10}}"#)));
    s.model_mut("claude").advisory_window = None;
    let lark = s.user_mut(LARK);
    lark.prompt_mechanism = Mechanism::Assembly;
    lark.prompt_template = Some(template(
        r#"{"blocks": [{"type": "slot", "slot": "system_prompt"}, {"type": "history", "max_entries": 1, "budget": {"max_tokens": 5}}, {"type": "input"}]}"#,
    ));
    let h = s.run(Purpose::Preview).unwrap().estimate().history.clone();
    assert_eq!(
        (h.selected, h.available, h.budget, h.skipped_reason),
        (9, 9, None, None)
    );
    // With a window, the same caps hold.
    s.model_mut("claude").advisory_window = Some(100_000);
    let h = s.run(Purpose::Preview).unwrap().estimate().history.clone();
    assert_eq!((h.selected, h.skipped_reason.as_deref()), (0, Some("budget_exceeded")));
}

/// Seed rule (issue 41, item 5): a user-side block before history and a user-side oldest
/// entry share one message; the floors were charged that message's overhead, so the
/// entry is taken when it fits less it — a window the exact size of the request keeps
/// every entry, on each wire where they merge.
#[test]
fn a_user_side_block_before_history_and_the_oldest_entry_are_costed_as_one_message() {
    for (model, wire) in Wire::ALL.iter().map(|&w| (model_on(w), w.as_str())) {
        let mut s = long_conversation(7, 12);
        s.model_mut(model).advisory_window = None;
        let lark = s.user_mut(LARK);
        lark.model = Some(model.into());
        lark.prompt_mechanism = Mechanism::Assembly;
        lark.prompt_template = Some(template(
            r#"{"blocks": [{"type": "slot", "slot": "system_prompt"}, {"type": "inline", "role": "user", "text": "Remember {{user}} decides."}, {"type": "history"}, {"type": "input"}]}"#,
        ));
        let out = s.run(Purpose::Preview).unwrap();
        let total = out.estimate().total;
        let v = body(&out);
        assert!(v.to_string().contains("Remember"), "{v}");
        let mut exact = Scenario {
            ctx: s.ctx.clone(),
            history: s.history.clone(),
        };
        exact.model_mut(model).advisory_window = Some(total as i32);
        let out = exact.run(Purpose::Compile).unwrap();
        assert_eq!(out.estimate().total, total, "{wire}");
        assert_eq!(
            out.estimate().history.selected,
            7,
            "{wire}: every entry fits the exact window"
        );
        exact.model_mut(model).advisory_window = Some(total as i32 - 1);
        let out = exact.run(Purpose::Compile).unwrap();
        assert_eq!(
            out.estimate().history.selected,
            6,
            "{wire}: one token less and the oldest goes"
        );
        assert!(out.estimate().total < total);
    }
}
