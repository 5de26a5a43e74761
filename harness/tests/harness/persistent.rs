//! The `cmd+persistent:` target with a tiny fake driver (a Python script, standard library
//! only) that speaks the persistent framing: one process serves many plans; a driver that
//! crashes mid-plan fails only that run and the next run gets a fresh process; a hang is
//! killed at the run's deadline and replaced; a driver that never announces the mode is a
//! clear error. The fake reports, as each step's result, its pid and how many jobs it has
//! served, which is what the tests read. No test sleeps: each waits on the run itself.

use mcp_harness::Target;
use mcp_harness::runner::{self, RunConfig};
use mcp_results::{ProcessEnd, RunResult, Status, StepStatus};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DEADLINE_MS: u64 = 500;

/// The fake persistent driver. Its behaviour comes from the scenario's name: `crash` exits 3
/// after step 1, `hang` stops after step 1, `chatty` writes a line after its `done`,
/// `unwaited` (stdio) spawns the mock stopped, writes a request, closes the mock's stdin and
/// says `done` without waiting for it (the mock resumes 300 ms later: a loaded machine).
const FAKE_DRIVER: &str = r#"
import json, os, signal, subprocess, sys, threading, time
def emit(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
if os.environ.get("MCP_HARNESS_PERSISTENT") != "1":
    print("one-shot mode is not faked here", file=sys.stderr); sys.exit(2)
if os.environ.get("FAKE_NO_HELLO"):
    emit({"step": 1, "ok": True})
    time.sleep(3600)
emit({"persistent": 1})
served = 0
for line in sys.stdin:
    job = json.loads(line)
    served += 1
    name = job["env"]["MCP_CONFORMANCE_SCENARIO"]
    plan = json.load(open(job["env"]["MCP_HARNESS_PLAN_FILE"]))
    if "unwaited" in name:
        mock = subprocess.Popen(json.loads(job["env"]["MCP_HARNESS_SERVER_COMMAND"]), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        os.kill(mock.pid, signal.SIGSTOP)
        mock.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'); mock.stdin.close()
        def resume(m=mock):
            time.sleep(0.3); os.kill(m.pid, signal.SIGCONT); m.wait()
        threading.Thread(target=resume, daemon=True).start()
    for i in range(len(plan)):
        emit({"step": i + 1, "ok": True, "result": {"pid": os.getpid(), "served": served}})
        if i == 0 and "crash" in name:
            os._exit(3)
        if i == 0 and "hang" in name:
            time.sleep(3600)
    emit({"done": job["run"]})
    if "chatty" in name:
        emit({"step": 1, "ok": True, "result": {"late": True}})
"#;

/// A directory with the fake driver and one scenario per behaviour.
struct Fake {
    dir: tempfile::TempDir,
    config: Arc<RunConfig>,
}

impl Fake {
    fn new(env_prefix: &str) -> Fake {
        let dir = tempfile::Builder::new().prefix("mcp-persistent-").tempdir().expect("tempdir");
        let driver = dir.path().join("fake_driver.py");
        std::fs::write(&driver, FAKE_DRIVER).expect("write driver");
        let line = format!("{env_prefix}python3 {}", driver.display());
        let config = Arc::new(RunConfig::new(
            Target::parse(&format!("cmd+persistent:{line}")).expect("parses"),
            vec![env!("CARGO_BIN_EXE_mcp-harness").to_string(), "mock".into()],
        ));
        Fake { dir, config }
    }

    fn scenario(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{name}.yaml"));
        let yaml = format!(
            "name: {name}\nsummary: s\ntransport: http\nrevision: 2025-11-25\ndeadline_ms: {DEADLINE_MS}\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n"
        );
        std::fs::write(&path, yaml).expect("write scenario");
        path
    }

    /// Runs the scenario `name` on the shared target (so on its pool of drivers).
    async fn run(&self, name: &str) -> (RunResult, Duration) {
        let path = self.scenario(name);
        let scenario = mcp_harness::load(&path).expect("loads");
        let job = runner::jobs(vec![(path, scenario)], &self.config.target).remove(0);
        let started = Instant::now();
        let result = runner::run_one(&job, &self.config).await;
        (result, started.elapsed())
    }
}

/// The pid and job count the fake reported as step `n`'s result.
fn served_by(r: &RunResult, n: usize) -> (u64, u64) {
    let step = &r.steps[n - 1];
    assert_eq!(step.status, StepStatus::Ok, "{:?}", r.steps);
    let result = step.result.as_ref().expect("a result");
    (result["pid"].as_u64().expect("pid"), result["served"].as_u64().expect("served"))
}

fn end(r: &RunResult) -> ProcessEnd {
    r.client.as_ref().expect("a process report").end.clone()
}

fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_driver_process_serves_many_plans() {
    let fake = Fake::new("");
    let mut pids = Vec::new();
    for i in 0..3 {
        let (r, _) = fake.run("fine").await;
        assert_eq!(end(&r), ProcessEnd::Exited { code: 0 }, "done stands for exit 0: {:?}", r.client);
        let (pid, served) = served_by(&r, 2);
        assert_eq!(served, i + 1, "the same process counted its jobs");
        pids.push(pid);
    }
    assert!(pids.windows(2).all(|w| w[0] == w[1]), "one process served all three: {pids:?}");
    fake.config.target.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_fails_only_its_run_and_the_next_run_gets_a_fresh_driver() {
    let fake = Fake::new("");
    let (before, _) = fake.run("fine").await;
    let (first, _) = served_by(&before, 2);
    let (crashed, _) = fake.run("crash").await;
    assert_eq!(end(&crashed), ProcessEnd::Exited { code: 3 }, "{:?}", crashed.client);
    // A crash is a robustness finding (a warning for a third party); cut short, the run is no pass.
    assert_ne!(crashed.status, Status::Passed);
    assert!(crashed.warnings.iter().any(|w| w.message.starts_with("client exited 3")), "{:?}", crashed.warnings);
    assert_eq!(crashed.steps[1].status, StepStatus::NotRun, "{:?}", crashed.steps);
    assert_eq!(served_by(&crashed, 1).0, first, "the crash was in the warm driver");
    next_run_has_a_fresh_driver(&fake, first).await;
}

/// Runs a plain plan and asserts a fresh driver (not `old`, at its first job) served it.
async fn next_run_has_a_fresh_driver(fake: &Fake, old: u64) -> RunResult {
    let (after, _) = fake.run("fine").await;
    assert_eq!(end(&after), ProcessEnd::Exited { code: 0 }, "{:?}", after.client);
    let (pid, served) = served_by(&after, 2);
    assert!(pid != old && served == 1, "a fresh driver serves the next run: pid {pid} (old {old}), job {served}");
    after
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_is_killed_at_the_run_deadline_and_replaced() {
    let fake = Fake::new("");
    let (hung, took) = fake.run("hang").await;
    assert_eq!(end(&hung), ProcessEnd::KilledAtDeadline, "{:?}", hung.client);
    // The driver's wait for a CPU during this job was read before the kill.
    assert!(hung.client.as_ref().is_some_and(|c| c.cpu_wait_ms.is_some()), "{:?}", hung.client);
    let deadline = Duration::from_millis(DEADLINE_MS) + fake.config.target.startup_allowance();
    // Killed at the deadline, not before; the upper bound only tells a kill from a driver
    // that never ends (a loaded machine may take seconds past the deadline to reap it).
    assert!(took >= deadline && took < deadline + Duration::from_secs(30), "took {took:?} for {deadline:?}");
    let (hung_pid, _) = served_by(&hung, 1);
    assert!(!alive(hung_pid), "the hung driver's group was killed");
    next_run_has_a_fresh_driver(&fake, hung_pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_driver_that_writes_after_done_is_not_reused() {
    let fake = Fake::new("");
    let (chatty, _) = fake.run("chatty").await;
    let (first, _) = served_by(&chatty, 2);
    let after = next_run_has_a_fresh_driver(&fake, first).await;
    assert!(after.client.as_ref().is_some_and(|c| c.other_stdout.is_empty()), "{:?}", after.client);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mock_still_reading_at_done_is_waited_for_before_the_record_is_read() {
    let fake = Fake::new("");
    let path = fake.dir.path().join("unwaited.yaml");
    let yaml = "name: unwaited\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\ndeadline_ms: 3000\nclient:\n  - op: connect\n    handshake: false\nserver:\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {}\n";
    std::fs::write(&path, yaml).expect("write scenario");
    let scenario = mcp_harness::load(&path).expect("loads");
    let job = runner::jobs(vec![(path, scenario)], &fake.config.target).remove(0);
    let r = runner::run_one(&job, &fake.config).await;
    // No check of its own (so not applicable to a third party), but a request missing from
    // the record would fail `always: server script completes`.
    assert!(r.failures.is_empty(), "the request the mock read after `done` is in the record: {:?}", r.failures);
    assert_eq!(r.status, Status::NotApplicable, "{:?}", r.reason);
    fake.config.target.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_driver_that_does_not_announce_the_mode_is_a_clear_error() {
    let fake = Fake::new("env FAKE_NO_HELLO=1 ");
    let (r, _) = fake.run("fine").await;
    assert_eq!(r.status, Status::Error, "{r:?}");
    let reason = r.reason.as_deref().unwrap_or_default();
    assert!(reason.contains(r#"first stdout line is not {"persistent":1}"#), "{reason}");
    // Ended by its first line, not by the run's deadline (a wall-time bound here failed under
    // load: 2.8 s against the 2.5 s deadline, on the same path).
    assert!(matches!(end(&r), ProcessEnd::NotStarted { .. }), "{:?}", r.client);
}

/// A real client through the framing: the reference client (standard library only) in the
/// persistent mode passes scenarios of all three transports against the real mocks, as it
/// does one-shot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_client_passes_real_scenarios_in_the_persistent_mode() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let run = root.join("clients/reference/run");
    let config = Arc::new(RunConfig::new(
        Target::parse(&format!("cmd+persistent:{}", run.display())).expect("parses"),
        vec![env!("CARGO_BIN_EXE_mcp-harness").to_string(), "mock".into()],
    ));
    let scenarios = [
        "stdio/out-of-order-responses",
        "http/sse-reply",
        "legacy-sse/endpoint-query-string-session",
        "stdio/handshake-order",
    ];
    for name in scenarios {
        let path = root.join(format!("scenarios/{name}.yaml"));
        let scenario = mcp_harness::load(&path).expect("loads");
        let job = runner::jobs(vec![(path, scenario)], &config.target).remove(0);
        let r = runner::run_one(&job, &config).await;
        assert_eq!(r.status, Status::Passed, "{name}: {:?} {:?} {:?}", r.reason, r.failures, r.client);
        assert_eq!(end(&r), ProcessEnd::Exited { code: 0 }, "{name}");
    }
    config.target.finish();
}
