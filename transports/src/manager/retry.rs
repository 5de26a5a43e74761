//! The tool-call retry rule (SPEC §7): one reconnect and one retry, only when replaying
//! cannot run a tool twice. The decision reads typed facts — the error's class and its
//! [`Acceptance`] — and the tool's annotations, never error text. A JSON-RPC id is not an
//! idempotency key, so nothing here looks at ids either.

use crate::error::{Acceptance, TransportError};
use serde_json::Value;

/// Why a failed call is (or is not) replayed; reported as a manager event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// The request never reached the server: replaying cannot repeat it.
    NeverAccepted,
    /// The tool says calling it twice is harmless (`idempotentHint` / `readOnlyHint`).
    IdempotentTool,
    /// The server may have acted and the tool is not known to be idempotent.
    RefusedMayHaveRun,
    /// A reconnect cannot help (the server answered, the caller cancelled, a timeout, …).
    NotATransportFailure,
}

/// Whether `tool` (its `tools/list` entry, if known) declares itself safe to repeat.
pub fn is_idempotent(tool: Option<&Value>) -> bool {
    let hint = |name: &str| {
        tool.and_then(|t| t.pointer(&format!("/annotations/{name}"))).and_then(Value::as_bool) == Some(true)
    };
    hint("idempotentHint") || hint("readOnlyHint")
}

/// The rule for a `tools/call` that failed with `err`.
pub fn decide(err: &TransportError, tool: Option<&Value>) -> Replay {
    if !err.is_retryable() {
        return Replay::NotATransportFailure;
    }
    if err.acceptance() == Acceptance::NotSent {
        Replay::NeverAccepted
    } else if is_idempotent(tool) {
        Replay::IdempotentTool
    } else {
        Replay::RefusedMayHaveRun
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{RequestId, RpcError};
    use serde_json::json;

    #[test]
    fn only_never_accepted_or_idempotent_calls_are_replayed() {
        let plain = json!({"name": "charge"});
        let read_only = json!({"name": "get", "annotations": {"readOnlyHint": true}});
        let idempotent = json!({"name": "put", "annotations": {"idempotentHint": true, "readOnlyHint": false}});
        let write = TransportError::Write { message: "broken pipe".into() };
        let dropped = TransportError::Closed { reason: None };
        let no_response = TransportError::NoResponse { id: RequestId::Number(3) };
        let bad_gateway = TransportError::Http {
            status: 502,
            body: String::new(),
            www_authenticate: None,
            mcp_auth_server: None,
            accepted: false,
        };
        assert_eq!(decide(&write, Some(&plain)), Replay::NeverAccepted);
        assert_eq!(decide(&TransportError::NotConnected, None), Replay::NeverAccepted);
        assert_eq!(decide(&dropped, Some(&plain)), Replay::RefusedMayHaveRun);
        assert_eq!(decide(&no_response, Some(&plain)), Replay::RefusedMayHaveRun);
        assert_eq!(decide(&bad_gateway, None), Replay::RefusedMayHaveRun);
        assert_eq!(decide(&dropped, Some(&read_only)), Replay::IdempotentTool);
        assert_eq!(decide(&no_response, Some(&idempotent)), Replay::IdempotentTool);
        let timeout = TransportError::Timeout { ms: 50, sent: true };
        assert_eq!(decide(&timeout, Some(&read_only)), Replay::NotATransportFailure);
        let rpc =
            TransportError::Rpc(RpcError { code: -32000, message: "connection closed, retryable".into(), data: None });
        assert_eq!(decide(&rpc, Some(&read_only)), Replay::NotATransportFailure, "error text decides nothing");
    }
}
