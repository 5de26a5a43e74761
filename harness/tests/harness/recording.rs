//! A host's session, end to end: the bundled stdio transport spawns `mcp-harness mock stdio
//! <scenario> --record FILE` the way a host's configuration would (a command and its
//! arguments, nothing else), and `mcp-harness check-record` judges the recording: a good
//! one passes with the plan checks listed as not applicable, one where the client skipped
//! a MUST fails.

use crate::files::file_in_tempdir;
use assert_cmd::Command;
use mcp_transports::client::{ClientOptions, handshake};
use mcp_transports::stdio::StdioTransport;
use mcp_transports::{Handlers, RequestOptions, Transport, TransportConfig};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

const BOUND: Duration = Duration::from_secs(10);

const SCENARIO: &str = "name: host-lists-tools
summary: A host initializes, lists the tools and closes.
transport: stdio
revision: 2025-11-25
client:
  - op: connect
  - op: request
    method: tools/list
server:
  - op: handshake
  - op: expect
    method: tools/list
  - op: reply
    result: {\"tools\": []}
checks:
  - outcome: {step: 2, ok: true}
  - sent: {method: notifications/initialized, count: 1}
    must: \"2025-11-25 basic/lifecycle (Initialization): After successful initialization, the client MUST send an initialized notification\"
";

/// Runs a host session against the mock with `session` driving the transport, then closes
/// it (stdin EOF: the mock renders its last events and exits).
async fn host_session<F: AsyncFnOnce(&StdioTransport)>(scenario: &Path, record: &Path, session: F) {
    let config = TransportConfig {
        command: env!("CARGO_BIN_EXE_mcp-harness").into(),
        args: vec![
            "mock".into(),
            "stdio".into(),
            scenario.display().to_string(),
            "--record".into(),
            record.display().to_string(),
        ],
        timeout_ms: Some(5_000),
        timeout_env_override: Some(None),
        ..TransportConfig::default()
    };
    let t = tokio::time::timeout(BOUND, StdioTransport::connect(&config, Handlers::default()))
        .await
        .expect("spawned in time")
        .expect("spawns");
    tokio::time::timeout(BOUND, session(&t)).await.expect("the session in time");
    tokio::time::timeout(BOUND, t.close()).await.expect("closes in time");
}

fn check_record(scenario: &Path, record: &Path) -> std::process::Output {
    Command::cargo_bin("mcp-harness")
        .expect("binary built")
        .args(["check-record", scenario.to_str().expect("utf8"), record.to_str().expect("utf8")])
        .timeout(BOUND)
        .output()
        .expect("runs")
}

#[tokio::test]
async fn a_good_host_recording_passes_and_plan_checks_are_not_applicable() {
    let (dir, scenario) = file_in_tempdir("host-lists-tools.yaml", SCENARIO);
    let record = dir.path().join("good.txt");
    host_session(&scenario, &record, async |t| {
        let options = ClientOptions { protocol_version: "2025-11-25".into(), ..ClientOptions::default() };
        handshake(t, &options).await.expect("handshake");
        let listed = t.request("tools/list", None, RequestOptions::default()).await.expect("tools/list");
        assert_eq!(listed, json!({"tools": []}));
    })
    .await;

    let rendering = std::fs::read_to_string(&record).expect("the recording");
    assert!(rendering.starts_with("scenario: host-lists-tools · transport: stdio · target: host\n"), "{rendering}");
    assert!(rendering.contains("\"method\":\"notifications/initialized\""), "{rendering}");
    assert!(rendering.contains("· stdin closed by the client") && rendering.contains("· mock exited 0 (stdin EOF)"));

    let out = check_record(&scenario, &record);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("PASS  host-lists-tools [stdio, host recording]"), "{stdout}");
    assert!(
        stdout.contains("check 1 (outcome): not applicable to a recording: it reads a plan step's result"),
        "never passed silently: {stdout}"
    );
}

#[tokio::test]
async fn a_host_that_skips_a_must_fails_check_record() {
    let (dir, scenario) = file_in_tempdir("host-lists-tools.yaml", SCENARIO);
    let record = dir.path().join("bad.txt");
    // A client that initializes and never sends notifications/initialized (the mock's
    // handshake waits for it, so the client stops there and closes).
    host_session(&scenario, &record, async |t| {
        let init =
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bad", "version": "1"}});
        t.request("initialize", Some(init), RequestOptions::default()).await.expect("initialize");
    })
    .await;

    let out = check_record(&scenario, &record);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("FAIL  host-lists-tools [stdio, host recording]"), "{stdout}");
    assert!(stdout.contains("check 2 (sent):"), "the broken MUST is named: {stdout}");
}

#[test]
fn a_recording_without_its_record_dir_or_of_another_scenario_is_exit_2() {
    let (dir, scenario) = file_in_tempdir("host-lists-tools.yaml", SCENARIO);
    let lone = dir.path().join("lone.txt");
    std::fs::write(&lone, "scenario: x\n").expect("write");
    let out = check_record(&scenario, &lone);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lone.txt.wire"), "says what is missing");

    let wire = dir.path().join("other.txt.wire");
    std::fs::create_dir_all(&wire).expect("mkdir");
    std::fs::write(wire.join("recording.json"), r#"{"scenario": "other", "transport": "stdio"}"#).expect("write");
    let out = check_record(&scenario, &dir.path().join("other.txt"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("recording of scenario `other`, not of `host-lists-tools`"));
}
