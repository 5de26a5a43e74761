//! `always: server script completes`: every connection's server script ran to its end —
//! proof the client reached every scripted step, so no check passes because the client died
//! first. A client that never reached the mock at all (no stdio mock started, no request
//! at the URL) is named as such, with what it claimed meanwhile.

use super::{At, Rule};
use crate::checks::Run;
use crate::transcript::Connection;
use mcp_scenario::basis::Level;
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Revision, ServerStep};

/// See the module docs.
pub struct ScriptCompletes;

impl Rule for ScriptCompletes {
    const NAME: &'static str = "server script completes";

    /// A script that stopped waiting for a message `M` (an `expect`, the handshake, a GET, a
    /// DELETE) left unjudged the checks that judge `M`: it rests on the strongest of them (on
    /// the DELETE's SHOULD for a closing DELETE no check names), never on the scenario's
    /// strongest check. A stop where no check judges what the script waited for, or where
    /// the mock was not waiting, is a note (SPEC.md's "the plan runs to its end"). A stop
    /// before the scenario's fault is no failure at all: the run is not exercised
    /// (`crate::exercise`).
    fn basis(&self, run: &Run<'_>) -> (Level, Option<String>) {
        if claimed_without_server(run) {
            return (Level::Driver, Some(NO_SERVER.into()));
        }
        let mut awaited = Vec::new();
        for c in run.transcript.connections() {
            let Some((reached, _)) = stopped_at(c) else { continue };
            let steps = mcp_scenario::script::connection_script(&run.scenario.server, c.number());
            match steps.get(reached.saturating_sub(1)) {
                Some(ServerStep::Expect(e)) => awaited.push(e.method.clone()),
                Some(ServerStep::ExpectDelete(_)) => awaited.push("DELETE".to_string()),
                Some(ServerStep::ExpectGet(_)) => awaited.push("GET".to_string()),
                Some(ServerStep::Handshake(_)) => {
                    awaited.extend(["initialize".to_string(), "notifications/initialized".to_string()])
                }
                _ => {}
            }
        }
        let judging = run.scenario.checks.iter().filter(|entry| {
            crate::checks::judged_messages(&entry.check, run.scenario).iter().any(|m| awaited.contains(m))
        });
        let what = format!("the checks on {}", awaited.join(", "));
        match super::strongest(judging, &what) {
            Some(basis) => basis,
            None if !awaited.is_empty() && awaited.iter().all(|m| m == "DELETE") => {
                (Level::Should, Some(delete_should(run.scenario.revision).into()))
            }
            None => (Level::Project, Some(UNJUDGED_STOP.into())),
        }
    }
    type Violation = Stopped;

    fn judge(&self, run: &Run<'_>) -> Vec<(At, Stopped)> {
        // A third-party client killed at the deadline stopped the script by hanging: the
        // deadline rule names that, and what it had not sent yet it may still have sent.
        if crate::checks::cut_by_deadline(run) {
            return Vec::new();
        }
        let connections = run.transcript.connections();
        if !connections.is_empty() {
            return connections.iter().flat_map(|c| self.judge_connection(run, c)).collect();
        }
        // No connection at all: over stdio nobody started the mock (over HTTP the mock is
        // up from the start and records a connection anyway).
        let steps = mcp_scenario::script::connection_script(&run.scenario.server, 1);
        if !steps.iter().any(waits_for_client) {
            return Vec::new();
        }
        let why = format!(
            "the client never started the mock (MCP_HARNESS_SERVER_COMMAND){}",
            claimed(run, "a driver makes its SDK spawn exactly that command (clients/README.md)")
        );
        vec![(At::Connection(1, None), Stopped::NeverConnected { why })]
    }

    fn judge_connection(&self, run: &Run<'_>, c: &Connection) -> Vec<(At, Stopped)> {
        let Some((reached, total)) = stopped_at(c) else { return Vec::new() };
        let steps = mcp_scenario::script::connection_script(&run.scenario.server, c.number());
        let op = steps.get(reached.saturating_sub(1)).map(mcp_mock::ops::describe).unwrap_or_default();
        let plan_done = !run.outcome.hung
            && run.outcome.steps.len() == run.scenario.client.len()
            && run.outcome.steps.iter().all(|s| s.status != mcp_results::StepStatus::NotRun);
        let awaited = match steps.get(reached.saturating_sub(1)) {
            Some(ServerStep::Expect(e)) => Some(e.method.as_str()),
            Some(ServerStep::ExpectDelete(_)) => Some("the DELETE"),
            _ => None,
        };
        let silent = !c.events().iter().any(WireEvent::sent_by_client);
        let why = match (refusal(c), awaited) {
            (None, _) if silent && run.scope.transport != mcp_scenario::TransportName::Stdio => format!(
                "the client never connected: no request reached the mock{}",
                claimed(run, "a driver connects to the URL given as its last argument (clients/README.md)")
            ),
            (Some(refused), _) => format!("the client did send, but the mock refused {refused}"),
            (None, Some(m)) if plan_done => format!("the client finished its plan without sending {m}"),
            (None, _) => "the client never got that far".to_string(),
        };
        vec![(At::Connection(c.number(), None), Stopped::Short { conn: c.number(), reached, total, op, why })]
    }
}

use crate::checks::waits_for_client;

/// Whether the client reported plan steps ok without ever reaching the mock: over stdio it
/// never started it, over HTTP it sent no request. Those results came from no server, which
/// breaks the driver contract whatever the scenario is about.
pub fn claimed_without_server(run: &Run<'_>) -> bool {
    use mcp_results::StepStatus;
    let reached = match run.scope.transport {
        mcp_scenario::TransportName::Stdio => !run.transcript.connections().is_empty(),
        _ => run.transcript.connections().iter().any(|c| c.events().iter().any(WireEvent::sent_by_client)),
    };
    // A plan `wait` is the driver's own sleep: reported ok, it claims nothing of a server.
    let claims = |step: usize| {
        !matches!(run.scenario.client.get(step.wrapping_sub(1)), Some(mcp_scenario::ClientStep::Wait { .. }))
    };
    !reached && run.outcome.steps.iter().any(|s| s.status == StepStatus::Ok && claims(s.step))
}

/// What a result from no server breaks.
const NO_SERVER: &str = "clients/README.md: a driver reports what its SDK did with the server it was given; a step reported ok while nothing reached that server is a result from nowhere";

/// A stop that no check's sentence covers: what the script waited for is judged by nothing.
const UNJUDGED_STOP: &str = "SPEC §2 the client plan runs to its end (the script stopped where no check of the scenario judges what it waited for)";

/// The MCP sentence behind a session's closing DELETE, as the revision words it (2025-03-26
/// and later; 2024-11-05 has no sessions to end).
fn delete_should(revision: Revision) -> &'static str {
    match revision {
        Revision::R2025_03_26 => {
            "2025-03-26 basic/transports (Session Management): Clients that no longer need a particular session (e.g., because the user is leaving the client application) SHOULD send an HTTP DELETE to the MCP endpoint with the Mcp-Session-Id header, to explicitly terminate the session"
        }
        Revision::R2025_06_18 => {
            "2025-06-18 basic/transports (Session Management): Clients that no longer need a particular session (e.g., because the user is leaving the client application) SHOULD send an HTTP DELETE to the MCP endpoint with the Mcp-Session-Id header, to explicitly terminate the session"
        }
        _ => {
            "2025-11-25 basic/transports (Session Management): Clients that no longer need a particular session (e.g., because the user is leaving the client application) SHOULD send an HTTP DELETE to the MCP endpoint with the MCP-Session-Id header, to explicitly terminate the session"
        }
    }
}

/// Where connection `c`'s script stopped short (`reached` of `total`), if it did.
fn stopped_at(c: &Connection) -> Option<(usize, usize)> {
    let progress = c.events().iter().rev().find_map(WireEvent::script_progress)?;
    (!progress.finished).then_some((progress.reached, progress.total))
}

/// Why the HTTP mock refuses a request before its script sees it (the `why` it records).
const REFUSALS: &[&str] =
    &["session missing", "session expired", "unknown session", "auth required", "request body over the mock's cap"];

/// The last request the mock refused before its script saw it, in words: `POST tools/list
/// with 400 (session missing)`. A script that waits for a message the mock itself turned
/// away did not stop because the client never got there.
fn refusal(c: &Connection) -> Option<String> {
    let events = c.events();
    let refused = |why: &str| REFUSALS.contains(&why) || mcp_mock::stateless::REFUSALS.contains(&why);
    events.iter().rev().find_map(|e| {
        if let (Some(bytes), Some(why)) = (e.mock_write(), e.why())
            && refused(why)
        {
            // stdio: the refusal is a JSON-RPC error line answering the refused request.
            let answer: Option<serde_json::Value> =
                bytes.text.as_deref().and_then(|t| serde_json::from_str(t.trim_end()).ok());
            let id = answer.as_ref().and_then(|a| a.get("id")).cloned();
            let code = answer.as_ref().and_then(|a| a.pointer("/error/code")).and_then(|c| c.as_i64());
            let method = events
                .iter()
                .filter_map(WireEvent::client_message)
                .filter(|j| id.is_some() && j.get("id") == id.as_ref())
                .find_map(|j| j.get("method").and_then(|m| m.as_str()).map(str::to_owned));
            let code = code.map(|c| format!(" {c}")).unwrap_or_default();
            return Some(format!("{} with{code} ({why})", method.unwrap_or_else(|| "a request".into())));
        }
        let (Some(exchange), Some(status), Some(why)) = (e.exchange(), e.status(), e.why()) else { return None };
        if !refused(why) {
            return None;
        }
        let request = events.iter().filter(|r| r.exchange() == Some(exchange)).find_map(|r| {
            let http_method = r.http_method()?;
            let method = r.json().and_then(|j| j.get("method")).and_then(|m| m.as_str());
            Some(method.map_or_else(|| http_method.to_owned(), |m| format!("{http_method} {m}")))
        });
        Some(format!("{} with {status} ({why})", request.unwrap_or_else(|| format!("exchange #{exchange}"))))
    })
}

/// What a client that never reached the mock claimed meanwhile, and `advice` on what a
/// driver does instead.
fn claimed(run: &Run<'_>, advice: &str) -> String {
    use mcp_results::StepStatus;
    let ok = run.outcome.steps.iter().filter(|s| s.status == StepStatus::Ok).count();
    if ok == 0 {
        format!("; {advice}")
    } else {
        format!(", yet it reported {ok} plan step(s) ok: those results came from no server; {advice}")
    }
}

/// A connection's script stopped before its end, or never began.
#[derive(Debug, thiserror::Error)]
pub enum Stopped {
    /// The script of connection `conn` stopped at step `reached` of `total`.
    #[error("connection {conn}: the mock's script stopped at step {reached} of {total} ({op}): {why}")]
    Short {
        conn: usize,
        reached: usize,
        total: usize,
        op: String,
        /// `the client never got that far`, or which request the mock itself refused.
        why: String,
    },
    /// No connection was ever made, so no script ran.
    #[error("the mock's script never ran: {why}")]
    NeverConnected { why: String },
}

#[cfg(test)]
mod tests {
    use super::refusal;
    use crate::transcript::Connection;
    use mcp_scenario::wire::{Recorded, WireEvent};
    use serde_json::json;

    /// Whether a run of `connect`, `wait` in which nothing reached the mock, with the steps
    /// reported `ok` as given, claims results from no server.
    fn claimed(connect_ok: bool) -> bool {
        use mcp_results::{ClientOutcome, StepOutcome, StepStatus};
        let yaml = "name: t\nsummary: s\ntransport: http\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: wait\n    ms: 100\nserver:\n  - op: handshake\n";
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), yaml).expect("loads");
        let step = |step, ok: bool| StepOutcome {
            step,
            what: String::new(),
            status: if ok { StepStatus::Ok } else { StepStatus::Error },
            result: None,
            error: None,
            elapsed_ms: 0,
        };
        let outcome = ClientOutcome { steps: vec![step(1, connect_ok), step(2, true)], ..ClientOutcome::default() };
        let transcript = crate::transcript::Transcript::new(vec![]);
        let scope = crate::scope::Scope {
            target: crate::scope::TargetKind::External,
            transport: mcp_scenario::TransportName::Http,
            revision: scenario.revision,
            deadline: crate::scope::Deadline { scenario_ms: scenario.deadline_ms, startup_ms: 0 },
        };
        super::claimed_without_server(&crate::checks::Run {
            scenario: &scenario,
            scope,
            outcome: &outcome,
            transcript: &transcript,
        })
    }

    #[test]
    fn a_plan_wait_reported_ok_claims_nothing_of_a_server() {
        assert!(!claimed(false), "a failed connect and the driver's own sleep");
        assert!(claimed(true), "a connect reported ok with nothing at the mock");
    }

    /// A stdio refusal of the 2026-07-28 rules is named with the request it answered.
    #[test]
    fn names_a_stdio_request_the_mock_refused() {
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {}});
        let answer = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32602,\"message\":\"Invalid params\"}}\n";
        let events = vec![
            WireEvent::FromClient { t_us: 0, bytes: Recorded::of(b"{}"), json: Some(request), terminated: true },
            WireEvent::ToClient { t_us: 1, bytes: Recorded::of(answer), why: "missing _meta protocolVersion".into() },
        ];
        assert_eq!(
            refusal(&Connection::new(1, events)).as_deref(),
            Some("tools/call with -32602 (missing _meta protocolVersion)")
        );
    }
}
