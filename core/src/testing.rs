//! Test support (compiled into the crate's own test build only): a small
//! builder of rows, the way a client writes them, golden files of whole results, and a
//! deterministic generator for property tests.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::{json, Value};
use uuid::Uuid;

use crate::compile::{compile, Output, Purpose};
use crate::context::{Context, HistoryTurn};
use crate::error::Result;
use crate::fields::{self, Callable, InlineEntry, Tool};
use crate::history::{EntryAt, VecHistory};
use crate::rounds::{self, Round, RoundRow};
use crate::rows::*;
use crate::seal::Sealed;
use crate::template::HistoryKnobs;
use crate::tokens::Memo;

/// The scenario's uuid numbered `n` (`ADA`, `LARK`, `WS`, ...).
pub(crate) fn id(n: u128) -> Uuid {
    Uuid::from_u128(n)
}

/// Ada's number for [`id`].
pub(crate) const ADA: u128 = 0x1; // the creator, a human
/// Lark's number for [`id`].
pub(crate) const LARK: u128 = 0x2; // the answering agent
/// Omar's number for [`id`].
pub(crate) const OMAR: u128 = 0x3; // Lark's steward
/// Grace's number for [`id`].
pub(crate) const GRACE: u128 = 0x4; // a guest human, Wren's steward
/// Wren's number for [`id`].
pub(crate) const WREN: u128 = 0x5; // a second agent
/// The workspace's (Acme's) number for [`id`].
pub(crate) const WS: u128 = 0xa1;
/// The conversation's number for [`id`].
pub(crate) const CONV: u128 = 0xc1;
/// The current turn's number for [`id`].
pub(crate) const TURN: u128 = 0xd0;

/// A user numbered `n` with its `handle`, `display_name` and `kind`, the rest defaults.
pub(crate) fn user(n: u128, handle: &str, name: &str, kind: UserKind) -> User {
    let mut u = User::new(id(n), handle, kind);
    u.display_name = Some(name.into());
    u
}

/// A model on `wire` with `advisory_window` `advisory` and `max_output_tokens` 1024, the
/// rest defaults.
pub(crate) fn model(name: &str, wire: &str, advisory: Option<i32>) -> Model {
    let mut m = Model::new(name, Wire::parse(wire).expect("a wire"));
    m.advisory_window = advisory;
    m.max_output_tokens = 1024;
    m
}

/// The model of [`Scenario::new`] on `wire`: a suite "on every wire" iterates
/// `Wire::ALL` and compiles for this model.
pub(crate) fn model_on(wire: crate::kinds::Wire) -> &'static str {
    use crate::kinds::Wire;
    match wire {
        Wire::Anthropic => "claude",
        Wire::Chat => "gpt",
        Wire::Responses => "resp",
        Wire::Gemini => "gem",
        Wire::Converse => "bedrock",
    }
}

/// A turn's JSON columns, parsed as the loader parses them (the test's own JSON).
pub(crate) fn inline(json: &str) -> Vec<InlineEntry> {
    fields::parse_inline(json).expect("inline entries")
}
/// A `users.prompt_template`, as the loader reads it (the test's own JSON).
pub(crate) fn template(json: &str) -> serde_json::Value {
    serde_json::from_str(json).expect("a template is JSON")
}
/// `turns.variables`, parsed.
pub(crate) fn variables(json: &str) -> std::collections::BTreeMap<String, String> {
    fields::parse_variables(json).expect("variables")
}
/// `turns.tools`, parsed.
pub(crate) fn tools(json: &str) -> Vec<Tool> {
    fields::parse_tools(json).expect("tools")
}
/// Request options, parsed (and checked) as the loader parses them.
pub(crate) fn request_options(json: &str) -> crate::options::RequestOptions {
    crate::wire::options::parse_request_options(json).expect("valid request options")
}

/// `turns.callables`, parsed as the loader parses them.
pub(crate) fn callables(json: &str) -> Vec<Callable> {
    fields::parse_callables(json).expect("callables")
}
/// `turns.history`, the turn's history intent, parsed.
pub(crate) fn history_intent(json: &str) -> HistoryKnobs {
    fields::parse_history(json).expect("a history intent")
}
/// `turns.input`, the raw mechanism's entries, parsed.
pub(crate) fn raw_input(json: &str) -> Vec<fields::RawEntry> {
    fields::parse_raw_input(json).expect("raw entries")
}

/// The rows of one compile, built up by its methods: the context and the turns of history.
pub(crate) struct Scenario {
    /// What the compile reads besides history (the conversation, the current turn, ...).
    pub(crate) ctx: Context,
    /// The turns of history, oldest first.
    pub(crate) history: Vec<HistoryTurn>,
}

impl Scenario {
    /// Ada's conversation with Lark (stewarded by Omar; Wren by Grace) in Acme, on `claude` (window
    /// 100000); the current turn is a reply Ada opened with `prompt`.
    pub(crate) fn new(prompt: &str) -> Scenario {
        let mut lark = user(LARK, "lark", "Lark", UserKind::Agent);
        lark.steward_id = Some(id(OMAR));
        lark.model = Some("claude".into());
        let mut wren = user(WREN, "wren", "Wren", UserKind::Agent);
        // A steward of its own, so a turn Wren answers reads Grace, not Omar, bare.
        wren.steward_id = Some(id(GRACE));
        wren.model = Some("claude".into());
        let users = [
            user(ADA, "ada", "Ada", UserKind::Human),
            lark,
            user(OMAR, "omar", "Omar", UserKind::Human),
            user(GRACE, "grace", "Grace", UserKind::Human),
            wren,
        ];
        let mut turn = Turn::new(id(TURN), 100, TurnKind::Reply);
        turn.poster_id = Some(id(ADA));
        turn.prompt = Some(prompt.into());
        turn.date = "2026-11-30".into();
        let models = [
            model("claude", "anthropic", Some(100_000)),
            model("gpt", "chat", Some(100_000)),
            model("resp", "responses", Some(100_000)),
            model("gem", "gemini", Some(100_000)),
            model("bedrock", "converse", Some(100_000)),
        ];
        Scenario {
            ctx: Context {
                conversation: Conversation {
                    id: id(CONV),
                    workspace_id: id(WS),
                    kind: "conversation".into(),
                    answerer_id: Some(id(LARK)),
                    creator_id: Some(id(ADA)),
                    origin_channel: Some("email".into()),
                    root_id: None,
                },
                workspace: Workspace {
                    id: id(WS),
                    name: Some("Acme".into()),
                    timezone: "Europe/Paris".into(),
                    paths: Vec::new(),
                },
                turn,
                rounds: Vec::new(),
                users: users.into_iter().map(|u| (u.id, u)).collect::<HashMap<_, _>>(),
                models: models.into_iter().map(|m| (m.name.clone(), m)).collect(),
                documents: Vec::new(),
                memories: Vec::new(),
                skills: Vec::new(),
                seal: None,
                captured: Vec::new(),
                previous: None,
                diagnostics_previous: None,
                summary_floor: None,
                conversation_rounds: true,
            },
            history: Vec::new(),
        }
    }

    /// The scenario's user numbered `n`, to change; panics when there is none.
    pub(crate) fn user_mut(&mut self, n: u128) -> &mut User {
        self.ctx.users.get_mut(&id(n)).expect("a scenario user")
    }

    /// The scenario's model named `name`, to change; panics when there is none.
    pub(crate) fn model_mut(&mut self, name: &str) -> &mut Model {
        self.ctx.models.get_mut(name).expect("a scenario model")
    }

    /// A document of a user (`owner` a user id) or, for `character`, of the workspace.
    pub(crate) fn doc(mut self, owner: u128, name: &str, body: &str) -> Self {
        let n = self.ctx.documents.len() as u128;
        let (user_id, workspace_id) = if name == "character" {
            (None, Some(id(WS)))
        } else {
            (Some(id(owner)), None)
        };
        self.ctx.documents.push(Document {
            id: id(0xd0c0 + n),
            user_id,
            workspace_id,
            name: name.into(),
            role: Role::System,
            body: body.into(),
            version: 1,
        });
        self
    }

    /// A memory entry of `scope` at `path`, owned as that scope reads it (Lark, Acme,
    /// Lark about Ada, Ada, or the conversation).
    pub(crate) fn memory(mut self, scope: &str, path: &str, body: &str) -> Self {
        let n = self.ctx.memories.len() as u128;
        let (user_id, speaker_id, workspace_id, conversation_id) = match scope {
            "agent" => (Some(id(LARK)), None, None, None),
            "workspace" => (None, None, Some(id(WS)), None),
            "speaker" => (Some(id(LARK)), Some(id(ADA)), None, None),
            "user" => (Some(id(ADA)), None, None, None),
            _ => (None, None, None, Some(id(CONV))),
        };
        self.ctx.memories.push(Memory {
            id: id(0x3e30 + n),
            scope: scope.into(),
            user_id,
            speaker_id,
            workspace_id,
            conversation_id,
            path: path.into(),
            body: body.into(),
            updated_at: "2026-11-01 00:00:00+00".into(),
        });
        self
    }

    /// A skill from `source` (owned by Lark for `agent`, by Acme for `workspace`), shaped by `f`.
    pub(crate) fn skill(mut self, source: &str, name: &str, description: &str, f: impl FnOnce(&mut Skill)) -> Self {
        let n = self.ctx.skills.len() as u128;
        let mut s = Skill::new(id(0x5c00 + n), source, name, description);
        match source {
            "agent" => s.user_id = Some(id(LARK)),
            "workspace" => s.workspace_id = Some(id(WS)),
            _ => {}
        }
        f(&mut s);
        self.ctx.skills.push(s);
        self
    }

    /// A message turn of history.
    pub(crate) fn message(mut self, role: Role, author: u128, content: &str) -> Self {
        let seq = self.history.len() as i64 + 1;
        let mut t = Turn::new(id(0xe000 + seq as u128), seq, TurnKind::Message);
        t.role = Some(role);
        t.author_id = Some(id(author));
        t.content = Some(content.into());
        t.date = "2026-11-29".into();
        self.history.push(HistoryTurn {
            turn: t,
            rounds: Vec::new(),
            host: None,
        });
        self
    }

    /// A turn of history of any kind, shaped by `f`.
    pub(crate) fn earlier(mut self, kind: TurnKind, f: impl FnOnce(&mut HistoryTurn)) -> Self {
        let seq = self.history.len() as i64 + 1;
        let mut t = Turn::new(id(0xe000 + seq as u128), seq, kind);
        t.date = "2026-11-29".into();
        let mut ht = HistoryTurn {
            turn: t,
            rounds: Vec::new(),
            host: None,
        };
        f(&mut ht);
        self.history.push(ht);
        self
    }

    /// The current turn, shaped by `f`.
    pub(crate) fn turn(mut self, f: impl FnOnce(&mut Turn)) -> Self {
        f(&mut self.ctx.turn);
        self
    }

    /// Compiles the scenario for `purpose`, with no previous cut.
    pub(crate) fn run(&self, purpose: Purpose) -> Result<Output> {
        self.run_after(purpose, None)
    }

    /// Compiles as [`Scenario::run`], where the answerer's previous sealed request's
    /// history began at `previous_cut` (what cache-stable trimming keeps).
    pub(crate) fn run_after(&self, purpose: Purpose, previous_cut: Option<EntryAt>) -> Result<Output> {
        let mut memo = Memo::default();
        let mut history = VecHistory::new(self.history.clone());
        history.previous_cut = previous_cut;
        compile(&self.ctx, &mut history, &mut memo, purpose)
    }

    /// Compiles and keeps the seal, as `compile_turn` stores it: later runs continue it.
    pub(crate) fn seal(&mut self) -> Output {
        let out = self.run(Purpose::Compile).expect("the first compile");
        let draft = out.seal.clone().expect("a fresh compile seals");
        self.ctx.seal = Some(Sealed {
            frozen: draft.frozen,
            body: out.sealed_body().map(|(body, _)| body.clone()),
        });
        out
    }
}

/// A round, written as a client writes it (JSON), parsed as the loader parses it.
pub(crate) fn round(n: i32, assistant: &str, results: &str, steers: &str, aborted: bool) -> Round {
    rounds::parse(
        &RoundRow {
            n,
            assistant: assistant.into(),
            results: results.into(),
            steers: steers.into(),
            aborted,
        },
        None,
        crate::wire::replay::part,
    )
    .expect("a valid round")
}

/// A small deterministic generator (xorshift64) for the property tests.
pub(crate) struct Rng(pub u64);

impl Rng {
    /// A number below `m`.
    pub(crate) fn below(&mut self, m: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % m.max(1)
    }

    /// One of `xs`, picked at random.
    pub(crate) fn pick<'a>(&mut self, xs: &'a [&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// Pieces of text the fuzzers join: macro braces, envelope tags and escapes, odd characters.
pub(crate) const PIECES: &[&str] = &[
    "{{",
    "}}",
    "{",
    "}",
    "agent",
    "user",
    "date",
    "history",
    "scene",
    "{{agent}}",
    "{{nope}}",
    "{{ }}",
    "<message",
    "</message>",
    "<task_result>",
    "&lt;",
    "&amp;",
    "&",
    "<",
    " ",
    "\n",
    "é",
    "🎉",
    "\\",
    "\"",
    "a",
    "0",
    "[",
    "]",
];

/// A random text of up to 23 [`PIECES`].
pub(crate) fn text(r: &mut Rng) -> String {
    (0..r.below(24)).map(|_| r.pick(PIECES)).collect()
}

/// Any JSON up to `depth` levels deep, its keys and a third of its strings drawn from
/// `hints` (the words of the thing under test), so it often gets past the first check.
pub(crate) fn random_json(r: &mut Rng, depth: u32, hints: &[&str]) -> Value {
    let choice = if depth == 0 { r.below(5) } else { r.below(9) };
    match choice {
        0 => Value::Null,
        1 => json!(r.below(2) == 0),
        2 => json!(r.below(400) as i64 - 100),
        3 => json!(r.below(1000) as f64 / 7.0),
        4 => json!(if r.below(3) == 0 {
            r.pick(hints).to_string()
        } else {
            text(r)
        }),
        5 | 6 => Value::Array((0..r.below(5)).map(|_| random_json(r, depth - 1, hints)).collect()),
        _ => {
            let mut m = serde_json::Map::new();
            for _ in 0..r.below(5) {
                let k = r.pick(hints).to_string();
                m.insert(k, random_json(r, depth - 1, hints));
            }
            Value::Object(m)
        }
    }
}

/// The body without its tail: what a later request of the turn must start with.
pub(crate) fn without_tail(out: &Output) -> String {
    let text = out.body.text();
    text[..text.len() - out.body.tail.len()].to_string()
}

/// The body of a result, parsed.
pub(crate) fn body(out: &Output) -> Value {
    serde_json::from_str(&out.body.text()).expect("the body is JSON")
}

/// What `explain_turn` would show for a result, as JSON.
pub(crate) fn explain(out: &Output) -> Value {
    serde_json::to_value(&out.explain).expect("an explanation serializes")
}

/// Compares a whole result — the body exactly as sent, and the explanation — with
/// `tests/golden/NAME.json` (pretty-printed, key order kept); `GOLDEN_UPDATE=1` rewrites
/// the file instead. Returns the explanation.
pub(crate) fn golden(name: &str, out: &Output) -> Value {
    let explain_text = serde_json::to_string(&out.explain).expect("an explanation serializes");
    let text = crate::pretty(&format!(
        "{{\"body\":{},\"explain\":{}}}",
        out.body.text(),
        explain_text
    ))
    .expect("a golden file is small")
        + "\n";
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.json"));
    if std::env::var_os("GOLDEN_UPDATE").is_some() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("the golden directory");
        std::fs::write(&path, &text).expect("the golden file is written");
    } else {
        let want = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("missing golden file {}", path.display()));
        if want != text {
            let line = want.lines().zip(text.lines()).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "{name}: the compiled result differs from {} at line {}:\n  want {:?}\n  got  {:?}\n(GOLDEN_UPDATE=1 rewrites it)",
                path.display(),
                line + 1,
                want.lines().nth(line).unwrap_or(""),
                text.lines().nth(line).unwrap_or("")
            );
        }
    }
    explain(out)
}

/// The texts of the compiled messages, `role: text | text`, for readable asserts.
pub(crate) fn outline(explain: &Value) -> Vec<String> {
    explain["messages"]
        .as_array()
        .expect("a fresh compile lists its messages")
        .iter()
        .map(|m| {
            let parts: Vec<String> = m["parts"]
                .as_array()
                .expect("parts")
                .iter()
                .map(|p| match p["type"].as_str().unwrap_or("") {
                    "text" => p["text"].as_str().unwrap_or("").to_string(),
                    "tool_call" => format!("<call {}>", p["id"].as_str().unwrap_or("")),
                    "tool_result" => format!("<result {}>", p["call_id"].as_str().unwrap_or("")),
                    _ => "<image>".to_string(),
                })
                .collect();
            format!("{}: {}", m["role"].as_str().unwrap_or(""), parts.join(" | "))
        })
        .collect()
}

/// A row as a map of columns, for the readers (NULL: absent; a `json` column mapped to
/// `None`: nested deeper than serde_json reads).
#[derive(Default)]
pub(crate) struct Row {
    pub(crate) text: HashMap<&'static str, String>,
    pub(crate) json: HashMap<&'static str, Option<Value>>,
    pub(crate) boolean: HashMap<&'static str, bool>,
    pub(crate) int: HashMap<&'static str, i64>,
}

impl crate::columns::Columns for Row {
    fn what(&self) -> &str {
        "a test row"
    }
    fn text(&self, name: &str) -> Option<String> {
        self.text.get(name).cloned()
    }
    fn uuid(&self, name: &str) -> Option<Uuid> {
        self.text.get(name).and_then(|t| t.parse().ok())
    }
    fn int4(&self, name: &str) -> Option<i32> {
        self.int.get(name).and_then(|n| i32::try_from(*n).ok())
    }
    fn int8(&self, name: &str) -> Option<i64> {
        self.int.get(name).copied()
    }
    fn float4(&self, _: &str) -> Option<f32> {
        None
    }
    fn boolean(&self, name: &str) -> Option<bool> {
        self.boolean.get(name).copied()
    }
    fn days(&self, name: &str) -> Option<i32> {
        self.int4(name)
    }
    fn ints(&self, _: &str) -> Vec<Option<i32>> {
        Vec::new()
    }
    fn jsonb(&self, name: &str) -> std::result::Result<Option<Value>, ()> {
        match self.json.get(name) {
            None => Ok(None),
            Some(Some(v)) => Ok(Some(v.clone())),
            Some(None) => Err(()),
        }
    }
}
