//! `stdin_closed`: the mock saw its stdin reach EOF on a connection (default 1) — the
//! client's normal stdio shutdown. A wire check: it applies to every target.

use super::{CheckKind, Run};
use mcp_scenario::checks::StdinClosedCheck;
use mcp_scenario::wire::WireEvent;
use std::convert::Infallible;

impl CheckKind for StdinClosedCheck {
    fn explain(&self) -> String {
        format!("the mock saw its stdin reach EOF on connection {}", self.connection.unwrap_or(1))
    }

    const NAME: &'static str = "stdin_closed";
    type Invalid = Infallible;
    type Failure = Failure;

    /// A client process that exits closes its pipes too, and the record cannot tell that from
    /// a deliberate close: as evidence, a close alone weighs no more than an absence.
    fn holds_by_absence(&self) -> bool {
        true
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let n = self.connection.unwrap_or(1);
        let connection = run.transcript.connection(n).ok_or(Failure::NeverStarted(n))?;
        if connection.events().iter().any(|e| matches!(e, WireEvent::StdinEof { .. })) {
            Ok(())
        } else {
            Err(Failure::NotClosed(n))
        }
    }
}

/// How the connection differed from the check.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// There is no such connection.
    #[error("connection {0} never started")]
    NeverStarted(usize),
    /// The mock's stdin stayed open.
    #[error("the client never closed the mock's stdin on connection {0}")]
    NotClosed(usize),
}
