//! What a wire decides, as one trait ([`Form`]) and the values its answers take. Each
//! wire's folder implements it; `Wire::form` (in `mod.rs`) registers them. This file
//! reads no wire's folder.

use super::count::Members;
use super::shape::{Body, Rendered, Request, ToolSpelling};
use crate::items::{Merging, Message};
use crate::options::Options;
use crate::rows::Model;

/// How a wire marks where a provider's prompt cache may end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marking {
    /// On any block that can carry a mark (Anthropic's `cache_control`, Converse's
    /// `cachePoint`); the provider caches at its marks only.
    Blocks,
    /// On input parts, and on the request's last such part besides (OpenAI's explicit
    /// breakpoints: OpenAI caches nothing it is not told to).
    InputParts,
    /// Nowhere: the provider caches by itself, or not at all.
    Unmarked,
}

/// Where a body of a wire keeps what a prompt cache reads (the cache report walks a
/// sealed body by these keys).
#[derive(Debug)]
pub(crate) struct Keys {
    /// The lifted system field (`""`: the wire has none).
    pub(crate) system: &'static str,
    /// The body's one list.
    pub(crate) list: &'static str,
    /// A message's parts (`""`: an element is one block).
    pub(crate) parts: &'static str,
    /// The path to the tool definitions.
    pub(crate) tools: &'static [&'static str],
    /// The key of a mark that is a block of its own, after the block it closes
    /// (Converse's `cachePoint`); `None` where a mark is a key of its block.
    pub(crate) mark_block: Option<&'static str>,
    /// The key of a mark that is a key of the block it closes (Anthropic's
    /// `cache_control`, OpenAI's `prompt_cache_breakpoint`); `None`: the wire has none.
    pub(crate) mark_key: Option<&'static str>,
}

/// How a provider's prompt cache reads a body of a wire, for a model's profile.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CacheRules {
    /// The cache is read and written at marks only (a body without one reads nothing).
    pub(crate) at_marks_only: bool,
    /// How many blocks back from a mark a lookup looks (`None`: any).
    pub(crate) lookback: Option<usize>,
    /// An implicit cache's growth past the minimum, in tokens.
    pub(crate) step: Option<u32>,
    /// A mark that names no TTL keeps five minutes (otherwise the request's TTL).
    pub(crate) unnamed_five_minutes: bool,
}

/// Everything a wire decides, behind one trait (with [`Merging`], what the cost model
/// reads): each wire is a folder of this module
/// (`anthropic/`, `chat/`, `responses/`, `gemini/`, `converse/`) with one value that
/// implements it, registered in `Wire::form`. The rest of the core asks the form; it
/// never matches on the wire.
pub(crate) trait Form: Merging + Sync {
    /// The whole request: head, elements and tail, with its layout.
    fn render(&self, req: &Request<'_>) -> Rendered;

    /// The provider that made the wire: the dialect a model row speaks when neither it
    /// nor its profile names one the wire speaks.
    fn maker(&self) -> crate::kinds::Provider;

    /// Whether the wire has a dialect of `provider` (`models.provider`; its CHECK asks,
    /// `prompt._dialect_known`): its maker's alone unless the wire's folder says more.
    fn speaks(&self, provider: crate::kinds::Provider) -> bool {
        provider == self.maker()
    }

    /// Refuses what the dialect of `provider` cannot say of the request options, and a
    /// model row it cannot serve (`native_images` where it takes no image), as (option's
    /// pointer, why); an empty pointer is the model row's. Nothing, unless the wire's
    /// folder says more.
    fn check_dialect(
        &self,
        _o: &Options,
        _provider: crate::kinds::Provider,
        _native_images: bool,
    ) -> Result<(), crate::options::Refusal> {
        Ok(())
    }

    /// The elements alone of `req.messages` (a continuation's appended rounds: no system
    /// field lifted), with the parts each carries.
    fn elements(&self, req: &Request<'_>) -> super::shape::Elements;

    /// How the wire spells its tool definitions, and its tool search if it has one.
    fn tools(&self) -> &'static ToolSpelling;

    /// Where a body of this wire carries cache marks, for a model of `profile`.
    fn marking(&self, profile: Option<&crate::profile::Profile>) -> Marking;

    /// Whether a system item keeps its place in the list wherever it stands (chat and
    /// responses; anthropic and converse for a model whose profile takes system
    /// messages); otherwise only the leading run of system items is lifted out and a
    /// later one is spoken as user text.
    fn system_in_place(&self, model: Option<&Model>) -> bool;

    /// A provider's response body read, if `o` is of this wire's response shape.
    fn read_response(&self, o: &crate::json_at::Obj<'_>) -> Option<crate::error::Result<crate::response::Response>>;

    /// Refuses what the wire cannot say of the request options, whatever the model (the
    /// shape of its own fields), as (option's pointer, why).
    fn check_options(&self, o: &Options, max_tokens: i32) -> Result<(), crate::options::Refusal>;

    /// Refuses what the wire does not take from a model without a profile (0.3's rules).
    fn check_unprofiled(&self, _o: &Options) -> Result<(), crate::options::Refusal> {
        Ok(())
    }

    /// Whether a conversation must open with the user (Bedrock: "A conversation must start
    /// with a user message"): history trimmed down to an answer first is trimmed one entry
    /// further (`compile::select`).
    fn opens_with_user(&self) -> bool {
        false
    }

    /// The options only this wire (and any other listing the same declaration) takes,
    /// declared in its folder: every other wire refuses them, naming the wires that take
    /// them; the neutral vocabulary is `crate::options`'s.
    fn own_options(&self) -> &'static [&'static crate::options::OwnOption] {
        &[]
    }

    /// The part types a round records of this wire (its thinking, its reasoning),
    /// declared in its folder: read and replayed as its blocks, opaque to every other wire.
    fn recorded_types(&self) -> &'static [&'static crate::part_json::RecordedType] {
        &[]
    }

    /// The keys a round's tool call carries as this wire recorded it (replayed on this
    /// wire, dropped on the others), declared in its folder.
    fn recorded_call_keys(&self) -> &'static [&'static str] {
        &[]
    }

    /// The keys a round's text carries as this wire recorded it, declared in its folder:
    /// such a text is said text on this wire, plain text on the others.
    fn recorded_text(&self) -> Option<&'static crate::part_json::RecordedText> {
        None
    }

    /// Whether the provider explains a cache miss against a previous response
    /// (`request_options.cache_diagnostics`).
    fn takes_cache_diagnostics(&self) -> bool {
        false
    }

    /// What the provider's token-count endpoint takes for the request `body` is (its
    /// members as `members`, read without parsing its elements again), for `model`: the body's own bytes, each key the endpoint
    /// takes copied as the body spells it; `count_unavailable` without an endpoint.
    fn count_body(
        &self,
        model: Option<&str>,
        body: &super::shape::Body,
        members: &Members,
    ) -> crate::error::Result<String>;

    /// Where the body keeps its system field, list, parts, tools and marks.
    fn keys(&self) -> &'static Keys;

    /// How the provider's prompt cache reads the body, for a model of `profile`.
    fn cache_rules(&self, profile: Option<&crate::profile::Profile>) -> CacheRules;

    /// Whether the provider stores responses and chains them (Responses'
    /// `previous_response_id`): `request_options.stateful` is taken, a stateful turn's
    /// previous request read, and reasoning replayed from its encrypted content when
    /// nothing is stored.
    fn stores_responses(&self) -> bool {
        false
    }

    /// What a request whose model's reasoning is replayed adds to its options (a wire
    /// that stores responses asks for the encrypted reasoning when nothing is stored);
    /// by default, nothing.
    fn replay_reasoning(&self, _o: &mut Options) {}

    /// The form a chained request is sent in (a wire that [`Form::stores_responses`]):
    /// the full `body` from the chain's `cut` on, after the response `previous` names,
    /// the leading system text where the wire takes it apart. A wire that keeps no state
    /// sends the body whole.
    fn chained(&self, body: &Body, _previous: Option<&str>, _cut: usize) -> crate::error::Result<Body> {
        Ok(body.clone())
    }

    /// The leading system elements of a body's list (what a chained request sends apart):
    /// how many, and their texts joined.
    fn lead(&self, _elements: &[String]) -> (usize, Option<String>) {
        (0, None)
    }

    /// Whether an element is one the model's response added (an answer, a call, a
    /// provider's item), not one this side wrote.
    fn is_output(&self, _element: &str) -> bool {
        false
    }

    /// Whether an element is reasoning: what the provider holds whatever a later body
    /// replays of it.
    fn is_reasoning(&self, _element: &str) -> bool {
        false
    }

    /// Whether a request carries a request-level cache mark (Anthropic's top-level
    /// `cache_control`), which a run's continuation moves to its end.
    fn request_marker(&self) -> bool {
        false
    }

    /// Refuses what the provider refuses though its request type takes it (a rule across
    /// fields), before the body is rendered. Required: each wire says what its provider
    /// refuses, or that it refuses nothing its types take.
    fn check(&self, req: &Request<'_>, turn: &str) -> crate::error::Result<()>;

    /// What [`Form::check`] refuses, for a continuation: `messages` (the rounds) appended
    /// after the sealed element `last`. Required, as [`Form::check`] is.
    fn check_rounds(
        &self,
        last: Option<&str>,
        messages: &[Message],
        model: Option<&Model>,
        turn: &str,
    ) -> crate::error::Result<()>;

    /// The tail of a run's continuation: the sealed body's own unless the wire marks the
    /// request as a whole (Anthropic's request-level cache marker).
    fn continuing_tail(&self, tail: &str, _model: Option<&Model>) -> String {
        tail.to_string()
    }
}
