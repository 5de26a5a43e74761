//! A request's POST and what answers it (SPEC §4 "Responses"): a JSON body validated and
//! routed here, or an SSE stream handed to `stream`; 202/204 and empty bodies are
//! protocol errors.

use super::session::Outbound;
use super::stream::StreamEnd;
use super::{BATCH_REVISION, EVENT_STREAM, Inner};
use crate::error::TransportError;
use crate::http_common::{self, BodyError, mime, read_capped, status_error};
use crate::message::{Inbound, RequestId};
use bytes::Bytes;
use reqwest::{Response, StatusCode};
use serde_json::Value;
use std::sync::Arc;

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
            return Err(status_error(resp, session.as_deref()).await);
        }
        if is_init {
            self.capture_session(&resp);
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Err(TransportError::Protocol(format!(
                "HTTP {} with no body in reply to request {}; expected application/json or text/event-stream",
                status.as_u16(),
                id.to_value()
            )));
        }
        if resp.content_length() == Some(0) {
            return Err(empty_body(status, id));
        }
        match mime(&resp).as_deref() {
            Some(EVENT_STREAM) => Ok(Some(resp)),
            Some("application/json") => {
                self.json_reply(id, status, resp).await?;
                Ok(None)
            }
            other => Err(TransportError::Protocol(format!(
                "unexpected Content-Type {} in reply to request {}; expected application/json or text/event-stream",
                other.unwrap_or("(none)"),
                id.to_value()
            ))),
        }
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
            return Err(empty_body(status, id));
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            TransportError::Protocol(format!("invalid JSON in reply to request {}: {e}", id.to_value()))
        })?;
        if let Value::Array(items) = &value
            && self.revision() == BATCH_REVISION
        {
            for item in items {
                http_common::route(self, item.clone());
            }
            return if self.core.correlator.is_pending(id) {
                Err(TransportError::Protocol(format!("batch reply lacks the response to request {}", id.to_value())))
            } else {
                Ok(())
            };
        }
        match Inbound::classify(&value) {
            Inbound::Response { id: rid, .. } | Inbound::ErrorResponse { id: Some(rid), .. } if &rid == id => {
                self.core.correlator.route(&value);
                Ok(())
            }
            Inbound::Response { id: rid, .. } | Inbound::ErrorResponse { id: Some(rid), .. } => {
                Err(TransportError::Protocol(format!(
                    "response id {} does not match request id {}",
                    rid.to_value(),
                    id.to_value()
                )))
            }
            Inbound::ErrorResponse { id: None, error } => Err(TransportError::Protocol(format!(
                "error response with a null id in reply to request {}: {} {}",
                id.to_value(),
                error.code,
                error.message
            ))),
            Inbound::Request { .. } | Inbound::Notification { .. } => Err(TransportError::Protocol(format!(
                "expected the response to request {}, got a request or notification",
                id.to_value()
            ))),
            Inbound::Invalid(why) => Err(TransportError::Protocol(format!("invalid JSON-RPC response: {why}"))),
        }
    }
}

fn empty_body(status: StatusCode, id: &RequestId) -> TransportError {
    TransportError::Protocol(format!(
        "HTTP {} with an empty body in reply to request {}",
        status.as_u16(),
        id.to_value()
    ))
}
