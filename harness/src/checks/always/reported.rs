//! `always: results come from the server`: a plan `request` (or, for a background one, its
//! `await`, which reports the answer) that the client reports ok was sent: its method reached
//! the mock. A result no server gave is one the driver
//! made up, whatever else the run shows, so it breaks the driver contract (clients/README.md:
//! a driver reports what its SDK did). The bundled client is held to it too.

use super::{At, Rule};
use crate::checks::Run;
use crate::transcript::method_of;
use mcp_scenario::basis::Level;
use mcp_scenario::results::StepStatus;

/// See the module docs.
pub struct ResultsFromTheServer;

/// What the rule rests on.
const CONTRACT: &str = "clients/README.md: a driver reports what its SDK did with the server it was given; a request reported ok that never reached that server is a result from nowhere";

impl Rule for ResultsFromTheServer {
    const NAME: &'static str = "results come from the server";
    const BASIS: (Level, Option<&'static str>) = (Level::Driver, Some(CONTRACT));
    type Violation = FromNowhere;

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

/// A request step reported ok whose request never reached the server.
#[derive(Debug, thiserror::Error)]
#[error("step {step} ({what}) was reported ok, but no {method} request reached the server")]
pub struct FromNowhere {
    step: usize,
    what: String,
    method: String,
}
