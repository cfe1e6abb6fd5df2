//! Reading a response of this wire: Bedrock `ConverseResponse` (no id, no model: the request's URL named it).

use crate::error::Result;
use crate::json_at::Obj;
use crate::kinds::Wire;
use crate::response::{
    arguments, by_ttl_list, int, list, obj, opt_string, refused, string, sum, Heading, Parts, Response, Usage,
};

/// Where the response keeps its id, model and cache diagnostics.
const HEADING: Heading = Heading {
    id: None,
    model: None,
    diagnostics: None,
};

/// The response, if `o` is of this wire's shape (its usage's numbers checked first).
pub(super) fn recognize(o: &Obj<'_>) -> Option<Result<Response>> {
    if !(o.map.contains_key("output") && o.map.contains_key("stopReason")) {
        return None;
    }
    Some(crate::response::counts(&o.at("usage")).and_then(|()| read(o)))
}

/// A Converse response (botocore's `ConverseResponse`): `output.message.content` read
/// into round parts — `text`, `toolUse` as a tool call, anything else (`reasoningContent`,
/// a server tool's block, ...) kept verbatim for this wire —, `stopReason`, and `usage`:
/// `inputTokens` is the uncached input, beside `cacheReadInputTokens` and
/// `cacheWriteInputTokens` (split by TTL in `cacheDetails`). A response carries no id
/// and no model: `record_response` knows it again by its digest.
fn read(o: &Obj<'_>) -> Result<Response> {
    let output = obj(&o.at("output"))?;
    let message = obj(&output.at("message"))?;
    let mut parts = Parts::default();
    for b in list(&message.at("content"))? {
        let path = b.path().to_string();
        let b = obj(&b)?;
        if b.map.len() != 1 {
            return Err(refused(
                b.refuse("is not one content block (a ContentBlock has exactly one key)"),
            ));
        }
        if b.map.contains_key("text") {
            parts.text(string(&b, "text")?);
        } else if b.map.contains_key("toolUse") {
            let c = obj(&b.at("toolUse"))?;
            let input = arguments(&c.at("input"))?;
            parts.call(path, string(&c, "toolUseId")?, string(&c, "name")?, input, &[]);
        } else {
            // reasoningContent, citationsContent, a server tool's block, ...: replayed as it
            // came, in place, on this wire only.
            parts.provider(Wire::Converse, b.map);
        }
    }
    let o = o.map;
    let usage = o.get("usage").filter(|u| u.is_object()).map(|u| {
        let (input, written, read) = (
            int(Some(u), "inputTokens"),
            int(Some(u), "cacheWriteInputTokens"),
            int(Some(u), "cacheReadInputTokens"),
        );
        Usage {
            input_tokens: input,
            cache_creation_tokens: written,
            cache_read_tokens: read,
            output_tokens: int(Some(u), "outputTokens"),
            billed_input_tokens: sum(&[input, written, read]),
            cache_creation_by_ttl: by_ttl_list(u.get("cacheDetails")),
        }
    });
    Ok(parts.done(Wire::Converse, &HEADING, o, opt_string(o, "stopReason"), usage))
}
