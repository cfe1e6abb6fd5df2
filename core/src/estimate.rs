//! The estimate (docs/design.md, "Budget"): the window, each block's tokens, what history
//! took, the tool definitions, and the total of the body the provider receives.

use serde::{Deserialize, Serialize};

use crate::budget::Window;
use crate::kinds::Role;
use crate::tokens::Tokenizer;

/// One row of the estimate's blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockEstimate {
    pub block: String,
    pub role: Option<Role>,
    pub tokens: u32,
    pub floor_unmet: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEstimate {
    pub selected: u32,
    pub available: u32,
    pub(crate) tokens: u32,
    pub(crate) budget: Option<u32>,
    pub skipped_reason: Option<String>,
}

impl HistoryEstimate {
    /// No history: `reason` says why (or `None`).
    pub(crate) fn none(reason: Option<&str>) -> HistoryEstimate {
        HistoryEstimate {
            selected: 0,
            available: 0,
            tokens: 0,
            budget: None,
            skipped_reason: reason.map(str::to_string),
        }
    }
}

/// The window (its fields inline in the JSON) and the tokenizer that counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WindowEstimate {
    #[serde(flatten)]
    pub(crate) window: Window,
    pub(crate) tokenizer: Tokenizer,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub(crate) window: WindowEstimate,
    pub blocks: Vec<BlockEstimate>,
    pub history: HistoryEstimate,
    pub total: u32,
    /// The tool results this request sends cleared (`crate::clearing`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleared: Vec<crate::clearing::ClearedResult>,
}
