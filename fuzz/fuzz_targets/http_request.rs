//! The HTTP mock's reading of an incoming request (`mcp_mock::http::request`) and the
//! 2026-07-28 checks it then runs on the headers and body (`mcp_mock::stateless`). The input
//! is a request head as text (`METHOD target`, then `name: value` lines, a blank line, the
//! body); heads hyper would refuse are skipped, since hyper never hands them over.
//! Regressions: fuzz/regressions/http_request/ (a test in mock-servers/src/http/request.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_mock::http::request;
use mcp_mock::stateless::{self, Rules};
use std::collections::BTreeMap;

fuzz_target!(|data: &[u8]| {
    let Some(parts) = request::from_text(data) else { return };
    let (parts, body) = parts;
    let read = request::read(&parts, body, |credential| format!("<redacted:{}>", credential.len()));
    assert!(read.headers.keys().all(|k| k.bytes().all(|b| !b.is_ascii_uppercase())), "a header name is not lowercase");
    assert_eq!(read.json.is_some(), !body.is_empty() && serde_json::from_slice::<serde_json::Value>(body).is_ok());
    let _ = request::legacy_session(&read.path);
    let Some(message) = &read.json else { return };
    let mut rules = Rules::for_revision("2026-07-28");
    let declared =
        BTreeMap::from([("Region".to_string(), "where.region".to_string()), ("N".to_string(), "n".to_string())]);
    rules.params.insert("echo".to_string(), declared);
    for refusal in [stateless::check_body(&rules, message), stateless::check_headers(&rules, &read.headers, message)] {
        assert!(refusal.is_none_or(|r| r.status == 400), "a refusal that is not a 400");
    }
});
