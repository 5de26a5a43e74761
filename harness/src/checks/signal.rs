//! `signal`: the mock received (or, with `received: false`, never received) a signal —
//! how the client stops a stdio server. A wire check: it applies to every target.

use super::{CheckKind, Finding, Run};
use mcp_scenario::Scenario;
use mcp_scenario::checks::SignalCheck;
use mcp_scenario::wire::WireEvent;

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::NotReceived(_))
    }
}

impl CheckKind for SignalCheck {
    fn explain(&self) -> String {
        if self.received {
            format!("the mock received {}", self.name)
        } else {
            format!("the mock never received {}", self.name)
        }
    }

    type Invalid = Invalid;
    type Failure = Failure;

    /// `received: false` holds by an absence.
    fn holds_by_absence(&self, _run: &Run<'_>) -> bool {
        !self.received
    }

    fn concerns(&self, _scenario: &Scenario, event: &WireEvent) -> bool {
        event.signal_name().is_some_and(|name| name.trim_start_matches("SIG") == self.name.trim_start_matches("SIG"))
    }

    fn validate(&self, _scenario: &Scenario) -> Result<(), Invalid> {
        match mcp_scenario::signals::by_name(&self.name) {
            Some(_) => Ok(()),
            None => Err(Invalid(self.name.clone())),
        }
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let name = if self.name.starts_with("SIG") { self.name.clone() } else { format!("SIG{}", self.name) };
        let got = run.transcript.events().any(|e| e.signal_name() == Some(name.as_str()));
        match (self.received, got) {
            (true, false) => Err(Failure::NotReceived(name)),
            (false, true) => Err(Failure::Received(name)),
            _ => Ok(()),
        }
    }
}

/// The signal name is not one the platform knows.
#[derive(Debug, thiserror::Error)]
#[error("field `name`: unknown signal {0:?}")]
pub struct Invalid(String);

/// How the signals differed from the check.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The signal never arrived.
    #[error("the mock never received {0}")]
    NotReceived(String),
    /// The signal arrived; the check says it must not.
    #[error("the mock received {0}, expected not")]
    Received(String),
}
