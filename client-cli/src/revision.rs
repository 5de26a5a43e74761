//! Protocol revisions: which are stateless, and choosing one after the server refused ours.
//!
//! 2026-07-28 `basic/versioning.mdx`: "The client **SHOULD** select a mutually supported
//! version from the `supported` list and retry the request".

use mcp_transports::TransportError;
use mcp_transports::client::SUPPORTED_PROTOCOL_VERSIONS;
use serde_json::Value;

/// The revisions without an `initialize` handshake (per-request `_meta` instead).
pub const STATELESS_REVISIONS: &[&str] = &["2026-07-28"];
/// The revision a session speaks when none is given.
pub const DEFAULT_REVISION: &str = mcp_transports::client::LATEST_PROTOCOL_VERSION;
/// The JSON-RPC error code of `UnsupportedProtocolVersionError` (2026-07-28 `basic/index.mdx`).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Whether `revision` is stateless.
pub fn is_stateless(revision: &str) -> bool {
    STATELESS_REVISIONS.contains(&revision)
}

/// Every revision this client can speak, most preferred first.
pub fn known_revisions() -> Vec<&'static str> {
    let mut all: Vec<&str> = STATELESS_REVISIONS.to_vec();
    all.extend(SUPPORTED_PROTOCOL_VERSIONS.iter().rev());
    all
}

/// The `supported` list of an `UnsupportedProtocolVersionError`, whether the transport
/// reported it as a JSON-RPC error or as the body of an HTTP 400.
pub fn supported_by_server(error: &TransportError) -> Option<Vec<String>> {
    let error_object = match error {
        TransportError::Rpc(e) if e.code == UNSUPPORTED_PROTOCOL_VERSION => {
            return Some(supported_list(e.data.as_ref()?));
        }
        TransportError::Http { status: 400, body, .. } => {
            serde_json::from_str::<Value>(body).ok()?.get("error")?.clone()
        }
        _ => return None,
    };
    (error_object.get("code")?.as_i64()? == UNSUPPORTED_PROTOCOL_VERSION)
        .then(|| error_object.get("data").map(supported_list).unwrap_or_default())
}

fn supported_list(data: &Value) -> Vec<String> {
    data.get("supported")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The revision to retry with: the most preferred one that both sides speak.
pub fn mutually_supported(server_supported: &[String]) -> Option<&'static str> {
    known_revisions().into_iter().find(|r| server_supported.iter().any(|s| s == r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_transports::RpcError;
    use serde_json::json;

    fn http_400(body: Value) -> TransportError {
        TransportError::Http {
            status: 400,
            body: body.to_string(),
            www_authenticate: None,
            mcp_auth_server: None,
            accepted: false,
        }
    }

    #[test]
    fn reads_supported_from_an_rpc_error_or_an_http_400_body() {
        let data = json!({"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"});
        let rpc =
            TransportError::Rpc(RpcError { code: -32022, message: "Unsupported".into(), data: Some(data.clone()) });
        assert_eq!(supported_by_server(&rpc), Some(vec!["2026-07-28".to_owned(), "2025-11-25".to_owned()]));
        let http =
            http_400(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x", "data": data}}));
        assert_eq!(supported_by_server(&http), Some(vec!["2026-07-28".to_owned(), "2025-11-25".to_owned()]));
    }

    #[test]
    fn other_errors_carry_no_supported_list() {
        let other_code = TransportError::Rpc(RpcError { code: -32602, message: "bad".into(), data: None });
        assert_eq!(supported_by_server(&other_code), None);
        assert_eq!(supported_by_server(&http_400(json!({"error": {"code": -32020}}))), None);
        assert_eq!(supported_by_server(&http_400(json!("not json-rpc"))), None);
        assert_eq!(supported_by_server(&TransportError::NotConnected), None);
    }

    #[test]
    fn picks_the_most_preferred_common_revision() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(mutually_supported(&s(&["2025-06-18", "2026-07-28"])), Some("2026-07-28"));
        assert_eq!(mutually_supported(&s(&["2025-03-26", "2025-06-18"])), Some("2025-06-18"));
        assert_eq!(mutually_supported(&s(&["1900-01-01"])), None);
        assert!(is_stateless("2026-07-28") && !is_stateless("2025-11-25"));
    }
}
