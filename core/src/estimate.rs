//! The estimate (SPEC §8, §10): the window, each block's tokens, what history took.

use serde::Serialize;
use serde_json::Value;

use super::budget::Window;
use super::context::Role;
use super::tokens::Tokenizer;

/// One row of the estimate's blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockEstimate {
    pub block: String,
    pub role: Option<&'static str>,
    pub tokens: u32,
    pub floor_unmet: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryEstimate {
    pub selected: u32,
    pub available: u32,
    pub tokens: u32,
    pub budget: Option<u32>,
    pub skipped_reason: Option<String>,
}

/// The window (its fields inline in the JSON) and the tokenizer that counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowEstimate {
    #[serde(flatten)]
    pub window: Window,
    pub tokenizer: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub window: WindowEstimate,
    pub blocks: Vec<BlockEstimate>,
    pub history: HistoryEstimate,
    pub total: u32,
}

/// An estimate stored in a sealed result, read back.
pub fn from_json(v: &Value) -> Option<Estimate> {
    let role = |r: &Value| r.as_str().and_then(Role::parse).map(Role::as_str);
    let blocks = v["blocks"]
        .as_array()?
        .iter()
        .map(|b| BlockEstimate {
            block: b["block"].as_str().unwrap_or("").to_string(),
            role: role(&b["role"]),
            tokens: b["tokens"].as_u64().unwrap_or(0) as u32,
            floor_unmet: b["floor_unmet"].as_bool().unwrap_or(false),
        })
        .collect();
    let w = &v["window"];
    let h = &v["history"];
    let num = |x: &Value| x.as_u64().map(|n| n as u32);
    Some(Estimate {
        window: WindowEstimate {
            window: Window {
                tokens: num(&w["tokens"]),
                advisory: num(&w["advisory"]),
                hard: num(&w["hard"]),
                reasoning_replay: w["reasoning_replay"].as_bool().unwrap_or(false),
                token_margin: w["token_margin"].as_f64().unwrap_or(0.0) as f32,
            },
            tokenizer: Tokenizer::parse(w["tokenizer"].as_str().unwrap_or(""))
                .map(Tokenizer::name)
                .unwrap_or("cl100k_base"),
        },
        blocks,
        history: HistoryEstimate {
            selected: num(&h["selected"]).unwrap_or(0),
            available: num(&h["available"]).unwrap_or(0),
            tokens: num(&h["tokens"]).unwrap_or(0),
            budget: num(&h["budget"]),
            skipped_reason: h["skipped_reason"].as_str().map(str::to_string),
        },
        total: num(&v["total"]).unwrap_or(0),
    })
}
