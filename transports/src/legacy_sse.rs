//! The 2024-11-05 HTTP+SSE transport (SPEC §5).
//!
//! One long-lived GET stream carries everything from the server; its first `endpoint`
//! event names the URL that every client message is POSTed to. Unlike Streamable HTTP the
//! POST's reply body means nothing (any 2xx is success): responses come back on the
//! stream, so the stream's end is the transport's end. The HTTP plumbing (client, auth,
//! status errors, the request and cancellation flows, the `Transport` impl) is shared with
//! Streamable HTTP.

use crate::config::TransportConfig;
use crate::error::TransportError;
use crate::http_common::{
    self, AuthRefresh, HttpCore, HttpFront, HttpKind, StreamStop, event_message, mime, next_chunk, parse_url,
    send_with_auth, status_error,
};
use crate::message::RequestId;
use crate::sse::{SseItem, SseParser};
use crate::transport::Handlers;
use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::Response;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use std::sync::{Arc, OnceLock};
use tokio::sync::oneshot;
use tokio_util::sync::DropGuard;
use url::Url;

/// The reason pending requests fail with when the server ends the stream (SPEC §5).
const STREAM_CLOSED: &str = "legacy SSE stream closed";

/// The legacy HTTP+SSE transport. Cheap to share; see the module docs. It implements
/// [`Transport`](crate::Transport) as Streamable HTTP does (`http_common`).
pub struct LegacySseTransport {
    inner: Arc<Inner>,
    /// The reader task holds the inner state; dropping the transport must stop it.
    _stop_on_drop: DropGuard,
}

pub(crate) struct Inner {
    core: HttpCore,
    /// The POST URL from the first `endpoint` event.
    endpoint: OnceLock<Url>,
}

impl HttpFront for LegacySseTransport {
    type Kind = Inner;

    fn kind(&self) -> &Arc<Inner> {
        &self.inner
    }
}

/// What can go wrong while the connect step reads the stream's start.
#[derive(Debug, thiserror::Error)]
enum HandshakeError {
    /// The GET was answered with something other than an event stream.
    #[error("legacy SSE GET answered with Content-Type {0}; expected text/event-stream")]
    NotEventStream(String),
    /// The `endpoint` event's data is not a URL reference.
    #[error("invalid legacy SSE endpoint {data:?}: {source}")]
    InvalidEndpoint { data: String, source: url::ParseError },
    /// The endpoint is on another origin, where the configured headers must not go.
    #[error("{0}")]
    ForeignEndpoint(Url),
}

impl From<HandshakeError> for TransportError {
    fn from(e: HandshakeError) -> Self {
        match e {
            HandshakeError::ForeignEndpoint(url) => TransportError::LegacyEndpointOriginMismatch(url.to_string()),
            other => TransportError::Protocol(other.to_string()),
        }
    }
}

impl LegacySseTransport {
    /// Opens the GET stream and waits (within the timeout) for the `endpoint` event.
    pub async fn connect(
        config: &TransportConfig,
        handlers: Handlers,
    ) -> Result<Arc<LegacySseTransport>, TransportError> {
        Self::connect_with_auth(config, handlers, None).await
    }

    /// Like [`Self::connect`], with a hook asked for fresh headers after a 401/403 (on the
    /// GET and on every POST), as for Streamable HTTP.
    pub async fn connect_with_auth(
        config: &TransportConfig,
        handlers: Handlers,
        auth_refresh: Option<AuthRefresh>,
    ) -> Result<Arc<LegacySseTransport>, TransportError> {
        let url = parse_url(&config.url)?;
        let core = HttpCore::new(&url, config, handlers, auth_refresh, false)?;
        let inner = Arc::new(Inner { core, endpoint: OnceLock::new() });
        let transport = Arc::new(LegacySseTransport {
            inner: inner.clone(),
            _stop_on_drop: inner.core.shutdown.clone().drop_guard(),
        });
        // One budget covers the GET and the endpoint event.
        let handshake = async {
            let resp = inner.open(&url).await?;
            let (tx, rx) = oneshot::channel();
            tokio::spawn(inner.clone().read_stream(resp, url.clone(), tx));
            // A dropped sender means the stream ended before any endpoint.
            rx.await.unwrap_or(Err(TransportError::LegacyEndpointNotReceived))
        };
        let outcome = match inner.core.timeout {
            Some(t) => {
                tokio::time::timeout(t, handshake).await.unwrap_or(Err(TransportError::LegacyEndpointNotReceived))
            }
            None => handshake.await,
        };
        match outcome {
            Ok(()) => Ok(transport),
            Err(e) => {
                // Never connected: stop the reader without firing the close handler.
                inner.core.shutdown.cancel();
                Err(e)
            }
        }
    }

    /// The POST endpoint the server announced.
    pub fn endpoint(&self) -> Option<Url> {
        self.inner.endpoint.get().cloned()
    }
}

impl std::fmt::Debug for LegacySseTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Only the origin: the endpoint's query often carries a session id.
        f.debug_struct("LegacySseTransport")
            .field("origin", &self.inner.endpoint.get().map(|u| u.origin().ascii_serialization()))
            .field("connected", &self.inner.core.is_connected())
            .finish_non_exhaustive()
    }
}

impl HttpKind for Inner {
    fn core(&self) -> &HttpCore {
        &self.core
    }

    /// The POST only delivers the request: its response arrives on the stream.
    fn exchange(self: Arc<Self>, id: RequestId, body: Bytes, _is_init: bool) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            if let Err(e) = self.post_message(&body).await {
                self.core.correlator.fail(&id, e);
            }
        })
    }

    /// POSTs one message to the endpoint; any 2xx is success and the body is ignored.
    fn post_message<'a>(&'a self, body: &'a Bytes) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(async move {
            let Some(endpoint) = self.endpoint.get() else { return Err(TransportError::NotConnected) };
            let resp = send_with_auth(&self.core.auth, |mut h| {
                h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                self.core.client.post(endpoint.clone()).headers(h).body(body.clone())
            })
            .await?;
            if resp.status().is_success() { Ok(()) } else { Err(status_error(resp, None).await) }
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.core.shut(TransportError::Closed { reason: None });
        Box::pin(async {})
    }
}

impl Inner {
    /// GETs the stream; anything but a 2xx `text/event-stream` fails the connect.
    async fn open(&self, url: &Url) -> Result<Response, TransportError> {
        let resp = send_with_auth(&self.core.auth, |mut h| {
            h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            self.core.client.get(url.clone()).headers(h)
        })
        .await?;
        if !resp.status().is_success() {
            return Err(status_error(resp, None).await);
        }
        match mime(&resp) {
            Some(essence) if essence == "text/event-stream" => Ok(resp),
            other => Err(HandshakeError::NotEventStream(other.unwrap_or_else(|| "(none)".into())).into()),
        }
    }

    /// Reads the stream until it ends: the first `endpoint` event completes the connect
    /// through `endpoint_tx`; messages are routed; the end closes the transport.
    async fn read_stream(
        self: Arc<Self>,
        mut resp: Response,
        base: Url,
        endpoint_tx: oneshot::Sender<Result<(), TransportError>>,
    ) {
        let mut endpoint_tx = Some(endpoint_tx);
        let mut parser = SseParser::new(self.core.max_bytes);
        loop {
            let bytes = match next_chunk(&mut resp, &self.core.shutdown).await {
                Ok(bytes) => bytes,
                Err(StreamStop::Shutdown) => return,
                Err(StreamStop::Ended) => break,
            };
            for item in parser.feed(&bytes) {
                let event = match item {
                    SseItem::Oversize { limit } => {
                        self.core.correlator.oversize(limit);
                        continue;
                    }
                    SseItem::Event(event) => event,
                };
                if event.event.as_deref() != Some("endpoint") {
                    if let Some(value) = event_message(&self.core.correlator, event) {
                        http_common::route(&self, value);
                    }
                    continue;
                }
                let Some(tx) = endpoint_tx.take() else {
                    self.core.correlator.violation(format!("ignoring a later endpoint event: {}", event.data.trim()));
                    continue;
                };
                match resolve_endpoint(&base, &event.data) {
                    Ok(url) => {
                        let _ = self.endpoint.set(url);
                        self.core.mark_connected();
                        let _ = tx.send(Ok(()));
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e.into()));
                        return;
                    }
                }
            }
        }
        // Before the endpoint, dropping the sender fails the connect instead.
        if endpoint_tx.is_none() {
            self.core.shut(TransportError::Closed { reason: Some(STREAM_CLOSED.into()) });
        }
    }
}

/// Resolves the `endpoint` event's data against the configured URL and refuses another
/// origin: the POSTs carry the configured headers, which must not leak.
fn resolve_endpoint(base: &Url, data: &str) -> Result<Url, HandshakeError> {
    let data = data.trim();
    let url = base.join(data).map_err(|source| HandshakeError::InvalidEndpoint { data: data.to_owned(), source })?;
    if url.origin() != base.origin() {
        return Err(HandshakeError::ForeignEndpoint(url));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_resolves_relative_to_the_configured_url_and_origin() {
        let base = Url::parse("http://127.0.0.1:9/sse?x=1").expect("url");
        let url = resolve_endpoint(&base, " /messages?sessionId=abc\n").expect("same origin");
        assert_eq!(url.as_str(), "http://127.0.0.1:9/messages?sessionId=abc");
        let err = TransportError::from(resolve_endpoint(&base, "http://evil.example/m").expect_err("foreign"));
        assert_eq!(err.to_string(), "Legacy SSE endpoint origin mismatch: http://evil.example/m");
        let err = TransportError::from(resolve_endpoint(&base, "http://[::1").expect_err("invalid"));
        assert_eq!(
            err.to_string(),
            "Protocol error: invalid legacy SSE endpoint \"http://[::1\": invalid IPv6 address"
        );
        let err = TransportError::from(HandshakeError::NotEventStream("text/html".into()));
        assert_eq!(
            err.to_string(),
            "Protocol error: legacy SSE GET answered with Content-Type text/html; expected text/event-stream"
        );
    }
}
