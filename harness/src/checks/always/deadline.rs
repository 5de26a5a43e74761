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
    const BASIS: (Level, Option<&'static str>) = (Level::Unclassified, None);

    fn basis(&self, run: &Run<'_>) -> (Level, Option<String>) {
        super::scenario_basis(run)
    }
    type Violation = Hung;

    fn judge(&self, run: &Run<'_>) -> Vec<(At, Hung)> {
        // A `times_out` check reports a hang as "no default timeout", on its own basis.
        if run.outcome.hung && !crate::checks::times_out::reports_the_hang(run) {
            vec![(At::Start, Hung(run.scenario.deadline_ms))]
        } else {
            Vec::new()
        }
    }
}

/// The plan was still running at the deadline.
#[derive(Debug, thiserror::Error)]
#[error("the client plan did not finish within {0}ms")]
pub struct Hung(u64);
