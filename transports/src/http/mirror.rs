//! 2026-07-28 request metadata headers (SPEC §4 stateless): the values a POST mirrors from
//! its own JSON-RPC body, so what the headers say can never drift from what the body says.
//! `MCP-Protocol-Version` is read from `params._meta`, `Mcp-Method` from `method`,
//! `Mcp-Name` from `params.name` / `params.uri`, `Mcp-Param-{Name}` from the arguments a
//! listed tool annotates with `x-mcp-header` (`param_headers`); a value that is not plain visible ASCII is
//! sent in the `=?base64?…?=` form.

use crate::param_headers::{self, Annotation};
use crate::stateless::META_PROTOCOL_VERSION;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use std::collections::HashMap;

/// The methods whose `Mcp-Name` is required, and the `params` member it mirrors.
const NAMED: &[(&str, &str)] = &[("tools/call", "name"), ("prompts/get", "name"), ("resources/read", "uri")];

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// The mirrored headers for one JSON-RPC request body, `(lowercase name, value)`, in wire
/// order. A body that is not a request object mirrors nothing.
pub fn headers_for(body: &Value, tool_params: &HashMap<String, Vec<Annotation>>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(method) = body.get("method").and_then(Value::as_str) else { return out };
    let params = body.get("params");
    if let Some(version) =
        params.and_then(|p| p.get("_meta")).and_then(|m| m.get(META_PROTOCOL_VERSION)).and_then(Value::as_str)
    {
        out.push(("mcp-protocol-version".into(), version.to_owned()));
    }
    out.push(("mcp-method".into(), encode(method)));
    if let Some((_, field)) = NAMED.iter().find(|(m, _)| *m == method)
        && let Some(name) = params.and_then(|p| p.get(*field)).and_then(Value::as_str)
    {
        out.push(("mcp-name".into(), encode(name)));
    }
    // `Mcp-Param-{Name}` for the annotated arguments of a tool listed earlier.
    if method == "tools/call"
        && let Some(annotations) =
            params.and_then(|p| p.get("name")).and_then(Value::as_str).and_then(|n| tool_params.get(n))
    {
        let arguments = params.and_then(|p| p.get("arguments")).unwrap_or(&Value::Null);
        for (name, text) in param_headers::values(annotations, arguments) {
            out.push((format!("mcp-param-{}", name.to_ascii_lowercase()), encode(&text)));
        }
    }
    out
}

/// A header value as sent: as-is when it is plain visible ASCII (spaces and tabs allowed
/// inside), else `=?base64?<base64 of the UTF-8>?=`; a plain value that looks like the
/// sentinel is encoded too, so it cannot be mistaken for one.
pub fn encode(value: &str) -> String {
    if is_plain(value) {
        value.to_owned()
    } else {
        format!("{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}", STANDARD.encode(value))
    }
}

fn is_plain(value: &str) -> bool {
    let safe = value.bytes().all(|b| b == b'\t' || (0x20..=0x7e).contains(&b));
    let edge = |c: Option<char>| c.is_some_and(|c| c == ' ' || c == '\t');
    let sentinel = value.starts_with(SENTINEL_PREFIX) && value.ends_with(SENTINEL_SUFFIX);
    safe && !edge(value.chars().next()) && !edge(value.chars().last()) && !sentinel
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The spec's encoding examples (streamable-http.mdx, Value Encoding).
    #[test]
    fn encodes_like_the_spec_examples() {
        for (value, header) in [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
            ("a b\tc", "a b\tc"),
        ] {
            assert_eq!(encode(value), header, "{value:?}");
        }
    }

    #[test]
    fn mirrors_method_name_and_version_from_the_body() {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
            "params": {"uri": "file:///a b", "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}});
        assert_eq!(
            headers_for(&body, &HashMap::new()),
            vec![
                ("mcp-protocol-version".to_owned(), "2026-07-28".to_owned()),
                ("mcp-method".to_owned(), "resources/read".to_owned()),
                ("mcp-name".to_owned(), "file:///a b".to_owned())
            ]
        );
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"name": "x"}});
        assert_eq!(headers_for(&list, &HashMap::new()), vec![("mcp-method".to_owned(), "tools/list".to_owned())]);
    }
}
