//! `notified`: the client reported receiving a notification with this method (the bundled
//! client's notification handler; a driver's `notification` lines). Applies to every target.

use super::{CheckKind, Finding, Run};
use mcp_results::Reportable;
use mcp_scenario::checks::NotifiedCheck;
use std::convert::Infallible;

impl Finding for Failure {
    fn short(&self) -> bool {
        true
    }
}

impl CheckKind for NotifiedCheck {
    fn explain(&self) -> String {
        format!("the client reported receiving the notification `{}`", self.method)
    }

    const READS_OUTCOME: Option<&'static str> = Some("the notifications the client saw");
    type Invalid = Infallible;
    type Failure = Failure;

    fn needs(&self) -> Option<Reportable> {
        Some(Reportable::Notifications)
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        if run.outcome.notifications.iter().any(|(method, _)| *method == self.method) {
            Ok(())
        } else {
            Err(Failure(self.method.clone()))
        }
    }
}

/// The client reported no such notification.
#[derive(Debug, thiserror::Error)]
#[error("client never reported notification {0}")]
pub struct Failure(String);
