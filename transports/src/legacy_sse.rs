//! The 2024-11-05 HTTP+SSE transport (SPEC §5).
//!
//! One long-lived GET stream carries everything from the server; its first `endpoint`
//! event names the URL that every client message is POSTed to. Unlike Streamable HTTP the
//! POST's reply body means nothing (any 2xx is success): responses come back on the
//! stream, so the stream's end is the transport's end.

use crate::config::TransportConfig;
use crate::error::TransportError;
use crate::http::{
    AuthHeaders, AuthRefresh, CLEANUP_BOUND, Exchanges, await_exchange, build_client, event_message, mime, parse_url,
    send_with_auth, status_error, with_timeout,
};
use crate::message::{self, RequestId};
use crate::pending::{Correlator, Routed};
use crate::sse::{SseItem, SseParser};
use crate::transport::{Diagnostics, Handlers, RequestOptions, Transport};
use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::Response;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use url::Url;

/// The reason pending requests fail with when the server ends the stream (SPEC §5).
const STREAM_CLOSED: &str = "legacy SSE stream closed";

/// The legacy HTTP+SSE transport. Cheap to share; see the module docs.
pub struct LegacySseTransport {
    inner: Arc<Inner>,
}

struct Inner {
    client: reqwest::Client,
    auth: AuthHeaders,
    correlator: Correlator,
    timeout: Option<Duration>,
    max_bytes: usize,
    /// The POST URL from the first `endpoint` event.
    endpoint: OnceLock<Url>,
    connected: AtomicBool,
    /// Cancelled on close: stops the stream reader and in-flight answers.
    shutdown: CancellationToken,
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
        let inner = Arc::new(Inner {
            client: build_client(&url)?,
            auth: AuthHeaders::new(&config.headers, auth_refresh)?,
            correlator: Correlator::new(handlers, config.string_ids),
            timeout: config.timeout(),
            max_bytes: config.max_message_bytes(),
            endpoint: OnceLock::new(),
            connected: AtomicBool::new(false),
            shutdown: CancellationToken::new(),
        });
        let transport = Arc::new(LegacySseTransport { inner: inner.clone() });
        // One budget covers the GET and the endpoint event.
        let handshake = async {
            let resp = inner.open(&url).await?;
            let (tx, rx) = oneshot::channel();
            tokio::spawn(inner.clone().read_stream(resp, url.clone(), tx));
            // A dropped sender means the stream ended before any endpoint.
            rx.await.unwrap_or(Err(TransportError::LegacyEndpointNotReceived))
        };
        let outcome = match inner.timeout {
            Some(t) => {
                tokio::time::timeout(t, handshake).await.unwrap_or(Err(TransportError::LegacyEndpointNotReceived))
            }
            None => handshake.await,
        };
        match outcome {
            Ok(()) => Ok(transport),
            Err(e) => {
                // Never connected: stop the reader without firing the close handler.
                inner.shutdown.cancel();
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
            .field("connected", &self.inner.is_connected())
            .finish_non_exhaustive()
    }
}

impl Drop for LegacySseTransport {
    fn drop(&mut self) {
        // The reader task holds the inner state; without this it would outlive the owner.
        self.inner.shutdown.cancel();
    }
}

#[async_trait::async_trait]
impl Transport for LegacySseTransport {
    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, TransportError> {
        let inner = &self.inner;
        if !inner.is_connected() {
            return Err(TransportError::NotConnected);
        }
        let (id, rx) = inner.correlator.open_request()?;
        let body = Bytes::from(message::request(&id, method, params).to_string());
        let is_init = method == "initialize";
        let task = {
            let (inner, id) = (inner.clone(), id.clone());
            tokio::spawn(async move {
                tokio::select! {
                    _ = inner.shutdown.cancelled() => {}
                    r = inner.post(&body) => if let Err(e) = r {
                        inner.correlator.fail(&id, e);
                    }
                }
            })
        };
        await_exchange(inner, id, rx, task.abort_handle(), is_init, &options).await
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), TransportError> {
        let inner = &self.inner;
        if !inner.is_connected() {
            return Err(TransportError::NotConnected);
        }
        let body = Bytes::from(message::notification(method, params).to_string());
        tokio::select! {
            _ = inner.shutdown.cancelled() => Err(TransportError::Closed { reason: None }),
            r = with_timeout(inner.timeout, inner.post(&body)) => r,
        }
    }

    async fn close(&self) {
        self.inner.shut(TransportError::Closed { reason: None });
    }

    fn is_connected(&self) -> bool {
        self.inner.is_connected()
    }

    fn diagnostics(&self) -> Diagnostics {
        self.inner.correlator.diagnostics()
    }
}

impl Exchanges for Inner {
    fn correlator(&self) -> &Correlator {
        &self.correlator
    }
    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
    fn cancel_on_server<'a>(&'a self, id: &'a RequestId, reason: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(self.send_cancelled(id, reason))
    }
}

impl Inner {
    fn is_connected(&self) -> bool {
        self.connected.load(Ordering::SeqCst) && !self.correlator.is_closed()
    }

    /// Disconnects: pending requests fail with `err`, the close handler fires once, the
    /// stream is dropped. Returns false when already closed.
    fn shut(&self, err: TransportError) -> bool {
        self.shutdown.cancel();
        if !self.connected.swap(false, Ordering::SeqCst) {
            return false;
        }
        self.correlator.close(err)
    }

    /// GETs the stream; anything but a 2xx `text/event-stream` fails the connect.
    async fn open(&self, url: &Url) -> Result<Response, TransportError> {
        let resp = send_with_auth(&self.auth, |mut h| {
            h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            self.client.get(url.clone()).headers(h)
        })
        .await?;
        if !resp.status().is_success() {
            return Err(status_error(resp, None).await);
        }
        match mime(&resp).as_deref() {
            Some("text/event-stream") => Ok(resp),
            other => Err(TransportError::Protocol(format!(
                "legacy SSE GET answered with Content-Type {}; expected text/event-stream",
                other.unwrap_or("(none)")
            ))),
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
        let mut parser = SseParser::new(self.max_bytes);
        loop {
            let chunk = tokio::select! {
                _ = self.shutdown.cancelled() => return,
                c = resp.chunk() => c,
            };
            let bytes = match chunk {
                Ok(Some(b)) => b,
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(error = %e.without_url(), "legacy SSE stream broke");
                    break;
                }
            };
            for item in parser.feed(&bytes) {
                let event = match item {
                    SseItem::Oversize { limit } => {
                        self.correlator.oversize(limit);
                        continue;
                    }
                    SseItem::Event(event) => event,
                };
                if event.event.as_deref() != Some("endpoint") {
                    if let Some(value) = event_message(&self.correlator, event) {
                        self.route(value);
                    }
                    continue;
                }
                let Some(tx) = endpoint_tx.take() else {
                    self.correlator.violation(format!("ignoring a later endpoint event: {}", event.data.trim()));
                    continue;
                };
                match resolve_endpoint(&base, &event.data) {
                    Ok(url) => {
                        let _ = self.endpoint.set(url);
                        self.connected.store(true, Ordering::SeqCst);
                        let _ = tx.send(Ok(()));
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        }
        // Before the endpoint, dropping the sender fails the connect instead.
        if endpoint_tx.is_none() {
            self.shut(TransportError::Closed { reason: Some(STREAM_CLOSED.into()) });
        }
    }

    /// Routes one inbound message; server requests are answered by POST in the background.
    fn route(self: &Arc<Self>, value: Value) {
        if let Routed::ServerRequest { id, method, params } = self.correlator.route(&value) {
            let inner = self.clone();
            tokio::spawn(async move {
                let answer = inner.correlator.answer(&id, method, params).await;
                let body = Bytes::from(answer.to_string());
                tokio::select! {
                    _ = inner.shutdown.cancelled() => {}
                    r = with_timeout(inner.timeout, inner.post(&body)) => if let Err(e) = r {
                        inner.correlator.report(&e);
                    }
                }
            });
        }
    }

    /// POSTs one message to the endpoint; any 2xx is success and the body is ignored.
    async fn post(&self, body: &Bytes) -> Result<(), TransportError> {
        let Some(endpoint) = self.endpoint.get() else { return Err(TransportError::NotConnected) };
        let resp = send_with_auth(&self.auth, |mut h| {
            h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            self.client.post(endpoint.clone()).headers(h).body(body.clone())
        })
        .await?;
        if resp.status().is_success() { Ok(()) } else { Err(status_error(resp, None).await) }
    }

    /// Tells the server we gave up on `id`, bounded in time; failure is reported.
    /// Nothing is sent once the transport has closed.
    async fn send_cancelled(&self, id: &RequestId, reason: &str) {
        if !self.is_connected() {
            return;
        }
        let note = message::notification(
            "notifications/cancelled",
            Some(json!({"requestId": id.to_value(), "reason": reason})),
        );
        let body = Bytes::from(note.to_string());
        let bound = self.timeout.map_or(CLEANUP_BOUND, |t| t.min(CLEANUP_BOUND));
        match tokio::time::timeout(bound, self.post(&body)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => self.correlator.report(&e),
            Err(_) => tracing::debug!("notifications/cancelled POST timed out"),
        }
    }
}

/// Resolves the `endpoint` event's data against the configured URL and refuses another
/// origin: the POSTs carry the configured headers, which must not leak.
fn resolve_endpoint(base: &Url, data: &str) -> Result<Url, TransportError> {
    let url = base
        .join(data.trim())
        .map_err(|e| TransportError::Protocol(format!("invalid legacy SSE endpoint {:?}: {e}", data.trim())))?;
    if url.origin() != base.origin() {
        return Err(TransportError::LegacyEndpointOriginMismatch(url.to_string()));
    }
    Ok(url)
}
