//! The request options a request takes, resolved against its wire and its model's
//! profile: the neutral options (`crate::options`) merged and read, then what only some
//! wires take and the shape of the wire's own fields (its `Form`), and the profile's
//! rules (or, without a profile, the wire's 0.3 rules). `crate::options` asks no wire:
//! this file is where the two meet.

use crate::error::{Code, Error, Result};
use crate::json_at::Obj;
use crate::kinds::{ThinkingMode, Wire};
use crate::options::{
    forced, invalid, merge, mode_of, profile_check, read, refusal, refused, thinks, Options, Refusal, RequestOptions,
    Rules, KEYS, ROOT,
};

/// Refuses what `wire` cannot say, whatever the model: what only some wires take (the
/// stored-response options, cache diagnostics, Gemini's thoughts), then the shape of
/// the wire's own fields (`Form::check_options`). `max_tokens` bounds a
/// thinking budget (Anthropic).
fn check_shape(o: &Options, wire: Wire, max_tokens: i32) -> std::result::Result<(), Refusal> {
    let form = wire.form();
    only_some_wires(o, wire)?;
    if o.thinking.as_ref().is_some_and(|t| t.include_thoughts.is_some()) && !form.returns_thoughts() {
        return refusal(
            wire,
            "thinking/include_thoughts",
            "returns no thoughts on request (a Gemini option)",
        );
    }
    form.check_options(o, max_tokens)
}

/// The options only some wires take: the stored-response ones (`store`, `include`,
/// `stateful`) on a wire that stores responses, `stateful` with stored responses only,
/// and `cache_diagnostics` where the provider explains a miss.
fn only_some_wires(o: &Options, wire: Wire) -> std::result::Result<(), Refusal> {
    let refuse = |key: &'static str, what: &str| refusal(wire, key, what);
    if !wire.form().stores_responses() {
        if o.store.is_some() {
            return refuse("store", "takes no store (a Responses option)");
        }
        if o.include.is_some() {
            return refuse("include", "takes no include (a Responses option)");
        }
        if o.stateful {
            return refuse("stateful", "keeps no conversation state (a Responses option)");
        }
    }
    if o.stateful && o.store == Some(false) {
        return refuse(
            "stateful",
            "chains stored responses only: stateful needs store true or unset",
        );
    }
    if o.cache_diagnostics && !wire.form().takes_cache_diagnostics() {
        return refuse(
            "cache_diagnostics",
            "returns no cache diagnostics (anthropic and responses do)",
        );
    }
    Ok(())
}

/// Refuses what `wire` does not take from a model without a profile (0.3's rules):
/// Anthropic's sampling options (its SDK's request type has none).
fn check_wire(o: &Options, wire: Wire, max_tokens: i32) -> std::result::Result<(), Refusal> {
    check_shape(o, wire, max_tokens)?;
    wire.form().check_unprofiled(o)
}

/// The shape of the wire, then the model's profile (or, without one, the wire's 0.3
/// rules); the thinking mode sent is decided here. A refusal with an empty key is the
/// model's own (its wire, its output limit).
fn check_model(
    o: &mut Options,
    wire: Wire,
    max_tokens: i32,
    rules: Option<Rules<'_>>,
) -> std::result::Result<(), Refusal> {
    let Some(Rules { model, profile: p }) = rules else {
        check_wire(o, wire, max_tokens)?;
        o.mode = o
            .thinking
            .as_ref()
            .and_then(|t| t.mode.or(t.budget.map(|_| ThinkingMode::Enabled)));
        return Ok(());
    };
    // The model's rules first (they name the model), then what its wire can say.
    p.check_model(model, wire, max_tokens)?;
    profile_check(p, model, o, max_tokens)?;
    if forced(o) && !p.thinking_with_forced_tool && thinks(p, o.thinking.as_ref()) {
        return Err((
            "tool_choice",
            format!(
                "{} takes no thinking beside a forced tool choice (required or a named tool)",
                p.who(model)
            ),
        ));
    }
    check_shape(o, wire, max_tokens)?;
    o.mode = o.thinking.as_ref().and_then(|t| mode_of(p, t));
    Ok(())
}

/// The dialect a request speaks: its provider (`wire::provider_of`) and whether its model
/// row sends images as image parts (`models.native_images`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dialect {
    pub(crate) provider: crate::kinds::Provider,
    pub(crate) native_images: bool,
}

/// The merged options of a request, parsed and checked against its wire, the model's
/// profile and the dialect of its provider; a refusal names the key and the level (model,
/// agent, turn) that set it.
pub(crate) fn resolve_options(
    levels: [(&str, &RequestOptions); 3],
    wire: Wire,
    max_tokens: i32,
    rules: Option<Rules<'_>>,
    dialect: Dialect,
) -> Result<Options> {
    let (merged, origin) = merge(levels);
    let level = |key: &str| origin.iter().find(|(k, _)| k == key).map_or("request", |(_, l)| *l);
    let top = |key: &str| {
        KEYS.iter()
            .find(|k| key == **k || key.starts_with(&format!("{k}/")))
            .copied()
            .unwrap_or("")
    };
    let mut o = read(&Obj::root(&merged, ROOT)).map_err(|r| {
        // The level that set the refused option: the pointer's first token, unescaped.
        let token = r
            .path
            .strip_prefix(ROOT)
            .and_then(|t| t.strip_prefix('/'))
            .unwrap_or_default();
        let key = token
            .split('/')
            .next()
            .unwrap_or_default()
            .replace("~1", "/")
            .replace("~0", "~");
        refused(r).detail(format!("Set by the {}'s request_options.", level(&key)))
    })?;
    let checked = check_model(&mut o, wire, max_tokens, rules)
        .and_then(|()| wire.form().check_dialect(&o, dialect.provider, dialect.native_images));
    checked.map_err(|(key, what)| {
        if key.is_empty() && rules.is_none() {
            return Error::new(Code::ModelInvalid, what).detail(format!(
                "The row of prompt.models (wire {}, provider {}) does not fit its provider.",
                wire.as_str(),
                dialect.provider.as_str()
            ));
        }
        let Some(r) = rules else {
            return invalid(key, what).detail(format!(
                "Set by the {}'s request_options; the request goes on the {} wire.",
                level(top(key)),
                wire.as_str()
            ));
        };
        let hint = format!(
            "The rules are the model's profile: SELECT * FROM prompt.model_profiles WHERE name = '{}'.",
            r.profile.name
        );
        if key.is_empty() {
            return Error::new(Code::ModelInvalid, what)
                .detail(format!(
                    "The row of prompt.models (wire {}, max_output_tokens {max_tokens}) does not fit its profile.",
                    wire.as_str()
                ))
                .hint(hint);
        }
        invalid(key, what)
            .detail(format!(
                "Set by the {}'s request_options; the request goes on the {} wire, to a model of profile \"{}\".",
                level(top(key)),
                wire.as_str(),
                r.profile.name
            ))
            .hint(hint)
    })?;
    Ok(o)
}
