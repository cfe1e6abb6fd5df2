//! The budget (docs/design.md, "Budget"): the window, the history allowance, and newest-first
//! selection of whole entries.

use crate::rows::Model;
use crate::template::{HistoryKnobs, Trim};

/// The window a compile is funded against.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Window {
    /// `None`: windowless (no model, or neither bound).
    pub(crate) tokens: Option<u32>,
    pub(crate) advisory: Option<u32>,
    pub(crate) hard: Option<u32>,
    pub(crate) reasoning_replay: bool,
    pub(crate) token_margin: f32,
}

impl Window {
    /// The advisory bound, else the hard bound, less an eighth under reasoning replay.
    pub(crate) fn of(model: Option<&Model>, reasoning_replay: bool) -> Window {
        let pos = |v: Option<i32>| v.and_then(|n| u32::try_from(n).ok());
        let advisory = model.and_then(|m| pos(m.advisory_window));
        let hard = model.and_then(|m| pos(m.hard_window));
        let tokens = advisory.or(hard).map(|w| if reasoning_replay { w - w / 8 } else { w });
        let token_margin = model
            .map(|m| m.token_margin)
            .filter(|m| m.is_finite() && *m > 0.0)
            .unwrap_or(0.0);
        Window {
            tokens,
            advisory,
            hard,
            reasoning_replay,
            token_margin,
        }
    }

    /// A count as the budget sees it: inflated by the model's token margin.
    pub(crate) fn inflate(&self, tokens: u32) -> u32 {
        if self.token_margin <= 0.0 {
            return tokens;
        }
        // `real` margins are f32: read them back as the decimal the user wrote, and
        // forgive float noise before rounding up (100 × 1.1 is 110, not 111).
        let margin: f64 = self.token_margin.to_string().parse().unwrap_or(0.0);
        let v = (tokens as f64 * (1.0 + margin) - 1e-9).ceil();
        if v >= u32::MAX as f64 {
            u32::MAX
        } else {
            v as u32
        }
    }

    /// Whether `tokens` (exact) fit the window.
    pub(crate) fn fits(&self, tokens: u32) -> bool {
        self.tokens.is_none_or(|w| self.inflate(tokens) <= w)
    }
}

/// Why history could not be funded at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unavailable {
    /// A `share` on a windowless model.
    ShareWithoutWindow,
}

/// How much history may take: `tokens` `None` is unbounded. `low_water` is set under
/// cache-stable trimming: the share of the allowance history is cut down to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Allowance {
    pub(crate) tokens: Option<u32>,
    pub(crate) max_entries: Option<u32>,
    pub(crate) low_water: Option<f64>,
    /// `tokens` is all the floors leave of the window (no knob cut it lower): what the
    /// floors were charged and do not cost once history joins them is room too.
    pub(crate) window_bound: bool,
}

/// Stable trimming's default `low_water`.
pub(crate) const DEFAULT_LOW_WATER: f64 = 0.7;

/// History is funded from what the floors leave (`floors`, already inflated), capped
/// by `share × window`, `max_tokens` and `max_entries`; `min_tokens` lifts it only as
/// far as room remains. A windowless model funds all of it: no cap applies (a `share`
/// of no window is refused).
pub(crate) fn allowance(window: &Window, floors: u32, knobs: &HistoryKnobs) -> Result<Allowance, Unavailable> {
    let cap = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let (tokens, window_bound) = match window.tokens {
        None => {
            if knobs.share.is_some() {
                return Err(Unavailable::ShareWithoutWindow);
            }
            // A model without a window sizes nothing: it funds all history.
            return Ok(Allowance {
                tokens: None,
                max_entries: None,
                low_water: None,
                window_bound: false,
            });
        }
        Some(w) => {
            let remaining = w.saturating_sub(floors);
            let mut budget = remaining;
            if let Some(share) = knobs.share {
                budget = budget.min((share * w as f64).floor() as u32);
            }
            if let Some(min) = knobs.min_tokens {
                budget = budget.max(cap(min).min(remaining));
            }
            if let Some(max) = knobs.max_tokens {
                budget = budget.min(cap(max));
            }
            (Some(budget), budget == remaining)
        }
    };
    Ok(Allowance {
        tokens,
        max_entries: knobs.max_entries,
        low_water: (knobs.trim == Some(Trim::Stable)).then(|| knobs.low_water.unwrap_or(DEFAULT_LOW_WATER)),
        window_bound,
    })
}

/// Why selection stopped before the oldest entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    BudgetExceeded,
    MaxEntries,
    /// Stable trimming kept the first entry of the answerer's previous sealed request.
    StableCut,
    /// Stable trimming cut history down to its low water.
    LowWater,
}

impl Stop {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Stop::BudgetExceeded => "budget_exceeded",
            Stop::MaxEntries => "max_entries",
            Stop::StableCut => "stable_cut",
            Stop::LowWater => "low_water",
        }
    }
}

/// Newest-first selection: an entry is taken while it fits what is left; the first
/// that does not fit ends the selection (older entries never jump the queue).
#[derive(Debug, Clone)]
pub(crate) struct Selector {
    allowance: Allowance,
    pub(crate) used: u32,
    pub(crate) selected: u32,
    pub(crate) stopped: Option<Stop>,
}

impl Selector {
    pub(crate) fn new(allowance: Allowance) -> Self {
        Selector {
            allowance,
            used: 0,
            selected: 0,
            stopped: None,
        }
    }

    /// Ends the selection for a reason of its own.
    pub(crate) fn stop(&mut self, why: Stop) {
        self.stopped.get_or_insert(why);
    }

    /// Cut down to the newest `keep` of the entries taken (their costs, newest first).
    pub(crate) fn keep_newest(&mut self, costs: &[u32], keep: usize) {
        self.selected = keep as u32;
        self.used = crate::tokens::sum(costs[..keep].iter().copied());
        self.stopped = Some(Stop::LowWater);
    }

    /// Gives back the oldest entry taken (its inflated `cost`): a wire's rule drops it.
    pub(crate) fn drop_oldest(&mut self, cost: u32) {
        self.selected = self.selected.saturating_sub(1);
        self.used = self.used.saturating_sub(cost);
    }

    /// How many of the entries taken (costs newest first) stable trimming keeps once
    /// history stops fitting: down to `low_water` of whichever limit stopped it.
    pub(crate) fn low_water_keep(&self, costs: &[u32], low_water: f64) -> usize {
        match (self.stopped, self.allowance.tokens, self.allowance.max_entries) {
            (Some(Stop::MaxEntries), _, Some(m)) => ((m as f64 * low_water).floor() as usize).max(1).min(costs.len()),
            (_, Some(t), _) => {
                let limit = (t as f64 * low_water).floor() as u32;
                let mut used = 0u32;
                costs
                    .iter()
                    .take_while(|c| {
                        used = used.saturating_add(**c);
                        used <= limit
                    })
                    .count()
            }
            _ => costs.len(),
        }
    }

    /// Offers the next (older) entry of inflated cost `cost`; true when it is taken.
    #[cfg(test)]
    pub(crate) fn offer(&mut self, cost: u32) -> bool {
        self.offer_saving(cost, || 0)
    }

    /// [`Selector::offer`], where taking the entry also saves the floors `saved()`
    /// tokens (history's oldest entry joins the message of the block before history,
    /// whose overhead the floors were charged): an entry that does not fit by its cost
    /// fits when it does less what it saves, where the allowance is what the floors
    /// leave of the window. `saved` is computed only then (at the boundary).
    pub(crate) fn offer_saving(&mut self, cost: u32, saved: impl FnOnce() -> u32) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        if self.allowance.max_entries.is_some_and(|m| self.selected >= m) {
            self.stopped = Some(Stop::MaxEntries);
            return false;
        }
        if let Some(t) = self.allowance.tokens {
            let over = |c: u32| self.used.saturating_add(c) > t;
            if over(cost) && (!self.allowance.window_bound || over(cost.saturating_sub(saved()))) {
                self.stopped = Some(Stop::BudgetExceeded);
                return false;
            }
        }
        self.used = self.used.saturating_add(cost);
        self.selected += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(advisory: Option<i32>, hard: Option<i32>) -> Model {
        let mut m = Model::new("m", crate::kinds::Wire::Anthropic);
        m.advisory_window = advisory;
        m.hard_window = hard;
        m
    }

    #[test]
    fn window_prefers_advisory_and_reasoning_takes_an_eighth() {
        assert_eq!(
            Window::of(Some(&model(Some(1000), Some(2000))), false).tokens,
            Some(1000)
        );
        assert_eq!(Window::of(Some(&model(None, Some(2000))), false).tokens, Some(2000));
        assert_eq!(Window::of(Some(&model(Some(1000), None)), true).tokens, Some(875));
        assert_eq!(Window::of(Some(&model(None, None)), false).tokens, None);
        assert_eq!(Window::of(None, true).tokens, None);
    }

    #[test]
    fn margin_inflates() {
        let mut m = model(Some(100), None);
        m.token_margin = 0.1;
        let w = Window::of(Some(&m), false);
        assert_eq!(w.inflate(100), 110);
        assert!(w.fits(90));
        assert!(!w.fits(91));
    }

    #[test]
    fn allowance_knobs() {
        let w = Window::of(Some(&model(Some(1000), None)), false);
        let k = HistoryKnobs::default();
        assert_eq!(allowance(&w, 200, &k).unwrap().tokens, Some(800));
        assert_eq!(allowance(&w, 1200, &k).unwrap().tokens, Some(0));
        let share = HistoryKnobs { share: Some(0.5), ..k };
        assert_eq!(allowance(&w, 200, &share).unwrap().tokens, Some(500));
        let min = HistoryKnobs {
            share: Some(0.1),
            min_tokens: Some(300),
            ..k
        };
        assert_eq!(allowance(&w, 200, &min).unwrap().tokens, Some(300));
        assert_eq!(
            allowance(&w, 900, &min).unwrap().tokens,
            Some(100),
            "min only as far as room remains"
        );
        let max = HistoryKnobs {
            max_tokens: Some(50),
            min_tokens: Some(300),
            ..k
        };
        assert_eq!(allowance(&w, 200, &max).unwrap().tokens, Some(50));
        let none = Window::of(None, false);
        assert_eq!(allowance(&none, 10, &k).unwrap().tokens, None);
        assert_eq!(allowance(&none, 10, &share), Err(Unavailable::ShareWithoutWindow));
    }

    #[test]
    fn selector_stops_at_the_first_entry_that_does_not_fit() {
        let mut s = Selector::new(Allowance {
            tokens: Some(10),
            max_entries: None,
            low_water: None,
            window_bound: true,
        });
        assert!(s.offer(4));
        assert!(s.offer(4));
        assert!(!s.offer(4));
        assert!(!s.offer(1), "no jumping the queue");
        assert_eq!((s.selected, s.used, s.stopped), (2, 8, Some(Stop::BudgetExceeded)));
        let mut s = Selector::new(Allowance {
            tokens: None,
            max_entries: Some(1),
            low_water: None,
            window_bound: false,
        });
        assert!(s.offer(100));
        assert!(!s.offer(1));
        assert_eq!(s.stopped, Some(Stop::MaxEntries));
    }

    /// Property: for any costs and budgets, the selection is a newest-first prefix,
    /// never over budget, and monotone in the budget.
    #[test]
    fn property_selection_is_a_bounded_monotone_prefix() {
        let mut rng = crate::testing::Rng(0x2545F4914F6CDD1D);
        let mut next = move |m: u64| rng.below(m);
        for _ in 0..2_000 {
            let costs: Vec<u32> = (0..next(30)).map(|_| next(50) as u32 + 1).collect();
            let budget = next(600) as u32;
            let run = |b: u32| {
                let mut s = Selector::new(Allowance {
                    tokens: Some(b),
                    max_entries: None,
                    low_water: None,
                    window_bound: true,
                });
                let taken: Vec<bool> = costs.iter().map(|c| s.offer(*c)).collect();
                (s, taken)
            };
            let (s, taken) = run(budget);
            assert!(s.used <= budget);
            let n = taken.iter().take_while(|t| **t).count();
            assert!(taken[n..].iter().all(|t| !t), "a contiguous newest-first prefix");
            assert_eq!(s.used, costs[..n].iter().sum::<u32>());
            let (bigger, _) = run(budget + next(100) as u32);
            assert!(bigger.selected >= s.selected, "monotone in the window");
        }
    }
}
