//! Real hosts: an application built on the TypeScript SDK (`tests/fixtures/sdk-client.mjs`
//! in `host` mode: it connects, runs no plan, and closes when told) is pointed at every
//! scenario tagged `host` — over `mcp-harness mock stdio` (the same as `mcp-mock stdio`) as
//! its server command, or at `mcp-harness mock serve`'s URL — as the README shows, and `check-record` must pass each recording. The
//! README's two examples must be among them. No test sleeps: each waits on the mock's own
//! stderr line saying its script has run to its end, then closes the host.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const HARNESS: &str = env!("CARGO_BIN_EXE_mcp-harness");
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
/// What the mock says on stderr once a connection's script is over.
const SCRIPT_OVER: &str = "the script has run to its end";
/// How long one host session may take (the SDK's own close waits up to 2 s for a server that
/// ignores EOF, then 2 s after SIGTERM).
const SESSION_DEADLINE: Duration = Duration::from_secs(30);

/// The fixture, when the TypeScript SDK it imports is installed (`clients/install.sh
/// typescript`); `None` (the test skips, saying so) otherwise — never under `CI=true`.
fn sdk_host() -> Option<PathBuf> {
    let sdk = Path::new(REPO).join("clients/typescript/node_modules/@modelcontextprotocol/sdk/package.json");
    let node = std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !sdk.exists() || !node {
        let why = "node or the TypeScript SDK is missing: run `bash clients/install.sh typescript`";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("SKIPPED real-host tests: {why}");
        return None;
    }
    Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sdk-client.mjs"))
}

/// The scenarios tagged `host` (as `mcp-harness list --tag host` shows them), each with its
/// transport (the first it lists).
fn host_scenarios() -> Vec<(String, PathBuf)> {
    let files = mcp_harness::discover::scenario_files(&[Path::new(REPO).join("scenarios")]).expect("the library");
    let loaded = mcp_harness::discover::load_all(&files).expect("the library loads");
    loaded
        .into_iter()
        .filter(|(p, s)| mcp_harness::select::tags(p, s).contains("host"))
        .map(|(p, s)| (s.transport.to_vec()[0].as_str().to_string(), p))
        .collect()
}

fn host(fixture: &Path, kind: &str, server: &[&str]) -> Child {
    Command::new("node")
        .arg(fixture)
        .args(["host", kind])
        .args(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts")
}

/// Reads `r` until a line holding `needle`; the lines read.
async fn until(r: impl tokio::io::AsyncRead + Unpin, needle: &str) -> String {
    let mut lines = BufReader::new(r).lines();
    let mut seen = String::new();
    while let Ok(Some(l)) = lines.next_line().await {
        seen.push_str(&l);
        seen.push('\n');
        if l.contains(needle) {
            return seen;
        }
    }
    panic!("no line with {needle:?}; read:\n{seen}")
}

/// One host session against `scenario`, recorded to `record`.
async fn session(fixture: &Path, transport: &str, scenario: &Path, record: &Path) {
    let (scenario, record) = (scenario.to_str().expect("utf8"), record.to_str().expect("utf8"));
    if transport == "stdio" {
        let mut h = host(fixture, "stdio", &[HARNESS, "mock", "stdio", scenario, "--record", record]);
        until(h.stderr.take().expect("stderr"), SCRIPT_OVER).await;
        drop(h.stdin.take());
        // A host may refuse the session (a version it does not speak): that is its part of
        // the recording, judged by check-record.
        h.wait().await.expect("host exits");
        return;
    }
    let mut mock = Command::new(HARNESS)
        .args(["mock", "serve", scenario, "--record", record])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("mcp-mock serve starts");
    let url = until(mock.stdout.take().expect("stdout"), "http://").await.trim().to_string();
    let mut h = host(fixture, "http", &[&url]);
    until(mock.stderr.take().expect("stderr"), SCRIPT_OVER).await;
    drop(h.stdin.take());
    h.wait().await.expect("host exits");
    let pid = nix::unistd::Pid::from_raw(mock.id().expect("pid") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = mock.wait().await.expect("mock exits");
    assert!(status.success(), "mcp-mock serve did not exit 0 on SIGTERM: {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_host_scenario_passes_with_an_sdk_host_and_the_readme_uses_them() {
    let Some(fixture) = sdk_host() else { return };
    let scenarios = host_scenarios();
    let readme = std::fs::read_to_string(Path::new(REPO).join("README.md")).expect("README");
    let section = readme.split("## Point a real application at a scenario").nth(1).expect("the README's host section");
    let section = section.split("\n## ").next().unwrap_or_default();
    let examples: Vec<&str> = section
        .split(['"', ' ', '\n'])
        .filter_map(|w| w.find("scenarios/").map(|i| &w[i..]))
        .filter(|w| w.ends_with(".yaml"))
        .collect();
    assert!(examples.iter().any(|e| e.starts_with("scenarios/stdio/")), "no stdio example in the README");
    assert!(examples.iter().any(|e| e.starts_with("scenarios/http/")), "no HTTP example in the README");
    for example in &examples {
        assert!(
            scenarios.iter().any(|(_, p)| p.ends_with(example)),
            "the README's host example {example} is not tagged `host`: a host cannot pass it"
        );
    }
    assert!(scenarios.iter().any(|(t, _)| t == "http"), "no HTTP scenario is tagged host: {scenarios:?}");
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, (transport, scenario)) in scenarios.iter().enumerate() {
        let record = dir.path().join(format!("session-{i}.txt"));
        tokio::time::timeout(SESSION_DEADLINE, session(&fixture, transport, scenario, &record))
            .await
            .unwrap_or_else(|_| panic!("the host session with {} did not end", scenario.display()));
        let out = std::process::Command::new(HARNESS)
            .arg("check-record")
            .arg(scenario)
            .arg(&record)
            .output()
            .expect("check-record");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.starts_with("PASS"),
            "a host failed {} ({transport}), which is tagged `host`:\n{stdout}{}",
            scenario.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
