//! Which provider's dialect a request speaks (docs/guide.md, "Compatible providers"): a
//! model row's `provider`, else its profile's where the wire speaks it, else the wire's
//! maker. Each wire's folder says which providers it speaks (`Form::speaks`) and how.

use crate::kinds::{Provider, Wire};
use crate::rows::Model;

/// Whether `wire` has a dialect of `provider` (the CHECK of `models.provider`).
pub fn speaks(wire: Wire, provider: Provider) -> bool {
    wire.form().speaks(provider)
}

/// The provider whose dialect of `wire` a request for `model` speaks: the model row's
/// `provider`, else its profile's provider where the wire speaks it, else the wire's
/// maker.
pub(crate) fn provider_of(model: Option<&Model>, wire: Wire) -> Provider {
    dialect_of(
        wire,
        model.and_then(|m| m.provider),
        model.and_then(|m| m.profile.as_ref()),
    )
}

/// The provider a model row of `wire` speaks: `named` (its `provider`), else its
/// `profile`'s provider where the wire speaks it, else the wire's maker.
pub(crate) fn dialect_of(wire: Wire, named: Option<Provider>, profile: Option<&crate::profile::Profile>) -> Provider {
    let form = wire.form();
    named
        .or_else(|| {
            profile
                .and_then(|p| Provider::parse(&p.provider))
                .filter(|p| form.speaks(*p))
        })
        .unwrap_or_else(|| form.maker())
}
