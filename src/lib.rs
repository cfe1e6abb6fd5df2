//! pgprompt: compiles the exact request a language model gets for a conversation turn,
//! inside PostgreSQL. `compile` is the pure core; `pg` is the thin database layer.

pub mod compile;
