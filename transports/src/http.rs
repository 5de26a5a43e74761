//! Streamable HTTP, stateful revisions 2025-03-26 / 2025-06-18 / 2025-11-25 (SPEC §4).
//!
//! Every message is one POST. A request's reply is either one `application/json` body or
//! an SSE stream that may carry notifications and server-to-client requests before the
//! response; the stream is read by a background task per request, which settles the
//! request through the shared [`Correlator`] and keeps draining after the match. An
//! optional GET stream (started by [`Transport::on_initialized`]) carries unsolicited
//! server messages. Streams that break after an event with an `id` are resumed with
//! GET + `Last-Event-ID`; an accepted POST is never re-sent.
//!
//! The HTTP plumbing shared with the legacy transport (client, auth, status errors,
//! capped body reads, the request/notification/cancellation flows) is in `http_common`.
//!
//! 2026-07-28 (stateless) is not implemented yet: [`HttpTransport::connect`] refuses it.

use crate::config::TransportConfig;
use crate::error::TransportError;
use crate::http_common::{
    self, BodyError, ConfigError, HttpCore, HttpKind, StreamStop, event_message, mime, next_chunk, parse_url,
    read_capped, send_with_auth, status_error, with_timeout,
};
use crate::message::{Inbound, RequestId};
use crate::pending::lock;
use crate::sse::{SseEvent, SseItem, SseParser};
use crate::transport::{Diagnostics, Handlers, RequestOptions, Transport};
use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Response, StatusCode};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::DropGuard;
use url::Url;

pub use crate::http_common::{AuthRefresh, ERROR_BODY_LIMIT};

/// Reconnection delay when the server sent no `retry` (WHATWG's usual default).
const DEFAULT_RETRY_MS: u64 = 1000;
/// Floor on any reconnection delay, so a `retry: 0` server cannot make us spin.
const MIN_RETRY_MS: u64 = 10;
/// Consecutive resumption attempts without progress before a stream is given up.
pub const MAX_RESUME_ATTEMPTS: u32 = 3;
/// The first revision that sends `MCP-Protocol-Version` (dates compare as strings).
const PROTOCOL_HEADER_SINCE: &str = "2025-06-18";
/// The only revision that still allowed JSON-RPC batches.
const BATCH_REVISION: &str = "2025-03-26";
/// The stateless revision this transport does not speak yet.
const STATELESS_REVISION: &str = "2026-07-28";

const SESSION_HEADER: &str = "mcp-session-id";
const PROTOCOL_HEADER: &str = "mcp-protocol-version";
const EVENT_STREAM: &str = "text/event-stream";

/// The Streamable HTTP transport. Cheap to share; see the module docs.
pub struct HttpTransport {
    inner: Arc<Inner>,
    /// Background tasks hold the inner state; dropping the transport must stop them.
    _stop_on_drop: DropGuard,
}

struct Inner {
    core: HttpCore,
    url: Url,
    configured_revision: String,
    session_id: Mutex<Option<String>>,
    negotiated: Mutex<Option<String>>,
    listener_started: AtomicBool,
}

/// What one HTTP exchange sends.
#[derive(Clone, Copy)]
enum Outbound<'a> {
    /// A JSON-RPC message.
    Post(&'a Bytes),
    /// The GET listener, or a resumption with `Last-Event-ID`.
    Get(Option<&'a str>),
    /// Session termination.
    Delete,
}

/// How a reply stream (or the GET stream) ended, resumptions included.
enum StreamEnd {
    /// The transport is shutting down.
    Shutdown,
    /// The watched request was settled (the stream was drained afterwards).
    Settled,
    /// The stream ended and could not be resumed.
    Ended,
    /// Resumption failed with an error worth returning (e.g. the session expired).
    Failed(TransportError),
    /// The GET listener's first response ended without a single byte: "no body".
    NoBody,
}

/// What reading one SSE response saw.
struct ReadOutcome {
    /// An event was dispatched or the event id advanced (resets the resumption budget).
    progressed: bool,
    /// Any body byte arrived at all.
    any_bytes: bool,
}

/// Where a stream's resumption stands.
struct Cursor {
    last_id: Option<String>,
    retry_ms: u64,
}

impl HttpTransport {
    /// Prepares a transport for `config.url`. No network traffic happens until the first
    /// request (Streamable HTTP has no connect step); the URL, headers and revision are
    /// validated here so a bad configuration fails early.
    pub async fn connect(config: &TransportConfig, handlers: Handlers) -> Result<Arc<HttpTransport>, TransportError> {
        Self::connect_with_auth(config, handlers, None).await
    }

    /// Like [`Self::connect`], with a hook asked for fresh headers after a 401/403.
    pub async fn connect_with_auth(
        config: &TransportConfig,
        handlers: Handlers,
        auth_refresh: Option<AuthRefresh>,
    ) -> Result<Arc<HttpTransport>, TransportError> {
        if config.protocol_version == STATELESS_REVISION {
            return Err(ConfigError::UnsupportedRevision(STATELESS_REVISION).into());
        }
        let url = parse_url(&config.url)?;
        let inner = Inner {
            core: HttpCore::new(&url, config, handlers, auth_refresh, true)?,
            url,
            configured_revision: config.protocol_version.clone(),
            session_id: Mutex::new(None),
            negotiated: Mutex::new(None),
            listener_started: AtomicBool::new(false),
        };
        let stop = inner.core.shutdown.clone().drop_guard();
        Ok(Arc::new(HttpTransport { inner: Arc::new(inner), _stop_on_drop: stop }))
    }

    /// The session id the server assigned at initialize, if any.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.inner.session_id).clone()
    }
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Only the origin: paths and queries may carry credentials.
        f.debug_struct("HttpTransport")
            .field("origin", &self.inner.url.origin().ascii_serialization())
            .field("connected", &self.inner.core.is_connected())
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl Transport for HttpTransport {
    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, TransportError> {
        http_common::request(&self.inner, method, params, options).await
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), TransportError> {
        http_common::notify(&*self.inner, method, params).await
    }

    async fn close(&self) {
        self.inner.shut(TransportError::Closed { reason: None }).await;
    }

    fn is_connected(&self) -> bool {
        self.inner.core.is_connected()
    }

    fn diagnostics(&self) -> Diagnostics {
        self.inner.core.correlator.diagnostics()
    }

    fn set_protocol_version(&self, version: &str) {
        *lock(&self.inner.negotiated) = Some(version.to_owned());
    }

    async fn on_initialized(&self) {
        if self.inner.core.is_connected() && !self.inner.listener_started.swap(true, Ordering::SeqCst) {
            self.inner.start_listener().await;
        }
    }
}

impl HttpKind for Inner {
    fn core(&self) -> &HttpCore {
        &self.core
    }

    fn exchange(self: Arc<Self>, id: RequestId, body: Bytes, is_init: bool) -> BoxFuture<'static, ()> {
        Box::pin(async move { self.deliver(id, body, is_init).await })
    }

    /// POSTs a notification or a response to a server request; any 2xx is success.
    fn post_message<'a>(&'a self, body: &'a Bytes) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(async move {
            let (resp, session) = self.send(Outbound::Post(body)).await?;
            if resp.status().is_success() { Ok(()) } else { Err(status_error(resp, session.as_deref()).await) }
        })
    }
}

impl Inner {
    fn session(&self) -> Option<String> {
        lock(&self.session_id).clone()
    }

    /// Closes the transport (see [`HttpCore::shut`]) and, the first time, ends the session.
    async fn shut(&self, err: TransportError) {
        if self.core.shut(err) {
            self.delete_session().await;
        }
    }

    /// The headers for one exchange: configured (and refreshed auth) headers first, then
    /// the generated protocol headers, which replace same-named ones (names are
    /// case-insensitive in [`HeaderMap`]). The protocol headers belong to the transport
    /// even when it sends none (no `MCP-Protocol-Version` before negotiation or on
    /// 2025-03-26, no session id before one is issued), so configured values of those
    /// names are dropped rather than sent in their place.
    fn headers(&self, configured: HeaderMap, out: Outbound<'_>, session: Option<&str>) -> HeaderMap {
        let mut h = configured;
        for owned in [PROTOCOL_HEADER, SESSION_HEADER, "last-event-id"] {
            h.remove(owned);
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
    async fn send(&self, out: Outbound<'_>) -> Result<(Response, Option<String>), TransportError> {
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

    /// One request's whole life after the caller registered it: POST, then the JSON body or
    /// the SSE stream (with resumptions). Every failure settles the request through the
    /// correlator; the caller's wait owns the timeout.
    async fn deliver(self: &Arc<Self>, id: RequestId, body: Bytes, is_init: bool) {
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

    fn capture_session(&self, resp: &Response) {
        let Some(raw) = resp.headers().get(SESSION_HEADER) else { return };
        let visible = !raw.is_empty() && raw.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b));
        match raw.to_str() {
            Ok(s) if visible => *lock(&self.session_id) = Some(s.to_owned()),
            _ => self.core.correlator.violation("ignoring an Mcp-Session-Id that is not visible ASCII".into()),
        }
    }

    /// The revision in force: negotiated if known, else configured.
    fn revision(&self) -> String {
        lock(&self.negotiated).clone().unwrap_or_else(|| self.configured_revision.clone())
    }

    fn dispatch_event(self: &Arc<Self>, event: SseEvent) {
        if let Some(value) = event_message(&self.core.correlator, event) {
            match value {
                Value::Array(items) if self.revision() == BATCH_REVISION => {
                    items.into_iter().for_each(|v| http_common::route(self, v))
                }
                other => http_common::route(self, other),
            }
        }
    }

    /// Reads one SSE response to its end, dispatching its events.
    async fn read_events(self: &Arc<Self>, mut resp: Response, cursor: &mut Cursor) -> ReadOutcome {
        let mut parser = SseParser::new(self.core.max_bytes);
        let mut progressed = false;
        let mut any_bytes = false;
        loop {
            let bytes = match next_chunk(&mut resp, &self.core.shutdown).await {
                Ok(bytes) => bytes,
                Err(StreamStop::Shutdown | StreamStop::Ended) => break,
            };
            any_bytes |= !bytes.is_empty();
            for item in parser.feed(&bytes) {
                match item {
                    SseItem::Oversize { limit } => self.core.correlator.oversize(limit),
                    SseItem::Event(ev) => {
                        progressed = true;
                        self.dispatch_event(ev);
                    }
                }
            }
            if let Some(last) = parser.last_event_id()
                && cursor.last_id.as_deref() != Some(last)
            {
                cursor.last_id = Some(last.to_owned());
                progressed = true;
            }
            if let Some(ms) = parser.retry() {
                cursor.retry_ms = ms;
            }
        }
        ReadOutcome { progressed, any_bytes }
    }

    /// Reads a stream, resuming it with GET + `Last-Event-ID` when it breaks after an event
    /// with an id, until `watch` (a request id) is settled or no resumption is possible.
    async fn run_stream(self: &Arc<Self>, first: Response, watch: Option<&RequestId>) -> StreamEnd {
        let mut cursor = Cursor { last_id: None, retry_ms: DEFAULT_RETRY_MS };
        let mut next = Some(first);
        let mut attempts = 0;
        let mut first = true;
        loop {
            if let Some(resp) = next.take() {
                let read = self.read_events(resp, &mut cursor).await;
                if read.progressed {
                    attempts = 0;
                }
                if std::mem::replace(&mut first, false) && watch.is_none() && !read.any_bytes {
                    return StreamEnd::NoBody;
                }
            }
            if self.core.shutdown.is_cancelled() {
                return StreamEnd::Shutdown;
            }
            if watch.is_some_and(|id| !self.core.correlator.is_pending(id)) {
                return StreamEnd::Settled;
            }
            // An id that cannot travel as a header cannot be resumed from.
            let Some(last_id) = cursor.last_id.clone().filter(|id| HeaderValue::from_str(id).is_ok()) else {
                return StreamEnd::Ended;
            };
            if attempts >= MAX_RESUME_ATTEMPTS {
                return StreamEnd::Ended;
            }
            attempts += 1;
            let wait = Duration::from_millis(cursor.retry_ms.max(MIN_RETRY_MS));
            tokio::select! {
                _ = self.core.shutdown.cancelled() => return StreamEnd::Shutdown,
                _ = tokio::time::sleep(wait) => {}
            }
            if watch.is_some_and(|id| !self.core.correlator.is_pending(id)) {
                return StreamEnd::Settled;
            }
            match with_timeout(self.core.timeout, self.send(Outbound::Get(Some(&last_id)))).await {
                Ok((resp, _)) if resp.status().is_success() && mime(&resp).as_deref() == Some(EVENT_STREAM) => {
                    next = Some(resp)
                }
                Ok((resp, session)) if resp.status() == StatusCode::NOT_FOUND && session.is_some() => {
                    return StreamEnd::Failed(status_error(resp, session.as_deref()).await);
                }
                Ok((resp, _)) if resp.status() == StatusCode::METHOD_NOT_ALLOWED || resp.status().is_success() => {
                    tracing::debug!(status = resp.status().as_u16(), "server cannot resume the stream");
                    return StreamEnd::Ended;
                }
                Ok((resp, _)) => tracing::debug!(status = resp.status().as_u16(), "resumption GET failed"),
                Err(e) => tracing::debug!(error = %e, "resumption GET failed"),
            }
        }
    }

    /// Starts the GET listener (SPEC §4): waits for its startup at most the startup
    /// deadline; any failure disables it silently. A 200 stream that ends before its first
    /// byte counts as "no body" (disabled silently, no close): otherwise a server that
    /// answers 200-then-close would make every reconnect close again. A stream that
    /// delivered something and then ends (after resumptions) closes the transport.
    async fn start_listener(self: &Arc<Self>) {
        let deadline = self.core.timeout.map(|t| {
            let ms = u64::try_from(t.as_millis()).unwrap_or(u64::MAX);
            Duration::from_millis((ms / 4).clamp(1, 1000))
        });
        let (started_tx, started_rx) = oneshot::channel::<()>();
        let inner = self.clone();
        tokio::spawn(async move {
            let open = inner.open_listener();
            let opened = tokio::select! {
                _ = inner.core.shutdown.cancelled() => None,
                r = async { match deadline {
                    Some(d) => tokio::time::timeout(d, open).await.unwrap_or_else(|_| {
                        tracing::debug!("GET listener disabled: startup deadline passed");
                        None
                    }),
                    None => open.await,
                } } => r,
            };
            let _ = started_tx.send(());
            let Some(resp) = opened else { return };
            match inner.run_stream(resp, None).await {
                StreamEnd::Shutdown | StreamEnd::Settled => {}
                StreamEnd::NoBody => tracing::debug!("GET listener disabled: the stream had no body"),
                StreamEnd::Ended | StreamEnd::Failed(_) => {
                    inner.shut(TransportError::Closed { reason: Some("HTTP GET stream closed".into()) }).await
                }
            }
        });
        // Without a timeout the listener has no deadline, but the handshake still must not
        // hang on an optional stream: stop waiting after the formula's maximum.
        let wait = deadline.unwrap_or(Duration::from_millis(1000));
        let _ = tokio::time::timeout(wait + Duration::from_millis(5), started_rx).await;
    }

    /// Opens the GET stream; `None` (with a debug log) when the server does not offer one.
    async fn open_listener(&self) -> Option<Response> {
        match self.send(Outbound::Get(None)).await {
            Ok((resp, _)) => {
                let status = resp.status();
                let sse = mime(&resp).as_deref() == Some(EVENT_STREAM);
                if status.is_success() && sse && resp.content_length() != Some(0) && status != StatusCode::NO_CONTENT {
                    Some(resp)
                } else {
                    tracing::debug!(status = status.as_u16(), sse, "GET listener disabled");
                    None
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "GET listener disabled");
                None
            }
        }
    }

    /// DELETEs the session, bounded in time; failure is ignored (SPEC §4).
    async fn delete_session(&self) {
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

fn empty_body(status: StatusCode, id: &RequestId) -> TransportError {
    TransportError::Protocol(format!(
        "HTTP {} with an empty body in reply to request {}",
        status.as_u16(),
        id.to_value()
    ))
}
