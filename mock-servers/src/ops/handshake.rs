//! `handshake`: expect `initialize`, answer it with a canned result (protocolVersion = the
//! scenario's revision unless overridden; over stateful Streamable HTTP with a session id),
//! then expect `notifications/initialized`.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use bytes::Bytes;
use futures::future::BoxFuture;
use mcp_scenario::Revision;
use mcp_scenario::payload;
use mcp_scenario::script::{LineEnd, step};
use serde_json::{Value, json};

/// The `initialize` result of a mock speaking `revision`: the step's capabilities, else what
/// the scenario's plan and script need (`Defaults::capabilities`).
fn result(step: &step::Handshake, revision: &str, defaults: &crate::defaults::Defaults) -> Value {
    let version = step.protocol_version.as_deref().unwrap_or(revision);
    payload::initialize_result(version, Some(step.capabilities.as_ref().unwrap_or(defaults.capabilities())))
}

impl Op for step::Handshake {
    fn about(&self) -> About {
        // Answering with another protocol version is the fault; the canned answer is none.
        let fault = if self.protocol_version.is_some() { Fault::Here } else { Fault::None };
        let mut explain = match &self.protocol_version {
            Some(v) => format!("answers `initialize` with protocolVersion {v:?} and waits for `notifications/initialized`"),
            None => "answers `initialize` (with the scenario's revision) and waits for `notifications/initialized`".into(),
        };
        if let Some(ms) = self.hold_initialized_ms {
            explain.push_str(&format!(", which it answers (HTTP) {ms} ms after it came"));
        }
        About::new(Transports::ALL, fault, explain)
    }

    fn consumes(&self) -> Vec<&str> {
        vec!["initialize", "notifications/initialized"]
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let init = run.expect("initialize").await;
            let result = result(self, &run.mock.revision, &run.mock.defaults);
            let id = init.get("id").cloned().unwrap_or(Value::Null);
            run.mock.write(&payload::reply_line(id, Some(&result), None, None, LineEnd::Lf), "reply initialize").await;
            run.expect("notifications/initialized").await;
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let i = run.consume("initialize", None, false).await;
            let result = result(self, run.shared.revision.as_str(), &run.shared.defaults);
            let id = run.held[i].inbound.message.get("id").cloned().unwrap_or(Value::Null);
            let stateful =
                matches!(run.shared.revision, Revision::R2025_03_26 | Revision::R2025_06_18 | Revision::R2025_11_25);
            let mut extra = Vec::new();
            if self.session && stateful && !run.legacy() {
                let sid = self.session_id.clone().unwrap_or_else(fresh_session_id);
                run.shared.issue_session(&run.conn, &sid);
                extra.push(("mcp-session-id".to_string(), sid));
            }
            run.answer(i, &json!({"jsonrpc": "2.0", "id": id, "result": result}), &extra, "reply initialize");
            let hold = self.hold_initialized_ms.filter(|_| !run.legacy());
            let j = run.consume("notifications/initialized", None, hold.is_some()).await;
            if let Some(ms) = hold {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                if let Some(tx) = run.held[j].inbound.reply.take() {
                    let exchange = run.held[j].inbound.exchange;
                    tx.send(run.shared.respond(run.n(), exchange, 202, &[], Bytes::new(), "accepted (held)"));
                }
            }
        })
    }
}

/// A session id in the shape real servers use (clients must not assume any shape).
fn fresh_session_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    let a = h.finish();
    h.write_u64(a);
    format!("{:016x}{:016x}", a, h.finish())
}
