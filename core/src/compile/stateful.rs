//! Stateful responses (seed 003: "Transcript history — owned by … stateful Responses;
//! the system prompt does not repeat it"; docs/design.md, "Stateful responses").
//!
//! A responses turn with `request_options.stateful` is compiled and sealed in full, as
//! any turn; what it sends is that body's stateful form: the leading system text as
//! `instructions` (rendered for this turn, never held by the provider), and, when the
//! previous request of its answerer has a recorded response and the chain holds,
//! `previous_response_id` and only the elements the provider does not hold. The chain
//! holds when this turn's full body, past its system text, carries everything this side
//! wrote in the previous request (its messages and tool outputs, in order, byte for
//! byte: nothing was rewritten, trimmed away or rendered differently; the model's own
//! items are the provider's, whatever this body replays of them), both for the same
//! model the response answered, and the previous request was stateful itself. The
//! model's items after it (the answer, calls, reasoning) are what the response added;
//! the rest is new. Anything else is the full body, and the next turn chains to it.

use super::compiler::Answering;
use crate::context::{Context, Previous};
use crate::error::Result;
use crate::estimate::{BlockEstimate, Estimate};
use crate::items::Message;
use crate::seal::Stateful;
use crate::tokens::Counter;
use crate::wire::{self, Body, Form, Layout};

/// The chain of a fresh stateful compile whose full body is `elements` (laid out as
/// `layout` over `messages`): linked to the context's previous request when it holds
/// and the request then fits the window, else the full body. A linked chain's estimate
/// counts what the provider holds from the recorded usage in place of the elements not
/// sent (block `held`). The previous request's full form is rendered only when its chain
/// may hold (the same model, stateful itself).
pub(super) fn link(
    ctx: &Context,
    on: &Answering<'_>,
    full: (&[Message], &Layout, &[String]),
    estimate: &mut Estimate,
    counter: &mut Counter<'_>,
) -> Result<Stateful> {
    let (form, model, window) = (on.wire.form(), on.model.map(|m| m.name.as_str()), &on.window);
    let (messages, layout, elements) = full;
    let (lead, _) = form.lead(elements);
    let unlinked = Stateful {
        previous_response_id: None,
        cut: lead,
        held_tokens: None,
    };
    let Some(p) = ctx.previous.as_ref().filter(|p| may_chain(p, model)) else {
        return Ok(unlinked);
    };
    let Some(previous_body) = super::continuation::full_request(&p.request, counter.memo())? else {
        return Ok(unlinked);
    };
    let Some((cut, previous_instructions)) = chain_cut(form, &previous_body, elements, lead) else {
        return Ok(unlinked);
    };
    let dropped = wire::elements_cost(messages, layout.elements.get(lead..cut).unwrap_or(&[]));
    let held = match (p.input_tokens, p.output_tokens) {
        (Some(i), Some(o)) => {
            let recorded = u32::try_from(i.max(0))
                .unwrap_or(0)
                .saturating_add(u32::try_from(o.max(0)).unwrap_or(0));
            recorded.saturating_sub(previous_instructions.map_or(0, |text| counter.count(&text)))
        }
        // No usage recorded: what this compile counts for the same elements.
        _ => dropped,
    };
    let total = crate::tokens::add(estimate.total.saturating_sub(dropped), held);
    if !window.fits(total) {
        // The provider's context would overflow the window: the full body, trimmed.
        return Ok(unlinked);
    }
    estimate.total = total;
    estimate.blocks.push(BlockEstimate {
        block: "held".into(),
        role: None,
        tokens: held,
        floor_unmet: false,
    });
    Ok(Stateful {
        previous_response_id: Some(p.response_id.clone()),
        cut,
        held_tokens: Some(held),
    })
}

/// Whether a chain to the previous request `p` can hold for a body for `model`: the
/// previous request was stateful itself, for the same model the response answered.
fn may_chain(p: &Previous, model: Option<&str>) -> bool {
    let same_model = p.sealed_model.as_deref() == model && p.model.as_deref().is_none_or(|m| Some(m) == model);
    p.stateful && same_model
}

/// Where the new elements of `elements` (whose leading `lead` are system elements) begin
/// when the chain to the previous request (its full form `previous`) holds, with that
/// request's instructions; `None` when it is broken.
fn chain_cut(form: &dyn Form, previous: &Body, elements: &[String], lead: usize) -> Option<(usize, Option<String>)> {
    let (previous_lead, previous_instructions) = form.lead(&previous.elements);
    let sent = previous
        .elements
        .get(previous_lead..)?
        .iter()
        .filter(|e| !form.is_reasoning(e));
    let own = elements.get(lead..)?;
    // What the previous request sent (messages, the model's answers and calls, tool
    // outputs) must recur in order, byte for byte: an answer edited since is not what
    // the provider holds. Reasoning is the provider's whatever this body replays of it
    // (an earlier turn's is not replayed, the provider keeps it).
    let mut at = 0;
    for e in sent {
        at += own.get(at..)?.iter().take_while(|o| form.is_reasoning(o)).count();
        if own.get(at)? != e {
            return None;
        }
        at += 1;
    }
    // Then what the response added (the loader has checked that the answer still reads
    // as it was recorded).
    at += own[at..].iter().take_while(|o| form.is_output(o)).count();
    Some((lead + at, previous_instructions))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::Wire;
    use crate::testing::Scenario;
    use crate::wire::Body;

    fn body(elements: &[&str]) -> Body {
        Body {
            head: r#"{"model":"resp","max_output_tokens":10,"input":["#.into(),
            elements: elements.iter().map(|e| e.to_string()).collect(),
            tail: "]}".into(),
        }
    }

    /// The chain's cut for a full body after the previous request `p` (its full form
    /// beside it), or `None`: as `link` decides it.
    fn cut(p: Option<&(Previous, Body)>, model: Option<&str>, full: &[String]) -> Option<usize> {
        let form = crate::kinds::Wire::Responses.form();
        let (_, previous) = p.filter(|(p, _)| may_chain(p, model))?;
        chain_cut(form, previous, full, form.lead(full).0).map(|c| c.0)
    }

    const SYS: &str = r#"{"type":"message","role":"system","content":"Be brief."}"#;
    const SYS2: &str = r#"{"type":"message","role":"system","content":"Be briefer."}"#;
    const U1: &str = r#"{"type":"message","role":"user","content":"hi"}"#;
    const A1: &str = r#"{"type":"message","role":"assistant","content":"hello"}"#;
    const U2: &str = r#"{"type":"message","role":"user","content":"and?"}"#;

    /// A previous request whose full form is `elements`.
    fn previous(elements: &[&str], stateful: bool, model: &str) -> Option<(Previous, Body)> {
        let p = Previous {
            response_id: "resp_1".into(),
            model: Some(model.into()),
            input_tokens: Some(10),
            output_tokens: Some(5),
            request: Box::new(Scenario::new("x").ctx),
            stateful,
            sealed_model: Some(model.into()),
        };
        Some((p, body(elements)))
    }

    #[test]
    fn the_new_elements_follow_the_previous_request_and_its_answer() {
        let p = previous(&[SYS, U1], true, "resp");
        let full = [SYS2, U1, A1, U2].map(String::from);
        // The system text changed: it is not held, so the chain still holds.
        assert_eq!(cut(p.as_ref(), Some("resp"), &full), Some(3));
        // The previous request replayed reasoning this body does not: the provider has it.
        const R: &str = r#"{"type":"reasoning","id":"rs_1","encrypted_content":"x"}"#;
        let p = previous(&[SYS, U1, R, A1, U2], true, "resp");
        let full = [SYS, U1, A1, U2, A1, U1].map(String::from);
        assert_eq!(cut(p.as_ref(), Some("resp"), &full), Some(5));
    }

    #[test]
    fn a_rewritten_prefix_another_model_or_a_full_previous_breaks_the_chain() {
        let full = [SYS, U1, A1, U2].map(String::from);
        let p = previous(&[SYS, U2], true, "resp");
        assert_eq!(cut(p.as_ref(), Some("resp"), &full), None);
        let p = previous(&[SYS, U1], true, "other");
        assert_eq!(cut(p.as_ref(), Some("resp"), &full), None);
        let p = previous(&[SYS, U1], false, "resp");
        assert_eq!(cut(p.as_ref(), Some("resp"), &full), None);
        let p = None;
        assert_eq!(cut(p.as_ref(), Some("resp"), &full), None);
        // An earlier answer edited since the previous request sent it (seed 003: the
        // provider holds what was sent, so the edit must be sent in full).
        const A1_EDITED: &str = r#"{"type":"message","role":"assistant","content":"hello, edited"}"#;
        let p = previous(&[SYS, U1, A1, U2], true, "resp");
        let edited = [SYS, U1, A1_EDITED, U2, A1, U1].map(String::from);
        assert_eq!(cut(p.as_ref(), Some("resp"), &edited), None);
        let kept = [SYS, U1, A1, U2, A1, U1].map(String::from);
        assert_eq!(cut(p.as_ref(), Some("resp"), &kept), Some(5));
    }

    #[test]
    fn the_stateful_form_lifts_the_system_text_and_sends_what_is_new() {
        let full = body(&[SYS, U1, A1, U2]);
        let s = Stateful {
            previous_response_id: Some("resp_1".into()),
            cut: 3,
            held_tokens: Some(15),
        };
        assert_eq!(
            Wire::Responses
                .form()
                .chained(&full, s.previous_response_id.as_deref(), s.cut)
                .unwrap()
                .text(),
            r#"{"model":"resp","max_output_tokens":10,"instructions":"Be brief.","previous_response_id":"resp_1","input":[{"type":"message","role":"user","content":"and?"}]}"#
        );
        let unlinked = Stateful {
            previous_response_id: None,
            cut: 1,
            held_tokens: None,
        };
        assert_eq!(
            Wire::Responses
                .form()
                .chained(&full, unlinked.previous_response_id.as_deref(), unlinked.cut)
                .unwrap()
                .elements
                .len(),
            3,
            "the full body without its system element"
        );
    }

    /// The frame is read as the fields it was written as, not searched as text: a `}`
    /// inside a value of the cache options (an id a response recorded) does not cut it
    /// short, and a frame that does not read as JSON is refused.
    #[test]
    fn a_stateful_turn_seals_its_full_form_and_sends_its_stateful_form() {
        // The system text is lifted into `instructions` in the stateful form.
        let s = Scenario::new("And now?")
            .doc(crate::testing::LARK, "system_prompt", "Be brief.")
            .turn(|t| {
                t.model = Some("resp".into());
                t.request_options = crate::testing::request_options(r#"{"stateful": true}"#);
            });
        let out = s.run(crate::compile::Purpose::Compile).unwrap();
        let (sealed, draft) = out.sealed_body().expect("a fresh compile seals");
        assert_ne!(sealed, &out.body, "the seal keeps the full form");
        assert_eq!(draft.plain(sealed), sealed.elements.as_slice());
        let st = out.explain.stateful.as_ref().unwrap();
        let form = Wire::Responses.form();
        let chained = form
            .chained(sealed, st.previous_response_id.as_deref(), st.cut)
            .unwrap();
        assert_eq!(chained, out.body, "what is sent is the stateful form of what is sealed");
    }

    #[test]
    fn the_stateful_form_is_written_from_the_frames_fields() {
        let mut full = body(&[SYS, U1, A1, U2]);
        full.tail =
            r#"],"prompt_cache_key":"k","prompt_cache_options":{"comparison_response_id":"resp_}{1"},"store":false}"#
                .into();
        let chained = Wire::Responses.form().chained(&full, Some("resp_1"), 3).unwrap().text();
        assert_eq!(
            chained,
            r#"{"model":"resp","max_output_tokens":10,"instructions":"Be brief.","previous_response_id":"resp_1","input":[{"type":"message","role":"user","content":"and?"}],"prompt_cache_key":"k","store":false}"#
        );
        full.tail = "],".into();
        let e = Wire::Responses.form().chained(&full, None, 1).unwrap_err();
        assert_eq!(e.code, crate::error::Code::DataCorrupted);
    }
}
