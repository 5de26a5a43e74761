//! Starved runs (issue on load-proof verdicts): a run whose measured scheduling lag passed
//! its scenario's timing margin is run again; a verdict that holds is reported as it is, one
//! that changes is `flaky_under_load` (exit 1), never a plain pass or failure. Forced with the
//! `MCP_HARNESS_TEST_LAG` hook, which adds lag to a named scenario's first attempt.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn runs(reports: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(reports.join("results.json")).expect("results.json");
    let doc: Value = serde_json::from_str(&text).expect("json");
    doc["runs"].as_array().expect("runs").clone()
}

/// The scenario these tests starve: `MCP_HARNESS_TEST_LAG` names it.
const STARVED: &str = "out-of-order-responses";

/// `mcp-harness run` of the starved scenario against `target` (`None`: the bundled client),
/// its first attempt lagged by 5 s when `lagged`, with its reports in `reports`.
fn run_starved(lagged: bool, target: Option<String>, reports: &Path) -> Output {
    let mut cmd = Command::cargo_bin("mcp-harness").expect("binary");
    cmd.current_dir(root()).args(["run", &format!("scenarios/stdio/{STARVED}.yaml"), "--no-snapshots"]);
    if lagged {
        cmd.env("MCP_HARNESS_TEST_LAG", format!("{STARVED}=5000"));
    }
    if let Some(target) = target {
        cmd.arg("--target").arg(target);
    }
    cmd.arg("--reports").arg(reports).output().expect("runs")
}

/// A wrapper around the reference client that runs `on_first` (shell) on its first attempt
/// only, then the reference client; the harness's declaration run before the runs is no
/// attempt. Written into `dir` as `name`; its path.
fn first_attempt_differs(dir: &Path, name: &str, on_first: &str) -> PathBuf {
    let script = dir.join(name);
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nstate=\"{}\"\nif [ -z \"$MCP_HARNESS_DECLARE\" ] && [ ! -e \"$state\" ]; then : > \"$state\"; {on_first}; fi\nexec \"{}\" \"$@\"\n",
            dir.join("first-done").display(),
            reference().display()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    script
}

fn reference() -> PathBuf {
    root().join("clients/reference/run")
}

/// A client that fails its first attempt (the reference client with a planted id bug) and not
/// its second: what a verdict that rests on the load looks like from outside.
fn flipping_client(dir: &Path) -> PathBuf {
    first_attempt_differs(dir, "flips.sh", &format!("exec \"{}\" --bug reuses-ids \"$@\"", reference().display()))
}

#[test]
fn a_starved_run_whose_verdict_holds_is_re_run_and_reported_as_it_is() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = run_starved(true, None, tmp.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("re-run: the machine starved attempt 1"), "{stdout}");
    let run = &runs(tmp.path())[0];
    assert_eq!(run["status"], "passed");
    let attempts = run["load"]["attempts"].as_array().expect("attempts recorded");
    assert_eq!(attempts.len(), 2, "{run}");
    assert!(attempts[0]["lag_ms"].as_u64().expect("lag") >= 5000, "{run}");
}

#[test]
fn a_starved_run_whose_verdict_changes_is_flaky_under_load() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let flips = flipping_client(tmp.path());
    let reports = tmp.path().join("reports");
    let out = run_starved(true, Some(format!("cmd:{}", flips.display())), &reports);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a flaky verdict is no pass:\n{stdout}");
    assert!(stdout.contains("FLAKY UNDER LOAD  out-of-order-responses"), "{stdout}");
    assert!(stdout.contains("attempt 1 failed"), "{stdout}");
    assert!(stdout.contains("attempt 2 passed"), "{stdout}");
    let run = &runs(&reports)[0];
    assert_eq!(run["status"], "flaky_under_load", "{run}");
    assert_eq!(run["load"]["attempts"][0]["status"], "failed", "{run}");
    assert_eq!(run["load"]["attempts"][1]["status"], "passed", "{run}");
}

#[test]
fn without_the_lag_the_same_flipping_client_just_fails() {
    // The control: no starvation, no re-run — its first verdict is the verdict.
    let tmp = tempfile::tempdir().expect("tempdir");
    let target = format!("cmd:{} --bug reuses-ids", reference().display());
    let out = run_starved(false, Some(target), tmp.path());
    let run = &runs(tmp.path())[0];
    assert_eq!(run["status"], "failed", "{}", String::from_utf8_lossy(&out.stdout));
    assert!(run.get("load").is_none_or(Value::is_null), "{run}");
}

/// A client that reaches the mock late on its first attempt only (it sleeps `sleep_s` before
/// starting): a machine slow to start a process, as seen from outside.
fn late_starting_client(dir: &Path, sleep_s: &str) -> PathBuf {
    first_attempt_differs(dir, "late.sh", &format!("sleep {sleep_s}"))
}

#[test]
fn a_client_that_reached_the_mock_too_late_for_its_deadline_is_re_run() {
    // The deadline (1000 ms + 500 ms for start-up) leaves the plan 400 ms beside the reply's
    // 600 ms delay; the first attempt's client starts 1.2 s late, so its reply comes after the
    // deadline. It waited for no CPU: only the time it took to reach the mock says the
    // machine (here, the sleep) and not the client made it hang.
    let tmp = tempfile::tempdir().expect("tempdir");
    let scenario = tmp.path().join("late-start.yaml");
    std::fs::write(
        &scenario,
        "name: late-start\nsummary: s\ntransport: http\nrevision: 2025-11-25\ndeadline_ms: 1000\nclient:\n  - op: connect\n  - op: request\n    method: ping\nserver:\n  - op: handshake\n  - op: expect\n    method: ping\n  - op: delay\n    ms: 600\n  - op: reply\nchecks:\n  - outcome: {step: 2, ok: true}\n    must: \"2025-11-25 basic/utilities/ping: the receiver MUST respond promptly with an empty response\"\n",
    )
    .expect("scenario");
    let late = late_starting_client(tmp.path(), "1.2");
    let reports = tmp.path().join("reports");
    let out = Command::cargo_bin("mcp-harness")
        .expect("binary")
        .current_dir(tmp.path())
        .env("MCP_HARNESS_STARTUP_MS", "500")
        .args(["run", "late-start.yaml", "--no-snapshots", "--target", &format!("cmd:{}", late.display())])
        .arg("--reports")
        .arg(&reports)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let run = &runs(&reports)[0];
    assert_eq!(run["status"], "passed", "{stdout}\n{run}");
    let attempts = run["load"]["attempts"].as_array().expect("the first attempt was re-run");
    assert_eq!(attempts.len(), 2, "{run}");
    assert!(attempts[0]["lag_ms"].as_u64().expect("lag") >= 1000, "the late start is the lag: {run}");
}
