//! Placeholders in payloads the script writes raw: `{id}` (the id of the request being
//! answered) and `{progressToken}` (that request's `params._meta.progressToken`). A raw
//! payload that carried a literal id (`"id": 2`) was right only for a client that numbers
//! its requests like ours; one with a token the client never issued is a progress
//! notification the spec forbids (2025-11-25 basic/utilities/progress: progress
//! notifications MUST only reference tokens that were provided in an active request).
//!
//! In JSON (`json:` fields, `notify` params) a string that is exactly a placeholder becomes
//! the value itself (`"{id}"` → `2`, or `"a-1"` for a string id); in raw text (`text:`,
//! `data:`, `partial:`) the placeholder becomes the value's JSON text (`2`, `"a-1"` with its
//! quotes). The loader refuses a placeholder where no earlier `expect` on the connection
//! waits for a request ([`Validation::answering`](crate::ops::Validation::answering)); at run
//! time a request without a progress token makes the step send nothing (noted), because the
//! mock must not invent a token.

use serde_json::Value;
use std::borrow::Cow;

/// The id of the request being answered.
pub const ID: &str = "{id}";
/// The progress token of the request being answered.
pub const PROGRESS_TOKEN: &str = "{progressToken}";

/// Why a payload with placeholders cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Missing {
    /// No request is being answered (the loader refuses this; kept for a broken client).
    #[error("`{{id}}` / `{{progressToken}}`: no request is being answered")]
    Request,
    /// The request carries no `params._meta.progressToken`.
    #[error("the request carries no params._meta.progressToken, and the mock does not invent one")]
    ProgressToken,
}

/// Whether `text` uses a placeholder.
pub fn in_text(text: &str) -> bool {
    text.contains(ID) || text.contains(PROGRESS_TOKEN)
}

/// Whether a JSON value has a string that is exactly a placeholder.
pub fn in_json(value: &Value) -> bool {
    match value {
        Value::String(s) => s == ID || s == PROGRESS_TOKEN,
        Value::Array(items) => items.iter().any(in_json),
        Value::Object(members) => members.values().any(in_json),
        _ => false,
    }
}

fn id(request: Option<&Value>) -> Result<&Value, Missing> {
    request.and_then(|r| r.get("id")).ok_or(Missing::Request)
}

fn token(request: Option<&Value>) -> Result<&Value, Missing> {
    let request = request.ok_or(Missing::Request)?;
    request.pointer("/params/_meta/progressToken").filter(|t| !t.is_null()).ok_or(Missing::ProgressToken)
}

/// `text` with each placeholder replaced by its value's JSON text.
pub fn text<'a>(text: &'a str, request: Option<&Value>) -> Result<Cow<'a, str>, Missing> {
    if !in_text(text) {
        return Ok(Cow::Borrowed(text));
    }
    let mut out = text.to_string();
    if out.contains(ID) {
        out = out.replace(ID, &id(request)?.to_string());
    }
    if out.contains(PROGRESS_TOKEN) {
        out = out.replace(PROGRESS_TOKEN, &token(request)?.to_string());
    }
    Ok(Cow::Owned(out))
}

/// `value` with each string that is exactly a placeholder replaced by its value.
pub fn json(value: &Value, request: Option<&Value>) -> Result<Value, Missing> {
    Ok(match value {
        Value::String(s) if s == ID => id(request)?.clone(),
        Value::String(s) if s == PROGRESS_TOKEN => token(request)?.clone(),
        Value::Array(items) => Value::Array(items.iter().map(|v| json(v, request)).collect::<Result<_, _>>()?),
        Value::Object(members) => Value::Object(
            members.iter().map(|(k, v)| json(v, request).map(|v| (k.clone(), v))).collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

/// A payload's bytes with placeholders replaced (`text` and `json`; the other kinds are
/// bytes, never placeholders).
pub fn bytes(payload: mcp_scenario::payload::Payload<'_>, request: Option<&Value>) -> Result<Vec<u8>, Missing> {
    use mcp_scenario::payload::Payload;
    match payload {
        Payload::Text(t) => Ok(text(t, request)?.into_owned().into_bytes()),
        Payload::Json(j) => Ok(Payload::Json(&json(j, request)?).bytes().unwrap_or_default()),
        other => Ok(other.bytes().unwrap_or_default()),
    }
}

/// The field a payload came from, for load-time messages.
pub fn field_of(payload: mcp_scenario::payload::Payload<'_>) -> &'static str {
    use mcp_scenario::payload::Payload;
    match payload {
        Payload::Text(_) => "text",
        Payload::Json(_) => "json",
        Payload::Hex(_) => "hex",
        Payload::Base64(_) => "base64",
        Payload::Generate(_) => "generate",
    }
}

/// Whether a payload uses a placeholder.
pub fn in_payload(payload: mcp_scenario::payload::Payload<'_>) -> bool {
    use mcp_scenario::payload::Payload;
    match payload {
        Payload::Text(t) => in_text(t),
        Payload::Json(j) => in_json(j),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: Value, meta: Option<Value>) -> Value {
        let mut r = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "x"}});
        if let Some(m) = meta {
            r["params"]["_meta"] = m;
        }
        r
    }

    #[test]
    fn json_placeholders_become_the_values() {
        let r = call(json!(0), Some(json!({"progressToken": "tok"})));
        let payload = json!([{"id": "{id}", "result": {"text": "{id} stays text"}}, {"params": {"progressToken": "{progressToken}"}}]);
        assert!(in_json(&payload));
        assert_eq!(
            json(&payload, Some(&r)).expect("ok"),
            json!([{"id": 0, "result": {"text": "{id} stays text"}}, {"params": {"progressToken": "tok"}}])
        );
        let s = call(json!("a-1"), Some(json!({"progressToken": 7})));
        assert_eq!(
            json(&json!({"id": "{id}", "t": "{progressToken}"}), Some(&s)).expect("ok"),
            json!({"id": "a-1", "t": 7})
        );
    }

    #[test]
    fn text_placeholders_become_json_text() {
        let r = call(json!("a-1"), Some(json!({"progressToken": 3})));
        assert_eq!(text("{\"id\":{id},\"t\":{progressToken}}", Some(&r)).expect("ok"), "{\"id\":\"a-1\",\"t\":3}");
        assert!(matches!(text("no placeholder {x}", None), Ok(Cow::Borrowed(_))));
    }

    #[test]
    fn missing_request_or_token_is_an_error_never_an_invented_value() {
        assert_eq!(text("{id}", None).expect_err("none"), Missing::Request);
        let r = call(json!(1), None);
        assert_eq!(json(&json!("{progressToken}"), Some(&r)).expect_err("no token"), Missing::ProgressToken);
        let null = call(json!(1), Some(json!({"progressToken": null})));
        assert_eq!(text("{progressToken}", Some(&null)).expect_err("null"), Missing::ProgressToken);
        assert_eq!(text("{id}", Some(&r)).expect("id only"), "1");
    }
}
