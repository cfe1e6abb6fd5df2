//! The compiler (SPEC §3–§9): rows in, the request out. One pipeline serves every
//! mechanism — `default` is the fixed template, `assembly` reads the answerer's, `raw`
//! sends the turn's entries — and every purpose: `compile_turn`, `preview_turn` and
//! `estimate_turn` differ only in whether they seal and whether budget problems raise.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};
use uuid::Uuid;

use super::blocks::{self, Bindings};
use super::budget::{self, Allowance, Selector, Unavailable, Window};
use super::context::{
    model_tokenizer, Context, HistorySource, HistoryTurn, Mechanism, Model, Role, Turn, TurnKind, User, Wire,
};
use super::error::{quote, Code, Error, Result};
use super::fields::{self, InlineEntry, Position, Tool};
use super::history::{self, Plan, Reader};
use super::items::{self, merge, Item, ItemsJson, Message};
use super::macros::{self, Values};
use super::rounds;
use super::template::{self, Block, HistoryKnobs, Slot, Template};
use super::tokens::{Counter, Memo, Tokenizer, MESSAGE_OVERHEAD};
use super::voice::{Row, Voices};
use super::wire::{self, CachePoint};

pub use super::estimate::{BlockEstimate, Estimate, HistoryEstimate, WindowEstimate};
pub use super::result::{Output, Rendered, ResultDoc, Seal};
use super::sealed::{copy_cache_marker, cut_parts, parse_items, parse_messages};

/// What the caller does with the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `compile_turn`: raises budget problems; the caller seals a fresh compile.
    Compile,
    /// `preview_turn`: raises like compile, never seals.
    Preview,
    /// `estimate_turn`: reports budget problems instead of raising.
    Estimate,
}

fn not_compilable(t: &Turn, why: &str) -> Error {
    Error::new(Code::TurnNotCompilable, format!("turn {} {why}", t.id))
        .hint("compile_turn compiles reply turns (kind = 'reply') of the conversation it is given.")
}

/// Compiles the turn `ctx.turn`, reading history newest first from `history`.
pub fn compile(ctx: &Context, history: &mut dyn HistorySource, memo: &mut Memo, purpose: Purpose) -> Result<Output> {
    let t = &ctx.turn;
    if t.kind != TurnKind::Reply {
        return Err(not_compilable(t, "is not a reply turn"));
    }
    let a_id = t
        .answerer_id
        .or(ctx.conversation.answerer_id)
        .ok_or_else(|| not_compilable(t, "has no answerer"))?;
    let a = ctx
        .users
        .get(&a_id)
        .ok_or_else(|| not_compilable(t, &format!("names answerer {a_id}, which is not visible")))?;
    let model = match t.model.as_deref().or(a.model.as_deref()) {
        None => None,
        Some(name) => Some(
            ctx.models
                .get(name)
                .ok_or_else(|| not_compilable(t, &format!("names model {}, which does not exist", quote(name))))?,
        ),
    };
    let wire = model
        .map(|m| Wire::parse(&m.wire))
        .transpose()?
        .unwrap_or(Wire::Anthropic);
    let tokenizer = model_tokenizer(model)?;
    let tools = t
        .tools
        .as_deref()
        .map(fields::parse_tools)
        .transpose()?
        .unwrap_or_default();
    let mut c = Compiler {
        ctx,
        a,
        model,
        wire,
        tools,
        window: Window::of(model, a.reasoning_replay),
        counter: Counter::new(tokenizer, memo),
        users: ctx.users.clone(),
        purpose,
    };
    if let Some(sealed) = &t.sealed {
        return c.continuation(&sealed.request);
    }
    let fresh = match a.prompt_mechanism {
        Mechanism::Raw => c.raw()?,
        mechanism => c.assembled(mechanism, history)?,
    };
    c.finish(fresh)
}

struct Compiler<'a, 'm> {
    ctx: &'a Context,
    a: &'a User,
    model: Option<&'a Model>,
    wire: Wire,
    tools: Vec<Tool>,
    window: Window,
    counter: Counter<'m>,
    users: HashMap<Uuid, User>,
    purpose: Purpose,
}

/// A fresh compile before the gate and the result.
struct Fresh {
    mechanism: Mechanism,
    messages: Vec<Message>,
    cache_marker: usize,
    cache: CachePoint,
    preface: Vec<Item>,
    catalog: Option<String>,
    estimate: Estimate,
    versions: Value,
    budget_problem: Option<Error>,
}

impl<'a> Compiler<'a, '_> {
    fn tokenizer(&self) -> Tokenizer {
        self.counter.tokenizer
    }

    fn window_estimate(&self) -> WindowEstimate {
        WindowEstimate {
            window: self.window,
            tokenizer: self.tokenizer().name(),
        }
    }

    /// The macro values of a turn posted by `poster`, dated `date`.
    fn values(&self, poster: Option<Uuid>, date: &str) -> Values {
        let human = poster
            .and_then(|p| self.users.get(&p))
            .and_then(User::controlling_human);
        Values {
            agent: self.a.display_name.clone(),
            user: human
                .and_then(|h| self.users.get(&h))
                .and_then(|u| u.display_name.clone()),
            workspace: self.ctx.workspace.name.clone(),
            date: Some(date.to_string()).filter(|d| !d.is_empty()),
            conversation_kind: Some(self.ctx.conversation.kind.clone()),
        }
    }

    fn text_item(&mut self, role: Role, text: String, block: usize) -> Option<Item> {
        if text.is_empty() {
            return None;
        }
        let tokens = self.counter.count(&text);
        Some(Item::text(role, text, tokens, block))
    }

    // ----- raw -------------------------------------------------------------------

    fn raw(&mut self) -> Result<Fresh> {
        let t = &self.ctx.turn;
        let Some(input) = t.input.as_deref() else {
            return Err(Error::new(
                Code::RawInputInvalid,
                format!(
                    "turn {} has no input entries, and its answerer's mechanism is raw",
                    t.id
                ),
            )
            .hint("Under raw the request is the turn's input column verbatim: [{\"role\": ..., \"content\": ...}]."));
        };
        let entries = fields::parse_raw_input(input, Some(&mut self.counter))?;
        // Verbatim: one message per entry, never merged; string content stays a string.
        let plain: Vec<bool> = entries.iter().map(|e| e.plain).collect();
        let items: Vec<Item> = entries
            .into_iter()
            .map(|e| Item {
                role: e.role,
                parts: e.parts,
                separate: true,
                block: 0,
            })
            .collect();
        let mut messages = merge(items);
        for (m, p) in messages.iter_mut().zip(plain) {
            m.plain = p;
        }
        let total = items::total_cost(&messages);
        let estimate = Estimate {
            window: self.window_estimate(),
            blocks: vec![BlockEstimate {
                block: "input".into(),
                role: uniform_role(messages.iter().map(|m| m.role)),
                tokens: total - super::tokens::REQUEST_OVERHEAD,
                floor_unmet: !self.window.fits(total),
            }],
            history: HistoryEstimate {
                selected: 0,
                available: 0,
                tokens: 0,
                budget: None,
                skipped_reason: Some("raw_mechanism".into()),
            },
            total,
        };
        Ok(Fresh {
            mechanism: Mechanism::Raw,
            messages,
            cache_marker: 0,
            cache: None,
            preface: Vec::new(),
            catalog: None,
            estimate,
            versions: json!({}),
            budget_problem: None,
        })
    }

    // ----- default and assembly ---------------------------------------------------

    fn assembled(&mut self, mechanism: Mechanism, source: &mut dyn HistorySource) -> Result<Fresh> {
        let ctx = self.ctx;
        let t = &ctx.turn;
        let template = match mechanism {
            Mechanism::Assembly => self.answerer_template()?,
            _ => Template::default_order(),
        };
        let entries = fields::parse_inline(&t.inline)?;
        check_placement(&template, &entries, t)?;
        let turn_vars = fields::parse_variables(&t.variables)?;
        let knobs = match template.blocks[template.history_index()] {
            Block::History(k) => k,
            _ => HistoryKnobs::default(),
        };
        let knobs = match t.history.as_deref() {
            Some(h) => knobs.overridden_by(fields::parse_history(h)?),
            None => knobs,
        };
        let values = self.values(t.poster_id, &t.date);
        let bindings = Bindings {
            agent: self.a.id,
            workspace: ctx.workspace.id,
            speaker: t.poster_id,
            selected_human: t.memory_user_id,
            conversation: ctx.conversation.id,
        };
        let mut versions = VersionLog::default();

        // Every block but history renders now: they are the floors.
        let hist_ix = template.history_index();
        let mut rendered: Vec<Vec<Item>> = Vec::with_capacity(template.blocks.len());
        let mut catalog = None;
        for (i, block) in template.blocks.iter().enumerate() {
            let items = match block {
                Block::Slot(slot) => self.slot(*slot, &entries, &values, i, &mut versions),
                Block::Document(name) => self.document(name, &values, i, &mut versions),
                Block::Memory => match blocks::memory(&ctx.memories, &bindings) {
                    Some((text, ids)) => {
                        versions.memories(ctx, &ids);
                        self.text_item(Role::System, text, i).into_iter().collect()
                    }
                    None => Vec::new(),
                },
                Block::Skills => {
                    catalog = self.catalog(&bindings)?;
                    catalog
                        .clone()
                        .and_then(|c| self.text_item(Role::System, c, i))
                        .into_iter()
                        .collect()
                }
                Block::Runtime => {
                    let names: Vec<String> = self.tools.iter().map(|t| t.name.clone()).collect();
                    let text = blocks::runtime(
                        ctx.conversation.origin_channel.as_deref(),
                        &ctx.workspace.timezone,
                        &names,
                    );
                    self.text_item(Role::System, text, i).into_iter().collect()
                }
                Block::Inline { .. } | Block::Lead | Block::Tail => {
                    self.per_turn_block(block, i, &template, &entries, &turn_vars, &values)
                }
                Block::History(_) => Vec::new(),
                Block::Input => self.input(i).into_iter().collect(),
            };
            rendered.push(items);
        }
        let input_ix = template.blocks.len() - 1;
        let preface: Vec<Item> = rendered[hist_ix + 1..input_ix].iter().flatten().cloned().collect();

        // The floors: the blocks on either side of history, each side costed on its own
        // (history may come between them), with the same accounting as history entries.
        let pre: Vec<Item> = rendered[..hist_ix].iter().flatten().cloned().collect();
        let post: Vec<Item> = rendered[hist_ix + 1..].iter().flatten().cloned().collect();
        let floors = self.window.inflate(
            items::marginal_cost(&pre, None) + items::marginal_cost(&post, None) + super::tokens::REQUEST_OVERHEAD,
        );

        // History: funded from what remains, newest entry first.
        let (allowance, budget_problem) = match budget::allowance(&self.window, floors, &knobs) {
            Ok(a) => (Some(a), None),
            Err(Unavailable::ShareWithoutWindow) => (
                None,
                Some(
                    Error::new(
                        Code::HistoryBudgetUnavailable,
                        format!(
                            "the history budget of turn {} asks for a share of the window, and model {} has no window",
                            t.id,
                            self.model_name()
                        ),
                    )
                    .detail(format!("budget.share = {}", knobs.share.unwrap_or_default()))
                    .hint("Give the model an advisory_window or hard_window, or use max_tokens instead of share."),
                ),
            ),
        };
        let (history_items, hist) = match allowance {
            Some(allowance) => self.history(source, &template, allowance, hist_ix, items::leading(&post))?,
            None => {
                let available = source.count_rest(self.a.id, self.ctx.conversation.answerer_id)?;
                (
                    Vec::new(),
                    HistoryEstimate {
                        selected: 0,
                        available,
                        tokens: 0,
                        budget: None,
                        skipped_reason: Some("history_budget_unavailable".into()),
                    },
                )
            }
        };
        versions.history = Some(hist.selected);

        // Assemble, merge, attribute.
        let pre_parts: usize = pre.iter().map(|i| i.parts.len()).sum();
        let all: Vec<Item> = pre.into_iter().chain(history_items).chain(post).collect();
        let messages = merge(all);
        let (cache_marker, cache) = cache_point(&messages, pre_parts);
        let costs = items::block_costs(&messages, template.blocks.len());
        let total = items::total_cost(&messages);
        let mut blocks_est = Vec::with_capacity(template.blocks.len());
        let mut running = 0u32;
        for (i, block) in template.blocks.iter().enumerate() {
            let is_history = i == hist_ix;
            if !is_history {
                running += costs[i];
            }
            let floor_unmet =
                !is_history && !rendered[i].is_empty() && !self.window.fits(running + super::tokens::REQUEST_OVERHEAD);
            let role = if is_history {
                None
            } else {
                uniform_role(rendered[i].iter().map(|it| it.role))
            };
            blocks_est.push(BlockEstimate {
                block: block.name(),
                role,
                tokens: costs[i],
                floor_unmet,
            });
        }
        let hist = HistoryEstimate {
            tokens: costs[hist_ix],
            ..hist
        };
        let estimate = Estimate {
            window: self.window_estimate(),
            blocks: blocks_est,
            history: hist,
            total,
        };
        Ok(Fresh {
            mechanism,
            messages,
            cache_marker,
            cache,
            preface,
            catalog,
            estimate,
            versions: versions.to_json(),
            budget_problem,
        })
    }

    fn model_name(&self) -> String {
        self.model.map(|m| quote(&m.name)).unwrap_or_else(|| "(none)".into())
    }

    fn answerer_template(&self) -> Result<Template> {
        let a = self.a;
        let Some(text) = a.prompt_template.as_deref() else {
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
        let value: Value = serde_json::from_str(text).map_err(|e| {
            Error::new(
                Code::TemplateInvalid,
                format!("prompt_template of @{} is not JSON ({e})", a.handle),
            )
        })?;
        match template::parse(&value) {
            (Some(t), _) => Ok(t),
            (None, problems) => Err(template_error(&problems, &format!("prompt_template of @{}", a.handle))),
        }
    }

    fn slot(
        &mut self,
        slot: Slot,
        entries: &[InlineEntry],
        values: &Values,
        block: usize,
        versions: &mut VersionLog,
    ) -> Vec<Item> {
        let ctx = self.ctx;
        if slot == Slot::SystemPrompt && self.a.kind == super::context::UserKind::Human {
            return Vec::new();
        }
        let owner_doc = match slot {
            Slot::SystemPrompt => ctx
                .documents
                .iter()
                .find(|d| d.user_id == Some(self.a.id) && d.name == "system_prompt"),
            Slot::Character => ctx
                .documents
                .iter()
                .find(|d| d.workspace_id == Some(ctx.workspace.id) && d.name == "character"),
            Slot::Persona => {
                let human = ctx
                    .turn
                    .poster_id
                    .and_then(|p| self.users.get(&p))
                    .and_then(User::controlling_human);
                human.and_then(|h| {
                    ctx.documents
                        .iter()
                        .find(|d| d.user_id == Some(h) && d.name == "persona")
                })
            }
        };
        let over = entries.iter().rev().find_map(|e| match e {
            InlineEntry::Slot { slot: s, text, role } if *s == slot => Some((text, *role)),
            _ => None,
        });
        let (text, role) = match (over, owner_doc) {
            (Some((text, role)), doc) => (text.clone(), role.or(doc.map(|d| d.role)).unwrap_or(Role::System)),
            (None, Some(doc)) => {
                versions.document(doc);
                (doc.body.clone(), doc.role)
            }
            (None, None) => return Vec::new(),
        };
        let text = macros::substitute(&text, values, &|_| None);
        self.text_item(role, text, block).into_iter().collect()
    }

    fn document(&mut self, name: &str, values: &Values, block: usize, versions: &mut VersionLog) -> Vec<Item> {
        let ctx = self.ctx;
        let Some(doc) = ctx
            .documents
            .iter()
            .find(|d| d.user_id == Some(self.a.id) && d.name == name)
        else {
            return Vec::new();
        };
        versions.document(doc);
        let text = macros::substitute(&doc.body, values, &|_| None);
        self.text_item(doc.role, text, block).into_iter().collect()
    }

    fn catalog(&mut self, bindings: &Bindings) -> Result<Option<String>> {
        let t = &self.ctx.turn;
        if !t.run {
            return Ok(None);
        }
        let callables = fields::parse_callables(&t.callables)?;
        if callables.is_empty() {
            return Ok(None);
        }
        let lines = blocks::catalog_lines(&self.ctx.skills, &callables, bindings, self.a.application.as_deref());
        Ok(blocks::catalog(&lines))
    }

    /// Inline, lead and tail blocks: what a turn lays down itself. Used for the current
    /// turn and, when an earlier turn was never sealed, to re-render its preface.
    fn per_turn_block(
        &mut self,
        block: &Block,
        i: usize,
        template: &Template,
        entries: &[InlineEntry],
        turn_vars: &serde_json::Map<String, Value>,
        values: &Values,
    ) -> Vec<Item> {
        let vars = |name: &str| -> Option<String> {
            turn_vars
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| template.variables.get(name).cloned())
        };
        match block {
            Block::Inline { role, text } => {
                let text = macros::substitute(text, values, &vars);
                self.text_item(*role, text, i).into_iter().collect()
            }
            Block::Lead | Block::Tail => {
                let want = if *block == Block::Lead {
                    Position::Lead
                } else {
                    Position::Tail
                };
                let mut out = Vec::new();
                for e in entries {
                    if let InlineEntry::Placed { text, role, position } = e {
                        if *position == want {
                            let text = macros::substitute(text, values, &|_| None);
                            out.extend(self.text_item(*role, text, i));
                        }
                    }
                }
                out
            }
            _ => Vec::new(),
        }
    }

    fn input(&mut self, block: usize) -> Option<Item> {
        let t = &self.ctx.turn;
        let text = t.prompt.as_deref().filter(|p| !p.is_empty())?;
        let voices = Voices {
            users: &self.users,
            creator: self.ctx.conversation.creator_id,
        };
        let row = Row {
            text,
            author: t.words_author(),
            sender_conversation: t.sender_conversation_id,
            kernel: t.origin.is_some(),
            stored: &t.prompt_tokens,
        };
        let part = voices.words(row, Some(self.a), &mut self.counter);
        Some(Item::new(Role::User, vec![part], block))
    }

    // ----- history ---------------------------------------------------------------

    fn plan(&self, ht: &HistoryTurn) -> Vec<Plan> {
        history::plan(ht, self.a.id, self.ctx.conversation.answerer_id)
    }

    /// The seed of an own reply turn: its preface, then its opening words.
    fn seed(&mut self, ht: &HistoryTurn, template: &Template, block: usize) -> Result<Vec<Item>> {
        let t = &ht.turn;
        let mut items = match &t.sealed {
            Some(s) => parse_items(&s.preface, block, &mut self.counter)?,
            None => {
                // Never sealed: lay its preface down as this template would have.
                let entries = fields::parse_inline(&t.inline).unwrap_or_default();
                let vars = fields::parse_variables(&t.variables).unwrap_or_default();
                let values = self.values(t.poster_id, &t.date);
                let hist_ix = template.history_index();
                let mut out = Vec::new();
                for b in &template.blocks[hist_ix + 1..] {
                    out.extend(self.per_turn_block(b, block, template, &entries, &vars, &values));
                }
                out
            }
        };
        if t.prompt.as_deref().is_some_and(|p| !p.is_empty()) {
            let row = Row {
                text: t.prompt.as_deref().unwrap_or(""),
                author: t.words_author(),
                sender_conversation: t.sender_conversation_id,
                kernel: t.origin.is_some(),
                stored: &t.prompt_tokens,
            };
            let voices = Voices {
                users: &self.users,
                creator: self.ctx.conversation.creator_id,
            };
            let part = voices.words(row, Some(self.a), &mut self.counter);
            items.push(Item::new(Role::User, vec![part], block));
        }
        Ok(items)
    }

    fn render_entry(&mut self, plan: Plan, ht: &HistoryTurn, template: &Template, block: usize) -> Result<Vec<Item>> {
        if plan == Plan::Seed {
            return self.seed(ht, template, block);
        }
        // The reader borrows the users map; the counter is separate.
        let reader = Reader {
            a: self.a,
            conv_answerer: self.ctx.conversation.answerer_id.and_then(|id| self.users.get(&id)),
            conv_answerer_id: self.ctx.conversation.answerer_id,
            voices: Voices {
                users: &self.users,
                creator: self.ctx.conversation.creator_id,
            },
            native_images: self.model.is_some_and(|m| m.native_images),
            block,
        };
        reader.render(plan, ht, &mut self.counter)
    }

    /// Selects history newest first. Returns the selected items, oldest first.
    fn history(
        &mut self,
        source: &mut dyn HistorySource,
        template: &Template,
        allowance: Allowance,
        block: usize,
        after: Option<(Role, bool)>,
    ) -> Result<(Vec<Item>, HistoryEstimate)> {
        let mut selector = Selector::new(allowance);
        // What follows the entry being offered: the per-turn blocks, then each entry taken.
        let mut following = after;
        let mut chosen: Vec<Vec<Item>> = Vec::new();
        let mut available = 0u32;
        'batches: loop {
            let (batch, users) = source.next_batch(batch_size(&selector, &allowance))?;
            if batch.is_empty() {
                break;
            }
            for u in users {
                self.users.entry(u.id).or_insert(u);
            }
            for ht in &batch {
                let plans = self.plan(ht);
                available += plans.len() as u32;
                for plan in plans.into_iter().rev() {
                    if selector.stopped.is_some() {
                        continue;
                    }
                    let items = self.render_entry(plan, ht, template, block)?;
                    let cost = self.window.inflate(items::marginal_cost(&items, following));
                    if selector.offer(cost) {
                        following = items::leading(&items).or(following);
                        chosen.push(items);
                    }
                }
                if ht.turn.kind == TurnKind::Summary {
                    // History starts at the newest summary turn.
                    break 'batches;
                }
            }
            if selector.stopped.is_some() {
                // Selection is over: the rest is only counted.
                available += source.count_rest(self.a.id, self.ctx.conversation.answerer_id)?;
                break;
            }
        }
        let skipped_reason = selector.stopped.map(|s| s.as_str().to_string());
        let items: Vec<Item> = chosen.into_iter().rev().flatten().collect();
        Ok((
            items,
            HistoryEstimate {
                selected: selector.selected,
                available,
                tokens: 0,
                budget: allowance.tokens,
                skipped_reason,
            },
        ))
    }

    // ----- continuation ------------------------------------------------------------

    /// A sealed turn: the sealed request as it was, plus the rounds written since.
    fn continuation(&mut self, sealed_text: &str) -> Result<Output> {
        let t = &self.ctx.turn;
        let sealed: Value = serde_json::from_str(sealed_text)
            .map_err(|e| not_compilable(t, &format!("has a sealed request that is not JSON ({e})")))?;
        if self.ctx.rounds.is_empty() {
            let estimate: Estimate =
                super::estimate::from_json(&sealed["estimate"]).unwrap_or_else(|| self.empty_estimate());
            return Ok(Output {
                result: Rendered::Stored(sealed_text.to_string()),
                seal: None,
                estimate,
            });
        }
        let mut messages = parse_messages(&sealed["messages"])?;
        let sealed_total = sealed["estimate"]["total"].as_u64().unwrap_or(0) as u32;
        let mut base_total = sealed_total;
        let first_round = match (t.summary.as_deref().filter(|s| !s.is_empty()), t.summary_round) {
            (Some(_), round) => {
                // The in-turn summary replaces the seed and the rounds before it.
                let preface = parse_items(&sealed["preface"].to_string(), 0, &mut self.counter)?;
                let seed_parts = preface.iter().map(|i| i.parts.len()).sum::<usize>()
                    + usize::from(t.prompt.as_deref().is_some_and(|p| !p.is_empty()));
                let before = messages.len();
                let removed_tokens = cut_parts(&mut messages, seed_parts, &mut self.counter);
                base_total =
                    base_total.saturating_sub(removed_tokens + MESSAGE_OVERHEAD * (before - messages.len()) as u32);
                round.unwrap_or(i32::MIN)
            }
            (None, _) => i32::MIN,
        };
        let mut appended: Vec<Item> = Vec::new();
        if let Some(summary) = t.summary.as_deref().filter(|s| !s.is_empty()) {
            appended.extend(self.text_item(Role::User, format!("{}{summary}", history::ROUNDS_SUMMARY_HEADER), 0));
        }
        let native = self.model.is_some_and(|m| m.native_images);
        for row in &self.ctx.rounds {
            if row.n < first_round {
                continue;
            }
            let round = rounds::parse(row, Some(t.id))?;
            let voices = Voices {
                users: &self.users,
                creator: self.ctx.conversation.creator_id,
            };
            appended.extend(rounds::render(
                &round,
                &voices,
                Some(self.a),
                native,
                &mut self.counter,
                0,
            ));
        }
        let kept = messages.len();
        let appended_tokens: u32 = appended.iter().map(Item::parts_tokens).sum();
        let items = messages.into_iter().map(|m| Item {
            role: m.role,
            parts: m.parts,
            separate: false,
            block: 0,
        });
        let all = merge(items.chain(appended));
        let total = base_total + appended_tokens + MESSAGE_OVERHEAD * (all.len() - kept) as u32;
        let mut estimate = super::estimate::from_json(&sealed["estimate"]).unwrap_or_else(|| self.empty_estimate());
        estimate.blocks.push(BlockEstimate {
            block: "rounds".into(),
            role: None,
            tokens: total.saturating_sub(base_total),
            floor_unmet: !self.window.fits(total),
        });
        estimate.total = total;
        self.gate(total, &estimate)?;
        let cache_marker = sealed["cache_marker"].as_u64().unwrap_or(0) as usize;
        let mut request = wire::render(self.wire, &all, None, self.model, &self.tools);
        if self.wire == Wire::Anthropic {
            copy_cache_marker(&sealed["request"], &mut request);
        }
        let mechanism = match sealed["mechanism"].as_str() {
            Some("assembly") => Mechanism::Assembly,
            Some("raw") => Mechanism::Raw,
            _ => Mechanism::Default,
        };
        let preface = parse_items(&sealed["preface"].to_string(), 0, &mut self.counter)?;
        let result = self.result_doc(mechanism, all, cache_marker, preface, request, estimate.clone());
        Ok(Output {
            result,
            seal: None,
            estimate,
        })
    }

    fn empty_estimate(&self) -> Estimate {
        Estimate {
            window: self.window_estimate(),
            blocks: Vec::new(),
            history: HistoryEstimate {
                selected: 0,
                available: 0,
                tokens: 0,
                budget: None,
                skipped_reason: None,
            },
            total: 0,
        }
    }

    // ----- gate and result -----------------------------------------------------------

    /// The window gate: the exact count of the whole request against the window.
    fn gate(&self, total: u32, estimate: &Estimate) -> Result<()> {
        if self.purpose == Purpose::Estimate || self.window.fits(total) {
            return Ok(());
        }
        let w = self.window.tokens.unwrap_or(0);
        let floors: Vec<String> = estimate
            .blocks
            .iter()
            .filter(|b| b.tokens > 0)
            .map(|b| format!("{} {}", b.block, b.tokens))
            .collect();
        let margin = if self.window.token_margin > 0.0 {
            format!(
                " ({} with the model's token_margin of {})",
                self.window.inflate(total),
                self.window.token_margin
            )
        } else {
            String::new()
        };
        Err(Error::new(
            Code::EstimatedInputExceedsModelLimit,
            format!("turn {} needs {total} input tokens{margin}; model {} takes {w}", self.ctx.turn.id, self.model_name()),
        )
        .detail(format!(
            "Blocks: {}; history kept {} of {} entries. The floors alone exceed the window.",
            floors.join(", "),
            estimate.history.selected,
            estimate.history.available
        ))
        .hint(format!(
            "Shorten the largest block or raise the model's window; SELECT * FROM prompt.estimate_turn('{}', '{}') shows every block.",
            self.ctx.conversation.id, self.ctx.turn.id
        )))
    }

    fn finish(&mut self, fresh: Fresh) -> Result<Output> {
        if let Some(problem) = fresh.budget_problem {
            if self.purpose != Purpose::Estimate {
                return Err(problem);
            }
        }
        self.gate(fresh.estimate.total, &fresh.estimate)?;
        let request = wire::render(self.wire, &fresh.messages, fresh.cache, self.model, &self.tools);
        let mut seal = Seal {
            request: None,
            preface: serde_json::to_string(&ItemsJson(&fresh.preface)).expect("items serialize"),
            catalog: fresh.catalog,
            mechanism: fresh.mechanism.as_str(),
            versions: fresh.versions.to_string(),
        };
        let estimate = fresh.estimate;
        let result = self.result_doc(
            fresh.mechanism,
            fresh.messages,
            fresh.cache_marker,
            fresh.preface,
            request,
            estimate.clone(),
        );
        if self.ctx.rounds.is_empty() {
            return Ok(Output {
                result,
                seal: Some(seal),
                estimate,
            });
        }
        // Rounds already stored at the first compile: seal the seed, return the continuation.
        let sealed_text = result.to_json();
        let mut sealed_turn = self.ctx.clone();
        sealed_turn.turn.sealed = Some(super::context::Sealed {
            request: sealed_text.clone(),
            preface: seal.preface.clone(),
            mechanism: seal.mechanism.to_string(),
        });
        let mut memo = Memo::new();
        let mut c = Compiler {
            ctx: &sealed_turn,
            a: self.a,
            model: self.model,
            wire: self.wire,
            tools: self.tools.clone(),
            window: self.window,
            counter: Counter::new(self.tokenizer(), &mut memo),
            users: self.users.clone(),
            purpose: self.purpose,
        };
        let out = c.continuation(&sealed_text)?;
        seal.request = Some(result);
        Ok(Output {
            result: out.result,
            seal: Some(seal),
            estimate: out.estimate,
        })
    }

    fn result_doc(
        &self,
        mechanism: Mechanism,
        messages: Vec<Message>,
        cache_marker: usize,
        preface: Vec<Item>,
        request: Value,
        estimate: Estimate,
    ) -> Rendered {
        Rendered::Doc(Box::new(ResultDoc {
            conversation_id: self.ctx.conversation.id,
            turn_id: self.ctx.turn.id,
            mechanism: mechanism.as_str(),
            model: self.model.map(|m| m.name.clone()),
            wire: self.wire.as_str(),
            messages,
            cache_marker,
            preface,
            request,
            estimate,
        }))
    }
}

/// How many turns to read next: as many as the budget left is likely to take (from the
/// entries taken so far), a few more, and not more than max_entries allows.
fn batch_size(selector: &Selector, allowance: &Allowance) -> usize {
    const FIRST: usize = 64;
    let by_entries = allowance
        .max_entries
        .map(|m| m.saturating_sub(selector.selected) as usize + 1);
    let by_tokens = match allowance.tokens {
        None => None,
        Some(_) if selector.selected == 0 => Some(FIRST),
        Some(t) => {
            let avg = (selector.used / selector.selected).max(1);
            Some((t.saturating_sub(selector.used) / avg) as usize + 8)
        }
    };
    match (by_entries, by_tokens) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => 256,
    }
    .clamp(8, 1024)
}

/// Refuses a turn's inline entries that have nowhere to land (SPEC §3.1, §9).
fn check_placement(template: &Template, entries: &[InlineEntry], t: &Turn) -> Result<()> {
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

/// The first problem as a `template_invalid` error.
pub fn template_error(problems: &[template::Problem], what: &str) -> Error {
    let p = &problems[0];
    if p.code == "template_too_large" {
        // A template is bounded like a document (SPEC §2).
        return Error::new(Code::DocumentTooLarge, format!("{what}: {}", p.message))
            .detail("path: (the template)")
            .hint("Keep long texts in documents (document blocks) rather than inline blocks.");
    }
    Error::new(
        Code::TemplateInvalid,
        format!("{what}: {} at \"{}\"", p.message, p.path),
    )
    .detail(format!("path: {}", p.path))
    .hint(format!(
        "prompt.validate_template(template) lists every problem ({} here).",
        problems.len()
    ))
}

fn uniform_role(mut roles: impl Iterator<Item = Role>) -> Option<&'static str> {
    let first = roles.next()?;
    roles.all(|r| r == first).then(|| first.as_str())
}

/// The number of messages holding stable-prefix parts, and the last such part.
fn cache_point(messages: &[Message], prefix_parts: usize) -> (usize, CachePoint) {
    if prefix_parts == 0 {
        return (0, None);
    }
    let mut seen = 0;
    for (mi, m) in messages.iter().enumerate() {
        if seen + m.parts.len() >= prefix_parts {
            return (mi + 1, Some((mi, prefix_parts - seen - 1)));
        }
        seen += m.parts.len();
    }
    (messages.len(), None)
}

/// The row versions a compile read.
#[derive(Default)]
struct VersionLog {
    documents: BTreeMap<String, i32>,
    memories: BTreeMap<String, String>,
    history: Option<u32>,
}

impl VersionLog {
    fn document(&mut self, d: &super::context::Document) {
        self.documents.insert(d.id.to_string(), d.version);
    }

    fn memories(&mut self, ctx: &Context, ids: &[Uuid]) {
        for m in ctx.memories.iter().filter(|m| ids.contains(&m.id)) {
            self.memories.insert(m.id.to_string(), m.updated_at.clone());
        }
    }

    fn to_json(&self) -> Value {
        json!({ "documents": self.documents, "memories": self.memories, "history_entries": self.history })
    }
}
