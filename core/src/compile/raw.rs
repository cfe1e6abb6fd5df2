//! The `raw` mechanism: the request is the turn's input entries verbatim, one message
//! per entry, never merged; no slots, no history, no catalog. The gate still applies.

use super::compiler::{Fresh, Tally};
use crate::context::Context;
use crate::error::{Code, Error, Result};
use crate::estimate::HistoryEstimate;
use crate::items::{counted, merge, Item};
use crate::kinds::Mechanism;

/// The turn's input entries as the compiled list, each counted.
pub(super) fn raw(ctx: &Context, tally: &mut Tally) -> Result<Fresh> {
    let t = &ctx.turn;
    let Some(entries) = t.input.as_ref() else {
        return Err(Error::new(
            Code::RawInputInvalid,
            format!(
                "turn {} has no input entries, and its answerer's mechanism is raw",
                t.id
            ),
        )
        .hint("Under raw the request is the turn's input column verbatim: [{\"role\": ..., \"content\": ...}]."));
    };
    let mut items = Vec::with_capacity(entries.len());
    for e in entries {
        let parts = e.parts.iter().map(|k| counted(k.clone(), &mut tally.counter)).collect();
        items.push((
            Item {
                role: e.role,
                parts,
                separate: true,
                boundary: false,
                block: 0,
            },
            e.plain,
        ));
    }
    let plain: Vec<bool> = items
        .iter()
        .filter(|(i, _)| !i.parts.is_empty())
        .map(|(_, p)| *p)
        .collect();
    let rendered = vec![items.iter().map(|(i, _)| i.clone()).collect()];
    let mut messages = merge(items.into_iter().map(|(i, _)| i));
    for (m, p) in messages.iter_mut().zip(plain) {
        m.plain = p;
    }
    Ok(Fresh {
        mechanism: Mechanism::Raw,
        messages,
        blocks: vec!["input".into()],
        rendered,
        history_block: None,
        seed_block: 0,
        cache_marker: 0,
        breakpoints: Vec::new(),
        preface: Vec::new(),
        catalog: None,
        deferred_catalog: Vec::new(),
        history: HistoryEstimate::none(Some("raw_mechanism")),
        history_cleared: Vec::new(),
        history_from: None,
        versions: serde_json::json!({}),
        budget_problem: None,
    })
}
