//! The providers that speak the chat wire (docs/guide.md, "Compatible providers"): OpenAI's
//! Chat Completions and the APIs shaped after it. A model row's `provider` names the
//! dialect (NULL: its profile's provider where it speaks chat, else `openai`); each differs
//! from OpenAI only in what is written here, as its own SDK's request type (or, without
//! one, its published reference) reads a body:
//!
//! | provider | limit key | string content | developer | call index | prompt_cache_key |
//! |---|---|---|---|---|---|
//! | openai, azure | max_completion_tokens | no | yes | no | yes |
//! | mistral (mistralai 3.7) | max_tokens | no | as system | no | yes |
//! | groq (groq 1.7) | max_completion_tokens | no | yes | no | no |
//! | together (together 3.1) | max_tokens | all but the user's | as system | yes | no |
//! | fireworks (fireworks-ai 1.2) | max_completion_tokens | no | as system | no | yes |
//! | openrouter (openrouter 1.3) | max_completion_tokens | no | yes | no | yes |
//! | deepseek (api-docs.deepseek.com) | max_tokens | all | as system | no | no |
//! | xai (docs.x.ai's OpenAPI) | max_completion_tokens | no | as system | no | no |
//! | ollama (ollama's openai.go) | max_tokens | no | as system | yes | no |
//! | vllm (vLLM's protocol.py) | max_completion_tokens | no | yes | no | no |
//!
//! A provider's reasoning text (`reasoning_content`: DeepSeek's, xAI's, Fireworks') is
//! recorded with its round and sent back on the assistant message of the run it came
//! with (DeepSeek refuses a tool-call chain without it), on every dialect alike: only
//! those that return it have it to send.

use crate::kinds::{Provider, Wire};
use crate::options::{refusal, Format, Options, Refusal, ToolChoice};

/// Where a dialect takes a message's content as one string rather than a list of parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strings {
    /// Parts on every role (OpenAI's).
    Never,
    /// Every role's but the user's (Together: system, assistant and tool content are
    /// strings; a user's may carry images).
    NotUser,
    /// Every role's (DeepSeek: text only).
    Always,
}

/// A request option a dialect's request type has no field for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lacks {
    /// `metadata`.
    Metadata,
    /// `parallel_tool_calls`.
    ParallelToolCalls,
    /// `tool_choice`.
    ToolChoice,
}

impl Lacks {
    /// The option's key, and whether `o` sets it.
    fn set_in(self, o: &Options) -> (&'static str, bool) {
        match self {
            Lacks::Metadata => ("metadata", o.metadata.is_some()),
            Lacks::ParallelToolCalls => ("parallel_tool_calls", o.parallel_tool_calls.is_some()),
            Lacks::ToolChoice => ("tool_choice", o.tool_choice.is_some()),
        }
    }
}

/// What a provider's dialect of Chat Completions takes differently from OpenAI's.
#[derive(Debug)]
pub(super) struct Dialect {
    /// The provider, as refusals name it.
    pub(super) provider: Provider,
    /// The output limit's key: `max_completion_tokens`, or `max_tokens` where the request
    /// type has no other (Ollama ignores the newer key).
    pub(super) limit: &'static str,
    /// Where a message's content is one string: its texts joined by a blank line.
    pub(super) strings: Strings,
    /// Whether it takes the `developer` role (else a developer message is spoken as
    /// `system`).
    pub(super) developer: bool,
    /// Whether an assistant's tool call carries its `index` in the message (Together's
    /// type requires it).
    pub(super) call_index: bool,
    /// Whether it takes `prompt_cache_key`.
    pub(super) cache_key: bool,
    /// The request options its request type has no field for.
    pub(super) lacks: &'static [Lacks],
    /// Whether it takes a named `tool_choice` (`{"type":"function","function":{...}}`).
    pub(super) named_tool: bool,
    /// Whether it takes `response_format` `json_schema` (DeepSeek: `json_object` only).
    pub(super) json_schema: bool,
}

const OPENAI: Dialect = Dialect {
    provider: Provider::OpenAi,
    limit: "max_completion_tokens",
    strings: Strings::Never,
    developer: true,
    call_index: false,
    cache_key: true,
    lacks: &[],
    named_tool: true,
    json_schema: true,
};

const DIALECTS: &[Dialect] = &[
    OPENAI,
    Dialect {
        provider: Provider::Azure,
        ..OPENAI
    },
    Dialect {
        provider: Provider::Mistral,
        limit: "max_tokens",
        developer: false,
        ..OPENAI
    },
    Dialect {
        provider: Provider::Groq,
        cache_key: false,
        ..OPENAI
    },
    Dialect {
        provider: Provider::Together,
        limit: "max_tokens",
        strings: Strings::NotUser,
        developer: false,
        call_index: true,
        cache_key: false,
        lacks: &[Lacks::Metadata, Lacks::ParallelToolCalls],
        named_tool: false,
        ..OPENAI
    },
    Dialect {
        provider: Provider::Fireworks,
        developer: false,
        ..OPENAI
    },
    Dialect {
        provider: Provider::OpenRouter,
        ..OPENAI
    },
    Dialect {
        provider: Provider::DeepSeek,
        limit: "max_tokens",
        strings: Strings::Always,
        developer: false,
        cache_key: false,
        lacks: &[Lacks::Metadata, Lacks::ParallelToolCalls],
        json_schema: false,
        ..OPENAI
    },
    Dialect {
        provider: Provider::Xai,
        developer: false,
        cache_key: false,
        lacks: &[Lacks::Metadata],
        ..OPENAI
    },
    Dialect {
        provider: Provider::Ollama,
        limit: "max_tokens",
        developer: false,
        call_index: true,
        cache_key: false,
        lacks: &[Lacks::Metadata, Lacks::ParallelToolCalls, Lacks::ToolChoice],
        ..OPENAI
    },
    Dialect {
        provider: Provider::Vllm,
        cache_key: false,
        lacks: &[Lacks::Metadata],
        ..OPENAI
    },
];

/// OpenAI's own dialect (a request without a model speaks it).
pub(super) fn openai() -> &'static Dialect {
    &DIALECTS[0]
}

/// The dialect `provider` speaks on chat; `None`: it speaks none.
pub(super) fn of(provider: Provider) -> Option<&'static Dialect> {
    DIALECTS.iter().find(|d| d.provider == provider)
}

impl Dialect {
    /// Whether a message of `role` has its content as one string.
    pub(super) fn string_content(&self, role: crate::kinds::Role) -> bool {
        use crate::kinds::Role;
        match self.strings {
            Strings::Never => false,
            Strings::NotUser => role != Role::User,
            Strings::Always => true,
        }
    }

    /// Whether a user message of this dialect may carry an image part.
    pub(super) fn takes_images(&self) -> bool {
        self.strings != Strings::Always
    }

    /// The role a message of `role` is spoken in.
    pub(super) fn role(&self, role: crate::kinds::Role) -> &'static str {
        use crate::kinds::Role;
        match role {
            Role::Developer if !self.developer => Role::System.as_str(),
            Role::Developer | Role::System | Role::User | Role::Assistant => role.as_str(),
        }
    }

    /// Refuses what the provider's request type has no field for: a request option it
    /// lacks, a named tool choice where it takes none, a JSON schema where it takes JSON
    /// objects only.
    pub(super) fn check(&self, o: &Options) -> Result<(), Refusal> {
        let provider = self.provider.as_str();
        for lack in self.lacks {
            if let (key, true) = lack.set_in(o) {
                return refusal(Wire::Chat, key, &format!("to {provider} takes no {key}"));
            }
        }
        if !self.named_tool && matches!(o.tool_choice, Some(ToolChoice::Named(_))) {
            return refusal(
                Wire::Chat,
                "tool_choice",
                &format!("to {provider} takes no named tool choice (auto, none or required)"),
            );
        }
        if !self.json_schema && matches!(o.response_format, Some(Format::JsonSchema { .. })) {
            return refusal(
                Wire::Chat,
                "response_format",
                &format!("to {provider} takes a JSON object response format, not a JSON schema"),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_the_guide_names_for_chat_has_its_dialect_and_no_other_does() {
        let spoken: Vec<&str> = Provider::ALL
            .iter()
            .filter(|p| of(**p).is_some())
            .map(|p| p.as_str())
            .collect();
        assert_eq!(
            spoken,
            [
                "openai",
                "azure",
                "mistral",
                "deepseek",
                "xai",
                "groq",
                "together",
                "fireworks",
                "openrouter",
                "ollama",
                "vllm"
            ]
        );
    }
}
