//! The assembly template (docs/design.md, "Blocks"): one grammar for `validate_template`, the trigger
//! on `users.prompt_template` and the compiler. [`parse`] returns every problem with
//! its JSON-pointer path, and a typed [`Template`] only when there are none — so a
//! template that validates always compiles.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Code, Error};
use crate::json_at::{At, Checked, Items, Obj};
use crate::kinds::Role;
use crate::macros;

pub(crate) const MAX_BYTES: usize = 64 * 1024;
pub(crate) const MAX_BLOCKS: usize = 64;
pub(crate) const MAX_VARIABLES: usize = 32;
pub(crate) const MAX_HISTORY_ENTRIES: u64 = 200;

/// A slot document (`documents.name` `system_prompt`, `character` or `persona`), which a
/// turn's inline entry may replace for that turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Slot {
    /// `system_prompt`: the answering agent's `system_prompt` document.
    SystemPrompt,
    /// `character`: the conversation's workspace's `character` document.
    Character,
    /// `persona`: the `persona` document of P's controlling Human.
    Persona,
}

impl Slot {
    /// The slot a name spells (`system_prompt`, `character`, `persona`); `None` for any other.
    pub(crate) fn parse(s: &str) -> Option<Slot> {
        match s {
            "system_prompt" => Some(Slot::SystemPrompt),
            "character" => Some(Slot::Character),
            "persona" => Some(Slot::Persona),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Slot::SystemPrompt => "system_prompt",
            Slot::Character => "character",
            Slot::Persona => "persona",
        }
    }
}

/// How history is trimmed once it stops fitting (a history budget's `trim`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trim {
    /// Newest first, every turn (the default).
    Newest,
    /// Cache-stable: cut down to `low_water`, then keep the first entry while it fits.
    Stable,
}

/// The history block's knobs, and a turn's history intent (same fields).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct HistoryKnobs {
    pub(crate) max_entries: Option<u32>,
    pub(crate) share: Option<f64>,
    pub(crate) min_tokens: Option<u64>,
    pub(crate) max_tokens: Option<u64>,
    pub(crate) trim: Option<Trim>,
    pub(crate) low_water: Option<f64>,
}

impl HistoryKnobs {
    /// `over`'s fields win where set.
    pub(crate) fn overridden_by(self, over: HistoryKnobs) -> HistoryKnobs {
        HistoryKnobs {
            max_entries: over.max_entries.or(self.max_entries),
            share: over.share.or(self.share),
            min_tokens: over.min_tokens.or(self.min_tokens),
            max_tokens: over.max_tokens.or(self.max_tokens),
            trim: over.trim.or(self.trim),
            low_water: over.low_water.or(self.low_water),
        }
    }
}

/// One block of a template's `blocks`, in the order the compile renders them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    /// A `slot` block: that slot's document.
    Slot(Slot),
    /// A `document` block: the durable document of that name (`^[A-Z][A-Z0-9_]{0,31}$`).
    Document(String),
    /// An `inline` block: the template's own text in its role.
    Inline {
        /// The item's role (`system`, `developer`, `user`, `assistant`).
        role: Role,
        /// The text as written; its `{{name}}`s are macros or declared variables.
        text: String,
    },
    /// The `memory` block: the memory entries of the turn's bindings.
    Memory,
    /// The `skills` block: the skills catalog.
    Skills,
    /// The `runtime` block: one system item with the origin channel, the workspace's paths
    /// and timezone, and the names of the tools the request loads.
    Runtime,
    /// The `lead` block: the turn's slot-less inline entries at position `lead`.
    Lead,
    /// The `tail` block: the turn's slot-less inline entries at position `tail`.
    Tail,
    /// The `history` block, with its knobs (`max_entries`, `budget`).
    History(HistoryKnobs),
    /// The `input` block, always last: the turn's opening words (`turns.prompt`).
    Input,
}

impl Block {
    /// The block's name in the estimate.
    pub(crate) fn name(&self) -> String {
        match self {
            Block::Slot(s) => s.as_str().to_string(),
            Block::Document(n) => format!("document:{n}"),
            Block::Inline { .. } => "inline".into(),
            Block::Memory => "memory".into(),
            Block::Skills => "skills".into(),
            Block::Runtime => "runtime".into(),
            Block::Lead => "lead".into(),
            Block::Tail => "tail".into(),
            Block::History(_) => "history".into(),
            Block::Input => "input".into(),
        }
    }

    /// Slots, documents and system inlines keep the leading run going.
    fn keeps_leading_run(&self) -> bool {
        matches!(
            self,
            Block::Slot(_) | Block::Document(_) | Block::Inline { role: Role::System, .. }
        )
    }
}

/// A valid assembly template (`users.prompt_template`): its blocks and its variables' defaults.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template {
    pub(crate) blocks: Vec<Block>,
    pub(crate) variables: BTreeMap<String, String>,
}

impl Template {
    /// The fixed order of the `default` mechanism.
    pub(crate) fn default_order() -> Template {
        Template {
            blocks: vec![
                Block::Slot(Slot::SystemPrompt),
                Block::Slot(Slot::Character),
                Block::Slot(Slot::Persona),
                Block::Memory,
                Block::Skills,
                Block::History(HistoryKnobs::default()),
                Block::Lead,
                Block::Tail,
                Block::Input,
            ],
            variables: BTreeMap::new(),
        }
    }

    pub(crate) fn history_index(&self) -> usize {
        self.blocks
            .iter()
            .position(|b| matches!(b, Block::History(_)))
            .expect("a valid template has history")
    }

    /// The number of leading blocks that form the leading run.
    pub(crate) fn leading_run_len(&self) -> usize {
        self.blocks.iter().take_while(|b| b.keeps_leading_run()).count()
    }

    pub(crate) fn position_of(&self, want: &Block) -> Option<usize> {
        self.blocks.iter().position(|b| b == want)
    }
}

/// One problem: where, which rule, what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The JSON-pointer path of the offending value (`/blocks/2/role`); empty for the whole.
    pub path: String,
    /// The rule it breaks (`unknown_key`, `slot_invalid`, ...).
    pub code: &'static str,
    /// What is wrong, in words.
    pub message: String,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn is_variable_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z')) && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
}

pub(crate) fn is_document_name(s: &str) -> bool {
    let b = s.as_bytes();
    (1..=32).contains(&b.len())
        && b[0].is_ascii_uppercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
}

struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    fn add(&mut self, path: impl Into<String>, code: &'static str, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.into(),
            code,
            message: message.into(),
        });
    }

    /// What a reader took, or `None` with its refusal kept as a problem of `code`.
    fn keep<T>(&mut self, code: &'static str, checked: Checked<T>) -> Option<T> {
        match checked {
            Ok(v) => Some(v),
            Err(r) => {
                self.add(r.path, code, r.message);
                None
            }
        }
    }

    fn unknown_keys(&mut self, obj: &Obj<'_>, allowed: &[&str], what: &str) {
        for (key, at) in obj.unknown(allowed) {
            self.add(
                at.path(),
                "unknown_key",
                format!("unknown key \"{key}\" in {what}; allowed: {}", allowed.join(", ")),
            );
        }
    }

    /// A budget's `trim` (newest, stable) and `low_water` (a share in (0, 1)).
    fn trim(&mut self, b: &Obj<'_>, k: &mut HistoryKnobs) {
        if let Some(t) = b.get("trim") {
            let trim = t.read(
                |v| match v.as_str() {
                    Some("newest") => Some(Trim::Newest),
                    Some("stable") => Some(Trim::Stable),
                    _ => None,
                },
                format_args!("trim must be \"newest\" or \"stable\", not {}", t.value),
            );
            k.trim = self.keep("trim_invalid", trim);
        }
        if let Some(v) = b.get("low_water") {
            let low = v.read(
                |x| x.as_f64().filter(|x| *x > 0.0 && *x < 1.0),
                format_args!("low_water must be a number in (0, 1), not {}", v.value),
            );
            k.low_water = self.keep("low_water_invalid", low);
        }
    }

    fn knobs(&mut self, obj: &Obj<'_>) -> HistoryKnobs {
        let mut k = HistoryKnobs::default();
        if let Some(v) = obj.get("max_entries") {
            let n = v.read(
                |x| x.as_u64().filter(|n| (1..=MAX_HISTORY_ENTRIES).contains(n)),
                format_args!(
                    "max_entries must be an integer from 1 to {MAX_HISTORY_ENTRIES}, not {}",
                    v.value
                ),
            );
            k.max_entries = self.keep("max_entries_invalid", n).map(|n| n as u32);
        }
        let Some(b) = obj.get("budget") else {
            return k;
        };
        let b = b.object(format_args!("budget must be an object, not {}", type_name(b.value)));
        let Some(b) = self.keep("budget_invalid", b) else {
            return k;
        };
        self.unknown_keys(
            &b,
            &["share", "min_tokens", "max_tokens", "trim", "low_water"],
            "budget",
        );
        self.trim(&b, &mut k);
        if let Some(v) = b.get("share") {
            let share = v.read(
                |x| x.as_f64().filter(|x| *x > 0.0 && *x <= 1.0),
                format_args!("share must be a number in (0, 1], not {}", v.value),
            );
            k.share = self.keep("share_invalid", share);
        }
        for (key, code) in [
            ("min_tokens", "min_tokens_invalid"),
            ("max_tokens", "max_tokens_invalid"),
        ] {
            if let Some(v) = b.get(key) {
                let n = v.read(
                    |x| x.as_u64().filter(|n| *n <= i32::MAX as u64),
                    format_args!("{key} must be an integer ≥ 0, not {}", v.value),
                );
                let n = self.keep(code, n);
                if key == "min_tokens" {
                    k.min_tokens = n;
                } else {
                    k.max_tokens = n;
                }
            }
        }
        k
    }
}

/// Every problem of `value` as a template, and the template when there is none.
pub(crate) fn parse(value: &Value) -> (Option<Template>, Vec<Problem>) {
    let mut c = Checker { problems: Vec::new() };
    let root = At::root(value, "");
    let root = root.object(format_args!(
        "a template is an object {{\"blocks\": [...], \"variables\": {{...}}}}, not {}",
        type_name(value)
    ));
    let Some(root) = c.keep("template_not_object", root) else {
        return (None, c.problems);
    };
    let size = value.to_string().len();
    if size > MAX_BYTES {
        c.add(
            "",
            "template_too_large",
            format!("the template is {size} bytes; the limit is {MAX_BYTES}"),
        );
    }
    c.unknown_keys(&root, &["blocks", "variables"], "the template");

    // Variables first: inline texts are checked against them.
    let variables = template_variables(&mut c, &root);

    let mut blocks = Vec::new();
    let list = root.at("blocks");
    if list.is_absent() {
        c.add(list.path(), "blocks_missing", "a template needs \"blocks\"");
    } else {
        let items = list.list(format_args!("blocks must be an array, not {}", type_name(list.value)));
        if let Some(items) = c.keep("blocks_not_array", items) {
            if items.len() == 0 || items.len() > MAX_BLOCKS {
                c.add(
                    list.path(),
                    "blocks_count",
                    format!("{} blocks; a template holds 1 to {MAX_BLOCKS}", items.len()),
                );
            }
            check_blocks(&mut c, items, &variables, &mut blocks);
        }
    }

    if c.problems.is_empty() {
        (Some(Template { blocks, variables }), c.problems)
    } else {
        (None, c.problems)
    }
}

/// The template's `variables`, each checked (name, no macro shadowed, a string whose
/// `{{words}}` are macros).
fn template_variables(c: &mut Checker, root: &Obj<'_>) -> BTreeMap<String, String> {
    let mut variables = BTreeMap::new();
    let Some(vars) = root.get("variables") else {
        return variables;
    };
    let at = vars.path().to_string();
    let vars = vars.object(format_args!(
        "variables must be an object, not {}",
        type_name(vars.value)
    ));
    let Some(vars) = c.keep("variables_not_object", vars) else {
        return variables;
    };
    if vars.map.len() > MAX_VARIABLES {
        c.add(
            at,
            "variables_count",
            format!("{} variables; at most {MAX_VARIABLES}", vars.map.len()),
        );
    }
    for (name, v) in vars.entries() {
        let path = v.path();
        if !is_variable_name(name) {
            c.add(
                path,
                "variable_name_invalid",
                format!("variable name \"{name}\" must match [a-z][a-z0-9_]*"),
            );
        } else if macros::is_macro(name) || name == macros::HISTORY_WORD {
            c.add(
                path,
                "variable_shadows_macro",
                format!("variable \"{name}\" has the name of a built-in macro"),
            );
        } else if let Value::String(s) = v.value {
            // A value is checked like a document: macros render in it, and
            // nothing else may stand in braces.
            if let Some(word) = macros::first_unknown(s, &|_| false) {
                c.add(
                    path,
                    "macro_unknown",
                    format!("{{{{{word}}}}} in variable \"{name}\" is not a macro"),
                );
            }
            variables.insert(name.to_string(), s.clone());
        } else {
            c.add(
                path,
                "variable_not_string",
                format!("variable \"{name}\" must be a string, not {}", type_name(v.value)),
            );
        }
    }
    variables
}

/// The ordering rules of a block list, as the blocks go by: nothing after input, the
/// blocks that must come ahead of history, one history and one input, each once-only
/// block once, system inline blocks only in the leading run.
struct Order {
    seen_history: bool,
    seen_input: bool,
    leading: bool,
    seen: Vec<Block>,
}

impl Order {
    fn new() -> Self {
        Order {
            seen_history: false,
            seen_input: false,
            leading: true,
            seen: Vec::new(),
        }
    }

    fn after_input(&self, c: &mut Checker, base: &str) {
        if self.seen_input {
            c.add(base, "block_after_input", "no block may follow input: input is last");
        }
    }

    /// The rules a block's type decides, checked before its fields.
    fn before(&mut self, c: &mut Checker, ty: &str, base: &str) {
        match ty {
            "slot" | "document" | "memory" | "skills" | "runtime" if self.seen_history => c.add(
                base,
                "block_after_history",
                format!("{} must come ahead of history", describe(ty)),
            ),
            "history" => {
                if self.seen_history {
                    c.add(base, "block_repeated", "history must appear exactly once");
                }
                self.seen_history = true;
            }
            "input" => {
                if self.seen_input {
                    c.add(base, "block_repeated", "input must appear exactly once");
                }
                self.seen_input = true;
            }
            _ => {}
        }
    }

    /// A system inline block outside the leading run (whether or not its text is valid).
    fn system_inline(&self, c: &mut Checker, obj: &Obj<'_>) {
        let role = obj.at("role");
        if !self.leading && role.value.as_str() == Some("system") {
            c.add(
                role.path(),
                "inline_system_outside_leading_run",
                "a system inline block must be in the leading run (before the first block that is neither a slot, a document nor a system inline)",
            );
        }
    }

    /// Takes a block (None: it had problems) into the list.
    fn place(&mut self, c: &mut Checker, block: Option<Block>, base: &str, out: &mut Vec<Block>) {
        let Some(block) = block else {
            self.leading = false;
            return;
        };
        if self.leading && !block.keeps_leading_run() {
            self.leading = false;
        }
        let once = matches!(
            &block,
            Block::Slot(_)
                | Block::Document(_)
                | Block::Memory
                | Block::Skills
                | Block::Runtime
                | Block::Lead
                | Block::Tail
        );
        if once && self.seen.contains(&block) {
            c.add(
                base,
                "block_repeated",
                format!("{} may appear at most once", block.name()),
            );
        }
        self.seen.push(block.clone());
        out.push(block);
    }

    fn finish(&self, c: &mut Checker) {
        if !self.seen_history {
            c.add(
                "/blocks",
                "history_missing",
                "a template needs exactly one history block",
            );
        }
        if !self.seen_input {
            c.add("/blocks", "input_missing", "a template needs an input block, last");
        }
    }
}

const BLOCK_TYPES: &str = "slot, document, inline, memory, skills, runtime, lead, tail, history, input";

/// The keys a block of type `ty` may have; None for an unknown type.
fn block_keys(ty: &str) -> Option<&'static [&'static str]> {
    Some(match ty {
        "slot" => &["type", "slot"],
        "document" => &["type", "name"],
        "inline" => &["type", "role", "text"],
        "memory" | "skills" | "runtime" | "lead" | "tail" | "input" => &["type"],
        "history" => &["type", "max_entries", "budget"],
        _ => return None,
    })
}

/// How problems name a block of type `ty`.
fn describe(ty: &str) -> String {
    match ty {
        "inline" => "an inline block".into(),
        "history" | "input" => format!("the {ty} block"),
        _ => format!("a {ty} block"),
    }
}

fn check_blocks(c: &mut Checker, items: Items<'_>, variables: &BTreeMap<String, String>, out: &mut Vec<Block>) {
    let mut order = Order::new();
    for v in items {
        let block = parse_block(c, &mut order, &v, variables);
        order.place(c, block, v.path(), out);
    }
    order.finish(c);
}

/// One block: its shape, with the ordering rules checked where they always were.
fn parse_block(c: &mut Checker, order: &mut Order, v: &At<'_>, variables: &BTreeMap<String, String>) -> Option<Block> {
    let obj = v.object(format_args!(
        "a block is an object with a \"type\", not {}",
        type_name(v.value)
    ));
    let obj = c.keep("block_not_object", obj)?;
    let base = v.path();
    order.after_input(c, base);
    let t = obj.at("type");
    let ty = match t.value {
        Value::String(s) => s.as_str(),
        _ if t.is_absent() => {
            c.add(t.path(), "block_type_missing", "a block needs a \"type\"");
            return None;
        }
        other => {
            let msg = format!("type must be a string, not {}", type_name(other));
            c.add(t.path(), "block_type_unknown", msg);
            return None;
        }
    };
    let Some(keys) = block_keys(ty) else {
        let msg = format!("unknown block type \"{ty}\"; known: {BLOCK_TYPES}");
        c.add(t.path(), "block_type_unknown", msg);
        return None;
    };
    c.unknown_keys(&obj, keys, &describe(ty));
    order.before(c, ty, base);
    let block = block_fields(c, ty, &obj, variables);
    if ty == "inline" {
        order.system_inline(c, &obj);
    }
    block
}

/// A block's own fields, by type (`ty` is a known type).
fn block_fields(c: &mut Checker, ty: &str, obj: &Obj<'_>, variables: &BTreeMap<String, String>) -> Option<Block> {
    match ty {
        "slot" => {
            let slot = obj.at("slot").read(
                |v| v.as_str().and_then(Slot::parse),
                "slot must be one of system_prompt, character, persona",
            );
            c.keep("slot_invalid", slot).map(Block::Slot)
        }
        "document" => {
            let name = obj.at("name").read(
                |v| v.as_str().filter(|n| is_document_name(n)),
                "name must be a durable document name matching ^[A-Z][A-Z0-9_]{0,31}$",
            );
            c.keep("document_name_invalid", name)
                .map(|n| Block::Document(n.to_string()))
        }
        "inline" => {
            let role = obj.at("role").read(
                |v| v.as_str().and_then(Role::parse),
                "role must be one of system, developer, user, assistant",
            );
            let role = c.keep("role_invalid", role);
            let text = inline_text(c, obj, variables);
            Some(Block::Inline {
                role: role?,
                text: text?,
            })
        }
        "memory" => Some(Block::Memory),
        "skills" => Some(Block::Skills),
        "runtime" => Some(Block::Runtime),
        "lead" => Some(Block::Lead),
        "tail" => Some(Block::Tail),
        "history" => Some(Block::History(c.knobs(obj))),
        _ => Some(Block::Input),
    }
}

/// An inline block's text; every `{{word}}` in it must be a macro or a declared variable.
fn inline_text(c: &mut Checker, obj: &Obj<'_>, variables: &BTreeMap<String, String>) -> Option<String> {
    let at = obj.at("text");
    let t = c.keep("text_invalid", at.str("text must be a string"))?;
    let mut reported: Vec<&str> = Vec::new();
    for tok in macros::tokens(t) {
        let word = tok.name;
        let known = word != macros::HISTORY_WORD && (macros::is_macro(word) || variables.contains_key(word));
        if known || reported.contains(&word) {
            continue;
        }
        reported.push(word);
        let msg = if word == macros::HISTORY_WORD {
            format!("{{{{{word}}}}} is not a macro: history is a block")
        } else {
            format!("{{{{{word}}}}} is neither a macro nor a declared variable")
        };
        c.add(at.path(), "macro_unknown", msg);
    }
    Some(t.to_string())
}

/// Every problem of a template given as JSON text (what the SQL layer receives).
pub(crate) fn parse_text(text: &str) -> (Option<Template>, Vec<Problem>) {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => parse(&v),
        Err(e) => (
            None,
            vec![Problem {
                path: String::new(),
                code: "template_not_json",
                message: format!("the template cannot be read: {e}"),
            }],
        ),
    }
}

/// Checks a turn's history intent (`turns.history`): the history block's knobs.
pub(crate) fn parse_history_intent(value: &Value) -> (Option<HistoryKnobs>, Vec<Problem>) {
    let mut c = Checker { problems: Vec::new() };
    let root = At::root(value, "");
    let obj = root.object(format_args!("a history intent is an object, not {}", type_name(value)));
    let Some(obj) = c.keep("history_intent_not_object", obj) else {
        return (None, c.problems);
    };
    c.unknown_keys(&obj, &["max_entries", "budget"], "a history intent");
    let k = c.knobs(&obj);
    if c.problems.is_empty() {
        (Some(k), c.problems)
    } else {
        (None, c.problems)
    }
}

/// The first problem of a template as a `template_invalid` error.
pub(crate) fn error(problems: &[Problem], what: &str) -> Error {
    let Some(p) = problems.first() else {
        return Error::new(Code::TemplateInvalid, format!("{what} is not a valid template"));
    };
    if p.code == "template_too_large" {
        // A template is bounded like a document.
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(v: Value) -> Vec<(String, &'static str)> {
        parse(&v).1.into_iter().map(|p| (p.path, p.code)).collect()
    }

    fn one(v: Value) -> (String, &'static str) {
        let p = problems(v);
        assert_eq!(p.len(), 1, "{p:?}");
        p.into_iter().next().unwrap()
    }

    fn tpl(blocks: Value) -> Value {
        json!({ "blocks": blocks })
    }

    fn minimal() -> Value {
        json!([{"type": "history"}, {"type": "input"}])
    }

    #[test]
    fn the_seed_example_is_valid() {
        let v = json!({
            "blocks": [
                { "type": "slot", "slot": "system_prompt" },
                { "type": "inline", "role": "system", "text": "Today's scene is {{scene}}." },
                { "type": "slot", "slot": "persona" },
                { "type": "memory" },
                { "type": "skills" },
                { "type": "lead" },
                { "type": "history", "max_entries": 40, "budget": { "share": 0.6, "min_tokens": 512 } },
                { "type": "tail" },
                { "type": "input" }
            ],
            "variables": { "scene": "an ordinary day" }
        });
        let (t, p) = parse(&v);
        assert!(p.is_empty(), "{p:?}");
        let t = t.unwrap();
        assert_eq!(t.blocks.len(), 9);
        assert_eq!(t.history_index(), 6);
        assert_eq!(
            t.blocks[6],
            Block::History(HistoryKnobs {
                max_entries: Some(40),
                share: Some(0.6),
                min_tokens: Some(512),
                max_tokens: None,
                trim: None,
                low_water: None,
            })
        );
        assert_eq!(t.leading_run_len(), 3);
    }

    #[test]
    fn junk_of_any_json_type_is_a_problem_not_a_panic() {
        for v in [json!(null), json!(1), json!("x"), json!(true), json!([1, 2])] {
            assert_eq!(one(v), ("".into(), "template_not_object"));
        }
        assert_eq!(one(json!({})).1, "blocks_missing");
        assert_eq!(one(json!({"blocks": "x"})), ("/blocks".into(), "blocks_not_array"));
        assert_eq!(
            problems(json!({"blocks": []})),
            vec![
                ("/blocks".into(), "blocks_count"),
                ("/blocks".into(), "history_missing"),
                ("/blocks".into(), "input_missing")
            ]
        );
    }

    #[test]
    fn rule_unknown_keys_and_types() {
        assert_eq!(
            one(json!({"blocks": minimal(), "extra": 1})),
            ("/extra".into(), "unknown_key")
        );
        assert_eq!(
            one(tpl(json!([{"type": "history", "color": 1}, {"type": "input"}]))),
            ("/blocks/0/color".into(), "unknown_key")
        );
        assert_eq!(
            one(tpl(json!([{"type": "poem"}, {"type": "history"}, {"type": "input"}]))),
            ("/blocks/0/type".into(), "block_type_unknown")
        );
        assert_eq!(
            one(tpl(json!([{"kind": "x"}, {"type": "history"}, {"type": "input"}]))).1,
            "block_type_missing"
        );
        assert_eq!(
            one(tpl(json!([7, {"type": "history"}, {"type": "input"}]))),
            ("/blocks/0".into(), "block_not_object")
        );
        assert_eq!(
            one(json!({"blocks": minimal(), "a/b": 1})),
            ("/a~1b".into(), "unknown_key")
        );
    }

    #[test]
    fn rule_blocks_count() {
        let mut many = vec![json!({"type": "inline", "role": "user", "text": "x"}); 63];
        many.push(json!({"type": "history"}));
        many.push(json!({"type": "input"}));
        assert_eq!(one(tpl(Value::Array(many))), ("/blocks".into(), "blocks_count"));
    }

    #[test]
    fn rule_slot() {
        assert_eq!(
            one(tpl(
                json!([{"type": "slot", "slot": "soul"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/0/slot".into(), "slot_invalid")
        );
        assert_eq!(
            one(tpl(
                json!([{"type": "slot", "slot": "persona"}, {"type": "slot", "slot": "persona"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/1".into(), "block_repeated")
        );
        assert_eq!(
            one(tpl(
                json!([{"type": "history"}, {"type": "slot", "slot": "persona"}, {"type": "input"}])
            )),
            ("/blocks/1".into(), "block_after_history")
        );
    }

    #[test]
    fn rule_document() {
        assert_eq!(
            one(tpl(
                json!([{"type": "document", "name": "soul"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/0/name".into(), "document_name_invalid")
        );
        assert_eq!(
            one(tpl(
                json!([{"type": "document", "name": "SOUL"}, {"type": "document", "name": "SOUL"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/1".into(), "block_repeated")
        );
        assert_eq!(
            one(tpl(
                json!([{"type": "history"}, {"type": "document", "name": "SOUL"}, {"type": "input"}])
            )),
            ("/blocks/1".into(), "block_after_history")
        );
        assert!(is_document_name("A"));
        assert!(is_document_name(&format!("A{}", "B".repeat(31))));
        assert!(!is_document_name(&format!("A{}", "B".repeat(32))));
    }

    #[test]
    fn rule_inline() {
        assert_eq!(
            one(tpl(
                json!([{"type": "inline", "role": "tool", "text": "x"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/0/role".into(), "role_invalid")
        );
        assert_eq!(
            one(tpl(
                json!([{"type": "inline", "role": "user"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/0/text".into(), "text_invalid")
        );
        assert_eq!(
            one(tpl(
                json!([{"type": "inline", "role": "user", "text": "{{scene}}"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/0/text".into(), "macro_unknown")
        );
        assert_eq!(
            one(tpl(
                json!([{"type": "inline", "role": "user", "text": "{{history}}"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/0/text".into(), "macro_unknown")
        );
        // Inline blocks may repeat and may follow history.
        assert!(problems(tpl(json!([{"type": "history"}, {"type": "inline", "role": "user", "text": "a"}, {"type": "inline", "role": "user", "text": "a"}, {"type": "input"}]))).is_empty());
    }

    #[test]
    fn rule_system_inline_only_in_the_leading_run() {
        let ok = tpl(json!([
            {"type": "slot", "slot": "system_prompt"}, {"type": "document", "name": "SOUL"},
            {"type": "inline", "role": "system", "text": "x"}, {"type": "memory"},
            {"type": "history"}, {"type": "input"}]));
        assert!(problems(ok).is_empty());
        assert_eq!(
            one(tpl(
                json!([{"type": "memory"}, {"type": "inline", "role": "system", "text": "x"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/1/role".into(), "inline_system_outside_leading_run")
        );
        assert_eq!(
            one(tpl(
                json!([{"type": "inline", "role": "user", "text": "x"}, {"type": "inline", "role": "system", "text": "x"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/1/role".into(), "inline_system_outside_leading_run")
        );
    }

    #[test]
    fn rule_memory_skills_runtime_once_ahead_of_history() {
        for ty in ["memory", "skills", "runtime"] {
            assert_eq!(
                one(tpl(
                    json!([{"type": ty}, {"type": ty}, {"type": "history"}, {"type": "input"}])
                )),
                ("/blocks/1".into(), "block_repeated")
            );
            assert_eq!(
                one(tpl(json!([{"type": "history"}, {"type": ty}, {"type": "input"}]))),
                ("/blocks/1".into(), "block_after_history")
            );
        }
    }

    #[test]
    fn rule_lead_tail_once() {
        for ty in ["lead", "tail"] {
            assert_eq!(
                one(tpl(
                    json!([{"type": ty}, {"type": "history"}, {"type": ty}, {"type": "input"}])
                )),
                ("/blocks/2".into(), "block_repeated")
            );
        }
    }

    #[test]
    fn rule_history_exactly_once_with_knobs() {
        assert_eq!(
            one(tpl(json!([{"type": "input"}]))),
            ("/blocks".into(), "history_missing")
        );
        assert_eq!(
            one(tpl(
                json!([{"type": "history"}, {"type": "history"}, {"type": "input"}])
            )),
            ("/blocks/1".into(), "block_repeated")
        );
        for (knob, path, code) in [
            (
                json!({"max_entries": 0}),
                "/blocks/0/max_entries",
                "max_entries_invalid",
            ),
            (
                json!({"max_entries": 201}),
                "/blocks/0/max_entries",
                "max_entries_invalid",
            ),
            (
                json!({"max_entries": 1.5}),
                "/blocks/0/max_entries",
                "max_entries_invalid",
            ),
            (json!({"budget": 3}), "/blocks/0/budget", "budget_invalid"),
            (
                json!({"budget": {"share": 0}}),
                "/blocks/0/budget/share",
                "share_invalid",
            ),
            (
                json!({"budget": {"share": 1.01}}),
                "/blocks/0/budget/share",
                "share_invalid",
            ),
            (
                json!({"budget": {"min_tokens": -1}}),
                "/blocks/0/budget/min_tokens",
                "min_tokens_invalid",
            ),
            (
                json!({"budget": {"max_tokens": "9"}}),
                "/blocks/0/budget/max_tokens",
                "max_tokens_invalid",
            ),
            (json!({"budget": {"ratio": 1}}), "/blocks/0/budget/ratio", "unknown_key"),
        ] {
            let mut h = knob.as_object().unwrap().clone();
            h.insert("type".into(), json!("history"));
            assert_eq!(
                one(tpl(json!([h, {"type": "input"}]))),
                (path.to_string(), code),
                "{knob}"
            );
        }
        assert!(problems(tpl(json!([{"type": "history", "max_entries": 200, "budget": {"share": 1, "min_tokens": 0, "max_tokens": 0}}, {"type": "input"}]))).is_empty());
    }

    #[test]
    fn rule_input_exactly_once_last() {
        assert_eq!(
            one(tpl(json!([{"type": "history"}]))),
            ("/blocks".into(), "input_missing")
        );
        assert_eq!(
            one(tpl(json!([{"type": "input"}, {"type": "history"}]))),
            ("/blocks/1".into(), "block_after_input")
        );
        assert_eq!(
            problems(tpl(json!([{"type": "history"}, {"type": "input"}, {"type": "input"}]))),
            vec![
                ("/blocks/2".into(), "block_after_input"),
                ("/blocks/2".into(), "block_repeated")
            ]
        );
    }

    #[test]
    fn rule_variables() {
        assert_eq!(
            one(json!({"blocks": minimal(), "variables": []})),
            ("/variables".into(), "variables_not_object")
        );
        assert_eq!(
            one(json!({"blocks": minimal(), "variables": {"Scene": "x"}})),
            ("/variables/Scene".into(), "variable_name_invalid")
        );
        assert_eq!(
            one(json!({"blocks": minimal(), "variables": {"date": "x"}})),
            ("/variables/date".into(), "variable_shadows_macro")
        );
        assert_eq!(
            one(json!({"blocks": minimal(), "variables": {"n": 1}})),
            ("/variables/n".into(), "variable_not_string")
        );
        // A value is checked like a document (seed: a typo never reaches the model).
        assert_eq!(
            one(json!({"blocks": minimal(), "variables": {"scene": "{{agnet}} day"}})),
            ("/variables/scene".into(), "macro_unknown")
        );
        assert!(problems(json!({"blocks": minimal(), "variables": {"scene": "{{agent}}'s day"}})).is_empty());
        let many: serde_json::Map<String, Value> = (0..33).map(|i| (format!("v{i}"), json!("x"))).collect();
        assert_eq!(
            one(json!({"blocks": minimal(), "variables": many})),
            ("/variables".into(), "variables_count")
        );
    }

    #[test]
    fn rule_size() {
        let big = "x".repeat(MAX_BYTES);
        let v = tpl(json!([{"type": "inline", "role": "user", "text": big}, {"type": "history"}, {"type": "input"}]));
        assert_eq!(one(v), ("".into(), "template_too_large"));
    }

    #[test]
    fn text_that_serde_cannot_rebuild_is_a_problem() {
        let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
        let (t, p) = parse_text(&deep);
        assert!(t.is_none());
        assert_eq!(p[0].code, "template_not_json");
        assert!(parse_text(r#"{"blocks":[{"type":"history"},{"type":"input"}]}"#)
            .0
            .is_some());
    }

    #[test]
    fn history_intent_uses_the_same_knobs() {
        let (k, p) = parse_history_intent(&json!({"max_entries": 5, "budget": {"max_tokens": 100}}));
        assert!(p.is_empty());
        assert_eq!(
            k.unwrap(),
            HistoryKnobs {
                max_entries: Some(5),
                max_tokens: Some(100),
                ..Default::default()
            }
        );
        let (_, p) = parse_history_intent(&json!({"budget": {"share": 2}}));
        assert_eq!(p[0].path, "/budget/share");
        assert_eq!(parse_history_intent(&json!(3)).1[0].code, "history_intent_not_object");
    }
}
