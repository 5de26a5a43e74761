//! The `cmd:"<command line>"` target: any MCP client as an external program, driven through
//! the scenario's client plan under the contract documented in `clients/README.md`.
//!
//! The contract mirrors the official MCP conformance suite's client contract (the server
//! URL is the last argument; `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_PROTOCOL_VERSION`)
//! and adds the plan, the transport and, for stdio, the mock's command line in environment
//! variables. The client answers with one JSON line per plan step on stdout.
//!
//! Process hygiene is this module's other half, because an external client is the least
//! trusted thing the harness runs: it starts in its own process group with stdin from
//! `/dev/null`; at the deadline (or when it floods stdout) the whole group is killed; its
//! pipes are read only for a bounded time once it is gone, because a grandchild that
//! inherited them may hold them open forever; stdout and stderr are capped (of stderr only
//! a tail is kept); whoever left the group and outlived the client is found and killed
//! (`escapees`).

use super::declaration::{CONTRACT_ENV, Declared};
use super::{Client, ClientRun, Endpoint, escapees};
use crate::outcome::{describe_step, lock, not_run};
use crate::process_group;
use crate::scope::TargetKind;
use crate::transcript::render::escape;
use futures::future::BoxFuture;
use mcp_results::{
    ClientOutcome, Escaped, Leftover, Pipe, ProcessEnd, ProcessReport, Reportable, Sdk, StepOutcome, StepStatus,
};
use mcp_scenario::{ClientStep, Scenario, TransportName};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::Notify;

/// Bytes of stdout a client may write; past this it is killed and reported as flooding.
pub const STDOUT_CAP: usize = 1 << 20;
/// Bytes of stderr a client may write; past this it is killed and reported as flooding.
/// Far above any log: stderr is often the mock's too, inherited through the SDK, and the
/// library's noisiest scenario writes 2 MiB there on purpose.
pub const STDERR_CAP: usize = 64 << 20;
/// How much of stderr the report keeps (its end); the rest is counted and dropped, so a
/// flood costs no memory.
pub const STDERR_TAIL: usize = 4096;
/// Non-contract stdout lines kept as diagnostics.
const OTHER_LINES: usize = 40;
/// How long to keep reading a client's pipes after it exited by itself: long enough for
/// the mock it spawned to see stdin EOF and exit, short enough that a grandchild holding
/// the pipes open cannot stall the run.
pub(super) const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(1000);
/// How long to keep reading after the whole group was killed.
pub(super) const DRAIN_AFTER_KILL: Duration = Duration::from_millis(300);
pub use crate::scope::STARTUP_ENV;
use crate::scope::{DEFAULT_STARTUP_MS, Deadline, STARTUP_FACTOR};

/// An external client program (`cmd:<command line>`).
#[derive(Debug, Clone)]
pub struct Cmd {
    /// The command line, as given.
    line: String,
    /// What the program declared, once asked (before the runs).
    declared: Arc<std::sync::OnceLock<Declared>>,
    /// How long the program took to answer that question: its runtime's start-up, measured.
    started_in: Arc<std::sync::OnceLock<Duration>>,
}

impl Cmd {
    /// The target for a command line (split like a shell would when a run starts it).
    pub fn new(command_line: impl Into<String>) -> Self {
        Cmd { line: command_line.into(), declared: Arc::default(), started_in: Arc::default() }
    }

    /// Asks the program for its declaration, once, and shows the notice it calls for.
    pub(super) async fn ask_declaration(&self) {
        if self.declared.get().is_some() {
            return;
        }
        let asked = std::time::Instant::now();
        let declared = match shlex::split(&self.line) {
            Some(argv) => Declared::ask(&argv).await,
            None => Declared::No(StartError::Unsplittable(self.line.clone()).to_string()),
        };
        // Only a declaration's time is a start-up: a program that printed none may have
        // idled until the question timed out.
        if matches!(declared, Declared::Yes(_)) {
            let _ = self.started_in.set(asked.elapsed());
        }
        if let Some(notice) = declared.notice(&self.spec()) {
            eprintln!("{notice}");
        }
        let _ = self.declared.set(declared);
    }
}

impl Client for Cmd {
    fn spec(&self) -> String {
        format!("cmd:{}", self.line)
    }

    fn kind(&self) -> TargetKind {
        TargetKind::External
    }

    fn covers(&self, _transport: TransportName) -> bool {
        true
    }

    /// Scenario deadlines are sized for an in-process client, and an interpreter needs time
    /// to start before step 1: [`STARTUP_FACTOR`] times the start-up measured when the
    /// program was asked for its declaration (a loaded machine starts it slowly, and every
    /// run then gets the room it needs), at least [`DEFAULT_STARTUP_MS`];
    /// `MCP_HARNESS_STARTUP_MS` sets it outright.
    /// Its runtime's start-up, as measured before the runs.
    fn usual_startup(&self) -> Duration {
        self.started_in.get().copied().unwrap_or_default()
    }

    fn startup_allowance(&self) -> Duration {
        if let Some(ms) = std::env::var(STARTUP_ENV).ok().and_then(|v| v.trim().parse().ok()) {
            return Duration::from_millis(ms);
        }
        let measured = self.started_in.get().map_or(Duration::ZERO, |d| *d * STARTUP_FACTOR);
        measured.max(Duration::from_millis(DEFAULT_STARTUP_MS))
    }

    /// An external client burns CPU starting its runtime (node, python); starved runs
    /// would miss their deadlines.
    fn runs_per_core(&self) -> usize {
        1
    }

    fn snapshot_label(&self) -> Option<String> {
        Some(client_slug(&self.line))
    }

    fn run<'a>(&'a self, run: ClientRun<'a>) -> BoxFuture<'a, ClientOutcome> {
        Box::pin(run_program(&self.line, run))
    }

    fn warm_up(&self, _slots: usize) -> BoxFuture<'_, ()> {
        Box::pin(self.ask_declaration())
    }

    fn declines(&self, scenario: &Scenario) -> Option<String> {
        self.declared.get()?.declines(scenario)
    }
}

/// A file-name-safe label for an external client command line.
pub fn client_slug(line: &str) -> String {
    let slug: String = line
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    slug.chars().take(60).collect()
}

/// Why a client program could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The command line does not split like a shell would.
    #[error("cannot split the command line {0:?} like a shell would (an unclosed quote?); quote it as in sh")]
    Unsplittable(String),
    /// The plan file could not be written into the run directory.
    #[error("cannot write the plan to {}: {source}", path.display())]
    PlanFile {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The command line holds no program.
    #[error("the command line is empty: give cmd:\"<program> [args…]\"")]
    Empty,
    /// The program could not be spawned.
    #[error("cannot run {program:?}: {source} ({})", spawn_hint(.source))]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The program and arguments for a run: the command line split like a shell would, plus
/// the mock's URL as the last argument for HTTP transports.
pub fn argv(command_line: &str, endpoint: &Endpoint) -> Result<Vec<String>, StartError> {
    let mut argv = shlex::split(command_line).ok_or_else(|| StartError::Unsplittable(command_line.to_string()))?;
    if argv.is_empty() {
        return Err(StartError::Empty);
    }
    if let Endpoint::Url(url) = endpoint {
        argv.push(url.clone());
    }
    Ok(argv)
}

fn spawn_hint(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(code) if code == nix::errno::Errno::E2BIG as i32 => {
            "the command line or environment is over the kernel's limit"
        }
        _ => "is it installed? see clients/README.md",
    }
}

/// The plan's name in the run directory (`MCP_HARNESS_PLAN_FILE`).
pub const PLAN_FILE: &str = "plan.json";

/// The largest plan also passed inline in `MCP_HARNESS_PLAN`: Linux caps one environment
/// string at 128 KiB (MAX_ARG_STRLEN), so a larger plan travels only in the file.
pub const PLAN_INLINE_MAX: usize = 64 * 1024;

/// The environment the contract promises the client. The plan is written to
/// `<run_dir>/plan.json` (`MCP_HARNESS_PLAN_FILE`) and, when small, also given inline.
pub fn contract_env(
    scenario: &Scenario,
    transport: TransportName,
    endpoint: &Endpoint,
    run_dir: &std::path::Path,
) -> Result<Vec<(String, String)>, StartError> {
    let plan = serde_json::to_string(&scenario.client).unwrap_or_else(|_| "[]".into());
    let plan_file = run_dir.join(PLAN_FILE);
    std::fs::write(&plan_file, &plan).map_err(|source| StartError::PlanFile { path: plan_file.clone(), source })?;
    let mut env = vec![
        ("MCP_HARNESS_RUN_DIR".to_string(), run_dir.display().to_string()),
        ("MCP_CONFORMANCE_SCENARIO".into(), scenario.name.clone()),
        ("MCP_CONFORMANCE_PROTOCOL_VERSION".into(), scenario.revision.as_str().to_string()),
        ("MCP_HARNESS_TRANSPORT".into(), transport.as_str().to_string()),
        ("MCP_HARNESS_PLAN_FILE".into(), plan_file.display().to_string()),
        (CONTRACT_ENV.into(), mcp_scenario::contract::VERSION.into()),
    ];
    if plan.len() <= PLAN_INLINE_MAX {
        env.push(("MCP_HARNESS_PLAN".into(), plan));
    }
    if let Endpoint::Command(mock) = endpoint {
        env.push(("MCP_HARNESS_SERVER_COMMAND".into(), serde_json::to_string(mock).unwrap_or_else(|_| "[]".into())));
    }
    Ok(env)
}

/// One step line as the client reported it.
#[derive(Debug, Clone)]
enum Reported {
    Ok(Option<Value>),
    Error(String),
    /// An error the driver made, not the SDK (`"by": "driver"`).
    DriverError(String),
    Unsupported(String),
}

/// Everything read from the client's stdout, with arrival times.
#[derive(Debug, Default)]
pub(super) struct Collected {
    steps: BTreeMap<usize, (Reported, Option<u64>, Instant)>,
    notifications: Vec<(String, Value)>,
    reports: Vec<String>,
    cannot_report: Vec<Reportable>,
    sdk: Option<Sdk>,
    other: Vec<String>,
    pub(super) stdout_bytes: usize,
    /// The pipe the client flooded, once it wrote past that pipe's cap.
    pub(super) flooded: Option<Pipe>,
    /// The last [`STDERR_TAIL`] bytes of stderr.
    pub(super) stderr: VecDeque<u8>,
    pub(super) stderr_bytes: usize,
}

impl Collected {
    /// Files one stdout line: a contract line, or a diagnostic.
    pub(super) fn accept(&mut self, line: &[u8], plan_len: usize) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let parsed: Option<Value> = serde_json::from_slice(line).ok();
        let Some(Value::Object(obj)) = parsed else {
            return self.note(escape(line));
        };
        if let Some(step) = obj.get("step") {
            let Some(n) = step.as_u64().map(|n| n as usize).filter(|n| (1..=plan_len).contains(n)) else {
                return self.note(format!("(step out of range 1..={plan_len}) {}", escape(line)));
            };
            if self.steps.contains_key(&n) {
                return self.note(format!("(step {n} reported twice; the first report counts) {}", escape(line)));
            }
            let elapsed = obj.get("elapsed_ms").and_then(Value::as_u64);
            let reported = if let Some(reason) = obj.get("unsupported") {
                Reported::Unsupported(reason.as_str().map(str::to_string).unwrap_or_else(|| reason.to_string()))
            } else {
                match obj.get("ok").and_then(Value::as_bool) {
                    Some(true) => Reported::Ok(obj.get("result").cloned().filter(|v| !v.is_null())),
                    Some(false) => {
                        let text = match obj.get("error") {
                            Some(Value::String(s)) => s.clone(),
                            Some(other) => other.to_string(),
                            None => "(the client gave no error text)".into(),
                        };
                        if obj.get("by").and_then(Value::as_str) == Some("driver") {
                            Reported::DriverError(text)
                        } else {
                            Reported::Error(text)
                        }
                    }
                    None => {
                        return self.note(format!("(step line without \"ok\" or \"unsupported\") {}", escape(line)));
                    }
                }
            };
            self.steps.insert(n, (reported, elapsed, Instant::now()));
        } else if let Some(n) = obj.get("notification") {
            let method = n.get("method").and_then(Value::as_str).unwrap_or("").to_string();
            let params = n.get("params").cloned().unwrap_or(Value::Null);
            self.notifications.push((method, params));
        } else if let Some(r) = obj.get("report") {
            self.reports.push(r.as_str().map(str::to_string).unwrap_or_else(|| r.to_string()));
        } else if let Some(sdk) = obj.get("sdk") {
            match serde_json::from_value::<Sdk>(sdk.clone()) {
                Ok(sdk) => self.sdk = Some(sdk),
                Err(e) => self.note(format!("(sdk: {e}; write {{\"name\":…,\"version\":…}}) {}", escape(line))),
            }
        } else if let Some(list) = obj.get("cannot_report") {
            match serde_json::from_value::<Vec<Reportable>>(list.clone()) {
                Ok(list) => self.cannot_report.extend(list),
                Err(e) => self.note(format!("(cannot_report: {e}; known: [\"notifications\"]) {}", escape(line))),
            }
        } else {
            self.note(escape(line));
        }
    }

    pub(super) fn note(&mut self, line: String) {
        if self.other.len() < OTHER_LINES {
            self.other.push(line.chars().take(400).collect());
        }
    }
}

/// Reads `pipe` until EOF or an error, handing each chunk to `take` with the collected
/// state locked; `take` stops the reading early by breaking. The pipe stays open: the
/// caller decides when the writer may see it closed.
async fn read_chunks(
    pipe: &mut (impl AsyncRead + Unpin),
    collected: &Mutex<Collected>,
    mut take: impl FnMut(&mut Collected, &[u8]) -> ControlFlow<()>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if take(&mut lock(collected), &buf[..n]).is_break() {
            return;
        }
    }
}

/// What a pipe reader needs to stop a flood: the group to kill and the run to wake.
#[derive(Clone)]
pub(super) struct FloodGuard {
    pub(super) flood: Arc<Notify>,
    pub(super) pgid: u32,
}

impl FloodGuard {
    /// Past a cap the client is flooding: the flood was recorded first (`Collected::flooded`),
    /// now the whole group is killed from here and the run woken; the rest is read and
    /// discarded until EOF. The pipe is never dropped while the flooder lives, so it dies of
    /// our SIGKILL and never of a SIGPIPE it could otherwise report as its own end; and
    /// whichever way the run observes that end, the recorded flood is what classifies it
    /// (see [`run_program`]).
    async fn stop(&self, pipe: &mut (impl AsyncRead + Unpin)) {
        process_group::kill(self.pgid);
        self.flood.notify_one();
        // Discard until every writer is gone (the killed group closes its ends; the run
        // aborts this read once its drain bound passes, for writers outside the group).
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(1..) = pipe.read(&mut buf).await {}
    }
}

/// Reads stdout line by line into `collected`, up to [`STDOUT_CAP`] (see [`FloodGuard`]).
async fn read_stdout(
    mut pipe: impl AsyncRead + Unpin,
    collected: Arc<Mutex<Collected>>,
    guard: FloodGuard,
    plan_len: usize,
) {
    let mut line: Vec<u8> = Vec::new();
    let mut flooded = false;
    read_chunks(&mut pipe, &collected, |c, mut chunk| {
        c.stdout_bytes += chunk.len();
        if c.stdout_bytes > STDOUT_CAP {
            c.flooded.get_or_insert(Pipe::Stdout);
            flooded = true;
            return ControlFlow::Break(());
        }
        while let Some(pos) = chunk.iter().position(|b| *b == b'\n') {
            line.extend_from_slice(&chunk[..pos]);
            c.accept(&line, plan_len);
            line.clear();
            chunk = &chunk[pos + 1..];
        }
        line.extend_from_slice(chunk);
        ControlFlow::Continue(())
    })
    .await;
    if !flooded {
        if !line.is_empty() {
            lock(&collected).accept(&line, plan_len);
        }
        return;
    }
    guard.stop(&mut pipe).await;
}

/// Reads stderr, keeping its last [`STDERR_TAIL`] bytes and counting all of them, up to
/// [`STDERR_CAP`] (see [`FloodGuard`]).
pub(super) async fn read_stderr(mut pipe: impl AsyncRead + Unpin, collected: Arc<Mutex<Collected>>, guard: FloodGuard) {
    let mut flooded = false;
    read_chunks(&mut pipe, &collected, |c, chunk| {
        c.stderr_bytes += chunk.len();
        c.stderr.extend(&chunk[chunk.len().saturating_sub(STDERR_TAIL)..]);
        let excess = c.stderr.len().saturating_sub(STDERR_TAIL);
        c.stderr.drain(..excess);
        if c.stderr_bytes > STDERR_CAP {
            c.flooded.get_or_insert(Pipe::Stderr);
            flooded = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })
    .await;
    if flooded {
        guard.stop(&mut pipe).await;
    }
}

pub(super) fn process_end(status: std::process::ExitStatus) -> ProcessEnd {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ProcessEnd::Exited { code },
        (None, Some(sig)) => ProcessEnd::Signalled {
            signal: nix::sys::signal::Signal::try_from(sig)
                .map(|s| s.as_str().to_string())
                .unwrap_or_else(|_| format!("signal {sig}")),
        },
        (None, None) => ProcessEnd::Exited { code: -1 },
    }
}

/// A recorded flood takes precedence over the exit or signal the run saw: that end is the
/// kill (or broken pipe) the flood caused. A deadline or a failed start stays what it is.
pub(super) fn classify_flood(end: ProcessEnd, flooded: Option<Pipe>) -> ProcessEnd {
    match (end, flooded) {
        (
            ProcessEnd::Exited { .. } | ProcessEnd::Signalled { .. } | ProcessEnd::KilledForFlooding { .. },
            Some(pipe),
        ) => flood_end(pipe),
        (end, _) => end,
    }
}

/// How a client that flooded `pipe` ended.
fn flood_end(pipe: Pipe) -> ProcessEnd {
    let cap = match pipe {
        Pipe::Stdout => STDOUT_CAP,
        Pipe::Stderr => STDERR_CAP,
    };
    ProcessEnd::KilledForFlooding { cap, pipe }
}

/// Runs the client program through the scenario's plan and returns the same
/// [`ClientOutcome`] the bundled target produces (plus the process report); `hung` says
/// whether it ran until the deadline. Never panics and never waits unboundedly: the worst
/// case is the deadline plus [`DRAIN_AFTER_EXIT`] or [`DRAIN_AFTER_KILL`] plus a bounded reap.
async fn run_program(command_line: &str, run: ClientRun<'_>) -> ClientOutcome {
    let ClientRun { scenario, transport, endpoint, deadline, record } = run;
    let run_dir = record.dir();
    let plan = &scenario.client;
    let started = Instant::now();
    let not_started = |error: StartError| ProcessReport {
        end: ProcessEnd::NotStarted { error: error.to_string() },
        stdout_bytes: 0,
        other_stdout: Vec::new(),
        stderr_bytes: 0,
        stderr_tail: String::new(),
        wall_ms: 0,
        leftovers: Vec::new(),
        escaped: Vec::new(),
        sdk: None,
        cpu_wait_ms: None,
    };
    let argv = match argv(command_line, &endpoint) {
        Ok(a) => a,
        Err(e) => return assemble(plan, Collected::default(), not_started(e), started, deadline),
    };
    let env = match contract_env(scenario, transport, &endpoint, run_dir) {
        Ok(env) => env,
        Err(e) => return assemble(plan, Collected::default(), not_started(e), started, deadline),
    };
    let mut cmd = tokio::process::Command::new(&argv[0]);
    process_group::lead_own_group(cmd.args(&argv[1..]).envs(env), std::process::Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(source) => {
            let error = StartError::Spawn { program: argv[0].clone(), source };
            return assemble(plan, Collected::default(), not_started(error), started, deadline);
        }
    };
    let pgid = child.id().unwrap_or(0);
    let collected = Arc::new(Mutex::new(Collected::default()));
    let flood = Arc::new(Notify::new());
    let guard = FloodGuard { flood: flood.clone(), pgid };
    let traces = {
        use std::os::fd::AsRawFd;
        let out = child.stdout.as_ref().map(|p| (p.as_raw_fd(), Pipe::Stdout));
        let err = child.stderr.as_ref().map(|p| (p.as_raw_fd(), Pipe::Stderr));
        escapees::Traces::new(run_dir, &[out, err].into_iter().flatten().collect::<Vec<_>>())
    };
    let mut readers = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        readers.push(tokio::spawn(read_stdout(stdout, collected.clone(), guard.clone(), plan.len())));
    }
    if let Some(stderr) = child.stderr.take() {
        readers.push(tokio::spawn(read_stderr(stderr, collected.clone(), guard)));
    }

    let end = tokio::select! {
        biased;
        () = flood.notified() => flood_end(lock(&collected).flooded.unwrap_or_default()),
        status = child.wait() => match status {
            Ok(s) => process_end(s),
            Err(e) => ProcessEnd::NotStarted { error: format!("cannot wait for the client: {e}") },
        },
        () = tokio::time::sleep(deadline.total()) => ProcessEnd::KilledAtDeadline,
    };
    // The flood is a recorded fact, set before the reader killed the group: when it is
    // there, the exit (or signal) the wait saw is the kill it caused, not the client's own
    // end, however the select above was ordered.
    let end = classify_flood(end, lock(&collected).flooded);
    let killed = matches!(end, ProcessEnd::KilledAtDeadline | ProcessEnd::KilledForFlooding { .. });
    // Read before the kill, while the client's threads are there to be read.
    let cpu_wait = (end == ProcessEnd::KilledAtDeadline)
        .then(|| process_group::longest_cpu_wait_since(pgid, &std::collections::HashMap::new()));
    if killed {
        process_group::kill(pgid);
        // SIGKILL cannot be ignored; the bound only guards against a kernel that is slow
        // to reap (e.g. a process in uninterruptible sleep).
        let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
    }
    let wall_ms = started.elapsed().as_millis() as u64;

    // Read what is left, bounded: a grandchild (the mock, an SDK helper, `sleep 60 &`) may
    // hold the pipes open long after the client is gone.
    let drain = if killed { DRAIN_AFTER_KILL } else { DRAIN_AFTER_EXIT };
    let aborts: Vec<_> = readers.iter().map(|r| r.abort_handle()).collect();
    let mut readers = futures::future::join_all(readers);
    let drained = tokio::time::timeout(drain, &mut readers).await.is_ok();
    // A stdio server the client left running (it exited without waiting for it) may still be
    // reading the client's last lines: the group's kill below would cut its script short.
    if !killed && matches!(endpoint, Endpoint::Command(_)) {
        let left = deadline.total().saturating_sub(started.elapsed()).max(super::MOCK_SERVE_FLOOR);
        record.until_mocks_served_all(scenario, left).await;
    }
    // A client that exited by itself should have taken its children with it: whoever is
    // still in its group now is a leftover, reported before the group is killed (judged by
    // `client process ends cleanly`, which knows the mock's pids).
    let leftovers = if killed { Vec::new() } else { process_group::members(pgid) };
    process_group::kill(pgid);
    let drained = drained || tokio::time::timeout(DRAIN_AFTER_KILL, &mut readers).await.is_ok();
    // Whatever is still alive with a trace of this run is outside the group (the kill above
    // reached everyone inside): a pipe still held after the group died means a holder is
    // out there, worth reading every process's open files for.
    let escaped = traces.sweep(pgid, !drained).await;
    // Stop reading (dropping the read ends, so a writer that survived even that gets EPIPE
    // rather than blocking forever).
    for a in aborts {
        a.abort();
    }
    drop(readers);

    let mut collected = std::mem::take(&mut *lock(&collected));
    // A client that wrote past the cap and exited before the reader got there flooded all
    // the same: classify by what it wrote, not by which came first.
    let end = classify_flood(end, collected.flooded);
    let report = collected.report(end, wall_ms, leftovers, escaped);
    let report = ProcessReport { cpu_wait_ms: cpu_wait.map(|w| w.as_millis() as u64), ..report };
    assemble(plan, collected, report, started, deadline)
}

impl Collected {
    /// The process report of a run that ended with `end` after `wall_ms`.
    pub(super) fn report(
        &mut self,
        end: ProcessEnd,
        wall_ms: u64,
        leftovers: Vec<Leftover>,
        escaped: Vec<Escaped>,
    ) -> ProcessReport {
        ProcessReport {
            end,
            stdout_bytes: self.stdout_bytes.min(STDOUT_CAP + 64 * 1024),
            other_stdout: self.other.clone(),
            stderr_bytes: self.stderr_bytes,
            stderr_tail: String::from_utf8_lossy(self.stderr.make_contiguous()).into_owned(),
            wall_ms,
            leftovers,
            escaped,
            sdk: self.sdk.clone(),
            cpu_wait_ms: None,
        }
    }
}

/// Turns what was collected into the per-step outcome, filling steps the client never
/// reported as not run, with the reason the process gives.
pub(super) fn assemble(
    plan: &[ClientStep],
    mut c: Collected,
    report: ProcessReport,
    started: Instant,
    deadline: Deadline,
) -> ClientOutcome {
    let hung = report.end == ProcessEnd::KilledAtDeadline;
    let why_not_run = match &report.end {
        ProcessEnd::KilledAtDeadline => deadline.expired(),
        ProcessEnd::NotStarted { error } => error.clone(),
        other => format!("{other} before reporting this step"),
    };
    let mut steps = Vec::with_capacity(plan.len());
    let mut ended_by_driver = Vec::new();
    let mut previous = started;
    let mut sent_at: BTreeMap<String, Instant> = BTreeMap::new();
    for (i, step) in plan.iter().enumerate() {
        let Some((reported, elapsed, at)) = c.steps.remove(&(i + 1)) else {
            steps.push(not_run(i, step, Some(why_not_run.clone())));
            continue;
        };
        let what = describe_step(step);
        // Without the client's own measure, a step took from the previous line to this
        // one; an awaited background request counts from the line that sent it.
        let since = match step {
            ClientStep::Await { request } => sent_at.get(request).copied().unwrap_or(previous),
            _ => previous,
        };
        if let ClientStep::Request { background: true, label: Some(l), .. } = step {
            sent_at.insert(l.clone(), at);
        }
        let elapsed_ms = elapsed.unwrap_or_else(|| at.saturating_duration_since(since).as_millis() as u64);
        previous = previous.max(at);
        let what = match step {
            ClientStep::Request { background: true, .. } => format!("{what} (background)"),
            _ => what,
        };
        if matches!(reported, Reported::DriverError(_)) {
            ended_by_driver.push(i + 1);
        }
        let (status, result, error) = match reported {
            Reported::Ok(r) => (StepStatus::Ok, r, None),
            Reported::Error(e) | Reported::DriverError(e) => (StepStatus::Error, None, Some(e)),
            Reported::Unsupported(r) => (StepStatus::Unsupported, None, Some(r)),
        };
        steps.push(StepOutcome { step: i + 1, what, status, result, error, elapsed_ms });
    }
    ClientOutcome {
        steps,
        notifications: c.notifications,
        reports: c.reports,
        diagnostics: None,
        hung,
        process: Some(report),
        manager_events: Vec::new(),
        cannot_report: c.cannot_report,
        ended_by_driver,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_splits_like_a_shell_and_appends_the_url() {
        let url = Endpoint::Url("http://127.0.0.1:1/mcp".into());
        assert_eq!(
            argv("node 'my driver.mjs' --x", &url).expect("splits"),
            ["node", "my driver.mjs", "--x", "http://127.0.0.1:1/mcp"]
        );
        assert_eq!(argv("py d.py", &Endpoint::Command(vec!["m".into()])).expect("splits"), ["py", "d.py"]);
        assert!(argv("node 'unclosed", &url).is_err());
        assert!(argv("   ", &url).is_err());
    }

    #[test]
    fn a_recorded_flood_outranks_the_end_it_caused() {
        let flood = ProcessEnd::KilledForFlooding { cap: STDOUT_CAP, pipe: Pipe::Stdout };
        let sigpipe = ProcessEnd::Signalled { signal: "SIGPIPE".into() };
        let out = Some(Pipe::Stdout);
        assert_eq!(classify_flood(sigpipe.clone(), out), flood);
        assert_eq!(classify_flood(ProcessEnd::Exited { code: 0 }, out), flood);
        assert_eq!(classify_flood(sigpipe.clone(), None), sigpipe);
        assert_eq!(classify_flood(ProcessEnd::KilledAtDeadline, out), ProcessEnd::KilledAtDeadline);
        // The pipe recorded first names the flood, whichever pipe woke the run.
        let stderr_flood = ProcessEnd::KilledForFlooding { cap: STDERR_CAP, pipe: Pipe::Stderr };
        assert_eq!(classify_flood(flood.clone(), Some(Pipe::Stderr)), stderr_flood);
    }

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(client_slug("node clients/ts/driver.js --x"), "node-clients-ts-driver-js-x");
    }

    #[test]
    fn step_lines_notifications_and_diagnostics_are_told_apart() {
        let mut c = Collected::default();
        for line in [
            r#"{"step":1,"ok":true}"#,
            r#"{"step":2,"ok":false,"error":"boom"}"#,
            r#"{"step":3,"unsupported":"no such op"}"#,
            r#"{"step":9,"ok":true}"#,
            r#"{"notification":{"method":"n/x","params":{"a":1}}}"#,
            r#"{"cannot_report":["notifications"]}"#,
            r#"{"cannot_report":["telepathy"]}"#,
            "hello from the SDK",
            r#"{"step":1,"ok":false,"error":"again"}"#,
        ] {
            c.accept(line.as_bytes(), 3);
        }
        assert!(matches!(c.steps.get(&1), Some((Reported::Ok(None), None, _))));
        assert!(matches!(c.steps.get(&2), Some((Reported::Error(e), _, _)) if e == "boom"));
        assert!(matches!(c.steps.get(&3), Some((Reported::Unsupported(r), _, _)) if r == "no such op"));
        assert_eq!(c.notifications, vec![("n/x".to_string(), serde_json::json!({"a": 1}))]);
        assert_eq!(c.cannot_report, vec![Reportable::Notifications]);
        assert_eq!(c.other.len(), 4, "{:?}", c.other);
    }

    #[test]
    fn a_step_the_driver_ended_is_told_apart_from_the_sdks_error() {
        let mut c = Collected::default();
        c.accept(br#"{"step":1,"ok":false,"error":"not connected","by":"driver"}"#, 2);
        c.accept(br#"{"step":2,"ok":false,"error":"Connection closed"}"#, 2);
        assert!(matches!(c.steps.get(&1), Some((Reported::DriverError(e), _, _)) if e == "not connected"));
        assert!(matches!(c.steps.get(&2), Some((Reported::Error(_), _, _))));
    }
}
