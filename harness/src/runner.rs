//! Running scenarios: one run = one scenario × one transport × one target, under a deadline,
//! in its own temp dir; many runs in parallel. The runner knows targets only through
//! [`crate::targets::Client`].

use crate::checks;
use crate::exercise;
use crate::http_mock::HttpMock;
use crate::run_record::{RunRecord, RunWire};
use crate::scope::{Deadline, Scope};
use crate::snapshot;
use crate::starvation::{self, lag::LagWatch};
use crate::targets::{ClientRun, Endpoint, Target};
use crate::transcript::{Transcript, render};
use crate::via::Proxies;
use mcp_results::{CheckResult, ClientOutcome, Judgement, ProcessEnd, RunResult, SnapshotStatus, Status, StepStatus};
use mcp_scenario::basis::Level;
use mcp_scenario::{Scenario, TransportName, WireEvent};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Settings shared by every run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The client under test.
    pub target: Target,
    /// The command line that starts the mock, before its own arguments
    /// (e.g. `[<path to mcp-harness>, "mock"]`).
    pub mock_command: Vec<String>,
    /// Whether snapshots are rewritten, and whether a missing one fails the run.
    pub snapshots: snapshot::Policy,
    /// Compare snapshots at all (the cargo-test driver lets insta do it).
    pub compare_snapshots: bool,
    /// A third-party client's unmet SHOULDs fail its runs instead of warning (`--strict`).
    pub strict: bool,
    /// After the first failed or errored run, start no more (`--fail-fast`): the runs not
    /// started are reported [`Status::NotRun`]; those already running finish.
    pub fail_fast: bool,
}

impl RunConfig {
    /// Runs of `target` with the mock started by `mock_command`, judged by their checks alone:
    /// no snapshot compared or written, SHOULDs warn, every run started.
    pub fn new(target: Target, mock_command: Vec<String>) -> Self {
        RunConfig {
            target,
            mock_command,
            snapshots: snapshot::Policy::default(),
            compare_snapshots: false,
            strict: false,
            fail_fast: false,
        }
    }
}

/// Called with each run's result as it ends.
pub type Progress = Arc<dyn Fn(&RunResult) + Send + Sync>;

/// One unit of work: a scenario file on one transport.
#[derive(Debug, Clone)]
pub struct Job {
    /// The file.
    pub path: PathBuf,
    /// The loaded scenario.
    pub scenario: Arc<Scenario>,
    /// The transport.
    pub transport: TransportName,
}

/// Expands scenarios into jobs for the target (one per transport it covers).
pub fn jobs(scenarios: Vec<(PathBuf, Scenario)>, target: &Target) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (path, scenario) in scenarios {
        let scenario = Arc::new(scenario);
        for transport in scenario.transport.to_vec() {
            if target.covers(transport) {
                jobs.push(Job { path: path.clone(), scenario: scenario.clone(), transport });
            }
        }
    }
    jobs
}

/// Runs jobs with at most `parallel` at once; results come back in job order. A job whose
/// plan mostly waits on purpose (an observation window of a second or more) takes its slot
/// from a second pool of `windows` when there is one: a window idles, so it overlaps the
/// short runs instead of holding one of their slots. Each pool keeps the file order
/// (starting the longest runs first bunched the heavy ones and made order races surface),
/// except that the few runs with a deadline of [`LONG_DEADLINE_MS`] or more go first.
///
/// `done` is called with each result as its run ends (a progress bar, plain lines).
pub async fn run_all(
    jobs: Vec<Job>,
    config: Arc<RunConfig>,
    parallel: usize,
    windows: usize,
    done: Progress,
) -> Vec<RunResult> {
    let (mut windowed, mut short): (Vec<usize>, Vec<usize>) =
        (0..jobs.len()).partition(|&i| windows > 0 && planned_wait_ms(&jobs[i].scenario) >= WINDOW_MS);
    // A run that may wait out a client's own default timeout (tens of seconds) starts first:
    // started last, it alone would add its whole wait to the pass.
    for pool in [&mut windowed, &mut short] {
        pool.sort_by_key(|&i| jobs[i].scenario.deadline_ms < LONG_DEADLINE_MS);
    }
    let slots = windowed.len().min(windows) + short.len().min(parallel);
    config.target.warm_up(slots).await;
    let jobs: Vec<Arc<Job>> = jobs.into_iter().map(Arc::new).collect();
    let stop = Arc::new(AtomicBool::new(false));
    // Re-runs of starved runs go at a quarter of the pass's parallelism (`starvation`).
    let reruns = Arc::new(tokio::sync::Semaphore::new((parallel / starvation::RERUN_DIVISOR).max(1)));
    let (a, b) = tokio::join!(
        feed(&jobs, windowed, &config, windows, &stop, &done, &reruns),
        feed(&jobs, short, &config, parallel, &stop, &done, &reruns)
    );
    let mut handles: Vec<(usize, tokio::task::JoinHandle<RunResult>)> = a.into_iter().chain(b).collect();
    handles.sort_by_key(|(i, _)| *i);
    let mut results = Vec::new();
    for (_, h) in handles {
        match h.await {
            Ok(r) => results.push(r),
            Err(e) => tracing::error!(error = %e, "a run task failed"),
        }
    }
    config.target.finish();
    results
}

/// Spawns the jobs at `order`, in that order, at most `parallel` running at once; returns
/// each one's index and handle.
async fn feed(
    jobs: &[Arc<Job>],
    order: Vec<usize>,
    config: &Arc<RunConfig>,
    parallel: usize,
    stop: &Arc<AtomicBool>,
    done: &Progress,
    reruns: &Arc<tokio::sync::Semaphore>,
) -> Vec<(usize, tokio::task::JoinHandle<RunResult>)> {
    let semaphore = Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let mut handles = Vec::new();
    for i in order {
        // Taken here, before the job is spawned, so jobs start in order.
        let Ok(permit) = semaphore.clone().acquire_owned().await else { break };
        let (job, config, stop, done, reruns) =
            (jobs[i].clone(), config.clone(), stop.clone(), done.clone(), reruns.clone());
        handles.push((
            i,
            tokio::spawn(async move {
                let _permit = permit;
                let result = if stop.load(Ordering::SeqCst) {
                    not_started(&job, &config)
                } else {
                    run_settled(&job, &config, &reruns).await
                };
                if config.fail_fast && matches!(result.status, Status::Failed | Status::Error) {
                    stop.store(true, Ordering::SeqCst);
                }
                done(&result);
                result
            }),
        ));
    }
    handles
}

/// The result of a run `--fail-fast` never started.
fn not_started(job: &Job, config: &RunConfig) -> RunResult {
    RunResult {
        status: Status::NotRun,
        reason: Some("not run: --fail-fast stopped starting runs after the first failure".into()),
        ..blank(job, config)
    }
}

/// A result with nothing in it yet (status `error` until the run says otherwise).
fn blank(job: &Job, config: &RunConfig) -> RunResult {
    RunResult {
        scenario: job.scenario.name.clone(),
        path: job.path.clone(),
        transport: job.transport,
        target: config.target.to_string(),
        status: Status::Error,
        duration_ms: 0,
        failures: Vec::new(),
        warnings: Vec::new(),
        notes: Vec::new(),
        reason: None,
        snapshot: SnapshotStatus::NotCompared,
        transcript: String::new(),
        steps: Vec::new(),
        client: None,
        baseline: None,
        mock_pids: Vec::new(),
        wire: Vec::new(),
        judged: Vec::new(),
        load: None,
    }
}

/// A plan that pauses this long on purpose is an observation window (scenarios/README.md,
/// "Observing an absence"), run from the windows' pool.
const WINDOW_MS: u64 = 1000;

/// A scenario deadline this long (the default is 3 s) is there to outwait a client's own
/// default timeout; such runs start first.
const LONG_DEADLINE_MS: u64 = 30_000;

/// How long a scenario's plan pauses on purpose (its `wait` steps), in ms.
fn planned_wait_ms(scenario: &Scenario) -> u64 {
    scenario.client.iter().map(|s| if let mcp_scenario::ClientStep::Wait { ms } = s { *ms } else { 0 }).sum()
}

/// How long after a run's deadline the mock's own deadline falls (see [`run_one`]).
const MOCK_DEADLINE_MARGIN_MS: u64 = 10_000;

/// Runs one job: mock + client under the scenario's deadline, then checks and snapshot —
/// again if the machine starved it ([`starvation`]).
pub async fn run_one(job: &Job, config: &RunConfig) -> RunResult {
    run_settled(job, config, starvation::default_reruns()).await
}

/// [`run_one`], its re-runs taking their turns from `reruns`.
async fn run_settled(job: &Job, config: &RunConfig, reruns: &tokio::sync::Semaphore) -> RunResult {
    starvation::settle(&job.scenario, reruns, || async {
        let watch = LagWatch::start();
        let (result, slow_start, hung, cut_in_wait, failed_by_hang) = attempt(job, config).await;
        starvation::Measured { result, lag: watch.stop().max(slow_start), hung, cut_in_wait, failed_by_hang }
    })
    .await
}

/// One attempt at a job; with the result, on stdio, how much longer than the client's usual
/// start-up ([`crate::targets::Client::usual_startup`]) the server took to start serving,
/// for a client whose connect clock starts at the spawn
/// ([`crate::targets::Client::waits_for_server_ready`] says no): its handshake bound counts
/// the server's spawn and start-up, so a machine slow to start a process eats the scenario's
/// timing margin as a scheduling lag does; or, when the deadline ended it, how long the
/// client waited for a CPU or, over HTTP, how much later than its usual start-up it first
/// reached the mock (a client slow to start eats the room its plan had before the deadline),
/// whichever is longest. Then whether it hung, was cut in the plan's own wait, and failed by
/// its hang alone (see [`starvation::Measured`]).
async fn attempt(job: &Job, config: &RunConfig) -> (RunResult, Duration, bool, bool, bool) {
    let started = Instant::now();
    let scenario = &job.scenario;
    let target = &config.target;
    let mut result = blank(job, config);
    if let Some(reason) = &scenario.pending {
        // Loaded and validated like any scenario, never run: no mock, no client, no snapshot.
        result.status = Status::Pending;
        result.reason = Some(reason.clone());
        return (result, Duration::ZERO, false, false, false);
    }
    if let Some(reason) = target.declines(scenario) {
        // Never run with a field the driver would drop: no mock, no client, no snapshot.
        result.status = Status::Skipped;
        result.reason = Some(reason);
        return (result, Duration::ZERO, false, false, false);
    }
    let run_dir = match tempfile::Builder::new().prefix("mcp-run-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            result.reason = Some(format!("cannot create a temp dir: {e}"));
            return (result, Duration::ZERO, false, false, false);
        }
    };
    let deadline =
        Deadline { scenario_ms: scenario.deadline_ms, startup_ms: target.startup_allowance().as_millis() as u64 };
    // The mock's own deadline is only a backstop for a harness that died, so it falls well
    // after the run's: a hung client is always ended by the run deadline, and the mock
    // stopped by the harness. It used to be the scenario's deadline + 2 s, the same moment
    // as an external client's run deadline (whose clock starts later still when a persistent
    // driver is being restarted). Whichever fired first then decided the transcript, and,
    // for a client whose close waited on the mock, whether the run finished.
    let mock_deadline_ms = deadline.total().as_millis() as u64 + MOCK_DEADLINE_MARGIN_MS;
    let mut slow_start = Duration::ZERO;
    let mut late_start = Duration::ZERO;
    // The run's one record: followed while the client runs, read to its end after.
    let record = RunRecord::new(run_dir.path());
    let client_run = |endpoint| ClientRun { scenario, transport: job.transport, endpoint, deadline, record: &record };
    let (outcome, wire) = if job.transport == TransportName::Stdio {
        // stdio: the client spawns the mock from the command line it is given.
        let mut mock = config.mock_command.clone();
        mock.extend([
            "stdio".to_string(),
            "--scenario".into(),
            absolute(&job.path).display().to_string(),
            "--run-dir".into(),
            run_dir.path().display().to_string(),
            "--deadline-ms".into(),
            mock_deadline_ms.to_string(),
        ]);
        let asked = mcp_mock::record::origin_unix_us(Instant::now());
        let outcome = target.run(client_run(Endpoint::Command(mock))).await;
        // The client (and with it the transport) is gone; make sure no mock outlives the run.
        // The kill may let a mock record its last events: the record is read to its end after.
        reap(&record).await;
        let wire = record.into_wire(Vec::new());
        if !target.waits_for_server_ready() {
            slow_start = first_serving(&wire.transcript)
                .map(|serving| Duration::from_micros(serving.saturating_sub(asked)))
                .unwrap_or_default()
                .saturating_sub(target.usual_startup());
        }
        (outcome, wire)
    } else {
        // HTTP kinds: the mock is a server the harness starts, and stops after the run.
        let path = absolute(&job.path);
        let mock =
            match HttpMock::start(&config.mock_command, job.transport, &path, run_dir.path(), mock_deadline_ms).await {
                Ok(m) => m,
                Err(e) => {
                    result.reason = Some(e.to_string());
                    return (result, Duration::ZERO, false, false, false);
                }
            };
        // `via:` puts proxies between the client and the mock (crate::via).
        let proxies =
            match Proxies::start(scenario, &mock.url, &config.mock_command, run_dir.path(), mock_deadline_ms).await {
                Ok(p) => p,
                Err(e) => {
                    result.reason = Some(e.to_string());
                    mock.stop().await;
                    return (result, Duration::ZERO, false, false, false);
                }
            };
        let url = proxies.as_ref().map_or_else(|| mock.url.clone(), |p| p.url.clone());
        // A proxy's port is the client's, and its error texts may quote it; no mock records it.
        let proxy_port = proxies.as_ref().and_then(|p| url::Url::parse(&p.url).ok()?.port());
        let asked = mcp_mock::record::origin_unix_us(Instant::now());
        let outcome = target.run(client_run(Endpoint::Url(url))).await;
        result.mock_pids.push(mock.pid());
        let client_hop = match proxies {
            Some(p) => {
                result.mock_pids.extend(p.second_pid());
                p.stop(run_dir.path()).await
            }
            None => Vec::new(),
        };
        mock.stop().await;
        let mut wire = record.into_wire(client_hop);
        if let Some(port) = proxy_port {
            wire.redactor.learn_port(port);
        }
        if outcome.hung {
            late_start = first_contact(&wire.transcript)
                .map(|contact| Duration::from_micros(contact.saturating_sub(asked)))
                .unwrap_or_default()
                .saturating_sub(target.usual_startup());
        }
        (outcome, wire)
    };
    let hung = outcome.hung;
    // A client that waited for a CPU, or (over HTTP) took to reach the mock, longer than the
    // room its plan had may have hung for the machine's sake: that counts as the run's lag
    // (the slack is its limit).
    let cpu_wait = outcome.process.as_ref().and_then(|p| p.cpu_wait_ms).unwrap_or(0);
    let lag = slow_start.max(late_start).max(Duration::from_millis(cpu_wait));
    let cut_in_wait = checks::cut_in_plan_wait(scenario, &outcome);
    let result = finish(job, config, result, started, deadline, outcome, wire);
    // Failed only where the hang left steps unreported: no verdict when the machine starved it.
    let hang_only = checks::failed_by_the_hang_alone(scenario, hung, &result);
    (result, lag, hung, cut_in_wait, hang_only)
}

/// Judges a run whose client part is over from what its mock recorded in `run_dir`: the
/// record read once, then the checks, the rendering, the snapshot and the redacted wire, as
/// at the end of every run. What `cargo bench --bench judging` times (it must stay linear in
/// the recorded events: `benches/judging.rs`).
pub fn judge(job: &Job, config: &RunConfig, outcome: ClientOutcome, run_dir: &Path) -> RunResult {
    let deadline = Deadline {
        scenario_ms: job.scenario.deadline_ms,
        startup_ms: config.target.startup_allowance().as_millis() as u64,
    };
    let wire = RunRecord::new(run_dir).into_wire(Vec::new());
    finish(job, config, blank(job, config), Instant::now(), deadline, outcome, wire)
}

/// When the run's first stdio server started serving, in µs since the Unix epoch.
fn first_serving(transcript: &Transcript) -> Option<u64> {
    transcript.connections().iter().filter_map(origin).min()
}

/// The wall-clock zero of a connection's record (its `Started` event), in µs since the epoch.
fn origin(c: &crate::transcript::Connection) -> Option<u64> {
    c.recorded().iter().find_map(WireEvent::origin_unix_us)
}

/// When the client's first bytes reached a mock or proxy, in µs since the Unix epoch: each
/// connection's first event from the client, on the clock its `Started` event gives.
fn first_contact(transcript: &Transcript) -> Option<u64> {
    let contact = |c: &crate::transcript::Connection| {
        let first = c.recorded().iter().find(|e| e.direction() == mcp_scenario::wire::Direction::ClientToMock)?;
        Some(origin(c)? + first.t_us()?)
    };
    transcript.connections().iter().filter_map(contact).min()
}

/// Checks, renders and snapshots a run whose client part is over.
fn finish(
    job: &Job,
    config: &RunConfig,
    mut result: RunResult,
    started: Instant,
    deadline: Deadline,
    mut outcome: ClientOutcome,
    wire: RunWire,
) -> RunResult {
    let scenario = &job.scenario;
    let target = &config.target;
    let RunWire { transcript, mut redactor } = wire;
    result.mock_pids.extend(transcript.mock_pids());
    result.mock_pids.dedup();

    let scope = Scope { target: target.kind(), transport: job.transport, revision: scenario.revision, deadline };
    let run = checks::Run { scenario, scope, outcome: &outcome, transcript: &transcript };
    let mut judged = checks::evaluate(&run);
    let target_text = target.to_string();
    checks::promise::unbind(scenario, &target_text, &mut judged);
    result.judged = checks::judged(&run, &judged);
    checks::promise::not_applicable(scenario, &target_text, &mut result.judged);
    let weighed = checks::weigh(judged.unmet, scope.target, config.strict);
    (result.failures, result.warnings, result.notes) = (weighed.failures, weighed.warnings, weighed.notes);
    result.notes.extend(judged.unjudged);
    // A client that could not run a step (or could not start) gets no verdict and no
    // snapshot: the scenario did not run as written.
    let overridden = status_override(&outcome);
    result.transcript =
        render::transcript(scenario, job.transport, scope.target.client(), &outcome, &transcript, &mut redactor);
    if config.compare_snapshots && overridden.is_none() {
        let path = snapshot::path_for(&job.path, scenario, job.transport, target);
        // A bundled transcript pins SPEC.md's behaviour, so a failing one is never its first
        // snapshot; a third-party one records what the client does, failing or not (its
        // changes are notes), so it is.
        let failed = !result.failures.is_empty() && scope.target.is_bundled();
        result.snapshot = snapshot::compare_or_update(&path, &job.path, &result.transcript, config.snapshots, failed);
    }
    // A third-party transcript that drifts from its snapshot is a change to review, not a
    // verdict: it rests on no spec sentence, and such transcripts record orders the spec
    // leaves open (two concurrent POSTs, a GET against a POST). The bundled client's
    // transcript is SPEC.md's, so a drift fails it, listed with the run's failures (results
    // and reports then show why a run with no failed check failed).
    let snapshot_finding = |message: String| CheckResult {
        check: "snapshot".into(),
        message,
        level: Level::Project,
        reference: Some("SPEC.md: the bundled transports' wire behaviour, pinned by the committed snapshot".into()),
        about: Vec::new(),
    };
    let snapshot_ok = match &result.snapshot {
        SnapshotStatus::Mismatch { path, .. } if !scope.target.is_bundled() => {
            result.notes.push(CheckResult {
                reference: None,
                ..snapshot_finding(format!(
                    "the wire transcript differs from {} (a change to review, not a verdict; --update-snapshots accepts it)",
                    path.display()
                ))
            });
            true
        }
        SnapshotStatus::Mismatch { path, .. } => {
            result.failures.push(snapshot_finding(format!(
                "the wire transcript differs from {} (`mcp-harness review` shows the diff and accepts or rejects it; or rerun with --update-snapshots)",
                path.display()
            )));
            false
        }
        SnapshotStatus::Missing { path } => {
            result.failures.push(snapshot_finding(format!(
                "the snapshot {} is missing and --require-snapshots is set (run once without it, or with --update-snapshots, to write it)",
                path.display()
            )));
            false
        }
        _ => true,
    };
    result.status = if result.failures.is_empty() && snapshot_ok { Status::Passed } else { Status::Failed };
    earn(&mut result, &run);
    if let Some((status, reason)) = overridden {
        result.status = status;
        result.reason = Some(reason);
        result.failures.clear();
        result.warnings.clear();
        result.notes.clear();
        for j in &mut result.judged {
            j.judgement = Judgement::NotJudged;
        }
    }
    // Verdict texts quote the wire (a session id, a token): they read as the transcript does.
    for c in result.failures.iter_mut().chain(&mut result.warnings).chain(&mut result.notes) {
        c.message = redactor.text(&c.message);
    }
    result.reason = result.reason.as_deref().map(|r| redactor.text(r));
    result.wire = transcript.into_redacted_wire(&redactor);
    result.client = outcome.process.take();
    // A step's error quotes what the client met (a URL with the run's real port, a token):
    // the reports show it as the transcript does.
    result.steps = outcome.steps;
    for step in &mut result.steps {
        step.error = step.error.as_deref().map(|e| redactor.text(e));
    }
    result.duration_ms = started.elapsed().as_millis() as u64;
    result
}

/// Holds the run's verdict to what it earned (DESIGN "A verdict is earned", [`exercise`]): a
/// client that never met the scenario's fault is *not exercised*, its scenario checks not
/// judged (the always-on rules on what it did send still are); a third-party client is judged
/// only where a check with an MCP basis applies (else *not applicable*), and passes only on a
/// plan that ran to its end (else *not exercised*).
fn earn(result: &mut RunResult, run: &checks::Run<'_>) {
    let third_party = !run.scope.target.is_bundled();
    let site = exercise::site(run.scenario);
    let evidence = exercise::evidence(run, site.as_ref(), &result.judged);
    let met = exercise::met(
        run.scenario,
        site.as_ref(),
        run.transcript,
        run.scope.transport == TransportName::Stdio,
        run.outcome.hung,
    );
    if let exercise::Met::No(why) = &met {
        // Results claimed from no server stay a failure: the driver made them up.
        let claimed = checks::always::claimed_without_server(run);
        let scenario_check = |c: &CheckResult| c.check.starts_with("check ") || (c.check == SCRIPT_RULE && !claimed);
        result.failures.retain(|c| !scenario_check(c));
        result.warnings.retain(|c| !scenario_check(c));
        result.notes.retain(|c| !scenario_check(c));
        for j in result.judged.iter_mut().filter(|j| j.check.starts_with("check ")) {
            j.judgement = Judgement::NotJudged;
        }
        if !claimed {
            result.judged.retain(|j| j.check != SCRIPT_RULE);
        }
        // What the client sent before it stopped is still judged (valid JSON-RPC, ids…), and
        // a bundled transcript still has to match its snapshot.
        let snapshot_failed = match &result.snapshot {
            SnapshotStatus::Mismatch { .. } => !third_party,
            SnapshotStatus::Missing { .. } => true,
            _ => false,
        };
        if !result.failures.is_empty() || snapshot_failed {
            result.status = Status::Failed;
            result.reason = Some(format!("not exercised: {why}"));
            return;
        }
    } else if result.status == Status::Failed {
        return;
    }
    match (met, evidence) {
        (_, exercise::Evidence::NotApplicable(why)) if third_party => {
            result.status = Status::NotApplicable;
            result.reason = Some(format!("nothing here judges a third-party client: {why}"));
        }
        (exercise::Met::No(why), _) => {
            result.status = Status::NotExercised;
            result.reason = Some(why);
        }
        (exercise::Met::Yes, exercise::Evidence::Unmet(check)) if third_party && result.status == Status::Passed => {
            result.status = Status::Warned;
            result.reason = Some(format!(
                "the client met the fault and broke what {check} asks of its handling; no check with an MCP basis held (see its warnings)"
            ));
        }
        (exercise::Met::Yes, exercise::Evidence::CutShort(why)) if third_party => {
            result.status = Status::NotExercised;
            let see = if result.warnings.is_empty() { "" } else { " (see its warnings)" };
            result.reason = Some(format!("no evidence the client handled the fault: {why}{see}"));
        }
        _ => {}
    }
}

/// The always-on rule a stop before the fault no longer fails (the run is not exercised).
const SCRIPT_RULE: &str = "always: server script completes";

/// A status that overrides the checks' verdict: skipped when the client reported a step
/// unsupported (never passed: the scenario did not run as written), error when the client
/// could not be started at all (a harness-side problem, not a finding).
fn status_override(outcome: &ClientOutcome) -> Option<(Status, String)> {
    if let Some(ProcessEnd::NotStarted { error }) = outcome.process.as_ref().map(|p| &p.end) {
        return Some((Status::Error, error.clone()));
    }
    outcome.steps.iter().find(|s| s.status == StepStatus::Unsupported).map(|s| {
        (
            Status::Skipped,
            format!("step {} ({}) unsupported: {}", s.step, s.what, s.error.as_deref().unwrap_or("no reason given")),
        )
    })
}

/// Kills any mock of the run that has not recorded its exit (its whole process group).
/// Waits on nothing but the kill itself, bounded.
async fn reap(record: &RunRecord) {
    for pid in record.unexited_mock_pids() {
        kill_group(pid).await;
    }
}

async fn kill_group(pid: u32) {
    use nix::sys::signal::{Signal, kill, killpg};
    use nix::unistd::Pid;
    let pid = Pid::from_raw(pid as i32);
    // The mock runs in its own process group (pgid = pid) when a transport spawned it; the
    // in-process transport's child handle reaps it.
    let _ = killpg(pid, Signal::SIGKILL);
    let _ = kill(pid, Signal::SIGKILL);
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_results::StepOutcome;
    use mcp_scenario::wire::Recorded;

    #[test]
    fn step_errors_read_as_the_transcript_does() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "name: t\nsummary: s\ntransport: http\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n  - op: handshake\n";
        let scenario = mcp_scenario::load::parse(Path::new("t.yaml"), text).expect("parses");
        // The client sent a secret the policy knows by its member's name; the error quotes it
        // where it has neither name nor shape, with the mock's real port.
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiKey":"SECRETKEY42"}}"#;
        let events = [
            WireEvent::Listening { port: 41999 },
            WireEvent::FromClient {
                t_us: 1,
                bytes: Recorded::of(body.as_bytes()),
                json: serde_json::from_str(body).ok(),
                terminated: true,
            },
        ];
        let lines: String = events.iter().map(|e| serde_json::to_string(e).expect("json") + "\n").collect();
        std::fs::write(mcp_mock::record::record_path(dir.path(), 1), lines).expect("write the record");
        let outcome = ClientOutcome {
            steps: vec![StepOutcome {
                step: 1,
                what: "connect".into(),
                status: StepStatus::Error,
                result: None,
                error: Some("POST http://localhost:41999/mcp refused key SECRETKEY42".into()),
                elapsed_ms: 0,
            }],
            ..Default::default()
        };
        let config = RunConfig::new(Target::bundled(None), Vec::new());
        let job = Job { path: "t.yaml".into(), scenario: Arc::new(scenario), transport: TransportName::Http };
        let result = judge(&job, &config, outcome, dir.path());
        assert_eq!(
            result.steps[0].error.as_deref(),
            Some("POST http://localhost:<port>/mcp refused key <redacted>"),
            "what results.json, JUnit, HTML and Markdown show"
        );
    }
}
