//! The value kinds every stage shares: the spelled enums of the schema's text columns
//! (a role, a wire, a mechanism, ...), a sealed preface's items, and an entry's place.
//! A leaf: it depends on nothing of the crate but its errors.

use serde::{Deserialize, Serialize};

use crate::error::{quote, Code, Error, Result};

/// A column value outside what the schema's checks admit (the database was altered).
pub fn unknown_value(column: &str, value: &str) -> Error {
    Error::new(
        Code::TurnNotCompilable,
        format!(
            "{column} has the value {}, which this version of pgprompt does not know",
            quote(value)
        ),
    )
    .hint("The schema's CHECK constraints admit only known values; was the table altered?")
}

/// Declares a string-valued enum: its spellings, `parse` (None for an unknown one),
/// `from_column` (an error naming the column) and `as_str`.
macro_rules! spelled {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// A stored value: unknown spellings are an error naming `column`.
            pub fn from_column(column: &str, s: &str) -> Result<$name> {
                $name::parse(s).ok_or_else(|| unknown_value(column, s))
            }

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }
    };
}

spelled!(
    /// A message role.
    Role { System = "system", Developer = "developer", User = "user", Assistant = "assistant" }
);
spelled!(
    /// The provider API a model speaks.
    Wire { Anthropic = "anthropic", Chat = "chat", Responses = "responses", Gemini = "gemini" }
);
spelled!(
    /// How a profile's turns are compiled.
    Mechanism { Default = "default", Assembly = "assembly", Raw = "raw" }
);
spelled!(UserKind { Human = "human", Agent = "agent" });
spelled!(TurnKind { Message = "message", Reply = "reply", Summary = "summary" });
spelled!(
    /// A reply turn answered in one call, or run-backed with rounds.
    Mode { DirectReply = "direct_reply", Run = "run" }
);
spelled!(
    /// How long a provider keeps a cached prefix: Anthropic's `cache_control.ttl` (5m, 1h)
    /// or OpenAI's `prompt_cache_options.ttl` (30m, 12h). On the other provider a TTL is
    /// its nearest: the short one (5m, 30m) or the long one (1h, 12h).
    CacheTtl { FiveMinutes = "5m", OneHour = "1h", ThirtyMinutes = "30m", TwelveHours = "12h" }
);

impl CacheTtl {
    /// Whether this is a provider's long TTL (1h, 12h) rather than its short one.
    pub(crate) fn is_long(self) -> bool {
        matches!(self, CacheTtl::OneHour | CacheTtl::TwelveHours)
    }

    /// How long, in seconds.
    pub fn seconds(self) -> u64 {
        match self {
            CacheTtl::FiveMinutes => 300,
            CacheTtl::OneHour => 3600,
            CacheTtl::ThirtyMinutes => 1800,
            CacheTtl::TwelveHours => 43200,
        }
    }
}
spelled!(
    /// A thinking mode of the neutral vocabulary (`request_options.thinking.mode`).
    ThinkingMode { Adaptive = "adaptive", Enabled = "enabled", Disabled = "disabled" }
);
spelled!(
    /// A reasoning effort of the neutral vocabulary (`request_options.thinking.effort`):
    /// Anthropic's `output_config.effort`, OpenAI's reasoning effort, Gemini's thinking level.
    Effort { None = "none", Minimal = "minimal", Low = "low", Medium = "medium", High = "high", XHigh = "xhigh", Max = "max" }
);
spelled!(
    /// Whether thinking comes back summarized or omitted (`request_options.thinking.display`).
    Display { Summarized = "summarized", Omitted = "omitted" }
);
spelled!(
    /// How a provider takes explicit cache breakpoints: Anthropic's `cache_control` on a
    /// block, OpenAI's `prompt_cache_breakpoint` on an input part.
    Breakpoints { CacheControl = "cache_control", PromptCacheBreakpoint = "prompt_cache_breakpoint" }
);

/// One item of a sealed preface, as stored (`turns.sealed_preface`): its role and the
/// texts of its parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrefaceItem {
    pub(crate) role: Role,
    pub(crate) texts: Vec<String>,
}

/// An entry's place in the timeline a turn reads: how many captures up it sits (0 in
/// the turn's own conversation, 1 in a Side's parent, ...), its turn's `seq` there, then
/// its index among the turn's entries (the order [`plan`] gives). Entries order by place:
/// a parent's entries before all of the Side's, whatever their `seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryAt {
    /// Omitted when 0, so seals of a conversation's own history keep their bytes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub depth: u8,
    pub seq: i64,
    pub entry: u32,
}

fn is_zero(d: &u8) -> bool {
    *d == 0
}

impl Ord for EntryAt {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (std::cmp::Reverse(self.depth), self.seq, self.entry).cmp(&(
            std::cmp::Reverse(other.depth),
            other.seq,
            other.entry,
        ))
    }
}

impl PartialOrd for EntryAt {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_enums_round_trip_and_refuse_unknown_values() {
        for w in Wire::ALL {
            assert_eq!(Wire::parse(w.as_str()), Some(*w));
            assert_eq!(serde_json::to_string(w).unwrap(), format!("\"{}\"", w.as_str()));
        }
        assert_eq!(CacheTtl::parse("1h"), Some(CacheTtl::OneHour));
        let e = TurnKind::from_column("turns.kind", "memo").unwrap_err();
        assert_eq!(e.code, Code::TurnNotCompilable);
        assert!(e.message.contains("turns.kind has the value \"memo\""), "{}", e.message);
        assert!(Mechanism::parse("Default").is_none(), "no silent default");
    }

    #[test]
    fn a_parents_entries_come_before_a_sides_whatever_their_seq() {
        let at = |depth, seq, entry| EntryAt { depth, seq, entry };
        assert!(
            at(1, 900, 0) < at(0, 1, 0),
            "the parent's, captured before the Side began"
        );
        assert!(at(2, 5, 0) < at(1, 1, 0));
        assert!(at(0, 3, 0) < at(0, 3, 1) && at(0, 3, 1) < at(0, 4, 0));
        // A conversation's own entries keep the bytes 0.3.0 seals spelled them with.
        assert_eq!(serde_json::to_string(&at(0, 3, 1)).unwrap(), r#"{"seq":3,"entry":1}"#);
        assert_eq!(
            serde_json::to_string(&at(1, 3, 1)).unwrap(),
            r#"{"depth":1,"seq":3,"entry":1}"#
        );
        let back: EntryAt = serde_json::from_str(r#"{"seq":3,"entry":1}"#).unwrap();
        assert_eq!(back, at(0, 3, 1));
    }
}
