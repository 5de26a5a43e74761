//! The Streamable HTTP and legacy SSE mocks, end to end: the binary is started as the
//! harness starts it, driven over 127.0.0.1, stopped with SIGTERM, and its record read.

use mcp_mock::record::read_run;
use mcp_scenario::WireEvent;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

/// Every wait in these tests is bounded by this.
const BOUND: Duration = Duration::from_secs(10);

struct Mock {
    child: Child,
    url: String,
    dir: tempfile::TempDir,
}

impl Mock {
    async fn start(sub: &str, scenario: &str) -> Mock {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.yaml");
        std::fs::write(&path, scenario).expect("write scenario");
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-mock"))
            .args([sub, "--scenario", path.to_str().expect("utf8"), "--run-dir"])
            .arg(dir.path().join("run"))
            .args(["--deadline-ms", "20000"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn mcp-mock");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let line = tokio::time::timeout(BOUND, lines.next_line())
            .await
            .expect("listening line in time")
            .expect("read")
            .expect("a line");
        let url = line.strip_prefix("listening ").expect("listening line").to_string();
        Mock { child, url, dir }
    }

    fn addr(&self) -> String {
        self.url.trim_start_matches("http://").split('/').next().unwrap_or_default().to_string()
    }

    /// Stops the mock (it flushes) and returns every connection's record.
    async fn stop(self) -> Vec<Vec<WireEvent>> {
        self.stop_raw().await.0
    }

    /// Stops the mock; returns the records and the raw text of every record file.
    async fn stop_raw(mut self) -> (Vec<Vec<WireEvent>>, String) {
        let pid = self.child.id().expect("running") as i32;
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
        let status = tokio::time::timeout(BOUND, self.child.wait()).await.expect("exits in time").expect("wait");
        assert_eq!(status.code(), Some(143), "SIGTERM exit code");
        let run = self.dir.path().join("run");
        let text = (1..).map_while(|n| std::fs::read_to_string(run.join(format!("conn-{n}.jsonl"))).ok()).collect();
        (read_run(&run), text)
    }
}

fn head(revision: &str, transport: &str) -> String {
    format!("name: t\nsummary: s\ntransport: {transport}\nrevision: {revision}\nclient:\n  - op: connect\n")
}

async fn post(c: &reqwest::Client, url: &str, session: Option<&str>, body: Value) -> reqwest::Response {
    let mut r =
        c.post(url).header("content-type", "application/json").header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        r = r.header("mcp-session-id", s);
    }
    tokio::time::timeout(BOUND, r.body(body.to_string()).send()).await.expect("answered in time").expect("sent")
}

/// Sends one raw HTTP/1.1 POST and reads until the server closes (bounded).
async fn raw_post(addr: &str, body: &str, session: Option<&str>) -> (Vec<u8>, std::io::Result<()>) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let session = session.map(|v| format!("mcp-session-id: {v}\r\n")).unwrap_or_default();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n{session}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut got = Vec::new();
    let end = tokio::time::timeout(BOUND, s.read_to_end(&mut got)).await.expect("closed in time").map(|_| ());
    (got, end)
}

fn init() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
}

#[tokio::test]
async fn json_reply_sessions_and_defaults() {
    let scenario = head("2025-11-25", "http")
        + "server:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": []}\n";
    let mock = Mock::start("http", &scenario).await;
    let c = reqwest::Client::new();
    let r = post(&c, &mock.url, None, init()).await;
    assert_eq!(r.status(), 200);
    let sid = r.headers().get("mcp-session-id").expect("session issued").to_str().expect("ascii").to_string();
    assert_eq!(r.json::<Value>().await.expect("json")["result"]["protocolVersion"], "2025-11-25");
    let r = post(&c, &mock.url, Some(&sid), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(r.status(), 202);
    let r = post(&c, &mock.url, Some(&sid), json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    assert_eq!(r.json::<Value>().await.expect("json"), json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}));
    // Unscripted: -32601 at once; no session: 400; GET: 405; DELETE: 200, then 404.
    let r = post(&c, &mock.url, Some(&sid), json!({"jsonrpc": "2.0", "id": 3, "method": "x/y"})).await;
    assert_eq!(r.json::<Value>().await.expect("json")["error"]["code"], -32601);
    assert_eq!(post(&c, &mock.url, None, json!({"jsonrpc": "2.0", "id": 4, "method": "x/y"})).await.status(), 400);
    let get = c.get(&mock.url).header("mcp-session-id", &sid).send().await.expect("get");
    assert_eq!(get.status(), 405);
    assert_eq!(c.delete(&mock.url).header("mcp-session-id", &sid).send().await.expect("delete").status(), 200);
    assert_eq!(
        post(&c, &mock.url, Some(&sid), json!({"jsonrpc": "2.0", "id": 5, "method": "ping"})).await.status(),
        404
    );

    let run = mock.stop().await;
    assert_eq!(run.len(), 1);
    let sent_session = run[0]
        .iter()
        .any(|e| matches!(e, WireEvent::HttpRequest { headers, .. } if headers.get("mcp-session-id") == Some(&sid)));
    assert!(sent_session, "{:?}", run[0]);
    assert!(run[0].iter().any(|e| matches!(e, WireEvent::Script { finished: true, .. })));
}

#[tokio::test]
async fn sse_events_then_abort_mid_event() {
    let scenario = head("2025-11-25", "http")
        + "server:\n  - op: handshake\n    session: false\n  - op: expect\n    method: tools/call\n  - op: open_stream\n  - op: event\n    id: \"7\"\n    retry: 50\n    data: \"a\\nb\"\n    line_end: crlf\n  - op: event\n    comment: keep-alive\n  - op: end_stream\n    how: mid_event\n";
    let mock = Mock::start("http", &scenario).await;
    let c = reqwest::Client::new();
    post(&c, &mock.url, None, init()).await;
    post(&c, &mock.url, None, json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let (got, _) = raw_post(&mock.addr(), r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}"#, None).await;
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
    let scenario = head("2025-11-25", "http")
        + "server:\n  - op: expect\n    method: tools/call\n  - op: open_stream\n  - op: event\n    data: hello\n  - op: end_stream\n    how: reset\n";
    let mock = Mock::start("http", &scenario).await;
    let (got, end) = raw_post(&mock.addr(), r#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#, None).await;
    let err = end.expect_err("the read must fail with a reset");
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}; got {:?}", String::from_utf8_lossy(&got));
    mock.stop().await;
}

#[tokio::test]
async fn raw_response_replaces_the_response_bytes() {
    let scenario = head("2025-11-25", "http")
        + "server:\n  - op: expect\n    method: tools/list\n  - op: raw_response\n    text: \"HTTP/1.1 200 OK\\r\\ncontent-length: 100\\r\\n\\r\\n{\\\"jsonrpc\\\"\"\n    chunks: [5]\n    chunk_delay_ms: 5\n";
    let mock = Mock::start("http", &scenario).await;
    let (got, end) = raw_post(&mock.addr(), r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, None).await;
    assert!(end.is_ok());
    assert_eq!(String::from_utf8_lossy(&got), "HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"jsonrpc\"");
    mock.stop().await;
}

#[tokio::test]
async fn auth_refusal_and_redacted_tokens() {
    let scenario = head("2025-11-25", "http")
        + "server:\n  - op: require_auth\n    token: fresh-token-123\n    www_authenticate: 'Bearer error=\"invalid_token\", resource_metadata=\"{origin}/meta\"'\n  - op: expect\n    method: tools/list\n  - op: reply\n";
    let mock = Mock::start("http", &scenario).await;
    let c = reqwest::Client::new();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = c
        .post(&mock.url)
        .header("authorization", "Bearer stale-token-456")
        .body(list.to_string())
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 401);
    assert!(r.headers().get("www-authenticate").is_some());
    let r = c
        .post(&mock.url)
        .header("authorization", "Bearer fresh-token-123")
        .body(list.to_string())
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 200);
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
    let mock = Mock::start("legacy-sse", &scenario).await;
    let c = reqwest::Client::new();
    let mut stream = c.get(&mock.url).header("accept", "text/event-stream").send().await.expect("get");
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
    let r = post(&c, &endpoint, None, json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert_eq!(r.status(), 202);
    read_until("\"result\"", &mut seen).await;
    assert!(
        seen.ends_with("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n"),
        "{seen}"
    );
    drop(stream);
    let run = mock.stop().await;
    assert!(
        run[0].iter().any(|e| matches!(e, WireEvent::StreamEnd { how, .. } if how == "client went away")),
        "{:?}",
        run[0]
    );
}

#[tokio::test]
async fn port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let path: PathBuf = dir.path().join("s.yaml");
    std::fs::write(&path, head("2025-11-25", "http") + "server:\n  - op: handshake\n").expect("write");
    let out = tokio::time::timeout(
        BOUND,
        Command::new(env!("CARGO_BIN_EXE_mcp-mock"))
            .args([
                "http",
                "--scenario",
                path.to_str().expect("utf8"),
                "--run-dir",
                dir.path().to_str().expect("utf8"),
                "--port",
                &port,
            ])
            .output(),
    )
    .await
    .expect("exits in time")
    .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in use") && err.contains("--port 0"), "{err}");
}
