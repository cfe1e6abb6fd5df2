//! The providers that speak the gemini wire: Google's Gemini API
//! (`POST https://generativelanguage.googleapis.com/v1/models/{model}:generateContent`) and
//! Gemini on Google Cloud's Vertex AI (`POST https://{location}-aiplatform.googleapis.com/
//! v1beta1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`).
//! The body is the same on both: google-genai 3.6.1 sends the same bytes for the same call
//! to either (`models.py`, its `_to_mldev` and `_to_vertex` converters differ only in
//! fields this compile never writes: Vertex's `labels`, `routingConfig`, the API's
//! `store`), every content with its `role`. The model and the place are the URL's.

use crate::kinds::Provider;

/// Whether the wire has a dialect of `provider`.
pub(super) fn speaks(provider: Provider) -> bool {
    matches!(provider, Provider::Gemini | Provider::Vertex)
}
