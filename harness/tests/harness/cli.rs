//! The command line's error paths and exit codes (documented in `mcp-harness --help`).

use crate::files::file_in_tempdir;
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
    let (_dir, path) = file_in_tempdir(
        "bad.yaml",
        &SCENARIO.replace("    method: tools/list\nserver", "    methd: tools/list\nserver"),
    );
    let expected = format!("{}:7:5: unknown field `methd`", path.display());
    harness().args(["run", path.to_str().expect("utf8")]).assert().code(2).stderr(predicate::str::contains(expected));
}

#[test]
fn one_changed_snapshot_byte_fails_the_run() {
    let (dir, path) = file_in_tempdir("tiny.yaml", SCENARIO);
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
    let (dir, path) = file_in_tempdir("tiny.yaml", SCENARIO);
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

/// A generated file the project commits matches what the code generates now.
#[rstest::rstest]
#[case::the_scenario_schema(
    "scenarios/schema.json",
    mcp_scenario::schema::schema_json(),
    "schema > scenarios/schema.json"
)]
#[case::the_driver_contract_reference(
    "clients/CONTRACT.md",
    mcp_scenario::contract::reference_markdown(),
    "contract > clients/CONTRACT.md"
)]
fn a_committed_generated_file_is_current(#[case] file: &str, #[case] generated: String, #[case] command: &str) {
    let committed =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file)).unwrap_or_default();
    assert!(committed == generated, "{file} is stale: run `make schema` (cargo run -p mcp-harness -- {command})");
}

/// Writes `text` as `<dir>/<name>.yaml` (the name taken from the text's `name:`).
fn write_scenario(dir: &Path, text: &str) -> std::path::PathBuf {
    let name = text.lines().next().and_then(|l| l.strip_prefix("name: ")).expect("name line");
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, text).expect("write");
    path
}

/// What a malformed scenario's one line must say: all of it, or how it starts or ends.
#[derive(Debug, Clone, Copy)]
enum Said {
    Whole(&'static str),
    Starts(&'static str),
    Ends(&'static str),
}

/// `mcp-harness check` on SCENARIO with the first `from` written as `to` fails with exit 2
/// and one stderr line that says where, what, and what to write (the path shown as
/// `tiny.yaml`).
#[rstest::rstest]
#[case::an_unknown_transport_lists_the_valid_ones_and_the_closest(
    "transport: stdio",
    "transport: streamable-http",
    Said::Whole(
        "mcp-harness: tiny.yaml:3:12: unknown transport `streamable-http`: write `stdio`, `http` (Streamable HTTP) or `legacy-sse` (HTTP+SSE, 2024-11-05); did you mean `http`?"
    )
)]
#[case::an_unknown_transport_in_a_list(
    "transport: stdio",
    "transport: [stdio, websocket]",
    Said::Ends(
        "unknown transport `websocket`: write `stdio`, `http` (Streamable HTTP) or `legacy-sse` (HTTP+SSE, 2024-11-05)"
    )
)]
#[case::a_duplicate_key_says_which_twice_and_to_remove_one(
    "revision: 2025-11-25\n",
    "revision: 2025-11-25\nrevision: 2025-06-18\n",
    Said::Whole(
        "mcp-harness: tiny.yaml:5:1: `revision` is given twice in the same mapping (first on line 4): remove one"
    )
)]
#[case::an_indent_short_of_its_siblings_points_at_its_line(
    "    method: tools/list",
    "   method: tools/list",
    Said::Whole(
        "mcp-harness: tiny.yaml:8:4: `method` is indented 3 spaces, which does not line up with its siblings (`op` on line 7 is at 4 spaces): YAML ends that mapping before this line. Indent it 4 spaces like `op` (the parser then reported at 7:5: missing field `method`)"
    )
)]
#[case::an_indent_deeper_than_its_siblings_points_at_its_line(
    "    method: tools/list",
    "     method: tools/list",
    Said::Starts(
        "mcp-harness: tiny.yaml:8:6: `method` is indented 5 spaces, deeper than `op` on line 7 (4 spaces), whose value is already given"
    )
)]
#[case::an_outcome_must_say_how_the_step_ends(
    "outcome: {step: 2, ok: true}",
    "outcome: {step: 2}",
    Said::Whole(
        "mcp-harness: tiny.yaml:16:5: check 1: field `ok`: say how step 2 must end: `ok: true` (it succeeds), `ok: false` (it fails), `error: \"…\"` (it fails with this text) or `settled: true` (it ends either way, before the deadline)"
    )
)]
#[case::an_outcome_may_not_be_settled_and_classed(
    "outcome: {step: 2, ok: true}",
    "outcome: {step: 2, ok: true, settled: true}",
    Said::Ends(
        "check 1: fields `settled` and `ok` / `error`: `settled: true` leaves the class open; give one or the other"
    )
)]
#[case::a_name_that_is_not_the_file_stem_says_what_to_write(
    "name: tiny",
    "name: tiny-two",
    Said::Whole(
        "mcp-harness: tiny.yaml:1:7: field `name`: \"tiny-two\" differs from the file name \"tiny\": write `name: tiny` (or rename the file to tiny-two.yaml, and its snapshots with it)"
    )
)]
fn a_malformed_scenario_says_where_what_and_what_to_write(#[case] from: &str, #[case] to: &str, #[case] said: Said) {
    assert!(SCENARIO.contains(from), "the case edits SCENARIO: {from:?}");
    let (_dir, path) = file_in_tempdir("tiny.yaml", &SCENARIO.replacen(from, to, 1));
    let out = harness().args(["check", path.to_str().expect("utf8")]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let message = String::from_utf8_lossy(&out.stderr).trim().replace(&path.display().to_string(), "tiny.yaml");
    match said {
        Said::Whole(want) => assert_eq!(message, want),
        Said::Starts(want) => assert!(message.starts_with(want), "{message}"),
        Said::Ends(want) => assert!(message.ends_with(want), "{message}"),
    }
}

/// A scenario whose check fails on any client (the plan sends what it forbids).
fn failing(name: &str) -> String {
    SCENARIO.replace("name: tiny", &format!("name: {name}")).replace(
        "  - outcome: {step: 2, ok: true}\n",
        "  - outcome: {step: 2, ok: true}\n  - not_sent: {method: tools/list}\n",
    )
}

fn named(name: &str) -> String {
    SCENARIO.replace("name: tiny", &format!("name: {name}"))
}

/// Runs `mcp-harness run <dir> <args>` under CI (plain lines), reports inside `dir`.
fn run_in(dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    let reports = dir.join("reports");
    harness()
        .args(["run", dir.to_str().expect("utf8"), "--reports", reports.to_str().expect("utf8")])
        .args(args)
        .env("CI", "1")
        .assert()
}

#[test]
fn filters_choose_scenarios_by_name_transport_and_revision() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_scenario(dir.path(), &named("alpha-one"));
    write_scenario(dir.path(), &named("beta-two"));
    write_scenario(dir.path(), &named("old-rev").replace("revision: 2025-11-25", "revision: 2025-06-18"));
    run_in(dir.path(), &["--no-snapshots", "--filter", "alpha"])
        .code(0)
        .stdout(predicate::str::contains("PASS  alpha-one").and(predicate::str::contains("1 passed, 0 failed")));
    run_in(dir.path(), &["--no-snapshots", "--filter", "*-t?o"])
        .code(0)
        .stdout(predicate::str::contains("PASS  beta-two").and(predicate::str::contains("1 passed, 0 failed")));
    run_in(dir.path(), &["--no-snapshots", "--revision", "2025-06-18"])
        .code(0)
        .stdout(predicate::str::contains("PASS  old-rev").and(predicate::str::contains("1 passed, 0 failed")));
    run_in(dir.path(), &["--no-snapshots", "--transport", "http"])
        .code(2)
        .stderr(predicate::str::contains("none of the 3 scenarios matches the filters"));
    run_in(dir.path(), &["--transport", "streamable-http"]).code(2).stderr(predicate::str::contains(
        "unknown transport `streamable-http`: write `stdio`, `http` (Streamable HTTP) or `legacy-sse`",
    ));
}

#[test]
fn no_snapshots_writes_nothing_beside_the_scenario() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_scenario(dir.path(), &failing("fails"));
    run_in(dir.path(), &["--no-snapshots"]).code(1).stdout(predicate::str::contains("FAIL  fails"));
    write_scenario(dir.path(), SCENARIO);
    run_in(dir.path(), &["--no-snapshots", "--filter", "tiny"]).code(0);
    let beside: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".snap"))
        .collect();
    assert!(beside.is_empty(), "{beside:?}");
}

#[test]
fn keep_going_skips_invalid_files_runs_the_rest_and_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_scenario(dir.path(), SCENARIO);
    write_scenario(dir.path(), &named("broken").replace("transport: stdio", "transport: sse"));
    run_in(dir.path(), &["--no-snapshots"]).code(2).stdout(predicate::str::is_empty());
    run_in(dir.path(), &["--no-snapshots", "--keep-going"])
        .code(2)
        .stderr(predicate::str::contains("skipped (--keep-going):").and(predicate::str::contains("broken.yaml:3:12")))
        .stdout(
            predicate::str::contains("1 passed, 0 failed")
                .and(predicate::str::contains("1 invalid scenario file(s) skipped (--keep-going)")),
        );
}

#[test]
fn fail_fast_reports_the_runs_it_did_not_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_scenario(dir.path(), &failing("a-fails"));
    write_scenario(dir.path(), &failing("b-fails"));
    run_in(dir.path(), &["--no-snapshots", "-j", "1"]).code(1).stdout(predicate::str::contains("0 passed, 2 failed"));
    run_in(dir.path(), &["--no-snapshots", "-j", "1", "--fail-fast"]).code(1).stdout(
        predicate::str::contains("FAIL  a-fails")
            .and(predicate::str::contains("NOTRUN b-fails [stdio, bundled]: not run: --fail-fast stopped"))
            .and(predicate::str::contains("0 passed, 1 failed, 0 skipped, 0 errors, 1 not run")),
    );
    let json = std::fs::read_to_string(dir.path().join("reports/results.json")).expect("results.json");
    assert!(json.contains("\"status\": \"not_run\"") && json.contains("\"not_run\": 1"), "{json}");
}

#[test]
fn a_pending_scenario_is_reported_with_its_reason_and_never_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text =
        named("later").replace("revision: 2025-11-25\n", "revision: 2025-11-25\npending: \"waits on issue 12\"\n");
    write_scenario(dir.path(), &text);
    write_scenario(dir.path(), SCENARIO);
    run_in(dir.path(), &["--no-snapshots"]).code(0).stdout(
        predicate::str::contains("PEND  later [stdio, bundled]: pending: waits on issue 12")
            .and(predicate::str::contains("1 passed, 0 failed, 0 skipped, 0 errors, 1 pending")),
    );
    let json = std::fs::read_to_string(dir.path().join("reports/results.json")).expect("results.json");
    assert!(json.contains("\"status\": \"pending\"") && json.contains("\"pending\": 1"), "{json}");
    let junit = std::fs::read_to_string(dir.path().join("reports/junit.xml")).expect("junit.xml");
    assert!(junit.contains("<skipped message=\"pending: waits on issue 12\"/>"), "{junit}");
    // A pending scenario is still validated.
    write_scenario(dir.path(), &text.replace("op: connect", "op: conect"));
    run_in(dir.path(), &["--no-snapshots"]).code(2).stderr(predicate::str::contains("later.yaml:"));
}

#[test]
fn format_json_puts_the_results_document_on_stdout() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_scenario(dir.path(), SCENARIO);
    let out = run_in(dir.path(), &["--no-snapshots", "--format", "json"]).code(0).get_output().stdout.clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).expect("stdout is one JSON document");
    assert_eq!(doc["totals"]["passed"], 1, "{doc}");
    assert_eq!(doc["runs"][0]["scenario"], "tiny");
    assert_eq!(doc["runs"][0]["status"], "passed");
}

#[test]
fn progress_is_plain_lines_when_not_on_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_scenario(dir.path(), SCENARIO);
    run_in(dir.path(), &["--no-snapshots"]).code(0).stderr(predicate::str::contains("[1/1] PASS tiny [stdio]"));
    run_in(dir.path(), &["--no-snapshots", "--quiet"]).code(0).stderr(predicate::str::is_empty());
}

#[test]
fn a_snapshot_mismatch_shows_a_line_diff() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_scenario(dir.path(), SCENARIO);
    run_in(dir.path(), &["--update-snapshots"]).code(0);
    let snap = dir.path().join("tiny.snap");
    let text = std::fs::read_to_string(&snap).expect("snapshot");
    std::fs::write(&snap, text.replacen("tools/list", "tools/lisT", 1)).expect("write");
    // Not a terminal: no colour codes, the plain diff.
    run_in(dir.path(), &[]).code(1).stdout(
        predicate::str::contains("        --- snapshot\n        +++ this run\n")
            .and(predicate::str::contains("tools/lisT"))
            .and(predicate::str::contains("\x1b[").not()),
    );
}

#[test]
fn list_shows_one_line_per_scenario_and_filters() {
    let dir = tempfile::tempdir().expect("tempdir");
    let area = dir.path().join("stdio");
    std::fs::create_dir(&area).expect("mkdir");
    write_scenario(&area, SCENARIO);
    let text =
        named("later").replace("revision: 2025-11-25\n", "revision: 2025-11-25\npending: \"waits on issue 12\"\n");
    write_scenario(&area, &text.replace("ok: true}", "ok: true}\n    must: \"2025-11-25 x: MUST y\""));
    let list = |args: &[&str]| harness().arg("list").arg(dir.path()).args(args).assert();
    list(&[]).code(0).stdout(
        "later  [stdio]  2025-11-25  must,stdio  PENDING: waits on issue 12\ntiny  [stdio]  2025-11-25  stdio,unclassified\n",
    );
    list(&["--tag", "must"])
        .code(0)
        .stdout(predicate::str::starts_with("later ").and(predicate::str::contains("tiny").not()));
    list(&["--text", "TIN"]).code(0).stdout(predicate::str::starts_with("tiny "));
    list(&["--transport", "http"]).code(0).stdout(predicate::str::is_empty());
}

#[test]
fn explain_tells_the_scenario_in_words_by_file_or_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_scenario(dir.path(), SCENARIO);
    let words = "The client is asked to (the plan):\n  1. connect and run the MCP handshake\n  2. send the request `tools/list` and wait for its outcome\n";
    harness().args(["explain", "tiny", "--in", dir.path().to_str().expect("utf8")]).assert().code(0).stdout(
        predicate::str::contains(words)
            .and(predicate::str::contains("  2. waits for the client's `tools/list`"))
            .and(predicate::str::contains("  1. plan step 2 succeeded\n     rests on unclassified")),
    );
    harness()
        .args(["explain", dir.path().join("tiny.yaml").to_str().expect("utf8")])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(words));
    harness()
        .args(["explain", "tinny", "--in", dir.path().to_str().expect("utf8")])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `tiny`?"));
}

#[test]
fn every_subcommand_has_help_with_defaults_and_examples() {
    for (sub, wants) in [
        (
            "run",
            &[
                "--fail-fast",
                "--keep-going",
                "--no-snapshots",
                "--format",
                "Default: text",
                "Examples:",
                "[default: bundled]",
            ][..],
        ),
        ("list", &["--transport", "--revision", "--tag", "--text", "Examples:", "Tags are derived"][..]),
        ("explain", &["Examples:", "Default: the library embedded in this"][..]),
        ("check", &["Default: the library embedded in this binary", "Examples:"][..]),
        ("matrix", &["[default: reports/clients]", "Examples:"][..]),
        ("schema", &["JSON Schema", "Examples:"][..]),
        ("merge", &["--expected-failures", "[default: reports]", "Examples:", "missing shard"][..]),
        ("check-record", &["not applicable to a recording: outcome", "error_is", "times_out.", "Examples:"][..]),
    ] {
        let out = harness().args([sub, "--help"]).output().expect("runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{sub}");
        for want in wants {
            assert!(text.contains(want), "`mcp-harness {sub} --help` lacks {want:?}:\n{text}");
        }
    }
    harness().arg("--help").assert().code(0).stdout(predicate::str::contains("with\n     --keep-going"));
}

/// Each subcommand's help opens with its own description: a doc comment left above the wrong
/// variant once gave `merge --help` the text of `review` and `review` none.
#[test]
fn each_subcommand_help_opens_with_its_own_description() {
    let out = harness().arg("--help").output().expect("runs");
    let top = String::from_utf8_lossy(&out.stdout).into_owned();
    let listed = top.split("Commands:").nth(1).and_then(|s| s.split("Options:").next()).expect("a Commands section");
    let mut seen = 0;
    for line in listed.lines() {
        let Some((sub, about)) = line.strip_prefix("  ").and_then(|l| l.split_once(char::is_whitespace)) else {
            continue;
        };
        // `mock --help` is the mock binary's own help (the subcommand hands it over).
        if sub.is_empty() || sub == "help" || sub == "mock" {
            continue;
        }
        let first_words: String = about.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
        let own = harness().args([sub, "--help"]).output().expect("runs");
        let own = String::from_utf8_lossy(&own.stdout).split_whitespace().take(4).collect::<Vec<_>>().join(" ");
        assert_eq!(own, first_words, "`mcp-harness {sub} --help` opens with another description");
        seen += 1;
    }
    assert!(seen >= 10, "only {seen} subcommands listed in:\n{top}");
}

/// A client that never met the scenario's fault is not exercised: shown apart, never a pass,
/// and it fails the exit code.
#[test]
fn a_run_not_exercised_fails_the_exit_code_and_is_named_so() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let null = root.join("clients/selftest/null");
    let scenario = root.join("scenarios/stdio/initialized-before-first-request.yaml");
    let target = format!("cmd:{}", null.display());
    let reports = tempfile::tempdir().expect("tempdir");
    harness()
        .args(["run", scenario.to_str().expect("utf8"), "--target", &target, "--no-snapshots", "--reports"])
        .arg(reports.path())
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("NOT EXERCISED  initialized-before-first-request [stdio")
                .and(predicate::str::contains(
                    "the client never connected, so it never met the fault (reply at server step 3)",
                ))
                .and(predicate::str::contains("0 passed, 0 failed, 0 skipped, 0 errors, 1 not exercised")),
        );
}

/// A copy of the reference driver written against the first contract, without `headers`:
/// told what changed, and the plan that uses `headers` skipped with the field named, never
/// run with it dropped; a plan it handles still runs.
#[test]
fn a_driver_of_an_older_contract_is_told_and_skips_what_it_lacks() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let dir = tempfile::tempdir().expect("tempdir");
    let driver = dir.path().join("old-driver");
    let declaration = r#"{"contract":"2026-12-01","performs":{"connect":["handshake","timeout_ms","env","max_message_bytes","string_ids","roots"],"request":["method","params","timeout_ms","background","as","pad_params"],"await":["request"],"cancel":["request"],"notify":["method","params"],"wait":["ms"],"wait_notification":["method","timeout_ms"],"wait_closed":["timeout_ms"],"close":[]}}"#;
    std::fs::write(
        &driver,
        format!(
            "#!/bin/sh\nif [ \"$MCP_HARNESS_DECLARE\" = 1 ]; then echo '{declaration}'; exit 0; fi\nexec {root}/clients/reference/run \"$@\"\n"
        ),
    )
    .expect("write");
    std::fs::set_permissions(&driver, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let headers = format!("{root}/scenarios/driver-selftest/connect-headers.yaml");
    let plain = format!("{root}/scenarios/driver-selftest/request-params.yaml");
    let target = format!("cmd:{}", driver.display());
    let out = harness()
        .args(["run", &headers, &plain, "--target", &target, "--no-snapshots", "--reports"])
        .arg(dir.path().join("reports"))
        .assert()
        .code(0);
    let out = out.get_output();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        stderr.contains("declares driver contract 2026-12-01; this harness speaks")
            && stderr.contains("`connect.headers`")
            && stderr.contains("clients/CONTRACT.md"),
        "{stderr}"
    );
    assert!(
        stdout.contains(
            "SKIP  connect-headers [http, cmd:") && stdout.contains("step 1 (connect) uses `connect.headers`, which the driver does not declare (it declares contract 2026-12-01; it came in contract 2026-12-05)"),
        "{stdout}"
    );
    assert!(stdout.contains("PASS  request-params"), "{stdout}");
}

/// `review` lists pending snapshots with their diff (exit 1 while any is pending), and
/// `--accept` / `--reject` settle them without asking.
#[test]
fn review_lists_accepts_and_rejects_pending_snapshots() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, body: &str| {
        std::fs::write(dir.path().join(name), format!("---\nsource: x\nexpression: transcript\n---\n{body}\n"))
            .expect("write")
    };
    write("a.snap", "old line");
    write("a.snap.new", "new line");
    write("b.snap.new", "first transcript");
    let d = dir.path().to_str().expect("utf8");
    harness().args(["review", d]).assert().code(1).stdout(
        predicate::str::contains("- old line")
            .and(predicate::str::contains("+ new line"))
            .and(predicate::str::contains("no snapshot yet"))
            .and(predicate::str::contains("0 accepted, 0 rejected, 2 still pending")),
    );
    harness().args(["review", d, "--accept"]).assert().code(0).stdout(predicate::str::contains("2 accepted"));
    assert!(std::fs::read_to_string(dir.path().join("a.snap")).expect("a").contains("new line"));
    assert!(dir.path().join("b.snap").exists());
    write("a.snap.new", "newer line");
    harness().args(["review", d, "--reject"]).assert().code(0).stdout(predicate::str::contains("1 rejected"));
    assert!(!dir.path().join("a.snap.new").exists());
    harness().args(["review", d]).assert().code(0).stdout(predicate::str::contains("no pending snapshots"));
}

/// `record` takes the server's command with or without `--`; the server's own options
/// (`--flag`) stay the server's.
#[test]
fn record_takes_the_server_command_with_or_without_a_double_dash() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, dash) in [("plain", false), ("dashed", true)] {
        let out = dir.path().join(format!("{name}.yaml"));
        let mut args = vec!["record".to_string(), "--out".into(), out.display().to_string()];
        if dash {
            args.push("--".into());
        }
        args.extend(["sh", "-c", "echo \"$1\" >&2", "server", "--flag"].map(String::from));
        harness().args(&args).write_stdin("").assert().code(0).stderr(predicate::str::contains("--flag"));
        assert!(out.exists(), "{name}: no scenario written");
    }
}

/// Every committed driver baseline loads (a broken one fails `make validate` only for its
/// driver, which CI does not run for every driver), and every driver in the Makefile has one.
#[test]
fn every_committed_baseline_loads() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../clients/baselines"));
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).expect("clients/baselines") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yml") {
            mcp_harness::baseline::Baseline::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            names.push(path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
        }
    }
    let makefile = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Makefile")).expect("Makefile");
    let clients = makefile.lines().find_map(|l| l.strip_prefix("CLIENTS ?= ")).expect("CLIENTS in the Makefile");
    for client in clients.split_whitespace() {
        assert!(names.iter().any(|n| n == client), "no clients/baselines/{client}.yml");
    }
}

/// A `promise:` (a client's own documented promise) fails the targets it names and is a note,
/// "not this client's promise", for any other: the same unmet check either way.
#[test]
fn a_promise_fails_only_the_targets_it_names() {
    let promise = |targets: &str| {
        SCENARIO.replace("name: tiny", "name: promised").replace(
            "  - outcome: {step: 2, ok: true}\n",
            &format!(
                "  - outcome: {{step: 2, ok: true}}\n  - not_sent: {{method: tools/list}}\n    promise: {{url: \"https://example.org/sdk#lists\", says: \"it never lists tools\", targets: [{targets}]}}\n"
            ),
        )
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write_scenario(dir.path(), &promise("bundled"));
    let run = || {
        harness()
            .args(["run", path.to_str().expect("utf8"), "--no-snapshots", "--reports"])
            .arg(dir.path().join("reports"))
            .env("CI", "1")
            .assert()
    };
    run()
        .code(1)
        .stdout(predicate::str::contains("check 2 (not_sent): client sent tools/list").and(predicate::str::contains(
        "(the client's own documented promise, not an MCP rule: it never lists tools (https://example.org/sdk#lists))",
    )));
    std::fs::write(&path, promise("typescript/run")).expect("rewrite");
    run().code(0).stdout(predicate::str::contains(
        "note: check 2 (not_sent): not this client's promise (it binds typescript/run), so no verdict here: client sent tools/list",
    ));
}

/// With no path, `list`, `check`, `explain` and `run` use the library embedded in the binary,
/// wherever they are typed: a `scenarios/` folder in the current directory is not taken unless
/// named. `scenarios export` writes the library out; a folder given is the library then.
#[test]
fn no_path_means_the_embedded_library_and_an_exported_copy_overrides_when_named() {
    let cwd = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(cwd.path().join("scenarios")).expect("mkdir");
    std::fs::write(cwd.path().join("scenarios/not-a-scenario.yaml"), "hello: world\n").expect("write");
    let embedded = harness().current_dir(cwd.path()).arg("check").output().expect("runs");
    let text = String::from_utf8_lossy(&embedded.stdout);
    assert_eq!(embedded.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&embedded.stderr));
    assert!(text.contains("scenario files are valid (the embedded library)"), "{text}");
    let in_cwd = |args: &[&str]| harness().current_dir(cwd.path()).args(args).assert();
    in_cwd(&["explain", "handshake-order"])
        .code(0)
        .stdout(predicate::str::contains("scenarios/stdio/handshake-order.yaml"));
    in_cwd(&["run", "--update-snapshots"])
        .code(2)
        .stderr(predicate::str::contains("is read-only; write it out with `mcp-harness scenarios export DIR`"));

    let copy = cwd.path().join("copy");
    harness()
        .args(["scenarios", "export"])
        .arg(&copy)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("scenarios) to"));
    let scenario = copy.join("stdio/handshake-order.yaml");
    let text = std::fs::read_to_string(&scenario).expect("exported");
    assert!(copy.join("stdio/handshake-order.snap").is_file() && copy.join("README.md").is_file());
    std::fs::write(&scenario, text.replace("summary: ", "summary: EDITED ")).expect("edit");
    harness()
        .args(["list", "--text", "EDITED"])
        .arg(&copy)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("handshake-order"));
    harness()
        .args(["scenarios", "export"])
        .arg(&copy)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("1 file(s) that differ").and(predicate::str::contains("--force")));
    // A bundled run of the embedded library compares its embedded snapshots and writes
    // nothing beside them.
    let reports = cwd.path().join("reports");
    in_cwd(&["run", "--filter", "handshake-order", "--reports", reports.to_str().expect("utf8")])
        .code(0)
        .stdout(predicate::str::contains("1 passed, 0 failed"));
    let results = std::fs::read_to_string(reports.join("results.json")).expect("results");
    assert!(results.contains("\"state\": \"matched\""), "{results}");
}
