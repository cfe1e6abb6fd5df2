//! Property: sealed bytes never move (docs/design.md, "Seals"). Over random run turns —
//! rounds with text, calls, results, captures, steers and aborts, written one at a
//! time — and random changes between calls to the model row, the answerer's model, the
//! turn's tools and the documents, every earlier request of the turn is a byte prefix of
//! every later one's element list, on every wire.

use pgprompt_core::rows::{Mode, Role, Wire};
use pgprompt_core::testing::*;
use pgprompt_core::Purpose;
use serde_json::json;

const U: &str = "00000000-0000-0000-0000-0000000000";

fn random_round(r: &mut Rng, n: i32) -> pgprompt_core::rounds::Round {
    let calls = r.below(3);
    let mut assistant = Vec::new();
    if r.below(3) != 0 {
        assistant.push(json!({"type": "text", "text": format!("thinking about step {n}")}));
    }
    for c in 0..calls {
        assistant
            .push(json!({"type": "tool_call", "id": format!("c{n}_{c}"), "name": "read", "input": {"n": n, "c": c}}));
    }
    let results: Vec<_> = (0..calls)
        .map(|c| {
            let mut res = json!({"call_id": format!("c{n}_{c}"), "content": format!("result {n}.{c}"), "is_error": r.below(5) == 0});
            if r.below(3) == 0 {
                let data = ["aGk=", "aGVsbG8="][r.below(2) as usize];
                res["captures"] = json!([{"name": "shot.png", "media_type": "image/png", "data": data}]);
            }
            res
        })
        .collect();
    let steers = match r.below(4) {
        0 => json!([{"author_id": format!("{U}03"), "text": "hurry"}]),
        1 => json!([{"author_id": format!("{U}04"), "text": "a guest </message> says"}]),
        _ => json!([]),
    };
    round(
        n,
        &serde_json::Value::Array(assistant).to_string(),
        &serde_json::Value::Array(results).to_string(),
        &steers.to_string(),
        r.below(6) == 0,
    )
}

#[test]
fn property_every_request_of_a_run_extends_the_earlier_ones() {
    let mut r = Rng(0x005e_ed0f_5ea1);
    for case in 0..120 {
        let wire = Wire::ALL[case % Wire::ALL.len()];
        let mut s = Scenario::new("Investigate the double charge.")
            .doc(LARK, "system_prompt", "You are {{agent}}.")
            .message(Role::User, ADA, "It happened twice.")
            .turn(|t| {
                t.mode = Mode::Run;
                t.tools = Some(tools(r#"[{"name":"read","input_schema":{"type":"object"}}]"#));
            });
        s.model_mut("claude").wire = wire;
        s.model_mut("claude").native_images = r.below(2) == 0;
        let first = s.seal();
        let mut earlier = vec![without_tail(&first)];
        for n in 1..=(1 + r.below(5) as i32) {
            s.ctx.rounds.push(random_round(&mut r, n));
            // Rows change between calls; the seal froze what it needs.
            match r.below(5) {
                0 => s.model_mut("claude").native_images ^= true,
                1 => s.model_mut("claude").max_output_tokens += 1,
                2 => s.user_mut(LARK).model = Some("gpt".into()),
                3 => s.ctx.turn.tools = Some(tools(r#"[{"name":"other","input_schema":{}}]"#)),
                _ => s.ctx.documents.clear(),
            }
            let out = match s.run(Purpose::Compile) {
                Ok(out) => out,
                // Bedrock's rule: messages alternate. A round that answered without a call,
                // a steer or an abort ends a run; one more round after it meets the
                // answer with another and is refused, never sent.
                Err(e) if wire == Wire::Converse && e.message.contains("two assistant messages in a row") => {
                    let before = &s.ctx.rounds[s.ctx.rounds.len() - 2];
                    let said_back = !before.results.is_empty() || !before.steers.is_empty() || before.aborted;
                    assert!(!said_back, "case {case}: {}", e.message);
                    break;
                }
                // And a response says something: a round whose assistant said nothing
                // puts its user side after the last round's.
                Err(e) if wire == Wire::Converse && e.message.contains("two user messages in a row") => {
                    let last = &s.ctx.rounds[s.ctx.rounds.len() - 1];
                    assert!(last.assistant.is_empty(), "case {case}: {}", e.message);
                    break;
                }
                Err(e) => panic!("case {case} on {wire:?}: a continuation compiles: {}", e.message),
            };
            let text = out.body.text();
            // The sealed tail stays; on anthropic a run's continuations add the request-level
            // cache marker to it (each round cached for the next call).
            let tail = match wire {
                Wire::Anthropic => format!(
                    r#"{},"cache_control":{{"type":"ephemeral"}}}}"#,
                    first.body.tail.strip_suffix('}').expect("a body's tail closes it")
                ),
                Wire::Chat | Wire::Responses | Wire::Gemini | Wire::Converse => first.body.tail.clone(),
            };
            assert!(text.ends_with(&tail), "case {case}: the sealed tail stays\n{text}");
            for e in &earlier {
                assert!(
                    text.starts_with(e.as_str()),
                    "case {case}, round {n}: an earlier request moved\n{e}\n{text}"
                );
            }
            earlier.push(without_tail(&out));
        }
    }
}
