//! `stdin_closed`: the client closed the mock's stdin on a connection (default 1) while it
//! lived — the first move of the stdio shutdown. An EOF the client's own exit made does not
//! count: the mock records whether its parent was exiting when the EOF came
//! (`mcp_mock::parent`). A wire check: it applies to every target.

use super::{CheckKind, Finding, Run};
use mcp_scenario::checks::StdinClosedCheck;
use mcp_scenario::wire::WireEvent;
use std::convert::Infallible;

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::NeverStarted(_) | Failure::NotClosed(_))
    }
}

impl CheckKind for StdinClosedCheck {
    fn explain(&self) -> String {
        format!("the mock saw its stdin reach EOF on connection {}", self.connection.unwrap_or(1))
    }

    type Invalid = Infallible;
    type Failure = Failure;

    fn concerns(&self, _scenario: &mcp_scenario::Scenario, event: &WireEvent) -> bool {
        event.is_stdin_eof()
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let n = self.connection.unwrap_or(1);
        let connection = run.transcript.connection(n).ok_or(Failure::NeverStarted(n))?;
        let eofs: Vec<bool> = connection.events().iter().filter_map(WireEvent::parent_exiting).collect();
        if eofs.contains(&false) {
            Ok(())
        } else if eofs.is_empty() {
            Err(Failure::NotClosed(n))
        } else {
            Err(Failure::ClosedByExit(n))
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
    /// Stdin ended only as the client's process exited.
    #[error(
        "the mock's stdin on connection {0} ended only as the client's process exited: the client never closed it while it lived (close stdin, then wait for the server to exit)"
    )]
    ClosedByExit(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::{judge, scenario};
    use mcp_scenario::checks::Check;

    fn judged(eofs: &[bool]) -> Result<(), String> {
        let mut events = vec![WireEvent::Started { pid: 1, stderr_shared: false, origin_unix_us: None }];
        events.extend(eofs.iter().map(|&parent_exiting| WireEvent::StdinEof { t_us: 5, parent_exiting }));
        judge(&scenario("stdio", "stdin_closed: {}"), events, |check, run| match check {
            Check::StdinClosed(c) => c.evaluate(run).map_err(|e| e.to_string()),
            _ => unreachable!("the scenario's one check"),
        })
    }

    #[test]
    fn only_a_close_while_the_client_lived_holds() {
        assert!(judged(&[false]).is_ok());
        assert!(matches!(judged(&[]), Err(e) if e.contains("never closed")));
        assert!(matches!(judged(&[true]), Err(e) if e.contains("only as the client's process exited")));
    }
}
