//! `error_is`: a plan step failed with exactly this error text — nothing appended, nothing
//! cut (`outcome`'s `error` matches a prefix). SPEC's strings are the bundled client's, so
//! it is judged for the bundled target only; a third-party client's wording is recorded in
//! its snapshot.

use super::{CheckKind, Finding, Run};
use crate::scope::Scope;
use mcp_results::StepStatus;
use mcp_scenario::Scenario;
use mcp_scenario::checks::ErrorIsCheck;

impl Finding for Failure {}

impl CheckKind for ErrorIsCheck {
    fn explain(&self) -> String {
        format!("plan step {} failed with exactly the error {:?} (bundled client only)", self.step, self.text)
    }

    const READS_OUTCOME: Option<&'static str> = Some("a plan step's error");
    type Invalid = Invalid;
    type Failure = Failure;

    fn validate(&self, scenario: &Scenario) -> Result<(), Invalid> {
        super::NoSuchStep::check(self.step, scenario)
    }

    fn applies(&self, scope: &Scope) -> bool {
        scope.target.is_bundled()
    }

    fn judges(&self, scenario: &Scenario) -> Vec<String> {
        super::plan_method(scenario, self.step)
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let n = self.step;
        let step = run.outcome.steps.get(n - 1).ok_or(Failure::NoOutcome(n))?;
        match (&step.status, &step.error) {
            (StepStatus::Error, Some(got)) if *got == self.text => Ok(()),
            (StepStatus::Error, Some(got)) => Err(Failure::Text { step: n, got: got.clone(), want: self.text.clone() }),
            (status, _) => Err(Failure::NotAnError { step: n, what: step.what.clone(), status: format!("{status:?}") }),
        }
    }
}

/// The check names a plan step that does not exist.
pub type Invalid = super::NoSuchStep;

/// How the step's error differed.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The client reported nothing for the step.
    #[error("step {0} has no outcome")]
    NoOutcome(usize),
    /// The step did not fail.
    #[error("step {step} ({what}) did not fail: {status}")]
    NotAnError {
        /// The step.
        step: usize,
        /// Its description.
        what: String,
        /// How it ended.
        status: String,
    },
    /// Another text.
    #[error("step {step} error is {got:?}, expected exactly {want:?}")]
    Text {
        /// The step.
        step: usize,
        /// The text reported.
        got: String,
        /// The text expected.
        want: String,
    },
}
