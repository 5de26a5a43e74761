//! The Streamable HTTP and legacy SSE mocks in-process, on a loopback listener: driven
//! with reqwest for ordinary exchanges and raw TCP for the faults, stopped through their
//! [`mcp_mock::Shutdown`], their record read back.

use crate::support::{BOUND, Http, bounded, head, init, post, raw_post, raw_send, read_until, request};
use mcp_mock::ExitReason;
use mcp_mock::http::Flavour;
use mcp_scenario::WireEvent;
use nix::sys::signal::Signal;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test]
async fn json_reply_sessions_and_defaults() {
    let mock = Http::streamable(
        "  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": []}\n",
    )
    .await;
    let r = mock.post(None, init()).await;
    assert_eq!(r.status(), 200);
    let sid = r.headers().get("mcp-session-id").expect("session issued").to_str().expect("ascii").to_string();
    assert_eq!(r.json::<Value>().await.expect("json")["result"]["protocolVersion"], "2025-11-25");
    let r = mock.post(Some(&sid), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(r.status(), 202);
    let r = mock.post(Some(&sid), json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    assert_eq!(r.json::<Value>().await.expect("json"), json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}));
    // Unscripted: -32601 at once; no session: 400; GET: 405; DELETE: 200, then 404.
    let r = mock.post(Some(&sid), json!({"jsonrpc": "2.0", "id": 3, "method": "x/y"})).await;
    assert_eq!(r.json::<Value>().await.expect("json")["error"]["code"], -32601);
    assert_eq!(mock.post(None, json!({"jsonrpc": "2.0", "id": 4, "method": "x/y"})).await.status(), 400);
    let get = mock.client.get(&mock.url).header("mcp-session-id", &sid).send().await.expect("get");
    assert_eq!(get.status(), 405);
    assert_eq!(
        mock.client.delete(&mock.url).header("mcp-session-id", &sid).send().await.expect("delete").status(),
        200
    );
    assert_eq!(mock.post(Some(&sid), json!({"jsonrpc": "2.0", "id": 5, "method": "ping"})).await.status(), 404);

    let run = mock.stop().await;
    assert_eq!(run.len(), 1);
    let sent_session = run[0]
        .iter()
        .any(|e| matches!(e, WireEvent::HttpRequest { headers, .. } if headers.get("mcp-session-id") == Some(&sid)));
    assert!(sent_session, "{:?}", run[0]);
    assert!(run[0].iter().any(|e| matches!(e, WireEvent::Script { finished: true, .. })));
}

#[tokio::test]
async fn unscripted_ping_and_tools_list_get_their_defaults_over_streamable_http() {
    let mock = Http::streamable(
        "  - op: handshake\n  - op: reply_always\n    method: ping\n    result: {\"always\": true}\n  - op: stall\n",
    )
    .await;
    let sid = mock.handshake().await;
    let r = mock.post(sid.as_deref(), json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})).await;
    assert_eq!(r.json::<Value>().await.expect("json"), json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}));
    // A `reply_always` rule comes before the default.
    let r = mock.post(sid.as_deref(), json!({"jsonrpc": "2.0", "id": 8, "method": "ping"})).await;
    assert_eq!(r.json::<Value>().await.expect("json")["result"], json!({"always": true}));
    let r = mock.post(sid.as_deref(), json!({"jsonrpc": "2.0", "id": 9, "method": "server/discover"})).await;
    assert_eq!(r.json::<Value>().await.expect("json")["error"]["code"], -32601);
    let run = mock.stop().await;
    let answered =
        |why: &str| run[0].iter().filter(|e| matches!(e, WireEvent::HttpResponse { why: w, .. } if w == why)).count();
    assert_eq!((answered("default tools/list"), answered("reply_always"), answered("auto -32601")), (1, 1, 1));
}

#[tokio::test]
async fn sse_events_then_abort_mid_event() {
    let mock = Http::streamable("  - op: handshake\n    session: false\n  - op: expect\n    method: tools/call\n  - op: open_stream\n  - op: event\n    id: \"7\"\n    retry: 50\n    data: \"a\\nb\"\n    line_end: crlf\n  - op: event\n    comment: keep-alive\n  - op: end_stream\n    how: mid_event\n").await;
    mock.post(None, init()).await;
    mock.post(None, json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let (got, _) = raw_post(&mock.addr, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}"#, None).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.contains("transfer-encoding: chunked"), "{text}");
    assert!(text.contains("id: 7\r\nretry: 50\r\ndata: a\r\ndata: b\r\n\r\n"), "{text}");
    assert!(text.contains(": keep-alive\n\n"), "{text}");
    assert!(text.contains("data: {\"jsonrpc\":\"2.0\","), "the partial event must reach the client: {text}");
    assert!(!text.ends_with("0\r\n\r\n"), "a mid-event abort has no terminating chunk: {text}");
    let run = mock.stop().await;
    assert!(run[0].iter().any(|e| matches!(e, WireEvent::StreamEnd { how, .. } if how == "mid_event")));
}

#[tokio::test]
async fn stream_reset_is_a_tcp_reset() {
    let mock = Http::streamable("  - op: expect\n    method: tools/call\n  - op: open_stream\n  - op: event\n    data: hello\n  - op: end_stream\n    how: reset\n").await;
    let (got, end) = raw_post(&mock.addr, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#, None).await;
    let err = end.expect_err("the read must fail with a reset");
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}; got {:?}", String::from_utf8_lossy(&got));
    mock.stop().await;
}

#[tokio::test]
async fn raw_response_replaces_the_response_bytes() {
    let mock = Http::streamable("  - op: expect\n    method: tools/list\n  - op: raw_response\n    text: \"HTTP/1.1 200 OK\\r\\ncontent-length: 100\\r\\n\\r\\n{\\\"jsonrpc\\\"\"\n    chunks: [5]\n    chunk_delay_ms: 5\n").await;
    let (got, end) = raw_post(&mock.addr, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, None).await;
    assert!(end.is_ok());
    assert_eq!(String::from_utf8_lossy(&got), "HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"jsonrpc\"");
    mock.stop().await;
}

#[tokio::test]
async fn auth_refusal_and_redacted_tokens() {
    let mock = Http::streamable("  - op: require_auth\n    token: fresh-token-123\n    www_authenticate: 'Bearer error=\"invalid_token\", resource_metadata=\"{origin}/meta\"'\n  - op: expect\n    method: tools/list\n  - op: reply\n").await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let with_token =
        |token: &str| mock.client.post(&mock.url).header("authorization", format!("Bearer {token}")).body(list.clone());
    let r = with_token("stale-token-456").send().await.expect("post");
    assert_eq!(r.status(), 401);
    assert!(r.headers().get("www-authenticate").is_some());
    assert_eq!(with_token("fresh-token-123").send().await.expect("post").status(), 200);
    let (run, text) = mock.stop_raw().await;
    let auths: Vec<&str> = run[0]
        .iter()
        .filter_map(|e| match e {
            WireEvent::HttpRequest { headers, .. } => headers.get("authorization").map(String::as_str),
            _ => None,
        })
        .collect();
    assert_eq!(auths, ["Bearer <redacted:1>", "Bearer <redacted:2>"]);
    assert!(!text.contains("stale-token-456") && !text.contains("fresh-token-123"), "a token reached the record");
}

#[tokio::test]
async fn legacy_endpoint_post_and_message_on_the_stream() {
    let scenario = head("2024-11-05", "legacy-sse")
        + "server:\n  - op: expect_get\n  - op: endpoint\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": []}\n";
    let mock = Http::start(Flavour::LegacySse, &scenario).await;
    let mut stream = mock.client.get(&mock.url).header("accept", "text/event-stream").send().await.expect("get");
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let mut seen = String::new();
    let mut read_until = async |needle: &str, seen: &mut String| {
        while !seen.contains(needle) {
            let chunk = tokio::time::timeout(BOUND, stream.chunk())
                .await
                .expect("event in time")
                .expect("read")
                .expect("stream open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    read_until("\n\n", &mut seen).await;
    assert_eq!(seen, "event: endpoint\ndata: /message?session_id=1\n\n");
    let endpoint = format!("{}/message?session_id=1", mock.url.trim_end_matches("/sse"));
    let r = post(&mock.client, &endpoint, None, json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert_eq!(r.status(), 202);
    read_until("\"result\"", &mut seen).await;
    assert!(
        seen.ends_with("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n"),
        "{seen}"
    );
    // An unscripted ping gets its default answer on the stream.
    let r = post(&mock.client, &endpoint, None, json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})).await;
    assert_eq!(r.status(), 202);
    read_until("\"id\":2,\"result\":{}}\n\n", &mut seen).await;
    assert!(seen.ends_with("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"), "{seen}");
    drop(stream);
    let run = mock.stop().await;
    assert!(
        run[0].iter().any(|e| matches!(e, WireEvent::StreamEnd { how, .. } if how == "client went away")),
        "{:?}",
        run[0]
    );
}

#[tokio::test]
async fn replies_with_wrong_ids_and_padding() {
    let mock = Http::streamable("  - op: handshake\n    session: false\n  - op: expect\n    method: a\n  - op: reply\n    wrong_id: other_type\n    pad_to: 300\n  - op: expect\n    method: b\n  - op: reply\n    wrong_id: 'null'\n").await;
    mock.handshake().await;
    let a: Value = mock.post(None, request(2, "a")).await.json().await.expect("json");
    assert_eq!(a["id"], "2");
    assert!(a.to_string().len() >= 250, "padded: {a}");
    let b: Value = mock.post(None, request(3, "b")).await.json().await.expect("json");
    assert_eq!(b, json!({"jsonrpc": "2.0", "id": null, "result": {}}));
    mock.stop().await;
}

#[tokio::test]
async fn streams_end_cleanly_or_stall() {
    let mock = Http::streamable("  - op: expect\n    method: one\n  - op: open_stream\n    as: s1\n  - op: event\n    stream: s1\n    json: {\"n\": 1}\n  - op: end_stream\n    stream: s1\n  - op: expect\n    method: two\n  - op: open_stream\n  - op: message_event\n    name: ''\n  - op: notify\n    method: tick\n  - op: end_stream\n    how: stall\n").await;
    let mut one = raw_send(&mock.addr, &request(1, "one").to_string(), None).await;
    let clean = read_until(&mut one, "0\r\n\r\n").await;
    assert!(clean.contains("data: {\"n\":1}\n\n"), "{clean}");
    assert!(clean.ends_with("0\r\n\r\n"), "a clean end is the terminating chunk: {clean}");
    let mut s = raw_send(&mock.addr, &request(2, "two").to_string(), None).await;
    let got = read_until(&mut s, "\"tick\"").await;
    assert!(got.contains("\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"tick\"}\n\n"), "an unnamed event: {got}");
    let mut more = [0u8; 64];
    let stalled = tokio::time::timeout(Duration::from_millis(50), s.read(&mut more)).await;
    assert!(stalled.is_err(), "a stalled stream sends nothing more and stays open");
    drop(s);
    let run = mock.stop().await;
    let ends: Vec<&str> = run[0]
        .iter()
        .filter_map(|e| match e {
            WireEvent::StreamEnd { how, .. } => Some(how.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ends[..2], ["clean", "stall"], "{ends:?}");
}

#[tokio::test]
async fn sessions_missing_unknown_and_expired() {
    let (mock, sid) = Http::in_session("  - op: handshake\n    session_id: fixed-session\n  - op: expect\n    method: a\n  - op: reply\n  - op: expire_session\n  - op: expect\n    method: never\n").await;
    assert_eq!(sid, "fixed-session");
    assert_eq!(mock.post(None, request(2, "a")).await.status(), 400, "missing session");
    assert_eq!(mock.post(Some("nope"), request(2, "a")).await.status(), 404, "unknown session");
    assert_eq!(mock.post(Some(&sid), request(2, "a")).await.status(), 200);
    // The reply is written before `expire_session` runs; give the step a moment.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = mock.post(Some(&sid), request(3, "ping")).await;
    assert_eq!(r.status(), 404, "expired session");
    assert_eq!(r.json::<Value>().await.expect("json")["error"]["message"], "Session not found");
    let run = mock.stop().await;
    let refusals: Vec<&str> = run[0]
        .iter()
        .filter_map(|e| match e {
            WireEvent::HttpResponse { status: 400 | 404, why, .. } => Some(why.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(refusals, ["session missing", "unknown session", "session expired"]);
}

#[tokio::test]
async fn auth_refusal_can_be_403_with_a_body() {
    let mock =
        Http::streamable("  - op: require_auth\n    token: t0k\n    status: 403\n    text: go away\n  - op: stall\n")
            .await;
    let r = mock.post(None, init()).await;
    assert_eq!(r.status(), 403);
    assert_eq!(r.headers()["www-authenticate"], "Bearer error=\"invalid_token\"");
    assert_eq!(r.text().await.expect("body"), "go away");
    mock.stop().await;
}

#[tokio::test]
async fn auth_limited_to_posts_serves_the_get_listener_as_without_a_rule() {
    let mock = Http::streamable("  - op: require_auth\n    token: t0k\n    http_method: POST\n  - op: stall\n").await;
    let get = mock.client.get(&mock.url).header("accept", "text/event-stream").send().await.expect("get");
    assert_eq!(get.status(), 405, "the GET is answered as if no rule were set");
    assert_eq!(mock.post(None, init()).await.status(), 401, "a POST without the token is refused");
    mock.stop().await;
}

#[tokio::test]
async fn raw_response_then_reset() {
    let mock = Http::streamable(
        "  - op: expect\n    method: a\n  - op: raw_response\n    hex: 48 54 54 50\n    then: reset\n",
    )
    .await;
    let (got, end) = raw_post(&mock.addr, &request(1, "a").to_string(), None).await;
    assert!(got.is_empty() || got == b"HTTP", "{got:?}");
    assert_eq!(end.expect_err("reset").kind(), std::io::ErrorKind::ConnectionReset);
    let run = mock.stop().await;
    assert!(run[0].iter().any(|e| matches!(e, WireEvent::StreamEnd { how, .. } if how == "raw: reset")));
}

#[tokio::test]
async fn get_and_delete_are_scripted() {
    let (mock, sid) = Http::in_session("  - op: handshake\n  - op: expect_get\n    status: 404\n    content_type: text/plain\n    text: no listener on {port}\n  - op: expect_delete\n    hang: true\n").await;
    let get = mock.client.get(&mock.url).header("mcp-session-id", &sid).send().await.expect("get");
    assert_eq!(get.status(), 404);
    let port = mock.addr.rsplit(':').next().expect("port").to_string();
    assert_eq!(get.text().await.expect("body"), format!("no listener on {port}"));
    let delete = mock.client.delete(&mock.url).header("mcp-session-id", &sid).send();
    assert!(tokio::time::timeout(Duration::from_millis(50), delete).await.is_err(), "the DELETE hangs");
    let run = mock.stop().await;
    assert!(run[0].iter().any(|e| matches!(e, WireEvent::Note { text, .. } if text.contains("left unanswered"))));
}

#[tokio::test]
async fn the_exit_step_ends_the_mock_with_its_reason() {
    let mock = Http::streamable("  - op: expect\n    method: a\n  - op: exit\n    code: 5\n").await;
    let r = mock.client.post(&mock.url).body(request(1, "a").to_string()).send().await;
    assert!(r.is_err() || r.is_ok_and(|r| r.status() == 202), "the request is left unanswered or accepted");
    let (reason, run) = mock.ended().await;
    assert_eq!(reason, ExitReason::code(5, "script"));
    assert!(matches!(run[0].last(), Some(WireEvent::Exit { code: Some(5), .. })), "{:?}", run[0]);
}

#[tokio::test]
async fn an_exit_by_signal_is_reported_not_raised() {
    let mock = Http::streamable("  - op: exit\n    signal: SIGKILL\n").await;
    let (reason, run) = mock.ended().await;
    assert_eq!(reason, ExitReason { code: 137, signal: Some(Signal::SIGKILL), why: "script".into() });
    assert!(matches!(run[0].last(), Some(WireEvent::Exit { signal: Some(s), .. }) if s == "SIGKILL"));
}

#[tokio::test]
async fn the_deadline_records_an_exit_per_connection() {
    let mock = Http::streamable_with("  - op: stall\n", Duration::from_millis(50)).await;
    let (reason, run) = mock.ended().await;
    assert_eq!(reason, ExitReason::code(124, "deadline"));
    assert!(matches!(run[0].last(), Some(WireEvent::Exit { code: Some(124), why, .. }) if why == "deadline"));
}

#[tokio::test]
async fn a_second_initialize_starts_the_next_connection() {
    let mock =
        Http::streamable("  - op: handshake\n  - op: new_connection\n  - op: handshake\n    session_id: second\n")
            .await;
    let first = mock.handshake().await.expect("session 1");
    let second = mock.handshake().await.expect("session 2");
    assert_ne!(first, second);
    assert_eq!(second, "second");
    let run = mock.stop().await;
    assert_eq!(run.len(), 2);
    assert!(run.iter().all(|conn| conn.iter().any(|e| matches!(e, WireEvent::Script { finished: true, .. }))));
}

/// On 2026-07-28 the mock refuses what a 2026-07-28 server refuses, before its script sees
/// it: each rule of `mcp_mock::stateless` over the wire, then a valid request reaches the
/// script.
#[tokio::test]
async fn stateless_revision_validates_like_a_2026_server() {
    let text = head("2026-07-28", "http")
        + "server:\n  - op: expect\n    method: tools/call\n  - op: reply\n    result: {\"content\": []}\n";
    let mock = Http::start(Flavour::StreamableHttp, &text).await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let call = |name: &str, meta: Value| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "_meta": meta}});
    let send = |body: Value, headers: &[(&str, &str)]| {
        let mut b = mock.client.post(&mock.url).header("content-type", "application/json").body(body.to_string());
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.send()
    };
    let full = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "=?base64?w6k=?=")];
    let code = |r: reqwest::Response| async move {
        let status = r.status().as_u16();
        (status, r.json::<Value>().await.expect("json")["error"]["code"].as_i64())
    };
    // Mcp-Name that does not match the body (after decoding), then missing headers.
    assert_eq!(code(send(call("x", meta.clone()), &full).await.expect("post")).await, (400, Some(-32020)));
    assert_eq!(code(send(call("é", meta.clone()), &full[1..]).await.expect("post")).await, (400, Some(-32020)));
    // _meta without clientCapabilities; an unsupported version (header and body agree).
    let no_caps = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    assert_eq!(code(send(call("é", no_caps), &full).await.expect("post")).await, (400, Some(-32602)));
    let old = json!({"io.modelcontextprotocol/protocolVersion": "2025-11-25", "io.modelcontextprotocol/clientCapabilities": {}});
    let old_headers = [("mcp-protocol-version", "2025-11-25"), full[1], full[2]];
    let r = send(call("é", old), &old_headers).await.expect("post");
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["error"]["data"], json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}));
    // An unknown method: 404 + -32601; GET and DELETE: 405.
    let unknown = json!({"jsonrpc": "2.0", "id": 2, "method": "x/y", "params": {"_meta": meta}});
    let unknown_headers = [full[0], ("mcp-method", "x/y")];
    assert_eq!(code(send(unknown, &unknown_headers).await.expect("post")).await, (404, Some(-32601)));
    assert_eq!(mock.client.get(&mock.url).send().await.expect("get").status(), 405);
    assert_eq!(mock.client.delete(&mock.url).send().await.expect("delete").status(), 405);
    // A valid request reaches the script.
    let r = send(call("é", meta), &full).await.expect("post");
    assert_eq!(r.json::<Value>().await.expect("json")["result"], json!({"content": []}));
    let run = mock.stop().await;
    assert!(run[0].iter().any(|e| matches!(e, WireEvent::Script { finished: true, .. })));
}

/// The `why` of every GET answer, in order.
fn get_answers(run: &[WireEvent]) -> Vec<(u16, String)> {
    let gets: Vec<u64> = run
        .iter()
        .filter_map(|e| match e {
            WireEvent::HttpRequest { exchange, http_method, .. } if http_method == "GET" => Some(*exchange),
            _ => None,
        })
        .collect();
    run.iter()
        .filter_map(|e| match e {
            WireEvent::HttpResponse { exchange, status, why, .. } if gets.contains(exchange) => {
                Some((*status, why.clone()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_repeated_get_answer_stands_for_every_later_get() {
    let (mock, sid) =
        Http::in_session("  - op: handshake\n  - op: expect_get\n    close: true\n    repeat: true\n").await;
    for _ in 0..3 {
        let get = mock.client.get(&mock.url).header("mcp-session-id", &sid).send().await.expect("get");
        assert_eq!(get.status(), 200);
        assert_eq!(get.headers()["content-type"], "text/event-stream");
        assert_eq!(get.text().await.expect("body"), "", "a stream that ends at once");
    }
    let run = mock.stop().await;
    let want = [(200, "expect_get"), (200, "expect_get (repeat)"), (200, "expect_get (repeat)")];
    assert_eq!(get_answers(&run[0]), want.map(|(s, w)| (s, w.to_string())));
    let ends = run[0].iter().filter(|e| matches!(e, WireEvent::StreamEnd { how, .. } if how == "clean")).count();
    assert_eq!(ends, 3, "{:?}", run[0]);
}

#[tokio::test]
async fn a_repeated_open_stream_repeats_as_a_stream_that_ends_at_once() {
    let (mock, sid) =
        Http::in_session("  - op: handshake\n  - op: expect_get\n    repeat: true\n  - op: end_stream\n").await;
    let first = mock.client.get(&mock.url).header("mcp-session-id", &sid).send().await.expect("get");
    assert_eq!(first.text().await.expect("body"), "", "the script ended it");
    let again = mock.client.get(&mock.url).header("mcp-session-id", &sid).send().await.expect("get");
    assert_eq!(again.status(), 200);
    assert_eq!(tokio::time::timeout(BOUND, again.text()).await.expect("ends at once").expect("body"), "");
    let run = mock.stop().await;
    assert_eq!(get_answers(&run[0]), [(200, "expect_get".into()), (200, "expect_get (repeat)".into())]);
}

#[tokio::test]
async fn an_optional_get_does_not_hold_the_script_and_still_gets_its_answer() {
    let (mock, sid) = Http::in_session(
        "  - op: handshake\n  - op: expect_get\n    status: 405\n    optional: true\n  - op: expect\n    method: a\n  - op: reply\n",
    )
    .await;
    // The script answers `a` without ever having seen a GET.
    let a = mock.post(Some(&sid), request(2, "a")).await;
    assert_eq!(a.status(), 200);
    for _ in 0..2 {
        let get = mock.client.get(&mock.url).header("mcp-session-id", &sid).send().await.expect("get");
        assert_eq!(get.status(), 405);
    }
    let run = mock.stop().await;
    // Without `repeat` only the first GET is the step's; the second gets the default.
    assert_eq!(get_answers(&run[0]), [(405, "expect_get (optional)".into()), (405, "unscripted GET".into())]);
    assert!(run[0].iter().any(|e| matches!(e, WireEvent::Script { finished: true, .. })), "{:?}", run[0]);
}

#[tokio::test]
async fn listener_and_resumption_gets_meet_their_own_answers_whatever_the_order() {
    // The listener is optional and answered 405; resumptions get a stream that ends at
    // once, repeated. A listener retry that comes between resumptions never takes theirs.
    let (mock, sid) = Http::in_session(
        "  - op: handshake\n  - op: expect_get\n    status: 405\n    optional: true\n    resumption: false\n  \
         - op: expect_get\n    resumption: true\n    close: true\n    repeat: true\n",
    )
    .await;
    let get = |resume: bool| {
        let mut req = mock.client.get(&mock.url).header("mcp-session-id", &sid);
        if resume {
            req = req.header("last-event-id", "s-1");
        }
        async move { req.send().await.expect("get").status().as_u16() }
    };
    let statuses = [get(true).await, get(false).await, get(true).await, get(false).await];
    assert_eq!(statuses, [200, 405, 200, 405]);
    let run = mock.stop().await;
    let want =
        [(200, "expect_get"), (405, "expect_get (optional)"), (200, "expect_get (repeat)"), (405, "unscripted GET")];
    assert_eq!(get_answers(&run[0]), want.map(|(s, w)| (s, w.to_string())));
}

#[tokio::test]
async fn a_repeated_respond_answers_every_later_request_with_its_method() {
    let (mock, sid) = Http::in_session(
        "  - op: handshake\n  - op: expect\n    method: a\n  - op: respond\n    status: 500\n    text: down\n    repeat: true\n",
    )
    .await;
    for id in 2..5 {
        let r = mock.post(Some(&sid), request(id, "a")).await;
        assert_eq!(r.status(), 500);
        assert_eq!(r.text().await.expect("body"), "down");
    }
    let other = mock.post(Some(&sid), request(5, "b")).await;
    assert_eq!(other.status(), 200, "another method keeps the default answer");
    let run = mock.stop().await;
    let whys: Vec<&str> = run[0]
        .iter()
        .filter_map(|e| match e {
            WireEvent::HttpResponse { status: 500, why, .. } => Some(why.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(whys, ["respond", "respond (repeat)", "respond (repeat)"]);
}

#[tokio::test]
async fn a_body_the_client_cut_off_is_a_note_not_a_message() {
    let mock = Http::streamable("  - op: expect\n    method: tools/list\n  - op: reply\n    result: {}\n").await;
    let mut s = TcpStream::connect(&mock.addr).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n",
        mock.addr
    );
    s.write_all(format!("{head}{{\"jsonrpc\"").as_bytes()).await.expect("write");
    s.shutdown().await.expect("half-close");
    // The mock closes the connection only once the handler is done with the request.
    let mut got = Vec::new();
    let _ = bounded("the connection closes", s.read_to_end(&mut got)).await;
    let run = mock.stop().await;
    let events = &run[0];
    let note = events.iter().find_map(|e| match e {
        WireEvent::Note { text, .. } => Some(text.as_str()),
        _ => None,
    });
    assert!(
        note.is_some_and(|t| t.contains("#1 POST /mcp: the client closed the connection before the body ended")),
        "{events:#?}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, WireEvent::HttpRequest { .. } | WireEvent::HttpResponse { .. })),
        "{events:#?}"
    );
}
