//! Items, parts and merging (docs/design.md, "Items and messages"). Blocks render items
//! `{role, parts}`; adjacent items of the same role merge into one message whose parts
//! are each item's own (never folded into one text). Items a run round carried on their
//! own (each tool result, the abort marker, each steer, the captures message) never
//! merge, and a round never merges into what precedes it: a request that carried a
//! round is a byte prefix of every later request of its turn.

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::kinds::{Role, Wire};
use crate::tokens::{Counter, IMAGE_TOKENS, MESSAGE_OVERHEAD};

/// What a round's tool call carries as its wire recorded it (a Gemini thought signature,
/// a Responses item id), by the keys that wire's folder declares (`Form::recorded_call_keys`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CallRecord(pub(crate) Vec<(&'static str, String)>);

impl CallRecord {
    /// The value recorded at `key`, if any.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v.as_str())
    }
}

/// The one part type: what a message of a request carries, whether it came from a
/// block, history, a raw input entry or a round's stored assistant parts (rounds store
/// these). Each wire says how it sends each kind (`Merging::unit`, every kind named).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PartKind {
    Text(String),
    /// `input` is the call's arguments as JSON text (an object), written once from the
    /// parsed value; `recorded` is what the call's wire recorded beside it, replayed on
    /// that wire only.
    ToolCall {
        id: String,
        name: String,
        input: crate::json_at::JsonText,
        recorded: CallRecord,
    },
    ToolResult {
        call_id: String,
        content: String,
        is_error: bool,
    },
    Image {
        media_type: String,
        data: String,
    },
    /// A provider's own block, replayed verbatim on its wire and dropped on the others:
    /// Anthropic `thinking`/`redacted_thinking`, a Responses `reasoning` item, a Gemini
    /// thought part. `json` is the block exactly as that wire spells it.
    Opaque {
        wire: Wire,
        json: crate::json_at::JsonText,
        /// What the block is counted by: its readable or encrypted text (a thinking
        /// block's thinking, a reasoning item's summary and encrypted content), or its
        /// JSON for a block pgprompt does not interpret.
        text: String,
    },
    /// The assistant's text as its own wire recorded it: `json` replays it there (a
    /// Responses message item with its id, a Gemini text part with its thought
    /// signature); every other wire reads `text`.
    Said {
        text: String,
        wire: Wire,
        json: crate::json_at::JsonText,
    },
}

impl PartKind {
    /// About how many bytes the part's texts take (a buffer's capacity).
    pub(crate) fn size(&self) -> usize {
        match self {
            PartKind::Text(t) => t.len(),
            PartKind::ToolCall { id, name, input, .. } => id.len() + name.len() + input.len(),
            PartKind::ToolResult { call_id, content, .. } => call_id.len() + content.len(),
            PartKind::Image { media_type, data } => media_type.len() + data.len(),
            PartKind::Opaque { json, .. } => json.len(),
            PartKind::Said { text, json, .. } => text.len() + json.len(),
        }
    }

    /// The words of a text or said part.
    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            PartKind::Text(t) | PartKind::Said { text: t, .. } => Some(t),
            PartKind::ToolCall { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Image { .. }
            | PartKind::Opaque { .. } => None,
        }
    }

    /// The id of a tool call.
    pub(crate) fn call_id(&self) -> Option<&str> {
        match self {
            PartKind::ToolCall { id, .. } => Some(id),
            PartKind::Text(_)
            | PartKind::Said { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Image { .. }
            | PartKind::Opaque { .. } => None,
        }
    }

    /// Whether the part is an image.
    pub(crate) fn is_image(&self) -> bool {
        match self {
            PartKind::Image { .. } => true,
            PartKind::Text(_)
            | PartKind::Said { .. }
            | PartKind::ToolCall { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Opaque { .. } => false,
        }
    }

    /// Whether the part is a tool's result.
    pub(crate) fn is_tool_result(&self) -> bool {
        match self {
            PartKind::ToolResult { .. } => true,
            PartKind::Text(_)
            | PartKind::Said { .. }
            | PartKind::ToolCall { .. }
            | PartKind::Image { .. }
            | PartKind::Opaque { .. } => false,
        }
    }

    /// Whether a cache mark may close the part on `wire`: a part the wire sends, and not a
    /// provider's own block (a thinking or server-tool block takes no mark).
    pub(crate) fn markable_on(&self, wire: Wire) -> bool {
        match self {
            PartKind::Opaque { .. } => false,
            PartKind::Text(_)
            | PartKind::Said { .. }
            | PartKind::ToolCall { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Image { .. } => self.carried_on(wire),
        }
    }

    /// The part as `wire` reads it: a `Said` part becomes its text off its own wire.
    pub(crate) fn on(&self, wire: Wire) -> std::borrow::Cow<'_, PartKind> {
        match self {
            PartKind::Said { text, wire: w, .. } if *w != wire => std::borrow::Cow::Owned(PartKind::Text(text.clone())),
            PartKind::Text(_)
            | PartKind::Said { .. }
            | PartKind::ToolCall { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Image { .. }
            | PartKind::Opaque { .. } => std::borrow::Cow::Borrowed(self),
        }
    }
}

/// A part with its token count (for the model's tokenizer).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Part {
    pub(crate) kind: PartKind,
    pub(crate) tokens: u32,
}

/// What a block or history entry renders.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    pub(crate) role: Role,
    pub(crate) parts: Vec<Part>,
    /// A round's own user message: never merged with a neighbour.
    pub(crate) separate: bool,
    /// The first item of a round: never merged into what precedes it.
    pub(crate) boundary: bool,
    /// The index of the block that rendered it (estimate attribution).
    pub(crate) block: usize,
}

impl Item {
    pub(crate) fn new(role: Role, parts: Vec<Part>, block: usize) -> Item {
        Item {
            role,
            parts,
            separate: false,
            boundary: false,
            block,
        }
    }

    pub(crate) fn text(role: Role, text: String, tokens: u32, block: usize) -> Item {
        Item::new(
            role,
            vec![Part {
                kind: PartKind::Text(text),
                tokens,
            }],
            block,
        )
    }
}

/// A compiled message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Message {
    pub(crate) role: Role,
    pub(crate) parts: Vec<Part>,
    /// The block of each part (same length as `parts`).
    pub(crate) blocks: Vec<usize>,
    /// A raw entry whose content was stored as a string: the wire keeps it a string.
    pub(crate) plain: bool,
    /// Never merged into the message before it, on any wire (a round starts here).
    pub(crate) boundary: bool,
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Message", 2)?;
        st.serialize_field("role", self.role.as_str())?;
        st.serialize_field("parts", &self.parts)?;
        st.end()
    }
}

/// Merges items into messages: adjacent same-role items join, unless either is
/// separate or the later one is a boundary.
pub(crate) fn merge(items: impl IntoIterator<Item = Item>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let mut last_separate = true;
    for item in items {
        if item.parts.is_empty() {
            continue;
        }
        let joins =
            !item.separate && !item.boundary && !last_separate && out.last().is_some_and(|m| m.role == item.role);
        last_separate = item.separate;
        let block = item.block;
        if joins {
            let m = out.last_mut().expect("checked above");
            m.blocks.extend(std::iter::repeat_n(block, item.parts.len()));
            m.parts.extend(item.parts);
        } else {
            out.push(Message {
                role: item.role,
                blocks: vec![block; item.parts.len()],
                parts: item.parts,
                plain: false,
                boundary: item.boundary,
            });
        }
    }
    out
}

/// How a wire sends a part of a message of a role: the wire's own unit of cost (each
/// element costs [`MESSAGE_OVERHEAD`] beside its parts). `wire::tests` holds this model to
/// the renderers' layouts on every wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Not sent on this wire: another provider's block, an image outside a user message
    /// on chat.
    Dropped,
    /// An element of its own: a tool result on chat and responses, every assistant part
    /// on responses.
    Own,
    /// A part of its message's element; on anthropic and gemini, of the element of the
    /// run of same-side messages it merges into.
    Shared,
}

impl Unit {
    /// A wire whose message is one element with every part in it (anthropic's and
    /// converse's `content` blocks, gemini's `parts`): each kind is shared, whatever the
    /// role. Every kind is named, so a new one is decided here for those wires.
    pub(crate) fn in_its_message(kind: &PartKind) -> Unit {
        match kind {
            PartKind::Text(_)
            | PartKind::ToolCall { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Image { .. }
            | PartKind::Opaque { .. }
            | PartKind::Said { .. } => Unit::Shared,
        }
    }
}

/// How a wire merges what it sends: the part of a wire's decisions the cost model reads.
/// Each wire's `Form` is one (`wire/form.rs`); this file asks it and names no wire.
pub(crate) trait Merging {
    /// The wire it is (a provider's own block rides its wire only).
    fn wire(&self) -> Wire;

    /// How the wire sends a part of a message of `role` (a part it carries: a provider's
    /// own block of another wire is dropped before this is asked). Every kind is named
    /// in each wire's answer: a new kind is a compile error there, not a silent drop.
    fn unit(&self, kind: &PartKind, role: Role) -> Unit;

    /// Whether neighbouring messages of one side (user or assistant) merge into one
    /// element, unless a round starts between them (anthropic, gemini, converse); on
    /// the other wires a message is an element of its own, and a message that sends
    /// nothing still separates its neighbours.
    fn merges_sides(&self) -> bool;
}

impl PartKind {
    /// Whether `wire` sends the part at all: a provider's own block rides its wire only.
    pub(crate) fn carried_on(&self, wire: Wire) -> bool {
        match self {
            PartKind::Opaque { wire: w, .. } => *w == wire,
            PartKind::Text(_)
            | PartKind::Said { .. }
            | PartKind::ToolCall { .. }
            | PartKind::ToolResult { .. }
            | PartKind::Image { .. } => true,
        }
    }

    /// How `wire` sends this part of a message of `role`.
    pub(crate) fn unit(&self, wire: &dyn Merging, role: Role) -> Unit {
        if !self.carried_on(wire.wire()) {
            return Unit::Dropped;
        }
        wire.unit(self, role)
    }
}

/// What `items` add to a request of `wire` when `following` comes right after them —
/// history is funded newest first, so what follows is already known — and what they
/// leave for the items before them. The parts cost their tokens; each element the wire
/// sends costs its overhead, charged to the newest item in it (an item that joins the
/// element after it adds only its parts). Exact when what precedes the items does not
/// merge into them, and never less than what they add.
pub(crate) fn marginal_cost(
    items: &[Item],
    following: Option<Follower>,
    wire: &dyn Merging,
) -> (u32, Option<Follower>) {
    let mut cost = 0;
    let mut next = following;
    for item in items.iter().rev() {
        let units: Vec<Unit> = item.parts.iter().map(|p| p.kind.unit(wire, item.role)).collect();
        if units.iter().all(|u| *u == Unit::Dropped) && wire.merges_sides() {
            // Sends nothing: what comes before meets what comes after (on chat and
            // responses it is still a message of its own, which nothing merges across);
            // a system run before it is not the one after it. Within the message after
            // it, it is that message's start.
            if let Some(f) = next.as_mut() {
                if f.same_message(item) {
                    f.joins_previous = !item.separate && !item.boundary;
                    f.boundary |= item.boundary;
                } else {
                    f.gap = true;
                }
            }
            continue;
        }
        let mut open = next.is_some_and(|f| f.shared && f.continues(item, wire));
        for (part, unit) in item.parts.iter().zip(units) {
            match unit {
                Unit::Dropped => {}
                Unit::Own => cost = crate::tokens::add(cost, MESSAGE_OVERHEAD.saturating_add(part.tokens)),
                Unit::Shared => {
                    if !open {
                        cost = crate::tokens::add(cost, MESSAGE_OVERHEAD);
                        open = true;
                    }
                    cost = crate::tokens::add(cost, part.tokens);
                }
            }
        }
        next = Some(Follower {
            role: item.role,
            joins_previous: !item.separate && !item.boundary,
            boundary: item.boundary,
            shared: open,
            gap: false,
        });
    }
    (cost, next)
}

/// What the cost of an item looks at in the item that follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Follower {
    pub(crate) role: Role,
    /// It may join the item before it into one message (neither separate nor a boundary).
    pub(crate) joins_previous: bool,
    /// It starts a round: its message is never merged into the one before.
    pub(crate) boundary: bool,
    /// The element it is in has a shared part already (its overhead is charged).
    pub(crate) shared: bool,
    /// A message that sends nothing comes between it and the item before.
    pub(crate) gap: bool,
}

impl Follower {
    /// Whether `item`, right before this one, merges into this one's message.
    fn same_message(&self, item: &Item) -> bool {
        self.role == item.role && self.joins_previous && !item.separate && !self.gap
    }

    /// Whether `item`, right before this one, sends its shared parts in this one's
    /// element: the same message (same role, neither separate nor a boundary between);
    /// on anthropic and gemini also the same side (user or assistant) unless a round
    /// starts here, but never a system item before another role or a gap (a leading
    /// system run is lifted out of the list, and may end there).
    fn continues(&self, item: &Item, wire: &dyn Merging) -> bool {
        let same_message = self.same_message(item);
        if !wire.merges_sides() {
            return same_message;
        }
        let side = |r: Role| r == Role::Assistant;
        let lifted = item.role == Role::System && (self.role != Role::System || self.gap);
        same_message || (side(self.role) == side(item.role) && !self.boundary && !lifted)
    }
}

/// About how many bytes the items' texts take.
pub(crate) fn text_size(items: &[Item]) -> usize {
    items
        .iter()
        .flat_map(|i| &i.parts)
        .map(|p| p.kind.size())
        .fold(0usize, usize::saturating_add)
}

/// A part with its count for `counter`'s tokenizer.
pub(crate) fn counted(kind: PartKind, counter: &mut Counter<'_>) -> Part {
    let tokens = match &kind {
        PartKind::Text(t) | PartKind::Said { text: t, .. } => counter.count(t),
        PartKind::ToolCall { name, input, .. } => counter.count(name) + counter.count(input),
        PartKind::ToolResult { content, .. } => counter.count(content),
        PartKind::Image { .. } => IMAGE_TOKENS,
        PartKind::Opaque { text, .. } => counter.count(text),
    };
    Part { kind, tokens }
}

/// A text part.
pub(crate) fn text_part(text: impl Into<String>, tokens: u32) -> Part {
    Part {
        kind: PartKind::Text(text.into()),
        tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::REQUEST_OVERHEAD;

    // Oracles: the whole list's cost, and per block, computed after merging.
    /// The exact cost of a message list: parts + 3 per message + 3 for the request.
    pub(crate) fn total_cost(messages: &[Message]) -> u32 {
        messages
            .iter()
            .map(|m| m.parts.iter().map(|p| p.tokens).sum::<u32>() + MESSAGE_OVERHEAD)
            .sum::<u32>()
            + REQUEST_OVERHEAD
    }

    /// Per-block costs of a message list: each part's tokens go to its block, each
    /// message's overhead to the block of its first part.
    pub(crate) fn block_costs(messages: &[Message], blocks: usize) -> Vec<u32> {
        let mut costs = vec![0u32; blocks];
        for m in messages {
            for (p, b) in m.parts.iter().zip(&m.blocks) {
                costs[*b] += p.tokens;
            }
            if let Some(b) = m.blocks.first() {
                costs[*b] += MESSAGE_OVERHEAD;
            }
        }
        costs
    }

    fn t(role: Role, text: &str, block: usize) -> Item {
        Item::text(role, text.into(), 1, block)
    }

    #[test]
    fn adjacent_same_role_items_merge_keeping_parts() {
        let m = merge(vec![
            t(Role::System, "a", 0),
            t(Role::System, "b", 1),
            t(Role::User, "c", 2),
            t(Role::User, "d", 3),
        ]);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].parts.len(), 2);
        assert_eq!(m[0].blocks, vec![0, 1]);
        assert_eq!(
            m[1].parts.iter().map(|p| p.kind.text().unwrap()).collect::<Vec<_>>(),
            vec!["c", "d"]
        );
    }

    #[test]
    fn separate_items_stand_alone() {
        let mut r = t(Role::User, "result", 0);
        r.separate = true;
        let m = merge(vec![t(Role::User, "a", 0), r.clone(), r, t(Role::User, "b", 0)]);
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn costs_add_up() {
        let m = merge(vec![
            t(Role::System, "a", 0),
            t(Role::System, "b", 1),
            t(Role::User, "c", 2),
        ]);
        assert_eq!(total_cost(&m), 3 + 3 + 3 + 3);
        assert_eq!(block_costs(&m, 3), vec![4, 1, 4]);
        assert_eq!(
            block_costs(&m, 3).iter().sum::<u32>() + REQUEST_OVERHEAD,
            total_cost(&m)
        );
    }

    #[test]
    fn marginal_costs_add_up_to_the_merged_cost() {
        let wire = Wire::Chat;
        let tail = vec![t(Role::User, "input", 1)];
        let older = vec![t(Role::User, "a", 0), t(Role::Assistant, "b", 0)];
        let newer = vec![t(Role::Assistant, "c", 0), t(Role::User, "d", 0)];
        let (tail_cost, after_tail) = marginal_cost(&tail, None, wire.form());
        // Newest first: d merges into the input, c into nothing after it but d's message.
        let (newer_cost, after_newer) = marginal_cost(&newer, after_tail, wire.form());
        assert_eq!(newer_cost, 1 + 1 + 3);
        let (older_cost, _) = marginal_cost(&older, after_newer, wire.form());
        assert_eq!(older_cost, 1 + 3 + 1, "b merges into c");
        let all: Vec<Item> = older.iter().chain(&newer).chain(&tail).cloned().collect();
        assert_eq!(
            total_cost(&merge(all)),
            older_cost + newer_cost + tail_cost + REQUEST_OVERHEAD
        );
        let mut sep = t(Role::User, "result", 0);
        sep.separate = true;
        assert_eq!(
            marginal_cost(&[sep], after_tail, wire.form()).0,
            1 + 3,
            "a round's own item never merges"
        );
    }

    fn call(id: &str) -> Part {
        Part {
            kind: PartKind::ToolCall {
                id: id.into(),
                name: "read".into(),
                input: "{}".into(),
                recorded: Default::default(),
            },
            tokens: 2,
        }
    }

    fn result(id: &str) -> Part {
        Part {
            kind: PartKind::ToolResult {
                call_id: id.into(),
                content: "ok".into(),
                is_error: false,
            },
            tokens: 1,
        }
    }

    #[test]
    fn each_wire_costs_its_own_elements() {
        // A round: a text and two calls, then their results.
        let said = Item::new(Role::Assistant, vec![text_part("on it", 2), call("a"), call("b")], 0);
        let mut results = Item::new(Role::User, vec![result("a"), result("b")], 0);
        results.separate = true;
        let round = [said, results];
        let cost = |wire: Wire| marginal_cost(&round, None, wire.form()).0;
        // anthropic and gemini: one message each side.
        assert_eq!(cost(Wire::Anthropic), (3 + 6) + (3 + 2));
        assert_eq!(cost(Wire::Gemini), (3 + 6) + (3 + 2));
        // chat: one assistant message, a tool message per result.
        assert_eq!(cost(Wire::Chat), (3 + 6) + (3 + 1) * 2);
        // responses: every assistant part and every result an item.
        assert_eq!(cost(Wire::Responses), (3 + 2) + (3 + 2) * 2 + (3 + 1) * 2);
        // Another provider's block is not sent, and costs nothing.
        let thinking = Part {
            kind: PartKind::Opaque {
                wire: Wire::Anthropic,
                json: "{}".into(),
                text: "{}".into(),
            },
            tokens: 50,
        };
        let alone = [Item::new(Role::Assistant, vec![thinking], 0)];
        assert_eq!(marginal_cost(&alone, None, Wire::Chat.form()).0, 0);
        assert_eq!(marginal_cost(&alone, None, Wire::Anthropic.form()).0, 53);
    }
}
