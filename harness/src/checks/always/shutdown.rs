//! `always: stdio shutdown closes stdin first`: a client ends a stdio connection by closing
//! the server's stdin while it lives, then waiting (and only then signalling), as every
//! revision's stdio shutdown SHOULD asks. Judged for every target on each stdio connection the
//! client ended: not where the server ended itself (its script exits, stops reading, closes
//! its own stdin), not on a run the harness killed at its deadline, and not on a plan whose
//! connect never succeeded (a failed connect drops its connection as it can).
//!
//! What the mock records tells the ways apart: an EOF while its parent lived (the close),
//! then its exit (the client waited) or a signal or nothing within the mock's linger (it
//! signalled or killed at once); an EOF as its parent exited (`parent_exiting`: the client
//! left without closing); a signal before any EOF (the client signalled first); or nothing at
//! all (killed outright).

use super::deadline::stdio_shutdown_should;
use super::{At, Rule};
use crate::checks::Run;
use crate::scope::Scope;
use crate::transcript::Connection;
use mcp_mock::stdio::EOF_LINGER;
use mcp_results::StepStatus;
use mcp_scenario::basis::Level;
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{ClientStep, ServerStep, TransportName};

/// See the module docs.
pub struct ShutdownClosesStdinFirst;

impl Rule for ShutdownClosesStdinFirst {
    const NAME: &'static str = "stdio shutdown closes stdin first";
    type Violation = Violation;

    fn basis(&self, run: &Run<'_>) -> (Level, Option<String>) {
        (Level::Should, Some(stdio_shutdown_should(run.scenario.revision).into()))
    }

    fn applies(&self, scope: &Scope) -> bool {
        scope.transport == TransportName::Stdio
    }

    fn judge_connection(&self, run: &Run<'_>, c: &Connection) -> Vec<(At, Violation)> {
        let connected = run.scenario.client.iter().enumerate().any(|(i, step)| {
            matches!(step, ClientStep::Connect(_))
                && run.outcome.steps.iter().any(|s| s.step == i + 1 && s.status == StepStatus::Ok)
        });
        let script = mcp_scenario::script::connection_script(&run.scenario.server, c.number());
        let ends_itself = script
            .iter()
            .any(|s| matches!(s, ServerStep::Exit(_) | ServerStep::CloseStdin(_) | ServerStep::StopReading(_)));
        if run.outcome.hung || !connected || ends_itself {
            return Vec::new();
        }
        let events = c.events();
        let first = events
            .iter()
            .enumerate()
            .find(|(_, e)| e.is_stdin_eof() || e.signal_name().is_some() || e.is_exit())
            .map(|(i, e)| (i, e.parent_exiting(), e.signal_name()));
        let n = c.number();
        let violation = match first {
            Some((i, Some(false), _)) => waited(&script, &events[i..], n).map(|(j, v)| (i + j, v)),
            Some((i, Some(true), _)) => Some((i, Violation::LeftWithoutClosing(n))),
            Some((i, _, Some(name))) => Some((i, Violation::SignalledFirst(n, name.to_owned()))),
            // The server ended by itself (its own deadline): nothing of the client's to judge.
            Some(_) => None,
            None if events.iter().any(|e| e.started_pid().is_some()) => {
                Some((events.len(), Violation::KilledOutright(n)))
            }
            None => None,
        };
        violation.map(|(i, v)| (At::Connection(n, Some((i, 0))), v)).into_iter().collect()
    }
}

/// After the client closed the server's stdin (`after[0]`, its EOF while the client lived) on
/// connection `n`: whether it signalled or killed the server without waiting for it to exit. The mock lingers
/// [`EOF_LINGER`] before it exits on EOF, so a signal or a kill that follows the close at once
/// is seen whichever the kernel delivered first; without the linger, a client that closes and
/// signals back to back was judged by which of the two the mock happened to record first.
/// A mock that ignores EOF (`ignore_stdin_eof`) stays until signalled: there a signal within
/// the linger is the one that did not wait.
fn waited(script: &[ServerStep], after: &[WireEvent], n: usize) -> Option<(usize, Violation)> {
    let ignores_eof = script.iter().any(|s| matches!(s, ServerStep::IgnoreStdinEof(_)));
    let closed_at = after.first().and_then(WireEvent::t_us).unwrap_or(0);
    let signal = after.iter().position(|e| e.signal_name().is_some());
    if let Some(j) = signal {
        let gap = after[j].t_us().unwrap_or(0).saturating_sub(closed_at);
        let at_once = !ignores_eof || gap < EOF_LINGER.as_micros() as u64;
        return at_once.then_some((j, Violation::SignalledWithoutWaiting(n)));
    }
    let exited = after.iter().any(WireEvent::is_exit);
    (!ignores_eof && !exited).then_some((after.len(), Violation::KilledWithoutWaiting(n)))
}

/// How the client ended the stdio connection other than by closing stdin first.
#[derive(Debug, thiserror::Error)]
pub enum Violation {
    /// The server's stdin ended only as the client's process exited.
    #[error(
        "connection {0}: the server's stdin ended only as the client's process exited: the client never closed it and waited for the server to exit"
    )]
    LeftWithoutClosing(usize),
    /// A signal reached the server before its stdin was closed.
    #[error("connection {0}: the client sent the server {1} before closing its stdin")]
    SignalledFirst(usize, String),
    /// A signal reached the server right after its stdin was closed, before it could exit.
    #[error(
        "connection {0}: the client closed the server's stdin and signalled it at once, without waiting for it to exit"
    )]
    SignalledWithoutWaiting(usize),
    /// The server was killed right after its stdin was closed, before it could exit.
    #[error(
        "connection {0}: the client closed the server's stdin and killed it at once (no exit recorded), without waiting for it to exit"
    )]
    KilledWithoutWaiting(usize),
    /// The server ended with neither an EOF nor a signal it could record (SIGKILL).
    #[error(
        "connection {0}: the server was killed outright (no stdin EOF, no signal it could record, e.g. SIGKILL) without its stdin closed first"
    )]
    KilledOutright(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::{external_scope, with_plan};
    use crate::transcript::Transcript;
    use mcp_results::{ClientOutcome, StepOutcome};
    use mcp_scenario::wire::WireEvent;

    fn judged(events: Vec<WireEvent>, hung: bool) -> Vec<String> {
        let scenario = with_plan("  - op: connect\n");
        let connect = StepOutcome {
            step: 1,
            what: "connect".into(),
            status: StepStatus::Ok,
            result: None,
            error: None,
            elapsed_ms: 1,
        };
        let outcome = ClientOutcome { steps: vec![connect], hung, ..ClientOutcome::default() };
        let transcript = Transcript::new(vec![events]);
        let run =
            Run { scenario: &scenario, scope: external_scope(&scenario), outcome: &outcome, transcript: &transcript };
        let c = &transcript.connections()[0];
        ShutdownClosesStdinFirst.judge_connection(&run, c).into_iter().map(|(_, v)| v.to_string()).collect()
    }

    #[test]
    fn a_close_while_the_client_lives_is_the_shutdown_and_the_rest_are_not() {
        let started = WireEvent::Started { pid: 1, stderr_shared: false, origin_unix_us: None };
        let eof = |parent_exiting| WireEvent::StdinEof { t_us: 5, parent_exiting };
        let sigterm = WireEvent::Signal { t_us: 4, name: "SIGTERM".into(), ignored: false };
        let exit = WireEvent::Exit { t_us: 100_005, code: Some(0), signal: None, why: "stdin EOF".into() };
        assert!(judged(vec![started.clone(), eof(false), exit], false).is_empty());
        assert!(
            judged(vec![started.clone(), eof(false), sigterm.clone()], false)[0].contains("signalled it at once"),
            "a signal within the mock's linger after the close"
        );
        assert!(judged(vec![started.clone(), eof(false)], false)[0].contains("killed it at once"));
        assert!(judged(vec![started.clone(), eof(true)], false)[0].contains("only as the client's process exited"));
        assert!(judged(vec![started.clone(), sigterm, eof(false)], false)[0].contains("SIGTERM before closing"));
        assert!(judged(vec![started.clone()], false)[0].contains("killed outright"));
        // A server that ignores EOF stays: a signal a second after the close waited for it.
        let script: Vec<ServerStep> = mcp_scenario::load::parse(
            std::path::Path::new("t.yaml"),
            "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n  - op: handshake\n  - op: ignore_stdin_eof\n  - op: stall\n",
        )
        .expect("parses")
        .server;
        let late = WireEvent::Signal { t_us: 1_000_005, name: "SIGTERM".into(), ignored: false };
        assert!(waited(&script, &[eof(false), late], 1).is_none());
        let soon = WireEvent::Signal { t_us: 6, name: "SIGTERM".into(), ignored: false };
        assert!(waited(&script, &[eof(false), soon], 1).is_some());
        assert!(waited(&script, &[eof(false)], 1).is_none(), "it stays until signalled");
        // The harness killed a hung client: not the client's shutdown.
        assert!(judged(vec![started], true).is_empty());
    }
}
