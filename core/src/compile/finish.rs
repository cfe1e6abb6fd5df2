//! From the compiled list to the result: the body on the model's wire, the estimate of
//! that body, the gate, what `explain_turn` shows, and what the seal freezes.

use super::compiler::{explain, uniform_role, Answering, Fresh, Output, Tally};
use super::gate;
use crate::context::Context;
use crate::error::Result;
use crate::estimate::{BlockEstimate, Estimate, WindowEstimate};
use crate::items::Message;
use crate::seal::SealDraft;
use crate::seal::{seed_cut, Frozen, Sealed};
use crate::tokens::REQUEST_OVERHEAD;
use crate::wire::{self, Layout, Request};

/// The body of the compiled list on the wire, its estimate through the gate, and the
/// seal it drafts (continued when rounds were already stored).
pub(super) fn finish(ctx: &Context, on: &Answering, tally: &mut Tally, fresh: Fresh) -> Result<Output> {
    if let Some(problem) = fresh.budget_problem.clone() {
        if on.purpose.raises() {
            return Err(problem);
        }
    }
    let options = options(ctx, on)?;
    let conversation = &ctx.conversation;
    let cache_key = conversation.root_id.unwrap_or(conversation.id).to_string();
    let request = |breakpoints| Request {
        messages: &fresh.messages,
        model: on.model,
        tools: &on.tools,
        breakpoints,
        options: &options,
        cache_key: &cache_key,
        diagnose: options.cache_diagnostics.then_some(ctx.diagnostics_previous.as_deref()),
    };
    // Anthropic marks breakpoints in the body, and so do the OpenAI wires for a model
    // whose profile takes explicit breakpoints; the others cache by key alone.
    let profile = on.model.and_then(|m| m.profile.as_ref());
    // A stateful request places none: the provider caches the chain it holds.
    let tools_tokens = super::compiler::tools_tokens(on, tally);
    let breakpoints = match options.stateful {
        true => Vec::new(),
        false => worth_caching(profile, &fresh.messages, &fresh.breakpoints, on.wire),
    };
    wire::check_size(&fresh.messages, &on.tools, 0)?;
    wire::check_request(on.wire, &request(&breakpoints), &ctx.turn.id.to_string())?;
    let rendered = wire::render(on.wire, &request(&breakpoints));
    let mut estimate = estimate(on, tally.counter.tokenizer, &fresh, &rendered.layout, tools_tokens);
    if on.purpose.raises() {
        gate::gate(ctx, &super::compiler::model_name(on.model), &on.window, &estimate)?;
    }
    let full = (&fresh.messages[..], &rendered.layout, &rendered.body.elements[..]);
    let stateful = match options.stateful {
        true => Some(super::stateful::link(ctx, on, full, &mut estimate, &mut tally.counter)?),
        false => None,
    };
    let mut frozen = frozen(ctx, on, &fresh, &rendered.layout, breakpoints.clone(), estimate)?;
    frozen.stateful = stateful;
    frozen.clear_tool_results = options.clear_tool_results.clone();
    // What storage shares: the marked elements unmarked (rendered with them, never a
    // second body), and the edits that mark this body (none without breakpoints, or for a
    // purpose that does not seal).
    let (unmarked, patches) = match on.purpose == super::compiler::Purpose::Compile {
        true => {
            let patches = crate::seal::patches(&rendered.unmarked, &rendered.body.elements);
            (rendered.unmarked, patches)
        }
        false => (Vec::new(), Vec::new()),
    };
    let draft = SealDraft {
        seed: None,
        unmarked,
        patches,
        frozen,
        preface: crate::fields::preface_json(&fresh.preface),
        catalog: fresh.catalog,
        versions: fresh.versions.to_string(),
    };
    if ctx.rounds.is_empty() {
        let explain = explain(ctx, &draft.frozen, Some(fresh.messages), false);
        return Ok(Output {
            body: rendered.body,
            explain,
            seal: Some(draft),
            last_round: None,
            cleared: None,
            notice: None,
            continuing: None,
        });
    }
    continued(ctx, on, tally, draft, rendered.body)
}

/// Rounds already stored at the first compile: seal the seed `body`, continue from it.
fn continued(
    ctx: &Context,
    on: &Answering,
    tally: &mut Tally,
    mut draft: SealDraft,
    body: wire::Body,
) -> Result<Output> {
    let sealed = Sealed {
        frozen: draft.frozen.clone(),
        body: Some(body),
    };
    let mut out = super::continuation::extend(ctx, &sealed, &mut tally.counter, on.purpose)?;
    draft.seed = sealed.body;
    out.seal = Some(draft);
    Ok(out)
}

/// What the seal freezes besides the body. A skill set that cannot be read is refused, not
/// frozen empty.
fn frozen(
    ctx: &Context,
    on: &Answering,
    fresh: &Fresh,
    layout: &Layout,
    breakpoints: Vec<wire::Breakpoint>,
    estimate: Estimate,
) -> Result<Frozen> {
    let is_seed = |m: usize, p: usize| fresh.history_block.is_none() || fresh.messages[m].blocks[p] >= fresh.seed_block;
    Ok(Frozen {
        mechanism: fresh.mechanism,
        wire: on.wire,
        model: on.model.cloned(),
        answerer_id: on.a.id,
        cache_marker: fresh.cache_marker,
        cache_breakpoints: breakpoints,
        preface: fresh.preface.clone(),
        estimate,
        seed_cut: seed_cut(&fresh.messages, layout, is_seed),
        history_from: fresh.history_from,
        deferred: crate::seal::Deferred {
            catalog: fresh.deferred_catalog.clone(),
            tools: on
                .tools
                .iter()
                .filter(|t| t.deferred)
                .map(crate::fields::Tool::definition)
                .collect(),
        },
        stateful: None,
        clear_tool_results: None,
        // What skills_for_turn answers for the sealed turn from now on.
        skills: match ctx.turn.callables.is_empty() {
            true => Vec::new(),
            false => super::skills::live(ctx)?,
        },
    })
}

/// The estimate of the rendered body: per block, history, the tool definitions, and
/// the total the gate compares with the window.
fn estimate(
    on: &Answering,
    tokenizer: crate::tokens::Tokenizer,
    fresh: &Fresh,
    layout: &Layout,
    tools_tokens: u32,
) -> Estimate {
    let n = fresh.blocks.len();
    let (costs, total) = wire::costs(&fresh.messages, layout, tools_tokens, n, n);
    let mut blocks = Vec::with_capacity(n + 1);
    let mut running = REQUEST_OVERHEAD;
    for (i, name) in fresh.blocks.iter().enumerate() {
        let is_history = Some(i) == fresh.history_block;
        if !is_history {
            running = crate::tokens::add(running, costs[i]);
        }
        let role = match (is_history, fresh.history_block) {
            (true, _) => None,
            (false, Some(_)) => uniform_role(fresh.rendered[i].iter().map(|it| it.role)),
            (false, None) => uniform_role(fresh.messages.iter().map(|m| m.role)),
        };
        let rendered_something = fresh.history_block.is_none() || !fresh.rendered[i].is_empty();
        blocks.push(BlockEstimate {
            block: name.clone(),
            role,
            tokens: costs[i],
            floor_unmet: !is_history && rendered_something && !on.window.fits(running),
        });
    }
    running = crate::tokens::add(running, tools_tokens);
    blocks.push(BlockEstimate {
        block: "tools".into(),
        role: None,
        tokens: tools_tokens,
        floor_unmet: tools_tokens > 0 && !on.window.fits(running),
    });
    let mut history = fresh.history.clone();
    if let Some(h) = fresh.history_block {
        history.tokens = costs[h];
    }
    Estimate {
        window: WindowEstimate {
            window: on.window,
            tokenizer,
        },
        blocks,
        history,
        total,
        cleared: fresh.history_cleared.clone(),
    }
}

/// The breakpoints a body of `wire` carries (`wire::placed`), none where the messages up
/// to it are below the model's minimum cacheable length.
fn worth_caching(
    profile: Option<&crate::profile::Profile>,
    messages: &[Message],
    breakpoints: &[wire::Breakpoint],
    wire: crate::kinds::Wire,
) -> Vec<wire::Breakpoint> {
    let minimum = profile.map_or(0, |p| u32::try_from(p.min_cache_tokens).unwrap_or(0));
    let mut placed = wire::placed(wire, profile, messages, breakpoints);
    // The messages' prefix alone decides, not the tools before it: a run's first request
    // is byte for byte the tool-less reply's request plus its tools (seed 000; on converse,
    // a tool-less request reads history's calls and results as text), so the tools never
    // add a breakpoint the reply would not carry.
    placed.retain(|b| prefix_tokens(messages, b) >= minimum);
    placed
}

/// The tokens of the compiled parts up to and including a breakpoint's.
fn prefix_tokens(messages: &[Message], b: &wire::Breakpoint) -> u32 {
    let whole = messages[..b.message.min(messages.len())]
        .iter()
        .flat_map(|m| m.parts.iter().map(|p| p.tokens));
    let within = messages
        .get(b.message)
        .into_iter()
        .flat_map(|m| m.parts.iter().take(b.part + 1).map(|p| p.tokens));
    crate::tokens::sum(whole.chain(within))
}

/// The request's options: the model's, the agent's and the turn's, merged and checked
/// against the wire.
fn options(ctx: &Context, on: &Answering) -> Result<crate::options::Options> {
    let none = crate::options::RequestOptions::default();
    let levels = super::compiler::option_levels(ctx, on, &none);
    let max_tokens = on
        .model
        .map_or(crate::wire::DEFAULT_MAX_TOKENS, |m| m.max_output_tokens);
    let profile = on.model.and_then(|m| m.profile.as_ref());
    let rules = on.model.and_then(|m| {
        m.profile.as_ref().map(|profile| crate::options::Rules {
            model: &m.name,
            profile,
        })
    });
    let dialect = crate::wire::options::Dialect {
        provider: crate::wire::provider_of(on.model, on.wire),
        native_images: on.model.is_some_and(|m| m.native_images),
    };
    let mut o = crate::wire::options::resolve_options(levels, on.wire, max_tokens, rules, dialect)?;
    if on.a.reasoning_replay || profile.is_some_and(|p| p.replays_thinking) {
        on.wire.form().replay_reasoning(&mut o);
    }
    let loaded: Vec<&str> = on
        .tools
        .iter()
        .filter(|t| !t.deferred)
        .map(|t| t.name.as_str())
        .collect();
    let searching = wire::searches(on.wire) && on.tools.iter().any(|t| t.deferred);
    crate::options::fit_tools(&mut o, &loaded, searching).map_err(|e| {
        let (_, origin) = crate::options::merge(levels);
        let level = origin
            .iter()
            .find(|(k, _)| k == "tool_choice")
            .map_or("request", |(_, l)| *l);
        e.detail(format!("Set by the {level}'s request_options."))
    })?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_skill_set_that_cannot_be_read_is_refused_not_frozen_empty() {
        // Under raw no block reads memory_user_id, so only the frozen skill set meets a
        // row the write trigger would refuse now: one naming an agent.
        let mut s = Scenario::new("ignored under raw").turn(|t| {
            t.input = Some(crate::testing::raw_input(r#"[{"role": "user", "content": "One."}]"#));
            t.callables = crate::testing::callables(r#"[{"name": "skill"}]"#);
            t.memory_user_id = Some(crate::testing::id(LARK));
        });
        s.user_mut(LARK).prompt_mechanism = crate::kinds::Mechanism::Raw;
        let e = s.run(Purpose::Compile).unwrap_err();
        assert_eq!(e.code, crate::error::Code::TurnFieldInvalid, "{}", e.message);
        assert!(e.message.contains("memory_user_id"), "{}", e.message);
    }

    use crate::compile::Purpose;
    use crate::kinds::Role;
    use crate::testing::{Scenario, ADA, LARK};

    fn breakpoints(min: i32) -> usize {
        let mut s = Scenario::new("Why twice?")
            .doc(LARK, "system_prompt", "You are {{agent}}.")
            .message(Role::User, ADA, "I was charged twice.");
        let mut p = crate::profile::tests::adaptive_only();
        p.min_cache_tokens = min;
        let m = s.model_mut("claude").clone().with_profile(Some(p));
        *s.model_mut("claude") = m;
        let out = s.run(Purpose::Preview).unwrap();
        assert_eq!(
            out.body.text().matches("cache_control").count(),
            out.explain.cache_breakpoints.len()
        );
        out.explain.cache_breakpoints.len()
    }

    #[test]
    fn no_breakpoint_where_the_prefix_is_below_the_models_minimum() {
        assert_eq!(breakpoints(0), 2, "the stable prefix and the newest history entry");
        assert_eq!(breakpoints(100_000), 0);
    }
}
