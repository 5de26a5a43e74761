//! A request's POST and what answers it (SPEC §4 "Responses"): a JSON body validated and
//! routed here, or an SSE stream handed to `stream`; 202/204 and empty bodies are
//! protocol errors.

use super::session::Outbound;
use super::stream::StreamEnd;
use super::{BATCH_REVISION, EVENT_STREAM, Inner};
use crate::error::TransportError;
use crate::http_common::{self, BodyError, mime, read_capped, status_error};
use crate::message::{Inbound, Malformed, RequestId};
use bytes::Bytes;
use reqwest::{Response, StatusCode};
use serde_json::Value;
use std::sync::Arc;

/// Why a request's reply is not its JSON-RPC response; becomes [`TransportError::Protocol`].
#[derive(Debug, thiserror::Error)]
enum ReplyError {
    /// 202/204: the server accepted a request as if it were a notification.
    #[error(
        "HTTP {status} with no body in reply to request {}; expected application/json or text/event-stream",
        .id.to_value()
    )]
    NoBody { status: u16, id: RequestId },
    /// A 2xx whose body is empty or only whitespace.
    #[error("HTTP {status} with an empty body in reply to request {}", .id.to_value())]
    EmptyBody { status: u16, id: RequestId },
    /// Neither `application/json` nor `text/event-stream`.
    #[error(
        "unexpected Content-Type {content_type} in reply to request {}; expected application/json or text/event-stream",
        .id.to_value()
    )]
    ContentType { content_type: String, id: RequestId },
    /// The JSON body does not parse.
    #[error("invalid JSON in reply to request {}: {source}", .id.to_value())]
    Json { id: RequestId, source: serde_json::Error },
    /// A 2025-03-26 batch reply without the response to the request.
    #[error("batch reply lacks the response to request {}", .id.to_value())]
    BatchWithoutResponse { id: RequestId },
    /// A response to some other id (`1` and `"1"` differ).
    #[error("response id {} does not match request id {}", .got.to_value(), .id.to_value())]
    WrongId { got: RequestId, id: RequestId },
    /// An error response with `id: null`.
    #[error("error response with a null id in reply to request {}: {code} {message}", .id.to_value())]
    NullId { id: RequestId, code: i64, message: String },
    /// A request or notification where the response belongs.
    #[error("expected the response to request {}, got a request or notification", .id.to_value())]
    NotAResponse { id: RequestId },
    /// Not JSON-RPC at all.
    #[error("invalid JSON-RPC response: {0}")]
    Invalid(Malformed),
}

impl From<ReplyError> for TransportError {
    fn from(e: ReplyError) -> Self {
        TransportError::Protocol(e.to_string())
    }
}

impl Inner {
    /// One request's whole life after the caller registered it: POST, then the JSON body or
    /// the SSE stream (with resumptions). Every failure settles the request through the
    /// correlator; the caller's wait owns the timeout.
    pub(super) async fn deliver(self: &Arc<Self>, id: RequestId, body: Bytes, is_init: bool) {
        let correlator = &self.core.correlator;
        match self.post_request(&id, &body, is_init).await {
            Ok(None) => {}
            Ok(Some(stream)) => match self.run_stream(stream, Some(&id)).await {
                StreamEnd::Shutdown | StreamEnd::Settled => {}
                StreamEnd::Ended | StreamEnd::NoBody => {
                    correlator.fail(&id, TransportError::NoResponse { id: id.clone() })
                }
                StreamEnd::Failed(e) => correlator.fail(&id, e),
            },
            Err(e) => correlator.fail(&id, e),
        }
    }

    /// POSTs a request. `Ok(None)`: a JSON reply settled it; `Ok(Some)`: an SSE stream.
    async fn post_request(
        self: &Arc<Self>,
        id: &RequestId,
        body: &Bytes,
        is_init: bool,
    ) -> Result<Option<Response>, TransportError> {
        let (resp, session) = self.send(Outbound::Post(body)).await?;
        let status = resp.status();
        if !status.is_success() {
            if self.is_stateless() && mime(&resp).as_deref() == Some("application/json") {
                return self.modern_error(id, resp).await.map(|()| None);
            }
            return Err(status_error(resp, session.as_deref()).await);
        }
        if is_init {
            self.capture_session(&resp);
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Err(ReplyError::NoBody { status: status.as_u16(), id: id.clone() }.into());
        }
        if resp.content_length() == Some(0) {
            return Err(ReplyError::EmptyBody { status: status.as_u16(), id: id.clone() }.into());
        }
        match mime(&resp).as_deref() {
            Some(EVENT_STREAM) => Ok(Some(resp)),
            Some("application/json") => {
                self.json_reply(id, status, resp).await?;
                Ok(None)
            }
            other => {
                let content_type = other.unwrap_or("(none)").to_owned();
                Err(ReplyError::ContentType { content_type, id: id.clone() }.into())
            }
        }
    }

    /// 2026-07-28: a non-2xx JSON body that is the request's recognized modern JSON-RPC
    /// error (400 + -32020 / -32021 / -32022 / -32602, 404 + -32601) settles the request with
    /// that error, `data` kept; any other body is the usual `HTTP <status>: <body>`, which
    /// on a first request identifies a legacy server.
    async fn modern_error(self: &Arc<Self>, id: &RequestId, resp: Response) -> Result<(), TransportError> {
        let status = resp.status().as_u16();
        let hint = |name: &str| resp.headers().get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let (www_authenticate, mcp_auth_server) = (hint("www-authenticate"), hint("mcp-auth-server"));
        let bytes = read_capped(resp, http_common::ERROR_BODY_LIMIT).await.unwrap_or_default();
        if let Ok(value) = serde_json::from_slice::<Value>(&bytes)
            && matches!(Inbound::classify(&value), Inbound::ErrorResponse { id: Some(got), error }
                if &got == id && crate::stateless::is_modern_error(error.code, Some(status)))
        {
            self.core.correlator.route(value);
            return Ok(());
        }
        let body = String::from_utf8_lossy(&bytes).into_owned();
        Err(TransportError::Http { status, body, www_authenticate, mcp_auth_server, accepted: false })
    }

    /// Validates and routes a one-object JSON reply: jsonrpc, matching id, result xor error.
    async fn json_reply(
        self: &Arc<Self>,
        id: &RequestId,
        status: StatusCode,
        resp: Response,
    ) -> Result<(), TransportError> {
        let bytes = match read_capped(resp, self.core.max_bytes).await {
            Ok(b) => b,
            Err(BodyError::TooLarge) => {
                self.core.correlator.oversize(self.core.max_bytes);
                return Err(TransportError::MessageTooLarge { limit: self.core.max_bytes });
            }
            // The status arrived, so the server accepted the request; the body was lost.
            Err(BodyError::Failed(why)) => {
                tracing::debug!(%why, "JSON reply body failed");
                return Err(TransportError::NoResponse { id: id.clone() });
            }
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ReplyError::EmptyBody { status: status.as_u16(), id: id.clone() }.into());
        }
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|source| ReplyError::Json { id: id.clone(), source })?;
        if let Value::Array(items) = &value
            && self.revision() == BATCH_REVISION
        {
            for item in items {
                http_common::route(self, item.clone());
            }
            return if self.core.correlator.is_pending(id) {
                Err(ReplyError::BatchWithoutResponse { id: id.clone() }.into())
            } else {
                Ok(())
            };
        }
        check_response(&value, id)?;
        self.core.correlator.route(value);
        Ok(())
    }
}

/// Checks that a one-object JSON reply is the response to `id` (result xor error).
fn check_response(value: &Value, id: &RequestId) -> Result<(), ReplyError> {
    match Inbound::classify(value) {
        Inbound::Response { id: got, .. } | Inbound::ErrorResponse { id: Some(got), .. } if &got == id => Ok(()),
        Inbound::Response { id: got, .. } | Inbound::ErrorResponse { id: Some(got), .. } => {
            Err(ReplyError::WrongId { got, id: id.clone() })
        }
        Inbound::ErrorResponse { id: None, error } => {
            Err(ReplyError::NullId { id: id.clone(), code: error.code, message: error.message })
        }
        Inbound::Request { .. } | Inbound::Notification { .. } => Err(ReplyError::NotAResponse { id: id.clone() }),
        Inbound::Invalid(why) => Err(ReplyError::Invalid(why)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The typed reply errors keep the exact texts the harness's scenarios assert.
    #[test]
    fn reply_errors_keep_their_text() {
        let text =
            |v: Value, id: RequestId| TransportError::from(check_response(&v, &id).expect_err("bad")).to_string();
        let n = RequestId::Number;
        assert_eq!(
            text(json!({"jsonrpc": "2.0", "id": "2", "result": {}}), n(2)),
            "Protocol error: response id \"2\" does not match request id 2"
        );
        assert_eq!(
            text(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -1, "message": "m"}}), n(3)),
            "Protocol error: error response with a null id in reply to request 3: -1 m"
        );
        assert_eq!(
            text(json!({"jsonrpc": "2.0", "method": "ping", "id": 4}), n(4)),
            "Protocol error: expected the response to request 4, got a request or notification"
        );
        assert_eq!(
            text(json!({"jsonrpc": "2.0", "id": 5, "result": {}, "error": {}}), RequestId::String("5".into())),
            "Protocol error: invalid JSON-RPC response: response has both result and error"
        );
        assert!(check_response(&json!({"jsonrpc": "2.0", "id": 6, "result": 1}), &n(6)).is_ok());
        let cases = [
            (
                ReplyError::NoBody { status: 202, id: n(7) },
                "HTTP 202 with no body in reply to request 7; expected application/json or text/event-stream",
            ),
            (ReplyError::EmptyBody { status: 200, id: n(8) }, "HTTP 200 with an empty body in reply to request 8"),
            (
                ReplyError::ContentType { content_type: "(none)".into(), id: RequestId::String("9".into()) },
                "unexpected Content-Type (none) in reply to request \"9\"; expected application/json or text/event-stream",
            ),
            (ReplyError::BatchWithoutResponse { id: n(10) }, "batch reply lacks the response to request 10"),
        ];
        for (err, want) in cases {
            assert_eq!(TransportError::from(err).to_string(), format!("Protocol error: {want}"));
        }
        let json_err = serde_json::from_str::<Value>("{nope").expect_err("invalid");
        let err = TransportError::from(ReplyError::Json { id: n(11), source: json_err });
        assert_eq!(
            err.to_string(),
            "Protocol error: invalid JSON in reply to request 11: key must be a string at line 1 column 2"
        );
    }
}
