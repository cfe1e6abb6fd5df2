//! Rules of the seeds that 0.3 broke or left untested, one test each;
//! each test's name says which rule it guards.

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
        Wire::Converse => {
            for m in b["messages"].as_array().unwrap() {
                for p in m["content"].as_array().unwrap() {
                    if let Some(u) = p.get("toolUse") {
                        calls.push(s(&u["toolUseId"]));
                    }
                    if let Some(r) = p.get("toolResult") {
                        results.push(s(&r["toolUseId"]));
                    }
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

/// A round renders each result and the abort marker: an aborted round whose
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
    for &wire in Wire::ALL {
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
        let earlier = match wire {
            // Bedrock takes toolUse and toolResult blocks only beside a toolConfig: the
            // tool-less turn reads them as text (rule_a_tool_less_turn_after_a_run_compiles_
            // on_every_wire), one with the run's tools sends them as blocks.
            Wire::Converse => {
                let text = body(&earlier.run(Purpose::Compile).unwrap()).to_string();
                assert!(text.contains(r#"[tool error c2]\n[run aborted]"#), "{text}");
                earlier.turn(|t| t.tools = Some(tools(r#"[{"name":"read","input_schema":{"type":"object"}}]"#)))
            }
            Wire::Anthropic | Wire::Chat | Wire::Responses | Wire::Gemini => earlier,
        };
        for (what, s) in [("the current run", current), ("history", earlier)] {
            let b = body(&s.run(Purpose::Compile).unwrap());
            let (calls, results) = calls_and_results(wire, &b);
            assert_eq!(calls, ["c1", "c2"], "{wire:?}, {what}: {b}");
            assert_eq!(results, ["c1", "c2"], "{wire:?}, {what}: every call answered: {b}");
            assert!(b.to_string().contains("[run aborted]"), "{wire:?}, {what}");
        }
    }
}

/// D-s5-4 (issue 60, item 2): a round whose run waits for its tool results (between
/// `record_response` and `record_tool_results`), read by another turn — the next turn, a
/// Side, a sibling — was sent as a bare call, which anthropic, chat and converse refuse. It
/// is carried without its calls (its words kept), on every wire; once the results are
/// written, the round is carried whole.
#[test]
fn rule_a_round_waiting_for_its_results_is_never_a_bare_call_in_another_turn() {
    let waiting = |results: &str| {
        round(
            1,
            r#"[{"type":"text","text":"Checking the ledger."},
                {"type":"tool_call","id":"c1","name":"read","input":{}}]"#,
            results,
            "[]",
            false,
        )
    };
    for &wire in Wire::ALL {
        let later = |results: &str| {
            on(Scenario::new("And now?"), wire).earlier(TurnKind::Reply, |h| {
                h.turn.poster_id = Some(id(ADA));
                h.turn.prompt = Some("Check the charges.".into());
                h.turn.mode = Mode::Run;
                h.rounds = vec![waiting(results)];
            })
        };
        let b = body(
            &later("[]")
                .run(Purpose::Compile)
                .unwrap_or_else(|e| panic!("{wire:?}: {}", e.message)),
        );
        let (calls, results) = calls_and_results(wire, &b);
        assert!(
            calls.is_empty() && results.is_empty(),
            "{wire:?}: a call without its result: {b}"
        );
        assert!(
            b.to_string().contains("Checking the ledger."),
            "{wire:?}: the round's words stay: {b}"
        );
        // The results written: the round whole (converse takes calls beside a toolConfig).
        let answered = later(r#"[{"call_id":"c1","content":"two charges"}]"#)
            .turn(|t| t.tools = Some(tools(r#"[{"name":"read","input_schema":{"type":"object"}}]"#)));
        let b = body(
            &answered
                .run(Purpose::Compile)
                .unwrap_or_else(|e| panic!("{wire:?}: {}", e.message)),
        );
        assert_eq!(
            calls_and_results(wire, &b),
            (vec!["c1".to_string()], vec!["c1".to_string()]),
            "{wire:?}: {b}"
        );
    }
}

/// D-s5-3 (issue 60, item 3): a tool-less turn after a run (a later reply, a Side) was
/// refused on converse, whose toolUse and toolResult blocks Bedrock takes only beside a
/// toolConfig. The seed: history carries a run's rounds (text, calls, results) and only
/// the window gate refuses. It compiles on every wire; converse reads the calls and
/// results as text and sends no toolConfig, the others send them as they are.
#[test]
fn rule_a_tool_less_turn_after_a_run_compiles_on_every_wire() {
    for &wire in Wire::ALL {
        let s = on(Scenario::new("Thanks."), wire).earlier(TurnKind::Reply, |h| {
            h.turn.poster_id = Some(id(ADA));
            h.turn.prompt = Some("Check the charges.".into());
            h.turn.mode = Mode::Run;
            h.rounds = vec![round(
                1,
                r#"[{"type":"text","text":"Checking the ledger."},
                    {"type":"tool_call","id":"c1","name":"read","input":{"path":"ledger"}}]"#,
                r#"[{"call_id":"c1","content":"two charges"}]"#,
                "[]",
                false,
            )];
        });
        let b = body(
            &s.run(Purpose::Compile)
                .unwrap_or_else(|e| panic!("{wire:?}: {}", e.message)),
        );
        let text = b.to_string();
        match wire {
            Wire::Converse => {
                assert_eq!(calls_and_results(wire, &b), (vec![], vec![]), "{b}");
                assert!(b.get("toolConfig").is_none(), "{b}");
                assert!(
                    text.contains(r#"[tool call c1: read {\"path\":\"ledger\"}]"#)
                        && text.contains(r#"[tool result c1]\ntwo charges"#),
                    "the calls and results read as text: {b}"
                );
            }
            Wire::Anthropic | Wire::Chat | Wire::Responses | Wire::Gemini => assert_eq!(
                calls_and_results(wire, &b),
                (vec!["c1".to_string()], vec!["c1".to_string()]),
                "{wire:?}: {b}"
            ),
        }
    }
}

/// On converse, a run turn whose tools are all deferred declares none (Converse has no
/// tool search): its rounds' calls and results are read as text, as its sealed request
/// could take them, never blocks without a `toolConfig` (Bedrock refuses those); each
/// request still extends the last. The other wires send them as blocks.
#[test]
fn rule_a_run_that_declares_no_tool_spells_its_rounds_as_its_request_can_take_them() {
    for &wire in Wire::ALL {
        let mut s = on(Scenario::new("Check the charges."), wire).turn(|t| {
            t.mode = Mode::Run;
            t.tools = Some(tools(
                r#"[{"name":"read","input_schema":{"type":"object"},"deferred":true}]"#,
            ));
        });
        let first = s.seal();
        s.ctx.rounds.push(round(
            1,
            r#"[{"type":"text","text":"Checking the ledger."},
                {"type":"tool_call","id":"c1","name":"read","input":{"path":"ledger"}}]"#,
            r#"[{"call_id":"c1","content":"two charges"}]"#,
            "[]",
            false,
        ));
        let out = s
            .run(Purpose::Compile)
            .unwrap_or_else(|e| panic!("{wire:?}: {}", e.message));
        let (text, sealed) = (out.body.text(), first.body.text());
        let head = &sealed[..sealed.len() - first.body.tail.len()];
        assert!(text.starts_with(head), "{wire:?}: the sealed request stays\n{text}");
        let b = body(&out);
        match wire {
            Wire::Converse => {
                golden("deferred_run_converse", &out);
                assert_eq!(calls_and_results(wire, &b), (vec![], vec![]), "{b}");
                assert!(b.get("toolConfig").is_none(), "{b}");
                assert!(text.contains(r#"[tool call c1: read {\"path\":\"ledger\"}]"#), "{text}");
            }
            Wire::Anthropic | Wire::Chat | Wire::Responses | Wire::Gemini => assert_eq!(
                calls_and_results(wire, &b),
                (vec!["c1".to_string()], vec!["c1".to_string()]),
                "{wire:?}: {b}"
            ),
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
    let got: Vec<(String, String, String, bool)> = pgprompt_core::skills_for_turn(&s.ctx)
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

fn compiled(s: &Scenario) -> Vec<String> {
    outline(&explain(&s.run(Purpose::Preview).unwrap()))
}

fn desk() -> Scenario {
    Scenario::new("And the credit note?")
        .doc(LARK, "system_prompt", "You are {{agent}}.")
        .doc(ADA, "persona", "Ada wants the invoice number first.")
        .message(Role::User, ADA, "I was charged twice.")
}

/// Seed (Per-turn overrides; prompt mechanisms): `default` is the fixed order whatever
/// template the profile stores.
#[test]
fn rule_default_ignores_a_stored_template() {
    let plain = compiled(&desk());
    let mut s = desk();
    s.user_mut(LARK).prompt_template = Some(template(
        r#"{"blocks": [{"type": "inline", "role": "system", "text": "TEMPLATE"}, {"type": "history"}, {"type": "input"}]}"#,
    ));
    assert_eq!(
        s.ctx.users[&id(LARK)].prompt_mechanism,
        pgprompt_core::rows::Mechanism::Default
    );
    assert_eq!(compiled(&s), plain);
    s.user_mut(LARK).prompt_mechanism = pgprompt_core::rows::Mechanism::Assembly;
    assert!(
        compiled(&s)[0].contains("TEMPLATE"),
        "the stored template is what assembly reads"
    );
}

/// A slot document of role developer or user ends the leading system run: on
/// anthropic, what follows it is spoken in place on the user side, never hoisted.
#[test]
fn rule_a_developer_or_user_role_slot_document_breaks_the_system_run() {
    for role in [Role::Developer, Role::User] {
        let mut s = desk().memory("agent", "policies.md", "Refunds take 5 days.");
        s.ctx.documents.iter_mut().find(|d| d.name == "persona").unwrap().role = role;
        let b = body(&s.run(Purpose::Preview).unwrap());
        let system: Vec<&str> = b["system"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            system,
            ["You are Lark."],
            "{role:?}: only the run before the slot is lifted"
        );
        let first: Vec<&str> = b["messages"][0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["text"].as_str().unwrap())
            .collect();
        assert_eq!(first[0], "Ada wants the invoice number first.", "{role:?}");
        assert!(
            first[1].starts_with("Memory available now."),
            "{role:?}: memory stays where it is: {first:?}"
        );
    }
}

/// Seed (Macros): `{{conversation_kind}}` is the host's kind — standalone, conversation,
/// child, scheduled or side.
#[test]
fn rule_conversation_kind_renders_each_kind() {
    for kind in ["standalone", "conversation", "child", "scheduled", "side"] {
        let mut s = Scenario::new("Go.").doc(LARK, "system_prompt", "Kind: {{conversation_kind}}.");
        s.ctx.conversation.kind = kind.into();
        assert_eq!(compiled(&s)[0], format!("system: Kind: {kind}."));
    }
}

/// Seed (Macros): a word outside the registry is refused when an inline slot override
/// carries one, as prompt_document_macro_unknown naming it.
#[test]
fn rule_an_inline_slot_override_with_an_unknown_macro_is_refused() {
    let e = pgprompt_core::fields::parse_inline(r#"[{"slot": "persona", "text": "Today {{usr}} is in a hurry."}]"#)
        .unwrap_err();
    assert_eq!(
        (e.code, e.code.sqlstate()),
        (pgprompt_core::Code::MacroUnknown, "22023")
    );
    assert!(
        e.message.contains("{{usr}}") && e.message.contains("/inline/0"),
        "{}",
        e.message
    );
}

/// A reply another agent answered is its seed under its own voice and that
/// agent's text — never its sealed preface, and without text only its seed.
#[test]
fn rule_another_agents_turn_never_replays_its_preface_and_without_text_is_its_seed() {
    let s = desk().earlier(TurnKind::Reply, |h| {
        h.turn.answerer_id = Some(id(WREN));
        h.turn.poster_id = Some(id(ADA));
        h.turn.prompt = Some("Wren, check the logs.".into());
        h.turn.sealed_preface = Some(
            pgprompt_core::fields::parse_preface(
                r#"[{"role":"user","parts":[{"type":"text","text":"WREN'S PREFACE"}]}]"#,
            )
            .unwrap(),
        );
    });
    let lines = compiled(&s);
    let all = lines.join("\n");
    assert!(!all.contains("WREN'S PREFACE"), "{all}");
    assert!(
        all.contains("Wren, check the logs."),
        "its seed, in its own voice: {all}"
    );
    assert!(!all.contains("@wren"), "no text: only its seed: {all}");
}

/// Within a run turn of history, each round is an entry newer than
/// the seed, so under a tight budget the rounds outlive the opening words.
#[test]
fn rule_within_a_turn_rounds_outlive_its_opening_words() {
    let mut s = Scenario::new("Go on.").earlier(TurnKind::Reply, |h| {
        h.turn.poster_id = Some(id(ADA));
        h.turn.prompt = Some(format!("OPENING {}", "words ".repeat(60)));
        h.turn.mode = Mode::Run;
        h.rounds = vec![round(1, r#"[{"type":"text","text":"ROUND ONE"}]"#, "[]", "[]", false)];
    });
    let whole = s.run(Purpose::Preview).unwrap().estimate().total;
    s.model_mut("claude").advisory_window = Some(whole as i32 - 1);
    let all = compiled(&s).join("\n");
    assert!(all.contains("ROUND ONE") && !all.contains("OPENING"), "{all}");
}

/// Seed (documents are read live): an edited document is what the next turn reads.
#[test]
fn rule_an_edited_document_is_read_by_the_next_turn() {
    let mut s = desk();
    assert!(compiled(&s)[0].contains("You are Lark."));
    s.ctx
        .documents
        .iter_mut()
        .find(|d| d.name == "system_prompt")
        .unwrap()
        .body = "You are {{agent}}, edited.".into();
    assert!(compiled(&s)[0].contains("You are Lark, edited."));
}

/// A run's first request is the tool-less reply's body plus `tools` (the
/// same elements, byte for byte), on every wire.
#[test]
fn rule_a_runs_first_request_is_the_reply_plus_tools() {
    for &wire in Wire::ALL {
        let reply = on(desk(), wire);
        let run = on(desk(), wire).turn(|t| {
            t.mode = Mode::Run;
            t.tools = Some(tools(r#"[{"name":"read","input_schema":{"type":"object"}}]"#));
        });
        let (a, b) = (
            reply.run(Purpose::Preview).unwrap().body,
            run.run(Purpose::Preview).unwrap().body,
        );
        assert_eq!(a.elements, b.elements, "{wire:?}");
        let (mut x, mut y) = (body_of(&a), body_of(&b));
        // Converse lists them under toolConfig.
        let key = if wire == Wire::Converse { "toolConfig" } else { "tools" };
        assert!(y.as_object_mut().unwrap().remove(key).is_some(), "{wire:?}");
        x.as_object_mut().unwrap().remove(key);
        assert_eq!(x, y, "{wire:?}: nothing but tools differs");
    }
    // The exception: on converse, where history holds a run, the tool-less request reads
    // its calls and results as text (Bedrock takes the blocks only beside a toolConfig);
    // everything before that history is the same.
    for &wire in Wire::ALL {
        let with_run = |s: Scenario| {
            on(s, wire).earlier(TurnKind::Reply, |h| {
                h.turn.poster_id = Some(id(ADA));
                h.turn.prompt = Some("Check the charges.".into());
                h.turn.mode = Mode::Run;
                h.rounds = vec![round(
                    1,
                    r#"[{"type":"tool_call","id":"c1","name":"read","input":{}}]"#,
                    r#"[{"call_id":"c1","content":"two charges"}]"#,
                    "[]",
                    false,
                )];
            })
        };
        let reply = with_run(desk());
        let run = with_run(desk()).turn(|t| {
            t.mode = Mode::Run;
            t.tools = Some(tools(r#"[{"name":"read","input_schema":{"type":"object"}}]"#));
        });
        let (a, b) = (
            reply.run(Purpose::Preview).unwrap().body,
            run.run(Purpose::Preview).unwrap().body,
        );
        match wire {
            Wire::Converse => {
                let same = a.elements.iter().zip(&b.elements).take_while(|(x, y)| x == y).count();
                assert!(same < a.elements.len(), "{wire:?}: the history's run differs");
                assert!(
                    a.elements[same].contains("[tool call c1: read {}]"),
                    "{}",
                    a.elements[same]
                );
                assert!(b.elements[same].contains(r#""toolUse""#), "{}", b.elements[same]);
            }
            Wire::Anthropic | Wire::Chat | Wire::Responses | Wire::Gemini => {
                assert_eq!(a.elements, b.elements, "{wire:?}: with a run in history too")
            }
        }
    }
}

/// Claude Sonnet 5's profile, as `sql/profiles.sql` ships it (a minimum cacheable prefix
/// of 2048 tokens).
const SONNET_5: &str = r#"{"name": "claude-sonnet-5", "provider": "anthropic", "wires": ["anthropic"],
    "advisory_window": null, "hard_window": 1000000, "max_output_tokens": 128000, "tokenizer": "cl100k_base",
    "thinking_modes": ["adaptive", "disabled"], "thinking_default": "adaptive",
    "efforts": ["low", "medium", "high", "xhigh", "max"], "thinking_display": ["summarized", "omitted"],
    "budget_min": null, "budget_max": null, "include_thoughts": false, "thinking_with_forced_tool": false,
    "temperature_max": null, "top_p_max": null, "sampling_together": false, "cache_breakpoints": "cache_control",
    "max_breakpoints": 4, "min_cache_tokens": 2048, "cache_ttls": ["5m", "1h"], "cache_lookback": 20,
    "replays_thinking": true, "shipped": true}"#;

fn profiled(mut s: Scenario) -> Scenario {
    let profile = pgprompt_core::profile::Profile::from_json(SONNET_5).unwrap();
    let m = s.model_mut("claude");
    *m = m.clone().with_profile(profile);
    s
}

/// Seed 000 (Runs): round r1 is byte for byte the tool-less reply's request plus the tool
/// block — on a profiled model too, where the tools would lift the prefix over the
/// model's minimum cacheable length and a breakpoint the reply does not carry would move
/// the bytes (0.4 marked `system[0]` in r1 and not in the reply).
#[test]
fn rule_a_runs_first_request_is_the_reply_plus_tools_on_a_profiled_model() {
    // A system prompt just under the minimum, and a tool whose definition is over the rest.
    // 225 times 9 tokens and the persona's 7: 2032, under the 2048 the profile caches.
    let system = "Answer as Lark of Acme support. ".repeat(225);
    let desk = || {
        let mut s = profiled(desk());
        s.ctx
            .documents
            .iter_mut()
            .find(|d| d.name == "system_prompt")
            .unwrap()
            .body = system.clone();
        s
    };
    let reply = desk();
    let described = format!(
        r#"[{{"name":"read","description":"{}","input_schema":{{"type":"object"}}}}]"#,
        "Read a file. ".repeat(100)
    );
    let run = desk().turn(|t| {
        t.mode = Mode::Run;
        t.tools = Some(tools(&described));
    });
    let (a, b) = (
        reply.run(Purpose::Preview).unwrap().body,
        run.run(Purpose::Preview).unwrap().body,
    );
    assert_eq!(a.elements, b.elements);
    let (mut x, mut y) = (body_of(&a), body_of(&b));
    assert!(y.as_object_mut().unwrap().remove("tools").is_some());
    x.as_object_mut().unwrap().remove("tools");
    assert_eq!(x, y, "nothing but tools differs");
}

fn body_of(b: &pgprompt_core::wire::Body) -> Value {
    serde_json::from_str(&b.text()).unwrap()
}

/// A callable resolves the speaker pair's skills (the agent and the poster)
/// and the selected Human's user skills.
#[test]
fn rule_the_speaker_and_selected_user_skill_sources() {
    let s = || {
        Scenario::new("Go.")
            .skill("speaker", "ada-tricks", "For Ada only.", |k| {
                k.user_id = Some(id(LARK));
                k.speaker_id = Some(id(ADA));
            })
            .skill("speaker", "omar-tricks", "For Omar only.", |k| {
                k.user_id = Some(id(LARK));
                k.speaker_id = Some(id(OMAR));
            })
            .skill("user", "ada-own", "Ada's own skill.", |k| k.user_id = Some(id(ADA)))
            .turn(|t| {
                t.mode = Mode::Run;
                t.callables = callables(r#"[{"name": "skill"}]"#);
            })
    };
    let plain = compiled(&s()).join("\n");
    assert!(
        plain.contains("- skill / ada-tricks: For Ada only.") && !plain.contains("omar-tricks"),
        "{plain}"
    );
    assert!(
        !plain.contains("ada-own"),
        "a user skill needs a selected Human: {plain}"
    );
    let selected = compiled(&s().turn(|t| t.memory_user_id = Some(id(ADA)))).join("\n");
    assert!(selected.contains("- skill / ada-own: Ada's own skill."), "{selected}");
}

/// Seed (The skills block): a template without a `skills` block renders no catalog,
/// whatever the run turn's callables.
#[test]
fn rule_a_template_without_skills_has_no_catalog() {
    let mut s = Scenario::new("Go.")
        .skill("agent", "deploy", "Ship it.", |_| {})
        .turn(|t| {
            t.mode = Mode::Run;
            t.callables = callables(r#"[{"name": "skill"}]"#);
        });
    assert!(compiled(&s).join("\n").contains("Skills available now."));
    s.user_mut(LARK).prompt_mechanism = pgprompt_core::rows::Mechanism::Assembly;
    s.user_mut(LARK).prompt_template = Some(template(r#"{"blocks": [{"type": "history"}, {"type": "input"}]}"#));
    assert!(!compiled(&s).join("\n").contains("Skills available now."));
}

/// Seed (items and messages): a regenerated or edited answer keeps its turn's preface.
#[test]
fn rule_an_edited_answer_keeps_its_preface() {
    let preface = r#"[{"role":"user","parts":[{"type":"text","text":"Reply in French."}]}]"#;
    let with = |answer: &str| {
        let answer = answer.to_string();
        compiled(&Scenario::new("Go on.").earlier(TurnKind::Reply, move |h| {
            h.turn.poster_id = Some(id(ADA));
            h.turn.prompt = Some("Status?".into());
            h.turn.content = Some(answer);
            h.turn.sealed_preface = Some(pgprompt_core::fields::parse_preface(preface).unwrap());
        }))
    };
    let (before, after) = (with("Tout va bien."), with("Tout va très bien."));
    assert_eq!(before[0], "user: Reply in French. | Status?");
    assert_eq!(after[0], before[0], "the preface stays");
    assert_eq!(after[1], "assistant: Tout va très bien.");
}

/// Seed (The speaker envelope): the envelope is rendered at assembly, never stored: a
/// renamed handle re-renders from the row.
#[test]
fn rule_a_renamed_handle_re_renders() {
    let mut s = Scenario::new("Go on.").message(Role::User, GRACE, "I can rerun it.");
    assert!(compiled(&s)[0].contains("from=\"@grace\""));
    s.user_mut(GRACE).handle = "grace.h".into();
    let now = compiled(&s)[0].clone();
    assert!(
        now.contains("from=\"@grace.h\"") && !now.contains("\"@grace\""),
        "{now}"
    );
}

/// A model without `native_images` reads each capture as an index line.
#[test]
fn rule_a_non_native_image_becomes_an_index_line() {
    let mut s = Scenario::new("Go on.").earlier(TurnKind::Reply, |h| {
        h.turn.poster_id = Some(id(ADA));
        h.turn.prompt = Some("Look.".into());
        h.turn.mode = Mode::Run;
        h.rounds = vec![round(
            1,
            r#"[{"type":"tool_call","id":"c1","name":"shot","input":{}}]"#,
            r#"[{"call_id":"c1","content":"taken","captures":[{"name":"screen.png","media_type":"image/png","data":"aGk="}]}]"#,
            "[]",
            false,
        )];
    });
    s.model_mut("claude").native_images = false;
    let all = compiled(&s).join("\n");
    assert!(
        all.contains("[image 1: screen.png (image/png)]") && !all.contains("<image>"),
        "{all}"
    );
    s.model_mut("claude").native_images = true;
    assert!(compiled(&s).join("\n").contains("<image>"));
}

/// Seed (A Side; last_turn reasoning replay): under reasoning replay, a Side's first
/// turn keeps the thinking of the captured answerer's newest earlier run — in the
/// parent's stretch — and no older one.
#[test]
fn rule_last_turn_reasoning_replay_in_a_side() {
    let thinking = |n: i32, text: &str| {
        round(
            n,
            &format!(
                r#"[{{"type":"thinking","thinking":"{text}","signature":"c2ln"}},{{"type":"text","text":"step"}}]"#
            ),
            "[]",
            "[]",
            false,
        )
    };
    let host = pgprompt_core::context::Host {
        depth: 1,
        creator_id: Some(id(ADA)),
        answerer_id: Some(id(LARK)),
    };
    let mut s = Scenario::new("Aside: why?")
        .earlier(TurnKind::Reply, |h| {
            h.turn.poster_id = Some(id(ADA));
            h.turn.prompt = Some("First.".into());
            h.turn.mode = Mode::Run;
            h.rounds = vec![thinking(1, "OLDER THOUGHT")];
            h.host = Some(host);
        })
        .earlier(TurnKind::Reply, |h| {
            h.turn.poster_id = Some(id(ADA));
            h.turn.prompt = Some("Second.".into());
            h.turn.mode = Mode::Run;
            h.rounds = vec![thinking(1, "NEWEST THOUGHT")];
            h.host = Some(host);
        });
    s.ctx.conversation.kind = "side".into();
    s.user_mut(LARK).reasoning_replay = true;
    let text = s.run(Purpose::Preview).unwrap().body.text();
    assert!(
        text.contains("NEWEST THOUGHT") && !text.contains("OLDER THOUGHT"),
        "{text}"
    );
}

/// D-s5-1 (issue 60): the turn's own system entry at position `lead`, after a slot document
/// of role user, was accepted and spoken as user text on the wires that lift only the
/// leading system items; it is refused there as the template's own inline block is, and
/// stays a system message where the wire sends one in place.
#[test]
fn rule_a_turns_system_entry_after_a_user_role_slot_stays_system_or_is_refused() {
    let build = |wire: Wire| {
        let mut s = on(desk(), wire);
        s.ctx.documents.iter_mut().find(|d| d.name == "persona").unwrap().role = Role::User;
        s.ctx.turn.inline = inline(r#"[{"role": "system", "position": "lead", "text": "Never promise a date."}]"#);
        let lark = s.user_mut(LARK);
        lark.prompt_mechanism = pgprompt_core::rows::Mechanism::Assembly;
        lark.prompt_template = Some(template(
            r#"{"blocks": [{"type": "slot", "slot": "system_prompt"}, {"type": "slot", "slot": "persona"},
                           {"type": "lead"}, {"type": "history"}, {"type": "input"}]}"#,
        ));
        s
    };
    for &wire in Wire::ALL {
        let s = build(wire);
        let in_place = wire.form().system_in_place(s.ctx.models.get("claude"));
        match s.run(Purpose::Preview) {
            Err(e) => {
                assert!(!in_place, "{wire:?}: {}", e.message);
                assert_eq!(e.code, pgprompt_core::Code::InlineSystemOutsideLeadingRun, "{wire:?}");
                assert!(e.message.contains("lands in the lead block /blocks/2"), "{}", e.message);
            }
            Ok(out) => {
                assert!(
                    in_place,
                    "{wire:?}: the entry was spoken as user text: {}",
                    out.body.text()
                );
                assert!(out.body.text().contains("Never promise a date."), "{wire:?}");
            }
        }
    }
}

/// Seed 000 (Assembly; system inline only in the leading run): a system inline block after
/// a slot document of role user or developer is refused where the wire would speak it as
/// user text (anthropic, gemini), and stays a system message where the wire sends one in
/// place (chat, responses; anthropic on a model whose profile takes system messages).
/// 0.4 sent it as user text.
#[test]
fn rule_a_system_inline_after_a_user_role_slot_stays_system_or_is_refused() {
    let build = |wire: Wire| {
        let mut s = on(desk(), wire);
        s.ctx.documents.iter_mut().find(|d| d.name == "persona").unwrap().role = Role::User;
        let lark = s.user_mut(LARK);
        lark.prompt_mechanism = pgprompt_core::rows::Mechanism::Assembly;
        lark.prompt_template = Some(template(
            r#"{"blocks": [{"type": "slot", "slot": "system_prompt"}, {"type": "slot", "slot": "persona"},
                           {"type": "inline", "role": "system", "text": "Never promise a date."},
                           {"type": "history"}, {"type": "input"}]}"#,
        ));
        s
    };
    for wire in [Wire::Anthropic, Wire::Gemini, Wire::Converse] {
        let e = build(wire).run(Purpose::Preview).unwrap_err();
        assert_eq!(e.code, pgprompt_core::Code::InlineSystemOutsideLeadingRun, "{wire:?}");
        assert!(e.message.contains("inline block /blocks/2"), "{}", e.message);
    }
    let chat = body(&build(Wire::Chat).run(Purpose::Preview).unwrap());
    let roles: Vec<&str> = chat["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(&roles[..3], ["system", "user", "system"], "{chat}");
    let claude5 = profiled(build(Wire::Anthropic));
    let mut s = claude5;
    let m = s.model_mut("claude");
    let mut p: Value = serde_json::from_str(SONNET_5).unwrap();
    p["system_messages"] = json!(true);
    *m = m
        .clone()
        .with_profile(pgprompt_core::profile::Profile::from_json(&p.to_string()).unwrap());
    let b = body(&s.run(Purpose::Preview).unwrap());
    assert_eq!(
        b["messages"][1],
        json!({"role": "system", "content": [{"type": "text", "text": "Never promise a date."}]}),
        "{b}"
    );
}

/// D-s5-2 (issue 60, item 3): under a tight budget a turn's answer outlives the words that
/// opened it (the seed: rounds and text outlive their opening words), which on converse
/// left history opening with the assistant, refused ("A conversation must start with a
/// user message"). The trim drops that answer too, on converse; the other wires keep it;
/// each compiles, and converse opens on the user's side.
#[test]
fn rule_a_trim_never_leaves_converse_opening_with_an_answer() {
    let long = "word ".repeat(400);
    for &wire in Wire::ALL {
        let mut s = on(Scenario::new("And the next one?"), wire).earlier(TurnKind::Reply, |h| {
            h.turn.poster_id = Some(id(ADA));
            h.turn.prompt = Some(long.clone());
            h.turn.content = Some("Refunded.".into());
        });
        // Room for the answer and the current turn, not for the long words before it.
        s.model_mut("claude").advisory_window = Some(260);
        let out = s
            .run(Purpose::Compile)
            .unwrap_or_else(|e| panic!("{wire:?}: {}", e.message));
        let b = body(&out);
        let text = b.to_string();
        assert!(
            !text.contains("word word"),
            "{wire:?}: the long words are trimmed: {text}"
        );
        if wire == Wire::Converse {
            assert!(
                !text.contains("Refunded."),
                "{wire:?}: the answer goes with its words: {text}"
            );
            assert_eq!(b["messages"][0]["role"], "user", "{wire:?}: {text}");
        } else {
            assert!(
                text.contains("Refunded."),
                "{wire:?}: the answer outlives its words: {text}"
            );
        }
    }
}
