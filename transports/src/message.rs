//! JSON-RPC 2.0 message shapes and the classification of inbound values (SPEC §2 dispatch).

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
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
        Self::from_value(v.clone())
    }

    /// [`Self::classify`], taking the value: the result, params and method move into the
    /// message instead of being copied.
    pub fn from_value(v: Value) -> Inbound {
        match v {
            Value::Object(mut obj) => Members {
                version: obj.remove("jsonrpc"),
                id: obj.remove("id"),
                method: obj.remove("method"),
                params: obj.remove("params"),
                result: obj.remove("result"),
                error: obj.remove("error"),
            }
            .classify(),
            Value::Array(_) => Inbound::Invalid(Malformed::Batch),
            _ => Inbound::Invalid(Malformed::NotAnObject),
        }
    }
}

/// Parses one message's JSON text straight into its classification, as [`Inbound::from_value`]
/// would classify the parsed value: every reply the stdio transport reads comes this way.
/// Only the members classification reads become [`Value`]s; the envelope itself is never
/// built as a map, and other members are [`Skipped`]. Not valid JSON is an error, the one
/// parsing to a [`Value`] gives.
impl<'de> Deserialize<'de> for Inbound {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(InboundVisitor)
    }
}

struct InboundVisitor;

/// A visitor's methods for every JSON scalar (boolean, number, string, null), each giving
/// `$value`: to both visitors here, one scalar is as good as another.
macro_rules! scalars_are {
    ($value:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

impl<'de> Visitor<'de> for InboundVisitor {
    type Value = Inbound;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Inbound, A::Error> {
        let mut m = Members::default();
        // A repeated member keeps its last value, as in a parsed `Value`.
        while let Some(key) = map.next_key::<Member>()? {
            let slot = match key {
                Member::Jsonrpc => &mut m.version,
                Member::Id => &mut m.id,
                Member::Method => &mut m.method,
                Member::Params => &mut m.params,
                Member::Result => &mut m.result,
                Member::Error => &mut m.error,
                Member::Other => {
                    map.next_value::<Skipped>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(m.classify())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Inbound, A::Error> {
        while seq.next_element::<Skipped>()?.is_some() {}
        Ok(Inbound::Invalid(Malformed::Batch))
    }

    scalars_are!(Inbound::Invalid(Malformed::NotAnObject));
}

/// A value classification does not read, parsed as a [`Value`] would be but kept nowhere:
/// the same checks, so the same error at the same column. (serde's `IgnoredAny` takes
/// serde_json's skipping path, which checks less and places errors differently: it let a
/// lone surrogate escape or `1e999` through, and put a control character in a string one
/// column early, found by `make fuzz`.) A string without escapes is borrowed from the text,
/// so nothing is allocated.
struct Skipped;

impl<'de> Deserialize<'de> for Skipped {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Skipped)
    }
}

impl<'de> Visitor<'de> for Skipped {
    type Value = Skipped;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skipped, A::Error> {
        while map.next_entry::<Skipped, Skipped>()?.is_some() {}
        Ok(Skipped)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skipped, A::Error> {
        while seq.next_element::<Skipped>()?.is_some() {}
        Ok(Skipped)
    }

    scalars_are!(Skipped);
}

/// The member names classification reads; a key is matched without being allocated (serde's
/// derived identifier visitor reads the borrowed name).
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

/// The members of a JSON-RPC object that decide what it is (SPEC §2 dispatch).
#[derive(Default)]
struct Members {
    version: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
}

impl Members {
    fn classify(self) -> Inbound {
        if self.version.as_ref().and_then(Value::as_str) != Some("2.0") {
            return Inbound::Invalid(Malformed::WrongVersion);
        }
        if let Some(method) = self.method {
            let Value::String(method) = method else {
                return Inbound::Invalid(Malformed::MethodNotString);
            };
            let id = match self.id {
                None => None,
                Some(Value::Null) => return Inbound::Invalid(Malformed::NullRequestId),
                Some(raw) => match RequestId::from_value(&raw) {
                    Some(id) => Some(id),
                    None => return Inbound::Invalid(Malformed::BadRequestId),
                },
            };
            let params = self.params.unwrap_or_else(|| json!({}));
            return match id {
                None => Inbound::Notification { method, params },
                Some(id) => Inbound::Request { id, method, params },
            };
        }
        let id = self.id.as_ref().and_then(RequestId::from_value);
        match (self.result, self.error) {
            (Some(_), Some(_)) => Inbound::Invalid(Malformed::ResultAndError),
            (Some(result), None) => match id {
                Some(id) => Inbound::Response { id, result },
                None => Inbound::Invalid(Malformed::NoUsableId),
            },
            (None, Some(err)) => match serde_json::from_value::<RpcError>(err) {
                Ok(error) => Inbound::ErrorResponse { id, error },
                Err(_) => Inbound::Invalid(Malformed::BadErrorObject),
            },
            (None, None) => Inbound::Invalid(Malformed::Empty),
        }
    }
}

/// A request's JSON text (one line: serde_json escapes control characters). `params`
/// defaults to `{}` (SPEC §2: every message carries params). Written straight from its
/// parts, never built as a [`Value`] first: every request a client sends comes through here.
pub fn request(id: &RequestId, method: &str, params: Option<&Value>) -> Vec<u8> {
    #[derive(Serialize)]
    struct Request<'a> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        method: &'a str,
        params: &'a Value,
    }
    let empty = Value::Object(serde_json::Map::new());
    let request = Request { jsonrpc: "2.0", id, method, params: params.unwrap_or(&empty) };
    let mut text = Vec::with_capacity(128);
    // Writing into a Vec cannot fail, and every part serialises (ids, strings, Values).
    let _ = serde_json::to_writer(&mut text, &request);
    text
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
    fn a_request_is_written_in_member_order_with_params_defaulting_to_an_object() {
        let text = |id, params| String::from_utf8(request(&id, "tools/call", params)).expect("utf8");
        let params = json!({"b": 1, "a": "x\ny"});
        assert_eq!(
            text(RequestId::Number(7), Some(&params)),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"b":1,"a":"x\ny"}}"#
        );
        assert_eq!(
            text(RequestId::String("7".into()), None),
            r#"{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{}}"#
        );
    }

    #[test]
    fn parsing_the_text_classifies_as_the_parsed_value_does() {
        let texts = [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#,
            r#"{"id":"a","result":null,"jsonrpc":"2.0","extra":{"deep":[1,{"x":null}]}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m","data":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":[1],"result":{}}"#,
            r#"{"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":2,"id":1,"result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            // A repeated member keeps its last value.
            r#"{"jsonrpc":"1.0","id":1,"result":{},"jsonrpc":"2.0","id":2}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"id":"1"}"#,
            r#"{"json\u0072pc":"2.0","id":"e\u0301","result":"\n"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            "[]",
            "null",
            "true",
            "-1",
            "18446744073709551616",
            "2.5",
            r#""2.0""#,
        ];
        for text in texts {
            let value: Value = serde_json::from_str(text).expect(text);
            let parsed: Inbound = serde_json::from_str(text).expect(text);
            assert_eq!(parsed, Inbound::from_value(value), "{text}");
        }
        let broken = [
            r#"{"jsonrpc":"2.0","id":1,"result":}"#,
            r#"{"a":[1,}"#,
            "[1,",
            "{} {}",
            r#"{"id":1} trailing"#,
            "",
            "nul",
            // In members classification skips, and in a batch: the same errors at the same
            // columns (skipped with `IgnoredAny`, a lone surrogate and `1e999` were accepted,
            // and a control character was placed one column early, found by `make fuzz`).
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"resulu\":{\"content\":\"text\u{1}\"}}",
            "{\"id\":1,\"other\":{\"k\u{1}\":1}}",
            "[{\"id\":1,\"result\":\"\u{1f}\"}]",
            r#"{"id":1,"other":"\q"}"#,
            r#"{"id":1,"other":"\ud800"}"#,
            r#"{"id":1,"other":"\udc00\u0041"}"#,
            r#"{"id":1,"other":[1.e5]}"#,
            r#"{"id":1,"other":-}"#,
            r#"{"id":1,"other":01}"#,
            r#"{"id":1,"other":1e999}"#,
            r#"["\uD83D"]"#,
        ];
        for broken in broken {
            let value = serde_json::from_str::<Value>(broken).expect_err(broken);
            let parsed = serde_json::from_str::<Inbound>(broken).expect_err(broken);
            assert_eq!(parsed.to_string(), value.to_string(), "{broken}");
        }
    }

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
