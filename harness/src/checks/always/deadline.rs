//! `always: finishes before the deadline`: the client plan finished within the run's
//! deadline (a client that never reports is a finding, not a harness error). A scenario with
//! a `times_out` check leaves the hang to it ("no default timeout").

use super::{At, Rule};
use crate::checks::Run;
use mcp_scenario::basis::Level;

/// See the module docs.
pub struct FinishesBeforeDeadline;

impl Rule for FinishesBeforeDeadline {
    const NAME: &'static str = "finishes before the deadline";
    /// A hang by itself is a SHOULD: the checks it left unjudged fail on their own (an
    /// outcome "did not run", a message never sent), each with its own basis.
    const BASIS: (Level, Option<&'static str>) = (
        Level::Should,
        Some(
            "2025-11-25 basic/lifecycle (Timeouts): Implementations SHOULD establish timeouts for all sent requests, to prevent hung connections and resource exhaustion",
        ),
    );
    type Violation = Hung;

    fn judge(&self, run: &Run<'_>) -> Vec<(At, Hung)> {
        // A `times_out` check reports a hang as "no default timeout", on its own basis.
        if run.outcome.hung && !crate::checks::times_out::reports_the_hang(run) {
            vec![(At::Start, Hung(run.scope.deadline))]
        } else {
            Vec::new()
        }
    }
}

/// The plan was still running at the deadline.
#[derive(Debug, thiserror::Error)]
#[error("the client plan did not finish within the run deadline of {0}")]
pub struct Hung(crate::scope::Deadline);
