//! `not_notified`: the client never reported receiving a notification with this method —
//! e.g. a message it must drop (an id of `null` makes it neither a request nor a
//! notification). Applies to every target that reports notifications.

use super::{CheckKind, Finding, Run};
use mcp_results::Reportable;
use mcp_scenario::checks::NotNotifiedCheck;
use std::convert::Infallible;

impl Finding for Failure {}

impl CheckKind for NotNotifiedCheck {
    fn explain(&self) -> String {
        format!("the client never reported the notification `{}`", self.method)
    }

    const READS_OUTCOME: Option<&'static str> = Some("the notifications the client saw");
    type Invalid = Infallible;
    type Failure = Failure;

    fn holds_by_absence(&self, _run: &Run<'_>) -> bool {
        true
    }

    fn needs(&self) -> Option<Reportable> {
        Some(Reportable::Notifications)
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let times = run.outcome.notifications.iter().filter(|(method, _)| *method == self.method).count();
        if times == 0 { Ok(()) } else { Err(Failure { method: self.method.clone(), times }) }
    }
}

/// The client reported the notification anyway.
#[derive(Debug, thiserror::Error)]
#[error("client reported notification {method} {times} time(s), expected never")]
pub struct Failure {
    method: String,
    times: usize,
}
