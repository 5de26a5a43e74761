//! `cancelled`: the client sent (or, with `sent: false`, did not send)
//! `notifications/cancelled` for the request the server script labelled with `as:`. A wire
//! check: it applies to every target.

use super::{CheckKind, Finding, NoSuchLabel, Run};
use crate::transcript::method_of;
use mcp_scenario::checks::CancelledCheck;
use mcp_scenario::{Scenario, ServerStep};
use serde_json::Value;

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::NeverReceived(_) | Failure::NotSent(_))
    }
}

impl CheckKind for CancelledCheck {
    fn explain(&self) -> String {
        if self.sent {
            format!("the client sent `notifications/cancelled` for the request the mock labelled `{}`", self.request)
        } else {
            format!("the client sent no `notifications/cancelled` for the request the mock labelled `{}`", self.request)
        }
    }

    type Invalid = NoSuchLabel;
    type Failure = Failure;

    /// `sent: false` holds by an absence.
    fn holds_by_absence(&self, _run: &Run<'_>) -> bool {
        !self.sent
    }

    fn validate(&self, scenario: &Scenario) -> Result<(), NoSuchLabel> {
        NoSuchLabel::check(scenario, ServerStep::expect_label, "expect", &self.request)
    }

    fn judges(&self, _scenario: &Scenario) -> Vec<String> {
        vec!["notifications/cancelled".into()]
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let id =
            run.transcript.labelled_id(&self.request).ok_or_else(|| Failure::NeverReceived(self.request.clone()))?;
        let sent = run
            .transcript
            .client_messages()
            .any(|v| method_of(v) == Some("notifications/cancelled") && v.pointer("/params/requestId") == Some(id));
        match (self.sent, sent) {
            (true, false) => Err(Failure::NotSent(id.clone())),
            (false, true) => Err(Failure::Sent(id.clone())),
            _ => Ok(()),
        }
    }
}

/// How the client's cancellations differed from the check.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The labelled request never reached the mock.
    #[error("the mock never received request {0:?}")]
    NeverReceived(String),
    /// No cancellation for the request's id.
    #[error("client sent no notifications/cancelled with requestId {0}")]
    NotSent(Value),
    /// A cancellation the check says must not be sent.
    #[error("client sent notifications/cancelled for {0}, expected none")]
    Sent(Value),
}
