//! `always: server script completes`: every connection's server script ran to its end —
//! proof the client reached every scripted step, so no check passes because the client died
//! first.

use super::{At, Rule};
use crate::checks::Run;
use crate::transcript::Connection;
use mcp_scenario::basis::Level;
use mcp_scenario::wire::WireEvent;

/// See the module docs.
pub struct ScriptCompletes;

impl Rule for ScriptCompletes {
    const NAME: &'static str = "server script completes";
    const BASIS: (Level, Option<&'static str>) = (Level::Unclassified, None);
    type Violation = Stopped;

    fn judge_connection(&self, run: &Run<'_>, c: &Connection) -> Vec<(At, Stopped)> {
        let progress = c.events().iter().rev().find_map(|e| match e {
            WireEvent::Script { reached, total, finished } => Some((*reached, *total, *finished)),
            _ => None,
        });
        let Some((reached, total, false)) = progress else { return Vec::new() };
        let steps = mcp_scenario::script::connection_script(&run.scenario.server, c.number());
        let op = steps.get(reached.saturating_sub(1)).map(mcp_mock::ops::describe).unwrap_or_default();
        vec![(At::Connection(c.number(), None), Stopped { conn: c.number(), reached, total, op })]
    }
}

/// A connection's script stopped before its end.
#[derive(Debug, thiserror::Error)]
#[error(
    "connection {conn}: the mock's script stopped at step {reached} of {total} ({op}): the client never got that far"
)]
pub struct Stopped {
    conn: usize,
    reached: usize,
    total: usize,
    op: String,
}
