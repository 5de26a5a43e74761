//! `always: request metadata (2026-07-28)`: every request a client sends in a 2026-07-28 run
//! carries the per-request fields the revision requires in `params._meta`
//! (`io.modelcontextprotocol/protocolVersion` and `…/clientCapabilities`). An MCP MUST, so it
//! judges every target. A connection on which the client fell back to the `initialize`
//! handshake (a server of an older revision) speaks that revision from its `initialize` on,
//! and is not held to it there.
//!
//! [`unmarked`] is also what the `sent` check leaves out: a request the revision calls
//! malformed does not count as having been sent.

use super::{At, Rule, well_formed};
use crate::checks::Run;
use crate::scope::Scope;
use crate::transcript::Connection;
use mcp_scenario::Revision;
use mcp_scenario::basis::Level;
use serde_json::Value;

/// See the module docs.
pub struct RequestMetadata;

/// The sentence the rule rests on.
const SENTENCE: &str = "2026-07-28 basic/index (Per-request protocol fields): Client requests carry the following io.modelcontextprotocol/* fields in _meta; fields marked as required MUST be included on every request (io.modelcontextprotocol/protocolVersion, io.modelcontextprotocol/clientCapabilities)";

/// The required fields, as `_meta` keys.
const REQUIRED: [&str; 2] = ["io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"];

impl Rule for RequestMetadata {
    const NAME: &'static str = "request metadata (2026-07-28)";
    type Violation = Unmarked;

    fn basis(&self, _run: &Run<'_>) -> (Level, Option<String>) {
        (Level::Must, Some(SENTENCE.into()))
    }

    fn applies(&self, scope: &Scope) -> bool {
        scope.revision == Revision::R2026_07_28
    }

    fn judge_connection(&self, run: &Run<'_>, c: &Connection) -> Vec<(At, Unmarked)> {
        unmarked(run, c)
            .into_iter()
            .map(|(at, m, missing)| (at, Unmarked { conn: c.number(), missing, message: m.clone() }))
            .collect()
    }
}

/// The requests on connection `c` of a 2026-07-28 run that lack a required `_meta` field,
/// with where each is and the first field it lacks; none for another revision, and none from
/// an `initialize` on (the client fell back to the handshake).
pub fn unmarked<'a>(run: &Run<'_>, c: &'a Connection) -> Vec<(At, &'a Value, &'static str)> {
    if run.scope.revision != Revision::R2026_07_28 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (at, m) in well_formed(run, c) {
        let Some(method) = m.get("method").and_then(Value::as_str) else { continue };
        if method == "initialize" {
            break;
        }
        if m.get("id").is_none() {
            continue;
        }
        let meta = m.pointer("/params/_meta");
        if let Some(missing) = REQUIRED.iter().find(|k| meta.and_then(|v| v.get(**k)).is_none()) {
            out.push((at, m, *missing));
        }
    }
    out
}

/// A 2026-07-28 request without a required `_meta` field.
#[derive(Debug, thiserror::Error)]
#[error("connection {conn}: a request without `_meta[\"{missing}\"]`: {message}")]
pub struct Unmarked {
    conn: usize,
    missing: &'static str,
    message: Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Transcript;
    use mcp_results::ClientOutcome;
    use mcp_scenario::wire::{Recorded, WireEvent};
    use serde_json::json;

    fn judged(revision: &str, messages: Vec<Value>) -> Vec<String> {
        let yaml = format!(
            "name: t\nsummary: s\ntransport: stdio\nrevision: {revision}\nclient:\n  - op: connect\nserver:\n  - op: stall\n"
        );
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &yaml).expect("loads");
        let events = messages
            .into_iter()
            .map(|m| WireEvent::FromClient { t_us: 0, bytes: Recorded::of(b"{}"), json: Some(m), terminated: true })
            .collect();
        let transcript = Transcript::new(vec![events]);
        let outcome = ClientOutcome::default();
        let scope = crate::checks::testing::external_scope(&scenario);
        let run = Run { scenario: &scenario, scope, outcome: &outcome, transcript: &transcript };
        if !RequestMetadata.applies(&run.scope) {
            return Vec::new();
        }
        RequestMetadata.judge(&run).into_iter().map(|(_, v)| v.to_string()).collect()
    }

    #[test]
    fn every_2026_request_carries_its_required_meta_until_a_fallback() {
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
        let good = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}});
        let bare = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
        let notification = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}});
        let initialize = json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}});
        let found = judged("2026-07-28", vec![good.clone(), bare.clone(), notification.clone()]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("io.modelcontextprotocol/protocolVersion"), "{found:?}");
        // After a fallback to the handshake the connection speaks the older revision.
        assert!(judged("2026-07-28", vec![initialize, bare.clone()]).is_empty());
        // Older revisions have no per-request metadata.
        assert!(judged("2025-11-25", vec![bare]).is_empty());
    }
}
