//! Process hygiene: a server that ignores SIGTERM and never exits still finishes within its
//! deadline + 1 s, and no process is left behind.

use mcp_harness::Target;
use mcp_harness::runner::{self, RunConfig};
use mcp_scenario::results::Status;
use std::sync::Arc;
use std::time::{Duration, Instant};

const STUBBORN: &str = "name: stubborn\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\ndeadline_ms: 4000\nclient:\n  - op: connect\n  - op: close\nserver:\n  - op: handshake\n  - op: ignore_sigterm\n  - op: ignore_stdin_eof\n  - op: stall\nchecks:\n  - signal: {name: SIGTERM}\n";

/// Processes whose command line mentions `needle` (the run's unique scenario path).
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(needle) {
            found.push(format!(
                "{} {}",
                entry.file_name().to_string_lossy(),
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    found
}

#[tokio::test]
async fn sigterm_ignoring_server_is_killed_within_deadline_plus_one_second() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("stubborn.yaml");
    std::fs::write(&path, STUBBORN).expect("write");
    let scenario = mcp_harness::load(&path).expect("loads");
    let config = RunConfig {
        target: Target::bundled(None),
        mock_command: vec![env!("CARGO_BIN_EXE_mcp-harness").to_string(), "mock".into()],
        snapshots: Default::default(),
        strict: false,
        compare_snapshots: false,
        fail_fast: false,
    };
    let job = runner::jobs(vec![(path.clone(), scenario)], &config.target).remove(0);
    let started = Instant::now();
    let result = runner::run_one(&job, &Arc::new(config)).await;
    let took = started.elapsed();
    assert!(took < Duration::from_millis(4000 + 1000), "took {took:?}");
    assert_eq!(result.status, Status::Passed, "{:?}\n{}", result.failures, result.transcript);
    assert!(result.transcript.contains("SIGTERM received (ignored)"), "{}", result.transcript);
    let left = processes_mentioning(path.to_str().expect("utf8"));
    assert!(left.is_empty(), "processes left behind: {left:?}");
    // Not even a zombie: the transport reaped its child.
    assert!(!result.mock_pids.is_empty());
    for pid in &result.mock_pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(stat.is_empty(), "mock {pid} still exists: {stat}");
    }
}
