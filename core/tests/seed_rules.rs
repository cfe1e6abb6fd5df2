//! Rules of the seeds (`../shared/seeds/`) and SPEC §4, §7, §8 that 0.3 broke or left
//! untested, one test each; each test's name says which rule it guards.

use serde_json::{json, Value};

use pgprompt_core::rows::{Mode, Role, TurnKind, Wire};
use pgprompt_core::testing::*;
use pgprompt_core::Purpose;

fn on(mut s: Scenario, wire: Wire) -> Scenario {
    s.model_mut("claude").wire = wire;
    s
}

/// The call ids a body sends, and the call ids it answers, on any wire.
fn calls_and_results(wire: Wire, b: &Value) -> (Vec<String>, Vec<String>) {
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    let s = |v: &Value| v.as_str().unwrap().to_string();
    match wire {
        Wire::Anthropic => {
            for m in b["messages"].as_array().unwrap() {
                for p in m["content"].as_array().into_iter().flatten() {
                    match p["type"].as_str() {
                        Some("tool_use") => calls.push(s(&p["id"])),
                        Some("tool_result") => results.push(s(&p["tool_use_id"])),
                        _ => {}
                    }
                }
            }
        }
        Wire::Chat => {
            for m in b["messages"].as_array().unwrap() {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    calls.push(s(&c["id"]));
                }
                if m["role"] == "tool" {
                    results.push(s(&m["tool_call_id"]));
                }
            }
        }
        Wire::Responses => {
            for i in b["input"].as_array().unwrap() {
                match i["type"].as_str() {
                    Some("function_call") => calls.push(s(&i["call_id"])),
                    Some("function_call_output") => results.push(s(&i["call_id"])),
                    _ => {}
                }
            }
        }
        Wire::Gemini => {
            for c in b["contents"].as_array().unwrap() {
                for p in c["parts"].as_array().unwrap() {
                    if let Some(f) = p.get("functionCall") {
                        calls.push(s(&f["id"]));
                    }
                    if let Some(f) = p.get("functionResponse") {
                        results.push(s(&f["id"]));
                    }
                }
            }
        }
    }
    (calls, results)
}

/// SPEC §4 (a round renders each result and the abort marker): an aborted round whose
/// calls the abort cut off still answers every call — with the abort marker's text, as
/// an error — on every wire, in the current run and in history. (Refusing the write
/// instead would lose the round the provider already returned.)
#[test]
fn rule_an_aborted_round_answers_every_call_with_the_abort_marker() {
    let aborted = || {
        round(
            1,
            r#"[{"type":"text","text":"Reading both."},
                {"type":"tool_call","id":"c1","name":"read","input":{}},
                {"type":"tool_call","id":"c2","name":"read","input":{}}]"#,
            r#"[{"call_id":"c1","content":"first"}]"#,
            "[]",
            true,
        )
    };
    for wire in [Wire::Anthropic, Wire::Chat, Wire::Responses, Wire::Gemini] {
        let mut current = on(Scenario::new("Check the charges."), wire).turn(|t| {
            t.mode = Mode::Run;
            t.tools = Some(tools(r#"[{"name":"read","input_schema":{"type":"object"}}]"#));
        });
        current.seal();
        current.ctx.rounds = vec![aborted()];
        let earlier = on(Scenario::new("And now?"), wire).earlier(TurnKind::Reply, |h| {
            h.turn.poster_id = Some(id(ADA));
            h.turn.prompt = Some("Check the charges.".into());
            h.turn.mode = Mode::Run;
            h.rounds = vec![aborted()];
        });
        for (what, s) in [("the current run", current), ("history", earlier)] {
            let b = body(&s.run(Purpose::Compile).unwrap());
            let (calls, results) = calls_and_results(wire, &b);
            assert_eq!(calls, ["c1", "c2"], "{wire:?}, {what}: {b}");
            assert_eq!(results, ["c1", "c2"], "{wire:?}, {what}: every call answered: {b}");
            assert!(b.to_string().contains("[run aborted]"), "{wire:?}, {what}");
        }
    }
}

/// Seed (cache breakpoints): a breakpoint that lands on a thinking block, which takes
/// no `cache_control`, moves to the block before it instead of vanishing.
#[test]
fn rule_a_breakpoint_on_a_thinking_block_moves_to_the_block_before_it() {
    let mut s = Scenario::new("And now?")
        .doc(LARK, "system_prompt", "You are {{agent}}.")
        .earlier(TurnKind::Reply, |h| {
            h.turn.poster_id = Some(id(ADA));
            h.turn.prompt = Some("Think it over.".into());
            h.turn.mode = Mode::Run;
            h.rounds = vec![round(
                1,
                r#"[{"type":"text","text":"Done."},{"type":"thinking","thinking":"hm","signature":"c2ln"}]"#,
                "[]",
                "[]",
                false,
            )];
        });
    s.user_mut(LARK).reasoning_replay = true;
    let b = body(&s.run(Purpose::Compile).unwrap());
    let marked: Vec<&Value> = b["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .chain(b["system"].as_array().unwrap())
        .filter(|p| p.get("cache_control").is_some())
        .collect();
    assert_eq!(marked.len(), 2, "the stable prefix and the newest history entry: {b}");
    assert!(
        marked.contains(&&json!({"type": "text", "text": "Done.", "cache_control": {"type": "ephemeral"}})),
        "{b}"
    );
    let thinking = &b["messages"][1]["content"][1];
    assert_eq!(thinking["type"], "thinking", "{b}");
    assert!(thinking.get("cache_control").is_none());
}

/// Seed (the speaker envelope): every row sent from another conversation is wrapped,
/// whoever sent it — one with no author too.
#[test]
fn rule_a_sender_stamp_wraps_a_row_without_an_author() {
    let s = Scenario::new("Go on.").earlier(TurnKind::Message, |h| {
        h.turn.role = Some(Role::User);
        h.turn.content = Some("Forwarded: the refund is approved.".into());
        h.turn.sender_conversation_id = Some(id(0xc001));
    });
    let b = body(&s.run(Purpose::Compile).unwrap());
    let text = b["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "<message from=\"@unknown\" kind=\"human\" conversation=\"00000000-0000-0000-0000-00000000c001\">\nForwarded: the refund is approved.\n</message>"
    );
}

/// Seed 003 (skill_view): a turn's complete effective skill set — what its catalog
/// lists, then the recall-only skills the catalog never shows — with each skill's
/// source; a name the first source took is not repeated.
#[test]
fn rule_skills_for_turn_is_the_complete_effective_set() {
    let s = Scenario::new("Go on.")
        .skill("agent", "deploy", "Ship it.", |_| {})
        .skill("agent", "secrets", "Read the vault.", |s| s.recall_only = true)
        .skill("workspace", "deploy", "The workspace's deploy.", |_| {})
        .skill("workspace", "style", "House style.", |_| {})
        .skill("runner", "lint", "Lint the tree.", |s| s.runner = Some("ci".into()))
        .turn(|t| {
            t.mode = Mode::Run;
            t.callables = callables(r#"[{"name": "skill"}, {"name": "ci_skill", "runner": "ci"}]"#);
        });
    let got: Vec<(String, String, String, bool)> = pgprompt_core::compile::skills_for_turn(&s.ctx)
        .unwrap()
        .into_iter()
        .map(|k| (k.callable, k.source, k.name, k.recall_only))
        .collect();
    let want = [
        ("skill", "agent", "deploy", false),
        ("skill", "workspace", "style", false),
        ("skill", "agent", "secrets", true),
        ("ci_skill", "runner", "lint", false),
    ];
    assert_eq!(
        got,
        want.map(|(c, s, n, r)| (c.to_string(), s.to_string(), n.to_string(), r)),
    );
    // The catalog lists the same skills but the recall-only one.
    let catalog = explain(&s.run(Purpose::Preview).unwrap());
    let text = catalog.to_string();
    assert!(
        text.contains("- skill / deploy") && text.contains("- ci_skill / lint") && !text.contains("secrets"),
        "{text}"
    );
}
