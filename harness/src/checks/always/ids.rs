//! `always: unique in-flight ids`: the client never reuses a request id while a request
//! with that id is still in flight on the connection (a response, or a refused POST, ends
//! its flight).

use super::{At, Rule, framed, jsonrpc};
use crate::checks::Run;
use crate::checks::request_ids::RequestIds;
use crate::transcript::Connection;
use mcp_scenario::basis::Level;
use serde_json::Value;

/// See the module docs.
pub struct UniqueInFlightIds;

impl Rule for UniqueInFlightIds {
    const NAME: &'static str = "unique in-flight ids";
    type Violation = Reused;

    fn basis(&self, _run: &Run<'_>) -> (Level, Option<String>) {
        let sentence = "2025-11-25 basic/index: The request ID MUST NOT have been previously used by the requestor within the same session";
        (Level::Must, Some(sentence.into()))
    }

    fn judge_connection(&self, run: &Run<'_>, c: &Connection) -> Vec<(At, Reused)> {
        let mut found = Vec::new();
        let mut in_flight = RequestIds::default();
        for (e, event) in c.events().iter().enumerate() {
            if let Some(v) = event.client_message() {
                for (k, m) in framed(v, run.scope.revision).into_iter().enumerate() {
                    let (Ok(()), Some(_), Some(id)) =
                        (jsonrpc::shape(m, run.scope.revision), m.get("method"), m.get("id"))
                    else {
                        continue;
                    };
                    if in_flight.contains(id) {
                        found.push((
                            At::Connection(c.number(), Some((e, k))),
                            Reused { conn: c.number(), id: id.clone() },
                        ));
                    }
                    in_flight.insert(id);
                }
            }
            // A response (or a refused POST) ends its id's flight.
            if let Some(bytes) = event.mock_write() {
                for line in bytes.text.as_deref().unwrap_or("").lines() {
                    if let Ok(v) = serde_json::from_str::<Value>(line)
                        && v.get("method").is_none()
                        && let Some(id) = v.get("id")
                    {
                        in_flight.remove(id);
                    }
                }
            }
        }
        found
    }
}

/// A request id sent again while still in flight.
#[derive(Debug, thiserror::Error)]
#[error("connection {conn}: id {id} reused while still in flight")]
pub struct Reused {
    conn: usize,
    id: Value,
}
