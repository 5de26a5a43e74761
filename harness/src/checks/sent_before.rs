//! `sent_before`: the client's first `first` message precedes its first `then` message
//! (across connections, in the order the client sent them: by the mocks' wall clocks, so a
//! stdio probe copy counts where it came). A wire check: it applies to every
//! target.

use super::{CheckKind, Finding, Run};
use crate::transcript::method_of;
use mcp_scenario::Scenario;
use mcp_scenario::checks::OrderCheck;
use std::convert::Infallible;

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::Never(_))
    }
}

impl CheckKind for OrderCheck {
    fn explain(&self) -> String {
        format!("the client sent its first `{}` before its first `{}`", self.first, self.then)
    }

    type Invalid = Infallible;
    type Failure = Failure;

    fn judges(&self, _scenario: &Scenario) -> Vec<String> {
        vec![self.first.clone(), self.then.clone()]
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let sent = run.transcript.client_messages_in_time();
        let pos = |method: &str| sent.iter().position(|v| method_of(v) == Some(method));
        match (pos(&self.first), pos(&self.then)) {
            (Some(a), Some(b)) if a < b => Ok(()),
            (Some(_), Some(_)) => Err(Failure::WrongOrder { first: self.first.clone(), then: self.then.clone() }),
            (None, _) => Err(Failure::Never(self.first.clone())),
            (_, None) => Err(Failure::Never(self.then.clone())),
        }
    }
}

/// How the order differed from the check.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// `then` came first.
    #[error("client sent {then} before {first}")]
    WrongOrder {
        /// The method that should have come first.
        first: String,
        /// The method that came first.
        then: String,
    },
    /// One of the two was never sent.
    #[error("client never sent {0}")]
    Never(String),
}
