//! A hand-written HTTP/1.1 responder: every request arrives on a channel with its socket,
//! and the test writes whatever bytes the scenario needs (SSE streams, drops). Plus
//! handlers that record what a transport reported, and a config that ignores the process
//! environment.

use mcp_transports::Handlers;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc};

/// A fresh temp dir and a file path in it for a server to log to; keep the dir alive.
pub fn temp_log(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join(name);
    (dir, log)
}

/// How long a test waits for anything before failing.
pub const WAIT: Duration = Duration::from_secs(5);

/// One request received by the test server.
pub struct Incoming {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub stream: TcpStream,
}

impl Incoming {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn header_count(&self, name: &str) -> usize {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).count()
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }

    /// The `method` of the JSON-RPC body, or "" when there is none.
    pub fn rpc_method(&self) -> String {
        serde_json::from_str::<Value>(&self.body)
            .ok()
            .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_default()
    }

    pub async fn respond(mut self, status: u16, headers: &[(&str, &str)], body: &str) {
        let mut head = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(body);
        let _ = self.stream.write_all(head.as_bytes()).await;
        let _ = self.stream.shutdown().await;
    }

    pub async fn json_reply(self, value: Value) {
        self.respond(200, &[("Content-Type", "application/json")], &value.to_string()).await;
    }

    /// Starts an SSE response and hands back the socket for the events.
    pub async fn sse(mut self, headers: &[(&str, &str)]) -> TcpStream {
        let mut head = String::from("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n");
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let _ = self.stream.write_all(head.as_bytes()).await;
        self.stream
    }

    /// Starts an SSE response (no extra headers) with `events`; hands back the socket.
    pub async fn sse_with(self, events: &str) -> TcpStream {
        let mut stream = self.sse(&[]).await;
        send(&mut stream, events).await;
        stream
    }
}

/// Writes raw bytes to an open response.
pub async fn send(stream: &mut TcpStream, text: &str) {
    stream.write_all(text.as_bytes()).await.expect("write to client");
}

/// Waits until the client closes its side of `stream`.
pub async fn wait_client_close(stream: &mut TcpStream) {
    let mut buf = [0u8; 256];
    let closed = tokio::time::timeout(WAIT, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "client never closed the stream");
}

pub struct TestServer {
    pub url: String,
    pub base: String,
    rx: mpsc::UnboundedReceiver<Incoming>,
}

impl TestServer {
    pub async fn start() -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let tx = tx.clone();
                tokio::spawn(async move {
                    if let Some(incoming) = read_request(stream).await {
                        let _ = tx.send(incoming);
                    }
                });
            }
        });
        let base = format!("http://{addr}");
        TestServer { url: format!("{base}/mcp"), base, rx }
    }

    pub async fn next(&mut self) -> Incoming {
        tokio::time::timeout(WAIT, self.rx.recv()).await.expect("a request in time").expect("server alive")
    }

    /// The next request, answered with an open SSE stream (no extra headers).
    pub async fn next_sse(&mut self) -> TcpStream {
        self.next().await.sse(&[]).await
    }

    /// The next request, answered with an open SSE stream that starts with `events`.
    pub async fn next_sse_with(&mut self, events: &str) -> TcpStream {
        self.next().await.sse_with(events).await
    }
}

async fn read_request(mut stream: TcpStream) -> Option<Incoming> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_owned(), first.next()?.to_owned());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':').map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned())))
        .collect();
    let len =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse::<usize>().ok()).unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Incoming { method, path, headers, body: String::from_utf8_lossy(&body).into_owned(), stream })
}

/// What the handlers saw.
pub struct Probe {
    pub notes: mpsc::UnboundedReceiver<(String, Value)>,
    pub errors: mpsc::UnboundedReceiver<String>,
    pub closes: Arc<AtomicUsize>,
    pub closed: Arc<Notify>,
}

impl Probe {
    pub async fn note(&mut self) -> (String, Value) {
        tokio::time::timeout(WAIT, self.notes.recv()).await.expect("a notification in time").expect("open")
    }

    pub async fn error(&mut self) -> String {
        tokio::time::timeout(WAIT, self.errors.recv()).await.expect("an error report in time").expect("open")
    }

    pub async fn wait_closed(&self) {
        let notified = self.closed.notified();
        if self.closes.load(Ordering::SeqCst) > 0 {
            return;
        }
        tokio::time::timeout(WAIT, notified).await.expect("close handler in time");
    }

    pub fn close_count(&self) -> usize {
        self.closes.load(Ordering::SeqCst)
    }
}

/// Handlers that record everything; server requests are answered `{"echo": method}`.
pub fn probe() -> (Handlers, Probe) {
    let (ntx, notes) = mpsc::unbounded_channel();
    let (etx, errors) = mpsc::unbounded_channel();
    let closes = Arc::new(AtomicUsize::new(0));
    let closed = Arc::new(Notify::new());
    let (c, n) = (closes.clone(), closed.clone());
    let handlers = Handlers {
        on_close: Some(Arc::new(move || {
            c.fetch_add(1, Ordering::SeqCst);
            n.notify_waiters();
        })),
        on_error: Some(Arc::new(move |e| {
            let _ = etx.send(e.to_string());
        })),
        on_notification: Some(Arc::new(move |m, p| {
            let _ = ntx.send((m.to_owned(), p.clone()));
        })),
        on_request: Some(Arc::new(|method, _params| Box::pin(async move { Ok(serde_json::json!({"echo": method})) }))),
    };
    (handlers, Probe { notes, errors, closes, closed })
}

/// A config for `url` with a fixed timeout that ignores the process environment.
pub fn config(
    url: &str,
    timeout_ms: u64,
    kind: mcp_transports::config::TransportKind,
) -> mcp_transports::TransportConfig {
    mcp_transports::TransportConfig {
        kind,
        url: url.to_owned(),
        timeout_ms: Some(timeout_ms),
        timeout_env_override: Some(None),
        protocol_version: "2025-11-25".into(),
        ..Default::default()
    }
}
