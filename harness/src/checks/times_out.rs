//! `times_out`: a plan step that was given no timeout (neither its `request` nor the
//! `connect` sets `timeout_ms`) ended with an error by itself before the run deadline: the
//! client has a default timeout. A step still waiting when the deadline cut the run short
//! is reported as "no default timeout" on this check's basis (a SHOULD: "Implementations
//! SHOULD establish timeouts for all sent requests"), and the always-on deadline rule leaves
//! that hang to it, so a client without one is warned, not failed. A default longer than
//! the scenario's deadline reads the same: the message gives the bound it waited.

use super::{CheckKind, Finding, Run};
use mcp_results::StepStatus;
use mcp_scenario::checks::TimesOutCheck;
use mcp_scenario::{ClientStep, Scenario};

impl Finding for Failure {}

impl CheckKind for TimesOutCheck {
    fn explain(&self) -> String {
        format!(
            "plan step {}, given no timeout, failed by itself before the run deadline (the client has a default timeout)",
            self.step
        )
    }

    const READS_OUTCOME: Option<&'static str> = Some("a plan step's timeout");

    /// The hang is what it judges: a client with no default timeout waits to the deadline.
    fn reports_the_hang(&self) -> bool {
        true
    }
    type Invalid = Invalid;
    type Failure = Failure;

    fn validate(&self, scenario: &Scenario) -> Result<(), Invalid> {
        super::NoSuchStep::check(self.step, scenario)?;
        let step = &scenario.client[self.step - 1];
        let configured = scenario.client.iter().any(|s| match s {
            ClientStep::Connect(c) => c.timeout_ms.is_some() || c.env.contains_key("MCP_TIMEOUT_MS"),
            _ => false,
        });
        match step {
            ClientStep::Request { timeout_ms: None, max_total_timeout_ms: None, background: false, .. }
                if !configured =>
            {
                Ok(())
            }
            ClientStep::Request { .. } => Err(Invalid::TimeoutGiven),
            _ => Err(Invalid::NotARequest),
        }
    }

    fn judges(&self, scenario: &Scenario) -> Vec<String> {
        super::plan_method(scenario, self.step)
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let n = self.step;
        let step = n.checked_sub(1).and_then(|i| run.outcome.steps.get(i)).ok_or(Failure::NoOutcome { step: n })?;
        match step.status {
            StepStatus::Error => Ok(()),
            StepStatus::Ok => Err(Failure::Answered { step: n, what: step.what.clone() }),
            StepStatus::NotRun | StepStatus::Unsupported if run.outcome.hung => {
                Err(Failure::NoDefaultTimeout { step: n, what: step.what.clone(), ms: run.scenario.deadline_ms })
            }
            StepStatus::NotRun | StepStatus::Unsupported => Err(Failure::DidNotRun {
                step: n,
                what: step.what.clone(),
                why: step.error.clone().unwrap_or_default(),
            }),
        }
    }
}

/// A `times_out` check the loader rejects.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// The plan has no such step.
    #[error(transparent)]
    NoSuchStep(#[from] super::NoSuchStep),
    /// The step is not a request.
    #[error("field `step`: name a `request` step (the one whose default timeout is judged)")]
    NotARequest,
    /// The plan gives the request a timeout, so the default is not what is judged.
    #[error(
        "field `step`: the plan gives this request a timeout (its `timeout_ms` / `max_total_timeout_ms`, the connect's `timeout_ms` or `env` MCP_TIMEOUT_MS) or runs it in the background; drop them to judge the client's default"
    )]
    TimeoutGiven,
}

/// How the step ended instead of timing out by itself.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The client reported no outcome for the step.
    #[error("step {step}: no outcome reported")]
    NoOutcome {
        /// The step.
        step: usize,
    },
    /// The request the script never answers succeeded.
    #[error("step {step} ({what}) succeeded, expected it to time out (the server never answers)")]
    Answered {
        /// The step.
        step: usize,
        /// The step's description.
        what: String,
    },
    /// Still waiting at the deadline.
    #[error(
        "no default timeout: step {step} ({what}) was given no timeout and was still waiting for a reply that never comes when the run deadline of {ms}ms expired"
    )]
    NoDefaultTimeout {
        /// The step.
        step: usize,
        /// The step's description.
        what: String,
        /// The scenario's deadline.
        ms: u64,
    },
    /// The step never ran for another reason.
    #[error("step {step} ({what}) did not run: {why}")]
    DidNotRun {
        /// The step.
        step: usize,
        /// The step's description.
        what: String,
        /// Why.
        why: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::with_plan as scenario;

    const REQUEST: &str = "  - op: request\n    method: tools/call\n";

    #[test]
    fn only_a_request_given_no_timeout_is_judged() {
        let check = TimesOutCheck { step: 2 };
        assert!(check.validate(&scenario(&format!("  - op: connect\n{REQUEST}"))).is_ok());
        let given = [
            format!("  - op: connect\n    timeout_ms: 100\n{REQUEST}"),
            format!("  - op: connect\n    env: {{MCP_TIMEOUT_MS: \"100\"}}\n{REQUEST}"),
            format!("  - op: connect\n{REQUEST}    timeout_ms: 100\n"),
        ];
        for plan in given {
            assert!(matches!(check.validate(&scenario(&plan)), Err(Invalid::TimeoutGiven)), "{plan}");
        }
        let not_a_request = scenario("  - op: connect\n  - op: close\n");
        assert!(matches!(check.validate(&not_a_request), Err(Invalid::NotARequest)));
        assert!(matches!(TimesOutCheck { step: 3 }.validate(&not_a_request), Err(Invalid::NoSuchStep(_))));
    }
}
