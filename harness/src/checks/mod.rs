//! Evaluating a run: the scenario's checks, one module per kind behind [`CheckKind`], and
//! the always-on rules ([`always`]). Only failures are returned; an empty list means the run
//! passed its checks. Which check applies to whom follows DESIGN "Checks: what applies to
//! whom": wire checks and outcome classes apply to every target, exact error texts and the
//! bundled client's counters to the bundled target only.
//!
//! # Adding a check
//!
//! Exactly these lines, and nothing else in the harness:
//!
//! 1. `scenario-model/src/checks.rs`: the check's data type `<Kind>Check` (its doc comments
//!    are the schema's descriptions) and one variant of [`Check`]: `<Kind>(<Kind>Check),`.
//! 2. `harness/src/checks/<kind>.rs`: `impl CheckKind for <Kind>Check` — its words for
//!    `explain` ([`CheckKind::explain`]), its load-time [`validate`] (messages name the field;
//!    the loader adds `<file>:<line>:<column>: check <n>: `), [`applies`] (which targets,
//!    transports, revisions judge it), [`evaluate`] against the transcript and outcome, and
//!    the typed [`Invalid`] and [`Failure`] whose Display are the messages; the failure
//!    type implements [`Finding`] (whether it says the client fell short).
//! 3. This file: `mod <kind>;` and one line `<Kind> => <kind>: <Kind>Check,` in the `kinds!`
//!    table. The module's name is the kind's name in files and messages (`check 2 (<kind>)`),
//!    which a test checks against serde's.
//! 4. `make schema` (regenerates `scenarios/schema.json`) and a row in the check table of
//!    `scenarios/README.md`.
//!
//! An always-on rule is the same with [`always::Rule`]: `checks/always/<rule>.rs`, and
//! `mod <rule>;` plus one `collect(&<rule>::<Rule>, …)` line in `always/mod.rs`.
//!
//! [`validate`]: CheckKind::validate
//! [`applies`]: CheckKind::applies
//! [`evaluate`]: CheckKind::evaluate
//! [`Invalid`]: CheckKind::Invalid
//! [`Failure`]: CheckKind::Failure

pub mod always;
mod answered;
mod at_most;
mod backoff;
mod cancelled;
mod diagnostics;
mod error_is;
mod header_value;
mod http;
mod http_order;
mod not_notified;
mod not_sent;
mod notified;
mod outcome;
mod param;
pub mod promise;
mod replays;
pub(crate) mod request_ids;
mod sent;
mod sent_before;
mod signal;
mod stdin_closed;
mod stream_closed;
#[cfg(test)]
pub(crate) mod testing;
pub mod times_out;

use crate::scope::{Scope, TargetKind};
use crate::transcript::Transcript;
use mcp_results::{CheckResult, ClientOutcome, JudgedCheck, Judgement, Reportable, WireAt};
use mcp_scenario::basis::Level;
use mcp_scenario::checks::Check;
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, ServerStep};
use serde_json::Value;
use std::fmt;

/// One kind of check (wiremock's `Match`, for a whole run): implemented by the kind's data
/// type from `mcp_scenario::checks`.
pub trait CheckKind {
    /// Why a scenario file is rejected at load time; its Display names the field.
    type Invalid: fmt::Display;

    /// Why the check failed on a run; its Display is the failure message, and it says
    /// whether the client fell short ([`Finding`]).
    type Failure: Finding;

    /// The check in words, for `mcp-harness explain`: what must hold ("the client sent
    /// `ping` at least once"). No default, so a new kind cannot forget it.
    fn explain(&self) -> String;

    /// Load-time validation against the rest of the scenario (steps, labels, names).
    fn validate(&self, _scenario: &Scenario) -> Result<(), Self::Invalid> {
        Ok(())
    }

    /// Whether the check is judged for a run of this scope; a check that does not apply is
    /// skipped, neither passed nor failed.
    fn applies(&self, _scope: &Scope) -> bool {
        true
    }

    /// What of the client's own report the check reads (a plan step's result, the
    /// notifications it saw, …), or `None` when it reads the wire alone. A recording of a
    /// host (`check-record`) has no such report, since a host runs no plan: the check is
    /// not judged there, with this as the reason, never passed.
    const READS_OUTCOME: Option<&'static str> = None;

    /// [`Self::READS_OUTCOME`], for a check in hand.
    fn reads_outcome(&self) -> Option<&'static str> {
        Self::READS_OUTCOME
    }

    /// Whether the check itself reports a client that hung until the run deadline (a
    /// `times_out` check: the hang is the missing default timeout it judges), so the
    /// always-on deadline rule stays silent on such a run.
    fn reports_the_hang(&self) -> bool {
        false
    }

    /// What the client must be able to report for the check to be judged (a driver that
    /// says it cannot report notifications is never failed on `notified`).
    fn needs(&self) -> Option<Reportable> {
        None
    }

    /// Whether the check holds by an absence on this run (a message not sent, at most N of
    /// them, a signal never received, a close the client's exit would make as well): any
    /// client that does nothing holds it, so a third-party pass never rests on it alone
    /// (`crate::exercise::evidence`).
    fn holds_by_absence(&self, _run: &Run<'_>) -> bool {
        false
    }

    /// Why this run cannot judge the check, where something about the run itself says so
    /// (a plan step the driver ended, not the SDK); the check is then not judged, with this.
    fn unjudged(&self, _run: &Run<'_>) -> Option<String> {
        None
    }

    /// Evaluates the check against the run's transcript and outcome.
    fn evaluate(&self, run: &Run<'_>) -> Result<(), Self::Failure>;

    /// The client messages the check judges, by JSON-RPC method (an HTTP method such as
    /// `DELETE` where it judges requests without one). A script that stopped waiting for one
    /// of them left this check unjudged, so `always: server script completes` rests on it.
    fn judges(&self, _scenario: &Scenario) -> Vec<String> {
        Vec::new()
    }

    /// Whether a wire event (one of [`Connection::events`]) is one this check judges: what a
    /// report marks when the check fails. By default the client's messages with a method of
    /// [`CheckKind::judges`] (an HTTP method there matches requests by theirs).
    ///
    /// [`Connection::events`]: crate::transcript::Connection::events
    fn concerns(&self, scenario: &Scenario, event: &WireEvent) -> bool {
        let judged = self.judges(scenario);
        !judged.is_empty() && sent_methods(event).iter().any(|m| judged.iter().any(|j| j == m))
    }
}

/// What the harness reads from a check's failure beyond its message
/// ([`CheckKind::Failure`]): implemented next to each kind's failure type.
pub trait Finding: fmt::Display {
    /// Whether the failure says the client fell short (did not send, answer, close, report,
    /// or not often enough) rather than that it did something wrong. A third-party client
    /// the harness killed at the run deadline may yet have done it: such a failure is not
    /// judged (the hang is the always-on deadline rule's finding), while one on what it did
    /// send stands. Default: it did something wrong.
    fn short(&self) -> bool {
        false
    }

    /// The plan step the failure is about, where it is about one (an `outcome`).
    fn step(&self) -> Option<usize> {
        None
    }
}

/// The methods a client's event carries: its JSON-RPC method(s) (each of a batch's), and an
/// HTTP request's own method.
pub(crate) fn sent_methods(event: &WireEvent) -> Vec<&str> {
    fn of_json(json: Option<&Value>) -> Vec<&str> {
        match json {
            Some(Value::Array(items)) => items.iter().filter_map(crate::transcript::method_of).collect(),
            Some(v) => crate::transcript::method_of(v).into_iter().collect(),
            None => Vec::new(),
        }
    }
    match event.http_method() {
        Some(http_method) => vec![http_method],
        None => of_json(event.client_message()),
    }
}

/// The check kinds, each `Check` variant with its name in a scenario file (which is its
/// module's name) and its type: `with_kind!` runs `$body` with `$k` bound to the check's
/// data, which implements [`CheckKind`]; [`name`] and [`KINDS`] name them; all from this one
/// table.
macro_rules! kinds {
    ($d:tt $($variant:ident => $name:ident: $ty:ty),* $(,)?) => {
        macro_rules! with_kind {
            ($d check:expr, $d k:ident => $d body:expr) => {
                match $d check {
                    $(Check::$variant($d k) => $d body,)*
                }
            };
        }

        /// Every check kind: its name in a scenario file and what of a client's own report it
        /// reads ([`CheckKind::READS_OUTCOME`]).
        pub const KINDS: &[(&str, Option<&str>)] = &[$((stringify!($name), <$ty as CheckKind>::READS_OUTCOME)),*];

        /// The name of a check's kind, as scenario files and messages write it.
        pub fn name(check: &Check) -> &'static str {
            match check {
                $(Check::$variant(_) => stringify!($name),)*
            }
        }
    };
}

kinds!($
    Outcome => outcome: mcp_scenario::checks::OutcomeCheck,
    Sent => sent: mcp_scenario::checks::SentCheck,
    NotSent => not_sent: mcp_scenario::checks::NotSentCheck,
    SentBefore => sent_before: mcp_scenario::checks::OrderCheck,
    Cancelled => cancelled: mcp_scenario::checks::CancelledCheck,
    Answered => answered: mcp_scenario::checks::AnsweredCheck,
    Signal => signal: mcp_scenario::checks::SignalCheck,
    StdinClosed => stdin_closed: mcp_scenario::checks::StdinClosedCheck,
    Diagnostics => diagnostics: mcp_scenario::checks::DiagnosticsCheck,
    Notified => notified: mcp_scenario::checks::NotifiedCheck,
    Http => http: mcp_scenario::checks::HttpCheck,
    Param => param: mcp_scenario::checks::ParamCheck,
    NotNotified => not_notified: mcp_scenario::checks::NotNotifiedCheck,
    HttpOrder => http_order: mcp_scenario::checks::HttpOrderCheck,
    StreamClosed => stream_closed: mcp_scenario::checks::StreamClosedCheck,
    ErrorIs => error_is: mcp_scenario::checks::ErrorIsCheck,
    Backoff => backoff: mcp_scenario::checks::BackoffCheck,
    TimesOut => times_out: mcp_scenario::checks::TimesOutCheck,
    Replays => replays: mcp_scenario::checks::ReplaysCheck,
);

/// The names of the check kinds that read a client's own report (comma-separated): what a
/// recording of a host cannot judge (`check-record`).
pub fn outcome_readers() -> String {
    KINDS.iter().filter(|(_, reads)| reads.is_some()).map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
}

/// What a run's checks are evaluated against.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// What the run is judged as.
    pub scope: Scope,
    /// What the client reported.
    pub outcome: &'a ClientOutcome,
    /// What the mock recorded.
    pub transcript: &'a Transcript,
}

/// A check a scenario file gets wrong: which one (0-based) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("check {}: {message}", .index + 1)]
pub struct InvalidCheck {
    /// The check's index in `checks:` (0-based).
    pub index: usize,
    /// What is wrong, naming the field.
    pub message: String,
}

/// Load-time validation of every check; the first problem, in file order.
pub fn validate(scenario: &Scenario) -> Result<(), InvalidCheck> {
    for (index, entry) in scenario.checks.iter().enumerate() {
        let check = &entry.check;
        with_kind!(check, k => k.validate(scenario).map_err(|e| InvalidCheck { index, message: e.to_string() }))?;
    }
    Ok(())
}

/// How results name a scenario's check `index` (0-based): `check 2 (outcome)`.
pub fn label(index: usize, check: &Check) -> String {
    format!("check {} ({})", index + 1, name(check))
}

/// The 0-based index a [`label`] names (`check 3 (sent)` → 2); `None` for the harness's own
/// rules (`always: …`).
pub fn index_of_label(label: &str) -> Option<usize> {
    label.strip_prefix("check ")?.split_whitespace().next()?.parse::<usize>().ok()?.checked_sub(1)
}

/// What of a client's own report `check` reads (see [`CheckKind::reads_outcome`]).
pub fn reads_outcome(check: &Check) -> Option<&'static str> {
    with_kind!(check, k => k.reads_outcome())
}

/// Whether the run hung to its deadline and one of its scenario's checks reports that (see
/// [`CheckKind::reports_the_hang`]), so the always-on deadline rule stays silent.
pub fn hang_reported_by_a_check(run: &Run<'_>) -> bool {
    run.outcome.hung && run.scenario.checks.iter().any(|c| with_kind!(&c.check, k => k.reports_the_hang()))
}

/// Whether the deadline ended the run while the client was in one of its plan's own `wait`
/// steps (every step before it reported): the plan was running, not hung, and the deadline
/// cut its observation window. On a starved machine the steps before the wait can take the
/// room the scenario's deadline leaves beside the wait; the run is then re-run
/// (`crate::starvation`), and no hang is reported.
pub fn cut_in_plan_wait(scenario: &Scenario, outcome: &mcp_results::ClientOutcome) -> bool {
    outcome.hung
        && first_unfinished(scenario, outcome).is_some_and(|step| matches!(step, mcp_scenario::ClientStep::Wait { .. }))
}

/// Whether the run hung to its deadline and each of its failures is an `outcome` check on a
/// plan step the client never reported: what the hang alone makes fail. Starved, such an
/// attempt has no verdict of its own (`crate::starvation`); one that failed on what the
/// client did (an id reused while in flight, a header missing) has, hang or not.
pub fn failed_by_the_hang_alone(scenario: &Scenario, hung: bool, result: &mcp_results::RunResult) -> bool {
    let unreported = |step: usize| {
        result.steps.iter().find(|s| s.step == step).is_none_or(|s| s.status == mcp_results::StepStatus::NotRun)
    };
    hung && result.failures.iter().all(|f| {
        let check = index_of_label(&f.check).and_then(|i| scenario.checks.get(i)).map(|e| &e.check);
        matches!(check, Some(Check::Outcome(o)) if unreported(o.step))
    })
}

/// The first plan step the client did not report (the one it was on when the run ended).
pub fn first_unfinished<'s>(
    scenario: &'s Scenario,
    outcome: &mcp_results::ClientOutcome,
) -> Option<&'s mcp_scenario::ClientStep> {
    let finished =
        |i: usize| outcome.steps.iter().any(|s| s.step == i + 1 && s.status != mcp_results::StepStatus::NotRun);
    scenario.client.iter().enumerate().find(|(i, _)| !finished(*i)).map(|(_, step)| step)
}

/// Whether `check` holds by an absence (see [`CheckKind::holds_by_absence`]).
pub fn holds_by_absence(check: &Check, run: &Run<'_>) -> bool {
    with_kind!(check, k => k.holds_by_absence(run))
}

/// The client messages `check` judges (see [`CheckKind::judges`]).
pub fn judged_messages(check: &Check, scenario: &Scenario) -> Vec<String> {
    with_kind!(check, k => k.judges(scenario))
}

/// The method of plan step `step` (1-based) when it sends one: what checks on that step's
/// outcome judge.
pub fn plan_method(scenario: &Scenario, step: usize) -> Vec<String> {
    use mcp_scenario::ClientStep;
    let sends = |s: &ClientStep| match s {
        ClientStep::Request { method, .. } | ClientStep::Notify { method, .. } => Some(method.clone()),
        _ => None,
    };
    match step.checked_sub(1).and_then(|i| scenario.client.get(i)) {
        Some(ClientStep::Await { request }) => scenario
            .client
            .iter()
            .find(|s| matches!(s, ClientStep::Request { label: Some(l), .. } if l == request))
            .and_then(sends)
            .into_iter()
            .collect(),
        Some(s) => sends(s).into_iter().collect(),
        None => Vec::new(),
    }
}

/// `check` evaluated on `run`, a failure as its message: what the checks' unit tests compare.
#[cfg(test)]
pub(crate) fn evaluated(check: &Check, run: &Run<'_>) -> Result<(), String> {
    with_kind!(check, k => k.evaluate(run).map_err(|f| f.to_string()))
}

/// The recorded events `check` judged on this run (see [`CheckKind::concerns`]), at most
/// [`MAX_ABOUT`], in wire order per connection.
pub fn about(check: &Check, run: &Run<'_>) -> Vec<WireAt> {
    let mut found: Vec<WireAt> = Vec::new();
    for c in run.transcript.connections() {
        for (i, e) in c.events().iter().enumerate() {
            if found.len() == MAX_ABOUT {
                return found;
            }
            if with_kind!(check, k => k.concerns(run.scenario, e))
                && let Some(event) = c.recorded_index(i)
            {
                let at = WireAt { connection: c.number(), event };
                if found.last() != Some(&at) {
                    found.push(at);
                }
            }
        }
    }
    found
}

/// How many events a verdict points at, at most (a client that re-sent a request thousands
/// of times gets the first ones marked).
pub const MAX_ABOUT: usize = 50;

/// A check in words, for `mcp-harness explain`.
pub fn explain(check: &Check) -> String {
    with_kind!(check, k => k.explain())
}

/// What evaluating a run found.
#[derive(Debug, Default)]
pub struct Evaluation {
    /// Checks (and always-on rules) that did not hold.
    pub unmet: Vec<CheckResult>,
    /// Checks not judged because the client said it cannot report what they read.
    pub unjudged: Vec<CheckResult>,
}

/// Evaluates every check that applies, then the always-on rules.
pub fn evaluate(run: &Run<'_>) -> Evaluation {
    evaluate_as(run, false)
}

/// Evaluates a recording of a host (`check-record`): as [`evaluate`], except that checks
/// reading the client's own report ([`CheckKind::reads_outcome`]) are not judged.
pub fn evaluate_recording(run: &Run<'_>) -> Evaluation {
    evaluate_as(run, true)
}

fn evaluate_as(run: &Run<'_>, recording: bool) -> Evaluation {
    enum Judged {
        Held,
        Unmet(String),
        Unjudged(Reportable),
        NoReport(&'static str),
        Withheld(String),
    }
    /// A run the deadline cut short, and the step it hung on with its answer in hand, if any
    /// (see [`cut_by_deadline`]): worked out once per run.
    struct Cut {
        cut: bool,
        answered_step: Option<usize>,
    }
    // A `driver:` check judges the driver itself: what the driver did is its evidence.
    fn judge<K: CheckKind>(k: &K, run: &Run<'_>, recording: bool, driver: bool, deadline: &Cut) -> Judged {
        // A recording lists every check that reads a client's report as not applicable,
        // even one that would apply to the bundled client only (`diagnostics`): a reader
        // of the verdict sees each check of the file accounted for.
        if let Some(reads) = k.reads_outcome().filter(|_| recording) {
            return Judged::NoReport(reads);
        }
        if !k.applies(&run.scope) {
            return Judged::Held;
        }
        if let Some(needed) = k.needs().filter(|n| run.outcome.cannot_report.contains(n)) {
            return Judged::Unjudged(needed);
        }
        if let Some(why) = k.unjudged(run).filter(|_| !driver) {
            return Judged::Withheld(why);
        }
        match k.evaluate(run) {
            Ok(()) => Judged::Held,
            Err(failure)
                if !driver
                    && deadline.cut
                    && failure.short()
                    && failure.step().is_none_or(|step| Some(step) != deadline.answered_step) =>
            {
                Judged::Withheld(format!(
                    "not judged: {failure}, but the harness killed the client at the run deadline, so its window never closed (the hang is the deadline rule's finding)"
                ))
            }
            Err(failure) => Judged::Unmet(failure.to_string()),
        }
    }
    let cut = cut_by_deadline(run);
    let deadline = Cut { cut, answered_step: if cut { hung_on_an_answer(run) } else { None } };
    let mut found = Evaluation::default();
    for (i, entry) in run.scenario.checks.iter().enumerate() {
        let check = &entry.check;
        let result = |message: String| CheckResult {
            check: label(i, check),
            message,
            level: entry.level(),
            reference: entry.basis.as_ref().map(|b| b.reference.clone()),
            about: Vec::new(),
        };
        match with_kind!(check, k => judge(k, run, recording, entry.level() == Level::Driver, &deadline)) {
            Judged::Held => {}
            Judged::Unmet(message) => found.unmet.push(CheckResult { about: about(check, run), ..result(message) }),
            Judged::Unjudged(what) => found.unjudged.push(result(format!(
                "not judged: the client said it cannot report {} (`cannot_report`)",
                what.as_str()
            ))),
            Judged::NoReport(reads) => found.unjudged.push(result(format!(
                "not applicable to a recording: it reads {reads}, and a host runs no plan and reports nothing"
            ))),
            Judged::Withheld(why) => found.unjudged.push(result(why)),
        }
    }
    found.unmet.extend(always::judge(run));
    found
}

/// Whether the harness killed a third-party client at the run deadline with its plan
/// unfinished (a `times_out` check that expects the hang judges it instead): what the
/// client had not done by then it may yet have done. The bundled client is bounded by
/// SPEC.md, so its shortfalls stand. One shortfall stands even so: the step the client hung
/// on when the mock had answered it ([`hung_on_an_answer`]).
pub fn cut_by_deadline(run: &Run<'_>) -> bool {
    run.outcome.hung && !run.scope.target.is_bundled() && !hang_reported_by_a_check(run)
}

/// The plan step the client hung on, when the mock had answered its request (the response,
/// alone or in a batch, carried the request's id): the client was given what it waited for
/// and did not take it. That step's outcome is no open window but how it handled the
/// answer, so its checks judge it; what the plan would have done after it is still open.
fn hung_on_an_answer(run: &Run<'_>) -> Option<usize> {
    use mcp_results::StepStatus;
    use mcp_scenario::ClientStep;
    let finished = |n: usize| run.outcome.steps.iter().any(|s| s.step == n && s.status != StepStatus::NotRun);
    let n = (1..=run.scenario.client.len()).find(|n| !finished(*n))?;
    let methods = match &run.scenario.client[n - 1] {
        ClientStep::Connect(_) => vec!["initialize".to_string()],
        _ => plan_method(run.scenario, n),
    };
    let mut ids = request_ids::RequestIds::default();
    for m in run.transcript.client_messages() {
        if crate::transcript::method_of(m).is_some_and(|m| methods.iter().any(|w| w == m))
            && let Some(id) = m.get("id")
        {
            ids.insert(id);
        }
    }
    let answers = |m: &Value| {
        m.get("id").is_some_and(|id| ids.contains(id)) && (m.get("result").is_some() || m.get("error").is_some())
    };
    let answered = run.transcript.events().any(|e| {
        let Some(bytes) = e.mock_write() else { return false };
        crate::transcript::messages_in(bytes.text.as_deref().unwrap_or_default()).iter().any(|m| match m {
            Value::Array(batch) => batch.iter().any(answers),
            m => answers(m),
        })
    });
    answered.then_some(n)
}

/// Every check of the run's scenario with its basis and how `found` judged it, then the
/// always-on rules that failed: what the HTML report lists per run (`found` holds only what
/// did not hold, so held and not-applicable are told apart here).
pub fn judged(run: &Run<'_>, found: &Evaluation) -> Vec<JudgedCheck> {
    fn applies<K: CheckKind>(k: &K, scope: &Scope) -> bool {
        k.applies(scope)
    }
    let named = |list: &[CheckResult], name: &str| list.iter().any(|r| r.check == name);
    let mut out: Vec<JudgedCheck> = run
        .scenario
        .checks
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let check = label(i, &entry.check);
            let judgement = if named(&found.unmet, &check) {
                Judgement::Unmet
            } else if named(&found.unjudged, &check) {
                Judgement::NotJudged
            } else if with_kind!(&entry.check, k => applies(k, &run.scope)) {
                Judgement::Held
            } else {
                Judgement::NotApplicable
            };
            JudgedCheck {
                check,
                level: entry.level(),
                reference: entry.basis.as_ref().map(|b| b.reference.clone()),
                judgement,
            }
        })
        .collect();
    let rules: Vec<&CheckResult> = found.unmet.iter().filter(|r| !out.iter().any(|j| j.check == r.check)).collect();
    for r in rules {
        out.push(JudgedCheck {
            check: r.check.clone(),
            level: r.level,
            reference: r.reference.clone(),
            judgement: Judgement::Unmet,
        });
    }
    out
}

/// A run's unmet checks sorted by what they weigh for its target.
#[derive(Debug, Default)]
pub struct Weighed {
    /// They fail the run.
    pub failures: Vec<CheckResult>,
    /// Unmet SHOULDs of a third-party client: reported, the run passes.
    pub warnings: Vec<CheckResult>,
    /// Unmet SPEC.md rules of a third-party client: information only.
    pub notes: Vec<CheckResult>,
}

/// Sorts unmet checks by basis: the bundled client, which SPEC.md describes, fails on every
/// one; a third-party client fails only on an MCP MUST (or an unclassified check), is warned
/// on a SHOULD or a robustness finding (failed under `strict`) and noted on a SPEC.md rule.
pub fn weigh(unmet: Vec<CheckResult>, target: TargetKind, strict: bool) -> Weighed {
    let mut w = Weighed::default();
    for r in unmet {
        match (target, r.level) {
            // A promise reaches here only for a target it binds (`promises::unbind` notes the rest).
            (TargetKind::Bundled, _) | (_, Level::Must | Level::Unclassified | Level::Driver | Level::Promise) => {
                w.failures.push(r)
            }
            (TargetKind::External, Level::Should | Level::Robustness) if strict => w.failures.push(r),
            (TargetKind::External, Level::Should | Level::Robustness) => w.warnings.push(r),
            (TargetKind::External, Level::Project) => w.notes.push(r),
        }
    }
    w
}

/// Whether a script step waits for something from the client (a step the client can leave
/// the script stuck at). An optional `expect_get` waits for nothing.
pub fn waits_for_client(step: &ServerStep) -> bool {
    match step {
        ServerStep::Handshake(_)
        | ServerStep::Expect(_)
        | ServerStep::ExpectResponse(_)
        | ServerStep::ExpectEof(_)
        | ServerStep::ExpectWrite(_)
        | ServerStep::ExpectDelete(_) => true,
        ServerStep::ExpectGet(g) => !g.optional,
        _ => false,
    }
}

/// Whether a server step carries `label` as `label_of` reads it (an `expect … as:`, a
/// `request … as:`): what checks that name a script label validate against.
pub fn script_labels(scenario: &Scenario, label_of: fn(&ServerStep) -> Option<&str>, label: &str) -> bool {
    scenario.server.iter().filter_map(label_of).any(|l| l == label)
}

/// A check's `request` names a label no server step of the kind it means carries (shared by
/// the checks that take a script label: `answered` names a `request … as:`, `cancelled` an
/// `expect … as:`).
#[derive(Debug, thiserror::Error)]
#[error("field `request`: no server `{op}` is labelled {label:?}")]
pub struct NoSuchLabel {
    /// The op whose label is meant (`request`, `expect`).
    pub op: &'static str,
    /// The label named.
    pub label: String,
}

impl NoSuchLabel {
    /// `Err` unless a server `op` step carries `label` as `label_of` reads it.
    pub fn check(
        scenario: &Scenario,
        label_of: fn(&ServerStep) -> Option<&str>,
        op: &'static str,
        label: &str,
    ) -> Result<(), NoSuchLabel> {
        if script_labels(scenario, label_of, label) { Ok(()) } else { Err(NoSuchLabel { op, label: label.into() }) }
    }
}

/// A check names a plan step that does not exist (shared by the checks that take `step`).
#[derive(Debug, thiserror::Error)]
#[error("field `step`: plan step {step} does not exist (the client plan has {steps} steps, numbered from 1)")]
pub struct NoSuchStep {
    /// The step named.
    pub step: usize,
    /// How many steps the plan has.
    pub steps: usize,
}

impl NoSuchStep {
    /// `Err` unless `step` (1-based) names a step of `scenario`'s plan.
    pub fn check(step: usize, scenario: &Scenario) -> Result<(), NoSuchStep> {
        let steps = scenario.client.len();
        if step == 0 || step > steps { Err(NoSuchStep { step, steps }) } else { Ok(()) }
    }
}

/// Recursive subset match: every member of `want` is in `got` with a matching value.
pub fn subset(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w.iter().all(|(k, wv)| g.get(k).is_some_and(|gv| subset(wv, gv))),
        _ => want == got,
    }
}

#[cfg(test)]
mod tests {
    use super::{TargetKind, weigh};
    use mcp_results::CheckResult;
    use mcp_scenario::basis::Level;

    #[test]
    fn a_hang_alone_fails_only_the_outcomes_of_the_steps_it_left_unreported() {
        let text = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\nchecks:\n  - outcome: {step: 1, ok: true}\n    must: m\n  - outcome: {step: 2, ok: true}\n    must: m\n  - sent: {method: tools/list}\n    must: m\n";
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), text).expect("parses");
        let failed = |checks: &[&str], connect: mcp_results::StepStatus| {
            let mut r: mcp_results::RunResult = serde_json::from_value(serde_json::json!({
                "scenario": "t", "path": "t.yaml", "transport": "stdio", "status": "failed",
            }))
            .expect("a run");
            r.steps = [(1, connect), (2, mcp_results::StepStatus::NotRun)]
                .into_iter()
                .map(|(step, status)| mcp_results::StepOutcome {
                    step,
                    what: String::new(),
                    status,
                    result: None,
                    error: None,
                    elapsed_ms: 0,
                })
                .collect();
            r.failures = checks
                .iter()
                .map(|c| CheckResult {
                    check: c.to_string(),
                    message: String::new(),
                    level: Level::Must,
                    reference: None,
                    about: Vec::new(),
                })
                .collect();
            r
        };
        use mcp_results::StepStatus::{NotRun, Ok};
        let hang_alone = |r: &mcp_results::RunResult| super::failed_by_the_hang_alone(&scenario, true, r);
        assert!(hang_alone(&failed(&["check 1 (outcome)", "check 2 (outcome)"], NotRun)));
        assert!(!hang_alone(&failed(&["check 1 (outcome)"], Ok)), "step 1 was reported");
        assert!(!hang_alone(&failed(&["check 2 (outcome)", "check 3 (sent)"], Ok)), "judged on the wire");
        assert!(!hang_alone(&failed(&["always: ids are unique"], Ok)));
        assert!(!super::failed_by_the_hang_alone(&scenario, false, &failed(&["check 2 (outcome)"], Ok)), "no hang");
    }

    #[test]
    fn only_the_bundled_client_fails_on_should_and_project() {
        let unmet: Vec<CheckResult> =
            [Level::Must, Level::Should, Level::Project, Level::Unclassified, Level::Driver, Level::Robustness]
                .into_iter()
                .map(|level| CheckResult {
                    check: level.to_string(),
                    message: String::new(),
                    level,
                    reference: None,
                    about: Vec::new(),
                })
                .collect();
        let names = |l: &[CheckResult]| l.iter().map(|r| r.check.clone()).collect::<Vec<_>>();
        let bundled = weigh(unmet.clone(), TargetKind::Bundled, false);
        assert_eq!(names(&bundled.failures), ["must", "should", "project", "unclassified", "driver", "robustness"]);
        let external = weigh(unmet.clone(), TargetKind::External, false);
        assert_eq!(names(&external.failures), ["must", "unclassified", "driver"]);
        assert_eq!(names(&external.warnings), ["should", "robustness"]);
        assert_eq!(names(&external.notes), ["project"]);
        let strict = weigh(unmet, TargetKind::External, true);
        assert_eq!(names(&strict.failures), ["must", "should", "unclassified", "driver", "robustness"]);
        assert_eq!(names(&strict.notes), ["project"]);
    }

    #[test]
    fn every_kind_is_named_as_scenario_files_write_it() {
        // serde's unknown-variant error lists every variant it knows.
        let err = serde_json::from_str::<Check>(r#"{"nope": {}}"#).expect_err("unknown kind").to_string();
        let listed = err.split("expected one of ").nth(1).expect("variants listed");
        let known: std::collections::BTreeSet<&str> = listed.split('`').skip(1).step_by(2).collect();
        let named: std::collections::BTreeSet<&str> = KINDS.iter().map(|(name, _)| *name).collect();
        assert_eq!(named.len(), KINDS.len(), "one name per kind");
        assert_eq!(named, known);
    }

    #[test]
    fn a_label_names_its_index() {
        assert_eq!(super::index_of_label("check 3 (sent)"), Some(2));
        assert_eq!(super::index_of_label("always: valid JSON-RPC"), None);
        assert_eq!(super::index_of_label("check 0 (sent)"), None);
    }

    #[test]
    fn a_recording_lists_every_check_that_reads_a_report_even_a_bundled_only_one() {
        let scenario = crate::checks::testing::scenario("stdio", "diagnostics: {protocol_violations: 1}");
        let transcript = crate::transcript::Transcript::new(vec![vec![]]);
        let outcome = mcp_results::ClientOutcome::default();
        let run = super::Run {
            scenario: &scenario,
            scope: crate::checks::testing::external_scope(&scenario),
            outcome: &outcome,
            transcript: &transcript,
        };
        let found = super::evaluate_recording(&run);
        assert_eq!(found.unjudged.len(), 1, "{:?}", found.unjudged);
        assert!(
            found.unjudged[0]
                .message
                .starts_with("not applicable to a recording: it reads the bundled client's counters")
        );
        assert!(super::evaluate(&run).unjudged.is_empty(), "a third-party run leaves it out, as before");
    }

    use super::*;
    use serde_json::json;

    /// A third-party client the deadline killed: what it had not sent yet is not judged,
    /// what it did send wrong still is; the bundled client's shortfalls always stand.
    #[test]
    fn a_hang_withholds_shortfalls_only() {
        use mcp_scenario::wire::WireEvent;
        let sent_once = || {
            let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
            let bytes = mcp_scenario::wire::Recorded::of(ping.to_string().as_bytes());
            vec![WireEvent::FromClient { t_us: 0, bytes, json: Some(ping), terminated: true }]
        };
        let judged = |check: &str, target: TargetKind| {
            let scenario = testing::scenario("stdio", check);
            let transcript = Transcript::new(vec![sent_once()]);
            let outcome = ClientOutcome { hung: true, ..ClientOutcome::default() };
            let scope = Scope { target, ..testing::external_scope(&scenario) };
            let run = Run { scenario: &scenario, scope, outcome: &outcome, transcript: &transcript };
            let found = evaluate(&run);
            let named = |l: &[CheckResult]| l.iter().any(|r| r.check.starts_with("check 1"));
            (named(&found.unmet), named(&found.unjudged))
        };
        // Too few pings: the client may yet have sent another.
        assert_eq!(judged("sent: {method: ping, count: 2}", TargetKind::External), (false, true));
        // A ping it was not to send: it did.
        assert_eq!(judged("not_sent: {method: ping}", TargetKind::External), (true, false));
        assert_eq!(judged("sent: {method: ping, count: 2}", TargetKind::Bundled), (true, false));

        // Hung on a request the mock answered: it was given what it waited for, so the step
        // it never finished is judged.
        let text = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: ping\nserver: []\nchecks:\n  - outcome: {step: 2, ok: true}\n    must: \"x\"\n";
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), text).expect("parses");
        let outcome = ClientOutcome { hung: true, steps: vec![testing::ok_step(1)], ..ClientOutcome::default() };
        let unmet = |answered: bool| {
            let mut events = sent_once();
            if answered {
                let bytes = mcp_scenario::wire::Recorded::of(br#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#);
                events.push(WireEvent::ToClient { t_us: 1, bytes, why: "reply".into() });
            }
            let transcript = Transcript::new(vec![events]);
            let scope = testing::external_scope(&scenario);
            let run = Run { scenario: &scenario, scope, outcome: &outcome, transcript: &transcript };
            evaluate(&run).unmet.iter().any(|r| r.check.starts_with("check 1"))
        };
        assert!(unmet(true));
        assert!(!unmet(false));
    }

    #[test]
    fn subset_matches_recursively() {
        assert!(subset(&json!({"a": {"b": 1}}), &json!({"a": {"b": 1, "c": 2}, "d": 3})));
        assert!(!subset(&json!({"a": {"b": 2}}), &json!({"a": {"b": 1}})));
        assert!(subset(&json!([1, 2]), &json!([1, 2])));
    }
}
