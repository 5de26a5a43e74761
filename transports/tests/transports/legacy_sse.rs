//! Legacy HTTP+SSE (SPEC §5) end to end, against the hand-written test server.

use crate::support::*;
use mcp_transports::config::TransportKind;
use mcp_transports::legacy_sse::LegacySseTransport;
use mcp_transports::{RequestOptions, Transport, TransportConfig, TransportError};
use serde_json::json;
use std::sync::Arc;
use tokio::net::TcpStream;

fn cfg(url: &str, timeout_ms: u64) -> TransportConfig {
    let mut c = config(url, timeout_ms, TransportKind::Sse);
    c.protocol_version = "2024-11-05".into();
    c
}

/// Connects and serves the GET with the given endpoint data; returns the open stream.
async fn connect(
    server: &mut TestServer,
    timeout_ms: u64,
    endpoint: &str,
) -> (Result<Arc<LegacySseTransport>, TransportError>, Probe, TcpStream) {
    let (handlers, probe) = probe();
    let c = cfg(&server.url, timeout_ms);
    let (r, stream) = tokio::join!(LegacySseTransport::connect(&c, handlers), async {
        let get = server.next().await;
        assert_eq!((get.method.as_str(), get.path.as_str()), ("GET", "/mcp"));
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        get.sse_with(&format!(": hello\n\nevent: endpoint\ndata: {endpoint}\n\n")).await
    });
    (r, probe, stream)
}

/// A fresh test server and a transport connected to it through `endpoint`.
async fn connected(timeout_ms: u64, endpoint: &str) -> (TestServer, Arc<LegacySseTransport>, Probe, TcpStream) {
    let mut server = TestServer::start().await;
    let (t, probe, stream) = connect(&mut server, timeout_ms, endpoint).await;
    (server, t.expect("connected"), probe, stream)
}

#[tokio::test]
async fn endpoint_post_and_stream_replies() {
    let (mut server, t, mut probe, mut stream) = connected(2000, "/messages?sessionId=abc").await;
    assert_eq!(t.endpoint().map(|u| u.path().to_owned()).as_deref(), Some("/messages"));
    let (r, ()) = tokio::join!(t.request("tools/list", None, RequestOptions::default()), async {
        let post = server.next().await;
        assert_eq!((post.method.as_str(), post.path.as_str()), ("POST", "/messages?sessionId=abc"));
        assert_eq!(post.header("content-type"), Some("application/json"));
        assert_eq!(post.json(), json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}));
        post.respond(202, &[], "Accepted").await;
        // A notification without an event name, a server request, then the response.
        send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"x\":1}}\n\n")
            .await;
        send(&mut stream, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n\n").await;
        let answer = server.next().await;
        assert_eq!(answer.path, "/messages?sessionId=abc");
        assert_eq!(answer.json(), json!({"jsonrpc": "2.0", "id": 0, "result": {"echo": "ping"}}));
        answer.respond(200, &[], "").await;
        send(&mut stream, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n").await;
    });
    assert_eq!(r.expect("reply on the stream"), json!({"tools": []}));
    assert_eq!(probe.note().await, ("notifications/message".to_owned(), json!({"x": 1})));
    // Notifications: any 2xx.
    let (r, ()) = tokio::join!(t.notify("notifications/initialized", None), async {
        server.next().await.respond(204, &[], "").await;
    });
    r.expect("notified");
    t.close().await;
    wait_client_close(&mut stream).await;
    assert_eq!(probe.close_count(), 1);
}

#[tokio::test]
async fn endpoint_on_another_origin_is_refused() {
    let mut server = TestServer::start().await;
    let (r, probe, _stream) = connect(&mut server, 2000, "http://evil.example/messages").await;
    assert_eq!(
        r.expect_err("refused").to_string(),
        "Legacy SSE endpoint origin mismatch: http://evil.example/messages"
    );
    assert_eq!(probe.close_count(), 0);
}

#[tokio::test]
async fn no_endpoint_within_the_timeout() {
    let mut server = TestServer::start().await;
    let (handlers, _probe) = probe();
    let c = cfg(&server.url, 150);
    let (r, _stream) = tokio::join!(LegacySseTransport::connect(&c, handlers), async {
        server.next_sse_with("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"early\"}\n\n").await
    });
    assert_eq!(r.expect_err("no endpoint").to_string(), "Legacy SSE endpoint event not received");
    // A stream that ends before its endpoint fails the same way.
    let (handlers, _probe) = probe();
    let (r, ()) = tokio::join!(LegacySseTransport::connect(&c, handlers), async {
        drop(server.next_sse().await);
    });
    assert_eq!(r.expect_err("no endpoint").to_string(), "Legacy SSE endpoint event not received");
    // A GET refused with a status is an HTTP error.
    let (handlers, _probe) = probe();
    let (r, ()) = tokio::join!(LegacySseTransport::connect(&c, handlers), async {
        server.next().await.respond(401, &[("WWW-Authenticate", "Bearer")], "who").await;
    });
    assert_eq!(r.expect_err("refused").to_string(), "HTTP 401: who [WWW-Authenticate: Bearer]");
}

#[tokio::test]
async fn stream_end_fails_pending_and_disconnects() {
    let (mut server, t, probe, stream) = connected(2000, "/messages").await;
    let (r, ()) = tokio::join!(t.request("slow", None, RequestOptions::default()), async {
        server.next().await.respond(202, &[], "").await;
        drop(stream);
    });
    assert_eq!(r.expect_err("closed").to_string(), "Transport closed: legacy SSE stream closed");
    probe.wait_closed().await;
    assert!(!t.is_connected());
    assert!(matches!(t.request("x", None, RequestOptions::default()).await, Err(TransportError::NotConnected)));
    assert!(matches!(t.notify("x", None).await, Err(TransportError::NotConnected)));
    t.close().await;
    assert_eq!(probe.close_count(), 1);
}

#[tokio::test]
async fn post_error_and_later_endpoint_events() {
    let (mut server, t, mut probe, mut stream) = connected(2000, "/messages").await;
    let (r, ()) = tokio::join!(t.request("a", None, RequestOptions::default()), async {
        server.next().await.respond(500, &[], "broken").await;
    });
    assert_eq!(r.expect_err("http").to_string(), "HTTP 500: broken");
    send(&mut stream, "event: endpoint\ndata: /elsewhere\n\n").await;
    assert!(probe.error().await.contains("ignoring a later endpoint event"));
    assert_eq!(t.endpoint().map(|u| u.path().to_owned()).as_deref(), Some("/messages"));
    assert!(t.is_connected());
}

#[tokio::test]
async fn timeout_posts_cancelled() {
    let (mut server, t, _probe, _stream) = connected(150, "/messages").await;
    let (r, ()) = tokio::join!(t.request("slow", None, RequestOptions::default()), async {
        server.next().await.respond(202, &[], "").await;
        let note = server.next().await;
        assert_eq!(
            note.json(),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "Request timeout after 150ms"}})
        );
        note.respond(202, &[], "").await;
    });
    assert_eq!(r.expect_err("timeout").to_string(), "Request timeout after 150ms");
    assert!(t.is_connected());
}
