//! `always: results come from the server`: a plan `request` (or, for a background one, its
//! `await`, which reports the answer) that the client reports ok was sent: its method reached
//! the mock. A result no server gave breaks the driver contract (clients/README.md: a driver
//! reports what its SDK did), with one exception: a request the plan makes after its own
//! `close`, which the SDK answered from its own state (an empty listing from the cleared
//! capabilities of a closed client). There is no server to ask then, so the answer is the
//! SDK's doing, and its caller got data no server gave: harm to the host that no MCP
//! sentence covers (a robustness finding). The bundled client is held to it too.

use super::{At, Rule};
use crate::checks::Run;
use crate::transcript::method_of;
use mcp_results::StepStatus;
use mcp_scenario::basis::Level;

/// See the module docs.
pub struct ResultsFromTheServer;

/// What a result the client made up from its own state harms.
const LOCAL: &str = "after its close the client answered this request from its own state: its caller got a result no server gave (no MCP sentence covers a closed client's local answers; a host shows data that is not there)";

/// What the rule rests on.
const CONTRACT: &str = "clients/README.md: a driver reports what its SDK did with the server it was given; a request reported ok that never reached that server is a result from nowhere";

impl Rule for ResultsFromTheServer {
    const NAME: &'static str = "results come from the server";
    type Violation = FromNowhere;

    fn basis(&self, run: &Run<'_>) -> (Level, Option<String>) {
        let after_close = self.judge(run).iter().all(|(_, v)| after_close(run, v.step));
        if after_close && !super::script::claimed_without_server(run) {
            return (Level::Robustness, Some(LOCAL.into()));
        }
        (Level::Driver, Some(CONTRACT.into()))
    }

    fn judge(&self, run: &Run<'_>) -> Vec<(At, FromNowhere)> {
        let mut found = Vec::new();
        for reported in run.outcome.steps.iter().filter(|s| s.status == StepStatus::Ok) {
            let request = matches!(
                run.scenario.client.get(reported.step.wrapping_sub(1)),
                Some(
                    mcp_scenario::ClientStep::Request { background: false, .. }
                        | mcp_scenario::ClientStep::Await { .. }
                )
            );
            if !request {
                continue;
            }
            for method in crate::checks::plan_method(run.scenario, reported.step) {
                if !run.transcript.client_messages().any(|m| method_of(m) == Some(method.as_str())) {
                    found.push((At::End, FromNowhere { step: reported.step, what: reported.what.clone(), method }));
                }
            }
        }
        found
    }
}

/// Whether plan step `step` (1-based) comes after a `close` step of the plan.
fn after_close(run: &Run<'_>, step: usize) -> bool {
    run.scenario.client.iter().take(step.saturating_sub(1)).any(|s| matches!(s, mcp_scenario::ClientStep::Close))
}

/// A request step reported ok whose request never reached the server.
#[derive(Debug, thiserror::Error)]
#[error("step {step} ({what}) was reported ok, but no {method} request reached the server")]
pub struct FromNowhere {
    step: usize,
    what: String,
    method: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::{external_scope, ok_step, with_plan};
    use crate::transcript::Transcript;
    use mcp_results::ClientOutcome;
    use mcp_scenario::wire::{Recorded, WireEvent};

    /// The basis of the violations of a stdio run whose client sent `initialize` only and
    /// reported every step of `plan` ok.
    fn basis_of(plan: &str) -> (usize, Level) {
        let scenario = with_plan(plan);
        let initialize = WireEvent::FromClient {
            t_us: 1,
            bytes: Recorded::of(b"{}"),
            json: Some(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"})),
            terminated: true,
        };
        let transcript = Transcript::new(vec![vec![initialize]]);
        let steps = (1..=scenario.client.len()).map(ok_step).collect();
        let outcome = ClientOutcome { steps, ..ClientOutcome::default() };
        let run =
            Run { scenario: &scenario, scope: external_scope(&scenario), outcome: &outcome, transcript: &transcript };
        (ResultsFromTheServer.judge(&run).len(), ResultsFromTheServer.basis(&run).0)
    }

    #[test]
    fn a_local_answer_after_the_close_is_the_sdks_and_any_other_the_drivers() {
        let after_close = "  - op: connect\n  - op: close\n  - op: request\n    method: tools/list\n";
        assert_eq!(basis_of(after_close), (1, Level::Robustness));
        let made_up = "  - op: connect\n  - op: request\n    method: tools/list\n";
        assert_eq!(basis_of(made_up), (1, Level::Driver));
    }
}
