//! Tool-result clearing (`request_options.clear_tool_results`, docs/design.md, "Clearing
//! tool results"), on every wire: goldens of a cleared run, the byte-prefix property with
//! clearing steps, what the records keep cleared after a summary and in later turns, and
//! the option's refusals.

use serde_json::json;

use pgprompt_core::rows::{Mode, Role, TurnKind, Wire};
use pgprompt_core::testing::*;
use pgprompt_core::{Code, Purpose};

const PLACEHOLDER: &str = "[tool result cleared]";

fn result_text(n: i32) -> String {
    format!("file {n}: {}", "ledger line with an amount and a date. ".repeat(12))
}

/// Round `n`: one call of `tool`, its long result, and a picture on round 1.
fn read_round(n: i32, tool: &str) -> pgprompt_core::rounds::Round {
    let captures = match n {
        1 => json!([{"name": "shot.png", "media_type": "image/png", "data": "aGk="}]),
        _ => json!([]),
    };
    round(
        n,
        &json!([{"type": "text", "text": format!("Reading part {n}.")},
                {"type": "tool_call", "id": format!("c{n}"), "name": tool, "input": {"part": n}}])
        .to_string(),
        &json!([{"call_id": format!("c{n}"), "content": result_text(n), "captures": captures}]).to_string(),
        "[]",
        false,
    )
}

/// A sealed run turn on `wire` that clears by `rule`.
fn run_on(wire: Wire, rule: serde_json::Value) -> Scenario {
    let mut s = Scenario::new("Find the double charge.")
        .doc(LARK, "system_prompt", "You are {{agent}}.")
        .message(Role::User, ADA, "It happened twice.")
        .turn(|t| {
            t.mode = Mode::Run;
            t.tools = Some(tools(
                r#"[{"name":"read","input_schema":{"type":"object"}},{"name":"notes","input_schema":{"type":"object"}}]"#,
            ));
            t.request_options = request_options(&json!({ "clear_tool_results": rule }).to_string());
        });
    s.model_mut("claude").wire = wire;
    s.model_mut("claude").native_images = true;
    s.seal();
    s
}

/// Compiles the next request as `compile_turn` sends it: what it clears is stored with
/// the newest round it carries.
fn send(s: &mut Scenario) -> pgprompt_core::Output {
    let out = s.run(Purpose::Compile).expect("a continuation compiles");
    if let (Some(record), Some(n)) = (&out.cleared, out.last_round) {
        let r = s.ctx.rounds.iter_mut().find(|r| r.n == n).expect("the newest round");
        assert!(
            r.cleared.is_none() && !r.sent,
            "a record is written with the round's first request"
        );
        r.cleared = Some(record.clone());
    }
    for r in s.ctx.rounds.iter_mut().filter(|r| Some(r.n) <= out.last_round) {
        r.sent = true;
    }
    out
}

#[test]
fn a_long_run_sends_its_older_results_cleared_on_every_wire() {
    for &wire in Wire::ALL.iter() {
        let mut s = run_on(wire, json!({"trigger": 200, "keep": 1}));
        for n in 1..=3 {
            s.ctx.rounds.push(read_round(n, "read"));
        }
        let out = send(&mut s);
        let v = golden(&format!("clearing_{}", wire.as_str()), &out);
        let text = out.body.text();
        assert_eq!(
            text.matches(PLACEHOLDER).count(),
            2,
            "{wire:?}: rounds 1 and 2 cleared\n{text}"
        );
        assert!(!text.contains("file 1:") && !text.contains("file 2:"), "{wire:?}");
        assert!(text.contains("file 3:"), "{wire:?}: the newest result is kept");
        assert!(
            !text.contains("aGk="),
            "{wire:?}: a cleared result's picture goes with it"
        );
        for n in 1..=3 {
            assert_eq!(
                text.matches(&format!("\"c{n}\"")).count(),
                2,
                "{wire:?}: call c{n} stays paired\n{text}"
            );
        }
        let listed = &v["estimate"]["cleared"];
        assert_eq!(listed.as_array().map(Vec::len), Some(2), "{wire:?}: {listed}");
        assert_eq!(listed[0]["round"], 1);
        assert_eq!(listed[0]["call_id"], "c1");
        assert_eq!(listed[0]["tool"], "read");
        assert!(
            listed[0]["tokens"].as_u64().unwrap() > 85,
            "its text and its picture: {listed}"
        );
        // Sent again, the same rows give the same bytes and take no second step.
        let again = send(&mut s);
        assert_eq!(again.body.text(), text, "{wire:?}");
        assert!(again.cleared.is_none(), "{wire:?}");
    }
}

#[test]
fn below_the_trigger_or_under_clear_at_least_nothing_is_cleared() {
    for rule in [
        json!({"trigger": 100_000}),
        json!({"trigger": 200, "keep": 1, "clear_at_least": 100_000}),
        json!({"trigger": 200, "keep": 3}),
    ] {
        let mut s = run_on(Wire::Anthropic, rule.clone());
        for n in 1..=3 {
            s.ctx.rounds.push(read_round(n, "read"));
        }
        let out = send(&mut s);
        assert!(!out.body.text().contains(PLACEHOLDER), "{rule}");
        assert!(
            out.cleared.is_none() && out.explain.estimate.cleared.is_empty(),
            "{rule}"
        );
    }
}

#[test]
fn excluded_tools_and_the_placeholder_are_the_rules() {
    let mut s = run_on(
        Wire::Chat,
        json!({"trigger": 200, "keep": 0, "exclude_tools": ["notes"], "placeholder": "[gone]"}),
    );
    s.ctx.rounds.push(read_round(1, "notes"));
    s.ctx.rounds.push(read_round(2, "read"));
    let text = send(&mut s).body.text();
    assert!(text.contains("file 1:"), "an excluded tool's result stays");
    assert!(!text.contains("file 2:") && text.contains("[gone]"), "{text}");
}

/// Property: with clearing on, each request of a run is a byte prefix of the next but
/// where a step clears, each step clears at least `clear_at_least` tokens, and what one
/// request cleared every later one sends cleared.
#[test]
fn property_requests_extend_each_other_between_clearing_steps() {
    let mut r = Rng(0x00c1_ea2e_d001);
    let (mut all_steps, mut extended) = (0, 0);
    for case in 0..60 {
        let wire = Wire::ALL[case % Wire::ALL.len()];
        let at_least = [0, 150, 400][r.below(3) as usize];
        let keep = r.below(3);
        let mut s = run_on(
            wire,
            json!({"trigger": 250 + r.below(400), "keep": keep, "clear_at_least": at_least}),
        );
        let mut earlier = vec![without_tail(&s.run(Purpose::Compile).unwrap())];
        let mut was_cleared: Vec<(i32, String)> = Vec::new();
        let mut steps = 0;
        for n in 1..=(2 + r.below(6) as i32) {
            s.ctx.rounds.push(read_round(n, ["read", "notes"][r.below(2) as usize]));
            let out = send(&mut s);
            let listed: Vec<(i32, String)> = out
                .explain
                .estimate
                .cleared
                .iter()
                .map(|c| (c.round, c.call_id.clone()))
                .collect();
            for k in &was_cleared {
                assert!(listed.contains(k), "case {case}: {k:?} came back");
            }
            let text = out.body.text();
            match &out.cleared {
                Some(step) => {
                    steps += 1;
                    let tokens: u32 = out
                        .explain
                        .estimate
                        .cleared
                        .iter()
                        .filter(|c| {
                            step.results
                                .iter()
                                .any(|k| k.round == c.round && k.call_id == c.call_id)
                        })
                        .map(|c| c.tokens)
                        .sum();
                    assert!(tokens >= at_least, "case {case}: a step cleared {tokens} < {at_least}");
                    // What the seal sent stays; the rounds after it are sent again.
                    assert!(text.starts_with(&earlier[0]), "case {case}: the sealed body moved");
                    earlier.truncate(1);
                }
                None => {
                    extended += 1;
                    for e in &earlier {
                        assert!(
                            text.starts_with(e.as_str()),
                            "case {case}, round {n}: an earlier request moved"
                        );
                    }
                }
            }
            was_cleared = listed;
            earlier.push(without_tail(&out));
        }
        assert!(steps <= 8, "case {case}");
        all_steps += steps;
    }
    assert!(
        all_steps > 20 && extended > 20,
        "the cases take steps and extend: {all_steps}, {extended}"
    );
}

#[test]
fn a_summary_brings_no_cleared_result_back_and_a_later_result_keeps_its_pictures() {
    for &wire in Wire::ALL.iter() {
        let mut s = run_on(wire, json!({"trigger": 150, "keep": 0, "exclude_tools": ["notes"]}));
        let mut listed = 0;
        for n in 1..=3 {
            s.ctx.rounds.push(read_round(n, "read"));
            listed = send(&mut s).explain.estimate.cleared.len();
        }
        assert_eq!(listed, 3, "{wire:?}: every result cleared");
        // The summary replaces rounds 1 and 2; round 3 stays, cleared; round 4 is a
        // tool's whose results are never cleared, its picture first sent now.
        s.ctx.turn.summary = Some("Parts 1 and 2 read: nothing yet.".into());
        s.ctx.turn.summary_round = Some(3);
        s.ctx.rounds.push(read_round(4, "notes"));
        let mut fourth = s.ctx.rounds.pop().unwrap();
        fourth.results[0].captures = read_round(1, "read").results[0].captures.clone();
        s.ctx.rounds.push(fourth);
        let out = s.run(Purpose::Preview).unwrap();
        assert!(out.cleared.is_none(), "{wire:?}: round 3 needs no second step");
        let text = out.body.text();
        assert!(
            !text.contains("file 3:"),
            "{wire:?}: round 3 stays cleared after the summary\n{text}"
        );
        assert!(
            text.contains("aGk="),
            "{wire:?}: a result first sent after the summary keeps its picture"
        );
    }
}

#[test]
fn a_later_turn_reads_the_run_as_its_requests_cleared_it() {
    let mut s = run_on(Wire::Anthropic, json!({"trigger": 200, "keep": 1}));
    for n in 1..=3 {
        s.ctx.rounds.push(read_round(n, "read"));
    }
    send(&mut s);
    let rounds = s.ctx.rounds.clone();
    let later = Scenario::new("And now?")
        .doc(LARK, "system_prompt", "You are {{agent}}.")
        .message(Role::User, ADA, "It happened twice.")
        .earlier(TurnKind::Reply, |r| {
            r.turn.mode = Mode::Run;
            r.turn.prompt = Some("Find the double charge.".into());
            r.turn.content = Some("Found it.".into());
            r.rounds = rounds;
        });
    let out = later.run(Purpose::Preview).unwrap();
    let text = out.body.text();
    assert_eq!(text.matches(PLACEHOLDER).count(), 2, "{text}");
    assert!(text.contains("file 3:"), "{text}");
    // Its estimate lists them, with the turn whose run they are in.
    let listed: Vec<(Option<uuid::Uuid>, i32, &str)> = out
        .explain
        .estimate
        .cleared
        .iter()
        .map(|c| (c.turn_id, c.round, c.call_id.as_str()))
        .collect();
    let run = later
        .history
        .iter()
        .find(|h| h.turn.mode == Mode::Run)
        .map(|h| h.turn.id);
    assert_eq!(listed, [(run, 1, "c1"), (run, 2, "c2")]);
}

#[test]
fn the_option_is_checked_on_write() {
    for (rule, says) in [
        (json!({"keep": 2}), "needs a trigger"),
        (
            json!({"trigger": -1}),
            "clear_tool_results.trigger must be a whole number",
        ),
        (json!({"trigger": 10, "keep": "all"}), "clear_tool_results.keep must be"),
        (
            json!({"trigger": 10, "exclude_tools": "read"}),
            "exclude_tools must be a list",
        ),
        (
            json!({"trigger": 10, "placeholder": ""}),
            "placeholder must be a non-empty string",
        ),
        (
            json!({"trigger": 10, "tools": []}),
            "unknown clear_tool_results key \"tools\"",
        ),
        (json!(true), "clear_tool_results must be an object"),
    ] {
        let e = pgprompt_core::wire::options::parse_request_options(
            json!({ "clear_tool_results": rule }).to_string().as_str(),
        )
        .expect_err("refused");
        assert_eq!(e.code, Code::RequestOptionsInvalid);
        assert!(e.message.contains(says), "{rule}: {}", e.message);
    }
    // A stateful chain's provider stores what it was sent: nothing there to clear.
    let both = json!({"stateful": true, "clear_tool_results": {"trigger": 10}});
    let e = pgprompt_core::wire::options::parse_request_options(both.to_string().as_str()).expect_err("refused");
    assert_eq!(e.code, Code::RequestOptionsInvalid);
    assert!(e.message.contains("stateful chain"), "{}", e.message);
}

/// Found by the hostile review: a request whose newest round was sent already (here
/// after an in-turn summary longer than what it replaced) cannot store a step, so it
/// takes none — a step it sent and did not store would be undone by the next request.
#[test]
fn a_request_that_cannot_store_a_step_takes_none() {
    for &wire in Wire::ALL.iter() {
        let mut s = run_on(wire, json!({"trigger": 600, "keep": 1}));
        for n in 1..=3 {
            s.ctx.rounds.push(read_round(n, "read"));
        }
        let out = send(&mut s);
        assert!(
            out.cleared.is_none() && !out.body.text().contains(PLACEHOLDER),
            "{wire:?}: below the trigger"
        );
        s.ctx.turn.summary = Some("We read the ledgers and noted the totals. ".repeat(90));
        s.ctx.turn.summary_round = Some(2);
        let out = s.run(Purpose::Compile).unwrap();
        assert!(out.explain.estimate.total > 600, "{wire:?}: above the trigger now");
        assert!(out.cleared.is_none(), "{wire:?}: no step on a sent round");
        assert!(!out.body.text().contains(PLACEHOLDER), "{wire:?}");
        // The next round's request takes it, and stores it.
        s.ctx.rounds.push(read_round(4, "read"));
        let out = send(&mut s);
        assert!(out.cleared.is_some(), "{wire:?}");
    }
}

/// Found by the hostile review: a step never makes a request larger. Results no larger
/// than the placeholder stay whole; a call answered twice is kept while one answer is.
#[test]
fn a_step_never_grows_a_request_nor_splits_a_call() {
    let mut s = run_on(Wire::Anthropic, json!({"trigger": 10, "keep": 1}));
    for n in 1..=4 {
        s.ctx.rounds.push(round(
            n,
            &json!([{"type": "tool_call", "id": format!("c{n}"), "name": "read", "input": {}}]).to_string(),
            &json!([{"call_id": format!("c{n}"), "content": "ok"}]).to_string(),
            "[]",
            false,
        ));
    }
    let before = s.run(Purpose::Preview).unwrap().explain.estimate.total;
    let out = send(&mut s);
    assert!(
        out.cleared.is_none(),
        "results of two tokens are not worth a placeholder"
    );
    assert_eq!(out.explain.estimate.total, before);

    let mut s = run_on(Wire::Chat, json!({"trigger": 10, "keep": 1}));
    let long = result_text(1);
    s.ctx.rounds.push(round(
        1,
        r#"[{"type":"tool_call","id":"x","name":"read","input":{}}]"#,
        &json!([{"call_id": "x", "content": long}, {"call_id": "x", "content": long}]).to_string(),
        "[]",
        false,
    ));
    let out = send(&mut s);
    assert!(out.cleared.is_none(), "the newest answer of x is kept, so x is");
    assert_eq!(out.body.text().matches("file 1:").count(), 2);
}

#[test]
fn a_turn_turns_off_what_its_agent_sets() {
    let o =
        pgprompt_core::wire::options::parse_request_options(r#"{"clear_tool_results": null}"#).expect("null is taken");
    assert_eq!(o.0["clear_tool_results"], serde_json::Value::Null);
    let mut s = run_on(Wire::Anthropic, serde_json::Value::Null);
    s.user_mut(LARK).request_options = request_options(r#"{"clear_tool_results": {"trigger": 10, "keep": 0}}"#);
    for n in 1..=2 {
        s.ctx.rounds.push(read_round(n, "read"));
    }
    assert!(
        send(&mut s).cleared.is_none(),
        "the turn's null wins over the agent's rule"
    );
    let e = pgprompt_core::wire::options::parse_request_options(
        json!({"clear_tool_results": {"trigger": 1, "placeholder": "x".repeat(201)}})
            .to_string()
            .as_str(),
    )
    .expect_err("too long");
    assert!(e.message.contains("at most 200 characters"), "{}", e.message);
}

/// Found by the hostile review: a turn whose rounds were stored before its first compile
/// funded history after its rounds uncleared, and lost its history, though the step the
/// request then took left room for it. Clearing runs before history is trimmed: where
/// the step is certain without any history, the rounds count as it leaves them.
#[test]
fn clearing_runs_before_history_is_trimmed() {
    for &wire in Wire::ALL.iter() {
        let mut s = Scenario::new("Find the double charge.")
            .doc(LARK, "system_prompt", "You are {{agent}}.")
            .message(
                Role::User,
                ADA,
                &format!("HISTORY-MARK {}", "an older question. ".repeat(30)),
            )
            .turn(|t| {
                t.mode = Mode::Run;
                t.tools = Some(tools(r#"[{"name":"read","input_schema":{"type":"object"}}]"#));
                t.request_options = request_options(r#"{"clear_tool_results": {"trigger": 700, "keep": 1}}"#);
            });
        s.model_mut("claude").wire = wire;
        s.model_mut("claude").advisory_window = Some(1100);
        s.model_mut("claude").max_output_tokens = 100;
        for n in 1..=7 {
            s.ctx.rounds.push(read_round(n, "read"));
        }
        let out = s
            .run(Purpose::Compile)
            .unwrap_or_else(|e| panic!("{wire:?}: {}", e.message));
        let text = out.body.text();
        assert!(out.cleared.is_some(), "{wire:?}: the step is taken");
        assert!(
            text.contains("HISTORY-MARK"),
            "{wire:?}: history kept\n{}",
            out.explain.estimate.total
        );
    }
}

/// Found by the second hostile review: a record pgprompt did not write (a writer's
/// trigger, a forged restore) is not read: its placeholder is not the rule's, or it names
/// a result its rounds up to it do not hold.
#[test]
fn a_record_pgprompt_did_not_write_is_not_read() {
    let mut s = run_on(Wire::Chat, json!({"trigger": 100_000, "keep": 1}));
    for n in 1..=3 {
        s.ctx.rounds.push(read_round(n, "read"));
    }
    let forged = |placeholder: &str, round: i32, call: &str| pgprompt_core::clearing::Record {
        placeholder: placeholder.into(),
        results: vec![pgprompt_core::clearing::Key {
            round,
            call_id: call.into(),
        }],
    };
    for (record, what) in [
        (forged("FORGED EUR 99999.", 1, "c1"), "another placeholder"),
        (forged(PLACEHOLDER, 3, "c3"), "a round after its own"),
        (forged(PLACEHOLDER, 1, "c9"), "a call its round does not hold"),
    ] {
        s.ctx.rounds[1].cleared = Some(record);
        let text = s.run(Purpose::Preview).unwrap().body.text();
        assert!(
            text.contains("file 1:") && text.contains("file 3:") && !text.contains("99999"),
            "{what}"
        );
    }
    s.ctx.rounds[1].cleared = Some(forged(PLACEHOLDER, 1, "c1"));
    assert!(
        !s.run(Purpose::Preview).unwrap().body.text().contains("file 1:"),
        "pgprompt's own is read"
    );
}

/// Found by the second hostile review: a cleared result's picture that a kept result of
/// its round sends too is not counted as cleared.
#[test]
fn a_picture_still_sent_is_not_listed_as_cleared() {
    let mut s = run_on(Wire::Anthropic, json!({"trigger": 10, "keep": 1}));
    let shot = json!([{"name": "shot.png", "media_type": "image/png", "data": "aGk="}]);
    s.ctx.rounds.push(round(
        1,
        r#"[{"type":"tool_call","id":"a","name":"read","input":{}},{"type":"tool_call","id":"b","name":"read","input":{}}]"#,
        &json!([{"call_id": "a", "content": result_text(1), "captures": shot},
                {"call_id": "b", "content": result_text(2), "captures": shot}])
        .to_string(),
        "[]",
        false,
    ));
    let out = send(&mut s);
    assert!(out.body.text().contains("aGk="), "b keeps the picture");
    let listed = &out.explain.estimate.cleared;
    assert_eq!(listed.len(), 1);
    let content = out.explain.estimate.cleared[0].tokens;
    assert!(content < 150, "a's content alone, not its picture: {content}");
}
