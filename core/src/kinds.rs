//! The value kinds every stage shares: the spelled enums of the schema's text columns
//! (a role, a wire, a mechanism, ...), a sealed preface's items, and an entry's place.
//! A leaf: it depends on nothing of the crate but its errors.

use serde::{Deserialize, Serialize};

use crate::error::{quote, Code, Error, Result};

/// A column value outside what the schema's checks admit (the database was altered).
pub(crate) fn unknown_value(column: &str, value: &str) -> Error {
    Error::new(
        Code::TurnNotCompilable,
        format!(
            "{column} has the value {}, which this version of pgprompt does not know",
            quote(value)
        ),
    )
    .hint("The schema's CHECK constraints admit only known values; was the table altered?")
}

/// Declares a string-valued enum (public or not, as `$vis` says): its spellings, `parse` (None for an unknown one),
/// `from_column` (an error naming the column) and `as_str`.
macro_rules! spelled {
    ($(#[$meta:meta])* $vis:vis $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        $vis enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        // A crate-private enum may not be read from a column, parsed or spelled outside a test.
        #[allow(dead_code)]
        impl $name {
            /// Every value, in the order the enum declares them.
            pub(crate) const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value spelled exactly `s` (case-sensitive); None for an unknown spelling.
            $vis fn parse(s: &str) -> Option<$name> {
                match s {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// A stored value: unknown spellings are an error naming `column`.
            $vis fn from_column(column: &str, s: &str) -> Result<$name> {
                $name::parse(s).ok_or_else(|| unknown_value(column, s))
            }

            /// Its spelling: the text stored in a column and serialized on the wire.
            $vis fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }
    };
}

spelled!(
    /// A message role.
    pub Role {
        /// `system`: instructions; a leading run of them is lifted into `system` (anthropic)
        /// or `systemInstruction` (gemini).
        System = "system",
        /// `developer`: instructions in OpenAI's developer role; spoken on the user side on
        /// anthropic and gemini.
        Developer = "developer",
        /// `user`: the user side: people's words, tool results.
        User = "user",
        /// `assistant`: the model's own words and tool calls (`model` on gemini).
        Assistant = "assistant"
    }
);
spelled!(
    /// The provider API a model speaks.
    pub Wire {
        /// `anthropic`: Anthropic's Messages API.
        Anthropic = "anthropic",
        /// `chat`: OpenAI's Chat Completions API.
        Chat = "chat",
        /// `responses`: OpenAI's Responses API.
        Responses = "responses",
        /// `gemini`: Google's Gemini `generateContent`.
        Gemini = "gemini",
        /// `converse`: Amazon Bedrock's Converse API (`POST /model/{modelId}/converse`).
        Converse = "converse"
    }
);

impl Wire {
    /// The wire of a turn whose agent names no model (its body is previewed as
    /// Anthropic's Messages API).
    pub(crate) const DEFAULT: Wire = Wire::Anthropic;
}
spelled!(
    /// Who serves a model: the maker a profile names (`model_profiles.provider`), and the
    /// provider whose dialect of a wire a model row speaks (`models.provider`: on `chat`
    /// OpenAI's compatible providers, on `anthropic` and `gemini` Google's Vertex AI; each
    /// wire's folder says which it speaks, `Form::speaks`). The library's list, which the
    /// columns' CHECKs ask (`prompt._provider_known`, `prompt._dialect_known`), so a new
    /// provider changes no schema.
    pub Provider {
        /// `anthropic`: Anthropic (Claude).
        Anthropic = "anthropic",
        /// `openai`: OpenAI (GPT, o-series).
        OpenAi = "openai",
        /// `google`: Google (Gemini), as a profile's maker.
        Google = "google",
        /// `amazon`: Amazon (Nova).
        Amazon = "amazon",
        /// `meta`: Meta (Llama).
        Meta = "meta",
        /// `gemini`: Google's Gemini API (`generativelanguage.googleapis.com`).
        Gemini = "gemini",
        /// `vertex`: Google Cloud's Vertex AI (Claude and Gemini).
        Vertex = "vertex",
        /// `azure`: Azure OpenAI (Microsoft Foundry).
        Azure = "azure",
        /// `mistral`: Mistral AI.
        Mistral = "mistral",
        /// `deepseek`: DeepSeek.
        DeepSeek = "deepseek",
        /// `xai`: xAI (Grok).
        Xai = "xai",
        /// `groq`: Groq.
        Groq = "groq",
        /// `together`: Together AI.
        Together = "together",
        /// `fireworks`: Fireworks AI.
        Fireworks = "fireworks",
        /// `openrouter`: OpenRouter.
        OpenRouter = "openrouter",
        /// `ollama`: Ollama's OpenAI-compatible endpoint.
        Ollama = "ollama",
        /// `vllm`: vLLM's OpenAI-compatible server.
        Vllm = "vllm"
    }
);
spelled!(
    /// How a profile's turns are compiled.
    pub Mechanism {
        /// `default`: the fixed block order, from `system_prompt` to the turn's input.
        Default = "default",
        /// `assembly`: the block order of the answerer's `prompt_template`.
        Assembly = "assembly",
        /// `raw`: the turn's `input` entries verbatim: no slots, no history, no catalog.
        Raw = "raw"
    }
);
spelled!(
    /// What a user row is (`users.kind`): a person or an agent.
    pub UserKind {
        /// `human`: a person; their own controlling Human.
        Human = "human",
        /// `agent`: an agent, controlled by the Human its `steward_id` names.
        Agent = "agent"
    }
);
spelled!(
    /// What a turn is (`turns.kind`).
    pub TurnKind {
        /// `message`: a message spoken in its `role`, its text in `content`.
        Message = "message",
        /// `reply`: an answerer's reply to its poster's words (`prompt`); what `compile_turn`
        /// compiles.
        Reply = "reply",
        /// `summary`: a summary of the conversation before it; history starts at the newest one.
        Summary = "summary"
    }
);
spelled!(
    /// A reply turn answered in one call, or run-backed with rounds.
    pub Mode {
        /// `direct_reply`: one model call, whose text is the reply.
        DirectReply = "direct_reply",
        /// `run`: run-backed: its model calls, with their tool results, are its rounds.
        Run = "run"
    }
);
spelled!(
    /// How long a provider keeps a cached prefix: Anthropic's `cache_control.ttl` (5m, 1h)
    /// or OpenAI's `prompt_cache_options.ttl` (30m, 12h). On the other provider a TTL is
    /// its nearest: the short one (5m, 30m) or the long one (1h, 12h).
    pub CacheTtl {
        /// `5m`: Anthropic's short TTL (the default).
        FiveMinutes = "5m",
        /// `1h`: Anthropic's long TTL.
        OneHour = "1h",
        /// `30m`: OpenAI's short TTL.
        ThirtyMinutes = "30m",
        /// `12h`: OpenAI's long TTL.
        TwelveHours = "12h"
    }
);

impl CacheTtl {
    /// Whether this is a provider's long TTL (1h, 12h) rather than its short one.
    pub(crate) fn is_long(self) -> bool {
        matches!(self, CacheTtl::OneHour | CacheTtl::TwelveHours)
    }

    /// How long, in seconds.
    pub(crate) fn seconds(self) -> u64 {
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
    pub(crate) ThinkingMode {
        /// `adaptive`: the model decides how much to think; takes no budget (not on chat or
        /// responses).
        Adaptive = "adaptive",
        /// `enabled`: thinking with a `budget_tokens`, which it needs.
        Enabled = "enabled",
        /// `disabled`: no thinking (sent as effort `none` on chat and responses).
        Disabled = "disabled",
        /// `between_tools` (anthropic): thinking off, and the short progress notes the model
        /// writes between tool calls come back as thinking blocks; takes no budget and no
        /// display.
        BetweenTools = "between_tools"
    }
);
spelled!(
    /// A reasoning effort of the neutral vocabulary (`request_options.thinking.effort`):
    /// Anthropic's `output_config.effort`, OpenAI's reasoning effort, Gemini's thinking level.
    pub(crate) Effort {
        /// `none`: no reasoning; what `disabled` thinking sends on chat and responses.
        None = "none",
        /// `minimal`: one step above none (not on anthropic).
        Minimal = "minimal",
        /// `low`.
        Low = "low",
        /// `medium`.
        Medium = "medium",
        /// `high`.
        High = "high",
        /// `xhigh`: above high.
        XHigh = "xhigh",
        /// `max`: the most effort (not on gemini).
        Max = "max"
    }
);
spelled!(
    /// Whether thinking comes back summarized or omitted (`request_options.thinking.display`).
    pub(crate) Display {
        /// `summarized`: thinking comes back as a summary.
        Summarized = "summarized",
        /// `omitted`: thinking's text is omitted from the response.
        Omitted = "omitted"
    }
);
spelled!(
    /// How a provider takes explicit cache breakpoints: Anthropic's `cache_control` on a
    /// block, OpenAI's `prompt_cache_breakpoint` on an input part.
    pub(crate) Breakpoints {
        /// `cache_control`: Anthropic's marker on a block.
        CacheControl = "cache_control",
        /// `prompt_cache_breakpoint`: OpenAI's marker on an input part, with `prompt_cache_options`.
        PromptCacheBreakpoint = "prompt_cache_breakpoint"
    }
);

/// One item of a sealed preface, as stored (`turns.sealed_preface`): its role and the
/// texts of its parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PrefaceItem {
    pub(crate) role: Role,
    pub(crate) texts: Vec<String>,
}

/// An entry's place in the timeline a turn reads: how many captures up it sits (0 in
/// the turn's own conversation, 1 in a Side's parent, ...), its turn's `seq` there, then
/// its index among the turn's entries (the order [`plan`] gives). Entries order by place:
/// a parent's entries before all of the Side's, whatever their `seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EntryAt {
    /// Omitted when 0, so seals of a conversation's own history keep their bytes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) depth: u8,
    /// The `seq` of the entry's turn in the conversation at `depth`.
    pub(crate) seq: i64,
    /// The entry's index among its turn's entries, from 0.
    pub(crate) entry: u32,
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

    /// The wires and the providers are the core's: no SQL file lists them (a new wire or
    /// provider changes no schema), and each constraint on such a column asks the library
    /// (`prompt._wire_known`, `prompt._wires_known`, `prompt._provider_known`), in a fresh
    /// install and in the update from 0.4.
    #[test]
    fn the_schema_asks_the_core_for_its_wires() {
        let finalize = include_str!("../../sql/finalize.sql");
        let update = include_str!("../../sql/pgprompt--0.4.0--0.5.0.sql");
        for (file, text) in [
            ("sql/schema.sql", include_str!("../../sql/schema.sql")),
            ("sql/finalize.sql", finalize),
            (
                "the 0.4.0 -> 0.5.0 update template",
                include_str!("../../sql/updates/0.4.0--0.5.0.template.sql"),
            ),
            ("the 0.4.0 -> 0.5.0 update", update),
        ] {
            assert!(
                !text.contains("'anthropic', 'chat'"),
                "{file} lists the wires; ask prompt._wire_known instead"
            );
            assert!(
                !text.contains("provider IN ('anthropic'"),
                "{file} lists the providers; ask prompt._provider_known instead"
            );
        }
        for (constraint, check) in [
            ("models_wire_valid", "CHECK (prompt._wire_known(wire))"),
            ("responses_shape_valid", "CHECK (prompt._wire_known(shape))"),
            (
                "model_profiles_wires_valid",
                "CHECK (wires <> '{}' AND prompt._wires_known(wires))",
            ),
            (
                "model_profiles_provider_valid",
                "CHECK (prompt._provider_known(provider))",
            ),
        ] {
            let added = format!("ADD CONSTRAINT {constraint} {check};");
            for (file, text) in [("sql/finalize.sql", finalize), ("the 0.4.0 -> 0.5.0 update", update)] {
                assert!(text.contains(&added), "{file} does not {added}");
            }
        }
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
