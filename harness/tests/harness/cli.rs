//! The command line's error paths and exit codes (documented in `mcp-harness --help`).

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;

fn harness() -> Command {
    Command::cargo_bin("mcp-harness").expect("binary built")
}

const SCENARIO: &str = "name: tiny\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": []}\nchecks:\n  - outcome: {step: 2, ok: true}\n";

#[test]
fn missing_path_is_one_line_and_exit_2() {
    harness().args(["run", "no/such/scenarios"]).assert().code(2).stderr(
        predicate::str::contains("no such file or directory: no/such/scenarios")
            .and(predicate::function(|s: &str| s.lines().count() == 1)),
    );
}

#[test]
fn unknown_target_is_one_line_and_exit_2() {
    harness().args(["run", "--target", "bundeld", "."]).assert().code(2).stderr(
        predicate::str::contains("unknown target \"bundeld\"")
            .and(predicate::function(|s: &str| s.lines().count() == 1)),
    );
}

#[test]
fn misspelt_field_names_file_line_column_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.yaml");
    std::fs::write(&path, SCENARIO.replace("    method: tools/list\nserver", "    methd: tools/list\nserver"))
        .expect("write");
    let expected = format!("{}:7:5: unknown field `methd`", path.display());
    harness().args(["run", path.to_str().expect("utf8")]).assert().code(2).stderr(predicate::str::contains(expected));
}

#[test]
fn one_changed_snapshot_byte_fails_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tiny.yaml");
    std::fs::write(&path, SCENARIO).expect("write");
    let reports = dir.path().join("reports");
    let run = |update: bool| {
        let mut cmd = harness();
        cmd.args(["run", path.to_str().expect("utf8"), "--reports", reports.to_str().expect("utf8")]).env("CI", "1");
        if update {
            cmd.arg("--update-snapshots");
        }
        cmd.assert()
    };
    run(true).code(0);
    run(false).code(0).stdout(predicate::str::contains("1 passed, 0 failed"));
    let snap = dir.path().join("tiny.snap");
    let text = std::fs::read_to_string(&snap).expect("snapshot written");
    std::fs::write(&snap, text.replacen("tools/list", "tools/lisT", 1)).expect("write");
    run(false).code(1).stdout(predicate::str::contains("snapshot").and(predicate::str::contains("differs")));
    let json = std::fs::read_to_string(reports.join("results.json")).expect("results.json");
    assert!(json.contains("\"status\": \"failed\""), "{json}");
    assert!(Path::new(&reports.join("junit.xml")).exists());
}

#[test]
fn a_first_run_is_judged_by_its_checks_and_writes_its_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tiny.yaml");
    std::fs::write(&path, SCENARIO).expect("write");
    let reports = dir.path().join("reports");
    let run = |extra: &[&str]| {
        harness()
            .args(["run", path.to_str().expect("utf8"), "--reports", reports.to_str().expect("utf8")])
            .args(extra)
            .env("CI", "1")
            .assert()
    };
    let snap = dir.path().join("tiny.snap");
    run(&["--require-snapshots"]).code(1).stdout(predicate::str::contains("is missing and --require-snapshots is set"));
    assert!(!snap.exists(), "a required snapshot is not written by the run that lacks it");
    run(&[]).code(0).stdout(
        predicate::str::contains("1 passed, 0 failed")
            .and(predicate::str::contains("NEW   tiny [stdio, bundled]: first snapshot written to"))
            .and(predicate::str::contains("1 new snapshot(s) written")),
    );
    assert!(snap.exists());
    run(&["--require-snapshots"]).code(0).stdout(predicate::str::contains("1 passed, 0 failed"));
}

#[test]
fn committed_schema_is_current() {
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/schema.json")).unwrap_or_default();
    assert!(
        committed == mcp_scenario::schema::schema_json(),
        "scenarios/schema.json is stale: run `make schema` (cargo run -p mcp-harness -- schema > scenarios/schema.json)"
    );
}
