//! What the compile of a turn reads (docs/design.md, "Rows"): decided here, run by the
//! extension. The loader reads in steps, each deciding the next from what the one before
//! returned: the conversation row — with, for a compile ([`stored_first`]), a sealed turn's
//! stored body when nothing is to be added to it, which ends the reads —, with the turn
//! and where its history starts (one statement, the conversation's own rows);
//! then [`after_turn`] (the turn's rounds, its seal; a Side's captures); then the
//! workspace, [`users`] (everyone those rows name) and [`models`] in one statement; then
//! [`answerer_rows`] (the answerer's documents, memory and skills, one statement); history
//! is read in batches whose new authors [`history_users`] names. [`load`] takes the
//! steps; the extension implements [`Store`], one method a statement, and decides
//! nothing itself.

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use crate::context::{CaptureState, Captured, Context, HistoryTurn, Previous};
use crate::error::{Error, Result};
use crate::kinds::Mechanism;
use crate::rounds::Round;
use crate::rows::{Conversation, Document, Memory, Model, Skill, Turn, User, Workspace};
use crate::seal::Sealed;
use crate::wire::Body;

/// The statements a turn's load runs, run by the extension (over SPI, as the caller, so
/// row-level security decides what is read): [`load`] decides which to run, in which
/// order, from what the ones before returned. Each method is one read: one statement, or
/// the few the seal's nodes, a Side's parents and a calibrated model's margin add
/// (history's batches are read apart, by the compile).
pub trait Store {
    /// A sealed turn's stored pointers, as the first statement reads them.
    type Stored;
    /// The turn's creation time, as the first statement reads it (the workspace's
    /// statement spells its day in the workspace's time zone).
    type Instant;
    /// The conversation row with the turn (and, with `stored_first`, the pointers of the
    /// turn's stored body, unless its seal's frozen record contains `stateful`: a
    /// stateful turn sends its stored body in another form): `None` when no conversation
    /// row is visible.
    fn first(
        &mut self,
        conv: Uuid,
        turn: Uuid,
        stored_first: bool,
        stateful: &serde_json::Value,
    ) -> Result<Option<First<Self::Stored, Self::Instant>>>;
    /// The sealed body the pointers name, verified (`None`: it is to be compiled, e.g.
    /// pruned).
    fn stored_body(&mut self, stored: Self::Stored, conv: Uuid, turn: Uuid) -> Result<Option<Body>>;
    /// Why the turn cannot be read: another conversation's, or not visible.
    fn missing_turn(&mut self, conv: Uuid, turn: Uuid) -> Error;
    /// The turn's rounds in order, each one a request carried checked against its digest
    /// (the load keeps those a request can carry).
    fn rounds(&mut self, conv: Uuid, turn: Uuid) -> Result<Vec<Round>>;
    /// The turn's seal: what it froze, and its body (verified).
    fn seal(&mut self, conv: Uuid, turn: &Turn) -> Result<Sealed>;
    /// A Side's captures, up its chain of parents.
    fn captures(
        &mut self,
        conv: Uuid,
        parent: Option<Uuid>,
        captured_turn: Uuid,
        state: CaptureState,
    ) -> Result<Vec<Captured>>;
    /// The workspace (with the day `created_at` falls on in its time zone), the users
    /// `users` and their stewards, and the models `models` names: one statement (`None`:
    /// the workspace row is not visible).
    fn references(
        &mut self,
        conversation: &Conversation,
        created_at: Option<Self::Instant>,
        users: &[Uuid],
        models: Option<ModelRows>,
    ) -> Result<Option<References>>;
    /// The newest response recorded for an earlier turn of the turn's answerer.
    fn previous_response(&mut self, conversation: &Conversation, turn: &Turn) -> Result<Option<String>>;
    /// A stateful turn's previous request: the newest earlier (`seq` below the turn's)
    /// sealed reply turn of the conversation whose answerer is `answerer`, with the newest
    /// response recorded for it (`None`: there is no such turn).
    fn previous_request(&mut self, conv: Uuid, seq: i64, answerer: Uuid) -> Result<Option<PreviousRequest>>;
    /// The answerer's documents, memory and skills `wanted` names: one statement.
    fn answerer_rows(
        &mut self,
        wanted: &AnswererRows,
        workspace: Uuid,
        conv: Uuid,
    ) -> Result<(Vec<Document>, Vec<Memory>, Vec<Skill>)>;
}

/// The conversation's row as [`Store::first`] reads it.
pub struct First<S, I> {
    /// The conversation (its `root_id` is set by the load, from the captures).
    pub conversation: Conversation,
    /// Its capture, for a Side: the parent, the captured turn and how it stood.
    pub capture: (Option<Uuid>, Option<Uuid>, CaptureState),
    /// The stored body's pointers, where the turn is its stored body.
    pub stored: Option<S>,
    /// The turn and whether it is sealed (`None`: not visible, or not read where the
    /// stored body is all a compile reads).
    pub turn: Option<(Turn, bool)>,
    /// The turn's creation time.
    pub created_at: Option<I>,
    /// The seq of the newest summary turn before the turn.
    pub summary_floor: Option<i64>,
    /// Whether any turn of the conversation has rounds (`true` where unknown).
    pub conversation_rounds: bool,
}

/// What [`Store::references`] reads: reference tables' rows.
pub struct References {
    /// The conversation's workspace.
    pub workspace: Workspace,
    /// The turn's creation day in the workspace's time zone.
    pub day: String,
    /// The users read, by id.
    pub users: HashMap<Uuid, User>,
    /// The models read, by name.
    pub models: HashMap<String, Model>,
}

/// What [`Store::previous_request`] reads: the previous sealed reply turn, and the newest
/// response recorded for it (its columns `None` where none is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviousRequest {
    /// The turn.
    pub turn: Uuid,
    /// The step the response answered (`prompt.responses.step`).
    pub step: Option<i32>,
    /// The provider's id of the response.
    pub response_id: Option<String>,
    /// The model the response answered (`compiled_model`).
    pub model: Option<String>,
    /// What the response's prompt was billed for (`billed_input_tokens`).
    pub input_tokens: Option<i32>,
    /// The response's output tokens.
    pub output_tokens: Option<i32>,
    /// Whether the answer reads as it was recorded (its `answer_digest` matches the
    /// turn's content, or the step's round): an answer edited since, or recorded before
    /// 0.5 (no digest), is not what the provider holds.
    pub as_recorded: bool,
}

/// What a load starts a compile from: a sealed turn's stored body when nothing is to be
/// added to it, or everything but history.
pub enum Loaded {
    /// The stored body, verified.
    Stored(Body),
    /// Everything but history.
    Context(Box<Context>),
}

/// Loads everything but history for turn `turn` of conversation `conv`, in the steps
/// this module names, each statement run by `store`.
pub fn load<S: Store>(store: &mut S, conv: Uuid, turn: Uuid, read: Read) -> Result<Loaded> {
    load_turn(store, conv, turn, read, true)
}

/// [`load`]; with `chain` false, a stateful turn's previous request is not read (the
/// previous request's own load: its turn is sealed, so it never chains, and a store that
/// says otherwise does not lead the load on).
fn load_turn<S: Store>(store: &mut S, conv: Uuid, turn: Uuid, read: Read, chain: bool) -> Result<Loaded> {
    let first = store.first(conv, turn, stored_first(read), &crate::seal::frozen_stateful())?;
    let Some(First {
        mut conversation,
        capture,
        stored,
        turn: found,
        created_at,
        summary_floor,
        conversation_rounds,
    }) = first
    else {
        return Err(Error::conversation_not_found(conv));
    };
    if let Some(body) = stored.map(|s| store.stored_body(s, conv, turn)).transpose()?.flatten() {
        return Ok(Loaded::Stored(body));
    }
    let Some((mut t, sealed)) = found else {
        return Err(store.missing_turn(conv, turn));
    };
    let (rounds, seal) = after(store, conv, &t, sealed)?;
    // A Side's history (a sealed turn renders from its seal, not from history).
    let captured = match captures(&conversation, capture, seal.is_some()) {
        Some((parent, captured_turn, state)) => store.captures(conv, parent, captured_turn, state)?,
        None => Vec::new(),
    };
    conversation.root_id = captured.last().map(|c| c.conversation_id);
    let sealed_answerer = seal.as_ref().map(|s| s.frozen.answerer_id);
    let ids = users(&conversation, &t, sealed_answerer, &rounds, &captured);
    let References {
        workspace,
        day,
        users,
        models,
    } = match references(read, seal.is_some(), &rounds) {
        true => store
            .references(
                &conversation,
                created_at,
                &ids,
                models(&conversation, &t, seal.is_some()),
            )?
            .ok_or_else(|| Error::conversation_not_found(conv))?,
        false => References::unread(&conversation),
    };
    t.date = day;
    let a = answerer(&conversation, &t, &users);
    let diagnostics_previous = match asks_cache_diagnostics(&t, a, &models, seal.is_some()) {
        true => store.previous_response(&conversation, &t)?,
        false => None,
    };
    let wanted = a.and_then(|a| answerer_rows(&t, a, &users, seal.is_some(), read));
    let (documents, memories, skills) = match wanted {
        Some(w) => store.answerer_rows(&w, workspace.id, conv)?,
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    // A stateful turn's first compile reads the request it may chain to.
    let previous = match stateful_answerer(read, &t, a, &models, seal.is_some()).filter(|_| chain) {
        Some(a) => previous(store, conv, t.seq, a)?,
        None => None,
    };
    Ok(Loaded::Context(Box::new(Context {
        conversation,
        workspace,
        turn: t,
        rounds,
        users,
        models,
        documents,
        memories,
        skills,
        seal,
        captured,
        previous,
        diagnostics_previous,
        summary_floor,
        conversation_rounds,
    })))
}

/// The answerer whose previous request a stateful turn's first compile reads
/// (`Context::previous`): a compile's or an explanation's, of an unsealed turn that asks
/// for stateful mode (its merged request options say `stateful: true`) on a wire whose
/// provider stores responses. `None` for any other turn or read.
pub(crate) fn stateful_answerer(
    read: Read,
    t: &Turn,
    answerer: Option<&User>,
    models: &HashMap<String, Model>,
    sealed: bool,
) -> Option<Uuid> {
    if sealed || !matches!(read, Read::Body | Read::Explain) {
        return None;
    }
    let a = answerer?;
    let model = turn_model(t, Some(a), models)?;
    if !model.wire.form().stores_responses() {
        return None;
    }
    (nearest_option(t, Some(a), Some(model), "stateful") == Some(&serde_json::Value::Bool(true))).then_some(a.id)
}

/// The previous request of answerer `a` before the turn at `seq`, in its full form's
/// parts (`Context::previous`): its turn loaded as an explanation loads it, with the
/// rounds before the response's step (the request the response answered). `None` when
/// there is none, it has no response id, its answer was edited since it was recorded
/// (the provider holds what was sent: no chain, the full body), or it is not sealed.
fn previous<S: Store>(store: &mut S, conv: Uuid, seq: i64, a: Uuid) -> Result<Option<Previous>> {
    let Some(PreviousRequest {
        turn,
        step: Some(step),
        response_id: Some(response_id),
        model,
        input_tokens,
        output_tokens,
        as_recorded: true,
    }) = store.previous_request(conv, seq, a)?
    else {
        return Ok(None);
    };
    let Loaded::Context(mut request) = load_turn(store, conv, turn, Read::Explain, false)? else {
        return Ok(None);
    };
    request.rounds.retain(|r| r.n < step);
    let Some(frozen) = request.seal.as_ref().map(|s| &s.frozen) else {
        return Ok(None);
    };
    let (stateful, sealed_model) = (frozen.stateful.is_some(), frozen.model.as_ref().map(|m| m.name.clone()));
    Ok(Some(Previous {
        response_id,
        model,
        input_tokens,
        output_tokens,
        request,
        stateful,
        sealed_model,
    }))
}

/// What [`after_turn`] names: the rounds a request can carry (a run's), the seal of a
/// sealed turn.
fn after<S: Store>(store: &mut S, conv: Uuid, t: &Turn, sealed: bool) -> Result<(Vec<Round>, Option<Sealed>)> {
    let next = after_turn(t, sealed);
    let rounds = match next.rounds {
        true => {
            let mut rounds = store.rounds(conv, t.id)?;
            crate::rounds::keep_sendable(&mut rounds);
            rounds
        }
        false => Vec::new(),
    };
    let seal = match next.seal {
        true => Some(store.seal(conv, t)?),
        false => None,
    };
    Ok((rounds, seal))
}

impl References {
    /// None read: a sent request renders from its seal and rounds alone (its workspace
    /// only by id).
    fn unread(conversation: &Conversation) -> References {
        References {
            workspace: Workspace {
                id: conversation.workspace_id,
                name: None,
                timezone: "UTC".into(),
                paths: Vec::new(),
            },
            day: String::new(),
            users: HashMap::new(),
            models: HashMap::new(),
        }
    }
}

/// What a caller loads a turn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// A compile: a sealed turn without rounds is only its stored body.
    Body,
    /// An estimate or explanation: everything a compile reads.
    Explain,
    /// The turn's skills (`skills_for_turn`): a sealed turn's as its seal froze them (its
    /// seal is read; a 0.4 seal froze none, and its skills are read as they are now), an
    /// unsealed turn's as they are now, whatever its mode.
    Skills,
    /// A sealed turn's request as it was sent (`cache_report`, `explain_turn`'s cache
    /// prediction): its seal and its rounds, and the users only where its rounds' steers
    /// need their voices — none of the rows a fresh compile reads.
    Sent,
}

/// Whether a load reads the workspace, the users and the models: always, but for a
/// sealed turn's sent request whose rounds carry no steer (a continuation renders from
/// its seal and its rounds; only a steer's envelope names users).
pub(crate) fn references(read: Read, sealed: bool, rounds: &[Round]) -> bool {
    !(read == Read::Sent && sealed && !has_steers(rounds))
}

/// Whether any of the rounds carries a steer (with an author or without).
fn has_steers(rounds: &[Round]) -> bool {
    rounds.iter().any(|r| !r.steers.is_empty())
}

/// Whether the conversation row is read with the turn's stored body: for a compile, a
/// sealed turn with no rounds written since and not stateful (it sends the stored body's
/// stateful form) is its stored body, and nothing else is read (two statements: the
/// conversation with the seal's pointers, then the body's nodes).
pub(crate) fn stored_first(read: Read) -> bool {
    read == Read::Body
}

/// What to read once the conversation row and the turn are in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AfterTurn {
    /// The turn's rounds (a run's; the write triggers keep them to runs).
    pub(crate) rounds: bool,
    /// The turn's seal (what it froze, and its body).
    pub(crate) seal: bool,
}

/// The reads after the turn: rounds for a run, the seal of a sealed turn.
pub(crate) fn after_turn(turn: &Turn, sealed: bool) -> AfterTurn {
    AfterTurn {
        rounds: turn.is_run(),
        seal: sealed,
    }
}

/// A Side's captures to read (its parent conversation, the captured turn and how it
/// stood), for a turn that renders from history (not from a seal): `None` otherwise.
pub(crate) fn captures(
    conversation: &Conversation,
    capture: (Option<Uuid>, Option<Uuid>, CaptureState),
    sealed: bool,
) -> Option<(Option<Uuid>, Uuid, CaptureState)> {
    match (conversation.kind.as_str(), capture, sealed) {
        ("side", (parent, Some(captured_turn), state), false) => Some((parent, captured_turn, state)),
        _ => None,
    }
}

/// The users a compile names: the answerers, the poster, the author, the creator, the
/// memory owner, the sealed answerer, steer authors, and each captured parent's creator
/// and stored answerer (its turns read with their own); sorted, once each.
pub(crate) fn users(
    conversation: &Conversation,
    t: &Turn,
    sealed_answerer: Option<Uuid>,
    rounds: &[Round],
    captured: &[Captured],
) -> Vec<Uuid> {
    let mut ids: Vec<Uuid> = [
        t.answerer_id,
        conversation.answerer_id,
        t.poster_id,
        t.author_id,
        conversation.creator_id,
        t.memory_user_id,
        sealed_answerer,
    ]
    .into_iter()
    .flatten()
    .collect();
    ids.extend(steer_authors(rounds));
    ids.extend(
        captured
            .iter()
            .flat_map(|c| [c.host.creator_id, c.host.answerer_id])
            .flatten(),
    );
    ids.sort();
    ids.dedup();
    ids
}

/// The authors a round's steers name (their envelopes need handles).
fn steer_authors(rounds: &[Round]) -> impl Iterator<Item = Uuid> + '_ {
    rounds.iter().flat_map(|r| r.steers.iter().filter_map(|s| s.author_id))
}

/// The answerer of the turn among the users read: its own, else its conversation's.
pub(crate) fn answerer<'u>(conversation: &Conversation, t: &Turn, users: &'u HashMap<Uuid, User>) -> Option<&'u User> {
    t.answerer_id.or(conversation.answerer_id).and_then(|id| users.get(&id))
}

/// The model rows to read: the turn's model and its answerer's, which is read in the
/// same statement as the answerer's user row, so it is named by the answerer's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRows {
    /// The turn's own model, if it names one.
    pub names: Vec<String>,
    /// The answerer whose `model` is read too (the turn's, else its conversation's).
    pub answerer: Option<Uuid>,
}

/// The model rows a compile reads: none for a sealed turn (its seal froze the model row
/// it was compiled for).
pub(crate) fn models(conversation: &Conversation, t: &Turn, sealed: bool) -> Option<ModelRows> {
    (!sealed).then(|| ModelRows {
        names: t.model.iter().cloned().collect(),
        answerer: t.answerer_id.or(conversation.answerer_id),
    })
}

/// Whether a first compile asks for cache diagnostics, so the previous response of its
/// answerer is to be read (`Context::diagnostics_previous`): `cache_diagnostics` set true
/// at any level of its options (the turn's, the answerer's, its model's).
pub(crate) fn asks_cache_diagnostics(
    t: &Turn,
    answerer: Option<&User>,
    models: &HashMap<String, crate::rows::Model>,
    sealed: bool,
) -> bool {
    if sealed {
        return false;
    }
    let model = turn_model(t, answerer, models);
    nearest_option(t, answerer, model, "cache_diagnostics")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// The model a turn is compiled for, among those read: its own, else its answerer's.
fn turn_model<'m>(t: &Turn, answerer: Option<&User>, models: &'m HashMap<String, Model>) -> Option<&'m Model> {
    t.model
        .as_ref()
        .or(answerer.and_then(|a| a.model.as_ref()))
        .and_then(|m| models.get(m))
}

/// Request option `key` as the nearest level that sets it gives it: the turn's over the
/// answerer's over the model's (what a compile's merged options take).
fn nearest_option<'o>(
    t: &'o Turn,
    answerer: Option<&'o User>,
    model: Option<&'o Model>,
    key: &str,
) -> Option<&'o serde_json::Value> {
    let levels = [
        Some(&t.request_options),
        answerer.map(|a| &a.request_options),
        model.map(|m| &m.request_options),
    ];
    levels.into_iter().flatten().find_map(|o| o.0.get(key))
}

/// Which of the answerer's rows to read, and for whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswererRows {
    /// The answerer.
    pub answerer: Uuid,
    /// Whose memory: the answerer's, and the user the turn names (`memory_user_id`).
    pub owners: Vec<Uuid>,
    /// The answerer's application (skills may be bound to it).
    pub application: Option<String>,
    /// The poster's controlling Human (its persona document).
    pub human: Option<Uuid>,
    /// The skills the turn's callables can resolve to: `Some(recall_only)` for a run, or
    /// for `skills_for_turn` (with the recall-only skills, which a catalog never lists);
    /// `None`: no skills (nor where the turn names no callable).
    pub skills: Option<bool>,
    /// The runners the turn's callables name (their skills alone are listed).
    pub runners: Vec<String>,
}

/// The answerer's documents, memory and skills to read: none for a sealed turn (it
/// renders from its seal) nor under `raw` (the turn's own entries are the request),
/// except that `skills_for_turn` reads the skills as they are now (a seal of 0.4 froze
/// none). A run reads its recall-only skills too: the seal freezes the turn's whole set
/// (the catalog lists none of them).
pub(crate) fn answerer_rows(
    t: &Turn,
    a: &User,
    users: &HashMap<Uuid, User>,
    sealed: bool,
    read: Read,
) -> Option<AnswererRows> {
    let wanted = read == Read::Skills || (!sealed && a.prompt_mechanism != Mechanism::Raw);
    if !wanted {
        return None;
    }
    let human = t
        .poster_id
        .and_then(|p| users.get(&p))
        .and_then(User::controlling_human);
    Some(AnswererRows {
        answerer: a.id,
        owners: [Some(a.id), t.memory_user_id].into_iter().flatten().collect(),
        application: a.application.clone(),
        human,
        skills: (!t.callables.is_empty() && (t.is_run() || read == Read::Skills)).then_some(true),
        runners: t.callables.iter().filter_map(|c| c.runner.clone()).collect(),
    })
}

/// The users a batch of history names that the compile has not read yet: authors,
/// answerers, posters and steer authors; sorted, once each.
pub(crate) fn history_users(turns: &[HistoryTurn], known: &HashSet<Uuid>) -> Vec<Uuid> {
    let mut ids: Vec<Uuid> = turns
        .iter()
        .flat_map(|h| [h.turn.author_id, h.turn.answerer_id, h.turn.poster_id])
        .flatten()
        .chain(turns.iter().flat_map(|h| steer_authors(&h.rounds)))
        .filter(|id| !known.contains(id))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::{Mode, TurnKind, UserKind};

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    fn conversation(kind: &str) -> Conversation {
        Conversation {
            id: id(1),
            workspace_id: id(2),
            kind: kind.into(),
            answerer_id: Some(id(10)),
            creator_id: Some(id(11)),
            origin_channel: None,
            root_id: None,
        }
    }

    fn reply(mode: Mode) -> Turn {
        let mut t = Turn::new(id(100), 5, TurnKind::Reply);
        t.mode = mode;
        t.poster_id = Some(id(12));
        t.model = Some("claude".into());
        t
    }

    #[test]
    fn a_run_reads_its_rounds_and_a_sealed_turn_its_seal_or_only_its_body() {
        let run = reply(Mode::Run);
        let direct = reply(Mode::DirectReply);
        assert_eq!(
            after_turn(&run, false),
            AfterTurn {
                rounds: true,
                seal: false
            }
        );
        let sealed = after_turn(&direct, true);
        assert!(
            !sealed.rounds && sealed.seal,
            "a sealed turn's skills are the ones its seal froze"
        );
        assert!(stored_first(Read::Body) && !stored_first(Read::Explain) && !stored_first(Read::Skills));
        assert!(!stored_first(Read::Sent));
        // A sent request of a sealed turn reads no reference rows unless a steer needs them.
        assert!(!references(Read::Sent, true, &[]));
        assert!(references(Read::Sent, false, &[]), "an unsealed turn is compiled whole");
        assert!(references(Read::Explain, true, &[]));
    }

    #[test]
    fn only_an_unsealed_side_reads_its_captures() {
        let capture = (Some(id(7)), Some(id(8)), CaptureState::default());
        assert_eq!(
            captures(&conversation("side"), capture.clone(), false).map(|c| c.1),
            Some(id(8))
        );
        assert_eq!(captures(&conversation("side"), capture.clone(), true), None);
        assert_eq!(captures(&conversation("conversation"), capture, false), None);
        assert_eq!(
            captures(
                &conversation("side"),
                (Some(id(7)), None, CaptureState::default()),
                false
            ),
            None
        );
    }

    #[test]
    fn the_users_models_and_answerer_rows_a_compile_names() {
        let conv = conversation("conversation");
        let mut t = reply(Mode::Run);
        t.memory_user_id = Some(id(12));
        t.callables =
            crate::fields::parse_callables(r#"[{"name": "refund", "runner": "billing"}]"#).expect("callables");
        assert_eq!(
            users(&conv, &t, Some(id(13)), &[], &[]),
            vec![id(10), id(11), id(12), id(13)]
        );
        let mut agent = User::new(id(10), "lark", UserKind::Agent);
        agent.model = Some("claude".into());
        let human = User::new(id(12), "ada", UserKind::Human);
        let read: HashMap<Uuid, User> = [(id(10), agent.clone()), (id(12), human)].into_iter().collect();
        let a = answerer(&conv, &t, &read).expect("the conversation's answerer");
        assert_eq!(a.id, id(10));
        assert_eq!(
            models(&conv, &t, false),
            Some(ModelRows {
                names: vec!["claude".to_string()],
                answerer: Some(id(10))
            }),
            "the turn's model, and the answerer's by its id"
        );
        assert_eq!(models(&conv, &t, true), None, "a seal froze its model");
        assert_eq!(
            answerer_rows(&t, a, &read, false, Read::Body),
            Some(AnswererRows {
                answerer: id(10),
                owners: vec![id(10), id(12)],
                application: None,
                human: Some(id(12)),
                skills: Some(true),
                runners: vec!["billing".to_string()],
            }),
            "a run reads its recall-only skills too (the seal freezes the whole set)"
        );
        let mut plain = t.clone();
        plain.callables.clear();
        assert_eq!(
            answerer_rows(&plain, a, &read, false, Read::Body).map(|w| w.skills),
            Some(None),
            "no callable, no skills"
        );
        assert_eq!(answerer_rows(&t, a, &read, true, Read::Body), None);
        assert!(
            answerer_rows(&t, a, &read, true, Read::Skills).is_some(),
            "a sealed turn's skills as they are now, for a seal that froze none"
        );
        let mut direct = reply(Mode::DirectReply);
        direct.callables = t.callables.clone();
        assert_eq!(
            answerer_rows(&direct, a, &read, false, Read::Body).and_then(|r| r.skills),
            None
        );
        let mut raw = agent;
        raw.prompt_mechanism = Mechanism::Raw;
        assert_eq!(answerer_rows(&direct, &raw, &read, false, Read::Body), None);
        assert_eq!(
            answerer_rows(&direct, &raw, &read, false, Read::Skills).and_then(|r| r.skills),
            Some(true)
        );
    }

    #[test]
    fn a_history_batch_names_only_users_not_read_yet() {
        let mut t = reply(Mode::DirectReply);
        t.author_id = Some(id(20));
        let batch = [HistoryTurn {
            turn: t,
            rounds: Vec::new(),
            host: None,
        }];
        let known: HashSet<Uuid> = [id(12)].into_iter().collect();
        assert_eq!(history_users(&batch, &known), vec![id(20)]);
    }
}

#[cfg(test)]
mod load_tests {
    //! `load` against a fake `Store` that records each read it is asked for: the order
    //! and the choice of statements, decided here and nowhere else.
    use super::*;
    use crate::kinds::{Mode, TurnKind, UserKind};
    use crate::rows::Model;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    /// A conversation with one reply turn (a run), its answerer and its model.
    struct Fake {
        calls: Vec<&'static str>,
        conversation: bool,
        turn: Option<(Turn, bool)>,
        stored: Option<Body>,
        /// The answerer's model speaks the responses wire and asks for stateful mode.
        stateful: bool,
        /// What `previous_request` reads.
        previous: Option<PreviousRequest>,
    }

    impl Fake {
        fn new(turn: Option<(Turn, bool)>) -> Fake {
            Fake {
                calls: Vec::new(),
                conversation: true,
                turn,
                stored: None,
                stateful: false,
                previous: None,
            }
        }
    }

    fn run_turn() -> Turn {
        let mut t = Turn::new(id(100), 5, TurnKind::Reply);
        t.mode = Mode::Run;
        t.model = Some("claude".into());
        t
    }

    impl Store for Fake {
        type Stored = ();
        type Instant = ();
        fn first(
            &mut self,
            conv: Uuid,
            _: Uuid,
            stored_first: bool,
            _: &serde_json::Value,
        ) -> Result<Option<First<(), ()>>> {
            self.calls.push("first");
            Ok(self.conversation.then(|| First {
                conversation: Conversation {
                    id: conv,
                    workspace_id: id(2),
                    kind: "conversation".into(),
                    answerer_id: Some(id(10)),
                    creator_id: Some(id(11)),
                    origin_channel: None,
                    root_id: None,
                },
                capture: (None, None, CaptureState::default()),
                stored: (stored_first && self.stored.is_some()).then_some(()),
                turn: self.turn.clone(),
                created_at: Some(()),
                summary_floor: None,
                conversation_rounds: true,
            }))
        }
        fn stored_body(&mut self, _: (), _: Uuid, _: Uuid) -> Result<Option<Body>> {
            self.calls.push("stored_body");
            Ok(self.stored.clone())
        }
        fn missing_turn(&mut self, _: Uuid, turn: Uuid) -> Error {
            self.calls.push("missing_turn");
            Error::new(crate::error::Code::TurnNotFound, format!("turn {turn} does not exist"))
        }
        fn rounds(&mut self, _: Uuid, _: Uuid) -> Result<Vec<Round>> {
            self.calls.push("rounds");
            let call = r#"[{"type": "tool_call", "id": "c1", "name": "x", "input": {}}]"#;
            let result = r#"[{"call_id": "c1", "content": "ok"}]"#;
            Ok(vec![
                crate::testing::round(1, call, result, "[]", false),
                crate::testing::round(2, call, "[]", "[]", false),
            ])
        }
        fn seal(&mut self, _: Uuid, _: &Turn) -> Result<Sealed> {
            self.calls.push("seal");
            Err(Error::new(crate::error::Code::DataCorrupted, "no seal in this fake"))
        }
        fn captures(&mut self, _: Uuid, _: Option<Uuid>, _: Uuid, _: CaptureState) -> Result<Vec<Captured>> {
            self.calls.push("captures");
            Ok(Vec::new())
        }
        fn references(
            &mut self,
            conversation: &Conversation,
            _: Option<()>,
            users: &[Uuid],
            models: Option<ModelRows>,
        ) -> Result<Option<References>> {
            self.calls.push("references");
            assert_eq!(users, &[id(10), id(11)], "the answerer and the creator");
            let models = models.expect("an unsealed turn reads its models");
            assert_eq!(
                (models.names, models.answerer),
                (vec!["claude".to_string()], Some(id(10)))
            );
            let lark = User::new(id(10), "lark", UserKind::Agent);
            let mut claude = Model::new("claude", crate::kinds::Wire::Anthropic);
            if self.stateful {
                claude = Model::new("claude", crate::kinds::Wire::Responses);
                claude.request_options =
                    crate::wire::options::parse_request_options(r#"{"stateful": true}"#).expect("options");
            }
            Ok(Some(References {
                workspace: Workspace {
                    id: conversation.workspace_id,
                    name: Some("Acme".into()),
                    timezone: "UTC".into(),
                    paths: Vec::new(),
                },
                day: "2026-12-04".into(),
                users: [(id(10), lark)].into_iter().collect(),
                models: [("claude".to_string(), claude)].into_iter().collect(),
            }))
        }
        fn previous_response(&mut self, _: &Conversation, _: &Turn) -> Result<Option<String>> {
            self.calls.push("previous_response");
            Ok(None)
        }
        fn previous_request(&mut self, _: Uuid, _: i64, _: Uuid) -> Result<Option<PreviousRequest>> {
            self.calls.push("previous_request");
            Ok(self.previous.clone())
        }
        fn answerer_rows(
            &mut self,
            wanted: &AnswererRows,
            _: Uuid,
            _: Uuid,
        ) -> Result<(Vec<Document>, Vec<Memory>, Vec<Skill>)> {
            self.calls.push("answerer_rows");
            assert_eq!(wanted.answerer, id(10));
            Ok((Vec::new(), Vec::new(), Vec::new()))
        }
    }

    #[test]
    fn an_unsealed_run_reads_its_rounds_then_its_references_then_its_answerer_rows() {
        let mut store = Fake::new(Some((run_turn(), false)));
        let Loaded::Context(ctx) = load(&mut store, id(1), id(100), Read::Body).expect("a load") else {
            panic!("an unsealed turn is compiled, not read from storage");
        };
        assert_eq!(store.calls, ["first", "rounds", "references", "answerer_rows"]);
        assert_eq!(
            ctx.turn.date, "2026-12-04",
            "the turn's day, in the workspace's time zone"
        );
        assert_eq!(
            ctx.rounds.iter().map(|r| r.n).collect::<Vec<_>>(),
            [1],
            "a round whose calls await their results is not carried"
        );
        assert_eq!(ctx.workspace.name.as_deref(), Some("Acme"));
    }

    #[test]
    fn a_compile_of_a_stored_body_reads_nothing_else() {
        let mut store = Fake::new(None);
        store.stored = Some(Body {
            head: "{".into(),
            elements: Vec::new(),
            tail: "}".into(),
        });
        let Loaded::Stored(body) = load(&mut store, id(1), id(100), Read::Body).expect("a load") else {
            panic!("the stored body");
        };
        assert_eq!(body.text(), "{}");
        assert_eq!(store.calls, ["first", "stored_body"]);
        // An estimate never takes the stored body: it reads the turn.
        let mut store = Fake::new(None);
        store.stored = Some(body);
        let e = load(&mut store, id(1), id(100), Read::Explain).err().expect("no turn");
        assert_eq!(e.code, crate::error::Code::TurnNotFound);
        assert_eq!(store.calls, ["first", "missing_turn"]);
    }

    #[test]
    fn no_conversation_is_conversation_not_found_and_a_failed_read_stops_the_load() {
        let mut store = Fake::new(Some((run_turn(), false)));
        store.conversation = false;
        let e = load(&mut store, id(1), id(100), Read::Body)
            .err()
            .expect("no conversation");
        assert_eq!(e.code, crate::error::Code::ConversationNotFound);
        assert_eq!(store.calls, ["first"]);
        // A sealed turn reads its seal; when that read fails, nothing after it runs.
        let mut store = Fake::new(Some((run_turn(), true)));
        let e = load(&mut store, id(1), id(100), Read::Explain)
            .err()
            .expect("the seal fails");
        assert_eq!(e.code, crate::error::Code::DataCorrupted);
        assert_eq!(store.calls, ["first", "rounds", "seal"]);
    }

    #[test]
    fn a_stateful_turn_reads_its_previous_request_once_and_only_as_recorded() {
        let compiled = ["first", "rounds", "references", "answerer_rows"];
        // Not stateful: no previous request is read.
        let mut store = Fake::new(Some((run_turn(), false)));
        load(&mut store, id(1), id(100), Read::Body).expect("a load");
        assert_eq!(store.calls, compiled);
        // Stateful, and the previous answer was edited since it was recorded: no chain,
        // and that turn is not read.
        let row = PreviousRequest {
            turn: id(99),
            step: Some(0),
            response_id: Some("resp_1".into()),
            model: Some("claude".into()),
            input_tokens: Some(10),
            output_tokens: Some(5),
            as_recorded: false,
        };
        let mut store = Fake::new(Some((run_turn(), false)));
        (store.stateful, store.previous) = (true, Some(row.clone()));
        let Loaded::Context(ctx) = load(&mut store, id(1), id(100), Read::Explain).expect("a load") else {
            panic!("compiled");
        };
        assert_eq!(store.calls, [&compiled[..], &["previous_request"]].concat());
        assert!(ctx.previous.is_none());
        // As recorded: its turn is read as an explanation reads it, once (its own load
        // never chains, though this store says it is unsealed), and an unsealed one is
        // no chain.
        let mut store = Fake::new(Some((run_turn(), false)));
        (store.stateful, store.previous) = (
            true,
            Some(PreviousRequest {
                as_recorded: true,
                ..row
            }),
        );
        let Loaded::Context(ctx) = load(&mut store, id(1), id(100), Read::Body).expect("a load") else {
            panic!("compiled");
        };
        assert_eq!(
            store.calls,
            [&compiled[..], &["previous_request"], &compiled[..]].concat()
        );
        assert!(ctx.previous.is_none(), "no seal, no previous request");
        // A cache prediction's read never chains.
        let mut store = Fake::new(Some((run_turn(), false)));
        store.stateful = true;
        load(&mut store, id(1), id(100), Read::Sent).expect("a load");
        assert!(!store.calls.contains(&"previous_request"));
    }
}
