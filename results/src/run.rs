//! Run results: what one run of a scenario against a client produced — per plan step,
//! per failed check, the snapshot comparison, the baseline verdict. One definition, written
//! by the runner and read by the reports, the matrix and the baselines (`results.json`).

use mcp_scenario::TransportName;
use mcp_scenario::basis::Level;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;
use std::path::PathBuf;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every check held and the snapshot matched.
    Passed,
    /// A third-party client met the fault and broke a SHOULD in handling it, and no check
    /// with an MCP basis held: a warning is all the run shows, so it is no pass (`--strict`
    /// fails it, as it fails every unmet SHOULD).
    Warned,
    /// A check failed or the snapshot differed.
    Failed,
    /// The target cannot run this scenario (the reason says why).
    Skipped,
    /// The harness itself could not run it.
    Error,
    /// The scenario is marked `pending: "<reason>"`: loaded and validated, never run (the
    /// reason says why).
    Pending,
    /// Not started: `--fail-fast` stopped starting runs after a failure.
    NotRun,
    /// The client never met the scenario's fault (it never reached the step that makes it,
    /// or the window a count or absence check needs did not run to its end): no evidence
    /// either way, so neither passed nor failed (the reason says where it stopped). Not a
    /// pass: it fails the run's exit code unless a baseline lists it under `not_exercised:`.
    NotExercised,
    /// Nothing in the scenario judges this target on an MCP sentence: every check rests on
    /// SPEC.md, our own client's rules (a third-party client only). Neither passed nor failed.
    NotApplicable,
    /// The machine starved the run (the harness's own scheduling lag passed the scenario's
    /// timing margin) and a re-run gave a different verdict: the verdict depends on the load,
    /// not on the client alone, so it is neither a pass nor a failure ([`RunResult::load`]
    /// holds each attempt and its measured lag). It fails the run's exit code unless a
    /// baseline lists it under `flaky:`; run again on a quieter machine or with fewer runs at
    /// once (`-j`).
    FlakyUnderLoad,
}

impl Status {
    /// The name as `results.json` writes it (`passed`, `failed`, `skipped`, `error`,
    /// `pending`, `not_run`, `not_exercised`, `not_applicable`, `warned`, `flaky_under_load`).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
            Status::Error => "error",
            Status::Pending => "pending",
            Status::NotRun => "not_run",
            Status::NotExercised => "not_exercised",
            Status::NotApplicable => "not_applicable",
            Status::Warned => "warned",
            Status::FlakyUnderLoad => "flaky_under_load",
        }
    }

    /// Whether the run was judged on its checks (passed, warned or failed), as opposed to a
    /// run that got no verdict (skipped, errored, pending, not run, not exercised, not
    /// applicable, flaky under load), whose `reason` says why.
    pub fn is_verdict(self) -> bool {
        match self {
            Status::Passed | Status::Warned | Status::Failed => true,
            Status::Skipped
            | Status::Error
            | Status::Pending
            | Status::NotRun
            | Status::NotExercised
            | Status::NotApplicable
            | Status::FlakyUnderLoad => false,
        }
    }
}

/// The result of one run, as `results.json` holds it (one entry of its `runs` list). The
/// fields a reader may find absent (older or hand-written files) default when read; `None`
/// fields are not written (`skip_serializing_none`).
#[skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario file.
    pub path: PathBuf,
    /// The transport it ran over.
    pub transport: TransportName,
    /// The target, as given.
    #[serde(default)]
    pub target: String,
    /// How it ended.
    pub status: Status,
    /// Wall time.
    #[serde(default)]
    pub duration_ms: u64,
    /// The checks that failed and fail the run, with messages: for the bundled target every
    /// check that did not hold; for a third-party one those resting on an MCP MUST (and
    /// unclassified ones), plus SHOULDs under `--strict`.
    #[serde(default)]
    pub failures: Vec<CheckResult>,
    /// Checks resting on an MCP SHOULD that a third-party client did not meet: reported,
    /// the run still passes (unless `--strict`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<CheckResult>,
    /// Checks resting on a rule of our SPEC.md that a third-party client does not follow:
    /// information, never a verdict on that client.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<CheckResult>,
    /// Why the run was skipped or errored.
    pub reason: Option<String>,
    /// The snapshot comparison.
    #[serde(default)]
    pub snapshot: SnapshotStatus,
    /// The rendered, normalised transcript (what the snapshot holds).
    #[serde(skip)]
    pub transcript: String,
    /// Each plan step's outcome.
    #[serde(default)]
    pub steps: Vec<StepOutcome>,
    /// How an external client's process ended, its stderr tail and other stdout lines
    /// (`cmd:` targets only).
    pub client: Option<ProcessReport>,
    /// How the run compares with the client's expected-failures baseline, when one is given.
    pub baseline: Option<Verdict>,
    /// The pids of the mock processes this run started (one per connection).
    #[serde(skip)]
    pub mock_pids: Vec<u32>,
    /// What the mock recorded, one list per connection, with the run's ports, session ids,
    /// temp dir and secrets already redacted: what the HTML report draws. Not written to
    /// `results.json` (its readers need verdicts, not the wire).
    #[serde(skip)]
    pub wire: Vec<Vec<mcp_scenario::WireEvent>>,
    /// Every check of the scenario (and each always-on rule that failed) with its basis and
    /// how this run judged it: what the HTML report lists, and what the matrix shows a pass
    /// rests on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judged: Vec<JudgedCheck>,
    /// Present when the machine starved the run: the scheduling lag the harness measured
    /// passed the scenario's timing margin, so it was run again (see [`Load`]).
    pub load: Option<Load>,
}

/// What the harness measured of a run the machine starved, and the attempts it made
/// (`harness/src/starvation/`). The reported result is the last attempt's; its status is
/// `flaky_under_load` when the attempts' verdicts differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Load {
    /// The scenario's timing margin: the smallest gap between two times its verdict may
    /// compare (a timeout and a delay, a wait and the deadline), in ms.
    pub margin_ms: u64,
    /// Each attempt in order: its verdict and the largest scheduling lag measured during it.
    pub attempts: Vec<Attempt>,
}

/// One attempt at a starved run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// The attempt's status.
    pub status: Status,
    /// The checks that failed it, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// The largest scheduling lag the harness measured during the attempt, or how much
    /// later than the client's usual start-up its stdio server started serving, whichever
    /// is larger, in ms.
    pub lag_ms: u64,
}

/// One check as a run judged it (see [`RunResult::judged`]).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgedCheck {
    /// Which check (e.g. `check 2 (outcome)`), as [`CheckResult::check`] names it.
    pub check: String,
    /// What it rests on.
    pub level: Level,
    /// The spec sentence or SPEC.md section it rests on.
    pub reference: Option<String>,
    /// How the run judged it.
    pub judgement: Judgement,
}

/// How a run judged one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    /// It held.
    Held,
    /// It did not hold (a failure, a warning or a note, by its level and the target).
    Unmet,
    /// It does not apply to this target, transport or revision.
    NotApplicable,
    /// Not judged: the client cannot report what it reads, or the run was skipped.
    NotJudged,
}

impl RunResult {
    /// Its verdict is one draw of a race the client's baseline names (`flaky:`): the next run
    /// may draw the other, so neither the matrix nor a finding claims it.
    pub fn is_baseline_race_draw(&self) -> bool {
        self.baseline == Some(Verdict::Flaky) && self.status.is_verdict()
    }
}

impl Judgement {
    /// The name as written (`held`, `unmet`, `not_applicable`, `not_judged`).
    pub fn as_str(self) -> &'static str {
        match self {
            Judgement::Held => "held",
            Judgement::Unmet => "unmet",
            Judgement::NotApplicable => "not_applicable",
            Judgement::NotJudged => "not_judged",
        }
    }
}

/// A check that did not hold.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// Which check (e.g. `check 2 (outcome)` or `always: valid JSON-RPC`).
    pub check: String,
    /// What was expected and what happened.
    pub message: String,
    /// What the check rests on (`must`, `should`, `project`, `unclassified`).
    #[serde(default = "unclassified")]
    pub level: Level,
    /// The spec sentence or SPEC.md section it rests on.
    pub reference: Option<String>,
    /// The recorded wire events the check judged (its method's messages, the close or signal
    /// it looks for), where any crossed the wire: what the HTML report marks in the run's
    /// diagram and links from the failure. Empty when what the check looks for never came.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub about: Vec<WireAt>,
}

/// One recorded wire event of a run: where [`RunResult::wire`] holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireAt {
    /// The connection, 1-based (as transcripts number them).
    pub connection: usize,
    /// The event's index in that connection's records, 0-based.
    pub event: usize,
}

fn unclassified() -> Level {
    Level::Unclassified
}

/// The result of comparing a run's transcript with its snapshot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SnapshotStatus {
    /// Not compared (e.g. under `cargo test`, where insta compares).
    #[default]
    NotCompared,
    /// The snapshot matched.
    Matched,
    /// The snapshot was written (`--update-snapshots`).
    Updated {
        /// The file.
        path: PathBuf,
    },
    /// There was no snapshot yet: this run's transcript was written as the first one. Not a
    /// failure: a client the harness has never seen still gets verdicts from its checks.
    Created {
        /// The file written.
        path: PathBuf,
    },
    /// There was no snapshot yet and the run failed: its transcript waits beside it as
    /// `<file>.new` for review (`mcp-harness review`), never taken as the first snapshot.
    Withheld {
        /// The snapshot file it would become.
        path: PathBuf,
    },
    /// There is no snapshot yet and it was required (`--require-snapshots`).
    Missing {
        /// The file that should exist.
        path: PathBuf,
    },
    /// The transcript differs from the snapshot.
    Mismatch {
        /// The file.
        path: PathBuf,
        /// The first differing lines.
        diff: String,
    },
}

/// How one run compares with the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Passed and not listed.
    Pass,
    /// Failed and listed under `client:`.
    ExpectedFailure,
    /// Failed (or errored) and not listed: a regression.
    UnexpectedFailure,
    /// Listed under `client:` but passed: the entry is stale.
    StaleEntry,
    /// Listed under `flaky:`; either outcome is accepted.
    Flaky,
    /// Skipped for the target (or not applicable to it).
    Skipped,
    /// Not exercised and listed under `not_exercised:`.
    ExpectedNotExercised,
    /// Not exercised and not listed under `not_exercised:`: the client stopped reaching the
    /// scenario's fault (or never did and the baseline does not say so).
    UnexpectedNotExercised,
}

impl Verdict {
    /// The name as `results.json` writes it (e.g. `expected_failure`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::ExpectedFailure => "expected_failure",
            Verdict::UnexpectedFailure => "unexpected_failure",
            Verdict::StaleEntry => "stale_entry",
            Verdict::Flaky => "flaky",
            Verdict::Skipped => "skipped",
            Verdict::ExpectedNotExercised => "expected_not_exercised",
            Verdict::UnexpectedNotExercised => "unexpected_not_exercised",
        }
    }

    /// Whether this verdict fails the run.
    pub fn fails(self) -> bool {
        matches!(self, Verdict::UnexpectedFailure | Verdict::StaleEntry | Verdict::UnexpectedNotExercised)
    }
}

/// How a plan step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// It succeeded.
    Ok,
    /// It failed; `error` says how.
    Error,
    /// The target cannot perform this op.
    Unsupported,
    /// The run ended (deadline, crash) before this step ran or finished.
    NotRun,
}

/// The outcome of one plan step.
#[skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepOutcome {
    /// 1-based plan step.
    pub step: usize,
    /// A short description, e.g. `request tools/list`.
    pub what: String,
    /// How it ended.
    pub status: StepStatus,
    /// The result, for requests that succeeded.
    pub result: Option<Value>,
    /// The error text, when it failed.
    pub error: Option<String>,
    /// Wall time of the step.
    pub elapsed_ms: u64,
}

/// Everything the client side of a run produced.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClientOutcome {
    /// One entry per plan step, in order.
    pub steps: Vec<StepOutcome>,
    /// Notifications the client reported receiving: `(method, params)`.
    pub notifications: Vec<(String, Value)>,
    /// Problems the client reported on the side (the bundled error handler).
    pub reports: Vec<String>,
    /// The bundled client's counters, when the target is bundled.
    pub diagnostics: Option<DiagnosticCounters>,
    /// The run's deadline expired before the plan finished.
    pub hung: bool,
    /// How an external client's process ended and what it printed besides its step lines
    /// (`cmd:` targets only; the bundled client runs in-process).
    pub process: Option<ProcessReport>,
    /// What the bundled manager did on a managed connection, with times from the run start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manager_events: Vec<ManagerEventRecord>,
    /// What the client said it cannot report (`{"cannot_report": [...]}`): checks that depend
    /// on it are not judged for it, never failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cannot_report: Vec<Reportable>,
    /// Plan steps (1-based) the driver ended itself, not the SDK (`"by": "driver"` on an
    /// `ok: false` line): the step never reached the SDK (no connection to send it on), or
    /// the driver's own cancellation ended it. Checks on such a step's outcome are not judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ended_by_driver: Vec<usize>,
}

/// Something a client reports besides its step lines, which a driver may be unable to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reportable {
    /// The notifications it received (`notification` lines): `notified`, `not_notified`.
    Notifications,
}

impl Reportable {
    /// As a driver writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Reportable::Notifications => "notifications",
        }
    }
}

/// One event of a managed connection (see `ClientOutcome::manager_events`).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManagerEventRecord {
    /// Milliseconds since the run started.
    pub at_ms: u64,
    /// The event's name (`attempt`, `reconnected`, …).
    pub event: String,
    /// The schedule's delay before a reconnect attempt (no jitter), for `attempt` events.
    pub planned_ms: Option<u64>,
    /// The delay the manager waited before a reconnect attempt (the planned one plus the
    /// jitter it drew), for `attempt` events.
    pub delay_ms: Option<u64>,
    /// A readable description.
    pub detail: String,
    /// For `subscription_restored`: the possibly-missed window (from the drop to the new
    /// acknowledgement), kept out of `detail`: a measured time, which transcripts leave out.
    pub window_ms: Option<u64>,
}

/// How an external client process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum ProcessEnd {
    /// It exited by itself with this code.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// A signal it did not get from the harness killed it (a crash, e.g. `SIGSEGV`).
    Signalled {
        /// The signal's name.
        signal: String,
    },
    /// The harness killed its process group at the run deadline.
    KilledAtDeadline,
    /// The harness killed its process group because it wrote more than a pipe's cap.
    KilledForFlooding {
        /// The cap in bytes.
        cap: usize,
        /// Which pipe it flooded (`stdout` when absent, as before stderr had a cap).
        #[serde(default, skip_serializing_if = "Pipe::is_stdout")]
        pipe: Pipe,
    },
    /// It could not be started at all.
    NotStarted {
        /// Why (the command line could not be split, or the program could not be spawned).
        error: String,
    },
}

impl std::fmt::Display for ProcessEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessEnd::Exited { code } => write!(f, "client exited {code}"),
            ProcessEnd::Signalled { signal } => write!(f, "client killed by {signal}"),
            ProcessEnd::KilledAtDeadline => write!(f, "client killed at the run deadline (whole process group)"),
            ProcessEnd::KilledForFlooding { cap, pipe } => {
                write!(f, "client killed for flooding {pipe} past {cap} bytes (whole process group)")
            }
            ProcessEnd::NotStarted { error } => write!(f, "client could not be started: {error}"),
        }
    }
}

/// One of an external client's output pipes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pipe {
    /// Its stdout (the contract lines).
    #[default]
    Stdout,
    /// Its stderr (free-form logs).
    Stderr,
}

impl Pipe {
    /// Whether this is stdout (the default, left out of results.json).
    pub fn is_stdout(&self) -> bool {
        *self == Pipe::Stdout
    }
}

impl std::fmt::Display for Pipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Pipe::Stdout => "stdout",
            Pipe::Stderr => "stderr",
        })
    }
}

/// What the harness saw of an external client process, beyond its step lines.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessReport {
    /// How it ended.
    pub end: ProcessEnd,
    /// Bytes read from its stdout (up to the cap).
    pub stdout_bytes: usize,
    /// Stdout lines that were not contract lines (kept as diagnostics, never parsed as
    /// results; the first few only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_stdout: Vec<String>,
    /// Bytes it wrote to stderr (all of them counted; only the tail is kept).
    pub stderr_bytes: usize,
    /// The end of what it wrote to stderr (its own logs and, for stdio, usually the
    /// mock's inherited stderr): at most a few KiB, the rest of `stderr_bytes` dropped.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr_tail: String,
    /// Wall time from spawn to the end of the process, in ms.
    pub wall_ms: u64,
    /// Processes still in the client's process group once it had exited by itself (the
    /// harness killed them). Empty when the client was killed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leftovers: Vec<Leftover>,
    /// Processes the client started that had left its process group (`setsid`, `setpgid`)
    /// and were still alive once it had ended, found by the pipes they held or the run's
    /// `MCP_HARNESS_RUN_DIR` in their environment (the harness killed them). Unlike
    /// `leftovers`, filled however the client ended: killing its group does not reach them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub escaped: Vec<Escaped>,
    /// The SDK under test, as the driver named it (`{"sdk": {"name", "version"}}`).
    pub sdk: Option<Sdk>,
    /// When the run's deadline ended it: how long its most-waiting thread had waited for a
    /// CPU during the run, in ms (read from the kernel before the kill; Linux). A client
    /// starved of CPU may hang for the machine's sake, which the harness's own scheduling
    /// lag does not show: a wait past the room the plan had left re-runs the run.
    #[serde(default)]
    pub cpu_wait_ms: Option<u64>,
}

/// The SDK a driver runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sdk {
    /// Its package name.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// A process an external client left behind in its process group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leftover {
    /// Its process id.
    pub pid: u32,
    /// Its command line (shortened).
    pub command: String,
}

/// A process that left the client's process group and outlived the client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escaped {
    /// Its process id and command line.
    #[serde(flatten)]
    pub process: Leftover,
    /// Which of the client's pipes it still held open (none: found by its environment).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holding: Vec<Pipe>,
}

/// The bundled client's diagnostic counters (`mcp_transports::Diagnostics`), as reported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticCounters {
    /// Late responses dropped.
    pub late_responses: u64,
    /// Unknown-id responses dropped.
    pub unknown_responses: u64,
    /// Malformed or non-JSON-RPC messages dropped.
    pub protocol_violations: u64,
    /// Oversize messages dropped.
    pub oversize_dropped: u64,
    /// The tail of the server's stderr.
    pub stderr_tail: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serialised_names() {
        for s in [
            Status::Passed,
            Status::Failed,
            Status::Skipped,
            Status::Error,
            Status::Pending,
            Status::NotRun,
            Status::NotExercised,
            Status::NotApplicable,
            Status::FlakyUnderLoad,
        ] {
            assert_eq!(serde_json::to_value(s).ok(), Some(Value::from(s.as_str())));
        }
        for v in [
            Verdict::Pass,
            Verdict::ExpectedFailure,
            Verdict::UnexpectedFailure,
            Verdict::StaleEntry,
            Verdict::Flaky,
            Verdict::Skipped,
            Verdict::ExpectedNotExercised,
            Verdict::UnexpectedNotExercised,
        ] {
            assert_eq!(serde_json::to_value(v).ok(), Some(Value::from(v.as_str())));
        }
    }

    #[test]
    fn a_run_reads_back_what_it_wrote() {
        let run = RunResult {
            scenario: "s".into(),
            path: "scenarios/http/s.yaml".into(),
            transport: TransportName::LegacySse,
            target: "bundled".into(),
            status: Status::Failed,
            duration_ms: 3,
            failures: vec![CheckResult {
                check: "check 1 (sent)".into(),
                message: "m".into(),
                level: Level::Must,
                reference: Some("r".into()),
                about: Vec::new(),
            }],
            warnings: Vec::new(),
            notes: Vec::new(),
            reason: None,
            snapshot: SnapshotStatus::Missing { path: "s.snap".into() },
            transcript: "not written".into(),
            steps: Vec::new(),
            client: None,
            baseline: Some(Verdict::UnexpectedFailure),
            mock_pids: vec![1],
            wire: vec![vec![mcp_scenario::WireEvent::Listening { port: 1 }]],
            judged: Vec::new(),
            load: None,
        };
        let json = serde_json::to_value(&run).expect("serialises");
        assert_eq!(json["transport"], "legacy-sse");
        let back: RunResult = serde_json::from_value(json.clone()).expect("reads back");
        assert_eq!(serde_json::to_value(&back).expect("serialises"), json);
        assert!(back.transcript.is_empty() && back.mock_pids.is_empty() && back.wire.is_empty());
    }
}
