//! `sent`: the client sent a message with this method (and params containing these
//! members), at least once or exactly `count` times, on one connection or any. A wire
//! check: it applies to every target.

use super::{CheckKind, Run, subset};
use crate::transcript::method_of;
use mcp_scenario::checks::SentCheck;
use serde_json::Value;
use std::convert::Infallible;

impl CheckKind for SentCheck {
    const NAME: &'static str = "sent";
    type Invalid = Infallible;
    type Failure = Failure;

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let on: Vec<&Value> = match self.connection {
            Some(n) => run.transcript.connection(n).map(|c| c.client_messages().collect()).unwrap_or_default(),
            None => run.transcript.client_messages().collect(),
        };
        let matching = on
            .iter()
            .filter(|m| method_of(m) == Some(self.method.as_str()))
            .filter(|m| self.params.as_ref().is_none_or(|p| subset(p, m.get("params").unwrap_or(&Value::Null))))
            .count();
        match self.count {
            Some(want) if want != matching => Err(Failure::Count { method: self.method.clone(), got: matching, want }),
            None if matching == 0 => Err(Failure::Never { method: self.method.clone(), params: self.params.clone() }),
            _ => Ok(()),
        }
    }
}

/// How the client's messages differed from the check.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Not the expected number of matching messages.
    #[error("client sent {method} {got} time(s), expected {want}")]
    Count {
        /// The method.
        method: String,
        /// How many matched.
        got: usize,
        /// How many were expected.
        want: usize,
    },
    /// No matching message.
    #[error("client never sent {method}{}", with_params(.params))]
    Never {
        /// The method.
        method: String,
        /// The params filter, if any.
        params: Option<Value>,
    },
}

fn with_params(p: &Option<Value>) -> String {
    p.as_ref().map(|p| format!(" with params containing {p}")).unwrap_or_default()
}
