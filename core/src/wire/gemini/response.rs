//! Reading a response of this wire: Gemini `GenerateContentResponse`.

use crate::error::Result;
use crate::json_at::{At, Obj};
use crate::kinds::Wire;
use crate::response::{arguments, int, list, obj, opt_string, refused, string, sum, Heading, Parts, Response, Usage};

/// Where the response keeps its id, model and cache diagnostics.
const HEADING: Heading = Heading {
    id: Some("responseId"),
    model: Some("modelVersion"),
    diagnostics: None,
};

/// The response, if `o` is of this wire's shape (its usage's numbers checked first).
pub(super) fn recognize(o: &Obj<'_>) -> Option<Result<Response>> {
    if !(o.map.contains_key("candidates")) {
        return None;
    }
    Some(crate::response::counts(&o.at("usageMetadata")).and_then(|()| read(o)))
}

fn read(o: &Obj<'_>) -> Result<Response> {
    let candidates = o.at("candidates");
    let first = list(&candidates)?
        .next()
        .ok_or_else(|| refused(candidates.refuse("is empty")))?;
    let first = obj(&first)?;
    let content = obj(&first.at("content"))?;
    let mut parts = Parts::default();
    let listed = content.at("parts");
    let listed: Vec<At<'_>> = if listed.is_absent() {
        Vec::new()
    } else {
        list(&listed)?.collect()
    };
    for (i, p) in listed.iter().enumerate() {
        let path = p.path().to_string();
        let p = obj(p)?;
        let signature = opt_string(p.map, "thoughtSignature");
        if let Some(call) = p.get("functionCall") {
            let c = obj(&call)?;
            let input = arguments(&c.at("args"))?;
            // Older models give no call id: one is made from the part's place.
            let id = opt_string(c.map, "id").unwrap_or_else(|| format!("call_{i}"));
            parts.call(
                path,
                id,
                string(&c, "name")?,
                input,
                &[(super::replay::CALL_SIGNATURE, signature)],
            );
        } else if p.at("thought").value.as_bool() == Some(true) {
            parts
                .assistant
                .push(super::replay::recorded_thought(&string(&p, "text")?, signature));
        } else if p.map.contains_key("text") {
            // Gemini 3 signs text parts too: the signature rides back with the text.
            parts.said(string(&p, "text")?, &[(super::replay::SIGNED_TEXT.keys[0], signature)]);
        } else {
            // Code execution, a server-side tool call or response, ...: kept verbatim.
            parts.provider(Wire::Gemini, p.map);
        }
    }
    let (o, first) = (o.map, first.map);
    let usage = o.get("usageMetadata").filter(|u| u.is_object()).map(|u| {
        let prompt = int(Some(u), "promptTokenCount");
        let cached = int(Some(u), "cachedContentTokenCount");
        Usage {
            input_tokens: prompt.saturating_sub(cached),
            cache_creation_tokens: 0,
            cache_read_tokens: cached,
            output_tokens: sum(&[int(Some(u), "candidatesTokenCount"), int(Some(u), "thoughtsTokenCount")]),
            billed_input_tokens: prompt,
            cache_creation_by_ttl: Default::default(),
        }
    });
    Ok(parts.done(Wire::Gemini, &HEADING, o, opt_string(first, "finishReason"), usage))
}
