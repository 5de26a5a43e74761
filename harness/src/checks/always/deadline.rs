//! `always: finishes before the deadline`: the client plan finished within the run's
//! deadline (a client that never reports is a finding, not a harness error). A scenario with
//! a `times_out` check leaves the hang to it ("no default timeout").
//!
//! What a hang rests on depends on where the plan hung: waiting for a request's answer, the
//! timeouts SHOULD of the scenario's revision; closing a stdio connection, the stdio
//! shutdown SHOULD; anything else (a legacy connect still waiting for its endpoint, an HTTP
//! close waiting for its DELETE's answer) sent no JSON-RPC request to time out: a robustness
//! finding (harm to the host), and SPEC.md's bound on every step for the bundled client.

use super::{At, Rule};
use crate::checks::Run;
use mcp_scenario::Revision;
use mcp_scenario::basis::Level;

/// See the module docs.
pub struct FinishesBeforeDeadline;

impl Rule for FinishesBeforeDeadline {
    const NAME: &'static str = "finishes before the deadline";
    type Violation = Hung;

    /// A hang by itself is at most a SHOULD. What the client had not done by the deadline is
    /// not judged for a third-party client (`crate::checks::cut_by_deadline`), except the step
    /// it hung on when the mock had answered it; the bundled client's shortfalls fail on their
    /// own bases.
    fn basis(&self, run: &Run<'_>) -> (Level, Option<String>) {
        let revision = run.scenario.revision;
        match hung_step(run) {
            Some(Waiting::Answer) => (Level::Should, Some(timeouts_should(revision).into())),
            Some(Waiting::StdioClose) => (Level::Should, Some(stdio_shutdown_should(revision).into())),
            _ => (Level::Robustness, Some(STEP_BOUND.into())),
        }
    }

    fn judge(&self, run: &Run<'_>) -> Vec<(At, Hung)> {
        // A `times_out` check reports a hang as "no default timeout", on its own basis; a run
        // cut in the plan's own `wait` was no hang.
        if run.outcome.hung
            && !crate::checks::hang_reported_by_a_check(run)
            && !crate::checks::cut_in_plan_wait(run.scenario, run.outcome)
        {
            vec![(At::Start, Hung { deadline: run.scope.deadline, external: external_hang(run) })]
        } else {
            Vec::new()
        }
    }
}

/// What the plan was waiting for when the deadline passed.
#[derive(Debug, PartialEq, Eq)]
enum Waiting {
    /// The answer to a request the client was asked to send (a `request`, an `await`, or
    /// `connect`'s `initialize` once the client sent it).
    Answer,
    /// A stdio `close`.
    StdioClose,
    /// Anything else.
    Other,
}

/// The first plan step that did not finish, as a [`Waiting`].
fn hung_step(run: &Run<'_>) -> Option<Waiting> {
    use mcp_scenario::ClientStep;
    let step = crate::checks::first_unfinished(run.scenario, run.outcome)?;
    Some(match step {
        ClientStep::Request { .. } | ClientStep::Await { .. } => Waiting::Answer,
        ClientStep::Connect(_) => {
            let sent = run.transcript.client_messages().any(|m| crate::transcript::method_of(m) == Some("initialize"));
            if sent { Waiting::Answer } else { Waiting::Other }
        }
        ClientStep::Close if run.scope.transport == mcp_scenario::TransportName::Stdio => Waiting::StdioClose,
        _ => Waiting::Other,
    })
}

/// The timeouts SHOULD, as the scenario's revision words it.
fn timeouts_should(revision: Revision) -> &'static str {
    match revision {
        Revision::R2024_11_05 => {
            "2024-11-05 basic/lifecycle (Error Handling): Implementations SHOULD implement appropriate timeouts for all requests, to prevent hung connections and resource exhaustion"
        }
        Revision::R2025_03_26 => {
            "2025-03-26 basic/lifecycle (Timeouts): Implementations SHOULD establish timeouts for all sent requests, to prevent hung connections and resource exhaustion"
        }
        Revision::R2025_06_18 => {
            "2025-06-18 basic/lifecycle (Timeouts): Implementations SHOULD establish timeouts for all sent requests, to prevent hung connections and resource exhaustion"
        }
        Revision::R2025_11_25 => {
            "2025-11-25 basic/lifecycle (Timeouts): Implementations SHOULD establish timeouts for all sent requests, to prevent hung connections and resource exhaustion"
        }
        Revision::R2026_07_28 => {
            "2026-07-28 basic/patterns/cancellation (Timeouts): Implementations SHOULD establish timeouts for all sent requests, to prevent hung connections and resource exhaustion"
        }
    }
}

/// The stdio shutdown SHOULD, as the scenario's revision words it.
pub(super) fn stdio_shutdown_should(revision: Revision) -> &'static str {
    match revision {
        Revision::R2024_11_05 => {
            "2024-11-05 basic/lifecycle (Shutdown, stdio): the client SHOULD initiate shutdown by: 1. First, closing the input stream to the child process (the server) 2. Waiting for the server to exit, or sending SIGTERM if the server does not exit within a reasonable time 3. Sending SIGKILL if the server does not exit within a reasonable time after SIGTERM"
        }
        Revision::R2025_03_26 => {
            "2025-03-26 basic/lifecycle (Shutdown, stdio): the client SHOULD initiate shutdown by: 1. First, closing the input stream to the child process (the server) 2. Waiting for the server to exit, or sending SIGTERM if the server does not exit within a reasonable time 3. Sending SIGKILL if the server does not exit within a reasonable time after SIGTERM"
        }
        Revision::R2025_06_18 => {
            "2025-06-18 basic/lifecycle (Shutdown, stdio): the client SHOULD initiate shutdown by: 1. First, closing the input stream to the child process (the server) 2. Waiting for the server to exit, or sending SIGTERM if the server does not exit within a reasonable time 3. Sending SIGKILL if the server does not exit within a reasonable time after SIGTERM"
        }
        Revision::R2025_11_25 => {
            "2025-11-25 basic/lifecycle (Shutdown, stdio): the client SHOULD initiate shutdown by: 1. First, closing the input stream to the child process (the server) 2. Waiting for the server to exit, or sending SIGTERM if the server does not exit within a reasonable time 3. Sending SIGKILL if the server does not exit within a reasonable time after SIGTERM"
        }
        Revision::R2026_07_28 => {
            "2026-07-28 basic/transports/stdio (Shutdown): The client SHOULD initiate shutdown by: 1. Closing the input stream to the child process (the server). 2. Waiting for the server to exit. 3. If the server does not exit within a reasonable time, forcibly terminating the process using the mechanism appropriate for the operating system"
        }
    }
}

/// A hang that left no request unanswered: harm to the host, not an MCP sentence.
const STEP_BOUND: &str = "the client hung until the run deadline where no JSON-RPC request was waiting for its answer (MCP's timeouts SHOULD does not apply; a host waits on it forever); SPEC §2 bounds every plan step of the bundled client";

/// For an external client: what it did before the deadline and what to do about it.
fn external_hang(run: &Run<'_>) -> Option<String> {
    use mcp_results::StepStatus;
    run.outcome.process.as_ref()?;
    let steps = &run.outcome.steps;
    let reported = steps.iter().filter(|s| s.status != StepStatus::NotRun).count();
    let stuck = steps.iter().find(|s| s.status == StepStatus::NotRun);
    let stuck = stuck.map(|s| format!(" at step {} ({})", s.step, s.what)).unwrap_or_default();
    Some(format!(
        "; the client reported {reported} of {} plan steps, then nothing until the harness killed its whole process group{stuck}: give every request the plan makes a bound shorter than the scenario's deadline (a client with no timeout, or one longer than this run allows, shows as this finding), or raise {} if its runtime only starts slowly",
        run.scenario.client.len(),
        crate::scope::STARTUP_ENV
    ))
}

/// The plan was still running at the deadline.
#[derive(Debug, thiserror::Error)]
#[error("the client plan did not finish within the run deadline of {deadline}{}", .external.as_deref().unwrap_or(""))]
pub struct Hung {
    deadline: crate::scope::Deadline,
    /// What an external client did meanwhile (see [`external_hang`]).
    external: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::{Scope, TargetKind};
    use crate::transcript::Transcript;
    use mcp_results::{ClientOutcome, StepOutcome, StepStatus};
    use mcp_scenario::wire::{Recorded, WireEvent};

    /// A scenario of `plan` (transport, revision) and an outcome the deadline ended after
    /// `done` steps finished.
    fn hung_after(transport: &str, revision: &str, plan: &str, done: usize) -> (mcp_scenario::Scenario, ClientOutcome) {
        let yaml = format!(
            "name: t\nsummary: s\ntransport: {transport}\nrevision: {revision}\nclient:\n{plan}server:\n  - op: stall\n"
        );
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &yaml).expect("loads");
        let steps = (1..=scenario.client.len())
            .map(|step| StepOutcome {
                step,
                what: String::new(),
                status: if step <= done { StepStatus::Ok } else { StepStatus::NotRun },
                result: None,
                error: None,
                elapsed_ms: 0,
            })
            .collect();
        (scenario, ClientOutcome { hung: true, steps, ..ClientOutcome::default() })
    }

    /// An external client's run of `scenario`.
    fn external(scenario: &mcp_scenario::Scenario) -> Scope {
        Scope {
            target: TargetKind::External,
            transport: scenario.transport.to_vec()[0],
            revision: scenario.revision,
            deadline: crate::scope::Deadline { scenario_ms: scenario.deadline_ms, startup_ms: 0 },
        }
    }

    /// The basis of a hang in `plan` (transport, revision), after `done` steps finished and
    /// with `initialize` on the wire or not.
    fn basis_of(transport: &str, revision: &str, plan: &str, done: usize, initialize_sent: bool) -> (Level, String) {
        let (scenario, outcome) = hung_after(transport, revision, plan, done);
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        let events = if initialize_sent {
            vec![WireEvent::FromClient {
                t_us: 0,
                bytes: Recorded::of(init.as_bytes()),
                json: serde_json::from_str(init).ok(),
                terminated: true,
            }]
        } else {
            Vec::new()
        };
        let transcript = Transcript::new(vec![events]);
        let (level, reference) = FinishesBeforeDeadline.basis(&Run {
            scenario: &scenario,
            scope: external(&scenario),
            outcome: &outcome,
            transcript: &transcript,
        });
        (level, reference.unwrap_or_default())
    }

    /// A hung run of a plan that sends one request to a server that never answers, with
    /// `checks` (YAML list items), judged by the deadline rule: how many findings.
    fn hang_findings(checks: &str) -> usize {
        let yaml = format!(
            "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/call\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/call\n  - op: stall\n{checks}"
        );
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &yaml).expect("loads");
        let outcome = ClientOutcome { hung: true, ..ClientOutcome::default() };
        let transcript = Transcript::new(vec![]);
        FinishesBeforeDeadline
            .judge(&Run { scenario: &scenario, scope: external(&scenario), outcome: &outcome, transcript: &transcript })
            .len()
    }

    /// A run the deadline ended after `done` steps of a plan that connects, lists tools and
    /// waits a second: how many hang findings.
    fn findings_after(done: usize) -> usize {
        let plan = "  - op: connect\n  - op: request\n    method: tools/list\n  - op: wait\n    ms: 1000\n";
        let (scenario, outcome) = hung_after("stdio", "2025-11-25", plan, done);
        let transcript = Transcript::new(vec![]);
        FinishesBeforeDeadline
            .judge(&Run { scenario: &scenario, scope: external(&scenario), outcome: &outcome, transcript: &transcript })
            .len()
    }

    #[test]
    fn a_run_cut_in_the_plans_own_wait_was_no_hang() {
        // Hung on the request: a finding; in the `wait` after it: the plan was running.
        assert_eq!(findings_after(1), 1);
        assert_eq!(findings_after(2), 0);
    }

    #[test]
    fn a_times_out_check_reports_the_hang_in_place_of_the_deadline_rule() {
        assert_eq!(hang_findings(""), 1);
        assert_eq!(hang_findings("checks:\n  - times_out: {step: 2}\n    should: \"x\"\n"), 0);
        assert_eq!(hang_findings("checks:\n  - sent: {method: tools/call}\n    must: \"x\"\n"), 1);
    }

    #[test]
    fn a_hang_rests_on_what_the_plan_was_waiting_for() {
        let request = "  - op: connect\n  - op: request\n    method: tools/list\n";
        let (level, reference) = basis_of("stdio", "2024-11-05", request, 1, true);
        assert_eq!(level, Level::Should);
        assert!(
            reference.starts_with(
                "2024-11-05 basic/lifecycle (Error Handling): Implementations SHOULD implement appropriate timeouts"
            ),
            "{reference}"
        );
        let (_, reference) = basis_of("stdio", "2026-07-28", request, 1, true);
        assert!(reference.starts_with("2026-07-28 basic/patterns/cancellation (Timeouts)"), "{reference}");
        // A legacy connect still waiting for its endpoint sent nothing to time out.
        let connect = "  - op: connect\n";
        assert_eq!(basis_of("legacy-sse", "2024-11-05", connect, 0, false).0, Level::Robustness);
        assert_eq!(basis_of("legacy-sse", "2024-11-05", connect, 0, true).0, Level::Should);
        // A stdio close rests on the shutdown SHOULD; an HTTP close (its DELETE) on SPEC alone.
        let close = "  - op: connect\n  - op: close\n";
        let (level, reference) = basis_of("stdio", "2025-11-25", close, 1, true);
        assert_eq!(level, Level::Should);
        assert!(reference.contains("(Shutdown, stdio)"), "{reference}");
        assert_eq!(basis_of("http", "2025-11-25", close, 1, true).0, Level::Robustness);
    }
}
