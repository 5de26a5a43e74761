//! stdio (SPEC §3) end to end: real child processes (`sh` scripts) in their own process
//! groups, checked down to /proc so that no orphan or zombie survives close().

use crate::support::temp_log;
use mcp_transports::client::default_request_handler;
use mcp_transports::stdio::{CloseGrace, STDERR_TAIL_BYTES, StdioTransport};
use mcp_transports::{Handlers, RequestOptions, Transport, TransportConfig, TransportError};
use nix::unistd::Pid;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

const BOUND: Duration = Duration::from_secs(10);
const REPLY1: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"ok":true}}"#;

fn sh(script: &str) -> TransportConfig {
    TransportConfig {
        command: "sh".into(),
        args: vec!["-c".into(), script.into()],
        timeout_ms: Some(5_000),
        timeout_env_override: Some(None),
        ..TransportConfig::default()
    }
}

/// A transport (with `timeout_ms`) to a server that logs every line it reads to `log` and
/// never answers; keep the dir alive.
async fn logging_server(timeout_ms: u64) -> (tempfile::TempDir, PathBuf, Arc<StdioTransport>) {
    let (dir, log) = temp_log("in");
    let mut config = sh(&format!("while IFS= read -r l; do printf '%s\\n' \"$l\" >> '{}'; done", log.display()));
    config.timeout_ms = Some(timeout_ms);
    (dir, log, connect(&config).await)
}

/// Polls `log` (bounded) until it holds a line for which `pred` is true.
async fn wait_for_line(log: &Path, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
    timeout(BOUND, async {
        loop {
            let lines: Vec<Value> = std::fs::read_to_string(log)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            if lines.iter().any(&pred) {
                return lines;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the expected line never reached the server")
}

async fn connect(config: &TransportConfig) -> Arc<StdioTransport> {
    StdioTransport::connect(config, Handlers::default()).await.expect("spawn")
}

async fn request(t: &StdioTransport, method: &str) -> Result<Value, TransportError> {
    timeout(BOUND, t.request(method, None, RequestOptions::default())).await.expect("request hung")
}

/// Live (non-zombie) processes in process group `pgid`, from /proc.
fn live_in_group(pgid: u32) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
        .filter(|stat| {
            // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses.
            let rest: Vec<&str> =
                stat.rsplit_once(')').map(|(_, r)| r.split_whitespace().collect()).unwrap_or_default();
            rest.len() > 2 && rest[2] == pgid.to_string() && !matches!(rest[0], "Z" | "X")
        })
        .collect()
}

/// Waits (bounded) until the leader is reaped and nothing in its group is alive. Killed
/// grandchildren become zombies of init, which here may reap them late, so the group
/// itself (kill(-pgid, 0)) can outlive close() without any live process in it.
async fn assert_gone(pid: u32) {
    let leader = Pid::from_raw(pid as i32);
    timeout(BOUND, async {
        while nix::sys::signal::kill(leader, None).is_ok() || !live_in_group(pid).is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("survived close: {:?}", live_in_group(pid)));
}

#[tokio::test]
async fn round_trip_sends_params_and_settles() {
    let (_dir, log) = temp_log("in");
    let t = connect(&sh(&format!(
        "IFS= read -r l; printf '%s\\n' \"$l\" > '{}'; printf '%s\\n' '{REPLY1}'; cat >/dev/null",
        log.display()
    )))
    .await;
    assert!(t.is_connected());
    assert_eq!(request(&t, "tools/list").await.expect("reply"), json!({"ok": true}));
    let sent = std::fs::read_to_string(&log).expect("log");
    assert_eq!(sent, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{}}\n");
    let pid = t.child_pid().expect("pid");
    timeout(BOUND, t.close()).await.expect("close hung");
    assert_gone(pid).await;
    assert_eq!(t.diagnostics().protocol_violations, 0);
}

#[tokio::test]
async fn bom_crlf_and_blank_lines_are_accepted() {
    let notes = Arc::new(AtomicUsize::new(0));
    let counter = notes.clone();
    let handlers = Handlers {
        on_notification: Some(Arc::new(move |method: &str, _: &Value| {
            assert_eq!(method, "hello");
            counter.fetch_add(1, Ordering::SeqCst);
        })),
        ..Handlers::default()
    };
    // BOM + notification, blank and whitespace-only lines, then the reply; all CRLF.
    let config = sh(&format!(
        r#"IFS= read -r l; printf '\357\273\277%s\r\n\r\n\n   \r\n\t\n%s\r\n' '{{"jsonrpc":"2.0","method":"hello"}}' '{REPLY1}'; cat >/dev/null"#
    ));
    let t = StdioTransport::connect(&config, handlers).await.expect("spawn");
    assert_eq!(request(&t, "ping").await.expect("reply"), json!({"ok": true}));
    assert_eq!(notes.load(Ordering::SeqCst), 1);
    assert_eq!(t.diagnostics().protocol_violations, 0);
    t.close().await;
}

#[tokio::test]
async fn malformed_and_invalid_utf8_lines_are_dropped_and_reported() {
    let errors = Arc::new(Mutex::new(Vec::new()));
    let seen = errors.clone();
    let handlers = Handlers {
        on_error: Some(Arc::new(move |e: &TransportError| seen.lock().expect("lock").push(e.to_string()))),
        ..Handlers::default()
    };
    let config = sh(&format!(
        "IFS= read -r l; printf 'starting up...\\n\\377\\376\\n[{REPLY1}]\\n{{\"id\":1}}\\n%s\\n' '{REPLY1}'; cat >/dev/null"
    ));
    let t = StdioTransport::connect(&config, handlers).await.expect("spawn");
    assert_eq!(request(&t, "tools/list").await.expect("reply"), json!({"ok": true}));
    assert_eq!(t.diagnostics().protocol_violations, 4);
    let errors = errors.lock().expect("lock").clone();
    assert!(errors[0].starts_with("Protocol error: line is not JSON"), "{errors:?}");
    assert!(errors[1].starts_with("Protocol error: line is not valid UTF-8"), "{errors:?}");
    assert!(errors[2].contains("batch"), "{errors:?}");
    assert!(t.is_connected());
    t.close().await;
}

#[tokio::test]
async fn oversize_line_is_dropped_and_the_next_message_delivered() {
    let mut config = sh(&format!(
        "IFS= read -r l; head -c 200000 /dev/zero | tr '\\0' x; printf '\\n%s\\n' '{REPLY1}'; cat >/dev/null"
    ));
    config.max_message_bytes = Some(64);
    let t = connect(&config).await;
    assert_eq!(request(&t, "tools/list").await.expect("reply"), json!({"ok": true}));
    let d = t.diagnostics();
    assert_eq!((d.oversize_dropped, d.protocol_violations), (1, 0));
    t.close().await;
}

#[tokio::test]
async fn unknown_and_string_ids_are_dropped() {
    let t = connect(&sh(&format!(
        r#"IFS= read -r l; printf '%s\n' '{{"jsonrpc":"2.0","id":"1","result":{{}}}}' '{{"jsonrpc":"2.0","id":99,"result":{{}}}}' '{REPLY1}'; cat >/dev/null"#
    )))
    .await;
    assert_eq!(request(&t, "tools/list").await.expect("reply"), json!({"ok": true}));
    assert_eq!(t.diagnostics().unknown_responses, 2);
    t.close().await;
}

#[tokio::test]
async fn server_requests_are_answered() {
    let (_dir, log) = temp_log("answers");
    let config = sh(&format!(
        r#"IFS= read -r l; printf '%s\n' '{{"jsonrpc":"2.0","id":"s1","method":"ping"}}' '{{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{{}}}}'
               IFS= read -r a; IFS= read -r b; printf '%s\n%s\n' "$a" "$b" > '{}'; printf '%s\n' '{REPLY1}'; cat >/dev/null"#,
        log.display()
    ));
    let handlers = Handlers { on_request: Some(default_request_handler(vec![])), ..Handlers::default() };
    let t = StdioTransport::connect(&config, handlers).await.expect("spawn");
    assert_eq!(request(&t, "tools/list").await.expect("reply"), json!({"ok": true}));
    let answers: Vec<Value> = std::fs::read_to_string(&log)
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("answer is JSON"))
        .collect();
    assert!(answers.contains(&json!({"jsonrpc":"2.0","id":"s1","result":{}})), "{answers:?}");
    let unknown = answers.iter().find(|a| a["id"] == json!(7)).expect("answer to id 7");
    assert_eq!(unknown["error"]["code"], json!(-32601));
    t.close().await;
}

#[tokio::test]
async fn server_request_without_handler_gets_method_not_found() {
    let (_dir, log) = temp_log("answers");
    let t = connect(&sh(&format!(
        r#"printf '%s\n' '{{"jsonrpc":"2.0","id":1,"method":"ping"}}'; IFS= read -r a; printf '%s\n' "$a" > '{}.tmp'; mv '{0}.tmp' '{0}'; cat >/dev/null"#,
        log.display()
    )))
    .await;
    let lines = wait_for_line(&log, |v| v["id"] == json!(1)).await;
    assert_eq!(lines[0]["error"]["code"], json!(-32601));
    t.close().await;
}

#[tokio::test]
async fn timeout_rejects_with_exact_text_and_tells_the_server() {
    let (_dir, log, t) = logging_server(100).await;
    let started = Instant::now();
    let err = request(&t, "tools/call").await.expect_err("must time out");
    assert_eq!(err.to_string(), "Request timeout after 100ms");
    assert!(started.elapsed() >= Duration::from_millis(100));
    let lines = wait_for_line(&log, |v| v["method"] == "notifications/cancelled").await;
    let note = lines.iter().find(|v| v["method"] == "notifications/cancelled").expect("note");
    assert_eq!(note["params"]["requestId"], json!(1));
    assert_eq!(note["params"]["reason"], json!("Request timeout after 100ms"));
    assert_eq!(t.diagnostics().late_responses, 0);
    t.close().await;
}

#[tokio::test]
async fn initialize_timeout_sends_no_cancellation() {
    let (_dir, log, t) = logging_server(50).await;
    request(&t, "initialize").await.expect_err("must time out");
    t.notify("marker", None).await.expect("notify");
    let lines = wait_for_line(&log, |v| v["method"] == "marker").await;
    assert!(lines.iter().all(|v| v["method"] != "notifications/cancelled"), "{lines:?}");
    t.close().await;
}

#[tokio::test]
async fn env_override_beats_configured_timeout() {
    let mut config = sh("cat >/dev/null");
    config.timeout_ms = Some(60_000);
    config.timeout_env_override = Some(Some("50".into()));
    let t = connect(&config).await;
    let err = request(&t, "tools/list").await.expect_err("must time out");
    assert_eq!(err.to_string(), "Request timeout after 50ms");
    t.close().await;
}

#[tokio::test]
async fn late_response_is_counted_not_delivered() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let handlers = Handlers {
        on_error: Some(Arc::new(move |e: &TransportError| {
            let _ = tx.send(e.to_string());
        })),
        ..Handlers::default()
    };
    // Replies only after reading the cancellation.
    let mut config = sh(&format!("IFS= read -r l; IFS= read -r cancel; printf '%s\\n' '{REPLY1}'; cat >/dev/null"));
    config.timeout_ms = Some(50);
    let t = StdioTransport::connect(&config, handlers).await.expect("spawn");
    request(&t, "tools/list").await.expect_err("must time out");
    let report = timeout(BOUND, rx.recv()).await.expect("late response never reported").expect("sender");
    assert_eq!(report, "Protocol error: late response for abandoned request 1");
    let d = t.diagnostics();
    assert_eq!((d.late_responses, d.unknown_responses), (1, 0));
    t.close().await;
}

#[tokio::test]
async fn a_server_that_stops_reading_blocks_writes_but_not_timeouts() {
    let mut config = sh("sleep 30");
    config.timeout_ms = Some(100);
    let grace = CloseGrace { after_stdin: Duration::from_millis(50), after_term: Duration::from_millis(50) };
    let t = StdioTransport::connect_with(&config, Handlers::default(), grace).await.expect("spawn");
    // Far more than a pipe buffer: the write blocks part-way.
    let big = json!({"blob": "x".repeat(1 << 20)});
    let err = timeout(BOUND, t.request("tools/call", Some(big), RequestOptions::default()))
        .await
        .expect("request hung")
        .expect_err("must time out");
    assert!(matches!(err, TransportError::Timeout { ms: 100, sent: true }), "{err:?}");
    // Queued behind the stuck line, so never sent: safe to retry.
    let err = timeout(BOUND, t.notify("x", None)).await.expect("notify hung").expect_err("must time out");
    assert!(matches!(err, TransportError::Timeout { ms: 100, sent: false }), "{err:?}");
    let pid = t.child_pid().expect("pid");
    timeout(BOUND, t.close()).await.expect("close hung");
    assert_gone(pid).await;
}

/// A line the pipe takes only part of at once, and the lines sent after it while the pipe
/// is full, reach the server whole and in the order they were sent.
#[tokio::test]
async fn lines_sent_while_the_pipe_is_full_arrive_whole_and_in_order() {
    let (dir, log) = temp_log("in");
    let gate = dir.path().join("gate");
    assert!(std::process::Command::new("mkfifo").arg(&gate).status().expect("mkfifo").success());
    // The server reads nothing until the gate opens, then logs every line.
    let t = connect(&sh(&format!(
        "read -r _ < '{}'; while IFS= read -r l; do printf '%s\\n' \"$l\" >> '{}'; done",
        gate.display(),
        log.display()
    )))
    .await;
    // Once a line is written the runtime knows the pipe is writable, so the next one's
    // first write goes out at once: past the 64 KiB a pipe holds, it takes part of it.
    timeout(BOUND, t.notify("warm", None)).await.expect("notify hung").expect("written");
    let blob = "x".repeat(100 * 1024);
    let mut call = Box::pin(t.request("tools/call", Some(json!({"blob": blob})), RequestOptions::default()));
    assert!(futures::poll!(&mut call).is_pending());
    let names = ["n0", "n1", "n2", "n3", "n4"];
    let mut notes = Vec::new();
    for name in names {
        let mut note = Box::pin(t.notify(name, None));
        assert!(futures::poll!(&mut note).is_pending(), "{name} went out with the pipe full");
        notes.push(note);
    }
    tokio::task::spawn_blocking(move || std::fs::write(gate, "go\n")).await.expect("join").expect("open the gate");
    for note in notes {
        timeout(BOUND, note).await.expect("notify hung").expect("written");
    }
    let lines = wait_for_line(&log, |v| v["method"] == "n4").await;
    let methods: Vec<&str> = lines.iter().filter_map(|v| v["method"].as_str()).collect();
    assert_eq!(methods, ["warm", "tools/call", "n0", "n1", "n2", "n3", "n4"]);
    assert_eq!(lines[1]["params"]["blob"].as_str().map(str::len), Some(100 * 1024));
    drop(call);
    t.close().await;
}

#[tokio::test]
async fn caller_cancellation_rejects_and_tells_the_server() {
    let (_dir, log, t) = logging_server(5_000).await;
    let token = CancellationToken::new();
    let options = RequestOptions { timeout_ms: None, cancel: Some(token.clone()), ..RequestOptions::default() };
    let call = {
        let t = t.clone();
        tokio::spawn(async move { t.request("tools/call", None, options).await })
    };
    wait_for_line(&log, |v| v["method"] == "tools/call").await;
    token.cancel();
    let err = timeout(BOUND, call).await.expect("cancel hung").expect("join").expect_err("cancelled");
    assert!(matches!(err, TransportError::Cancelled { .. }), "{err}");
    let lines = wait_for_line(&log, |v| v["method"] == "notifications/cancelled").await;
    let note = lines.iter().find(|v| v["method"] == "notifications/cancelled").expect("note");
    assert_eq!(note["params"]["requestId"], json!(1));
    t.close().await;
}

#[tokio::test]
async fn a_dropped_request_is_given_up_like_a_cancelled_one() {
    let (_dir, log, t) = logging_server(5_000).await;
    let call = {
        let t = t.clone();
        tokio::spawn(async move { t.request("tools/call", None, RequestOptions::default()).await })
    };
    wait_for_line(&log, |v| v["method"] == "tools/call").await;
    // The caller's own timeout or select! drops the future where it waits.
    call.abort();
    let lines = wait_for_line(&log, |v| v["method"] == "notifications/cancelled").await;
    let note = lines.iter().find(|v| v["method"] == "notifications/cancelled").expect("note");
    assert_eq!(note["params"]["requestId"], json!(1));
    assert_eq!(note["params"]["reason"], json!("request abandoned by the caller"));
    t.close().await;
}

#[tokio::test]
async fn child_exit_rejects_pending_and_later_calls_fail_fast() {
    let closes = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = oneshot::channel();
    let tx = Mutex::new(Some(tx));
    let counter = closes.clone();
    let handlers = Handlers {
        on_close: Some(Arc::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            if let Some(tx) = tx.lock().expect("lock").take() {
                let _ = tx.send(());
            }
        })),
        ..Handlers::default()
    };
    let t = StdioTransport::connect(&sh("IFS= read -r l; exit 3"), handlers).await.expect("spawn");
    let err = request(&t, "tools/list").await.expect_err("must fail");
    assert_eq!(err.to_string(), "Transport closed");
    timeout(BOUND, rx).await.expect("on_close never fired").expect("sender");
    assert!(!t.is_connected());
    assert_eq!(t.notify("x", None).await.expect_err("closed").to_string(), "Transport not connected");
    assert_eq!(request(&t, "x").await.expect_err("closed").to_string(), "Transport not connected");
    timeout(BOUND, async {
        while t.child_pid().is_some() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("child never reaped");
    t.close().await;
    assert_eq!(closes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn write_failure_is_returned_not_swallowed() {
    let (tx, rx) = oneshot::channel();
    let tx = Mutex::new(Some(tx));
    let handlers = Handlers {
        on_notification: Some(Arc::new(move |_: &str, _: &Value| {
            if let Some(tx) = tx.lock().expect("lock").take() {
                let _ = tx.send(());
            }
        })),
        ..Handlers::default()
    };
    // The server closes its stdin, says so, then lingers with stdout open.
    let config = sh(r#"exec 0<&-; printf '%s\n' '{"jsonrpc":"2.0","method":"ready"}'; sleep 5"#);
    let t = StdioTransport::connect(&config, handlers).await.expect("spawn");
    timeout(BOUND, rx).await.expect("ready never came").expect("sender");
    let err = request(&t, "tools/list").await.expect_err("EPIPE");
    assert!(matches!(err, TransportError::Write { .. }), "{err}");
    let err = timeout(BOUND, t.notify("x", None)).await.expect("notify hung").expect_err("EPIPE");
    assert!(matches!(err, TransportError::Write { .. }), "{err}");
    t.close().await;
}

#[tokio::test]
async fn close_escalates_to_sigkill_and_leaves_no_process() {
    let closes = Arc::new(AtomicUsize::new(0));
    let counter = closes.clone();
    let (ready_tx, ready) = oneshot::channel();
    let ready_tx = Mutex::new(Some(ready_tx));
    let handlers = Handlers {
        on_close: Some(Arc::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        })),
        on_notification: Some(Arc::new(move |_: &str, _: &Value| {
            if let Some(tx) = ready_tx.lock().expect("lock").take() {
                let _ = tx.send(());
            }
        })),
        ..Handlers::default()
    };
    // Ignores SIGTERM (so do its sleeps, which inherit that), never reads stdin, and
    // leaves a grandchild in its group.
    let config = sh(
        r#"trap '' TERM; sleep 30 & printf '%s\n' '{"jsonrpc":"2.0","method":"ready"}'; while :; do sleep 0.05; done"#,
    );
    let t = StdioTransport::connect(&config, handlers).await.expect("spawn");
    let pid = t.child_pid().expect("pid");
    let pending = {
        let t = t.clone();
        tokio::spawn(async move { t.request("tools/list", None, RequestOptions::default()).await })
    };
    timeout(BOUND, ready).await.expect("ready never came").expect("sender");
    assert!(live_in_group(pid).len() >= 2, "the grandchild should be running");
    let started = Instant::now();
    timeout(BOUND, t.close()).await.expect("close unbounded");
    let took = started.elapsed();
    // Both waits ran (stdin close, then SIGTERM) before the SIGKILL; the BOUND above tells
    // that kill from a close that never ends (the server loops forever), however loaded the
    // machine is.
    assert!(took >= Duration::from_millis(1_900), "close took {took:?}");
    // The leader is ours to reap: gone the moment close() returns.
    assert_eq!(nix::sys::signal::kill(Pid::from_raw(pid as i32), None), Err(nix::errno::Errno::ESRCH));
    assert_gone(pid).await;
    let err = timeout(BOUND, pending).await.expect("pending hung").expect("join").expect_err("closed");
    assert_eq!(err.to_string(), "Transport closed");
    // Idempotent and immediate the second time.
    timeout(Duration::from_millis(100), t.close()).await.expect("second close waited");
    assert_eq!(closes.load(Ordering::SeqCst), 1);
    assert!(t.child_pid().is_none());
}

#[tokio::test]
async fn close_of_a_well_behaved_server_is_quick() {
    // Waits long enough that a close which sat out the first one could not pass on a loaded
    // machine by luck: a server that exits at stdin EOF is reaped without waiting at all.
    let grace = CloseGrace { after_stdin: Duration::from_secs(60), after_term: Duration::from_secs(60) };
    let t = StdioTransport::connect_with(&sh("cat >/dev/null; echo bye >&2"), Handlers::default(), grace)
        .await
        .expect("spawn");
    let pid = t.child_pid().expect("pid");
    let started = Instant::now();
    timeout(BOUND, t.close()).await.expect("close waited out its grace");
    assert!(started.elapsed() < BOUND);
    assert_gone(pid).await;
}

#[tokio::test]
async fn stderr_tail_is_captured_and_bounded() {
    let t =
        connect(&sh("head -c 100000 /dev/zero | tr '\\0' e >&2; printf 'last words' >&2; exec 2>&-; cat >/dev/null"))
            .await;
    timeout(BOUND, async {
        while !t.diagnostics().stderr_tail.ends_with("last words") {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("stderr never captured");
    assert_eq!(t.diagnostics().stderr_tail.len(), STDERR_TAIL_BYTES);
    assert!(t.is_connected(), "stderr output is not an error signal");
    t.close().await;
}

#[tokio::test]
async fn spawn_failure_says_what_to_do() {
    let config = TransportConfig { command: "/nonexistent/mcp-server".into(), ..TransportConfig::default() };
    let err = StdioTransport::connect(&config, Handlers::default()).await.err().expect("must fail");
    assert!(matches!(err, TransportError::Spawn { .. }));
    assert!(err.to_string().contains("PATH"), "{err}");
}
