//! `always: params always present (SPEC §2)`: every request and notification the client
//! sends carries `params` (`{}` when none). A rule SPEC.md sets for the bundled transports
//! (the MCP specification lets params be omitted), so it applies to the bundled target only.

use super::{At, Rule, well_formed};
use crate::checks::Run;
use crate::scope::Scope;
use crate::transcript::Connection;
use mcp_scenario::basis::Level;
use serde_json::Value;

/// See the module docs.
pub struct ParamsPresent;

impl Rule for ParamsPresent {
    const NAME: &'static str = "params always present (SPEC §2)";
    type Violation = Missing;

    fn basis(&self, _run: &Run<'_>) -> (Level, Option<String>) {
        (Level::Project, Some("SPEC §2 params always present".into()))
    }

    fn applies(&self, scope: &Scope) -> bool {
        scope.target.is_bundled()
    }

    fn judge_connection(&self, run: &Run<'_>, c: &Connection) -> Vec<(At, Missing)> {
        well_formed(run, c)
            .into_iter()
            .filter(|(_, m)| m.get("method").is_some() && m.get("params").is_none())
            .map(|(at, m)| (at, Missing { conn: c.number(), message: m.clone() }))
            .collect()
    }
}

/// A request or notification without `params`.
#[derive(Debug, thiserror::Error)]
#[error("connection {conn}: {message}")]
pub struct Missing {
    conn: usize,
    message: Value,
}
