//! Process hygiene: a server that ignores SIGTERM and never exits still finishes within its
//! deadline + 1 s, and no process is left behind; a slice of the library leaves no process
//! running (checked under a subreaper) and no listener open.

use mcp_harness::runner;
use mcp_results::Status;
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
async fn sigterm_ignoring_server_is_killed_and_reaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("stubborn.yaml");
    std::fs::write(&path, STUBBORN).expect("write");
    let scenario = mcp_harness::load(&path).expect("loads");
    let config = crate::scenarios::config();
    let job = runner::jobs(vec![(path.clone(), scenario)], &config.target).remove(0);
    let started = Instant::now();
    let result = runner::run_one(&job, &Arc::new(config)).await;
    let took = started.elapsed();
    // The mock ignores SIGTERM and stdin EOF and stalls for good: only the kill ends it. The
    // bound tells that kill from a hang; how soon after the deadline it lands is a loaded
    // machine's scheduling, not the harness's rule.
    assert!(took < Duration::from_secs(30), "took {took:?}");
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

/// A representative slice of the library: stdio, Streamable HTTP, legacy SSE, a fault proxy
/// and (where nginx is installed) an nginx proxy — every way a run starts processes and
/// listeners. Short scenarios, so the whole slice runs in a few seconds.
fn library_slice() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files = vec![
        "stdio/blank-lines-skipped.yaml",
        "stdio/close-pending-request.yaml",
        "http/json-reply.yaml",
        "http/get-listener-delivers-messages.yaml",
        "http/delete-on-close.yaml",
        "legacy-sse/endpoint-after-messages.yaml",
        "legacy-sse/caller-cancel-posts-cancelled.yaml",
        "proxies/faults-cut-after-first-event.yaml",
    ];
    if std::process::Command::new("nginx").arg("-v").output().is_ok_and(|o| o.status.success()) {
        files.push("proxies/nginx-buffering-on-still-streams-events.yaml");
    }
    files.into_iter().map(|f| root.join(f)).collect()
}

/// Runs `argv` under a subreaper (a few lines of Python: `prctl(PR_SET_CHILD_SUBREAPER)`),
/// so every process it leaves behind, however it detached, ends up the wrapper's child:
/// once `argv` exits, the wrapper lists its living children (ignoring those already dying
/// of a SIGKILL, whose exit is only pending), kills and reaps them (and theirs, in turn),
/// and prints `{"code": …, "left": […]}`.
fn run_under_subreaper(argv: &[String]) -> (i32, Vec<String>) {
    const WRAPPER: &str = r#"
import ctypes, json, os, signal, subprocess, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
me, left = os.getpid(), []
def living_children():
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{pid}/stat").read()
            status = open(f"/proc/{pid}/status").read()
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
        pending = 0
        for line in status.splitlines():
            if line.startswith(("SigPnd:", "ShdPnd:")):
                pending |= int(line.split()[1], 16)
        if int(ppid) == me and state not in "ZX" and not pending & (1 << (signal.SIGKILL - 1)):
            yield int(pid), cmd
# Kill what is left, reap one child, look again: a killed child's own children become ours
# when it dies (before its reap returns), so they are found on the next round.
while True:
    for pid, cmd in living_children():
        left.append(f"{pid} {cmd}")
        os.kill(pid, signal.SIGKILL)
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
print(json.dumps({"code": code, "left": left}))
"#;
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(WRAPPER)
        .args(argv)
        .output()
        .expect("python3 runs the subreaper wrapper");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("wrapper output: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let left = report["left"].as_array().into_iter().flatten().filter_map(|l| l.as_str().map(str::to_string));
    (report["code"].as_i64().unwrap_or(-1) as i32, left.collect())
}

/// Listening TCP sockets (`/proc/net/tcp`, `tcp6`, state `0A`) on `ports`, whoever holds
/// them (the HTTP mocks are child processes, so the listener of a leaked mock is not ours).
fn listeners_on(ports: &[u16]) -> Vec<String> {
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(table).unwrap_or_default().lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state)) = (fields.get(1), fields.get(3)) else { continue };
            let port = local.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
            if *state == "0A" && port.is_some_and(|p| ports.contains(&p)) {
                found.push(format!("{table}: {line}"));
            }
        }
    }
    found
}

/// After a slice of the library run in this process, nobody listens on a port a run
/// reported any more; and after the same slice through the CLI, for the bundled client and
/// for an external one (the reference client, Python standard library only), nothing any
/// run started is still running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slice_of_the_library_leaves_no_process_and_no_listener() {
    let slice = library_slice();
    let reports = tempfile::tempdir().expect("tempdir");
    let reference = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../clients/reference/run");
    let started = Instant::now();
    let config = Arc::new(super::scenarios::config());
    let scenarios = slice.iter().map(|p| (p.clone(), mcp_harness::load(p).expect("loads"))).collect();
    let mut ports = Vec::new();
    for job in runner::jobs(scenarios, &config.target) {
        let result = runner::run_one(&job, &config).await;
        ports.extend(result.wire.iter().flatten().filter_map(|e| match e {
            mcp_scenario::wire::WireEvent::Listening { port } => Some(*port),
            _ => None,
        }));
    }
    assert!(!ports.is_empty(), "the HTTP runs report their ports");
    let open = listeners_on(&ports);
    assert!(open.is_empty(), "listeners still open after their runs: {open:?}");
    for target in ["bundled".to_string(), format!("cmd:{}", reference.display())] {
        let mut argv = vec![env!("CARGO_BIN_EXE_mcp-harness").to_string(), "run".into(), "--no-snapshots".into()];
        argv.extend(["--reports".into(), reports.path().display().to_string(), "--target".into(), target.clone()]);
        argv.extend(slice.iter().map(|p| p.display().to_string()));
        let (code, left) = run_under_subreaper(&argv);
        assert!(code == 0 || code == 1, "{target}: the run itself broke (exit {code})");
        assert!(left.is_empty(), "{target}: processes left running after the harness exited: {left:?}");
    }

    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
}
