//! The `cmd+persistent:"<command line>"` target: the `cmd:` contract with one driver process
//! serving many plans, so an interpreter starts once per slot instead of once per run
//! (clients/README.md, "Persistent drivers").
//!
//! The driver is started with `MCP_HARNESS_PERSISTENT=1` and no plan; it announces the mode
//! with `{"persistent":1}` as its first stdout line. Each run then writes one job line on
//! the driver's stdin — `{"run":N,"env":{…the contract's variables…},"args":[URL?]}` — and
//! reads the driver's stdout exactly as a one-shot run does until `{"done":N}`, which stands
//! for the one-shot driver's exit 0. Everything else is the `cmd:` target's process hygiene,
//! per run: the run's deadline (counted from its job line) kills the whole group, a flood past the cap kills it, a driver
//! that crashes fails the run it was serving. A driver that ended a run any other way than
//! `done` (killed, crashed, broke the framing, left processes behind, wrote between runs) is
//! never reused: the next run starts a fresh one, so no state can leak from a broken run.

use super::cmd::{
    Cmd, Collected, DRAIN_AFTER_EXIT, DRAIN_AFTER_KILL, FloodGuard, STDOUT_CAP, StartError, argv, assemble,
    classify_flood, contract_env, process_end, read_stderr,
};
use super::{Client, ClientRun, Endpoint};
use crate::outcome::lock;
use crate::process_group;
use crate::scope::TargetKind;
use futures::future::BoxFuture;
use mcp_results::{ClientOutcome, Leftover, Pipe, ProcessEnd};
use mcp_scenario::TransportName;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;
use tokio::time::Instant as Deadline;

/// The variable that asks a driver for the persistent mode.
pub const PERSISTENT_ENV: &str = "MCP_HARNESS_PERSISTENT";

/// How long a fresh driver may take to print `{"persistent":1}`: it is not yet serving a run,
/// so no run's deadline applies; this only bounds a driver that never announces the mode.
const START_LIMIT: Duration = Duration::from_secs(30);

/// Characters of an offending line quoted in a framing error.
const QUOTED: usize = 200;

/// How long what a driver started for a run (its mock), still alive when it says `done`, may
/// take to end by itself before the record is read (see [`settle_group`]).
const MOCK_SETTLE: Duration = Duration::from_secs(1);
/// How often [`settle_group`] looks: the mock is not our child, so there is no exit to await.
const SETTLE_POLL: Duration = Duration::from_millis(5);

/// An external client program serving many plans (`cmd+persistent:<command line>`).
#[derive(Debug)]
pub struct Persistent {
    line: String,
    /// The one-shot target of the same command line, whose settings this one shares.
    one_shot: Cmd,
    /// Drivers between runs, each ready for a job.
    idle: Mutex<Vec<Driver>>,
    /// The last job number handed out (job numbers are unique across drivers).
    jobs: AtomicU64,
}

impl Persistent {
    /// The target for a command line (split like a shell would when a driver starts).
    pub fn new(command_line: impl Into<String>) -> Self {
        let line = command_line.into();
        Persistent { one_shot: Cmd::new(line.clone()), line, idle: Mutex::new(Vec::new()), jobs: AtomicU64::new(0) }
    }
}

impl Client for Persistent {
    fn spec(&self) -> String {
        format!("cmd+persistent:{}", self.line)
    }

    fn kind(&self) -> TargetKind {
        self.one_shot.kind()
    }

    fn covers(&self, transport: TransportName) -> bool {
        self.one_shot.covers(transport)
    }

    /// The same allowance as `cmd:`: a run that starts a fresh driver pays the start-up, and
    /// a run's deadline must not depend on whether its driver was warm.
    fn startup_allowance(&self) -> Duration {
        self.one_shot.startup_allowance()
    }

    /// A warm driver burns little CPU per run (an interpreter starts once per driver, not
    /// once per run) and most runs wait on the scenario's timers: three at once per core
    /// (`cmd:` runs one), which a pass over the library keeps under half the CPU here.
    fn runs_per_core(&self) -> usize {
        3
    }

    /// Observation windows idle on purpose: as many again on top, as the bundled client has.
    fn window_runs_per_core(&self) -> usize {
        3
    }

    /// The same snapshots as the one-shot `cmd:` target of the same command line: the wire
    /// is the client's, whatever serves its plans.
    fn snapshot_label(&self) -> Option<String> {
        self.one_shot.snapshot_label()
    }

    fn run<'a>(&'a self, run: ClientRun<'a>) -> BoxFuture<'a, ClientOutcome> {
        Box::pin(self.serve(run))
    }

    /// One driver per slot, started before the first run, a core's worth at a time: started
    /// by the runs themselves, a dozen interpreters would start at once while each run's mock
    /// already counts its deadline. A driver that fails to start is left to the run that
    /// needs it, which starts one afresh and reports why it could not.
    fn warm_up(&self, slots: usize) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            use futures::StreamExt;
            self.one_shot.ask_declaration().await;
            let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
            let started: Vec<_> = futures::stream::iter(0..slots)
                .map(|_| Driver::start(&self.line))
                .buffer_unordered(cores)
                .collect()
                .await;
            lock(&self.idle).extend(started.into_iter().flatten());
        })
    }

    fn declines(&self, scenario: &mcp_scenario::Scenario) -> Option<String> {
        self.one_shot.declines(scenario)
    }

    fn finish(&self) {
        // Dropping a driver kills its group; its stdin closing tells a well-behaved one to go.
        lock(&self.idle).clear();
    }
}

/// One driver process and its pipes.
#[derive(Debug)]
struct Driver {
    child: Child,
    pgid: u32,
    stdin: ChildStdin,
    /// stdout as read, in chunks; closed at EOF.
    stdout: mpsc::UnboundedReceiver<Vec<u8>>,
    /// The bytes after the last complete line.
    partial: Vec<u8>,
    /// stderr since the last run took it (only the stderr fields are used).
    stderr: Arc<Mutex<Collected>>,
    /// The task reading stderr: it ends when every writer is gone.
    stderr_reader: tokio::task::JoinHandle<()>,
}

impl Drop for Driver {
    fn drop(&mut self) {
        process_group::kill(self.pgid);
        self.stderr_reader.abort();
    }
}

/// How a run's wait for its driver ended.
enum Ended {
    /// `{"done":N}`: the plan is over and its connection closed.
    Done,
    /// The process ended (or closed stdout, then ended) on its own.
    Exited(ProcessEnd),
    /// The run's deadline passed.
    Deadline,
    /// stdout past the cap.
    Flooded,
    /// The driver broke the framing (the message says how).
    Framing(String),
}

/// A framing line of the persistent mode, told apart from the contract's lines.
#[derive(Debug, PartialEq)]
enum Frame {
    /// `{"persistent":1}`.
    Hello,
    /// `{"done":N}`.
    Done(u64),
    /// Any other line (a contract line or a diagnostic).
    Other,
}

fn frame(line: &[u8]) -> Frame {
    let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(line) else { return Frame::Other };
    if obj.len() != 1 {
        return Frame::Other;
    }
    match (obj.get("persistent"), obj.get("done")) {
        (Some(v), _) if v.as_u64() == Some(1) => Frame::Hello,
        (_, Some(n)) => n.as_u64().map_or(Frame::Other, Frame::Done),
        _ => Frame::Other,
    }
}

fn quoted(line: &[u8]) -> String {
    String::from_utf8_lossy(line).chars().take(QUOTED).collect()
}

impl Driver {
    /// Starts a driver and waits (at most [`START_LIMIT`]) for its `{"persistent":1}`.
    async fn start(line: &str) -> Result<Driver, (ProcessEnd, Collected)> {
        let until = Deadline::now() + START_LIMIT;
        let not_started = |e: String| (ProcessEnd::NotStarted { error: e }, Collected::default());
        let argv = argv(line, &Endpoint::Command(Vec::new())).map_err(|e| not_started(e.to_string()))?;
        let mut cmd = tokio::process::Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .env(PERSISTENT_ENV, "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .map_err(|source| not_started(StartError::Spawn { program: argv[0].clone(), source }.to_string()))?;
        let pgid = child.id().unwrap_or(0);
        let (Some(stdin), Some(mut out), Some(err)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            process_group::kill(pgid);
            return Err(not_started("the driver's pipes were not set up".into()));
        };
        let (tx, stdout) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n @ 1..) = out.read(&mut buf).await {
                if tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Collected::default()));
        // A stderr flood kills the driver's group; the run then sees the driver end and
        // classifies it by the flood recorded here (nobody waits on this run-less wake-up).
        let guard = FloodGuard { flood: Arc::new(tokio::sync::Notify::new()), pgid };
        let stderr_reader = tokio::spawn(read_stderr(err, stderr.clone(), guard));
        let mut driver = Driver { child, pgid, stdin, stdout, partial: Vec::new(), stderr, stderr_reader };
        let mut seen = Collected::default();
        let hello = driver.next_line(until, &mut seen).await;
        match hello {
            Ok(line) if frame(&line) == Frame::Hello => Ok(driver),
            Ok(line) => Err(driver.fail(format!(
                "the driver's first stdout line is not {{\"persistent\":1}}: {:?} (a driver opts in to the persistent mode by printing it when {PERSISTENT_ENV}=1; see clients/README.md)",
                quoted(&line)
            ))),
            Err(Ended::Exited(end)) => {
                let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, &mut driver.stderr_reader).await;
                let tail = driver.take_stderr();
                let last = String::from_utf8_lossy(&tail.stderr.iter().copied().collect::<Vec<u8>>()).lines().rev().find(|l| !l.trim().is_empty()).map(str::to_string);
                Err((
                    ProcessEnd::NotStarted {
                        error: format!(
                            "the driver ended ({end}) before announcing the persistent mode{}",
                            last.map(|l| format!("; last stderr line: {l}")).unwrap_or_default()
                        ),
                    },
                    tail,
                ))
            }
            Err(Ended::Deadline) => Err(driver.fail(format!(
                "it did not announce the persistent mode within {}s of starting",
                START_LIMIT.as_secs()
            ))),
            Err(Ended::Flooded) => Err((ProcessEnd::KilledForFlooding { cap: STDOUT_CAP, pipe: Pipe::Stdout }, driver.take_stderr())),
            Err(Ended::Framing(e)) => Err(driver.fail(e)),
            Err(Ended::Done) => Err(driver.fail("the driver said done before any job".into())),
        }
    }

    /// Kills the driver and turns a framing error into the run's end.
    fn fail(self, error: String) -> (ProcessEnd, Collected) {
        process_group::kill(self.pgid);
        let stderr = self.take_stderr();
        (ProcessEnd::NotStarted { error: format!("persistent driver: {error}") }, stderr)
    }

    /// The stderr written since the last take.
    fn take_stderr(&self) -> Collected {
        std::mem::take(&mut *lock(&self.stderr))
    }

    /// The next complete stdout line, counting its bytes into `c` (past [`STDOUT_CAP`] the
    /// driver is flooding); or how the driver ended first.
    async fn next_line(&mut self, until: Deadline, c: &mut Collected) -> Result<Vec<u8>, Ended> {
        loop {
            if let Some(pos) = self.partial.iter().position(|b| *b == b'\n') {
                let rest = self.partial.split_off(pos + 1);
                let mut line = std::mem::replace(&mut self.partial, rest);
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            tokio::select! {
                biased;
                chunk = self.stdout.recv() => match chunk {
                    Some(bytes) => {
                        if !self.take_stdout(&bytes, c) {
                            return Err(Ended::Flooded);
                        }
                    }
                    // stdout closed: only the process's end is left to wait for.
                    None => return Err(self.wait_exit(until).await),
                },
                status = self.child.wait() => {
                    return Err(match status {
                        Ok(s) => Ended::Exited(process_end(s)),
                        Err(e) => Ended::Exited(ProcessEnd::NotStarted { error: format!("cannot wait for the driver: {e}") }),
                    });
                }
                () = tokio::time::sleep_until(until) => return Err(Ended::Deadline),
            }
        }
    }

    /// Counts a chunk of stdout into `c` and buffers it; false (the flood recorded) once the
    /// run's stdout passes [`STDOUT_CAP`].
    fn take_stdout(&mut self, bytes: &[u8], c: &mut Collected) -> bool {
        c.stdout_bytes += bytes.len();
        if c.stdout_bytes > STDOUT_CAP {
            c.flooded.get_or_insert(Pipe::Stdout);
            return false;
        }
        self.partial.extend_from_slice(bytes);
        true
    }

    async fn wait_exit(&mut self, until: Deadline) -> Ended {
        tokio::select! {
            status = self.child.wait() => match status {
                Ok(s) => Ended::Exited(process_end(s)),
                Err(e) => Ended::Exited(ProcessEnd::NotStarted { error: format!("cannot wait for the driver: {e}") }),
            },
            () = tokio::time::sleep_until(until) => Ended::Deadline,
        }
    }

    /// Whether the driver wrote anything since its last run ended (it must not).
    fn wrote_between_runs(&mut self) -> bool {
        while let Ok(bytes) = self.stdout.try_recv() {
            self.partial.extend_from_slice(&bytes);
        }
        !self.partial.is_empty()
    }

    /// Lines left after the process ended, read for at most `bound`.
    async fn drain(&mut self, bound: Duration, c: &mut Collected, plan_len: usize) {
        let until = Deadline::now() + bound;
        while let Ok(Some(bytes)) = tokio::time::timeout_at(until, self.stdout.recv()).await {
            if !self.take_stdout(&bytes, c) {
                return;
            }
            while let Some(pos) = self.partial.iter().position(|b| *b == b'\n') {
                let rest = self.partial.split_off(pos + 1);
                let line = std::mem::replace(&mut self.partial, rest);
                c.accept(&line[..line.len() - 1], plan_len);
            }
        }
        if !self.partial.is_empty() {
            c.accept(&std::mem::take(&mut self.partial), plan_len);
        }
    }
}

impl Persistent {
    /// One run: a warm driver (or a fresh one), one job, its lines until `done`.
    async fn serve(&self, run: ClientRun<'_>) -> ClientOutcome {
        let ClientRun { scenario, transport, endpoint, deadline, record } = run;
        let run_dir = record.dir();
        let plan = &scenario.client;
        // Processes that left the driver's group are looked for by one-shot runs only
        // (`escapees`): a warm driver's group outlives its runs.
        let finish = |started: Instant, mut c: Collected, end: ProcessEnd, leftovers: Vec<Leftover>| {
            let end = classify_flood(end, c.flooded);
            let report = c.report(end, started.elapsed().as_millis() as u64, leftovers, Vec::new());
            assemble(plan, c, report, started, deadline)
        };
        let env = match contract_env(scenario, transport, &endpoint, run_dir) {
            Ok(env) => env,
            Err(e) => {
                let end = ProcessEnd::NotStarted { error: e.to_string() };
                return finish(Instant::now(), Collected::default(), end, Vec::new());
            }
        };
        let mut driver = match self.checkout().await {
            Ok(d) => d,
            Err((end, c)) => return finish(Instant::now(), c, end, Vec::new()),
        };
        // The run's clock starts with its job: a driver that starts slowly on a loaded machine
        // delays the run, never eats its deadline (a one-shot run would still be starting).
        let started = Instant::now();
        let until = Deadline::now() + deadline.total();
        // The driver's threads' waits for a CPU so far: what it waits during this job is
        // told from them if the deadline ends it.
        let waits_before = process_group::cpu_waits(driver.pgid);
        let finish = |c: Collected, end: ProcessEnd, leftovers: Vec<Leftover>| finish(started, c, end, leftovers);
        let job = self.jobs.fetch_add(1, Ordering::SeqCst) + 1;
        let args: Vec<String> = match &endpoint {
            Endpoint::Url(url) => vec![url.clone()],
            Endpoint::Command(_) => Vec::new(),
        };
        let env: serde_json::Map<String, Value> = env.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
        let mut line = json!({"run": job, "env": env, "args": args}).to_string().into_bytes();
        line.push(b'\n');
        let mut c = Collected::default();
        let ended = if driver.stdin.write_all(&line).await.is_err() || driver.stdin.flush().await.is_err() {
            // The driver is gone (a broken pipe): its exit says how.
            driver.wait_exit(until).await
        } else {
            loop {
                match driver.next_line(until, &mut c).await {
                    Ok(line) => match frame(&line) {
                        Frame::Done(n) if n == job => break Ended::Done,
                        Frame::Done(n) => {
                            break Ended::Framing(format!("it said done for job {n} while serving job {job}"));
                        }
                        Frame::Hello => {
                            break Ended::Framing(
                                "it announced the persistent mode again in the middle of a job".into(),
                            );
                        }
                        Frame::Other => c.accept(&line, plan.len()),
                    },
                    Err(ended) => break ended,
                }
            }
        };
        let cpu_wait = matches!(ended, Ended::Deadline)
            .then(|| process_group::longest_cpu_wait_since(driver.pgid, &waits_before).as_millis() as u64);
        if !matches!(ended, Ended::Done) {
            // The driver is going: its stderr ends with it (bounded, a grandchild may hold it).
            if matches!(ended, Ended::Deadline | Ended::Flooded) {
                process_group::kill(driver.pgid);
            }
            let bound = if matches!(ended, Ended::Exited(_)) { DRAIN_AFTER_EXIT } else { DRAIN_AFTER_KILL };
            let _ = tokio::time::timeout(bound, &mut driver.stderr_reader).await;
        }
        let stderr = driver.take_stderr();
        (c.stderr, c.stderr_bytes) = (stderr.stderr, stderr.stderr_bytes);
        c.flooded = c.flooded.or(stderr.flooded);
        match ended {
            Ended::Done => {
                // Whoever is left in the group beside the driver is the run's leftover, as for a
                // one-shot driver that exited; a driver that leaves anything but its mock is
                // not trusted with another plan. A stdio server it left running reads what the
                // client wrote last before anything is counted.
                if matches!(endpoint, Endpoint::Command(_)) {
                    let left = until.saturating_duration_since(Deadline::now()).max(super::MOCK_SERVE_FLOOR);
                    record.until_mocks_served_all(scenario, left).await;
                }
                let leftovers =
                    settle_group(driver.pgid, MOCK_SETTLE.min(until.saturating_duration_since(Deadline::now()))).await;
                let mocks = record.mock_pids();
                if leftovers.iter().all(|l| mocks.contains(&l.pid)) {
                    lock(&self.idle).push(driver);
                }
                finish(c, ProcessEnd::Exited { code: 0 }, leftovers)
            }
            Ended::Exited(end) => {
                driver.drain(DRAIN_AFTER_EXIT, &mut c, plan.len()).await;
                finish(c, end, Vec::new())
            }
            Ended::Deadline | Ended::Flooded => {
                let _ = tokio::time::timeout(Duration::from_secs(1), driver.child.wait()).await;
                driver.drain(DRAIN_AFTER_KILL, &mut c, plan.len()).await;
                let end = if matches!(ended, Ended::Deadline) {
                    ProcessEnd::KilledAtDeadline
                } else {
                    ProcessEnd::KilledForFlooding { cap: STDOUT_CAP, pipe: Pipe::Stdout }
                };
                let mut outcome = finish(c, end, Vec::new());
                if let Some(report) = outcome.process.as_mut() {
                    report.cpu_wait_ms = cpu_wait;
                }
                outcome
            }
            Ended::Framing(e) => {
                let (end, _) = driver.fail(e);
                finish(c, end, Vec::new())
            }
        }
    }

    /// A warm driver that wrote nothing since its last run, else a fresh one.
    async fn checkout(&self) -> Result<Driver, (ProcessEnd, Collected)> {
        loop {
            let warm = lock(&self.idle).pop();
            let Some(mut d) = warm else { return Driver::start(&self.line).await };
            // A driver that wrote between runs broke the framing: dropped (killed) unused.
            if !d.wrote_between_runs() {
                return Ok(d);
            }
        }
    }
}

/// Waits (at most `bound`) until nothing but the driver is left in its group. A driver whose
/// SDK closed the mock's stdin without waiting for it to exit says `done` while the mock may
/// still be reading the client's last lines, or not have recorded its start yet (seen under
/// `make soak`: a `notifications/cancelled` written just before the close went unrecorded,
/// and the run passed a check it fails). A process that does not end by itself costs this
/// bound once. Returns what is still left beside the driver: the run's leftovers.
async fn settle_group(pgid: u32, bound: Duration) -> Vec<Leftover> {
    let since = Instant::now();
    loop {
        let left: Vec<Leftover> = process_group::members(pgid).into_iter().filter(|l| l.pid != pgid).collect();
        if left.is_empty() || since.elapsed() >= bound {
            return left;
        }
        tokio::time::sleep(SETTLE_POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_lines_are_told_from_contract_lines() {
        assert_eq!(frame(br#"{"persistent":1}"#), Frame::Hello);
        assert_eq!(frame(br#"{"done":7}"#), Frame::Done(7));
        assert_eq!(frame(br#"{"step":1,"ok":true}"#), Frame::Other);
        assert_eq!(frame(br#"{"done":"x"}"#), Frame::Other);
        assert_eq!(frame(br#"{"persistent":2}"#), Frame::Other);
        assert_eq!(frame(b"not json"), Frame::Other);
    }
}
