//! What a 2026-07-28 server checks on every request before it processes it (the mock's
//! stateless rules). Each refusal cites the rule of `mcp-spec/2026-07-28/`:
//!
//! - `basic/index.mdx` `_meta`: a request missing `io.modelcontextprotocol/protocolVersion`
//!   or `…/clientCapabilities` is malformed → `-32602` (HTTP 400).
//! - `basic/versioning.mdx`: an unsupported version → `-32022` with `data.supported` and
//!   `data.requested` (HTTP 400).
//! - `basic/transports/streamable-http.mdx` Server Validation: `MCP-Protocol-Version`,
//!   `Mcp-Method` and (for `tools/call`, `resources/read`, `prompts/get`) `Mcp-Name` present
//!   and equal to the body after decoding `=?base64?…?=`, and `Mcp-Param-{Name}` present
//!   exactly when the declared argument is (Custom Headers from Tool Parameters) → else 400
//!   `-32020` HeaderMismatch.
//!
//! The `stateless` op changes what is checked ([`Rules`]); the engines call [`check_body`]
//! (both transports) and [`check_headers`] (Streamable HTTP).
//!
//! `basic/versioning.mdx`: "Servers MUST implement server/discover", and a client MAY send it
//! before anything else (a dual-era client probes with it): an unscripted one gets
//! [`discover_result`] instead of `-32601`, so a probe no scenario scripted is answered like a
//! 2026-07-28 server would.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// `_meta` keys.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// See [`META_PROTOCOL_VERSION`].
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// What the mock checks; the scenario's revision by default, every check on.
#[derive(Debug, Clone)]
pub struct Rules {
    /// Check `_meta` and the version on every request.
    pub meta: bool,
    /// Check the mirrored headers (Streamable HTTP).
    pub headers: bool,
    /// The versions the mock accepts.
    pub supported: Vec<String>,
    /// `Mcp-Param-{Name}` headers the mock's tools declare: tool → header name part →
    /// dot-separated argument path.
    pub params: BTreeMap<String, BTreeMap<String, String>>,
}

impl Rules {
    /// Applies a `stateless` step's changes.
    pub fn apply(&mut self, step: &mcp_scenario::script::step::Stateless) {
        if let Some(on) = step.check_meta {
            self.meta = on;
        }
        if let Some(on) = step.check_headers {
            self.headers = on;
        }
        if let Some(versions) = &step.supported_versions {
            self.supported = versions.clone();
        }
        if let Some(params) = &step.param_headers {
            self.params.extend(params.clone());
        }
    }

    /// Every check on, accepting `revision`.
    pub fn for_revision(revision: &str) -> Self {
        Rules { meta: true, headers: true, supported: vec![revision.to_owned()], params: BTreeMap::new() }
    }
}

/// Why a request is refused: the HTTP status, the JSON-RPC error and the transcript's reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// 400 for every rule here.
    pub status: u16,
    /// The JSON-RPC error object.
    pub error: Value,
    /// A short reason for the transcript.
    pub why: &'static str,
}

/// Every `why` a 2026-07-28 refusal is recorded with: the harness names such a refusal when
/// a script stops at a request the mock turned away before its script saw it.
pub const REFUSALS: &[&str] = &[
    "missing _meta protocolVersion",
    "missing _meta clientCapabilities",
    "unsupported protocol version",
    "header mismatch",
];

fn refuse(why: &'static str, code: i64, message: String, data: Option<Value>) -> Refusal {
    debug_assert!(REFUSALS.contains(&why), "{why} is listed in REFUSALS");
    let mut error = json!({"code": code, "message": message});
    if let Some(d) = data {
        error["data"] = d;
    }
    Refusal { status: 400, error, why }
}

/// The request's `_meta` checks, for any transport.
pub fn check_body(rules: &Rules, message: &Value) -> Option<Refusal> {
    if !rules.meta {
        return None;
    }
    let meta = message.get("params").and_then(|p| p.get("_meta"));
    let version = meta.and_then(|m| m.get(META_PROTOCOL_VERSION)).and_then(Value::as_str);
    let Some(version) = version else {
        return Some(refuse(
            "missing _meta protocolVersion",
            -32602,
            format!("Invalid params: _meta[\"{META_PROTOCOL_VERSION}\"] is required"),
            None,
        ));
    };
    if meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES)).is_none_or(|c| !c.is_object()) {
        return Some(refuse(
            "missing _meta clientCapabilities",
            -32602,
            format!("Invalid params: _meta[\"{META_CLIENT_CAPABILITIES}\"] is required"),
            None,
        ));
    }
    if !rules.supported.iter().any(|s| s == version) {
        return Some(refuse(
            "unsupported protocol version",
            -32022,
            "Unsupported protocol version".into(),
            Some(json!({"supported": rules.supported, "requested": version})),
        ));
    }
    None
}

/// The answer to an unscripted `server/discover`: the versions the mock accepts, the
/// capabilities the scenario needs (`Defaults::capabilities`: what the script serves, nothing
/// beyond), and the fields every 2026-07-28 result carries.
pub fn discover_result(rules: &Rules, capabilities: &Value) -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": rules.supported,
        "capabilities": capabilities,
        "ttlMs": 0,
        "cacheScope": "private",
    })
}

/// The mirrored-header checks of one POSTed request (`headers`: lowercase names).
pub fn check_headers(rules: &Rules, headers: &BTreeMap<String, String>, message: &Value) -> Option<Refusal> {
    if !rules.headers {
        return None;
    }
    let method = message.get("method").and_then(Value::as_str).unwrap_or_default();
    let params = message.get("params");
    let body_version = params.and_then(|p| p.get("_meta")).and_then(|m| m.get(META_PROTOCOL_VERSION));
    let mismatch = |header: &str, detail: String| {
        Some(refuse("header mismatch", -32020, format!("Header mismatch: {header} {detail}"), None))
    };
    match (headers.get("mcp-protocol-version"), body_version.and_then(Value::as_str)) {
        (None, _) => return mismatch("MCP-Protocol-Version", "header is missing".into()),
        (Some(h), Some(b)) if h != b => {
            return mismatch("MCP-Protocol-Version", format!("header value '{h}' does not match body value '{b}'"));
        }
        _ => {}
    }
    match headers.get("mcp-method") {
        None => return mismatch("Mcp-Method", "header is missing".into()),
        Some(h) if h != method => {
            return mismatch("Mcp-Method", format!("header value '{h}' does not match body value '{method}'"));
        }
        _ => {}
    }
    let field = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    let body = params.and_then(|p| p.get(field)).and_then(Value::as_str).unwrap_or_default();
    match headers.get("mcp-name").map(|h| decode(h)) {
        None => return mismatch("Mcp-Name", "header is missing".into()),
        Some(None) => return mismatch("Mcp-Name", "header value is not valid =?base64?…?= encoding".into()),
        Some(Some(h)) if h != body => {
            return mismatch("Mcp-Name", format!("header value '{h}' does not match body value '{body}'"));
        }
        _ => {}
    }
    let declared = rules.params.get(body).filter(|_| method == "tools/call")?;
    let arguments = params.and_then(|p| p.get("arguments")).unwrap_or(&Value::Null);
    for (name, path) in declared {
        let header = format!("Mcp-Param-{name}");
        let value = path.split('.').try_fold(arguments, |v, key| v.get(key)).filter(|v| !v.is_null());
        let sent = headers.get(&format!("mcp-param-{}", name.to_ascii_lowercase()));
        match (value, sent.map(|h| decode(h))) {
            (None, None) => {}
            (None, Some(_)) => return mismatch(&header, format!("header is sent but the body has no {path}")),
            (Some(_), None) => return mismatch(&header, format!("header is missing but the body has {path}")),
            (Some(_), Some(None)) => {
                return mismatch(&header, "header value is not valid =?base64?…?= encoding".into());
            }
            (Some(v), Some(Some(h))) if !same_value(v, &h) => {
                return mismatch(&header, format!("header value '{h}' does not match body value {v}"));
            }
            _ => {}
        }
    }
    None
}

/// A body value as its header text: strings as is, booleans lowercase, integers compared
/// numerically (`42.0` equals `42`).
fn same_value(body: &Value, header: &str) -> bool {
    match body {
        Value::String(s) => s == header,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        Value::Number(n) => header.parse::<f64>().is_ok_and(|h| n.as_f64() == Some(h)),
        _ => false,
    }
}

/// A header value as the server reads it: the decoded text of `=?base64?…?=`, else the
/// value itself; `None` when the sentinel holds no valid UTF-8 base64.
pub fn decode(value: &str) -> Option<String> {
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        Some(inner) => STANDARD.decode(inner).ok().and_then(|b| String::from_utf8(b).ok()),
        None => Some(value.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    }

    fn meta(version: &str) -> Value {
        json!({META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: {}})
    }

    #[test]
    fn discover_names_the_accepted_versions() {
        let mut rules = Rules::for_revision("2026-07-28");
        rules.supported.push("2030-01-01".into());
        let result = discover_result(&rules, &json!({}));
        assert_eq!(result["supportedVersions"], json!(["2026-07-28", "2030-01-01"]));
        assert_eq!(result["resultType"], json!("complete"));
        assert!(result["capabilities"].is_object());
    }

    #[test]
    fn body_rules() {
        let rules = Rules::for_revision("2026-07-28");
        assert_eq!(
            check_body(&rules, &request("tools/list", json!({}))).map(|r| r.error["code"].clone()),
            Some(json!(-32602))
        );
        let old = check_body(&rules, &request("tools/list", json!({"_meta": meta("2025-11-25")}))).expect("refused");
        assert_eq!(old.error["code"], -32022);
        assert_eq!(old.error["data"]["supported"], json!(["2026-07-28"]));
        assert_eq!(check_body(&rules, &request("tools/list", json!({"_meta": meta("2026-07-28")}))), None);
    }

    #[test]
    fn header_rules_decode_before_comparing() {
        let rules = Rules::for_revision("2026-07-28");
        let msg = request("tools/call", json!({"name": "Hello, 世界", "_meta": meta("2026-07-28")}));
        let mut h: BTreeMap<String, String> = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(check_headers(&rules, &h, &msg), None);
        h.insert("mcp-name".into(), "other".into());
        assert_eq!(check_headers(&rules, &h, &msg).map(|r| r.error["code"].clone()), Some(json!(-32020)));
        h.remove("mcp-method");
        assert!(check_headers(&rules, &h, &msg).is_some());
    }
}
