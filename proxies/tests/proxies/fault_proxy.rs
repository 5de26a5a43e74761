//! The fault proxy end to end: headers stripped on the way in, a 502 retried, a body cut,
//! and the client's hop recorded.

use super::support::{exchange, post, upstream};
use mcp_proxies::server::{FaultProxy, read_record};
use mcp_scenario::via::Fault;
use mcp_scenario::wire::WireEvent;
use std::time::Duration;

fn faults(json: &str) -> Vec<Fault> {
    serde_json::from_str(json).expect("faults")
}

const SSE: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n\
                   f\r\ndata: {\"a\":1}\n\n\r\nf\r\ndata: {\"b\":2}\n\n\r\n0\r\n\r\n";

#[tokio::test]
async fn strips_a_header_for_its_method_and_records_both_sides() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (up, mut seen) = upstream(vec![SSE]).await;
    let f = faults(
        r#"[{"fault": "strip_header", "header": "Mcp-Name", "only": {"method": "tools/call"}}, {"fault": "rechunk", "bytes": 1}]"#,
    );
    let proxy = FaultProxy::start(&f, up, dir.path()).await.expect("proxy");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#;
    let got = tokio::time::timeout(
        Duration::from_secs(5),
        exchange(proxy.addr, &post(body, "Mcp-Name: x\r\nAuthorization: Bearer s3cret\r\n")),
    )
    .await
    .expect("in time")
    .expect("exchange");
    let request = seen.recv().await.expect("the upstream got it");
    assert!(!request.to_ascii_lowercase().contains("mcp-name"), "{request}");
    let text = String::from_utf8_lossy(&got);
    // One byte per chunk: "1\r\nd\r\n1\r\na\r\n…", and the events intact once de-chunked.
    assert!(text.contains("1\r\nd\r\n1\r\na\r\n"), "{text}");
    proxy.stop().await;
    let record = read_record(dir.path());
    let writes = record.iter().filter(|e| matches!(e, WireEvent::StreamWrite { .. })).count();
    assert_eq!(writes, 30, "{record:?}");
    let request_headers = record.iter().find_map(|e| match e {
        WireEvent::HttpRequest { headers, .. } => Some(headers.clone()),
        _ => None,
    });
    let headers = request_headers.expect("the client's request is recorded");
    assert_eq!(headers.get("mcp-name").map(String::as_str), Some("x"), "the client hop shows what the client sent");
    assert_eq!(headers.get("authorization").map(String::as_str), Some("Bearer <redacted>"));
    assert!(!std::fs::read_to_string(dir.path().join("proxy.jsonl")).unwrap_or_default().contains("s3cret"));
}

#[tokio::test]
async fn retries_a_502_then_cuts_after_the_first_event() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 3\r\n\r\nbad";
    let (up, mut seen) = upstream(vec![bad, SSE]).await;
    let f = faults(r#"[{"fault": "retry_on_502"}, {"fault": "cut", "after_events": 1}]"#);
    let proxy = FaultProxy::start(&f, up, dir.path()).await.expect("proxy");
    let got = tokio::time::timeout(
        Duration::from_secs(5),
        exchange(proxy.addr, &post(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, "")),
    )
    .await
    .expect("in time")
    .expect("exchange");
    assert!(seen.recv().await.is_some() && seen.recv().await.is_some(), "the upstream got the request twice");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("data: {\"a\":1}\n\n") && !text.contains("{\"b\":2}"), "{text}");
    assert!(!text.ends_with("0\r\n\r\n"), "a cut has no final chunk: {text}");
    proxy.stop().await;
    let ends: Vec<String> = read_record(dir.path())
        .into_iter()
        .filter_map(|e| match e {
            WireEvent::StreamEnd { how, .. } => Some(how),
            _ => None,
        })
        .collect();
    assert_eq!(ends, ["cut by the proxy"]);
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502_saying_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr");
    let proxy = FaultProxy::start(&[], closed, dir.path()).await.expect("proxy");
    let got = exchange(proxy.addr, &post("{}", "")).await.expect("exchange");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 502") && text.contains("proxy: upstream: connecting to"), "{text}");
    proxy.stop().await;
}

#[tokio::test]
async fn a_reset_is_a_tcp_reset_not_a_close() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (up, _seen) = upstream(vec![SSE]).await;
    let proxy = FaultProxy::start(&faults(r#"[{"fault": "reset"}]"#), up, dir.path()).await.expect("proxy");
    let got =
        tokio::time::timeout(Duration::from_secs(5), exchange(proxy.addr, &post("{}", ""))).await.expect("in time");
    let kind = got.err().map(|e| e.kind());
    assert_eq!(kind, Some(std::io::ErrorKind::ConnectionReset), "the client must see a reset, not a clean close");
    proxy.stop().await;
}
