//! Driving the mocks in-process: the stdio mock on in-memory duplex pipes, the HTTP mocks on
//! a loopback listener, both with a [`Shutdown`] the test holds the sender of.

use mcp_mock::error::MockError;
use mcp_mock::http::{Flavour, Server};
use mcp_mock::record::read_run;
use mcp_mock::stdio::Pipes;
use mcp_mock::{ExitReason, Shutdown};
use mcp_scenario::WireEvent;
use nix::sys::signal::Signal;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

/// Every wait in these tests is bounded by this.
pub const BOUND: Duration = Duration::from_secs(10);

/// A scenario's head: name, summary, transport, revision and a one-step client plan.
pub fn head(revision: &str, transport: &str) -> String {
    format!("name: t\nsummary: s\ntransport: {transport}\nrevision: {revision}\nclient:\n  - op: connect\n")
}

/// The `initialize` request.
pub fn init() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
}

/// A request.
pub fn request(id: impl Into<Value>, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": {}})
}

pub fn scenario(text: &str) -> mcp_scenario::Scenario {
    mcp_mock::load::parse(Path::new("s.yaml"), text).unwrap_or_else(|e| panic!("{e}"))
}

pub async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f).await.unwrap_or_else(|_| panic!("{what} in time"))
}

/// The stdio mock on duplex pipes.
pub struct Stdio {
    stdin: Option<DuplexStream>,
    stdout: BufReader<DuplexStream>,
    /// The mock's stderr.
    pub stderr: DuplexStream,
    stop: UnboundedSender<Signal>,
    task: JoinHandle<Result<ExitReason, MockError>>,
    dir: std::sync::Arc<TempDir>,
}

impl Stdio {
    /// Serves `text` with roomy pipes and a far deadline.
    pub fn start(text: &str) -> Self {
        Stdio::start_with(text, 1 << 20, BOUND)
    }

    /// Serves `text` with a stdin pipe of `stdin_capacity` bytes and `deadline`.
    pub fn start_with(text: &str, stdin_capacity: usize, deadline: Duration) -> Self {
        Stdio::start_in(std::sync::Arc::new(tempfile::tempdir().expect("tempdir")), text, stdin_capacity, deadline)
    }

    /// Another process of the same run (a client's respawn or its real session after a
    /// probe copy), serving `text` in this one's run directory.
    pub fn beside(&self, text: &str) -> Self {
        Stdio::start_in(self.dir.clone(), text, 1 << 20, BOUND)
    }

    fn start_in(dir: std::sync::Arc<TempDir>, text: &str, stdin_capacity: usize, deadline: Duration) -> Self {
        let scenario = scenario(text);
        let (client_stdin, mock_stdin) = tokio::io::duplex(stdin_capacity);
        let (mock_stdout, client_stdout) = tokio::io::duplex(1 << 20);
        let (mock_stderr, client_stderr) = tokio::io::duplex(1 << 20);
        let (stop, shutdown) = Shutdown::channel(Some(deadline));
        let run_dir = dir.path().to_path_buf();
        let pipes = Pipes::new(mock_stdin, mock_stdout, mock_stderr);
        let task = tokio::spawn(async move { mcp_mock::stdio::serve(&scenario, &run_dir, pipes, shutdown).await });
        Stdio {
            stdin: Some(client_stdin),
            stdout: BufReader::new(client_stdout),
            stderr: client_stderr,
            stop,
            task,
            dir,
        }
    }

    /// Writes raw bytes to the mock's stdin.
    pub async fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        bounded("stdin write", stdin.write_all(bytes)).await.expect("write stdin");
    }

    /// Writes one JSON line.
    pub async fn send(&mut self, message: Value) {
        self.write(format!("{message}\n").as_bytes()).await;
    }

    /// The next stdout line, with its line ending.
    pub async fn raw_line(&mut self) -> Vec<u8> {
        let mut line = Vec::new();
        bounded("a stdout line", self.stdout.read_until(b'\n', &mut line)).await.expect("read stdout");
        line
    }

    /// The next stdout line as JSON.
    pub async fn line(&mut self) -> Value {
        let line = self.raw_line().await;
        serde_json::from_slice(&line).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&line)))
    }

    /// Exactly `n` bytes of stdout.
    pub async fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut got = vec![0; n];
        bounded("stdout bytes", self.stdout.read_exact(&mut got)).await.expect("read stdout");
        got
    }

    /// The client side of a handshake: `initialize` (its answer is returned), `initialized`.
    pub async fn handshake(&mut self) -> Value {
        self.send(init()).await;
        let answer = self.line().await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        answer
    }

    /// The client's end of the mock's stdin, to write on it directly.
    pub fn stdin_mut(&mut self) -> &mut DuplexStream {
        self.stdin.as_mut().expect("stdin open")
    }

    /// Closes the mock's stdin (EOF).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Delivers a signal to the mock.
    pub fn signal(&self, sig: Signal) {
        self.stop.send(sig).expect("mock listening");
    }

    /// Whether the mock is still running after `wait`.
    pub async fn running_after(&mut self, wait: Duration) -> bool {
        tokio::time::sleep(wait).await;
        !self.task.is_finished()
    }

    /// Closes the mock's stdin, as a client that leaves, and waits for it to end: its record.
    pub async fn closed(mut self) -> Vec<WireEvent> {
        self.close_stdin();
        self.ended().await.1
    }

    /// Waits for the mock to end; its reason and record.
    pub async fn ended(self) -> (ExitReason, Vec<WireEvent>) {
        let (reason, mut run) = self.ended_run().await;
        (reason, run.pop().unwrap_or_default())
    }

    /// Waits for the mock to end; its reason and the run's records (every process's).
    pub async fn ended_run(self) -> (ExitReason, Vec<Vec<WireEvent>>) {
        let reason = bounded("the mock ends", self.task).await.expect("join").expect("served");
        (reason, read_run(self.dir.path()))
    }
}

/// An HTTP mock on 127.0.0.1.
pub struct Http {
    /// `http://127.0.0.1:<port>/mcp` (legacy: `/sse`).
    pub url: String,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    /// The client a test talks to the mock with (one per mock, as a real client has).
    pub client: reqwest::Client,
    stop: UnboundedSender<Signal>,
    task: JoinHandle<Result<ExitReason, MockError>>,
    dir: TempDir,
}

impl Http {
    /// Serves a Streamable HTTP (2025-11-25) scenario with this server script.
    pub async fn streamable(server: &str) -> Self {
        Http::streamable_with(server, BOUND).await
    }

    /// Serves a Streamable HTTP (2025-11-25) scenario with this server script and `deadline`.
    pub async fn streamable_with(server: &str, deadline: Duration) -> Self {
        let text = head("2025-11-25", "http") + "server:\n" + server;
        Http::start_with(Flavour::StreamableHttp, &text, deadline).await
    }

    /// Serves a Streamable HTTP (2025-11-25) scenario with this server script and runs a
    /// session's handshake: the mock, and the session id it issued.
    pub async fn in_session(server: &str) -> (Self, String) {
        let mock = Http::streamable(server).await;
        let sid = mock.handshake().await.expect("a session");
        (mock, sid)
    }

    /// Serves `text` as `flavour` with a far deadline.
    pub async fn start(flavour: Flavour, text: &str) -> Self {
        Http::start_with(flavour, text, BOUND).await
    }

    /// Serves `text` as `flavour` with `deadline`.
    pub async fn start_with(flavour: Flavour, text: &str, deadline: Duration) -> Self {
        let scenario = scenario(text);
        let dir = tempfile::tempdir().expect("tempdir");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let (stop, shutdown) = Shutdown::channel(Some(deadline));
        let server = Server::start(&scenario, dir.path(), flavour, listener).expect("start");
        let addr = format!("127.0.0.1:{}", server.port());
        let task = tokio::spawn(server.serve(shutdown));
        let client = reqwest::Client::new();
        Http { url: format!("http://{addr}{}", flavour.path()), addr, client, stop, task, dir }
    }

    /// POSTs one JSON-RPC message to [`Http::url`] (see [`post`]).
    pub async fn post(&self, session: Option<&str>, body: Value) -> reqwest::Response {
        post(&self.client, &self.url, session, body).await
    }

    /// A session's handshake; its session id, if one was issued.
    pub async fn handshake(&self) -> Option<String> {
        let r = self.post(None, init()).await;
        assert_eq!(r.status(), 200);
        let sid = r.headers().get("mcp-session-id").map(|v| v.to_str().expect("ascii").to_string());
        let r = self.post(sid.as_deref(), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert_eq!(r.status(), 202);
        sid
    }

    /// Stops the mock as the harness does (SIGTERM) and returns every connection's record.
    pub async fn stop(self) -> Vec<Vec<WireEvent>> {
        self.stop_raw().await.0
    }

    /// Stops the mock; the records and the raw text of every record file.
    pub async fn stop_raw(self) -> (Vec<Vec<WireEvent>>, String) {
        self.stop.send(Signal::SIGTERM).expect("mock listening");
        let (reason, run, text) = self.finish().await;
        assert_eq!(reason, ExitReason::code(143, "SIGTERM"));
        (run, text)
    }

    /// Waits for the mock to end by itself (an `exit` step, its deadline).
    pub async fn ended(self) -> (ExitReason, Vec<Vec<WireEvent>>) {
        let (reason, run, _) = self.finish().await;
        (reason, run)
    }

    async fn finish(self) -> (ExitReason, Vec<Vec<WireEvent>>, String) {
        let reason = bounded("the mock ends", self.task).await.expect("join").expect("served");
        let dir = self.dir.path();
        let text = (1..).map_while(|n| std::fs::read_to_string(dir.join(format!("conn-{n}.jsonl"))).ok()).collect();
        (reason, read_run(dir), text)
    }
}

/// POSTs one JSON-RPC message the way clients do.
pub async fn post(c: &reqwest::Client, url: &str, session: Option<&str>, body: Value) -> reqwest::Response {
    let mut r =
        c.post(url).header("content-type", "application/json").header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        r = r.header("mcp-session-id", s);
    }
    bounded("an answer", r.body(body.to_string()).send()).await.expect("sent")
}

/// Sends one raw HTTP/1.1 POST and reads until the server closes (bounded).
pub async fn raw_post(addr: &str, body: &str, session: Option<&str>) -> (Vec<u8>, std::io::Result<()>) {
    let mut s = raw_send(addr, body, session).await;
    let mut got = Vec::new();
    let end = bounded("the connection closes", s.read_to_end(&mut got)).await.map(|_| ());
    (got, end)
}

/// Sends one raw HTTP/1.1 POST; the connection, for reading the answer.
pub async fn raw_send(addr: &str, body: &str, session: Option<&str>) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let session = session.map(|v| format!("mcp-session-id: {v}\r\n")).unwrap_or_default();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n{session}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    s
}

/// Reads from `s` until `needle` has arrived (bounded); everything read.
pub async fn read_until(s: &mut TcpStream, needle: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains(needle) {
        let n = bounded("more bytes", s.read(&mut buf)).await.expect("read");
        assert!(n > 0, "closed before {needle:?}: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}
