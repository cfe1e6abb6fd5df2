//! Model profiles (`prompt.model_profiles`, docs/guide.md "Model profiles"): the rules a model
//! enforces — which wires serve it, its windows and output limit, the thinking modes,
//! efforts and displays it takes, whether a budget and which, which sampling options and
//! in which range, its cache rules. A model row names its profile or matches one by the
//! longest prefix of its name; a model without one keeps its wire's rules
//! (`wire/options.rs`). Request options are checked against the profile on write and
//! at compile; a refusal names the model, the option and the rule.

use serde::{Deserialize, Serialize};

use crate::kinds::{Breakpoints, CacheTtl, Display, Effort, ThinkingMode, Wire};
use crate::tokens::Tokenizer;

/// A model profile, as the `prompt.model_profiles` row spells it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Profile {
    /// The profile's name (`model_profiles.name`): a model name, or a prefix of the names it serves.
    pub name: String,
    pub(crate) provider: String,
    /// The wires that serve the model.
    pub(crate) wires: Vec<Wire>,
    pub(crate) advisory_window: Option<i32>,
    pub(crate) hard_window: Option<i32>,
    /// The largest `max_output_tokens` the model takes.
    pub(crate) max_output_tokens: Option<i32>,
    /// The tokenizer that counts closest (informational).
    pub(crate) tokenizer: Option<Tokenizer>,
    /// The thinking modes it accepts (empty: the option's `mode` is not its to take).
    pub(crate) thinking_modes: Vec<ThinkingMode>,
    /// The mode an effort alone means.
    pub(crate) thinking_default: Option<ThinkingMode>,
    /// The efforts (levels) it takes.
    pub(crate) efforts: Vec<Effort>,
    /// The thinking displays it takes.
    pub(crate) thinking_display: Vec<Display>,
    /// The range of a thinking budget (`budget_tokens`); none: budgets are refused.
    pub(crate) budget_min: Option<i64>,
    pub(crate) budget_max: Option<i64>,
    /// Whether it returns thoughts on request (`include_thoughts`).
    pub(crate) include_thoughts: bool,
    /// Whether it takes thinking beside a forced tool choice.
    pub(crate) thinking_with_forced_tool: bool,
    /// The largest temperature it takes (from 0); none: temperature is refused.
    pub(crate) temperature_max: Option<f64>,
    /// The largest top_p it takes; none: top_p is refused.
    pub(crate) top_p_max: Option<f64>,
    /// Whether temperature and top_p may be set together.
    pub(crate) sampling_together: bool,
    /// How it takes explicit cache breakpoints; none: caching is implicit.
    pub(crate) cache_breakpoints: Option<Breakpoints>,
    /// How many breakpoints a request may carry.
    pub(crate) max_breakpoints: i32,
    /// The shortest prefix the provider caches (tokens).
    pub(crate) min_cache_tokens: i32,
    /// The TTLs it takes (the first is its default).
    pub(crate) cache_ttls: Vec<CacheTtl>,
    /// How many blocks before a breakpoint the provider looks back for a cached prefix.
    pub(crate) cache_lookback: Option<i32>,
    /// Whether its thinking (reasoning) must be replayed with the rounds it came with.
    pub(crate) replays_thinking: bool,
    /// A row the extension ships (an update replaces it).
    #[serde(default)]
    pub(crate) shipped: bool,
    /// The day the provider deprecated the model (ISO 8601; lifecycle, never frozen).
    #[serde(default, skip_serializing)]
    pub(crate) deprecated_at: Option<String>,
    /// The day the provider stops serving it (ISO 8601; lifecycle, never frozen).
    #[serde(default, skip_serializing)]
    pub(crate) retires_at: Option<String>,
    /// The model that replaces it.
    #[serde(default, skip_serializing)]
    pub(crate) replacement: Option<String>,
    /// Where the lifecycle dates and the replacement come from (an SDK's file and
    /// constant, a provider's page and the day it was read); none: a `retires_at` warns,
    /// never refuses.
    #[serde(default, skip_serializing)]
    pub(crate) lifecycle_source: Option<String>,
    /// Whether it takes `{"role": "system"}` messages after the leading run (a system
    /// entry in history is sent so, in place).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) system_messages: bool,
    /// Whether it takes `request_options.cache_diagnostics` (the provider explains a cache
    /// miss against the previous response).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) cache_diagnostics: bool,
}

/// A refusal of an option by a profile: the option's path under `/request_options` and
/// what the rule is.
pub(crate) type Refusal = (&'static str, String);

pub(crate) fn list<T: Copy>(values: &[T], name: fn(T) -> &'static str) -> String {
    if values.is_empty() {
        return "none".into();
    }
    values.iter().map(|v| name(*v)).collect::<Vec<_>>().join(", ")
}

impl Profile {
    /// Reads the row `row_to_json` spelled. `None` for JSON null.
    pub(crate) fn from_json(text: &str) -> crate::error::Result<Option<Profile>> {
        if text.is_empty() || text == "null" {
            return Ok(None);
        }
        serde_json::from_str(text).map(Some).map_err(|e| {
            crate::error::Error::new(
                crate::error::Code::RequestOptionsInvalid,
                format!("the model profile cannot be read ({e})"),
            )
            .hint("A row of prompt.model_profiles is read by its column names; see \\d+ prompt.model_profiles.")
        })
    }

    /// How a refusal names the model `model` of this profile.
    pub(crate) fn who(&self, model: &str) -> String {
        if model == self.name {
            format!("model {}", crate::error::quote(model))
        } else {
            format!("model {} (profile \"{}\")", crate::error::quote(model), self.name)
        }
    }

    /// Refuses a model row this profile does not serve: on another wire, or with more
    /// output tokens than it writes. The refusal's key is empty: it is the model's.
    pub(crate) fn check_model(&self, model: &str, wire: Wire, max_tokens: i32) -> Result<(), Refusal> {
        let who = self.who(model);
        if !self.wires.contains(&wire) {
            let wires: Vec<&str> = self.wires.iter().map(|w| w.as_str()).collect();
            return Err((
                "",
                format!(
                    "{who} is served on the {} wire, not {}",
                    wires.join(" and "),
                    wire.as_str()
                ),
            ));
        }
        if let Some(max) = self.max_output_tokens {
            if max_tokens > max {
                return Err((
                    "",
                    format!("{who} writes at most {max} output tokens, not {max_tokens}"),
                ));
            }
        }
        Ok(())
    }

    /// The TTL a model's `cache_ttl` means here: itself when the profile takes it, else
    /// the profile's nearest (short or long).
    pub(crate) fn ttl(&self, wanted: CacheTtl) -> CacheTtl {
        if self.cache_ttls.is_empty() || self.cache_ttls.contains(&wanted) {
            return wanted;
        }
        let long = self
            .cache_ttls
            .iter()
            .copied()
            .find(|t| t.is_long() == wanted.is_long());
        long.unwrap_or(self.cache_ttls[0])
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn adaptive_only() -> Profile {
        Profile {
            name: "claude-opus-5".into(),
            provider: "anthropic".into(),
            wires: vec![Wire::Anthropic],
            advisory_window: None,
            hard_window: Some(1_000_000),
            max_output_tokens: Some(128_000),
            tokenizer: Some(Tokenizer::Cl100kBase),
            thinking_modes: vec![ThinkingMode::Adaptive, ThinkingMode::Disabled],
            thinking_default: Some(ThinkingMode::Adaptive),
            efforts: vec![Effort::Low, Effort::Medium, Effort::High, Effort::XHigh, Effort::Max],
            thinking_display: vec![Display::Summarized, Display::Omitted],
            budget_min: None,
            budget_max: None,
            include_thoughts: false,
            thinking_with_forced_tool: false,
            temperature_max: None,
            top_p_max: None,
            sampling_together: false,
            cache_breakpoints: Some(Breakpoints::CacheControl),
            max_breakpoints: 4,
            min_cache_tokens: 4096,
            cache_ttls: vec![CacheTtl::FiveMinutes, CacheTtl::OneHour],
            cache_lookback: Some(20),
            replays_thinking: true,
            shipped: true,
            deprecated_at: None,
            retires_at: None,
            replacement: None,
            lifecycle_source: None,
            system_messages: false,
            cache_diagnostics: false,
        }
    }

    #[test]
    fn a_ttl_maps_to_the_nearest_the_provider_takes() {
        let mut p = adaptive_only();
        assert_eq!(p.ttl(CacheTtl::OneHour), CacheTtl::OneHour);
        p.cache_ttls = vec![CacheTtl::ThirtyMinutes, CacheTtl::TwelveHours];
        assert_eq!(p.ttl(CacheTtl::FiveMinutes), CacheTtl::ThirtyMinutes);
        assert_eq!(p.ttl(CacheTtl::OneHour), CacheTtl::TwelveHours);
    }
}
