//! Items, parts and merging (docs/design.md, "Items and messages"). Blocks render items
//! `{role, parts}`; adjacent items of the same role merge into one message whose parts
//! are each item's own (never folded into one text). Items a run round carried on their
//! own (each tool result, the abort marker, each steer, the captures message) never
//! merge, and a round never merges into what precedes it: a request that carried a
//! round is a byte prefix of every later request of its turn.

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

use crate::kinds::{Role, Wire};
use crate::tokens::{Counter, IMAGE_TOKENS, MESSAGE_OVERHEAD};

#[derive(Debug, Clone, PartialEq)]
pub enum PartKind {
    Text(String),
    /// `input` is the call's arguments as JSON text (an object); `signature` is the
    /// thought signature Gemini attached to the call (replayed on Gemini only).
    ToolCall {
        id: String,
        name: String,
        input: String,
        signature: Option<String>,
        /// The Responses item id of the call (`fc_…`), replayed on that wire.
        item_id: Option<String>,
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
        json: String,
    },
    /// The assistant's text as its own wire recorded it: `json` replays it there (a
    /// Responses message item with its id, a Gemini text part with its thought
    /// signature); every other wire reads `text`.
    Said {
        text: String,
        wire: Wire,
        json: String,
    },
}

impl PartKind {
    /// About how many bytes the part's texts take (a buffer's capacity).
    pub fn size(&self) -> usize {
        match self {
            PartKind::Text(t) => t.len(),
            PartKind::ToolCall { id, name, input, .. } => id.len() + name.len() + input.len(),
            PartKind::ToolResult { call_id, content, .. } => call_id.len() + content.len(),
            PartKind::Image { media_type, data } => media_type.len() + data.len(),
            PartKind::Opaque { json, .. } => json.len(),
            PartKind::Said { text, json, .. } => text.len() + json.len(),
        }
    }

    pub fn text(&self) -> Option<&str> {
        match self {
            PartKind::Text(t) | PartKind::Said { text: t, .. } => Some(t),
            _ => None,
        }
    }

    /// The part as `wire` reads it: a `Said` part becomes its text off its own wire.
    pub fn on(&self, wire: Wire) -> std::borrow::Cow<'_, PartKind> {
        match self {
            PartKind::Said { text, wire: w, .. } if *w != wire => std::borrow::Cow::Owned(PartKind::Text(text.clone())),
            other => std::borrow::Cow::Borrowed(other),
        }
    }
}

/// A part with its token count (for the model's tokenizer).
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub kind: PartKind,
    pub tokens: u32,
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.kind {
            PartKind::Text(text) | PartKind::Said { text, .. } => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("type", "text")?;
                m.serialize_entry("text", text)?;
                m.end()
            }
            PartKind::ToolCall { id, name, input, .. } => {
                let mut m = s.serialize_map(Some(4))?;
                m.serialize_entry("type", "tool_call")?;
                m.serialize_entry("id", id)?;
                m.serialize_entry("name", name)?;
                // The input is stored as JSON text; it serializes as the value it spells.
                let value: serde_json::Value = serde_json::from_str(input).map_err(serde::ser::Error::custom)?;
                m.serialize_entry("input", &value)?;
                m.end()
            }
            PartKind::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let mut m = s.serialize_map(Some(4))?;
                m.serialize_entry("type", "tool_result")?;
                m.serialize_entry("call_id", call_id)?;
                m.serialize_entry("content", content)?;
                m.serialize_entry("is_error", is_error)?;
                m.end()
            }
            PartKind::Image { media_type, data } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("type", "image")?;
                m.serialize_entry("media_type", media_type)?;
                m.serialize_entry("data", data)?;
                m.end()
            }
            PartKind::Opaque { wire, json } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("type", "provider")?;
                m.serialize_entry("wire", wire.as_str())?;
                let value: serde_json::Value = serde_json::from_str(json).map_err(serde::ser::Error::custom)?;
                m.serialize_entry("block", &value)?;
                m.end()
            }
        }
    }
}

/// What a block or history entry renders.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub role: Role,
    pub parts: Vec<Part>,
    /// A round's own user message: never merged with a neighbour.
    pub separate: bool,
    /// The first item of a round: never merged into what precedes it.
    pub boundary: bool,
    /// The index of the block that rendered it (estimate attribution).
    pub block: usize,
}

impl Item {
    pub fn new(role: Role, parts: Vec<Part>, block: usize) -> Item {
        Item {
            role,
            parts,
            separate: false,
            boundary: false,
            block,
        }
    }

    pub fn text(role: Role, text: String, tokens: u32, block: usize) -> Item {
        Item::new(
            role,
            vec![Part {
                kind: PartKind::Text(text),
                tokens,
            }],
            block,
        )
    }

    pub fn parts_tokens(&self) -> u32 {
        crate::tokens::sum(self.parts.iter().map(|p| p.tokens))
    }
}

/// A compiled message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
    /// The block of each part (same length as `parts`).
    pub blocks: Vec<usize>,
    /// A raw entry whose content was stored as a string: the wire keeps it a string.
    pub plain: bool,
    /// Never merged into the message before it, on any wire (a round starts here).
    pub boundary: bool,
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
pub fn merge(items: impl IntoIterator<Item = Item>) -> Vec<Message> {
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

/// What `items` add to the request when `following` (role, separate) comes right
/// after them — history is funded newest first, so what follows is already known. Each
/// message's overhead is charged to its last item: an item that merges into the one
/// after it adds only its parts.
pub fn marginal_cost(items: &[Item], following: Option<Follower>) -> u32 {
    let mut cost = 0;
    let mut next = following;
    for item in items.iter().rev().filter(|i| !i.parts.is_empty()) {
        let merges = matches!(next, Some(f) if f.role == item.role && f.joins_previous && !item.separate);
        if !merges {
            cost = crate::tokens::add(cost, MESSAGE_OVERHEAD);
        }
        cost = crate::tokens::add(cost, item.parts_tokens());
        next = Some(Follower::of(item));
    }
    cost
}

/// What a merge looks at in the item that follows: its role, and whether it may join
/// the item before it (neither separate nor a boundary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Follower {
    pub role: Role,
    pub joins_previous: bool,
}

impl Follower {
    pub fn of(item: &Item) -> Follower {
        Follower {
            role: item.role,
            joins_previous: !item.separate && !item.boundary,
        }
    }
}

/// The first item with parts, as a [`Follower`] of what comes before it.
/// About how many bytes the items' texts take.
pub fn text_size(items: &[Item]) -> usize {
    items
        .iter()
        .flat_map(|i| &i.parts)
        .map(|p| p.kind.size())
        .fold(0usize, usize::saturating_add)
}

pub fn leading(items: &[Item]) -> Option<Follower> {
    items.iter().find(|i| !i.parts.is_empty()).map(Follower::of)
}

/// A part with its count for `counter`'s tokenizer.
pub fn counted(kind: PartKind, counter: &mut Counter<'_>) -> Part {
    let tokens = match &kind {
        PartKind::Text(t) | PartKind::Said { text: t, .. } => counter.count(t),
        PartKind::ToolCall { name, input, .. } => counter.count(name) + counter.count(input),
        PartKind::ToolResult { content, .. } => counter.count(content),
        PartKind::Image { .. } => IMAGE_TOKENS,
        PartKind::Opaque { json, .. } => counter.count(json),
    };
    Part { kind, tokens }
}

/// A text part.
pub fn text_part(text: impl Into<String>, tokens: u32) -> Part {
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
    pub fn total_cost(messages: &[Message]) -> u32 {
        messages
            .iter()
            .map(|m| m.parts.iter().map(|p| p.tokens).sum::<u32>() + MESSAGE_OVERHEAD)
            .sum::<u32>()
            + REQUEST_OVERHEAD
    }

    /// Per-block costs of a message list: each part's tokens go to its block, each
    /// message's overhead to the block of its first part.
    pub fn block_costs(messages: &[Message], blocks: usize) -> Vec<u32> {
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
        let tail = vec![t(Role::User, "input", 1)];
        let older = vec![t(Role::User, "a", 0), t(Role::Assistant, "b", 0)];
        let newer = vec![t(Role::Assistant, "c", 0), t(Role::User, "d", 0)];
        // Newest first: d merges into the input, c into nothing after it but d's message.
        let newer_cost = marginal_cost(&newer, leading(&tail));
        assert_eq!(newer_cost, 1 + 1 + 3);
        let older_cost = marginal_cost(&older, leading(&newer));
        assert_eq!(older_cost, 1 + 3 + 1, "b merges into c");
        let all: Vec<Item> = older.iter().chain(&newer).chain(&tail).cloned().collect();
        let tail_cost = marginal_cost(&tail, None);
        assert_eq!(
            total_cost(&merge(all)),
            older_cost + newer_cost + tail_cost + REQUEST_OVERHEAD
        );
        let mut sep = t(Role::User, "result", 0);
        sep.separate = true;
        assert_eq!(
            marginal_cost(&[sep], leading(&tail)),
            1 + 3,
            "a round's own item never merges"
        );
    }
}
