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
    /// Anything else, and why it is not JSON-RPC.
    Invalid(Malformed),
}

/// Why an inbound value is not a JSON-RPC message ([`Inbound::Invalid`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// A JSON array: batches are not accepted here.
    #[error("batch arrays are not accepted")]
    Batch,
    /// A JSON value other than an object or array.
    #[error("not a JSON object")]
    NotAnObject,
    /// `jsonrpc` is absent or not `"2.0"`.
    #[error("missing or wrong \"jsonrpc\" member")]
    WrongVersion,
    /// `method` is present but not a string.
    #[error("\"method\" is not a string")]
    MethodNotString,
    /// A request whose id is `null`.
    #[error("request with a null id")]
    NullRequestId,
    /// A request whose id is a float, object, array or boolean.
    #[error("request id is neither a number nor a string")]
    BadRequestId,
    /// A response with both `result` and `error`.
    #[error("response has both result and error")]
    ResultAndError,
    /// A `result` response without a number or string id.
    #[error("response without a usable id")]
    NoUsableId,
    /// An `error` member that is not a JSON-RPC error object.
    #[error("malformed error object")]
    BadErrorObject,
    /// Neither `method` nor `result` nor `error`.
    #[error("neither method nor result nor error")]
    Empty,
}

impl Inbound {
    /// Classifies one parsed JSON value. Never panics; anything odd is [`Inbound::Invalid`].
    pub fn classify(v: &Value) -> Inbound {
        let Some(obj) = v.as_object() else {
            return Inbound::Invalid(match v {
                Value::Array(_) => Malformed::Batch,
                _ => Malformed::NotAnObject,
            });
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Inbound::Invalid(Malformed::WrongVersion);
        }
        let params = |o: &Map<String, Value>| o.get("params").cloned().unwrap_or_else(|| json!({}));
        let id = obj.get("id");
        if let Some(method) = obj.get("method") {
            let Some(method) = method.as_str() else {
                return Inbound::Invalid(Malformed::MethodNotString);
            };
            return match id {
                None => Inbound::Notification { method: method.into(), params: params(obj) },
                Some(Value::Null) => Inbound::Invalid(Malformed::NullRequestId),
                Some(raw) => match RequestId::from_value(raw) {
                    Some(id) => Inbound::Request { id, method: method.into(), params: params(obj) },
                    None => Inbound::Invalid(Malformed::BadRequestId),
                },
            };
        }
        match (obj.get("result"), obj.get("error")) {
            (Some(_), Some(_)) => Inbound::Invalid(Malformed::ResultAndError),
            (Some(result), None) => match id.and_then(RequestId::from_value) {
                Some(id) => Inbound::Response { id, result: result.clone() },
                None => Inbound::Invalid(Malformed::NoUsableId),
            },
            (None, Some(err)) => match serde_json::from_value::<RpcError>(err.clone()) {
                Ok(error) => Inbound::ErrorResponse { id: id.and_then(RequestId::from_value), error },
                Err(_) => Inbound::Invalid(Malformed::BadErrorObject),
            },
            (None, None) => Inbound::Invalid(Malformed::Empty),
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
        assert_eq!(c(json!([1])), Inbound::Invalid(Malformed::Batch));
        assert_eq!(c(json!({"id":1,"result":{}})), Inbound::Invalid(Malformed::WrongVersion));
        assert_eq!(
            c(json!({"jsonrpc":"2.0","id":1,"result":1,"error":{}})),
            Inbound::Invalid(Malformed::ResultAndError)
        );
        assert_eq!(Malformed::WrongVersion.to_string(), "missing or wrong \"jsonrpc\" member");
    }
}
