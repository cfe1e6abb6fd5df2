//! The request options a request takes, resolved against its wire and its model's
//! profile: the neutral options (`crate::options`) and every wire's own ones
//! (`Form::own_options`) merged and read, then what only some wires take and the shape
//! of the wire's own fields (its `Form`), and the profile's rules (or, without a profile,
//! the wire's 0.3 rules). `crate::options` asks no wire: this file is where the two meet,
//! and it names no wire either (a refusal names the wires that take an option by asking
//! each).

use std::sync::LazyLock;

use crate::error::{Code, Error, Result};
use crate::json_at::Obj;
use crate::json_input::JsonInput;
use crate::kinds::{ThinkingMode, Wire};
use crate::options::{
    forced, invalid, merge, mode_of, profile_check, read, refusal, refused, thinks, Options, Own, OwnOption, Refusal,
    RequestOptions, Rules, ROOT,
};

use super::form::Form;

/// Every wire's own options, each declaration once, in the order of `Wire::ALL`.
static EVERY_OWN: LazyLock<Vec<&'static OwnOption>> = LazyLock::new(|| {
    let mut all: Vec<&'static OwnOption> = Vec::new();
    for wire in Wire::ALL {
        for declared in wire.form().own_options() {
            if !all.iter().any(|o| o.key == declared.key) {
                all.push(declared);
            }
        }
    }
    all
});

/// A read that takes every wire's own options.
pub(crate) fn every_wire() -> Own<'static> {
    Own::Of(&EVERY_OWN)
}

/// Parses one level's `request_options` as a write checks them: an object of the
/// neutral options and of options some wire takes, each well formed (which wire the
/// request goes on is checked where the level's model is known, [`resolve_options`]).
pub(crate) fn parse_request_options<'a>(input: impl JsonInput<'a>) -> Result<RequestOptions> {
    crate::options::parse_request_options(input, every_wire())
}

/// The wires whose form says `takes`, as a refusal names them ("anthropic and responses").
fn wires_that(takes: impl Fn(&dyn Form) -> bool) -> String {
    let names: Vec<&str> = Wire::ALL
        .iter()
        .filter(|w| takes(w.form()))
        .map(|w| w.as_str())
        .collect();
    crate::options::and_last(&names)
}

/// Refuses what `wire` cannot say, whatever the model: what only some wires take (their
/// own options, stateful mode, cache diagnostics), then the shape of the wire's own
/// fields (`Form::check_options`). `max_tokens` bounds a thinking budget (Anthropic).
fn check_shape(o: &Options, wire: Wire, max_tokens: i32) -> std::result::Result<(), Refusal> {
    only_some_wires(o, wire)?;
    wire.form().check_options(o, max_tokens)
}

/// The options only some wires take: each wire's own (`Form::own_options`), `stateful`
/// on a wire that stores responses, and `cache_diagnostics` where the provider explains
/// a miss; a refusal names the wires that take it.
fn only_some_wires(o: &Options, wire: Wire) -> std::result::Result<(), Refusal> {
    let form = wire.form();
    // In the order the wires declare them (not the request's key order).
    for declared in EVERY_OWN.iter().filter(|d| o.own(d.key).is_some()) {
        if !form.own_options().iter().any(|x| x.key == declared.key) {
            let owners = wires_that(|f| f.own_options().iter().any(|x| x.key == declared.key));
            return refusal(
                wire,
                declared.key,
                &format!("{} (an option of {owners})", declared.lacking),
            );
        }
    }
    if o.stateful && !form.stores_responses() {
        let owners = wires_that(|f| f.stores_responses());
        return refusal(
            wire,
            "stateful",
            &format!("keeps no conversation state (an option of {owners})"),
        );
    }
    if o.cache_diagnostics && !form.takes_cache_diagnostics() {
        let owners = wires_that(|f| f.takes_cache_diagnostics());
        return refusal(
            wire,
            "cache_diagnostics",
            &format!("returns no cache diagnostics ({owners} do)"),
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
    let top = |key: &str| key.split('/').next().unwrap_or_default().to_string();
    let mut o = read(&Obj::root(&merged, ROOT), every_wire()).map_err(|r| {
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
                level(&top(key)),
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
                level(&top(key)),
                wire.as_str(),
                r.profile.name
            ))
            .hint(hint)
    })?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    /// A value an option's reader takes, tried from a few shapes.
    fn a_value_of(declared: &OwnOption) -> Value {
        let tries = [json!(true), json!([]), json!("x"), json!(1), json!({})];
        tries
            .into_iter()
            .find(|v| (declared.read)(&crate::json_at::At::root(v, ROOT)).is_ok())
            .unwrap_or_else(|| panic!("no value read for {declared:?}"))
    }

    /// `{"store": V}`, or `{"thinking": {"include_thoughts": V}}` for a thinking key.
    fn options_setting(declared: &OwnOption, v: Value) -> RequestOptions {
        let mut o = serde_json::Map::new();
        match declared.key.split_once('/') {
            Some((parent, key)) => o.insert(parent.into(), json!({ key: v })),
            None => o.insert(declared.key.into(), v),
        };
        RequestOptions(o)
    }

    fn on(wire: Wire, o: &RequestOptions) -> Result<Options> {
        let none = RequestOptions::default();
        let dialect = Dialect {
            provider: crate::wire::dialect_of(wire, None, None),
            native_images: false,
        };
        resolve_options(
            [("model", &none), ("agent", &none), ("turn", o)],
            wire,
            4096,
            None,
            dialect,
        )
    }

    /// Every wire's own option, on every wire: the wires that list it read it into the
    /// request's `own`; every other refuses it at its pointer, naming the wires that take
    /// it; a write takes it whatever the wire. A declaration is listed once whoever lists it.
    #[test]
    fn an_option_of_some_wires_is_theirs_and_refused_elsewhere_naming_them() {
        let Own::Of(every) = every_wire() else {
            panic!("every wire's")
        };
        assert!(!every.is_empty());
        for declared in every.iter().copied() {
            let o = options_setting(declared, a_value_of(declared));
            parse_request_options(serde_json::to_string(&o.0).unwrap().as_str()).expect("a write takes it");
            let owners: Vec<Wire> = Wire::ALL
                .iter()
                .copied()
                .filter(|w| {
                    w.form()
                        .own_options()
                        .iter()
                        .any(|x| std::ptr::eq(*x, declared) || x.key == declared.key)
                })
                .collect();
            assert!(!owners.is_empty(), "{declared:?}");
            for &wire in Wire::ALL.iter() {
                let got = on(wire, &o);
                if owners.contains(&wire) {
                    let o = got.unwrap_or_else(|e| panic!("{wire:?} {declared:?}: {}", e.message));
                    assert!(o.own(declared.key).is_some(), "{wire:?} {declared:?}");
                    continue;
                }
                let e = got.expect_err("refused");
                assert_eq!(e.code, Code::RequestOptionsInvalid);
                let names: Vec<&str> = owners.iter().map(|w| w.as_str()).collect();
                let said = format!(
                    "the {} wire {} (an option of {})",
                    wire.as_str(),
                    declared.lacking,
                    names.join(" and ")
                );
                assert!(e.message.contains(&said), "{wire:?}: {}", e.message);
                assert!(
                    e.message.ends_with(&format!("at {ROOT}/{}", declared.key)),
                    "{}",
                    e.message
                );
            }
        }
        let e = parse_request_options(r#"{"stores": true}"#).expect_err("unknown");
        for declared in every.iter().filter(|d| !d.key.contains('/')) {
            assert!(e.message.contains(declared.key), "{}", e.message);
        }
    }

    /// Every wire's own option has a key of its own: not a neutral option's, not a
    /// neutral thinking key, in no object but `thinking`, and declared by one wire (the
    /// read takes the first declaration of a key: a second would be silently ignored).
    #[test]
    fn each_own_option_has_a_key_of_its_own() {
        let mut seen: Vec<&str> = Vec::new();
        for &wire in Wire::ALL {
            for declared in wire.form().own_options() {
                let key = declared.key;
                assert!(!seen.contains(&key), "{key} is declared twice");
                seen.push(key);
                match key.split_once('/') {
                    None => assert!(!crate::options::KEYS.contains(&key), "{key} is a neutral option"),
                    Some((parent, sub)) => {
                        assert_eq!(parent, "thinking", "{key}");
                        assert!(!sub.contains('/') && !["mode", "budget_tokens", "effort", "display"].contains(&sub));
                    }
                }
            }
        }
        // A top-level key spelled like a thinking key is no option.
        let e = parse_request_options(r#"{"thinking/include_thoughts": true}"#).expect_err("unknown");
        assert!(
            e.message.contains("unknown option \"thinking/include_thoughts\""),
            "{}",
            e.message
        );
    }
}
