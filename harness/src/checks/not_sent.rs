//! `not_sent`: the client never sent a message with this method, on any connection. A wire
//! check: it applies to every target.

use super::{CheckKind, Finding, Run};
use crate::transcript::method_of;
use mcp_scenario::Scenario;
use mcp_scenario::checks::NotSentCheck;
use std::convert::Infallible;

impl Finding for Failure {}

impl CheckKind for NotSentCheck {
    fn explain(&self) -> String {
        format!("the client never sent `{}`", self.method)
    }

    type Invalid = Infallible;
    type Failure = Failure;

    fn holds_by_absence(&self, _run: &Run<'_>) -> bool {
        true
    }

    fn judges(&self, _scenario: &Scenario) -> Vec<String> {
        vec![self.method.clone()]
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        match run.transcript.client_messages().filter(|v| method_of(v) == Some(self.method.as_str())).count() {
            0 => Ok(()),
            times => Err(Failure { method: self.method.clone(), times }),
        }
    }
}

/// The client sent the method anyway.
#[derive(Debug, thiserror::Error)]
#[error("client sent {method} {times} time(s), expected never")]
pub struct Failure {
    /// The method.
    method: String,
    /// How often it was sent.
    times: usize,
}
