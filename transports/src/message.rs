//! JSON-RPC 2.0 message shapes and the classification of inbound values (SPEC §2 dispatch).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt;

/// A request id. `1` and `"1"` are different ids (SPEC §2).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A JSON number id (the default: 1, 2, 3…).
    Number(i64),
    /// A JSON string id (selected by [`crate::TransportConfig::string_ids`]).
    String(String),
}

impl RequestId {
    /// Reads an id from a JSON value; `None` for null, floats, objects and the like.
    pub fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Number(n) => n.as_i64().map(RequestId::Number),
            Value::String(s) => Some(RequestId::String(s.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => json!(n),
            RequestId::String(s) => json!(s),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s}"),
        }
    }
}

/// A JSON-RPC error object; `data` is kept so callers can inspect it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// The human-readable message.
    pub message: String,
    /// Optional extra data, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// `-32601 Method not found`, the answer to any server request nobody handles.
    pub fn method_not_found(method: &str) -> Self {
        RpcError { code: -32601, message: format!("Method not found: {method}"), data: None }
    }
}

/// What an inbound JSON value is, by SPEC §2's dispatch rules.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// `id` + `result`: a successful response.
    Response {
        /// The id it answers.
        id: RequestId,
        /// The result.
        result: Value,
    },
    /// `id` + `error`: an error response.
    ErrorResponse {
        /// The id it answers (`None` when the server sent `id: null`).
        id: Option<RequestId>,
        /// The error object.
        error: RpcError,
    },
    /// `method` + non-null `id`: a server-to-client request.
    Request {
        /// The server's id, echoed in our answer.
        id: RequestId,
        /// The method.
        method: String,
        /// The params (`{}` when absent).
        params: Value,
    },
    /// `method` without `id`: a notification.
    Notification {
        /// The method.
        method: String,
        /// The params (`{}` when absent).
        params: Value,
    },
    /// Anything else; the string says why it is not JSON-RPC.
    Invalid(String),
}

impl Inbound {
    /// Classifies one parsed JSON value. Never panics; anything odd is [`Inbound::Invalid`].
    pub fn classify(v: &Value) -> Inbound {
        let Some(obj) = v.as_object() else {
            return Inbound::Invalid(match v {
                Value::Array(_) => "batch arrays are not accepted".into(),
                _ => "not a JSON object".into(),
            });
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Inbound::Invalid("missing or wrong \"jsonrpc\" member".into());
        }
        let params = |o: &Map<String, Value>| o.get("params").cloned().unwrap_or_else(|| json!({}));
        let id = obj.get("id");
        if let Some(method) = obj.get("method") {
            let Some(method) = method.as_str() else {
                return Inbound::Invalid("\"method\" is not a string".into());
            };
            return match id {
                None => Inbound::Notification { method: method.into(), params: params(obj) },
                Some(Value::Null) => Inbound::Invalid("request with a null id".into()),
                Some(raw) => match RequestId::from_value(raw) {
                    Some(id) => Inbound::Request { id, method: method.into(), params: params(obj) },
                    None => Inbound::Invalid("request id is neither a number nor a string".into()),
                },
            };
        }
        match (obj.get("result"), obj.get("error")) {
            (Some(_), Some(_)) => Inbound::Invalid("response has both result and error".into()),
            (Some(result), None) => match id.and_then(RequestId::from_value) {
                Some(id) => Inbound::Response { id, result: result.clone() },
                None => Inbound::Invalid("response without a usable id".into()),
            },
            (None, Some(err)) => match serde_json::from_value::<RpcError>(err.clone()) {
                Ok(error) => Inbound::ErrorResponse { id: id.and_then(RequestId::from_value), error },
                Err(_) => Inbound::Invalid("malformed error object".into()),
            },
            (None, None) => Inbound::Invalid("neither method nor result nor error".into()),
        }
    }
}

/// Builds a request object. `params` defaults to `{}` (SPEC §2: every message carries params).
pub fn request(id: &RequestId, method: &str, params: Option<Value>) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "method": method, "params": params.unwrap_or_else(|| json!({}))})
}

/// Builds a notification object with `params` defaulting to `{}`.
pub fn notification(method: &str, params: Option<Value>) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params.unwrap_or_else(|| json!({}))})
}

/// Builds `notifications/cancelled` for a request we gave up on (SPEC §2).
pub fn cancelled(id: &RequestId, reason: &str) -> Value {
    notification("notifications/cancelled", Some(json!({"requestId": id.to_value(), "reason": reason})))
}

/// Builds the answer to a server-to-client request.
pub fn response(id: &RequestId, outcome: Result<Value, RpcError>) -> Value {
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id.to_value(), "error": error}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_and_number_ids_differ() {
        assert_ne!(RequestId::from_value(&json!(1)), RequestId::from_value(&json!("1")));
    }

    #[test]
    fn classifies_every_shape() {
        let c = |v: Value| Inbound::classify(&v);
        assert!(matches!(c(json!({"jsonrpc":"2.0","id":1,"result":{}})), Inbound::Response { .. }));
        assert!(matches!(
            c(json!({"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}})),
            Inbound::ErrorResponse { id: None, .. }
        ));
        assert!(matches!(c(json!({"jsonrpc":"2.0","id":7,"method":"ping"})), Inbound::Request { .. }));
        assert!(matches!(c(json!({"jsonrpc":"2.0","method":"n"})), Inbound::Notification { .. }));
        assert!(matches!(c(json!([1])), Inbound::Invalid(_)));
        assert!(matches!(c(json!({"id":1,"result":{}})), Inbound::Invalid(_)));
        assert!(matches!(c(json!({"jsonrpc":"2.0","id":1,"result":1,"error":{}})), Inbound::Invalid(_)));
    }
}
