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

    fn basis(&self, run: &Run<'_>) -> (Level, Option<String>) {
        super::scenario_basis(run)
    }
    type Violation = Stopped;

    fn judge_connection(&self, run: &Run<'_>, c: &Connection) -> Vec<(At, Stopped)> {
        let progress = c.events().iter().rev().find_map(|e| match e {
            WireEvent::Script { reached, total, finished } => Some((*reached, *total, *finished)),
            _ => None,
        });
        let Some((reached, total, false)) = progress else { return Vec::new() };
        let steps = mcp_scenario::script::connection_script(&run.scenario.server, c.number());
        let op = steps.get(reached.saturating_sub(1)).map(mcp_mock::ops::describe).unwrap_or_default();
        let why = match refusal(c) {
            Some(refused) => format!("the client did send, but the mock refused {refused}"),
            None => "the client never got that far".to_string(),
        };
        vec![(At::Connection(c.number(), None), Stopped { conn: c.number(), reached, total, op, why })]
    }
}

/// Why the HTTP mock refuses a request before its script sees it (the `why` it records).
const REFUSALS: &[&str] =
    &["session missing", "session expired", "unknown session", "auth required", "request body over the mock's cap"];

/// The last request the mock refused before its script saw it, in words: `POST tools/list
/// with 400 (session missing)`. A script that waits for a message the mock itself turned
/// away did not stop because the client never got there.
fn refusal(c: &Connection) -> Option<String> {
    let events = c.events();
    events.iter().rev().find_map(|e| {
        let WireEvent::HttpResponse { exchange, status, why, .. } = e else { return None };
        if !REFUSALS.contains(&why.as_str()) {
            return None;
        }
        let request = events.iter().find_map(|r| match r {
            WireEvent::HttpRequest { exchange: x, http_method, json, .. } if x == exchange => {
                let method = json.as_ref().and_then(|j| j.get("method")).and_then(|m| m.as_str());
                Some(method.map_or_else(|| http_method.clone(), |m| format!("{http_method} {m}")))
            }
            _ => None,
        });
        Some(format!("{} with {status} ({why})", request.unwrap_or_else(|| format!("exchange #{exchange}"))))
    })
}

/// A connection's script stopped before its end.
#[derive(Debug, thiserror::Error)]
#[error("connection {conn}: the mock's script stopped at step {reached} of {total} ({op}): {why}")]
pub struct Stopped {
    conn: usize,
    reached: usize,
    total: usize,
    op: String,
    /// `the client never got that far`, or which request the mock itself refused.
    why: String,
}
