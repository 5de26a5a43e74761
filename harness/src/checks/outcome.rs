//! `outcome`: how a plan step ended. The class (ok or error) and the result, timing bounds
//! apply to every target; the exact error text (`error:`, a prefix of SPEC's strings) is
//! judged for the bundled target only — a third-party client's own wording is recorded in
//! its snapshot, not judged.

use super::{CheckKind, Finding, Run, subset};
use mcp_results::StepStatus;
use mcp_scenario::Scenario;
use mcp_scenario::checks::OutcomeCheck;
use serde_json::Value;

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::NoOutcome { .. } | Failure::DidNotRun { .. } | Failure::DidNotFinish { .. })
    }

    fn step(&self) -> Option<usize> {
        match self {
            Failure::NoOutcome { step } | Failure::DidNotRun { step, .. } | Failure::DidNotFinish { step, .. } => {
                Some(*step)
            }
            _ => None,
        }
    }
}

impl CheckKind for OutcomeCheck {
    fn explain(&self) -> String {
        let class = match (self.ok, &self.error, self.settled) {
            (_, _, true) => "ended, by success or failure, before the deadline".to_string(),
            (_, Some(e), _) => {
                format!("failed with an error starting {e:?} (the text is judged for the bundled client only)")
            }
            (Some(true), None, _) => "succeeded".into(),
            (Some(false), None, _) => "failed".into(),
            (None, None, false) => "succeeded".into(),
        };
        let mut s = format!("plan step {} {class}", self.step);
        if let Some(r) = &self.result {
            s.push_str(&format!(", with a result containing {r}"));
        }
        if let Some(ms) = self.within_ms {
            s.push_str(&format!(", within {ms}ms"));
        }
        if let Some(ms) = self.at_least_ms {
            s.push_str(&format!(", taking at least {ms}ms"));
        }
        s
    }

    const READS_OUTCOME: Option<&'static str> = Some("a plan step's result");

    /// A step the driver ended itself (it never reached the SDK, or the driver's own cancel
    /// ended it) says nothing of how the client handled anything.
    fn unjudged(&self, run: &Run<'_>) -> Option<String> {
        run.outcome.ended_by_driver.contains(&self.step).then(|| {
            format!(
                "not judged: the driver, not the SDK, ended step {} (`\"by\": \"driver\"`), so its outcome shows nothing of the client",
                self.step
            )
        })
    }
    type Invalid = Invalid;
    type Failure = Failure;

    fn validate(&self, scenario: &Scenario) -> Result<(), Invalid> {
        super::NoSuchStep::check(self.step, scenario)?;
        if self.error.is_some() && self.ok == Some(true) {
            return Err(Invalid::OkWithError);
        }
        if self.settled && (self.ok.is_some() || self.error.is_some()) {
            return Err(Invalid::SettledWithClass);
        }
        if self.ok.is_none() && self.error.is_none() && !self.settled {
            return Err(Invalid::NoClass { step: self.step });
        }
        if let Some(within) = self.within_ms
            && let Some(timeout) =
                request_timers(scenario, self.step).into_iter().find(|t| within.abs_diff(*t) < TIMER_MARGIN_MS)
        {
            return Err(Invalid::BoundOnTimer { step: self.step, within, timeout });
        }
        // A step that must succeed cannot have ended at its timer: the class decides.
        if let Some(at_least) = self.at_least_ms
            && self.ok != Some(true)
            && let Some(timeout) = request_timers(scenario, self.step)
                .into_iter()
                .find(|t| at_least + EARLY_MARGIN_MS > *t && at_least < t + TIMER_MARGIN_MS)
        {
            return Err(Invalid::MinimumOnTimer { step: self.step, at_least, timeout });
        }
        Ok(())
    }

    fn judges(&self, scenario: &Scenario) -> Vec<String> {
        super::plan_method(scenario, self.step)
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let n = self.step;
        let step = n.checked_sub(1).and_then(|i| run.outcome.steps.get(i)).ok_or(Failure::NoOutcome { step: n })?;
        let what = || step.what.clone();
        if matches!(step.status, StepStatus::NotRun | StepStatus::Unsupported) {
            let why = step.error.clone().unwrap_or_default();
            // The first step without an outcome of a plan the deadline cut was running then:
            // it started and hung, it did not fail to start.
            let first_open = run.outcome.steps.iter().find(|s| s.status == StepStatus::NotRun).map(|s| s.step);
            if run.outcome.hung && step.status == StepStatus::NotRun && first_open == Some(n) {
                return Err(Failure::DidNotFinish { step: n, what: what(), why });
            }
            return Err(Failure::DidNotRun { step: n, what: what(), why });
        }
        let want_ok = self.ok.unwrap_or(self.error.is_none());
        if !self.settled && want_ok != (step.status == StepStatus::Ok) {
            return Err(match &step.error {
                Some(error) => Failure::Failed { step: n, what: what(), error: error.clone() },
                None => Failure::Succeeded { step: n, what: what() },
            });
        }
        if let Some(prefix) = &self.error
            && run.scope.target.is_bundled()
        {
            let got = step.error.as_deref().unwrap_or("");
            if !got.starts_with(prefix.as_str()) {
                return Err(Failure::ErrorText { step: n, got: got.to_string(), prefix: prefix.clone() });
            }
        }
        if let Some(want) = &self.result {
            let got = step.result.clone().unwrap_or(Value::Null);
            if !subset(want, &got) {
                return Err(Failure::Result { step: n, got, want: want.clone() });
            }
        }
        if let Some(max) = self.within_ms
            && step.elapsed_ms > max
        {
            return Err(Failure::TooSlow { step: n, ms: step.elapsed_ms, max });
        }
        if let Some(min) = self.at_least_ms
            && step.elapsed_ms < min
        {
            return Err(Failure::TooFast { step: n, ms: step.elapsed_ms, min });
        }
        Ok(())
    }
}

/// How far a `within_ms` bound must stay from the step's own timeout. A client's timer
/// fires a few ms late (more under load), so a bound that close to it is a race, not a
/// bound: the same client lands on either side of it from run to run.
const TIMER_MARGIN_MS: u64 = 100;

/// How far below the step's own timeout an `at_least_ms` must stay. A timer rarely fires
/// early, but by a little it does: the client's clock reads whole milliseconds, and an
/// event loop times a timer from when its iteration started (Node's 150 ms timer was
/// measured at 149 ms under load).
const EARLY_MARGIN_MS: u64 = 10;

/// The timers a plan step that waits for its own request runs under: a `connect`'s timeout
/// (it bounds initialize); a request's timeout (its `timeout_ms`, else the last `connect`'s)
/// and its `max_total_timeout_ms`. None for any other step (an `await` is timed from when
/// it starts waiting, not from the request).
fn request_timers(scenario: &Scenario, step: usize) -> Vec<u64> {
    use mcp_scenario::ClientStep;
    let Some(i) = step.checked_sub(1) else { return Vec::new() };
    let connect = || {
        scenario.client[..i].iter().rev().find_map(|s| match s {
            ClientStep::Connect(c) => Some(c.timeout_ms),
            _ => None,
        })?
    };
    let timers = match scenario.client.get(i) {
        Some(ClientStep::Connect(c)) => [c.timeout_ms, None],
        Some(ClientStep::Request { timeout_ms, max_total_timeout_ms, background: false, .. }) => {
            [timeout_ms.or_else(connect), *max_total_timeout_ms]
        }
        _ => return Vec::new(),
    };
    timers.into_iter().flatten().filter(|ms| *ms > 0).collect()
}

/// An `outcome` check the loader rejects.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// The plan has no such step.
    #[error(transparent)]
    NoSuchStep(#[from] super::NoSuchStep),
    /// `ok: true` with an expected error.
    #[error("fields `ok: true` and `error`: an expected error implies `ok: false`")]
    OkWithError,
    /// Neither `ok`, `error` nor `settled`: the check would silently mean `ok: true`.
    #[error(
        "field `ok`: say how step {step} must end: `ok: true` (it succeeds), `ok: false` (it fails), `error: \"…\"` (it fails with this text) or `settled: true` (it ends either way, before the deadline)"
    )]
    NoClass {
        /// The step.
        step: usize,
    },
    /// `within_ms` next to the step's own timeout.
    #[error(
        "field `within_ms`: {within} ms is within {TIMER_MARGIN_MS} ms of step {step}'s own timeout ({timeout} ms), so a client that waits out its timer passes or fails by a few ms; write at most {} (the step must end before its timeout: what the scenario does ended it) or at least {} (ending at the timeout is enough)",
        timeout.saturating_sub(TIMER_MARGIN_MS),
        timeout + TIMER_MARGIN_MS
    )]
    BoundOnTimer {
        /// The step.
        step: usize,
        /// The bound.
        within: u64,
        /// The step's timeout.
        timeout: u64,
    },
    /// `at_least_ms` next to the step's own timeout.
    #[error(
        "field `at_least_ms`: {at_least} ms is too close to step {step}'s own timeout ({timeout} ms): a timer can fire a few ms early by the client's clock, so a client that waits out its timer passes or fails by chance; write at most {} (the step waited out its timeout) or at least {} (the step outlived its timeout)",
        timeout.saturating_sub(EARLY_MARGIN_MS),
        timeout + TIMER_MARGIN_MS
    )]
    MinimumOnTimer {
        /// The step.
        step: usize,
        /// The minimum.
        at_least: u64,
        /// The step's timeout.
        timeout: u64,
    },
    /// `settled: true` beside a class.
    #[error("fields `settled` and `ok` / `error`: `settled: true` leaves the class open; give one or the other")]
    SettledWithClass,
}

/// How a step's outcome differed from the check.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The client reported nothing for the step.
    #[error("step {step} has no outcome")]
    NoOutcome {
        /// The step.
        step: usize,
    },
    /// The step was running when the run deadline cut the plan: it started and hung.
    #[error("step {step} ({what}) did not finish: {why} while it ran")]
    DidNotFinish {
        /// The step.
        step: usize,
        /// Its description.
        what: String,
        /// Why, as reported (the deadline).
        why: String,
    },
    /// The step was not run or not supported.
    #[error("step {step} ({what}) did not run: {why}")]
    DidNotRun {
        /// The step.
        step: usize,
        /// Its description.
        what: String,
        /// Why, as reported.
        why: String,
    },
    /// The step failed; success was expected.
    #[error("step {step} ({what}) failed: {error}")]
    Failed {
        /// The step.
        step: usize,
        /// Its description.
        what: String,
        /// The error text.
        error: String,
    },
    /// The step succeeded; an error was expected.
    #[error("step {step} ({what}) succeeded, expected an error")]
    Succeeded {
        /// The step.
        step: usize,
        /// Its description.
        what: String,
    },
    /// The error text does not start with the expected prefix.
    #[error("step {step} error is {got:?}, expected it to start with {prefix:?}")]
    ErrorText {
        /// The step.
        step: usize,
        /// The error text.
        got: String,
        /// The expected prefix.
        prefix: String,
    },
    /// The result lacks expected members.
    #[error("step {step} result {got} does not contain {want}")]
    Result {
        /// The step.
        step: usize,
        /// The result (null when none).
        got: Value,
        /// The members expected.
        want: Value,
    },
    /// The step took longer than the bound.
    #[error("step {step} took {ms}ms, bound is {max}ms")]
    TooSlow {
        /// The step.
        step: usize,
        /// Its wall time.
        ms: u64,
        /// The bound.
        max: u64,
    },
    /// The step was quicker than the minimum.
    #[error("step {step} took {ms}ms, expected at least {min}ms")]
    TooFast {
        /// The step.
        step: usize,
        /// Its wall time.
        ms: u64,
        /// The minimum.
        min: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::with_plan as scenario;

    #[test]
    fn a_step_the_driver_ended_is_not_judged() {
        let s = scenario("  - op: connect\n  - op: request\n    method: ping\n");
        let check = OutcomeCheck { within_ms: None, ..within(0) };
        let judge = |ended_by_driver: Vec<usize>| {
            let outcome = mcp_results::ClientOutcome { ended_by_driver, ..Default::default() };
            let transcript = crate::transcript::Transcript::new(vec![]);
            let scope = crate::checks::testing::external_scope(&s);
            check.unjudged(&Run { scenario: &s, scope, outcome: &outcome, transcript: &transcript })
        };
        assert!(judge(vec![2]).is_some_and(|why| why.contains("the driver, not the SDK, ended step 2")));
        assert_eq!(judge(vec![1]), None);
    }

    #[test]
    fn the_step_a_deadline_cut_did_not_finish_and_the_later_ones_did_not_run() {
        let s = scenario("  - op: connect\n  - op: request\n    method: ping\n  - op: close\n");
        let deadline = Some("run deadline of 3000ms expired".to_string());
        let steps = vec![
            crate::checks::testing::ok_step(1),
            crate::outcome::not_run(1, &s.client[1], deadline.clone()),
            crate::outcome::not_run(2, &s.client[2], deadline),
        ];
        let outcome = mcp_results::ClientOutcome { steps, hung: true, ..Default::default() };
        let transcript = crate::transcript::Transcript::new(vec![]);
        let scope = crate::checks::testing::external_scope(&s);
        let run = Run { scenario: &s, scope, outcome: &outcome, transcript: &transcript };
        let at =
            |step| OutcomeCheck { step, within_ms: None, ..within(0) }.evaluate(&run).expect_err("fails").to_string();
        assert_eq!(at(2), "step 2 (request ping) did not finish: run deadline of 3000ms expired while it ran");
        assert!(at(3).starts_with("step 3 (close) did not run: "), "{}", at(3));
    }

    fn within(ms: u64) -> OutcomeCheck {
        OutcomeCheck {
            step: 2,
            ok: Some(false),
            settled: false,
            error: None,
            result: None,
            within_ms: Some(ms),
            at_least_ms: None,
        }
    }

    #[test]
    fn a_bound_next_to_the_steps_own_timeout_is_refused() {
        let by_connect = scenario("  - op: connect\n    timeout_ms: 1000\n  - op: request\n    method: ping\n");
        let by_request = scenario(
            "  - op: connect\n    timeout_ms: 5000\n  - op: request\n    method: ping\n    timeout_ms: 1000\n",
        );
        for plan in [&by_connect, &by_request] {
            for ms in [901, 1000, 1099] {
                let refused = within(ms).validate(plan);
                assert!(matches!(refused, Err(Invalid::BoundOnTimer { timeout: 1000, .. })), "{ms}: {refused:?}");
            }
            assert!(within(900).validate(plan).is_ok());
            assert!(within(1100).validate(plan).is_ok());
        }
        let background = scenario(
            "  - op: connect\n    timeout_ms: 1000\n  - op: request\n    method: ping\n    background: true\n    as: a\n  - op: await\n    request: a\n",
        );
        assert!(within(1000).validate(&background).is_ok(), "a background request is not timed by its step");
        let untimed = scenario("  - op: connect\n  - op: request\n    method: ping\n");
        assert!(within(1000).validate(&untimed).is_ok());
        let disabled = scenario("  - op: connect\n    timeout_ms: 0\n  - op: request\n    method: ping\n");
        assert!(within(0).validate(&disabled).is_ok(), "`0` disables the timeout");
        let total = scenario(
            "  - op: connect\n  - op: request\n    method: ping\n    timeout_ms: 300\n    reset_timeout_on_progress: true\n    max_total_timeout_ms: 1000\n",
        );
        assert!(matches!(within(1000).validate(&total), Err(Invalid::BoundOnTimer { timeout: 1000, .. })));
        assert!(matches!(within(300).validate(&total), Err(Invalid::BoundOnTimer { timeout: 300, .. })));
        assert!(within(700).validate(&total).is_ok());
    }

    #[test]
    fn a_minimum_next_to_the_steps_own_timeout_is_refused() {
        let at_least = |ms| OutcomeCheck { within_ms: None, at_least_ms: Some(ms), ..within(0) };
        let plan = scenario("  - op: connect\n  - op: request\n    method: ping\n    timeout_ms: 150\n");
        for ms in [141, 150, 249] {
            let refused = at_least(ms).validate(&plan);
            assert!(matches!(refused, Err(Invalid::MinimumOnTimer { timeout: 150, .. })), "{ms}: {refused:?}");
        }
        assert!(at_least(140).validate(&plan).is_ok(), "waited out its timeout");
        assert!(at_least(250).validate(&plan).is_ok(), "outlived its timeout");
        let untimed = scenario("  - op: connect\n  - op: request\n    method: ping\n");
        assert!(at_least(150).validate(&untimed).is_ok());
        let succeeds = OutcomeCheck { ok: Some(true), ..at_least(150) };
        assert!(succeeds.validate(&plan).is_ok(), "a step that must succeed did not end at its timer");
        let handshake = scenario("  - op: connect\n    timeout_ms: 150\n  - op: request\n    method: ping\n");
        let connect = OutcomeCheck { step: 1, ..at_least(150) };
        assert!(matches!(connect.validate(&handshake), Err(Invalid::MinimumOnTimer { timeout: 150, .. })));
    }
}
