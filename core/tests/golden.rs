//! Golden tests: whole compiled results for realistic scenarios, compared byte for byte
//! with `tests/golden/*.json` (pretty-printed, keys sorted). Each test also asserts the
//! rule it is about, so a golden file never stands alone.
//!
//! After a deliberate change: `GOLDEN_UPDATE=1 cargo test --lib golden`, then read the diff.

use serde_json::Value;

use pgprompt_core::rows::{Mechanism, Mode, Role, TurnKind, UserKind, Wire};
use pgprompt_core::testing::*;
use pgprompt_core::Code;
use pgprompt_core::Purpose;

fn support_desk() -> Scenario {
    Scenario::new("And the credit note?")
        .doc(
            LARK,
            "system_prompt",
            "You are {{agent}} for {{user}} at {{workspace}} on {{date}} ({{conversation_kind}}).",
        )
        .doc(0, "character", "{{workspace}} sells accounting software.")
        .doc(ADA, "persona", "Ada wants the invoice number first.")
        .doc(OMAR, "persona", "Omar's persona is not Ada's.")
        .memory("agent", "policies/refunds.md", "Refunds take 5 days.")
        .memory(
            "agent",
            "skills/refund.md",
            "A kernel memory skill, never shown as memory.",
        )
        .memory("conversation", "ticket.md", "Ticket #5521.")
        .memory("speaker", "ada.md", "Ada is the owner.")
        .memory("user", "ada-private.md", "Only when selected.")
        .message(Role::User, ADA, "I was charged twice.")
        .earlier(TurnKind::Reply, |r| {
            r.turn.poster_id = Some(id(ADA));
            r.turn.prompt = Some("Can you check?".into());
            r.turn.content = Some("I see two charges on INV-2041.".into());
        })
        .message(Role::User, ADA, "Refund one, please.")
}

#[test]
fn default_order_renders_every_block() {
    let s = support_desk()
        .skill("agent", "refunds", "Refund a duplicate charge.", |k| {
            k.executor_id = Some(id(0xe1))
        })
        .skill("workspace", "export", "Export billing data.", |_| {})
        .skill("agent", "ledger", "Hidden.", |k| k.recall_only = true)
        .turn(|t| {
            t.mode = Mode::Run;
            t.callables = callables(r#"[{"name": "skill"}]"#);
            t.inline = inline(
                r#"[{"text": "Be brief.", "role": "developer"}, {"text": "Sign as {{agent}}.", "position": "tail"}]"#,
            );
        });
    let out = s.run(Purpose::Compile).unwrap();
    let v = golden("default_order", &out);
    let req = body(&out);
    assert_eq!(
        outline(&v),
        vec![
            "system: You are Lark for Ada at Acme on 2026-11-30 (conversation). | Acme sells accounting software. | Ada wants the invoice number first. | Memory available now.\n\n### agent/policies/refunds.md\nRefunds take 5 days.\n\n### speaker/ada.md\nAda is the owner.\n\n### conversation/ticket.md\nTicket #5521. | Skills available now.\n- skill / refund: A kernel memory skill, never shown as memory.\n- skill / refunds [00000000-0000-0000-0000-0000000000e1]: Refund a duplicate charge.\n- skill / export: Export billing data.",
            "user: I was charged twice. | Can you check?",
            "assistant: I see two charges on INV-2041.",
            "user: Refund one, please.",
            "developer: Be brief.",
            "user: Sign as Lark. | And the credit note?",
        ]
    );
    assert_eq!(v["cache_marker"], 1);
    assert_eq!(v["preface"].as_array().unwrap().len(), 2);
    let seal = out.seal.unwrap();
    assert!(seal.catalog.unwrap().starts_with("Skills available now."));
    assert_eq!(seal.frozen.mechanism, Mechanism::Default);
    // The Anthropic request: system lifted, developer spoken on the user side, merged.
    assert_eq!(req["system"].as_array().unwrap().len(), 5);
    assert_eq!(req["system"][4]["cache_control"]["type"], "ephemeral");
    assert_eq!(req["messages"].as_array().unwrap().len(), 3);
    assert_eq!(req["messages"][2]["content"].as_array().unwrap().len(), 4);
}

#[test]
fn a_direct_reply_carries_no_catalog_and_user_memory_needs_a_selected_human() {
    let s = support_desk()
        .skill("agent", "refunds", "Refund.", |_| {})
        .turn(|t| t.callables = callables(r#"[{"name":"skill"}]"#));
    let v: Value = explain(&s.run(Purpose::Preview).unwrap());
    assert!(!outline(&v)[0].contains("Skills available now."));
    assert!(!outline(&v)[0].contains("ada-private"));
    let s = support_desk().turn(|t| t.memory_user_id = Some(id(ADA)));
    let v: Value = explain(&s.run(Purpose::Preview).unwrap());
    assert!(outline(&v)[0].contains("### user/ada-private.md\nOnly when selected."));
}

#[test]
fn a_human_answerer_compiles_no_system_prompt() {
    let s = support_desk()
        .doc(OMAR, "system_prompt", "Omar's system prompt.")
        .turn(|t| t.answerer_id = Some(id(OMAR)));
    let v = golden("human_answerer", &s.run(Purpose::Preview).unwrap());
    let first = &outline(&v)[0];
    assert!(first.starts_with("system: Acme sells accounting software."), "{first}");
    assert!(!first.contains("Omar's system prompt"));
}

#[test]
fn history_starts_at_the_newest_summary_turn() {
    let s = support_desk()
        .earlier(TurnKind::Summary, |t| {
            t.turn.content = Some("Ada was double charged; a refund is due.".into())
        })
        .message(Role::User, ADA, "Any news?");
    let v = golden("summary_turn", &s.run(Purpose::Preview).unwrap());
    assert_eq!(
        outline(&v)[1..],
        ["user: [Summary of the earlier conversation]\nAda was double charged; a refund is due. | Any news? | And the credit note?"]
    );
    assert_eq!(v["estimate"]["history"]["available"], 2);
}

#[test]
fn an_inline_slot_entry_replaces_the_slot_for_this_turn_only() {
    let s =
        support_desk().turn(|t| t.inline = inline(r#"[{"slot": "persona", "text": "Today {{user}} is in a hurry."}]"#));
    let out = s.run(Purpose::Compile).unwrap();
    let v: Value = explain(&out);
    assert!(outline(&v)[0].contains("Today Ada is in a hurry."));
    assert!(!outline(&v)[0].contains("invoice number first"));
    let versions: Value = serde_json::from_str(&out.seal.unwrap().versions).unwrap();
    assert_eq!(
        versions["documents"].as_object().unwrap().len(),
        2,
        "the persona row was not read: {versions}"
    );
}

#[test]
fn the_chat_wire() {
    let s = support_desk().turn(|t| t.model = Some("gpt".into()));
    let out = s.run(Purpose::Preview).unwrap();
    golden("chat_wire", &out);
    let req = body(&out);
    assert_eq!(req["model"], "gpt");
    assert_eq!(req["max_completion_tokens"], 1024);
    assert!(req.get("max_tokens").is_none());
    let roles: Vec<&str> = req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
}

#[test]
fn no_model_means_anthropic_naming_no_model_and_windowless() {
    let mut s = support_desk();
    s.user_mut(LARK).model = None;
    let out = s.run(Purpose::Preview).unwrap();
    let v = explain(&out);
    assert_eq!(v["wire"], "anthropic");
    assert!(v["model"].is_null());
    assert!(body(&out).get("model").is_none());
    assert_eq!(body(&out)["max_tokens"], 4096);
    assert!(v["estimate"]["window"]["tokens"].is_null());
}

#[test]
fn an_earlier_turns_sealed_preface_is_replayed_byte_for_byte() {
    let s = support_desk().earlier(TurnKind::Reply, |r| {
        r.turn.poster_id = Some(id(ADA));
        r.turn.prompt = Some("Status?".into());
        // What was sent then, not what its inline says now.
        r.turn.inline = inline(r#"[{"text": "Edited later.", "position": "tail"}]"#);
        r.turn.sealed_preface = Some(
            pgprompt_core::fields::parse_preface(
                r#"[{"role":"user","parts":[{"type":"text","text":"Reply in French."}]}]"#,
            )
            .unwrap(),
        );
    });
    let v = golden("sealed_preface_replay", &s.run(Purpose::Preview).unwrap());
    let last = outline(&v).last().unwrap().clone();
    assert_eq!(
        last,
        "user: Refund one, please. | Reply in French. | Status? | And the credit note?"
    );
}

#[test]
fn an_unsealed_earlier_turn_lays_its_preface_down_from_its_inline_entries() {
    let s = support_desk().earlier(TurnKind::Reply, |r| {
        r.turn.poster_id = Some(id(ADA));
        r.turn.prompt = Some("Status?".into());
        r.turn.inline = inline(r#"[{"text": "Today is {{date}}.", "position": "lead"}]"#);
    });
    let v: Value = explain(&s.run(Purpose::Preview).unwrap());
    assert!(
        outline(&v).last().unwrap().contains("Today is 2026-11-29. | Status?"),
        "{:?}",
        outline(&v)
    );
}

#[test]
fn inline_entries_without_a_place_are_refused() {
    let s = support_desk().turn(|t| t.inline = inline(r#"[{"text": "x", "role": "system"}]"#));
    assert_eq!(
        s.run(Purpose::Preview).unwrap_err().code,
        Code::InlineSystemOutsideLeadingRun
    );
    let mut s = support_desk().turn(|t| t.inline = inline(r#"[{"text": "x", "position": "tail"}]"#));
    let lark = s.user_mut(LARK);
    lark.prompt_mechanism = Mechanism::Assembly;
    lark.prompt_template = Some(template(
        r#"{"blocks": [{"type": "lead"}, {"type": "history"}, {"type": "input"}]}"#,
    ));
    let e = s.run(Purpose::Preview).unwrap_err();
    assert_eq!(e.code, Code::InlinePositionUnavailable);
    assert!(e.message.contains("\"tail\""), "{}", e.message);
}

#[test]
fn unknown_answerer_and_non_reply_turns_are_not_compilable() {
    let s = support_desk().turn(|t| t.kind = TurnKind::Message);
    assert_eq!(s.run(Purpose::Preview).unwrap_err().code, Code::TurnNotCompilable);
    let mut s = support_desk();
    s.ctx.conversation.answerer_id = None;
    assert_eq!(s.run(Purpose::Preview).unwrap_err().code, Code::TurnNotCompilable);
}

#[test]
fn the_same_rows_give_the_same_bytes() {
    let s = support_desk();
    let a = s.run(Purpose::Preview).unwrap();
    let b = s.run(Purpose::Compile).unwrap();
    assert_eq!(a.body.text(), b.body.text());
    assert_eq!(explain(&a), explain(&b));
}

#[test]
fn a_human_turn_answered_in_a_human_conversation_reads_bare() {
    // Omar answers a turn; Omar's Human is himself, so his own words read bare.
    let mut s = support_desk().turn(|t| {
        t.answerer_id = Some(id(OMAR));
        t.poster_id = Some(id(OMAR));
    });
    s.user_mut(OMAR).kind = UserKind::Human;
    let v: Value = explain(&s.run(Purpose::Preview).unwrap());
    assert!(outline(&v).last().unwrap().ends_with("| And the credit note?"));
}

#[test]
fn the_responses_wire() {
    let s = support_desk().turn(|t| t.model = Some("resp".into()));
    let out = s.run(Purpose::Preview).unwrap();
    golden("responses_wire", &out);
    let req = body(&out);
    assert_eq!(req["model"], "resp");
    assert_eq!(req["max_output_tokens"], 1024);
    let items: Vec<(&str, &str)> = req["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["type"].as_str().unwrap(), i["role"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        items,
        [
            ("message", "system"),
            ("message", "user"),
            ("message", "assistant"),
            ("message", "user")
        ]
    );
    assert_eq!(req["prompt_cache_key"], id(CONV).to_string());
    assert_eq!(explain(&out)["cache_breakpoints"], serde_json::json!([]));
}

#[test]
fn the_gemini_wire() {
    let s = support_desk().turn(|t| t.model = Some("gem".into()));
    let out = s.run(Purpose::Preview).unwrap();
    golden("gemini_wire", &out);
    let req = body(&out);
    assert!(req.get("model").is_none(), "Gemini names the model in the URL");
    assert_eq!(req["generationConfig"]["maxOutputTokens"], 1024);
    assert_eq!(req["systemInstruction"]["parts"].as_array().unwrap().len(), 4);
    let roles: Vec<&str> = req["contents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "model", "user"]);
}

#[test]
fn kernel_memory_skills_join_the_catalog_and_never_the_memory_block() {
    let s = Scenario::new("Deploy it.")
        .skill("agent", "audit", "Audit the ledger.", |_| {})
        .skill("agent", "deploy", "Deploy (the agent's skills table).", |_| {})
        .memory("agent", "skills/deploy.md", "Deploy from memory.\nLong body.")
        .memory(
            "agent",
            "skills/ops/rollback.md",
            "\n  Roll back a release.  \nSteps...",
        )
        .memory("workspace", "skills/export.md", "Export the books.")
        .memory("agent", "notes.md", "A plain memory entry.")
        .turn(|t| {
            t.mode = Mode::Run;
            t.callables = callables(r#"[{"name":"skill"}]"#);
        });
    let out = s.run(Purpose::Preview).unwrap();
    let system: Vec<String> = body(&out)["system"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap().to_string())
        .collect();
    let catalog = system.iter().find(|t| t.starts_with("Skills available now.")).unwrap();
    assert_eq!(
        catalog,
        "Skills available now.\n- skill / audit: Audit the ledger.\n- skill / deploy: Deploy (the agent's skills table).\n- skill / ops/rollback: Roll back a release.\n- skill / export: Export the books."
    );
    let memory = system.iter().find(|t| t.starts_with("Memory available now.")).unwrap();
    assert!(
        memory.contains("### agent/notes.md") && !memory.contains("skills/"),
        "{memory}"
    );
}

/// A system item outside the leading run (here a system message turn in history) keeps
/// its role where the wire has one anywhere (chat, responses) and is spoken in place on
/// the user side on Anthropic and Gemini, never hoisted into the system field: hoisting
/// would move bytes ahead of history, and every later request would stop extending the
/// sealed one.
#[test]
fn a_system_item_in_history_on_every_wire() {
    const NOTE: &str = "Policy update: refunds need approval.";
    for &wire in Wire::ALL {
        let (model, name) = (model_on(wire), wire.as_str());
        let s = Scenario::new("Refund INV-2041.")
            .doc(LARK, "system_prompt", "You are {{agent}}.")
            .message(Role::User, ADA, "Hello.")
            .message(Role::System, ADA, NOTE)
            .message(Role::Assistant, LARK, "Noted.")
            .turn(|t| t.model = Some(model.into()));
        let out = s.run(Purpose::Preview).unwrap();
        golden(&format!("system_in_history_{name}"), &out);
        let b = body(&out);
        match wire {
            Wire::Anthropic | Wire::Converse => {
                assert_eq!(b["system"].as_array().unwrap().len(), 1, "{name}: not hoisted");
                assert_eq!(b["messages"][0]["role"], "user");
                assert_eq!(
                    b["messages"][0]["content"][1]["text"], NOTE,
                    "{name}: in place, on the user side"
                );
            }
            Wire::Gemini => {
                assert_eq!(
                    b["systemInstruction"]["parts"].as_array().unwrap().len(),
                    1,
                    "not hoisted"
                );
                assert_eq!(b["contents"][0]["parts"][1]["text"], NOTE);
            }
            Wire::Chat => {
                assert_eq!(b["messages"][2]["role"], "system");
                assert_eq!(b["messages"][2]["content"][0]["text"], NOTE);
            }
            Wire::Responses => {
                assert_eq!(b["input"][2]["role"], "system");
                assert_eq!(b["input"][2]["content"][0]["text"], NOTE);
            }
        }
    }
}

/// Request options on every wire: merged turn over agent over model, rendered in the
/// wire's own spelling; what a wire cannot say is refused with the key and the level.
#[test]
fn request_options_on_every_wire() {
    use serde_json::json;
    let tool_defs = r#"[{"name":"read_invoice","description":"Read an invoice.","input_schema":{"type":"object"}}]"#;
    let schema = json!({"type": "json_schema", "name": "answer", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}});
    let cases = [
        (
            "claude",
            "anthropic",
            json!({"tool_choice": "auto", "parallel_tool_calls": false, "stop": ["END"],
            "response_format": schema, "thinking": {"effort": "low"}, "metadata": {"user_id": "u-1"}}),
        ),
        (
            "gpt",
            "chat",
            json!({"tool_choice": "required", "parallel_tool_calls": true, "temperature": 0.2, "top_p": 0.9,
            "stop": "END", "response_format": schema, "thinking": {"effort": "medium"}, "metadata": {"app": "desk"}}),
        ),
        (
            "resp",
            "responses",
            json!({"tool_choice": {"name": "read_invoice"}, "parallel_tool_calls": false, "temperature": 0.2,
            "response_format": schema, "thinking": {"effort": "high"}, "metadata": {"app": "desk"}}),
        ),
        (
            "gem",
            "gemini",
            json!({"tool_choice": "required", "temperature": 0.2, "top_p": 0.9, "stop": ["END"],
            "response_format": schema, "thinking": {"budget_tokens": 2048}}),
        ),
        (
            "bedrock",
            "converse",
            json!({"tool_choice": {"name": "read_invoice"}, "temperature": 0.2, "top_p": 0.9, "stop": ["END"],
            "response_format": schema, "metadata": {"app": "desk"}}),
        ),
    ];
    assert_eq!(
        cases.iter().map(|c| c.1).collect::<Vec<_>>(),
        Wire::ALL.iter().map(|w| w.as_str()).collect::<Vec<_>>(),
        "a case on every wire"
    );
    for (model, wire, turn_options) in cases {
        let mut s = Scenario::new("Check INV-2041.").turn(|t| {
            t.model = Some(model.into());
            t.mode = Mode::Run;
            t.tools = Some(tools(tool_defs));
            t.request_options = request_options(&turn_options.to_string());
        });
        // The model sets a temperature where the wire takes one; the turn's own wins.
        if wire != "anthropic" {
            s.model_mut(model).request_options = request_options(r#"{"temperature": 1.5}"#);
        }
        let out = s.run(Purpose::Preview).unwrap();
        golden(&format!("options_{wire}"), &out);
    }
    let mut s = Scenario::new("Hi.").turn(|t| t.request_options = request_options(r#"{"temperature": 0.2}"#));
    s.user_mut(LARK).request_options = request_options(r#"{"top_p": 0.5}"#);
    let e = s.run(Purpose::Preview).unwrap_err();
    assert_eq!(e.code, Code::RequestOptionsInvalid);
    assert_eq!(
        e.message,
        "request_options_invalid: the anthropic wire takes no temperature (its SDK's request type has none; a model's profile can allow it) at /request_options/temperature"
    );
    assert_eq!(
        e.detail.as_deref(),
        Some("Set by the turn's request_options; the request goes on the anthropic wire.")
    );
    // Thinking beside a forced tool choice: the Messages API refuses it.
    let s = Scenario::new("Check INV-2041.").turn(|t| {
        t.mode = Mode::Run;
        t.tools = Some(tools(tool_defs));
        t.request_options =
            request_options(r#"{"tool_choice": {"name": "read_invoice"}, "thinking": {"effort": "low"}}"#);
    });
    let e = s.run(Purpose::Preview).unwrap_err();
    assert_eq!(
        e.message,
        "request_options_invalid: the anthropic wire takes no thinking beside a forced tool choice (required or a named tool) at /request_options/tool_choice"
    );
}

/// Deferred callables and tools: the eager catalog and the loaded tools leave them out;
/// `anthropic` and `responses` send deferred tools with `defer_loading` and their tool
/// search tool, `chat` and `gemini` leave them out; the seal freezes both for a search;
/// the estimate counts only what the context loads.
#[test]
fn deferred_callables_and_tools_on_every_wire() {
    let defs = r#"[{"name":"read_invoice","description":"Read an invoice.","input_schema":{"type":"object"}},
                   {"name":"refund","description":"Refund a duplicate charge.","input_schema":{"type":"object"},"deferred":true}]"#;
    let mut loaded = Vec::new();
    for (model, wire) in Wire::ALL.iter().map(|&w| (model_on(w), w.as_str())) {
        let s = support_desk()
            .skill("agent", "refunds", "Refund a duplicate charge.", |_| {})
            .skill("runner", "build", "Build the ledger.", |k| k.runner = Some("ci".into()))
            .turn(|t| {
                t.model = Some(model.into());
                t.mode = Mode::Run;
                t.tools = Some(tools(defs));
                t.callables = callables(r#"[{"name":"skill"},{"name":"ci","runner":"ci","deferred":true}]"#);
            });
        let out = s.run(Purpose::Compile).unwrap();
        let v = golden(&format!("deferred_{wire}"), &out);
        let req = body(&out);
        let system = outline(&v)[0].clone();
        assert!(
            system.contains("- skill / refunds: Refund a duplicate charge."),
            "{system}"
        );
        assert!(
            !system.contains("build"),
            "a deferred callable is not in the eager catalog"
        );
        // What search_deferred returns: both keys, each with what matches.
        assert_eq!(
            out.explain.search_deferred("LEDGER"),
            serde_json::json!({"catalog": ["- ci / build: Build the ledger."], "tools": []})
        );
        assert_eq!(out.explain.search_deferred("refund")["tools"][0]["name"], "refund");
        let seal = out.seal.unwrap();
        assert_eq!(
            seal.frozen.deferred.catalog,
            vec!["- ci / build: Build the ledger.".to_string()]
        );
        assert_eq!(seal.frozen.deferred.tools.len(), 1);
        assert_eq!(seal.frozen.deferred.tools[0]["name"], "refund");
        assert_eq!(v["deferred"]["catalog"][0], "- ci / build: Build the ledger.");
        let tools_json = match wire {
            "gemini" => req["tools"][0]["functionDeclarations"].clone(),
            "converse" => serde_json::Value::Array(
                req["toolConfig"]["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["toolSpec"].clone())
                    .collect(),
            ),
            _ => req["tools"].clone(),
        };
        let names: Vec<String> = tools_json
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t.get("name")
                    .or_else(|| t.get("function").and_then(|f| f.get("name")))
                    .or_else(|| t.get("type"))
                    .and_then(Value::as_str)
                    .unwrap()
                    .to_string()
            })
            .collect();
        match wire {
            "anthropic" => {
                assert_eq!(names, ["read_invoice", "refund", "tool_search_tool_regex"]);
                assert_eq!(req["tools"][1]["defer_loading"], true);
            }
            "responses" => {
                assert_eq!(names, ["read_invoice", "refund", "tool_search"]);
                assert_eq!(req["tools"][1]["defer_loading"], true);
            }
            _ => assert_eq!(names, ["read_invoice"], "{wire} has no tool search"),
        }
        // The runtime block names the tools the request loads.
        assert!(!system.contains("refund,") && !system.contains(", refund"), "{system}");
        let tools_tokens = out
            .explain
            .estimate
            .blocks
            .iter()
            .find(|b| b.block == "tools")
            .unwrap()
            .tokens;
        loaded.push((wire, tools_tokens));
    }
    // Counted: what the context loads, so the deferred definition adds nothing on any wire
    // beyond the search tool.
    let eager_only = |wire: &str| {
        let s = support_desk().turn(|t| {
            t.model = Some(model_on(Wire::parse(wire).unwrap()).into());
            t.tools = Some(tools(
                r#"[{"name":"read_invoice","description":"Read an invoice.","input_schema":{"type":"object"}}]"#,
            ));
        });
        let out = s.run(Purpose::Preview).unwrap();
        out.explain
            .estimate
            .blocks
            .iter()
            .find(|b| b.block == "tools")
            .unwrap()
            .tokens
    };
    for (wire, tokens) in loaded {
        let eager = eager_only(wire);
        match wire {
            "chat" | "gemini" | "converse" => assert_eq!(tokens, eager, "{wire}"),
            _ => assert!(
                tokens > eager && tokens < eager + 30,
                "{wire}: {tokens} vs {eager} (the search tool only)"
            ),
        }
    }
    // The search over what was deferred.
    let d = pgprompt_core::seal::Deferred {
        catalog: vec![
            "- ci / build: Build the ledger.".into(),
            "- ci / deploy: Ship it.".into(),
        ],
        tools: vec![serde_json::json!({"name": "refund", "description": "Refund a duplicate charge."})],
    };
    assert_eq!(
        d.search("LEDGER build").catalog,
        vec!["- ci / build: Build the ledger.".to_string()]
    );
    assert_eq!(d.search("duplicate").tools.len(), 1);
    assert!(d.search("duplicate").catalog.is_empty());
    assert_eq!(d.search(""), d);
}

/// Tool options fit the tools the request loads: without tools they are left out (the
/// APIs refuse them), and a tool_choice naming a tool the request does not load is
/// refused.
#[test]
fn tool_options_fit_the_loaded_tools() {
    let agent_options = request_options(r#"{"tool_choice": "required", "parallel_tool_calls": false}"#);
    let mut s = Scenario::new("Hi.").turn(|t| t.model = Some("gpt".into()));
    s.user_mut(LARK).request_options = agent_options.clone();
    let req = body(&s.run(Purpose::Preview).unwrap());
    assert!(
        req.get("tool_choice").is_none() && req.get("parallel_tool_calls").is_none(),
        "{req}"
    );
    let defs = r#"[{"name":"read_invoice","input_schema":{"type":"object"}},
                   {"name":"refund","input_schema":{"type":"object"},"deferred":true}]"#;
    let mut s = Scenario::new("Hi.").turn(|t| {
        t.model = Some("gpt".into());
        t.tools = Some(tools(defs));
    });
    s.user_mut(LARK).request_options = agent_options;
    let req = body(&s.run(Purpose::Preview).unwrap());
    assert_eq!(req["tool_choice"], "required");
    assert_eq!(req["parallel_tool_calls"], false);
    let s = s.turn(|t| t.request_options = request_options(r#"{"tool_choice": {"name": "refund"}}"#));
    let e = s.run(Purpose::Preview).unwrap_err();
    assert_eq!(e.code, Code::RequestOptionsInvalid);
    assert!(
        e.message.contains("names \"refund\", which the request does not load"),
        "{}",
        e.message
    );
}

/// On Anthropic, parallel_tool_calls is spelled inside tool_choice: alone, it rides an
/// `auto` choice; a refused tool_choice names the level that set it.
#[test]
fn anthropic_parallel_tool_calls_alone_rides_an_auto_choice() {
    let defs = r#"[{"name":"read_invoice","input_schema":{"type":"object"}}]"#;
    let s = Scenario::new("Hi.").turn(|t| {
        t.model = Some("claude".into());
        t.tools = Some(tools(defs));
        t.request_options = request_options(r#"{"parallel_tool_calls": false}"#);
    });
    let req = body(&s.run(Purpose::Preview).unwrap());
    assert_eq!(
        req["tool_choice"],
        serde_json::json!({"type": "auto", "disable_parallel_tool_use": true})
    );
    let mut s = s.turn(|t| t.request_options = request_options("{}"));
    s.user_mut(LARK).request_options = request_options(r#"{"tool_choice": {"name": "missing"}}"#);
    let e = s.run(Purpose::Preview).unwrap_err();
    assert_eq!(e.detail.as_deref(), Some("Set by the agent's request_options."));
}
