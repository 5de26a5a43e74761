//! The session of a stateful revision (SPEC §4): the `Mcp-Session-Id` captured at
//! initialize, the negotiated revision, the headers that carry them on every exchange, and
//! the DELETE at close.

use super::{EVENT_STREAM, Inner, mirror};
use crate::error::TransportError;
use crate::http_common::send_with_auth;
use crate::pending::lock;
use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Response};

/// The first revision that sends `MCP-Protocol-Version` (dates compare as strings).
const PROTOCOL_HEADER_SINCE: &str = "2025-06-18";
const SESSION_HEADER: &str = "mcp-session-id";
const PROTOCOL_HEADER: &str = "mcp-protocol-version";

/// What one HTTP exchange sends.
#[derive(Clone, Copy)]
pub(super) enum Outbound<'a> {
    /// A JSON-RPC message.
    Post(&'a Bytes),
    /// The GET listener, or a resumption with `Last-Event-ID`.
    Get(Option<&'a str>),
    /// Session termination.
    Delete,
}

impl Inner {
    /// The session id the server assigned at initialize, if any.
    pub(super) fn session(&self) -> Option<String> {
        lock(&self.session_id).clone()
    }

    /// The revision in force: negotiated if known, else configured.
    pub(super) fn revision(&self) -> String {
        lock(&self.negotiated).clone().unwrap_or_else(|| self.configured_revision.clone())
    }

    /// The headers for one exchange: configured (and refreshed auth) headers first, then
    /// the generated protocol headers, which replace same-named ones (names are
    /// case-insensitive in [`HeaderMap`]). The protocol headers belong to the transport
    /// even when it sends none (no `MCP-Protocol-Version` before negotiation or on
    /// 2025-03-26, no session id before one is issued), so configured values of those
    /// names are dropped rather than sent in their place.
    fn headers(&self, configured: HeaderMap, out: Outbound<'_>, session: Option<&str>) -> HeaderMap {
        let mut h = configured;
        for owned in [PROTOCOL_HEADER, SESSION_HEADER, "last-event-id", "mcp-method", "mcp-name"] {
            h.remove(owned);
        }
        if self.is_stateless() {
            // 2026-07-28: POST only, every header mirrored from the body itself.
            h.insert(reqwest::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            h.insert(reqwest::header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
            if let Outbound::Post(body) = out
                && let Ok(value) = serde_json::from_slice::<serde_json::Value>(body)
            {
                for (name, v) in mirror::headers_for(&value, &lock(&self.tool_params)) {
                    if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(&v)) {
                        h.insert(n, v);
                    }
                }
            }
            return h;
        }
        match out {
            Outbound::Post(_) => {
                h.insert(reqwest::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                h.insert(reqwest::header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
            }
            Outbound::Get(last_id) => {
                h.insert(reqwest::header::ACCEPT, HeaderValue::from_static(EVENT_STREAM));
                if let Some(v) = last_id.and_then(|id| HeaderValue::from_str(id).ok()) {
                    h.insert(HeaderName::from_static("last-event-id"), v);
                }
            }
            Outbound::Delete => {}
        }
        if let Some(v) = session.and_then(|s| HeaderValue::from_str(s).ok()) {
            h.insert(HeaderName::from_static(SESSION_HEADER), v);
        }
        if let Some(version) = lock(&self.negotiated).as_deref()
            && version >= PROTOCOL_HEADER_SINCE
            && let Ok(v) = HeaderValue::from_str(version)
        {
            h.insert(HeaderName::from_static(PROTOCOL_HEADER), v);
        }
        h
    }

    /// Sends one exchange (with one auth refresh on 401/403). Returns the response of any
    /// status and the session id the request carried.
    pub(super) async fn send(&self, out: Outbound<'_>) -> Result<(Response, Option<String>), TransportError> {
        let session = self.session();
        let method = match out {
            Outbound::Post(_) => Method::POST,
            Outbound::Get(_) => Method::GET,
            Outbound::Delete => Method::DELETE,
        };
        let resp = send_with_auth(&self.core.auth, |configured| {
            let b = self.core.client.request(method.clone(), self.url.clone()).headers(self.headers(
                configured,
                out,
                session.as_deref(),
            ));
            match out {
                Outbound::Post(body) => b.body(body.clone()),
                _ => b,
            }
        })
        .await?;
        Ok((resp, session))
    }

    /// Keeps the initialize response's session id; one that is not visible ASCII is
    /// reported and ignored.
    pub(super) fn capture_session(&self, resp: &Response) {
        let Some(raw) = resp.headers().get(SESSION_HEADER) else { return };
        let visible = !raw.is_empty() && raw.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b));
        match raw.to_str() {
            Ok(s) if visible => *lock(&self.session_id) = Some(s.to_owned()),
            _ => self.core.correlator.violation("ignoring an Mcp-Session-Id that is not visible ASCII".into()),
        }
    }

    /// DELETEs the session, bounded in time; failure is ignored (SPEC §4).
    pub(super) async fn delete_session(&self) {
        if self.session().is_none() {
            return;
        }
        match tokio::time::timeout(self.core.cleanup_bound(), self.send(Outbound::Delete)).await {
            Ok(Ok((resp, _))) => tracing::debug!(status = resp.status().as_u16(), "session DELETE answered"),
            Ok(Err(e)) => tracing::debug!(error = %e, "session DELETE failed"),
            Err(_) => tracing::debug!("session DELETE timed out"),
        }
    }
}
