//! Loading a compile's rows in a few set-based queries, into the core's plain structs.
//! Every query runs through SPI as the caller, so row-level security decides what a
//! compile reads. History is read newest first in batches sized to what the budget has
//! left, so a compile reads
//! the rows it renders, not the whole conversation.

use std::collections::{HashMap, HashSet};

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;
use pgrx::spi::{SpiClient, SpiTupleTable};
use uuid::Uuid;

use super::errors::spi;
use pgprompt_core::context::{
    iso_date, Context, Conversation, Document, HistorySource, HistoryTurn, Mechanism, Memory, Model, Role, RoundRow,
    Sealed, Skill, Turn, TurnKind, User, UserKind, Workspace,
};
use pgprompt_core::error::{Code, Error, Result};
use pgprompt_core::fields;

pub fn pg_uuid(u: Uuid) -> pgrx::Uuid {
    pgrx::Uuid::from_bytes(*u.as_bytes())
}

fn core_uuid(u: pgrx::Uuid) -> Uuid {
    Uuid::from_bytes(*u.as_bytes())
}

thread_local! {
    /// Plans of the loading queries, prepared once per backend (SPI_keepplan); the plan
    /// cache revalidates them when the tables change.
    static PLANS: std::cell::RefCell<HashMap<&'static str, pgrx::spi::OwnedPreparedStatement>> =
        std::cell::RefCell::new(HashMap::new());
}

/// Runs a loading query through its kept plan; the argument types come from the args.
fn select<'conn>(client: &SpiClient<'conn>, sql: &'static str, args: &[DatumWithOid<'_>]) -> SpiTupleTable<'conn> {
    PLANS.with(|plans| {
        let mut plans = plans.borrow_mut();
        let plan = match plans.get(sql) {
            Some(p) => p,
            None => {
                let types: Vec<pgrx::PgOid> = args.iter().map(|a| pgrx::PgOid::from(a.oid())).collect();
                let kept = spi(client.prepare(sql, &types)).keep();
                plans.entry(sql).or_insert(kept)
            }
        };
        spi(client.select(plan, None, args))
    })
}

/// An optional argument: the value, or a NULL of its type.
fn nullable<T: pgrx::IntoDatum>(v: Option<T>) -> DatumWithOid<'static> {
    match v {
        Some(v) => v.into(),
        None => DatumWithOid::null::<T>(),
    }
}

/// Typed access to one row of a loading query, read in column order. The row is
/// deformed once (`heap_deform_tuple`) instead of column by column through guarded
/// SPI calls: history reads a few hundred rows of 28 columns.
struct Cols<'r> {
    values: &'r [pg_sys::Datum],
    nulls: &'r [bool],
    types: &'r [pg_sys::Oid],
    at: usize,
}

impl Cols<'_> {
    fn next<T: pgrx::IntoDatum + pgrx::FromDatum>(&mut self) -> Option<T> {
        let i = self.at;
        self.at += 1;
        let (Some(&value), Some(&null), Some(&oid)) = (self.values.get(i), self.nulls.get(i), self.types.get(i)) else {
            pgrx::error!("pgprompt: internal error: a loading query has no column {}", i + 1);
        };
        if !T::is_compatible_with(oid) {
            pgrx::error!(
                "pgprompt: internal error: column {} of a loading query has type {oid:?}, not {}",
                i + 1,
                std::any::type_name::<T>()
            );
        }
        // SAFETY: the datum comes from the current SPI result, deformed with its own
        // descriptor, and its type was checked against T above.
        unsafe { T::from_polymorphic_datum(value, null, oid) }
    }
    fn uuid(&mut self) -> Option<Uuid> {
        self.next::<pgrx::Uuid>().map(core_uuid)
    }
    fn text(&mut self) -> Option<String> {
        self.next::<String>()
    }
    fn text_or(&mut self, default: &str) -> String {
        self.text().unwrap_or_else(|| default.to_string())
    }
    /// A `date` column as `to_char(d, 'YYYY-MM-DD')` spells it; "" for NULL or infinity.
    fn date(&mut self) -> String {
        self.next::<pgrx::datum::Date>()
            .and_then(|d| iso_date(d.to_pg_epoch_days()))
            .unwrap_or_default()
    }
    fn ints(&mut self) -> Vec<Option<i32>> {
        self.next::<Vec<Option<i32>>>().unwrap_or_default()
    }
}

/// Reads every row of a loading query's result with `read`, keeping what it returns.
/// `table` must be the result `select` just returned, and `read` runs no query.
fn rows<R>(table: SpiTupleTable<'_>, mut read: impl FnMut(&mut Cols<'_>) -> Option<R>) -> Vec<R> {
    let n = table.len();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    // SAFETY: `table` is the result `select` just produced, so SPI_tuptable is its tuple
    // table (nothing has run through SPI since), and it lives while `table` does.
    unsafe {
        let tt = pg_sys::SPI_tuptable;
        if tt.is_null() || (*tt).numvals as usize != n {
            pgrx::error!("pgprompt: internal error: a loading query's rows are not the current SPI result");
        }
        let desc = (*tt).tupdesc;
        let natts = (*desc).natts;
        let types: Vec<pg_sys::Oid> = (1..=natts).map(|i| pg_sys::SPI_gettypeid(desc, i)).collect();
        let width = types.len();
        let mut values = vec![pg_sys::Datum::from(0usize); width];
        let mut nulls = vec![true; width];
        for i in 0..n {
            pg_sys::heap_deform_tuple(*(*tt).vals.add(i), desc, values.as_mut_ptr(), nulls.as_mut_ptr());
            let mut c = Cols {
                values: &values,
                nulls: &nulls,
                types: &types,
                at: 0,
            };
            if let Some(r) = read(&mut c) {
                out.push(r);
            }
        }
    }
    out
}

/// The first column of a loading query's first row, if any.
fn first<T: pgrx::IntoDatum + pgrx::FromDatum>(table: SpiTupleTable<'_>) -> Option<T> {
    rows(table, |c| c.next::<T>()).into_iter().next()
}

/// The turn columns, in the order [`read_turn`] reads them. `{sealed_request}` and the
/// text columns are spelled by the caller: history reads no sealed request.
fn turn_columns(sealed_request: &str, content: &str, prompt: &str, preface: &str, tz: &str) -> String {
    format!(
        "t.id, t.seq, t.kind, t.role, t.author_id, t.answerer_id, t.poster_id, {content}, {prompt}, t.origin, \
         t.sender_conversation_id, t.mode, t.inline::text, t.variables::text, t.input::text, t.tools::text, \
         t.callables::text, t.model, t.history::text, t.memory_user_id, t.summary, t.summary_round, \
         (t.created_at AT TIME ZONE {tz})::date, t.content_tokens, t.prompt_tokens, \
         {sealed_request}, {preface}, t.sealed_mechanism"
    )
}

fn read_turn(c: &mut Cols<'_>) -> Option<Turn> {
    let id = c.uuid()?;
    let seq = c.next::<i64>().unwrap_or(0);
    let kind = TurnKind::parse(&c.text_or("message"));
    let mut t = Turn::new(id, seq, kind);
    t.role = c.text().as_deref().and_then(Role::parse);
    t.author_id = c.uuid();
    t.answerer_id = c.uuid();
    t.poster_id = c.uuid();
    t.content = c.text();
    t.prompt = c.text();
    t.origin = c.text();
    t.sender_conversation_id = c.uuid();
    t.run = c.text().as_deref() == Some("run");
    t.inline = c.text_or("[]");
    t.variables = c.text_or("{}");
    t.input = c.text();
    t.tools = c.text();
    t.callables = c.text_or("[]");
    t.model = c.text();
    t.history = c.text();
    t.memory_user_id = c.uuid();
    t.summary = c.text();
    t.summary_round = c.next::<i32>();
    t.date = c.date();
    t.content_tokens = c.ints();
    t.prompt_tokens = c.ints();
    let request = c.text();
    let preface = c.text();
    let mechanism = c.text();
    if let Some(mechanism) = mechanism {
        t.sealed = Some(Sealed {
            request: request.unwrap_or_default(),
            preface: preface.unwrap_or_else(|| "[]".into()),
            mechanism,
        });
    }
    Some(t)
}

const USERS: &str = "SELECT id, handle, display_name, kind, steward_id, prompt_mechanism, prompt_template::text, \
     model, reasoning_replay, application FROM prompt.users \
     WHERE id = ANY($1) OR id IN (SELECT steward_id FROM prompt.users WHERE id = ANY($1))";

fn load_users(client: &SpiClient<'_>, ids: &[Uuid]) -> Vec<User> {
    if ids.is_empty() {
        return Vec::new();
    }
    let ids: Vec<pgrx::Uuid> = ids.iter().copied().map(pg_uuid).collect();
    let table = select(client, USERS, &[ids.into()]);
    rows(table, |c| {
        Some(User {
            id: c.uuid()?,
            handle: c.text_or(""),
            display_name: c.text(),
            kind: UserKind::parse(&c.text_or("human")),
            steward_id: c.uuid(),
            prompt_mechanism: Mechanism::parse(&c.text_or("default")),
            prompt_template: c.text(),
            model: c.text(),
            reasoning_replay: c.next::<bool>().unwrap_or(false),
            application: c.text(),
        })
    })
}

/// Loads everything but history for turn `turn` of conversation `conv`.
/// Returns the context and the workspace timezone (for history's dates).
pub fn context(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Result<Context> {
    static QUERY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "SELECT c.workspace_id, c.kind, c.answerer_id, c.creator_id, c.origin_channel, w.name, w.timezone, {} \
             FROM prompt.conversations c JOIN prompt.workspaces w ON w.id = c.workspace_id \
             LEFT JOIN prompt.turns t ON t.conversation_id = c.id AND t.id = $2 WHERE c.id = $1",
            turn_columns(
                "t.sealed_request::text",
                "t.content",
                "t.prompt",
                "t.sealed_preface::text",
                "w.timezone"
            )
        )
    });
    let table = select(client, &QUERY, &[pg_uuid(conv).into(), pg_uuid(turn).into()]);
    let found = rows(table, |c| {
        let workspace_id = c.uuid().unwrap_or_default();
        let conversation = Conversation {
            id: conv,
            workspace_id,
            kind: c.text_or("conversation"),
            answerer_id: c.uuid(),
            creator_id: c.uuid(),
            origin_channel: c.text(),
        };
        let workspace = Workspace {
            id: workspace_id,
            name: c.text(),
            timezone: c.text_or("UTC"),
        };
        Some((conversation, workspace, read_turn(c)))
    });
    let Some((conversation, workspace, t)) = found.into_iter().next() else {
        return Err(Error::new(
            Code::ConversationNotFound,
            format!("conversation {conv} does not exist"),
        )
        .hint("The id may be wrong, or row-level security may hide the conversation from this role."));
    };
    let workspace_id = workspace.id;
    let Some(t) = t else {
        return Err(missing_turn(client, conv, turn));
    };

    // Users: the answerers, the poster, the creator, the selected Human, and stewards.
    let mut ids: Vec<Uuid> = [
        t.answerer_id,
        conversation.answerer_id,
        t.poster_id,
        t.author_id,
        conversation.creator_id,
        t.memory_user_id,
    ]
    .into_iter()
    .flatten()
    .collect();
    let rounds = current_rounds(client, conv, turn);
    ids.extend(steer_authors(&rounds));
    ids.sort();
    ids.dedup();
    let users: HashMap<Uuid, User> = load_users(client, &ids).into_iter().map(|u| (u.id, u)).collect();

    let a = t.answerer_id.or(conversation.answerer_id).and_then(|id| users.get(&id));
    let mut model_names: Vec<String> = [t.model.clone(), a.and_then(|a| a.model.clone())]
        .into_iter()
        .flatten()
        .collect();
    model_names.dedup();
    let models = load_models(client, &model_names);

    let (documents, memories, skills) = match (a, t.sealed.is_some()) {
        (Some(a), false) if a.prompt_mechanism != Mechanism::Raw => {
            let human = t
                .poster_id
                .and_then(|p| users.get(&p))
                .and_then(User::controlling_human);
            (
                load_documents(client, a.id, workspace_id, human),
                load_memories(client, a.id, workspace_id, conv, t.memory_user_id),
                if t.run {
                    load_skills(client, &t, a, workspace_id)
                } else {
                    Vec::new()
                },
            )
        }
        _ => (Vec::new(), Vec::new(), Vec::new()),
    };
    Ok(Context {
        conversation,
        workspace,
        turn: t,
        rounds,
        users,
        models,
        documents,
        memories,
        skills,
    })
}

fn missing_turn(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Error {
    let other = select(
        client,
        "SELECT conversation_id FROM prompt.turns WHERE id = $1 LIMIT 1",
        &[pg_uuid(turn).into()],
    );
    match first::<pgrx::Uuid>(other) {
        Some(elsewhere) => Error::new(
            Code::TurnNotCompilable,
            format!(
                "turn {turn} belongs to conversation {}, not {conv}",
                core_uuid(elsewhere)
            ),
        )
        .hint("Pass the turn's own conversation_id."),
        None => Error::new(
            Code::TurnNotFound,
            format!("turn {turn} does not exist in conversation {conv}"),
        )
        .hint("The id may be wrong, or row-level security may hide the turn from this role."),
    }
}

const MODELS: &str = "SELECT name, wire, tokenizer, advisory_window, hard_window, native_images, token_margin, \
     max_output_tokens FROM prompt.models WHERE name = ANY($1)";

fn load_models(client: &SpiClient<'_>, names: &[String]) -> HashMap<String, Model> {
    if names.is_empty() {
        return HashMap::new();
    }
    let table = select(client, MODELS, &[names.to_vec().into()]);
    rows(table, |c| {
        let name = c.text_or("");
        let m = Model {
            name: name.clone(),
            wire: c.text_or("anthropic"),
            tokenizer: c.text_or("cl100k_base"),
            advisory_window: c.next::<i32>(),
            hard_window: c.next::<i32>(),
            native_images: c.next::<bool>().unwrap_or(false),
            token_margin: c.next::<f32>().unwrap_or(0.0),
            max_output_tokens: c.next::<i32>().unwrap_or(4096),
        };
        Some((name, m))
    })
    .into_iter()
    .collect()
}

const DOCUMENTS: &str = "SELECT id, user_id, workspace_id, name, role, body, version FROM prompt.documents \
     WHERE user_id = $1 OR (workspace_id = $2 AND name = 'character') OR (user_id = $3 AND name = 'persona')";

fn load_documents(client: &SpiClient<'_>, a: Uuid, workspace: Uuid, human: Option<Uuid>) -> Vec<Document> {
    let human = nullable(human.map(pg_uuid));
    let table = select(
        client,
        DOCUMENTS,
        &[pg_uuid(a).into(), pg_uuid(workspace).into(), human],
    );
    rows(table, |c| {
        Some(Document {
            id: c.uuid()?,
            user_id: c.uuid(),
            workspace_id: c.uuid(),
            name: c.text_or(""),
            role: c.text().as_deref().and_then(Role::parse).unwrap_or(Role::System),
            body: c.text_or(""),
            version: c.next::<i32>().unwrap_or(1),
        })
    })
}

const MEMORIES: &str =
    "SELECT id, scope, user_id, speaker_id, workspace_id, conversation_id, path, body, updated_at::text \
     FROM prompt.memories WHERE (user_id = ANY($1) OR workspace_id = $2 OR conversation_id = $3) \
     AND path NOT LIKE 'skills/%'";

fn load_memories(client: &SpiClient<'_>, a: Uuid, workspace: Uuid, conv: Uuid, human: Option<Uuid>) -> Vec<Memory> {
    let owners: Vec<pgrx::Uuid> = [Some(a), human].into_iter().flatten().map(pg_uuid).collect();
    let table = select(
        client,
        MEMORIES,
        &[owners.into(), pg_uuid(workspace).into(), pg_uuid(conv).into()],
    );
    rows(table, |c| {
        Some(Memory {
            id: c.uuid()?,
            scope: c.text_or(""),
            user_id: c.uuid(),
            speaker_id: c.uuid(),
            workspace_id: c.uuid(),
            conversation_id: c.uuid(),
            path: c.text_or(""),
            body: c.text_or(""),
            updated_at: c.text_or(""),
        })
    })
}

const SKILLS: &str = "SELECT id, source, user_id, speaker_id, workspace_id, runner, application, name, description, \
     executor_id, recall_only FROM prompt.skills \
     WHERE NOT recall_only AND (runner = ANY($1) OR application = $2 OR user_id = ANY($3) OR workspace_id = $4)";

fn load_skills(client: &SpiClient<'_>, t: &Turn, a: &User, workspace: Uuid) -> Vec<Skill> {
    let callables = fields::parse_callables(&t.callables).unwrap_or_default();
    if callables.is_empty() {
        return Vec::new();
    }
    let runners: Vec<String> = callables.iter().filter_map(|c| c.runner.clone()).collect();
    let owners: Vec<pgrx::Uuid> = [Some(a.id), t.memory_user_id]
        .into_iter()
        .flatten()
        .map(pg_uuid)
        .collect();
    let application = nullable(a.application.clone());
    let table = select(
        client,
        SKILLS,
        &[runners.into(), application, owners.into(), pg_uuid(workspace).into()],
    );
    rows(table, |c| {
        Some(Skill {
            id: c.uuid()?,
            source: c.text_or(""),
            user_id: c.uuid(),
            speaker_id: c.uuid(),
            workspace_id: c.uuid(),
            runner: c.text(),
            application: c.text(),
            name: c.text_or(""),
            description: c.text_or(""),
            executor_id: c.uuid(),
            recall_only: c.next::<bool>().unwrap_or(false),
        })
    })
}

fn read_round(c: &mut Cols<'_>) -> RoundRow {
    RoundRow {
        n: c.next::<i32>().unwrap_or(0),
        assistant: c.text_or("[]"),
        results: c.text_or("[]"),
        steers: c.text_or("[]"),
        aborted: c.next::<bool>().unwrap_or(false),
    }
}

fn current_rounds(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Vec<RoundRow> {
    let table = select(
        client,
        "SELECT n, assistant::text, results::text, steers::text, aborted FROM prompt.rounds \
         WHERE conversation_id = $1 AND turn_id = $2 ORDER BY n",
        &[pg_uuid(conv).into(), pg_uuid(turn).into()],
    );
    rows(table, |c| Some(read_round(c)))
}

/// The authors a round's steers name (their envelopes need handles).
fn steer_authors(rounds: &[RoundRow]) -> Vec<Uuid> {
    let mut out = Vec::new();
    for r in rounds {
        if let Ok(serde_json::Value::Array(list)) = serde_json::from_str::<serde_json::Value>(&r.steers) {
            out.extend(
                list.iter()
                    .filter_map(|s| s["author_id"].as_str())
                    .filter_map(|s| Uuid::parse_str(s).ok()),
            );
        }
    }
    out
}

/// History read newest first through SPI, from the newest summary turn on.
pub struct SpiHistory<'c, 'conn> {
    client: &'c SpiClient<'conn>,
    conv: Uuid,
    timezone: String,
    /// The next batch reads turns with `seq` below this.
    before: i64,
    /// History starts at the newest summary turn (its seq), or the beginning.
    floor: i64,
    known: HashSet<Uuid>,
}

impl<'c, 'conn> SpiHistory<'c, 'conn> {
    pub fn new(client: &'c SpiClient<'conn>, ctx: &Context) -> Self {
        let floor = first::<i64>(select(
            client,
            "SELECT max(seq) FROM prompt.turns WHERE conversation_id = $1 AND kind = 'summary' AND seq < $2",
            &[pg_uuid(ctx.conversation.id).into(), ctx.turn.seq.into()],
        ))
        .unwrap_or(i64::MIN);
        SpiHistory {
            client,
            conv: ctx.conversation.id,
            timezone: ctx.workspace.timezone.clone(),
            before: ctx.turn.seq,
            floor,
            known: ctx.users.keys().copied().collect(),
        }
    }
}

impl HistorySource for SpiHistory<'_, '_> {
    fn next_batch(&mut self, want: usize) -> Result<(Vec<HistoryTurn>, Vec<User>)> {
        if self.before <= self.floor {
            return Ok((Vec::new(), Vec::new()));
        }
        static QUERY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            format!(
                "SELECT {} FROM prompt.turns t WHERE t.conversation_id = $1 AND t.seq < $2 AND t.seq >= $3 \
                 ORDER BY t.seq DESC LIMIT $4",
                turn_columns("NULL::text", "t.content", "t.prompt", "t.sealed_preface::text", "$5")
            )
        });
        let table = select(
            self.client,
            &QUERY,
            &[
                pg_uuid(self.conv).into(),
                self.before.into(),
                self.floor.into(),
                (want.clamp(1, 1024) as i64).into(),
                self.timezone.clone().into(),
            ],
        );
        let mut turns: Vec<HistoryTurn> = rows(table, |c| {
            Some(HistoryTurn {
                turn: read_turn(c)?,
                rounds: Vec::new(),
            })
        });
        let Some(last) = turns.last() else {
            self.before = self.floor;
            return Ok((Vec::new(), Vec::new()));
        };
        // A short batch was the last: nothing older is left to read or count.
        self.before = if turns.len() < want.clamp(1, 1024) {
            self.floor
        } else {
            last.turn.seq
        };

        // Rounds of the batch's reply turns, in one query.
        let replies: Vec<pgrx::Uuid> = turns
            .iter()
            .filter(|h| h.turn.kind == TurnKind::Reply)
            .map(|h| pg_uuid(h.turn.id))
            .collect();
        if !replies.is_empty() {
            let table = select(
                self.client,
                "SELECT turn_id, n, assistant::text, results::text, steers::text, aborted FROM prompt.rounds \
                 WHERE conversation_id = $1 AND turn_id = ANY($2) ORDER BY turn_id, n",
                &[pg_uuid(self.conv).into(), replies.into()],
            );
            let mut by_turn: HashMap<Uuid, Vec<RoundRow>> = HashMap::new();
            for (turn, round) in rows(table, |c| Some((c.uuid()?, read_round(c)))) {
                by_turn.entry(turn).or_default().push(round);
            }
            for h in &mut turns {
                if let Some(r) = by_turn.remove(&h.turn.id) {
                    h.rounds = r;
                }
            }
        }

        // Users the batch names that the compile has not read yet.
        let mut ids: Vec<Uuid> = turns
            .iter()
            .flat_map(|h| [h.turn.author_id, h.turn.answerer_id, h.turn.poster_id])
            .flatten()
            .chain(turns.iter().flat_map(|h| steer_authors(&h.rounds)))
            .filter(|id| !self.known.contains(id))
            .collect();
        ids.sort();
        ids.dedup();
        let users = load_users(self.client, &ids);
        self.known.extend(ids);
        self.known.extend(users.iter().map(|u| u.id));
        Ok((turns, users))
    }

    /// Sums the entry counts the write triggers store (`own_entries`, from the core's
    /// `own_plan`): an index-only scan of (conversation_id, seq) INCLUDE (kind,
    /// answerer_id, own_entries), no turn text read.
    fn count_rest(&mut self, a: Uuid, conv_answerer: Option<Uuid>) -> Result<u32> {
        if self.before <= self.floor {
            return Ok(0);
        }
        let conv_answerer = nullable(conv_answerer.map(pg_uuid));
        let n = first::<i64>(select(
            self.client,
            // Every turn counts its own_entries (1 unless it is a reply); a reply another
            // answerer gave counts 1 for this reader.
            "SELECT (coalesce(sum(t.own_entries), 0) - coalesce(sum(t.own_entries - 1) FILTER \
             (WHERE t.kind = 'reply' AND coalesce(t.answerer_id, $4) IS DISTINCT FROM $5), 0))::int8 \
             FROM prompt.turns t WHERE t.conversation_id = $1 AND t.seq < $2 AND t.seq >= $3",
            &[
                pg_uuid(self.conv).into(),
                self.before.into(),
                self.floor.into(),
                conv_answerer,
                pg_uuid(a).into(),
            ],
        ))
        .unwrap_or(0);
        self.before = self.floor;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }
}

/// The stored result of a sealed turn no round has been written to since: returned
/// as it was stored, without reading it into Rust (SPEC §8: the sealed bytes). The datum
/// is moved out of SPI's memory into the caller's.
pub fn stored_seal(client: &SpiClient<'_>, conv: Uuid, turn: Uuid) -> Option<super::jsonb::Jsonb> {
    let table = select(
        client,
        "SELECT t.sealed_request FROM prompt.turns t WHERE t.conversation_id = $1 AND t.id = $2 \
         AND t.sealed_at IS NOT NULL AND NOT EXISTS \
         (SELECT 1 FROM prompt.rounds r WHERE r.conversation_id = t.conversation_id AND r.turn_id = t.id)",
        &[pg_uuid(conv).into(), pg_uuid(turn).into()],
    );
    if table.is_empty() {
        return None;
    }
    let datum = spi(table.first().get_datum_by_ordinal(1))?;
    Some(super::jsonb::Jsonb(unsafe {
        pgrx::pg_sys::SPI_datumTransfer(datum, false, -1)
    }))
}

/// The turn's sealed columns, written once (SPEC §8): `request` is the sealed request
/// as jsonb. False when another session sealed it first.
pub fn seal(
    client: &mut SpiClient<'_>,
    conv: Uuid,
    turn: Uuid,
    s: &pgprompt_core::Seal,
    request: super::jsonb::Jsonb,
) -> bool {
    let catalog = nullable(s.catalog.clone());
    let table = spi(client.update(
        "UPDATE prompt.turns SET sealed_at = now(), sealed_request = $3, sealed_preface = $4::jsonb, \
         sealed_catalog = $5, sealed_mechanism = $6, sealed_versions = $7::jsonb \
         WHERE conversation_id = $1 AND id = $2 AND sealed_at IS NULL",
        None,
        &[
            pg_uuid(conv).into(),
            pg_uuid(turn).into(),
            request.into(),
            s.preface.clone().into(),
            catalog,
            s.mechanism.to_string().into(),
            s.versions.clone().into(),
        ],
    ));
    table.len() == 1
}
