//! `always: valid JSON-RPC`: every client message is JSON-RPC 2.0 (a batch only on
//! 2025-03-26): a request or notification with a string `method`, an integer or string
//! `id`, object or array `params`; or a response with exactly one of `result` and `error`.
//! An error response to a request whose id could not be read carries `id: null` (JSON-RPC
//! 2.0 §5) or, from 2025-11-25, may leave the id out (basic/index: error responses MUST
//! include the same ID "except in error cases where the ID could not be read due a
//! malformed request").

use super::{At, Rule, Written, written};
use crate::checks::Run;
use crate::transcript::Connection;
use mcp_scenario::Revision;
use mcp_scenario::basis::Level;
use serde_json::Value;

/// See the module docs.
pub struct ValidJsonRpc;

impl Rule for ValidJsonRpc {
    const NAME: &'static str = "valid JSON-RPC";
    type Violation = Violation;

    /// The sentence as the run's revision words it (every revision's basic/index has it).
    fn basis(&self, run: &Run<'_>) -> (Level, Option<String>) {
        let sentence = format!(
            "{} basic/index: All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification",
            run.scope.revision.as_str()
        );
        (Level::Must, Some(sentence))
    }

    fn judge_connection(&self, run: &Run<'_>, c: &Connection) -> Vec<(At, Violation)> {
        let conn = c.number();
        written(run, c)
            .into_iter()
            .filter_map(|(at, w)| match w {
                Written::NotJson(line) => Some((at, Violation::NotJson { conn, line })),
                Written::Message(m) => shape(m, run.scope.revision)
                    .err()
                    .map(|why| (at, Violation::Shape { conn, why, message: m.clone() })),
            })
            .collect()
    }
}

/// A client message that is not JSON-RPC 2.0.
#[derive(Debug, thiserror::Error)]
pub enum Violation {
    /// A line that does not parse as JSON.
    #[error("connection {conn}: client sent a line that is not JSON: {line:?}")]
    NotJson {
        /// The connection.
        conn: usize,
        /// The line (`<binary>` when not UTF-8).
        line: String,
    },
    /// JSON of the wrong shape.
    #[error("connection {conn}: {why}: {message}")]
    Shape {
        /// The connection.
        conn: usize,
        /// What is wrong.
        why: ShapeError,
        /// The message.
        message: Value,
    },
}

/// What is wrong with a client message's JSON-RPC 2.0 shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// Not an object.
    #[error("not a JSON object")]
    NotObject,
    /// `jsonrpc` is not `"2.0"`.
    #[error("missing or wrong \"jsonrpc\"")]
    Version,
    /// `method` is not a string.
    #[error("\"method\" is not a string")]
    Method,
    /// A request id that is neither a string nor an integer.
    #[error("request id is not a string or an integer")]
    RequestId,
    /// `params` that is neither an object nor an array.
    #[error("\"params\" is neither an object nor an array")]
    Params,
    /// A response with both `result` and `error`.
    #[error("response has both result and error")]
    ResultAndError,
    /// Anything else.
    #[error("neither a request, a notification nor a response")]
    Neither,
}

/// Checks one client message's JSON-RPC 2.0 shape.
pub(super) fn shape(m: &Value, revision: Revision) -> Result<(), ShapeError> {
    let obj = m.as_object().ok_or(ShapeError::NotObject)?;
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(ShapeError::Version);
    }
    let id_ok = |id: &Value| id.is_string() || id.as_i64().is_some();
    if let Some(method) = obj.get("method") {
        if !method.is_string() {
            return Err(ShapeError::Method);
        }
        if let Some(id) = obj.get("id")
            && !id_ok(id)
        {
            return Err(ShapeError::RequestId);
        }
        if let Some(p) = obj.get("params")
            && !p.is_object()
            && !p.is_array()
        {
            return Err(ShapeError::Params);
        }
        return Ok(());
    }
    match (obj.get("id"), obj.contains_key("result"), obj.contains_key("error")) {
        (Some(id), true, false) | (Some(id), false, true) if id_ok(id) => Ok(()),
        (Some(Value::Null), false, true) => Ok(()),
        (None, false, true) if revision >= Revision::R2025_11_25 => Ok(()),
        (Some(_), true, true) => Err(ShapeError::ResultAndError),
        _ => Err(ShapeError::Neither),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn client_message_shapes() {
        assert!(shape(&json!({"jsonrpc":"2.0","id":1,"method":"x"}), Revision::R2025_11_25).is_ok());
        assert!(shape(&json!({"jsonrpc":"2.0","id":"a","result":{}}), Revision::R2025_11_25).is_ok());
        assert_eq!(
            shape(&json!({"jsonrpc":"2.0","id":null,"method":"x"}), Revision::R2025_11_25),
            Err(ShapeError::RequestId)
        );
        assert_eq!(
            shape(&json!({"jsonrpc":"2.0","id":1.5,"result":{}}), Revision::R2025_11_25),
            Err(ShapeError::Neither)
        );
        assert_eq!(shape(&json!({"id":1,"method":"x"}), Revision::R2025_11_25), Err(ShapeError::Version));
        // An error answering a request whose id could not be read.
        let unread = json!({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}});
        assert!(shape(&unread, Revision::R2025_11_25).is_ok());
        assert_eq!(shape(&unread, Revision::R2025_06_18), Err(ShapeError::Neither));
        assert!(
            shape(
                &json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}),
                Revision::R2025_06_18
            )
            .is_ok()
        );
        assert_eq!(
            shape(&json!({"jsonrpc":"2.0","id":null,"result":{}}), Revision::R2025_11_25),
            Err(ShapeError::Neither)
        );
    }
}
