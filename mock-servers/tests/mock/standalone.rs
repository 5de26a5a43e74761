//! The mock run by a person, through the `mcp-mock` binary: `serve <scenario>` prints its
//! URL, answers an HTTP client and stops cleanly on SIGTERM; `stdio <scenario>` takes the
//! scenario positionally; `--record FILE` keeps the snapshot rendering current and the
//! structured record beside it, so a SIGKILL loses neither; the mock's own errors reach
//! stderr. Every wait is on a printed line or the process's exit.

use crate::support::head;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, Command};

const BOUND: Duration = Duration::from_secs(10);
const LIST: &str =
    "server:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": []}\n";

fn scenario(dir: &Path, text: &str) -> PathBuf {
    // Named after the scenario (`name: t`), as the loader requires.
    let path = dir.join("t.yaml");
    std::fs::write(&path, text).expect("write scenario");
    path
}

fn mock(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-mock"));
    cmd.args(args).kill_on_drop(true);
    cmd
}

async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f).await.unwrap_or_else(|_| panic!("{what} in time"))
}

/// Reads stderr lines until one contains `needle`; returns every line read.
async fn stderr_until(lines: &mut Lines<BufReader<ChildStderr>>, needle: &str) -> Vec<String> {
    let mut seen = Vec::new();
    bounded(&format!("stderr saying {needle:?}"), async {
        while let Ok(Some(line)) = lines.next_line().await {
            let found = line.contains(needle);
            seen.push(line);
            if found {
                return;
            }
        }
        panic!("stderr ended without {needle:?}: {seen:?}");
    })
    .await;
    seen
}

fn signal(child: &Child, sig: Signal) {
    kill(Pid::from_raw(child.id().expect("running") as i32), sig).expect("signal");
}

async fn post(http: &reqwest::Client, url: &str, session: Option<&str>, body: Value) -> reqwest::Response {
    let mut req = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(s) = session {
        req = req.header("mcp-session-id", s).header("mcp-protocol-version", "2025-11-25");
    }
    bounded("a POST answer", req.send()).await.expect("POST")
}

/// `mcp-mock serve` of [`LIST`] recording to `<dir>/session.txt`, its URL read.
struct Served {
    child: Child,
    err: Lines<BufReader<ChildStderr>>,
    url: String,
    record: PathBuf,
}

async fn serve_recording(dir: &Path) -> Served {
    let path = scenario(dir, &(head("2025-11-25", "http") + LIST));
    let record = dir.join("session.txt");
    let mut child = mock(&["serve", path.to_str().expect("utf8"), "--record", record.to_str().expect("utf8")])
        .env_remove("MCP_MOCK_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let err = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = bounded("the URL line", out.next_line()).await.expect("read").expect("a line");
    Served { child, err, url, record }
}

#[tokio::test]
async fn serve_prints_its_url_answers_and_stops_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Served { mut child, mut err, url, record } = serve_recording(dir.path()).await;
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "the URL alone: {url}");

    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let answer = post(&http, &url, None, init).await;
    assert_eq!(answer.status(), 200);
    let session = answer.headers()["mcp-session-id"].to_str().expect("ascii").to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(&http, &url, Some(&session), initialized).await.status(), 202);
    let listed = post(&http, &url, Some(&session), json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    let listed: Value = bounded("the tools/list body", listed.json()).await.expect("JSON");
    assert_eq!(listed, json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}));

    // The script is over: stderr says so, and the mock still answers what it can.
    stderr_until(&mut err, "the script has run to its end (3 steps)").await;
    let ping = post(&http, &url, Some(&session), json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).await;
    let ping: Value = bounded("the ping body", ping.json()).await.expect("JSON");
    assert_eq!(ping["result"], json!({}), "{ping}");

    signal(&child, Signal::SIGTERM);
    let status = bounded("exit after SIGTERM", child.wait()).await.expect("wait");
    assert_eq!(status.code(), Some(0), "a person's SIGTERM is a normal end");

    let rendering = std::fs::read_to_string(&record).expect("the recording");
    assert!(rendering.starts_with("scenario: t · transport: http · target: host\n"), "{rendering}");
    assert!(
        rendering.contains("\"method\":\"tools/list\"") && rendering.contains("\"method\":\"ping\""),
        "{rendering}"
    );
    assert!(rendering.contains("<session-1>") && !rendering.contains(&session), "redacted: {rendering}");
    assert!(!rendering.contains(url.trim_start_matches("http://").trim_end_matches("/mcp")), "port redacted");
    let wire = dir.path().join("session.txt.wire");
    assert!(wire.join("conn-1.jsonl").is_file() && wire.join("recording.json").is_file());
}

#[tokio::test]
async fn serve_picks_the_scenarios_http_transport_or_asks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let both = scenario(dir.path(), &(head("2024-11-05", "[http, legacy-sse]") + "server:\n  - op: handshake\n"));
    let both = both.to_str().expect("utf8");
    let out = bounded("serve to refuse", mock(&["serve", both]).output()).await.expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--transport http or --transport legacy-sse"), "{err}");

    let mut child = mock(&["serve", both, "--transport", "legacy-sse"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let url = bounded("the URL line", out.next_line()).await.expect("read").expect("a line");
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/sse"), "{url}");
    signal(&child, Signal::SIGINT);
    assert_eq!(bounded("exit after Ctrl-C", child.wait()).await.expect("wait").code(), Some(0));

    let stdio = scenario(dir.path(), &(head("2025-11-25", "stdio") + "server:\n  - op: handshake\n"));
    let out = bounded("serve to refuse", mock(&["serve", stdio.to_str().expect("utf8")]).output()).await.expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mcp-mock stdio <scenario>"));
}

#[tokio::test]
async fn stdio_takes_a_positional_scenario_and_its_recording_survives_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = scenario(dir.path(), &(head("2025-11-25", "stdio") + LIST));
    let record = dir.path().join("host.txt");
    // What a host runs: the command and two arguments, no run dir, no deadline.
    let mut child = mock(&["stdio", path.to_str().expect("utf8"), "--record", record.to_str().expect("utf8")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut err = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut send = async |v: Value| stdin.write_all(format!("{v}\n").as_bytes()).await.expect("write");
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})).await;
    let reply = bounded("the initialize reply", out.next_line()).await.expect("read").expect("line");
    assert!(reply.contains("\"id\":1") && reply.contains("protocolVersion"), "{reply}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    let reply = bounded("the tools/list reply", out.next_line()).await.expect("read").expect("line");
    assert_eq!(
        serde_json::from_str::<Value>(&reply).expect("JSON"),
        json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}})
    );
    // The note comes after the rendering holding the script's events was written.
    stderr_until(&mut err, "the script has run to its end").await;
    signal(&child, Signal::SIGKILL);
    bounded("exit after SIGKILL", child.wait()).await.expect("wait");

    let rendering = std::fs::read_to_string(&record).expect("the recording");
    assert!(rendering.starts_with("scenario: t · transport: stdio · target: host\n"), "{rendering}");
    assert!(rendering.contains("→ {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"), "{rendering}");
    assert!(rendering.contains("← {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[]}}"), "{rendering}");
    let events = mcp_mock::record::read_run(&dir.path().join("host.txt.wire"));
    assert_eq!(events.len(), 1, "one connection");
}

#[tokio::test]
async fn the_mocks_own_errors_reach_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Served { mut child, mut err, url, record } = serve_recording(dir.path()).await;
    // The rendering can no longer be written where it was asked for: a directory is in the way.
    // The mock may still be rewriting the file for what it recorded while starting, so the
    // file can come back between the two calls; once the directory stands, every rewrite fails.
    let mut tries = 0;
    loop {
        std::fs::remove_file(&record).ok();
        match std::fs::create_dir(&record) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 1000 => tries += 1,
            Err(e) => panic!("mkdir {} (after {tries} rewrites by the mock): {e}", record.display()),
        }
        tokio::task::yield_now().await;
    }
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    assert_eq!(post(&reqwest::Client::new(), &url, None, init).await.status(), 200);
    let seen = stderr_until(&mut err, "cannot write the recording").await;
    let line = seen.last().expect("a line");
    assert!(line.contains("ERROR") && line.contains("Is a directory"), "{line}");
    assert!(!line.contains('\u{1b}'), "colour codes on a stderr that is no terminal: {line:?}");
    signal(&child, Signal::SIGTERM);
    bounded("exit after SIGTERM", child.wait()).await.expect("wait");
}
