//! Thinking and reasoning in rounds: replayed verbatim on the wire that produced it
//! within the current run, dropped on the others, and in history only for the
//! answerer's newest earlier run under reasoning replay (the seed's `last_turn` rule).

use serde_json::{json, Value};

use pgprompt_core::rows::{Mode, TurnKind};
use pgprompt_core::testing::*;
use pgprompt_core::Purpose;

const ASSISTANT: &str = r#"[
  {"type":"thinking","thinking":"Check both charges.","signature":"sig-anthropic"},
  {"type":"redacted_thinking","data":"opaque-anthropic"},
  {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Reading the invoice."}],"encrypted_content":"enc-openai"},
  {"type":"thought","text":"Gemini thinks.","signature":"sig-gemini-thought"},
  {"type":"text","text":"Looking."},
  {"type":"tool_call","id":"c1","name":"read_invoice","input":{"id":"INV-2041"},"signature":"sig-gemini-call"}
]"#;

fn run(model: &str) -> Scenario {
    Scenario::new("Why was INV-2041 charged twice?").turn(|t| {
        t.mode = Mode::Run;
        t.model = Some(model.into());
        t.tools = Some(tools(r#"[{"name":"read_invoice","input_schema":{"type":"object"}}]"#));
    })
}

fn continuation(model: &str) -> Value {
    let mut s = run(model);
    s.seal();
    s.ctx.rounds = vec![round(
        1,
        ASSISTANT,
        r#"[{"call_id":"c1","content":"two charges"}]"#,
        "[]",
        false,
    )];
    body(&s.run(Purpose::Compile).unwrap())
}

#[test]
fn the_current_run_replays_each_providers_thinking_on_its_own_wire() {
    let a = continuation("claude");
    let assistant = &a["messages"][1]["content"];
    assert_eq!(
        assistant[0],
        json!({"type":"thinking","thinking":"Check both charges.","signature":"sig-anthropic"})
    );
    assert_eq!(
        assistant[1],
        json!({"type":"redacted_thinking","data":"opaque-anthropic"})
    );
    assert_eq!(assistant[2]["type"], "text");
    assert_eq!(assistant[3]["type"], "tool_use");
    assert_eq!(assistant.as_array().unwrap().len(), 4, "no other provider's blocks");

    let r = continuation("resp");
    let items = r["input"].as_array().unwrap();
    assert_eq!(
        items[1],
        json!({"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Reading the invoice."}],"encrypted_content":"enc-openai"})
    );
    assert!(!r.to_string().contains("sig-anthropic") && !r.to_string().contains("Gemini thinks"));

    let g = continuation("gem");
    let parts = &g["contents"][1]["parts"];
    assert_eq!(
        parts[0],
        json!({"text":"Gemini thinks.","thought":true,"thoughtSignature":"sig-gemini-thought"})
    );
    assert_eq!(parts[2]["thoughtSignature"], "sig-gemini-call");
    assert!(!g.to_string().contains("enc-openai") && !g.to_string().contains("sig-anthropic"));

    let c = continuation("gpt");
    for secret in [
        "sig-anthropic",
        "opaque-anthropic",
        "enc-openai",
        "Gemini thinks",
        "sig-gemini",
    ] {
        assert!(!c.to_string().contains(secret), "chat carries no thinking ({secret})");
    }
}

/// Two earlier runs of Lark with thinking, then a new turn.
fn with_history(replay: bool) -> Value {
    let mut s = Scenario::new("And now?");
    for (i, thought) in ["first thoughts", "second thoughts"].iter().enumerate() {
        let assistant = json!([
            {"type":"thinking","thinking":thought,"signature":format!("sig{i}")},
            {"type":"text","text":format!("answer {i}")}
        ])
        .to_string();
        s = s.earlier(TurnKind::Reply, |r| {
            r.turn.answerer_id = Some(id(LARK));
            r.turn.poster_id = Some(id(ADA));
            r.turn.mode = Mode::Run;
            r.turn.prompt = Some(format!("question {i}"));
            r.rounds = vec![round(1, &assistant, "[]", "[]", false)];
        });
    }
    s.user_mut(LARK).reasoning_replay = replay;
    body(&s.run(Purpose::Preview).unwrap())
}

#[test]
fn history_replays_thinking_of_the_newest_earlier_run_only_under_reasoning_replay() {
    let off = with_history(false).to_string();
    assert!(
        !off.contains("thoughts"),
        "without reasoning replay, history carries no thinking"
    );
    let on = with_history(true).to_string();
    assert!(
        on.contains("second thoughts"),
        "the newest earlier run keeps its thinking"
    );
    assert!(!on.contains("first thoughts"), "older runs do not");
}
