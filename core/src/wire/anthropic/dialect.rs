//! The providers that speak the anthropic wire: Anthropic's Messages API, and Claude on
//! Google Cloud's Vertex AI (`POST https://{region}-aiplatform.googleapis.com/v1/projects/
//! {project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict`), whose body
//! names no model (the URL does) and carries `anthropic_version` last: as the anthropic
//! SDK's `AnthropicVertex` client sends it (anthropic 2.17.0, `lib/vertex/_client.py`,
//! `_prepare_options`: the model popped from the body, `anthropic_version` set to
//! `_constants.ANTHROPIC_API_VERSION` when absent). Its count endpoint
//! (`.../models/count-tokens:rawPredict`) takes the model in the body.

use crate::kinds::{Provider, Wire};
use crate::rows::Model;

/// The `anthropic_version` a Vertex body carries: anthropic 2.17.0's
/// `_constants.ANTHROPIC_API_VERSION`, what its Vertex client sends.
pub(super) const VERTEX_VERSION: &str = "2026-10-21";

/// The key a Vertex body carries its version under (and so tells it apart).
pub(super) const VERSION_KEY: &str = "anthropic_version";

/// Whether the wire has a dialect of `provider`.
pub(super) fn speaks(provider: Provider) -> bool {
    matches!(provider, Provider::Anthropic | Provider::Vertex)
}

/// Whether a request for `model` goes to Vertex AI.
pub(super) fn vertex(model: Option<&Model>) -> bool {
    super::super::dialect::provider_of(model, Wire::Anthropic) == Provider::Vertex
}
