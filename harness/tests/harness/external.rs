//! The `cmd:` target's process hygiene, with fake clients written as small sh scripts: a
//! client that hangs while a grandchild holds its stdout is killed at the deadline with its
//! whole process group; a flooding client is cut off; crashes and signal deaths are reported
//! as such; an unsupported op skips the run. No test sleeps: each waits on the run itself,
//! whose own deadline bounds it.

use mcp_harness::Target;
use mcp_harness::runner::{self, RunConfig};
use mcp_harness::targets::cmd;
use mcp_results::StepStatus;
use mcp_results::{RunResult, SnapshotStatus, Status};
use mcp_scenario::basis::Level;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) const DEADLINE_MS: u64 = 1000;

pub(crate) fn scenario_yaml() -> String {
    format!(
        "name: fake-client\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\ndeadline_ms: {DEADLINE_MS}\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {{\"tools\": []}}\n"
    )
}

/// Writes `body` as an executable sh script in `dir` and runs the scenario against it.
pub(crate) async fn run_fake(dir: &Path, name: &str, body: &str) -> (RunResult, Duration) {
    run_fake_with(dir, name, body, &scenario_yaml()).await
}

/// [`run_fake`] with a scenario of its own.
pub(crate) async fn run_fake_with(dir: &Path, name: &str, body: &str, yaml: &str) -> (RunResult, Duration) {
    run_fake_config(dir, name, body, yaml, false).await
}

/// [`run_fake_with`], comparing (and writing) snapshots when `snapshots` is set.
async fn run_fake_config(dir: &Path, name: &str, body: &str, yaml: &str, snapshots: bool) -> (RunResult, Duration) {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join(name);
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let scenario_path = dir.join("fake-client.yaml");
    std::fs::write(&scenario_path, yaml).expect("write scenario");
    let scenario = mcp_harness::load(&scenario_path).expect("loads");
    let config = RunConfig {
        compare_snapshots: snapshots,
        ..RunConfig::new(Target::cmd(script.display().to_string()), mock_command())
    };
    let job = runner::jobs(vec![(scenario_path, scenario)], &config.target).remove(0);
    let started = Instant::now();
    let result = runner::run_one(&job, &Arc::new(config)).await;
    (result, started.elapsed())
}

/// This build's mock, as a run starts it.
fn mock_command() -> Vec<String> {
    vec![env!("CARGO_BIN_EXE_mcp-harness").to_string(), "mock".into()]
}

/// Processes (not zombies: those have an empty command line and environment) whose command
/// line or environment mentions `needle` (a fake client exports it to all it starts).
pub(crate) fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if text.contains(needle) || String::from_utf8_lossy(&environ).contains(needle) {
            found.push(format!("{} {text}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// Processes mentioning `marker` once the ones the harness killed are gone. SIGKILL is sent
/// before the run returns, but a killed grandchild (not ours to wait for) leaves /proc a
/// moment later; its disappearance has no event to wait on, so look again until it is gone,
/// within a bound.
pub(crate) async fn left_after_kill(marker: &str) -> Vec<String> {
    let gone_by = Instant::now() + Duration::from_secs(2);
    let mut left = processes_mentioning(marker);
    while !left.is_empty() && Instant::now() < gone_by {
        tokio::task::yield_now().await;
        left = processes_mentioning(marker);
    }
    left
}

/// Every finding of a run: its failures, then its warnings (a crash, a hang, a flood, processes
/// left behind are robustness findings, warnings for a third-party client).
fn findings(result: &RunResult) -> impl Iterator<Item = &mcp_results::CheckResult> {
    result.failures.iter().chain(&result.warnings)
}

/// How long a run of a fake client that hangs or leaves processes behind may take: far less
/// than the shortest `sleep` those clients start (60 s), so a run under it ended by the
/// harness's kill, not by the client. Not a speed target (those live in `make bench`): a
/// loaded machine may take several times the deadline plus the start-up allowance, and the
/// test must still pass.
pub(crate) fn bound() -> Duration {
    Duration::from_secs(30)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hanging_client_with_grandchild_holding_stdout_is_a_timeout_and_leaves_nothing() {
    let dir = tempfile::Builder::new().prefix("mcp-hang-marker-").tempdir().expect("tempdir");
    let marker = dir.path().display().to_string();
    // The grandchild inherits stdout and names the script ($0, which contains the marker).
    let body = "sh -c 'sleep 60; :' \"$0\" &\necho '{\"step\":1,\"ok\":true}'\nsh -c 'sleep 61; :' \"$0\"";
    let (result, took) = run_fake(dir.path(), "hang.sh", body).await;
    assert!(took < bound(), "took {took:?}, bound {:?}", bound());
    assert!(result.transcript.contains("client killed at the run deadline"), "{}", result.transcript);
    // How long it waited for a CPU was read before the kill (a starved client's hang is the
    // machine's, and re-run).
    let client = result.client.as_ref().expect("a process report");
    assert!(client.cpu_wait_ms.is_some(), "{client:?}");
    // A hang is the timeouts SHOULD (a warning for a third party); the checks it leaves
    // unjudged fail on their own, and this scenario has none.
    let hang = result.warnings.iter().find(|f| f.check.contains("finishes before the deadline"));
    assert!(hang.is_some_and(|h| h.level == Level::Should), "{:?}", result.warnings);
    // The message shows the deadline arithmetic beside the step's "run deadline of …ms".
    let total = DEADLINE_MS + Target::cmd("x").startup_allowance().as_millis() as u64;
    let expected = format!(
        "the client plan did not finish within the run deadline of {total}ms (the scenario's `deadline_ms` {DEADLINE_MS}ms, default 3000, + {}ms start-up allowance for an external client's runtime: 3× its measured start-up, at least 2000, or MCP_HARNESS_STARTUP_MS)",
        total - DEADLINE_MS
    );
    let message = hang.map(|h| h.message.as_str()).unwrap_or_default();
    assert!(message.starts_with(&expected), "{message}");
    // The step says the scenario's part only: the allowance is measured, so it varies.
    assert_eq!(
        result.steps[1].error.as_deref(),
        Some(format!("run deadline of {DEADLINE_MS}ms + the start-up allowance expired").as_str())
    );
    assert_eq!(result.steps[0].status, StepStatus::Ok);
    assert_eq!(result.steps[1].status, StepStatus::NotRun);
    assert!(result.steps[1].error.as_deref().unwrap_or("").contains("deadline"), "{:?}", result.steps[1]);
    let left = processes_mentioning(&marker);
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_exits_leaving_processes_behind_fails_and_names_them() {
    let steps = "echo '{\"step\":1,\"ok\":true}'\necho '{\"step\":2,\"ok\":true,\"result\":{\"tools\":[]}}'";
    // One leftover lets go of the pipes, the other holds stdout (the harness waits out its drain).
    // The leftovers name the script ($0, inside this test's own temporary folder), so the
    // search below cannot mistake another test's processes for them.
    for (name, spawn) in
        [("detached", "sh -c 'sleep 62; :' \"$0\" >/dev/null 2>&1 &"), ("holding", "sh -c 'sleep 63; :' \"$0\" &")]
    {
        let dir = tempfile::Builder::new().prefix("mcp-leftover-").tempdir().expect("tempdir");
        let marker = dir.path().display().to_string();
        let body = format!("{spawn}\n{steps}\nexit 0");
        let (result, took) = run_fake(dir.path(), &format!("{name}.sh"), &body).await;
        assert!(took < bound(), "{name}: took {took:?}");
        let failure = findings(&result).find(|f| f.check.contains("client process ends cleanly"));
        assert!(failure.is_some_and(|f| f.level == Level::Robustness), "{name}: {failure:?}");
        let message = failure.map(|f| f.message.as_str()).unwrap_or_default();
        assert!(
            // The `sh` wrapper, and its `sleep` once it has forked it.
            message.contains("process(es) behind in its process group") && message.contains("sleep 6"),
            "{name}: {:?}",
            result.warnings
        );
        // It claimed both steps ok without starting the mock: results from no server.
        assert_eq!(result.status, Status::Failed, "{name}");
        let left = left_after_kill(&marker).await;
        assert!(left.is_empty(), "{name}: the harness killed the group, yet: {left:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_over_the_environment_limit_travels_in_its_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    // One environment string may hold 128 KiB on Linux; this plan is larger.
    let big = "x".repeat(200 * 1024);
    let yaml = scenario_yaml().replace(
        "    method: tools/list\nserver",
        &format!("    method: tools/list\n    params: {{\"cursor\": \"{big}\"}}\nserver"),
    );
    let body = r#"test -z "$MCP_HARNESS_PLAN" || { echo "inline plan given" >&2; exit 4; }
grep -q '"cursor":"xxx' "$MCP_HARNESS_PLAN_FILE" || { echo "no plan file" >&2; exit 5; }
echo '{"step":1,"ok":true}'
echo '{"step":2,"ok":true,"result":{"tools":[]}}'"#;
    let (result, _) = run_fake_with(dir.path(), "big-plan.sh", body, &yaml).await;
    let client = result.client.as_ref().expect("process report");
    assert_eq!(client.end, mcp_results::ProcessEnd::Exited { code: 0 }, "{client:?}");
    assert_eq!(result.steps[1].status, StepStatus::Ok, "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_the_client_cannot_serve_is_not_judged_never_failed() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The fake reaches the mock (one POST), which meets the script's fault (a stall), so the
    // scenario's checks are judged.
    let yaml = scenario_yaml().replace("transport: stdio", "transport: http");
    let yaml = format!(
        "{}  - op: stall\nchecks:\n  - notified: {{method: notifications/message}}\n",
        &yaml[..yaml.find("  - op: handshake").expect("a handshake")]
    );
    let post = r#"python3 -c 'import sys, urllib.request as u; u.urlopen(u.Request(sys.argv[1], data=b"{}", method="POST")).read()' "$1" 2>/dev/null"#;
    let steps = format!(
        "{post}\necho '{{\"step\":1,\"ok\":true}}'\necho '{{\"step\":2,\"ok\":true,\"result\":{{\"tools\":[]}}}}'"
    );
    let steps = steps.as_str();
    let notified = |r: &RunResult| r.failures.iter().any(|f| f.check.contains("(notified)"));
    let (silent, _) = run_fake_with(dir.path(), "silent.sh", steps, &yaml).await;
    assert!(notified(&silent), "a client that reports nothing fails `notified`: {:?}", silent.failures);
    let body = format!("echo '{{\"cannot_report\":[\"notifications\"]}}'\n{steps}");
    let (declared, _) = run_fake_with(dir.path(), "declared.sh", &body, &yaml).await;
    assert!(!notified(&declared), "{:?}", declared.failures);
    assert!(
        declared
            .notes
            .iter()
            .any(|n| n.check.contains("(notified)") && n.message.contains("cannot report notifications")),
        "{:?}",
        declared.notes
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flooding_client_is_cut_off_and_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (result, took) =
        run_fake(dir.path(), "flood.sh", "echo '{\"step\":1,\"ok\":true}'\nexec yes 'flood flood flood'").await;
    assert!(took < bound(), "took {took:?}");
    assert_ne!(result.status, Status::Passed);
    let client = result.client.as_ref().expect("process report");
    assert!(matches!(client.end, mcp_results::ProcessEnd::KilledForFlooding { .. }), "{client:?}");
    assert!(client.stdout_bytes <= cmd::STDOUT_CAP + 64 * 1024, "{}", client.stdout_bytes);
    assert!(findings(&result).any(|f| f.message.contains("flooding stdout")), "{:?}", result.warnings);
    assert!(result.transcript.contains("killed for flooding stdout"), "{}", result.transcript);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signal_deaths_are_reported_by_name() {
    for signal in ["SEGV", "KILL"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let body = format!("echo '{{\"step\":1,\"ok\":true}}'\nkill -{signal} $$");
        let (result, _) = run_fake(dir.path(), "crash.sh", &body).await;
        assert_ne!(result.status, Status::Passed);
        let want = format!("client killed by SIG{signal}");
        assert!(findings(&result).any(|f| f.message.contains(&want)), "{signal}: {:?}", result.warnings);
        assert!(result.transcript.contains(&want), "{}", result.transcript);
        assert!(
            result.steps[1].error.as_deref().unwrap_or("").contains("before reporting this step"),
            "{:?}",
            result.steps[1]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nonzero_exit_is_a_robustness_finding_and_unsupported_skips() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (result, _) = run_fake(dir.path(), "exit3.sh", "echo 'driver broke' >&2\nexit 3").await;
    // The scenario has no checks of its own (not applicable to a third party); the crash is a
    // robustness warning in any scenario.
    assert_eq!(result.status, Status::NotApplicable, "{:?}", result.reason);
    assert!(
        result.warnings.iter().any(|f| f.level == Level::Robustness
            && f.message.contains("client exited 3")
            && f.message.contains("driver broke")),
        "{:?}",
        result.warnings
    );

    let (result, _) = run_fake(
        dir.path(),
        "unsupported.sh",
        "echo 'not a contract line'\necho '{\"step\":1,\"unsupported\":\"no such thing in this SDK\"}'",
    )
    .await;
    assert_eq!(result.status, Status::Skipped, "{result:?}");
    assert!(result.reason.as_deref().unwrap_or("").contains("no such thing in this SDK"), "{:?}", result.reason);
    assert_eq!(result.client.as_ref().expect("report").other_stdout, vec!["not a contract line".to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_program_is_a_harness_error_not_a_finding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario_path = dir.path().join("fake-client.yaml");
    std::fs::write(&scenario_path, scenario_yaml()).expect("write scenario");
    let scenario = mcp_harness::load(&scenario_path).expect("loads");
    let config = RunConfig::new(Target::cmd("/no/such/driver --flag"), mock_command());
    let job = runner::jobs(vec![(scenario_path, scenario)], &config.target).remove(0);
    let result = runner::run_one(&job, &Arc::new(config)).await;
    assert_eq!(result.status, Status::Error);
    assert!(result.reason.as_deref().unwrap_or("").contains("/no/such/driver"), "{:?}", result.reason);
}

/// A third-party transcript that differs from its snapshot is a note with the diff: the
/// verdict comes from the checks, which cite the spec; the snapshot cites nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_third_party_transcript_is_a_note_not_a_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let steps = "echo '{\"step\":1,\"ok\":true}'\necho '{\"step\":2,\"ok\":true,\"result\":{\"tools\":[]}}'";
    let (first, _) = run_fake_config(dir.path(), "client.sh", steps, &scenario_yaml(), true).await;
    let SnapshotStatus::Created { path } = &first.snapshot else { panic!("first run writes it: {:?}", first.snapshot) };
    let committed = std::fs::read_to_string(path).expect("snapshot");
    std::fs::write(path, format!("{committed}a line the client no longer sends\n")).expect("edit snapshot");
    let (changed, _) = run_fake_config(dir.path(), "client.sh", steps, &scenario_yaml(), true).await;
    assert!(matches!(changed.snapshot, SnapshotStatus::Mismatch { .. }), "{:?}", changed.snapshot);
    assert_eq!(changed.status, first.status, "failures: {:?}", changed.failures);
    assert!(
        changed.notes.iter().any(|n| n.check == "snapshot" && n.message.contains("differs")),
        "{:?}",
        changed.notes
    );
}
