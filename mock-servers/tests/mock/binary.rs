//! The process edge, through the `mcp-mock` binary: the `listening` line, SIGTERM (flushes,
//! exits 143), an `exit: {signal: …}` step really killing the process, and usage errors.

use crate::support::head;
use mcp_mock::record::read_run;
use mcp_scenario::WireEvent;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const BOUND: Duration = Duration::from_secs(10);

/// A test's scenario file and the mock's run folder beside it, in a temporary folder that
/// lasts as long as this does.
struct Scripted {
    _dir: tempfile::TempDir,
    path: PathBuf,
    run: PathBuf,
}

/// A 2025-11-25 scenario over `transport` whose server part is `server`.
fn scripted(transport: &str, server: &str) -> Scripted {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.yaml");
    std::fs::write(&path, head("2025-11-25", transport) + server).expect("write scenario");
    let run = dir.path().join("run");
    Scripted { _dir: dir, path, run }
}

fn mock(sub: &str, path: &std::path::Path, run: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-mock"));
    cmd.arg(sub).arg("--scenario").arg(path).arg("--run-dir").arg(run).kill_on_drop(true);
    cmd
}

#[tokio::test]
async fn sigterm_flushes_the_record_and_exits_143() {
    let Scripted { _dir, path, run } = scripted("http", "server:\n  - op: handshake\n");
    let mut child = mock("http", &path, &run).stdout(Stdio::piped()).spawn().expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = tokio::time::timeout(BOUND, lines.next_line()).await.expect("in time").expect("read").expect("line");
    assert!(line.starts_with("listening http://127.0.0.1:") && line.ends_with("/mcp"), "{line}");
    let pid = nix::unistd::Pid::from_raw(child.id().expect("running") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = tokio::time::timeout(BOUND, child.wait()).await.expect("exits in time").expect("wait");
    assert_eq!(status.code(), Some(143));
    let events = read_run(&run);
    assert!(events[0].iter().any(|e| matches!(e, WireEvent::Listening { .. })), "flushed: {events:?}");
}

#[tokio::test]
async fn an_exit_signal_step_kills_the_process_after_recording() {
    let Scripted { _dir, path, run } = scripted("stdio", "server:\n  - op: exit\n    signal: SIGKILL\n");
    let mut child = mock("stdio", &path, &run).stdin(Stdio::piped()).stdout(Stdio::null()).spawn().expect("spawn");
    let status = tokio::time::timeout(BOUND, child.wait()).await.expect("exits in time").expect("wait");
    assert_eq!(status.signal(), Some(9), "{status:?}");
    let events = read_run(&run);
    assert!(matches!(events[0].last(), Some(WireEvent::Exit { signal: Some(s), .. }) if s == "SIGKILL"));
}

#[tokio::test]
async fn stdin_eof_exits_0_and_an_exit_step_with_its_code() {
    for (server, code) in [("  - op: stall\n", 0), ("  - op: exit\n    code: 3\n", 3)] {
        let Scripted { _dir, path, run } = scripted("stdio", &format!("server:\n{server}"));
        let out = tokio::time::timeout(BOUND, mock("stdio", &path, &run).stdin(Stdio::null()).output())
            .await
            .expect("exits in time")
            .expect("run");
        assert_eq!(out.status.code(), Some(code));
        assert!(out.stdout.is_empty());
    }
}

/// A client whose pipes are Unix socket pairs (as Node gives its child processes) gets the
/// same stdio as one with pipes: the mock writes through the socket, and `close_stdin`
/// really closes it, so the client's next write fails. (Read on a blocking thread, as
/// tokio's `stdin()` does, the socket stayed open and took the write.)
#[tokio::test]
async fn stdio_over_socket_pairs_writes_and_really_closes_stdin() {
    use std::io::{BufRead, Write};
    use std::os::unix::net::UnixStream;
    let server = "server:\n  - op: close_stdin\n  - op: send\n    text: \"closed\\n\"\n  - op: stall\n";
    let Scripted { _dir, path, run } = scripted("stdio", server);
    let (mut to_mock, mock_stdin) = UnixStream::pair().expect("socketpair");
    let (from_mock, mock_stdout) = UnixStream::pair().expect("socketpair");
    let mut child = mock("stdio", &path, &run)
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(mock_stdin)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(mock_stdout)))
        .spawn()
        .expect("spawn");
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(from_mock).read_line(&mut line).map(|_| line)
    });
    let line = tokio::time::timeout(BOUND, line).await.expect("a line in time").expect("join").expect("read");
    assert_eq!(line, "closed\n", "the line the script sends once stdin is closed");
    let written = to_mock.write_all(b"{}\n");
    assert!(written.is_err(), "a write after close_stdin reached an open socket");
    child.kill().await.expect("kill");
}

#[tokio::test]
async fn port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let Scripted { _dir, path, run } = scripted("http", "server:\n  - op: handshake\n");
    let out = tokio::time::timeout(
        BOUND,
        Command::new(env!("CARGO_BIN_EXE_mcp-mock"))
            .args([
                "http",
                "--scenario",
                path.to_str().expect("utf8"),
                "--run-dir",
                run.to_str().expect("utf8"),
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

#[tokio::test]
async fn every_answer_a_client_saw_survives_sigkill_with_its_request() {
    let server = "server:\n  - op: reply_always\n    method: tools/call\n    result: {\"content\": []}\n  - op: handshake\n  - op: stall\n";
    let Scripted { _dir, path, run } = scripted("stdio", server);
    let mut child = mock("stdio", &path, &run).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut replies = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut lines = vec![initialize.to_string(), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into()];
    lines.extend((1..=300).map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{}}}}"#)));
    let mut seen = Vec::new();
    for line in &lines {
        tokio::io::AsyncWriteExt::write_all(&mut stdin, format!("{line}\n").as_bytes()).await.expect("write");
        if line.contains("\"id\"") {
            seen.push(
                tokio::time::timeout(BOUND, replies.next_line())
                    .await
                    .expect("in time")
                    .expect("read")
                    .expect("a reply"),
            );
        }
    }
    // Killed right after the last answer was read: nothing it had answered may be missing.
    let pid = nix::unistd::Pid::from_raw(child.id().expect("running") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("SIGKILL");
    tokio::time::timeout(BOUND, child.wait()).await.expect("exits in time").expect("wait");
    let events = read_run(&run);
    let sent: Vec<&str> = events[0]
        .iter()
        .filter_map(|e| match e {
            WireEvent::ToClient { bytes, .. } => bytes.text.as_deref().map(|t| t.trim_end()),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), seen.len(), "answers in the record vs answers the client read");
    assert!(sent == seen, "the recorded answers are the ones the client read, in order");
    let asked = events[0].iter().filter(|e| matches!(e, WireEvent::FromClient { json: Some(_), .. })).count();
    assert_eq!(asked, lines.len(), "every line the client sent before the last answer is in the record");
}
