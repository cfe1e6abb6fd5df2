//! A turn's effective skill set (`prompt.skills_for_turn`, seed 003's skill_view): what
//! its catalog lists, then the recall-only skills; a sealed turn's as its seal froze it.

use super::compiler;
use crate::blocks;
use crate::context::Context;
use crate::error::Result;
use crate::rows::TurnSkill;

/// The complete effective skill set of the turn's callables (seed 003's skill_view):
/// what its catalog lists, then each callable's recall-only skills, with their sources;
/// deferred callables too. The skills are read as they are now (a sealed turn's
/// catalog stays as it was sealed).
pub fn skills_for_turn(ctx: &Context) -> Result<Vec<TurnSkill>> {
    // A sealed turn's set is the one its seal froze (a skill written mid-run is the next
    // turn's fact); a seal of 0.4 froze none, and the skills are read as they are now.
    if let Some(frozen) = ctx.seal.as_ref().map(|s| &s.frozen).filter(|f| !f.skills.is_empty()) {
        return Ok(frozen.skills.clone());
    }
    live(ctx)
}

/// The turn's effective skill set as the skills stand now.
pub(super) fn live(ctx: &Context) -> Result<Vec<TurnSkill>> {
    let a = compiler::answerer(ctx)?;
    let t = &ctx.turn;
    let bindings = blocks::Bindings {
        agent: a.id,
        workspace: ctx.workspace.id,
        speaker: t.poster_id,
        selected_human: compiler::selected_human(ctx)?,
        conversation: ctx.conversation.id,
    };
    let mut skills = ctx.skills.clone();
    skills.extend(blocks::memory_skills(&ctx.memories, &bindings));
    let found = blocks::resolve(&skills, &t.callables, &bindings, a.application.as_deref(), true);
    Ok(found
        .into_iter()
        .map(|(callable, s)| TurnSkill {
            callable: callable.to_string(),
            source: s.source.clone(),
            name: s.name.clone(),
            description: s.description.clone(),
            recall_only: s.recall_only,
        })
        .collect())
}
