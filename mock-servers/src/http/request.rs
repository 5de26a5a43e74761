//! What the mock reads from an incoming HTTP request before it routes it: the recorded
//! headers (repeated ones joined, every `Mcp-Param-*` too), the credential, the session,
//! the JSON body, the path and the legacy `session_id` query.
//!
//! Split out of the handler ([`super::server`]) on purpose: a pure function of the
//! request's head and body (no shared state, no I/O), so that any bytes a client can send
//! are unit-tested and fuzzed here (`fuzz/fuzz_targets/http_request.rs`) without a socket.

use mcp_scenario::wire::{RECORDED_HEADER_PREFIX, RECORDED_REQUEST_HEADERS};
use serde_json::Value;
use std::collections::BTreeMap;

/// The parts of a request the mock records and routes on.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadRequest {
    /// The recorded headers by lowercase name, `authorization` redacted.
    pub headers: BTreeMap<String, String>,
    /// The `Authorization` value as sent (the auth rules compare it).
    pub authorization: Option<String>,
    /// The `Mcp-Session-Id` value.
    pub session: Option<String>,
    /// The body as JSON; `None` when empty or not JSON (the handler answers a parse error).
    pub json: Option<Value>,
    /// The path and query, `/` when the request target has none.
    pub path: String,
}

/// Reads `parts` and `body`; `redact` turns the credential into what the record shows.
pub fn read(parts: &http::request::Parts, body: &[u8], mut redact: impl FnMut(&str) -> String) -> ReadRequest {
    let mut headers = BTreeMap::new();
    let mut authorization = None;
    for name in RECORDED_REQUEST_HEADERS {
        let values: Vec<&str> = parts.headers.get_all(*name).iter().filter_map(|v| v.to_str().ok()).collect();
        if values.is_empty() {
            continue;
        }
        let joined = values.join(", ");
        if *name == "authorization" {
            headers.insert(name.to_string(), redact(&joined));
            authorization = Some(joined);
        } else {
            headers.insert(name.to_string(), joined);
        }
    }
    // 2026-07-28 mirrors tool parameters into `Mcp-Param-*` headers: record them all.
    for (name, value) in &parts.headers {
        if name.as_str().starts_with(RECORDED_HEADER_PREFIX) {
            headers.insert(name.as_str().to_string(), String::from_utf8_lossy(value.as_bytes()).into_owned());
        }
    }
    let json = if body.is_empty() { None } else { serde_json::from_slice(body).ok() };
    let path = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
    let session = headers.get("mcp-session-id").cloned();
    ReadRequest { headers, authorization, session, json, path }
}

/// Legacy SSE: the connection a POST's `session_id` query names (`None`: the latest).
pub fn legacy_session(path: &str) -> Option<usize> {
    let (_, query) = path.split_once('?')?;
    query.split('&').find_map(|kv| kv.strip_prefix("session_id="))?.parse().ok()
}

/// A request spelled as text: `METHOD target`, `name: value` lines, a blank line, the body
/// (`\n` or `\r\n` line ends). How the fuzz target and the regression files under
/// `fuzz/regressions/http_request/` write a request; `None` for a head hyper would refuse
/// (it never hands such a request to the handler).
pub fn from_text(data: &[u8]) -> Option<(http::request::Parts, &[u8])> {
    let (head, body) = match data.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&data[..i], &data[i + 2..]),
        None => (data, &[][..]),
    };
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.lines();
    let (method, target) = lines.next()?.split_once(' ')?;
    let mut builder = http::Request::builder().method(method).uri(target);
    for line in lines {
        let (name, value) = line.split_once(':')?;
        builder = builder.header(name, http::HeaderValue::from_bytes(value.trim().as_bytes()).ok()?);
    }
    Some((builder.body(()).ok()?.into_parts().0, body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stateless::{self, Rules};

    #[test]
    fn reads_headers_credential_body_and_legacy_session() {
        let text = b"POST /mcp?x=1&session_id=2\nAuthorization: Bearer t\nMcp-Session-Id: s\nMcp-Param-Region: eu\n\n{\"id\":1}";
        let (parts, body) = from_text(text).expect("a request");
        let read = read(&parts, body, |c| format!("<{}>", c.len()));
        assert_eq!(read.headers.get("authorization").map(String::as_str), Some("<8>"));
        assert_eq!(read.headers.get("mcp-param-region").map(String::as_str), Some("eu"));
        assert_eq!((read.authorization.as_deref(), read.session.as_deref()), (Some("Bearer t"), Some("s")));
        assert_eq!(read.json, Some(serde_json::json!({"id": 1})));
        assert_eq!(legacy_session(&read.path), Some(2));
        assert_eq!(legacy_session("/messages?session_id=x"), None);
    }

    /// Each request under fuzz/regressions/http_request/ is read, and checked by the
    /// 2026-07-28 rules, without a panic and with sensible results (what
    /// `fuzz/fuzz_targets/http_request.rs` asserts).
    #[test]
    fn fuzz_regressions_read_without_panic() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/http_request");
        let mut files: Vec<_> =
            std::fs::read_dir(&dir).expect("the regressions folder").map(|e| e.expect("entry").path()).collect();
        files.sort();
        assert!(!files.is_empty(), "no regressions in {}", dir.display());
        let mut rules = Rules::for_revision("2026-07-28");
        let declared =
            BTreeMap::from([("Region".to_string(), "where.region".to_string()), ("N".to_string(), "n".to_string())]);
        rules.params.insert("echo".to_string(), declared);
        for path in files {
            let data = std::fs::read(&path).expect("a regression file");
            let Some((parts, body)) = from_text(&data) else { continue };
            let read = read(&parts, body, |c| format!("<{}>", c.len()));
            assert!(read.headers.keys().all(|k| !k.bytes().any(|b| b.is_ascii_uppercase())), "{}", path.display());
            let _ = legacy_session(&read.path);
            let Some(message) = &read.json else { continue };
            for refusal in
                [stateless::check_body(&rules, message), stateless::check_headers(&rules, &read.headers, message)]
            {
                assert!(refusal.is_none_or(|r| r.status == 400), "{}", path.display());
            }
        }
    }
}
