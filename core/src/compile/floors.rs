//! The floors: every block but history renders from the answerer's template, the
//! turn's inline entries and the stored knowledge (slots, documents, memory, the skills
//! catalog, runtime context), and the turn's own words.

use std::collections::{BTreeMap, BTreeSet};

use uuid::Uuid;

use super::compiler::{Answering, Tally};
use crate::blocks::{self, Bindings};
use crate::context::Context;
use crate::error::{Code, Error, Result};
use crate::fields::{InlineEntry, Position};
use crate::items::Item;
use crate::kinds::{Role, UserKind};
use crate::macros::{self, Values};
use crate::rows::{Document, Turn, User};
use crate::template::{self, Block, Slot, Template};
use crate::voice::{Row, Voices};

/// The row versions a compile read.
#[derive(Default)]
pub(super) struct VersionLog {
    documents: BTreeMap<String, i32>,
    /// Each slot or document block the compile filled from a document, in block order:
    /// (the block, the document, its version): what `explain_turn` names, and the prompt
    /// history's text (`prompt.document_versions`) reads back.
    slots: Vec<(String, Uuid, i32)>,
    memories: BTreeMap<String, String>,
    pub(super) history: Option<u32>,
}

impl VersionLog {
    fn document(&mut self, block: String, d: &Document) {
        self.documents.insert(d.id.to_string(), d.version);
        self.slots.push((block, d.id, d.version));
    }

    fn memories(&mut self, ctx: &crate::context::Context, ids: &BTreeSet<Uuid>) {
        for m in ctx.memories.iter().filter(|m| ids.contains(&m.id)) {
            self.memories.insert(m.id.to_string(), m.updated_at.clone());
        }
    }

    pub(super) fn to_json(&self) -> serde_json::Value {
        let slots: Vec<serde_json::Value> = self
            .slots
            .iter()
            .map(|(block, id, version)| serde_json::json!({"block": block, "document_id": id, "version": version}))
            .collect();
        serde_json::json!({ "documents": self.documents, "slots": slots, "memories": self.memories, "history_entries": self.history })
    }
}

/// What the floors rendered: per block, its items; the catalog; what was read.
pub(super) struct Floors {
    pub(super) rendered: Vec<Vec<Item>>,
    pub(super) catalog: Option<String>,
    /// The deferred callables' lines, left out of the catalog.
    pub(super) deferred_catalog: Vec<String>,
    pub(super) versions: VersionLog,
}

/// The answerer's template, read from its value (it was checked on write).
pub(super) fn answerer_template(a: &User) -> Result<Template> {
    let Some(value) = a.prompt_template.as_ref() else {
        return Err(Error::new(
            Code::TemplateInvalid,
            format!(
                "answerer @{} uses the assembly mechanism and has no prompt_template",
                a.handle
            ),
        )
        .detail("path: ")
        .hint("Store a template in users.prompt_template, or set prompt_mechanism to 'default'."));
    };
    match template::parse(value) {
        (Some(t), _) => Ok(t),
        (None, problems) => Err(template::error(&problems, &format!("prompt_template of @{}", a.handle))),
    }
}

/// Renders every block but history, in template order.
pub(super) fn floors(
    ctx: &Context,
    on: &Answering,
    tally: &mut Tally,
    template: &Template,
    values: &Values,
) -> Result<Floors> {
    let t = &ctx.turn;
    let a = on.a;
    let bindings = Bindings {
        agent: a.id,
        workspace: ctx.workspace.id,
        speaker: t.poster_id,
        selected_human: super::compiler::selected_human(ctx)?,
        conversation: ctx.conversation.id,
    };
    let mut versions = VersionLog::default();
    let mut rendered: Vec<Vec<Item>> = Vec::with_capacity(template.blocks.len());
    let mut catalog = None;
    let mut deferred_catalog = Vec::new();
    for (i, block) in template.blocks.iter().enumerate() {
        let items = match block {
            Block::Slot(slot) => slot_block(ctx, a, tally, *slot, values, i, &mut versions)?,
            Block::Document(name) => document(ctx, a, tally, name, values, i, &mut versions)?,
            Block::Memory => match blocks::memory(&ctx.memories, &bindings)? {
                Some((text, ids)) => {
                    versions.memories(ctx, &ids.into_iter().collect());
                    tally.text_item(Role::System, text, i).into_iter().collect()
                }
                None => Vec::new(),
            },
            Block::Skills => {
                (catalog, deferred_catalog) = skills_catalog(ctx, a, &bindings);
                catalog
                    .clone()
                    .and_then(|c| tally.text_item(Role::System, c, i))
                    .into_iter()
                    .collect()
            }
            Block::Runtime => {
                // The tools the request loads (a deferred one is loaded only when found).
                let names: Vec<String> = on
                    .tools
                    .iter()
                    .filter(|t| !t.deferred)
                    .map(|t| t.name.clone())
                    .collect();
                let text = blocks::runtime(
                    ctx.conversation.origin_channel.as_deref(),
                    &ctx.workspace.paths,
                    &ctx.workspace.timezone,
                    &names,
                );
                tally.text_item(Role::System, text, i).into_iter().collect()
            }
            Block::Inline { .. } | Block::Lead | Block::Tail => {
                per_turn_block(tally, block, i, template, &t.inline, &t.variables, values)?
            }
            Block::History(_) => Vec::new(),
            Block::Input => input(ctx, a, tally, i).into_iter().collect(),
        };
        rendered.push(items);
    }
    system_stays_system(ctx, on, template, &rendered)?;
    Ok(Floors {
        rendered,
        catalog,
        deferred_catalog,
        versions,
    })
}

/// A system inline block, or a system entry a turn places in the lead or tail block, lands
/// where a system item stays one: in the leading run of system items, or anywhere on a
/// wire that sends a system item in place (chat, responses, and anthropic for a model whose
/// profile takes system messages). A slot document of role user or developer before it ends
/// that run (known only once the slot is read): on anthropic, gemini and converse the entry
/// would be spoken as user text, so it is refused.
fn system_stays_system(ctx: &Context, on: &Answering, template: &Template, rendered: &[Vec<Item>]) -> Result<()> {
    if on.wire.form().system_in_place(on.model) {
        return Ok(());
    }
    let mut breaker: Option<(usize, Role)> = None;
    for (i, items) in rendered.iter().enumerate() {
        if let (Some((j, role)), Block::Lead | Block::Tail) = (breaker, &template.blocks[i]) {
            if items.iter().any(|it| it.role == Role::System) {
                return Err(Error::new(
                    Code::InlineSystemOutsideLeadingRun,
                    format!(
                        "a system entry of turn {}'s inline lands in the {} block /blocks/{i}, after the {} item of /blocks/{j}, outside the leading run",
                        ctx.turn.id,
                        if template.blocks[i] == Block::Lead { "lead" } else { "tail" },
                        role.as_str()
                    ),
                )
                .detail(format!("The {} wire lifts only the leading system items; this one would be spoken as user text.", on.wire.as_str()))
                .hint("Give the entry role developer or user, or give the slot document before it role system."));
            }
        }
        if let (Some((j, role)), Block::Inline { role: Role::System, .. }, false) =
            (breaker, &template.blocks[i], items.is_empty())
        {
            return Err(Error::new(
                    Code::InlineSystemOutsideLeadingRun,
                    format!(
                        "inline block /blocks/{i} of turn {} has role system and lands after the {} item of /blocks/{j}, outside the leading run",
                        ctx.turn.id,
                        role.as_str()
                    ),
                )
                .detail(format!("The {} wire lifts only the leading system items; this one would be spoken as user text.", on.wire.as_str()))
                .hint("Give the slot document before it role system, move the inline block before that slot, or give it role developer or user."));
        }
        if breaker.is_none() {
            breaker = items.iter().find(|it| it.role != Role::System).map(|it| (i, it.role));
        }
    }
    Ok(())
}

/// A slot's document (or the turn's override of it), its macros substituted.
fn slot_block(
    ctx: &Context,
    a: &User,
    tally: &mut Tally,
    slot: Slot,
    values: &Values,
    block: usize,
    versions: &mut VersionLog,
) -> Result<Vec<Item>> {
    let entries = &ctx.turn.inline;
    if slot == Slot::SystemPrompt && a.kind == UserKind::Human {
        return Ok(Vec::new());
    }
    let owner = match slot {
        Slot::SystemPrompt => Some(a.id),
        Slot::Character => None,
        Slot::Persona => ctx
            .turn
            .poster_id
            .and_then(|p| tally.users.get(&p))
            .and_then(User::controlling_human),
    };
    let owner_doc = ctx.documents.iter().find(|d| match slot {
        Slot::Character => d.workspace_id == Some(ctx.workspace.id) && d.name == "character",
        _ => owner.is_some() && d.user_id == owner && d.name == slot.as_str(),
    });
    let over = entries.iter().rev().find_map(|e| match e {
        InlineEntry::Slot { slot: s, text, role } if *s == slot => Some((text, *role)),
        _ => None,
    });
    let (text, role) = match (over, owner_doc) {
        (Some((text, role)), doc) => (text.clone(), role.or(doc.map(|d| d.role)).unwrap_or(Role::System)),
        (None, Some(doc)) => {
            versions.document(slot.as_str().to_string(), doc);
            (doc.body.clone(), doc.role)
        }
        (None, None) => return Ok(Vec::new()),
    };
    let place = format!("the {} slot", slot.as_str());
    let text = macros::substitute(&text, values, &|_| None, tally.room(), &place)?;
    Ok(tally.text_item(role, text, block).into_iter().collect())
}

/// The answerer's document `name`, its macros substituted.
fn document(
    ctx: &Context,
    a: &User,
    tally: &mut Tally,
    name: &str,
    values: &Values,
    block: usize,
    versions: &mut VersionLog,
) -> Result<Vec<Item>> {
    let Some(doc) = ctx.documents.iter().find(|d| d.user_id == Some(a.id) && d.name == name) else {
        return Ok(Vec::new());
    };
    versions.document(format!("document:{name}"), doc);
    let place = format!("document \"{name}\"");
    let text = macros::substitute(&doc.body, values, &|_| None, tally.room(), &place)?;
    Ok(tally.text_item(doc.role, text, block).into_iter().collect())
}

/// The catalog block of the eager callables, and the lines of the deferred ones.
fn skills_catalog(ctx: &Context, a: &User, bindings: &Bindings) -> (Option<String>, Vec<String>) {
    let t = &ctx.turn;
    if !t.is_run() || t.callables.is_empty() {
        return (None, Vec::new());
    }
    // The skills table's rows, then kernel memory skills: within a source, a table
    // row comes first and wins its name.
    let mut skills = ctx.skills.clone();
    skills.extend(blocks::memory_skills(&ctx.memories, bindings));
    let application = a.application.as_deref();
    let (deferred, eager): (Vec<_>, Vec<_>) = t.callables.iter().cloned().partition(|c| c.deferred);
    let lines = blocks::catalog_lines(&skills, &eager, bindings, application);
    let deferred = blocks::catalog_lines(&skills, &deferred, bindings, application);
    (blocks::catalog(&lines), deferred)
}

/// Inline, lead and tail blocks: what a turn lays down itself. Used for the current
/// turn and, when an earlier turn was never sealed, to lay its preface down again.
pub(super) fn per_turn_block(
    tally: &mut Tally,
    block: &Block,
    i: usize,
    template: &Template,
    entries: &[InlineEntry],
    turn_vars: &BTreeMap<String, String>,
    values: &Values,
) -> Result<Vec<Item>> {
    let vars = |name: &str| -> Option<&str> {
        turn_vars
            .get(name)
            .or_else(|| template.variables.get(name))
            .map(String::as_str)
    };
    match block {
        Block::Inline { role, text } => {
            let place = format!("inline block /blocks/{i}");
            let text = macros::substitute(text, values, &vars, tally.room(), &place)?;
            Ok(tally.text_item(*role, text, i).into_iter().collect())
        }
        Block::Lead | Block::Tail => {
            let want = if *block == Block::Lead {
                Position::Lead
            } else {
                Position::Tail
            };
            let mut out = Vec::new();
            for (k, e) in entries.iter().enumerate() {
                if let InlineEntry::Placed { text, role, position } = e {
                    if *position == want {
                        let place = format!("inline entry /inline/{k}");
                        let text = macros::substitute(text, values, &|_| None, tally.room(), &place)?;
                        out.extend(tally.text_item(*role, text, i));
                    }
                }
            }
            Ok(out)
        }
        _ => Ok(Vec::new()),
    }
}

/// The turn's opening words, as the final user item.
fn input(ctx: &Context, a: &User, tally: &mut Tally, block: usize) -> Option<Item> {
    let t = &ctx.turn;
    let text = t.prompt.as_deref().filter(|p| !p.is_empty())?;
    let voices = Voices {
        users: &tally.users,
        creator: ctx.conversation.creator_id,
    };
    let part = voices.words(Row::opening(t, text.into()), Some(a), &mut tally.counter);
    Some(Item::new(Role::User, vec![part], block))
}

/// Refuses a turn's inline entries that have nowhere to land (docs/design.md, "Blocks").
pub(super) fn check_placement(template: &Template, entries: &[InlineEntry], t: &Turn) -> Result<()> {
    let leading = template.leading_run_len();
    for (i, e) in entries.iter().enumerate() {
        let InlineEntry::Placed { role, position, .. } = e else {
            continue;
        };
        let want = if *position == Position::Lead {
            Block::Lead
        } else {
            Block::Tail
        };
        let Some(at) = template.position_of(&want) else {
            return Err(Error::new(
                Code::InlinePositionUnavailable,
                format!(
                    "inline entry /inline/{i} of turn {} asks for position \"{}\", and the template has no {} block",
                    t.id,
                    position.as_str(),
                    position.as_str()
                ),
            )
            .hint(
                "Add a {\"type\": \"lead\"} or {\"type\": \"tail\"} block to the template, or name another position.",
            ));
        };
        if *role == Role::System {
            // A system entry stays in the leading run only when its block directly
            // follows that run and every entry placed before it there is system too.
            let before_system = entries[..i]
                .iter()
                .all(|p| !matches!(p, InlineEntry::Placed { position: q, role: r, .. } if q == position && *r != Role::System));
            if at != leading || !before_system {
                return Err(Error::new(
                    Code::InlineSystemOutsideLeadingRun,
                    format!("inline entry /inline/{i} of turn {} has role system and lands in the {} block, after the leading run", t.id, position.as_str()),
                )
                .detail("The Anthropic wire lifts every system item into the system field; one after the leading run would be moved.")
                .hint("Give the entry role developer or user, or override a slot with {\"slot\": ..., \"text\": ...}."));
            }
        }
    }
    Ok(())
}
