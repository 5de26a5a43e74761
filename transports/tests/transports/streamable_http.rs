//! Streamable HTTP (SPEC §4) end to end, against the hand-written test server and wiremock.

use crate::support::*;
use mcp_transports::config::TransportKind;
use mcp_transports::http::{AuthRefresh, ERROR_BODY_LIMIT, HttpTransport, MAX_RESUME_ATTEMPTS};
use mcp_transports::{Handlers, RequestOptions, Transport, TransportConfig, TransportError};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

fn cfg(url: &str, timeout_ms: u64) -> TransportConfig {
    config(url, timeout_ms, TransportKind::Http)
}

fn ok(id: i64, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

async fn connect(url: &str, timeout_ms: u64) -> (Arc<HttpTransport>, Probe) {
    let (handlers, probe) = probe();
    (HttpTransport::connect(&cfg(url, timeout_ms), handlers).await.expect("connect"), probe)
}

/// A fresh test server, and a transport for it with `timeout_ms`.
async fn started(timeout_ms: u64) -> (TestServer, Arc<HttpTransport>, Probe) {
    let server = TestServer::start().await;
    let (t, probe) = connect(&server.url, timeout_ms).await;
    (server, t, probe)
}

/// initialize (JSON reply with a session id), then the negotiated version is set.
async fn initialize(server: &mut TestServer, t: &Arc<HttpTransport>, version: &str) {
    let call = t.request("initialize", Some(json!({"protocolVersion": version})), RequestOptions::default());
    let serve = async {
        let req = server.next().await;
        assert_eq!(req.rpc_method(), "initialize");
        assert_eq!(req.header("mcp-session-id"), None);
        assert_eq!(req.header("mcp-protocol-version"), None);
        let reply = json!({"jsonrpc": "2.0", "id": req.json()["id"].clone(), "result": {}});
        req.respond(200, &[("Content-Type", "application/json"), ("Mcp-Session-Id", "s-1")], &reply.to_string()).await;
    };
    let (r, ()) = tokio::join!(call, serve);
    r.expect("initialize");
    t.set_protocol_version(version);
}

/// Writes a notification `method` on `stream` (after the SSE `fields` lines, e.g. an id) and
/// waits until the handlers have it.
async fn deliver(stream: &mut TcpStream, probe: &mut Probe, fields: &str, method: &str) {
    send(stream, &format!("{fields}data: {{\"jsonrpc\":\"2.0\",\"method\":\"{method}\"}}\n\n")).await;
    assert_eq!(probe.note().await.0, method);
}

/// An initialized 2025-11-25 session whose GET listener stream the server has opened.
async fn listening() -> (TestServer, Arc<HttpTransport>, Probe, TcpStream) {
    let (mut server, t, probe) = started(2000).await;
    initialize(&mut server, &t, "2025-11-25").await;
    let (_, stream) = tokio::join!(t.on_initialized(), async { server.next_sse().await });
    (server, t, probe, stream)
}

#[tokio::test]
async fn unusable_url_is_refused() {
    let err = HttpTransport::connect(&cfg("ftp://x/", 100), Handlers::default()).await.expect_err("refused");
    assert!(matches!(err, TransportError::Config(_)));
}

#[tokio::test]
async fn headers_session_and_protocol_version() {
    let mut server = TestServer::start().await;
    let mut c = cfg(&server.url, 2000);
    c.headers = BTreeMap::from([
        ("ACCEPT".to_owned(), "text/plain".to_owned()),
        ("content-type".to_owned(), "text/plain".to_owned()),
        ("X-Custom".to_owned(), "yes".to_owned()),
    ]);
    let (handlers, _probe) = probe();
    let t = HttpTransport::connect(&c, handlers).await.expect("connect");
    let call = t.request("initialize", None, RequestOptions::default());
    let serve = async {
        let req = server.next().await;
        assert_eq!(req.method, "POST");
        assert_eq!(req.header("content-type"), Some("application/json"));
        assert_eq!(req.header("accept"), Some("application/json, text/event-stream"));
        assert_eq!((req.header_count("accept"), req.header_count("content-type")), (1, 1));
        assert_eq!(req.header("x-custom"), Some("yes"));
        assert_eq!(req.json()["params"], json!({}));
        req.respond(
            200,
            &[("Content-Type", "application/json; charset=utf-8"), ("Mcp-Session-Id", "s-1")],
            &ok(1, json!({"v": 1})).to_string(),
        )
        .await;
    };
    let (r, ()) = tokio::join!(call, serve);
    assert_eq!(r.expect("initialize"), json!({"v": 1}));
    assert_eq!(t.session_id().as_deref(), Some("s-1"));
    t.set_protocol_version("2025-06-18");

    let (r, req) = tokio::join!(t.notify("notifications/initialized", None), async {
        let req = server.next().await;
        assert_eq!(req.header("mcp-session-id"), Some("s-1"));
        assert_eq!(req.header("mcp-protocol-version"), Some("2025-06-18"));
        assert_eq!(req.json(), json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}));
        req.respond(202, &[], "").await;
    });
    r.expect("notification accepted");
    let () = req;

    let (r, ()) = tokio::join!(t.request("tools/list", None, RequestOptions::default()), async {
        let req = server.next().await;
        assert_eq!(req.header("mcp-session-id"), Some("s-1"));
        assert_eq!(req.header("mcp-protocol-version"), Some("2025-06-18"));
        req.json_reply(ok(2, json!({"tools": []}))).await;
    });
    assert_eq!(r.expect("tools/list"), json!({"tools": []}));
}

/// wiremock: 2025-03-26 never sends MCP-Protocol-Version; notifications accept any 2xx.
#[tokio::test]
async fn revision_2025_03_26_has_no_protocol_header() {
    use wiremock::matchers::{body_partial_json, header_exists, method};
    use wiremock::{Mock, MockServer, Request, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"method": "initialize"})))
        .respond_with(ResponseTemplate::new(200).insert_header("Mcp-Session-Id", "abc").set_body_json(ok(1, json!({}))))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(header_exists("mcp-protocol-version"))
        .respond_with(ResponseTemplate::new(400))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"method": "notifications/initialized"})))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let (t, _probe) = connect(&format!("{}/mcp", server.uri()), 2000).await;
    t.request("initialize", None, RequestOptions::default()).await.expect("initialize");
    t.set_protocol_version("2025-03-26");
    t.notify("notifications/initialized", None).await.expect("200 accepted for a notification");
    let received: Vec<Request> = server.received_requests().await.expect("recorded");
    assert_eq!(received.len(), 2);
    assert_eq!(received[1].headers.get("mcp-session-id").and_then(|v| v.to_str().ok()), Some("abc"));
}

#[tokio::test]
async fn status_errors_session_expiry_and_auth_hints() {
    let mut server = TestServer::start().await;
    let mut c = cfg(&server.url, 2000);
    c.headers = BTreeMap::from([("Authorization".to_owned(), "Bearer SECRET-TOKEN".to_owned())]);
    let (handlers, _probe) = probe();
    let t = HttpTransport::connect(&c, handlers).await.expect("connect");
    // 404 before any session: a plain HTTP error.
    let (r, ()) = tokio::join!(t.request("a", None, RequestOptions::default()), async {
        server.next().await.respond(404, &[], "nope").await;
    });
    assert_eq!(r.expect_err("404").to_string(), "HTTP 404: nope");
    initialize(&mut server, &t, "2025-11-25").await;
    let (r, ()) = tokio::join!(t.request("b", None, RequestOptions::default()), async {
        server.next().await.respond(404, &[], "gone").await;
    });
    let err = r.expect_err("expired");
    assert!(matches!(&err, TransportError::SessionExpired { session_id } if session_id == "s-1"), "{err}");
    let (r, ()) = tokio::join!(t.notify("n", None), async {
        server.next().await.respond(404, &[], "").await;
    });
    assert!(matches!(r, Err(TransportError::SessionExpired { .. })));
    // A big error body is bounded.
    let big = "x".repeat(10_000);
    let (r, ()) = tokio::join!(t.request("c", None, RequestOptions::default()), async {
        server.next().await.respond(500, &[], &big).await;
    });
    match r.expect_err("500") {
        TransportError::Http { status: 500, body, .. } => assert_eq!(body.len(), ERROR_BODY_LIMIT),
        other => panic!("unexpected {other}"),
    }
    // 401 with hints; the token never shows.
    let (r, ()) = tokio::join!(t.request("d", None, RequestOptions::default()), async {
        let req = server.next().await;
        assert_eq!(req.header("authorization"), Some("Bearer SECRET-TOKEN"));
        req.respond(
            401,
            &[("WWW-Authenticate", "Bearer realm=\"mcp\""), ("Mcp-Auth-Server", "https://auth.example")],
            "denied",
        )
        .await;
    });
    let text = r.expect_err("401").to_string();
    assert_eq!(
        text,
        "HTTP 401: denied [WWW-Authenticate: Bearer realm=\"mcp\"; Mcp-Auth-Server: https://auth.example]"
    );
    assert!(!format!("{text}{:?}", c.headers.len()).contains("SECRET"));
}

#[tokio::test]
async fn auth_refresh_resends_once_then_gives_up() {
    let mut server = TestServer::start().await;
    let mut c = cfg(&server.url, 2000);
    c.headers = BTreeMap::from([("authorization".to_owned(), "Bearer OLD".to_owned())]);
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = asked.clone();
    let hook: AuthRefresh = Arc::new(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move { Some(BTreeMap::from([("Authorization".to_owned(), format!("Bearer NEW{n}"))])) })
    });
    let t = HttpTransport::connect_with_auth(&c, Handlers::default(), Some(hook)).await.expect("connect");
    let (r, ()) = tokio::join!(t.request("a", None, RequestOptions::default()), async {
        let first = server.next().await;
        assert_eq!(first.header("authorization"), Some("Bearer OLD"));
        first.respond(401, &[], "").await;
        let second = server.next().await;
        assert_eq!(second.header("authorization"), Some("Bearer NEW0"));
        assert_eq!(second.json()["id"], json!(1), "the same request is re-sent");
        second.json_reply(ok(1, json!("fine"))).await;
    });
    assert_eq!(r.expect("refreshed"), json!("fine"));
    // A second 401 after the refresh goes back to the caller with the hint.
    let (r, ()) = tokio::join!(t.request("b", None, RequestOptions::default()), async {
        let first = server.next().await;
        assert_eq!(first.header("authorization"), Some("Bearer NEW0"), "refreshed headers stick");
        first.respond(403, &[], "").await;
        server.next().await.respond(403, &[("WWW-Authenticate", "Bearer error=\"insufficient_scope\"")], "no").await;
    });
    let text = r.expect_err("403").to_string();
    assert_eq!(text, "HTTP 403: no [WWW-Authenticate: Bearer error=\"insufficient_scope\"]");
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    assert!(!text.contains("NEW"));
}

#[tokio::test]
async fn bad_json_replies_are_protocol_errors() {
    use wiremock::matchers::{body_partial_json, method};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let cases: Vec<(&str, ResponseTemplate)> = vec![
        ("wrong-id", ResponseTemplate::new(200).set_body_json(ok(99, json!({})))),
        ("string-id", ResponseTemplate::new(200).set_body_json(json!({"jsonrpc": "2.0", "id": "2", "result": {}}))),
        (
            "both",
            ResponseTemplate::new(200)
                .set_body_json(json!({"jsonrpc": "2.0", "id": 3, "result": {}, "error": {"code": 1, "message": "x"}})),
        ),
        ("accepted", ResponseTemplate::new(202)),
        ("empty", ResponseTemplate::new(200).insert_header("Content-Type", "application/json")),
        ("not-json", ResponseTemplate::new(200).set_body_raw("{nope", "application/json")),
        ("html", ResponseTemplate::new(200).set_body_raw("<html>", "text/html")),
        ("huge", ResponseTemplate::new(200).set_body_json(ok(8, json!("y".repeat(500))))),
    ];
    for (name, template) in cases {
        Mock::given(method("POST"))
            .and(body_partial_json(json!({"method": name})))
            .respond_with(template)
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"method": "rpc-error"})))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32000, "message": "boom", "data": [1]}}),
        ))
        .mount(&server)
        .await;
    let mut c = cfg(&format!("{}/mcp", server.uri()), 2000);
    c.max_message_bytes = Some(256);
    let (handlers, _probe) = probe();
    let t = HttpTransport::connect(&c, handlers).await.expect("connect");
    let expect = [
        ("wrong-id", "Protocol error: response id 99 does not match request id 1"),
        ("string-id", "Protocol error: response id \"2\" does not match request id 2"),
        ("both", "Protocol error: invalid JSON-RPC response: response has both result and error"),
        (
            "accepted",
            "Protocol error: HTTP 202 with no body in reply to request 4; expected application/json or text/event-stream",
        ),
        ("empty", "Protocol error: HTTP 200 with an empty body in reply to request 5"),
        ("not-json", "Protocol error: invalid JSON in reply to request 6"),
        ("html", "Protocol error: unexpected Content-Type text/html in reply to request 7"),
        ("huge", "Message too large: over 256 bytes"),
    ];
    for (name, text) in expect {
        let err = t.request(name, None, RequestOptions::default()).await.expect_err(name);
        assert!(err.to_string().starts_with(text), "{name}: {err}");
    }
    let err = t.request("rpc-error", None, RequestOptions::default()).await.expect_err("rpc error");
    assert_eq!(err.to_string(), "MCP error -32000: boom");
    assert_eq!(err.rpc_data(), Some(&json!([1])));
    assert_eq!(t.diagnostics().oversize_dropped, 1);
}

#[tokio::test]
async fn sse_reply_dispatches_interleaved_messages_then_drains() {
    let (mut server, t, mut probe) = started(2000).await;
    let call = t.request("tools/call", None, RequestOptions::default());
    let serve = async {
        let mut stream = server.next_sse_with(": keep-alive\r\n\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"p\":1}}\r\n\r\n").await;
        send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n").await;
        // The server request is answered by its own POST while the stream stays open.
        let answer = server.next().await;
        assert_eq!(answer.json(), json!({"jsonrpc": "2.0", "id": "srv-1", "result": {"echo": "ping"}}));
        answer.respond(202, &[], "").await;
        send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"done\":true}}\n\n").await;
        stream
    };
    let (r, mut stream) = tokio::join!(call, serve);
    assert_eq!(r.expect("settled"), json!({"done": true}));
    assert_eq!(probe.note().await, ("notifications/progress".to_owned(), json!({"p": 1})));
    // After the match the rest of the stream is still dispatched.
    deliver(&mut stream, &mut probe, "", "late/note").await;
    drop(stream);
    assert!(t.is_connected());
}

#[tokio::test]
async fn sse_reply_ending_first_is_no_response() {
    let (mut server, t, _probe) = started(2000).await;
    let (r, ()) = tokio::join!(t.request("x", None, RequestOptions::default()), async {
        let mut stream = server.next_sse().await;
        // A partial event at EOF is discarded, not dispatched.
        send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await;
    });
    assert_eq!(r.expect_err("no response").to_string(), "No response received for request ID 1");
    let (r, ()) = tokio::join!(t.request("y", None, RequestOptions::default()), async {
        server.next_sse_with("data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"ok\":1}}\n\n").await;
    });
    assert_eq!(r.expect("complete event counts"), json!({"ok": 1}));
}

#[tokio::test]
async fn oversize_sse_event_is_dropped_and_reported() {
    let mut server = TestServer::start().await;
    let mut c = cfg(&server.url, 2000);
    c.max_message_bytes = Some(100);
    let (handlers, mut probe) = probe();
    let t = HttpTransport::connect(&c, handlers).await.expect("connect");
    let (r, ()) = tokio::join!(t.request("x", None, RequestOptions::default()), async {
        let mut stream = server.next_sse().await;
        let big = format!("data: {{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":\"{}\"}}\n\n", "z".repeat(500));
        send(&mut stream, &big).await;
        send(&mut stream, "data: not json\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":7}\n\n").await;
    });
    assert_eq!(r.expect("the stream resynchronised"), json!(7));
    assert_eq!(probe.error().await, "Message too large: over 100 bytes");
    assert!(probe.error().await.starts_with("Protocol error: SSE event data is not JSON"));
    let d = t.diagnostics();
    assert_eq!((d.oversize_dropped, d.protocol_violations), (1, 1));
}

#[tokio::test]
async fn timeout_closes_the_stream_and_posts_cancelled() {
    let (mut server, t, _probe) = started(150).await;
    let call = t.request("slow", None, RequestOptions::default());
    let serve = async {
        let mut stream = server.next_sse_with(": working\n\n").await;
        wait_client_close(&mut stream).await;
        let note = server.next().await;
        assert_eq!(
            note.json(),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "Request timeout after 150ms"}})
        );
        note.respond(202, &[], "").await;
    };
    let (r, ()) = tokio::join!(call, serve);
    assert_eq!(r.expect_err("timeout").to_string(), "Request timeout after 150ms");
}

#[tokio::test]
async fn caller_cancellation_closes_the_stream_and_posts_cancelled() {
    let (mut server, t, _probe) = started(0).await;
    let token = CancellationToken::new();
    let call = t.request(
        "slow",
        None,
        RequestOptions { timeout_ms: None, cancel: Some(token.clone()), ..RequestOptions::default() },
    );
    let serve = async {
        let mut stream = server.next_sse().await;
        token.cancel();
        wait_client_close(&mut stream).await;
        let note = server.next().await;
        assert_eq!(note.rpc_method(), "notifications/cancelled");
        assert_eq!(note.json()["params"]["requestId"], json!(1));
        note.respond(202, &[], "").await;
    };
    let (r, ()) = tokio::join!(call, serve);
    assert!(matches!(r, Err(TransportError::Cancelled { .. })));
}

#[tokio::test]
async fn initialize_timeout_sends_no_cancelled() {
    let (mut server, t, _probe) = started(100).await;
    let (r, mut stream) =
        tokio::join!(t.request("initialize", None, RequestOptions::default()), async { server.next_sse().await });
    assert!(matches!(r, Err(TransportError::Timeout { ms: 100, .. })));
    wait_client_close(&mut stream).await;
    // The next POST the server sees is the next request, not a cancellation.
    let relaxed = RequestOptions { timeout_ms: Some(5000), ..RequestOptions::default() };
    let (_, ()) = tokio::join!(t.request("next", None, relaxed), async {
        let req = server.next().await;
        assert_eq!(req.rpc_method(), "next");
        req.json_reply(ok(2, json!({}))).await;
    });
}

#[tokio::test]
async fn broken_reply_stream_resumes_with_last_event_id() {
    let (mut server, t, _probe) = started(3000).await;
    initialize(&mut server, &t, "2025-11-25").await;
    let call = t.request("long", None, RequestOptions::default());
    let serve = async {
        let mut stream = server.next_sse().await;
        // The priming event: an id, empty data, and a retry hint; then the connection drops.
        send(&mut stream, "id: ev-1\nretry: 30\ndata:\n\n").await;
        drop(stream);
        let get = server.next().await;
        assert_eq!(get.method, "GET");
        assert_eq!(get.header("last-event-id"), Some("ev-1"));
        assert_eq!(get.header("mcp-session-id"), Some("s-1"));
        assert_eq!(get.header("mcp-protocol-version"), Some("2025-11-25"));
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        get.sse_with("id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resumed\":true}}\n\n").await;
    };
    let (r, ()) = tokio::join!(call, serve);
    assert_eq!(r.expect("resumed"), json!({"resumed": true}));
    // The accepted request was never re-POSTed: the next POST is the next request.
    let (_, ()) = tokio::join!(t.request("after", None, RequestOptions::default()), async {
        let req = server.next().await;
        assert_eq!((req.method.as_str(), req.rpc_method().as_str()), ("POST", "after"));
        req.json_reply(ok(3, json!({}))).await;
    });
}

#[tokio::test]
async fn resumption_is_bounded() {
    let (mut server, t, _probe) = started(5000).await;
    let call = t.request("long", None, RequestOptions::default());
    let serve = async {
        drop(server.next_sse_with("id: 7\nretry: 10\n\n").await);
        for _ in 0..MAX_RESUME_ATTEMPTS {
            let get = server.next().await;
            assert_eq!((get.method.as_str(), get.header("last-event-id")), ("GET", Some("7")));
            get.respond(503, &[], "busy").await;
        }
    };
    let (r, ()) = tokio::join!(call, serve);
    assert_eq!(r.expect_err("gave up").to_string(), "No response received for request ID 1");
    let (_, ()) = tokio::join!(t.request("after", None, RequestOptions::default()), async {
        let req = server.next().await;
        assert_eq!(req.method, "POST", "no further resumption attempt");
        req.json_reply(ok(2, json!({}))).await;
    });
}

#[tokio::test]
async fn listener_refused_is_disabled_silently() {
    for status in [405u16, 500] {
        let (mut server, t, mut probe) = started(2000).await;
        initialize(&mut server, &t, "2025-06-18").await;
        let (_, ()) = tokio::join!(t.on_initialized(), async {
            let get = server.next().await;
            assert_eq!(get.method, "GET");
            assert_eq!(get.header("mcp-session-id"), Some("s-1"));
            assert_eq!(get.header("accept"), Some("text/event-stream"));
            get.respond(status, &[], "").await;
        });
        assert!(t.is_connected());
        assert!(probe.errors.try_recv().is_err(), "no error reported");
        assert_eq!(probe.close_count(), 0);
    }
    // A non-SSE 200 disables it too.
    let (mut server, t, _probe) = started(2000).await;
    let (_, ()) = tokio::join!(t.on_initialized(), async {
        server.next().await.json_reply(json!({})).await;
    });
    assert!(t.is_connected());
}

#[tokio::test]
async fn listener_startup_deadline_bounds_on_initialized() {
    // t = 60 s → the deadline is its quarter capped at 1 s; a wait for the timeout would
    // run into WAIT (5 s), so the bound holds on a loaded machine as on a quiet one.
    let (mut server, t, probe) = started(60_000).await;
    tokio::time::timeout(WAIT, t.on_initialized()).await.expect("bounded by the deadline, not the timeout");
    let _stalled = server.next().await; // The GET arrived and was never answered.
    assert_eq!((t.is_connected(), probe.close_count()), (true, 0));
}

#[tokio::test]
async fn listener_delivers_and_its_end_closes_the_transport() {
    let (mut server, t, mut probe, mut stream) = listening().await;
    deliver(&mut stream, &mut probe, "", "notifications/tools/list_changed").await;
    send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"roots/list\"}\n\n").await;
    let answer = server.next().await;
    assert_eq!(answer.json()["result"], json!({"echo": "roots/list"}));
    assert_eq!(answer.header("mcp-session-id"), Some("s-1"));
    answer.respond(202, &[], "").await;
    drop(stream);
    probe.wait_closed().await;
    assert!(!t.is_connected());
    let delete = server.next().await;
    assert_eq!((delete.method.as_str(), delete.header("mcp-session-id")), ("DELETE", Some("s-1")));
    assert!(matches!(t.request("x", None, RequestOptions::default()).await, Err(TransportError::NotConnected)));
    t.close().await;
    assert_eq!(probe.close_count(), 1);
}

#[tokio::test]
async fn listener_without_body_is_disabled_silently() {
    // An SSE content type with Content-Length: 0 is refused at startup.
    let (mut server, t, probe) = started(2000).await;
    let (_, ()) = tokio::join!(t.on_initialized(), async {
        server.next().await.respond(200, &[("Content-Type", "text/event-stream")], "").await;
    });
    assert!(t.is_connected());
    // 200 SSE that closes before a single byte: also "no body", not a closed transport.
    let (mut server, t2, probe2) = started(2000).await;
    let (_, ()) = tokio::join!(t2.on_initialized(), async { drop(server.next_sse().await) });
    let (r, ()) = tokio::join!(t2.request("after", None, RequestOptions::default()), async {
        let req = server.next().await;
        assert_eq!(req.method, "POST", "no DELETE, no reconnect GET");
        req.json_reply(ok(1, json!({}))).await;
    });
    r.expect("still connected");
    assert_eq!(probe.close_count() + probe2.close_count(), 0);
}

#[tokio::test]
async fn listener_200_then_close_never_loops() {
    let (mut server, t, probe, mut stream) = listening().await;
    send(&mut stream, "retry: 10\nid: same\n\n").await;
    drop(stream);
    // Resumptions that make no progress are bounded; then the transport closes.
    for _ in 0..MAX_RESUME_ATTEMPTS {
        let get = server.next().await;
        assert_eq!((get.method.as_str(), get.header("last-event-id")), ("GET", Some("same")));
        drop(get.sse_with("id: same\n\n").await);
    }
    let delete = server.next().await;
    assert_eq!(delete.method, "DELETE");
    probe.wait_closed().await;
    assert_eq!((t.is_connected(), probe.close_count()), (false, 1));
}

#[tokio::test]
async fn listener_resumes_after_an_event_id() {
    let (mut server, t, mut probe, mut stream) = listening().await;
    deliver(&mut stream, &mut probe, "retry: 10\nid: g1\n", "a").await;
    drop(stream);
    let get = server.next().await;
    assert_eq!(get.header("last-event-id"), Some("g1"));
    let mut stream = get.sse(&[]).await;
    deliver(&mut stream, &mut probe, "", "b").await;
    assert_eq!((t.is_connected(), probe.close_count()), (true, 0));
    t.close().await;
    assert_eq!(probe.close_count(), 1);
}

#[tokio::test]
async fn close_rejects_pending_fires_once_and_deletes_session() {
    let (mut server, t, mut probe) = started(2000).await;
    initialize(&mut server, &t, "2025-11-25").await;
    let pending = {
        let t = t.clone();
        tokio::spawn(async move { t.request("stall", None, RequestOptions::default()).await })
    };
    let mut stream = server.next_sse().await;
    t.close().await;
    let err = pending.await.expect("joined").expect_err("rejected");
    assert_eq!(err.to_string(), "Transport closed");
    let delete = server.next().await;
    assert_eq!((delete.method.as_str(), delete.header("mcp-session-id")), ("DELETE", Some("s-1")));
    wait_client_close(&mut stream).await;
    t.close().await;
    assert_eq!(probe.close_count(), 1);
    assert!(!t.is_connected());
    assert!(matches!(t.notify("n", None).await, Err(TransportError::NotConnected)));
    assert!(probe.errors.try_recv().is_err());
}

#[tokio::test]
async fn redirects_only_to_the_same_origin() {
    let mut server = TestServer::start().await;
    let mut other = TestServer::start().await;
    let (t, _probe) = connect(&server.url, 2000).await;
    let (r, ()) = tokio::join!(t.request("a", None, RequestOptions::default()), async {
        let loc = format!("{}/moved", server.base);
        server.next().await.respond(307, &[("Location", &loc)], "").await;
        let moved = server.next().await;
        assert_eq!((moved.method.as_str(), moved.path.as_str(), moved.rpc_method().as_str()), ("POST", "/moved", "a"));
        moved.json_reply(ok(1, json!("here"))).await;
    });
    assert_eq!(r.expect("followed"), json!("here"));
    let (r, ()) = tokio::join!(t.request("b", None, RequestOptions::default()), async {
        let loc = format!("{}/steal", other.base);
        server.next().await.respond(308, &[("Location", &loc)], "").await;
    });
    let text = r.expect_err("refused").to_string();
    assert!(text.contains("refusing cross-origin redirect"), "{text}");
    // Nothing reached the other origin: its next request is one we send ourselves.
    let probe_client = reqwest::Client::builder().no_proxy().build().expect("client");
    let (_, ()) = tokio::join!(probe_client.get(&other.url).send(), async {
        assert_eq!(other.next().await.method, "GET");
    });
}
