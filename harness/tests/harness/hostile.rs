//! Hostile external clients (issue 13, item 7): a client that hangs, leaves a process
//! outside its group holding its pipes, floods a pipe with 1 GiB, crashes, or exits before
//! connecting to the mock is reported for what it did, with what to do about it, within
//! its run deadline + 1 s, and nothing it started is left running. Each fake client is a
//! small sh script exporting its folder (`HOSTILE_MARK`), so whatever it started is found
//! by the environment it inherited. No test sleeps: a fake client that must wait for its
//! grandchild blocks on a fifo, and each test waits on the run itself, bounded by its own
//! deadline.

use super::external::{bound, left_after_kill, run_fake, run_fake_with, scenario_yaml};
use mcp_harness::targets::cmd;
use mcp_results::{Pipe, ProcessEnd, RunResult, Status};
use mcp_scenario::basis::Level;

/// The two step lines of [`scenario_yaml`]'s plan, reported ok.
const STEPS: &str = "echo '{\"step\":1,\"ok\":true}'\necho '{\"step\":2,\"ok\":true,\"result\":{\"tools\":[]}}'";

/// A fresh folder whose path marks every process of one fake client.
fn marked_dir(name: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::Builder::new().prefix(&format!("mcp-hostile-{name}-")).tempdir().expect("tempdir");
    let marker = dir.path().display().to_string();
    (dir, marker)
}

/// `body` prefixed with the export that marks everything the client starts.
fn marked(body: &str) -> String {
    format!("export HOSTILE_MARK=\"$(dirname \"$0\")\"\n{body}")
}

/// The message of the first failure whose check names `check`, or "".
/// The message of `check`'s finding: a failure, or a warning (a crash, a hang, processes left
/// behind are robustness findings, warnings for a third-party client).
fn failure<'a>(result: &'a RunResult, check: &str) -> &'a str {
    let all = result.failures.iter().chain(&result.warnings);
    all.into_iter().find(|f| f.check.contains(check)).map(|f| f.message.as_str()).unwrap_or_default()
}

/// Starts `sh -c '<inner> & …; wait'` in a session of its own with `redirect`, and waits (on
/// a fifo, no sleep) until it has left the client's group and forked `<inner>`: two
/// processes outside the group when the client exits, whatever the scheduler does next.
fn escape(inner: &str, redirect: &str) -> String {
    format!(
        "f=\"$(dirname \"$0\")/ready\"; mkfifo \"$f\"\nsetsid sh -c '{inner} & echo > \"$1\"; wait' \"$0\" \"$f\" {redirect} &\nread _ < \"$f\""
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_client_is_killed_at_the_deadline_with_what_it_left_outside_its_group() {
    let (dir, marker) = marked_dir("hang");
    let body =
        marked(&format!("{}\necho '{{\"step\":1,\"ok\":true}}'\nsh -c 'sleep 71; :' \"$0\"", escape("sleep 70", "")));
    let (result, took) = run_fake(dir.path(), "hang.sh", &body).await;
    assert!(took < bound(), "took {took:?}, bound {:?}", bound());
    let client = result.client.as_ref().expect("process report");
    assert_eq!(client.end, ProcessEnd::KilledAtDeadline, "{client:?}");
    let hang = result.warnings.iter().find(|f| f.check.contains("finishes before the deadline"));
    let hang = hang.map(|h| h.message.as_str()).unwrap_or_default();
    assert!(
        hang.contains("the client reported 1 of 2 plan steps, then nothing until the harness killed its whole process group at step 2 (request tools/list): give every request the plan makes a bound shorter than the scenario's deadline")
            && hang.contains("raise MCP_HARNESS_STARTUP_MS"),
        "{hang}"
    );
    let left = failure(&result, "client process ends cleanly");
    assert!(
        left.starts_with("client killed at the run deadline (whole process group) but left 2 process(es) running outside its process group")
            && left.contains("`sleep 70` (holding the client's stdout and stderr open)"),
        "{:?}",
        result.failures
    );
    let alive = left_after_kill(&marker).await;
    assert!(alive.is_empty(), "processes left running: {alive:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_left_the_group_is_reported_and_killed_however_it_hides() {
    for (name, redirect, how) in [
        ("holding-both", "", "holding the client's stdout and stderr open"),
        ("holding-stderr", ">/dev/null", "holding the client's stderr open"),
        ("detached", ">/dev/null 2>&1", "found by MCP_HARNESS_RUN_DIR in its environment"),
    ] {
        let (dir, marker) = marked_dir(name);
        let body = marked(&format!("{}\n{STEPS}\nexit 0", escape("sleep 72", redirect)));
        let (result, took) = run_fake(dir.path(), &format!("{name}.sh"), &body).await;
        assert!(took < bound(), "{name}: took {took:?}");
        assert_eq!(result.status, Status::Failed, "{name}");
        let left = failure(&result, "client process ends cleanly");
        assert!(
            left.starts_with("client exited 0 but left 2 process(es) running outside its process group")
                // The forked escapee may not have exec'd `sleep` yet when it is found.
                && left.contains("sleep 72")
                && left.contains(&format!("` ({how})"))
                && left.ends_with("a client ends what it started before it exits"),
            "{name}: {:?}",
            result.failures
        );
        let escaped = &result.client.as_ref().expect("process report").escaped;
        assert_eq!(escaped.len(), 2, "{name}: {escaped:?}");
        let alive = left_after_kill(&marker).await;
        assert!(alive.is_empty(), "{name}: processes left running: {alive:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gibibyte_on_either_pipe_is_cut_off_at_its_cap_keeping_only_a_tail() {
    let gib = "head -c 1073741824 /dev/zero";
    for (pipe, redirect, cap, advice) in [
        (
            Pipe::Stdout,
            "",
            cmd::STDOUT_CAP,
            "only contract lines belong on stdout (clients/README.md): send logs to stderr",
        ),
        (
            Pipe::Stderr,
            ">&2",
            cmd::STDERR_CAP,
            "bytes to stderr, far more than any log (the last 4096 kept, the rest dropped)",
        ),
    ] {
        let (dir, marker) = marked_dir("flood");
        let (result, took) = run_fake(dir.path(), "flood.sh", &marked(&format!("{gib} {redirect}\n{STEPS}"))).await;
        assert!(took < bound(), "{pipe}: took {took:?}");
        let client = result.client.as_ref().expect("process report");
        assert_eq!(client.end, ProcessEnd::KilledForFlooding { cap, pipe }, "{client:?}");
        // Reading stops within a chunk of the cap; of stderr only the tail is held.
        assert!(client.stdout_bytes <= cmd::STDOUT_CAP + 64 * 1024, "{}", client.stdout_bytes);
        assert!(client.stderr_bytes <= cmd::STDERR_CAP + 64 * 1024, "{}", client.stderr_bytes);
        assert!(client.stderr_tail.len() <= cmd::STDERR_TAIL, "{}", client.stderr_tail.len());
        let message = failure(&result, "client process ends cleanly");
        assert!(
            message.starts_with(&format!("client killed for flooding {pipe} past {cap} bytes (whole process group)"))
                && message.contains(advice),
            "{pipe}: {message}"
        );
        assert!(left_after_kill(&marker).await.is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_stderr_line_of_a_long_log_is_its_real_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 2 MiB of log, past the 1 MiB the report once kept from its start, then the line
    // that explains the crash.
    let body = "yes 'log line' | head -n 233017 >&2\necho 'fatal: the real reason' >&2\nexit 1";
    let (result, _) = run_fake(dir.path(), "log.sh", body).await;
    let client = result.client.as_ref().expect("process report");
    assert_eq!(client.stderr_bytes, 9 * 233017 + 23);
    assert!(client.stderr_tail.ends_with("fatal: the real reason\n"), "{:?}", &client.stderr_tail);
    let message = failure(&result, "ends cleanly");
    assert!(message.ends_with("; last stderr line: fatal: the real reason"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_says_how_far_the_client_got_and_what_to_do() {
    for (name, end, what, advice) in [
        ("exit3", "exit 3", "client exited 3", "a non-zero exit means the driver or its SDK broke"),
        (
            "segv",
            "kill -SEGV $$",
            "client killed by SIGSEGV",
            "the harness sent it no signal: the driver or its SDK crashed",
        ),
        ("abort", "kill -ABRT $$", "client killed by SIGABRT", "the harness sent it no signal"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let body = format!("echo '{{\"step\":1,\"ok\":true}}'\necho 'going down' >&2\n{end}");
        let (result, took) = run_fake(dir.path(), &format!("{name}.sh"), &body).await;
        assert!(took < bound(), "{name}: took {took:?}");
        assert_eq!(result.status, Status::Failed, "{name}");
        let message = failure(&result, "client process ends cleanly");
        assert!(
            message.starts_with(&format!(
                "{what} after reporting 1 of 2 plan steps; step 2 (request tools/list) got no line: {advice}"
            )) && message.ends_with("; last stderr line: going down"),
            "{name}: {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reaches_the_mock_is_told_so() {
    let http = scenario_yaml().replace("transport: stdio", "transport: http");
    for (name, body, yaml, script, process) in [
        (
            "silent-stdio",
            "exit 0",
            format!(
                "{}checks:\n  - sent: {{method: initialize}}\n    must: \"2025-11-25 basic/lifecycle: The initialization phase MUST be the first interaction between client and server\"\n",
                scenario_yaml()
            ),
            "the mock's script never ran: the client never started the mock (MCP_HARNESS_SERVER_COMMAND); a driver makes its SDK spawn exactly that command",
            "client exited 0 after reporting 0 of 2 plan steps; step 1 (connect) got no line: a driver prints one line per plan step (or stops at an unsupported one) before it exits",
        ),
        (
            "claims-stdio",
            STEPS,
            scenario_yaml(),
            "the mock's script never ran: the client never started the mock (MCP_HARNESS_SERVER_COMMAND), yet it reported 2 plan step(s) ok: those results came from no server",
            "",
        ),
        (
            "claims-http",
            STEPS,
            http,
            "connection 1: the mock's script stopped at step 1 of 3 (handshake): the client never connected: no request reached the mock, yet it reported 2 plan step(s) ok: those results came from no server; a driver connects to the URL given as its last argument",
            "",
        ),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let (result, took) = run_fake_with(dir.path(), &format!("{name}.sh"), body, &yaml).await;
        assert!(took < bound(), "{name}: took {took:?}");
        if name == "silent-stdio" {
            // Silent and claiming nothing: it never met the fault, a finding neither way.
            assert_eq!(result.status, Status::NotExercised, "{name}");
            let reason = result.reason.as_deref().unwrap_or_default();
            assert!(reason.starts_with("the client never connected"), "{name}: {reason}");
        } else {
            // Results from no server break the driver contract.
            assert_eq!(result.status, Status::Failed, "{name}");
            let claimed = result.failures.iter().find(|f| f.check.contains("server script completes"));
            assert!(
                claimed.is_some_and(|f| f.level == Level::Driver && f.message.starts_with(script)),
                "{name}: {:?}",
                result.failures
            );
        }
        // A client that reported every step and exited 0 ended its process cleanly.
        let ended = failure(&result, "client process ends cleanly");
        assert!(if process.is_empty() { ended.is_empty() } else { ended.starts_with(process) }, "{name}: {ended}");
    }
}
