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
//! The HTTP plumbing that the legacy transport also needs (client with the same-origin
//! redirect policy, configured/auth headers, bounded body reads, error mapping) lives here
//! as `pub(crate)` items so both transports behave alike.
//!
//! 2026-07-28 (stateless) is not implemented yet: [`HttpTransport::connect`] refuses it.

use crate::config::TransportConfig;
use crate::error::TransportError;
use crate::message::{self, Inbound, RequestId};
use crate::pending::{self, Correlator, GaveUp, Routed, lock};
use crate::sse::{SseEvent, SseItem, SseParser};
use crate::transport::{Diagnostics, Handlers, RequestOptions, Transport};
use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;
use url::Url;

/// Asked once per request after an HTTP 401/403; returns headers (e.g. a fresh
/// `Authorization`) that replace same-named configured headers from then on, or `None` to
/// give up. The manager wires it to its auth source (SPEC §4 "Auth refresh").
pub type AuthRefresh = Arc<dyn Fn() -> BoxFuture<'static, Option<BTreeMap<String, String>>> + Send + Sync>;

/// How much of a non-2xx body goes into `HTTP <status>: <body>` (both HTTP transports).
pub const ERROR_BODY_LIMIT: usize = 4096;
/// Reconnection delay when the server sent no `retry` (WHATWG's usual default).
const DEFAULT_RETRY_MS: u64 = 1000;
/// Floor on any reconnection delay, so a `retry: 0` server cannot make us spin.
const MIN_RETRY_MS: u64 = 10;
/// Consecutive resumption attempts without progress before a stream is given up.
pub const MAX_RESUME_ATTEMPTS: u32 = 3;
/// Upper bound on close-time and cancellation traffic (DELETE, notifications/cancelled).
pub(crate) const CLEANUP_BOUND: Duration = Duration::from_secs(1);
/// Redirect hops followed (same origin, 307/308 only).
const MAX_REDIRECTS: usize = 5;
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
}

struct Inner {
    client: reqwest::Client,
    url: Url,
    auth: AuthHeaders,
    correlator: Correlator,
    timeout: Option<Duration>,
    max_bytes: usize,
    configured_revision: String,
    session_id: Mutex<Option<String>>,
    negotiated: Mutex<Option<String>>,
    connected: AtomicBool,
    listener_started: AtomicBool,
    /// Cancelled on close: stops the listener, reply streams, resumptions and answers.
    shutdown: CancellationToken,
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
            return Err(TransportError::Config(format!(
                "protocol revision {STATELESS_REVISION} (stateless Streamable HTTP) is not supported yet"
            )));
        }
        let url = parse_url(&config.url)?;
        let inner = Inner {
            client: build_client(&url)?,
            url,
            auth: AuthHeaders::new(&config.headers, auth_refresh)?,
            correlator: Correlator::new(handlers, config.string_ids),
            timeout: config.timeout(),
            max_bytes: config.max_message_bytes(),
            configured_revision: config.protocol_version.clone(),
            session_id: Mutex::new(None),
            negotiated: Mutex::new(None),
            connected: AtomicBool::new(true),
            listener_started: AtomicBool::new(false),
            shutdown: CancellationToken::new(),
        };
        Ok(Arc::new(HttpTransport { inner: Arc::new(inner) }))
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
            .field("connected", &self.inner.is_connected())
            .finish_non_exhaustive()
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        // Background tasks hold the inner state; without this they would outlive the owner.
        self.inner.shutdown.cancel();
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
        let inner = &self.inner;
        if !inner.is_connected() {
            return Err(TransportError::NotConnected);
        }
        let (id, rx) = inner.correlator.open_request()?;
        let body = Bytes::from(message::request(&id, method, params).to_string());
        let is_init = method == "initialize";
        let task = tokio::spawn(inner.clone().exchange(id.clone(), body, is_init));
        await_exchange(inner, id, rx, task.abort_handle(), is_init, &options).await
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), TransportError> {
        let inner = &self.inner;
        if !inner.is_connected() {
            return Err(TransportError::NotConnected);
        }
        let body = Bytes::from(message::notification(method, params).to_string());
        let post = inner.post_message(&body);
        tokio::select! {
            _ = inner.shutdown.cancelled() => Err(TransportError::Closed { reason: None }),
            r = with_timeout(inner.timeout, post) => r,
        }
    }

    async fn close(&self) {
        if self.inner.shut(TransportError::Closed { reason: None }) {
            self.inner.delete_session().await;
        }
    }

    fn is_connected(&self) -> bool {
        self.inner.is_connected()
    }

    fn diagnostics(&self) -> Diagnostics {
        self.inner.correlator.diagnostics()
    }

    fn set_protocol_version(&self, version: &str) {
        *lock(&self.inner.negotiated) = Some(version.to_owned());
    }

    async fn on_initialized(&self) {
        if self.inner.is_connected() && !self.inner.listener_started.swap(true, Ordering::SeqCst) {
            self.inner.start_listener().await;
        }
    }
}

/// What [`await_exchange`] needs from an HTTP-kind transport's shared state.
pub(crate) trait Exchanges: Send + Sync + 'static {
    /// The transport's correlator.
    fn correlator(&self) -> &Correlator;
    /// The connection's resolved timeout.
    fn timeout(&self) -> Option<Duration>;
    /// POSTs `notifications/cancelled` for `id`.
    fn cancel_on_server<'a>(&'a self, id: &'a RequestId, reason: &'a str) -> BoxFuture<'a, ()>;
}

/// Waits for a registered request whose exchange runs in `task`, under the request's one
/// timeout budget (SPEC §2). On timeout or cancellation the exchange is aborted, which
/// closes its response stream, and the server is told with `notifications/cancelled`
/// (never for `initialize`); a caller that drops the future mid-wait does the same.
/// Shared by Streamable HTTP and legacy SSE.
pub(crate) async fn await_exchange<I: Exchanges>(
    inner: &Arc<I>,
    id: RequestId,
    rx: oneshot::Receiver<Result<Value, TransportError>>,
    task: AbortHandle,
    is_init: bool,
    options: &RequestOptions,
) -> Result<Value, TransportError> {
    let mut guard = {
        let (forget_inner, forget_id) = (inner.clone(), id.clone());
        let (cancel_inner, cancel_id) = (inner.clone(), id.clone());
        let cancel: Option<BoxFuture<'static, ()>> = (!is_init).then(|| {
            Box::pin(async move { cancel_inner.cancel_on_server(&cancel_id, "request abandoned by the caller").await })
                as _
        });
        AbandonGuard::new(task.clone(), move || forget_inner.correlator().forget(&forget_id, true), cancel)
    };
    let timeout = pending::effective_timeout(inner.timeout(), options);
    let outcome = pending::wait_reply(inner.correlator(), &id, rx, timeout, options).await;
    guard.disarm();
    match outcome {
        // On success the exchange task keeps draining the reply stream.
        Ok(reply) => reply,
        Err(gave_up) => {
            // Aborting the exchange closes the request's response stream.
            task.abort();
            let err = match gave_up {
                // Conservative: the POST may have left before the clock ran out.
                GaveUp::Timeout(ms) => TransportError::Timeout { ms, sent: true },
                GaveUp::Cancelled => TransportError::Cancelled { reason: None },
            };
            if !is_init {
                inner.cancel_on_server(&id, &err.to_string()).await;
            }
            Err(err)
        }
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

/// Runs a cleanup if dropped while armed: when the caller drops a request future mid-wait,
/// the request's exchange is aborted, its id counts as abandoned and the server is told, as
/// for cancellation. Shared with the legacy transport.
pub(crate) struct AbandonGuard(Option<Box<dyn FnOnce() + Send>>);

impl AbandonGuard {
    /// Arms the guard for a request whose exchange is `task`; `cancel` sends
    /// `notifications/cancelled` (`None` for initialize).
    pub(crate) fn new(
        task: AbortHandle,
        correlator_forget: impl FnOnce() + Send + 'static,
        cancel: Option<BoxFuture<'static, ()>>,
    ) -> Self {
        AbandonGuard(Some(Box::new(move || {
            task.abort();
            correlator_forget();
            if let (Some(cancel), Ok(rt)) = (cancel, tokio::runtime::Handle::try_current()) {
                rt.spawn(cancel);
            }
        })))
    }

    /// The request ended normally (or its own give-up path ran): do nothing on drop.
    pub(crate) fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for AbandonGuard {
    fn drop(&mut self) {
        if let Some(cleanup) = self.0.take() {
            cleanup();
        }
    }
}

impl Inner {
    fn is_connected(&self) -> bool {
        self.connected.load(Ordering::SeqCst) && !self.correlator.is_closed()
    }

    fn session(&self) -> Option<String> {
        lock(&self.session_id).clone()
    }

    /// Marks the transport closed: pending requests fail with `err`, the close handler
    /// fires once, background tasks stop. Returns false when it had already closed.
    fn shut(&self, err: TransportError) -> bool {
        if !self.connected.swap(false, Ordering::SeqCst) {
            return false;
        }
        self.shutdown.cancel();
        self.correlator.close(err);
        true
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
        let resp = send_with_auth(&self.auth, |configured| {
            let b = self.client.request(method.clone(), self.url.clone()).headers(self.headers(
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
    async fn exchange(self: Arc<Self>, id: RequestId, body: Bytes, is_init: bool) {
        let run = async {
            match self.post_request(&id, &body, is_init).await {
                Ok(None) => {}
                Ok(Some(stream)) => match self.run_stream(stream, Some(&id)).await {
                    StreamEnd::Shutdown | StreamEnd::Settled => {}
                    StreamEnd::Ended | StreamEnd::NoBody => {
                        self.correlator.fail(&id, TransportError::NoResponse { id: id.clone() })
                    }
                    StreamEnd::Failed(e) => self.correlator.fail(&id, e),
                },
                Err(e) => self.correlator.fail(&id, e),
            }
        };
        tokio::select! {
            _ = self.shutdown.cancelled() => {}
            _ = run => {}
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
        let bytes = match read_capped(resp, self.max_bytes).await {
            Ok(b) => b,
            Err(BodyError::TooLarge) => {
                self.correlator.oversize(self.max_bytes);
                return Err(TransportError::MessageTooLarge { limit: self.max_bytes });
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
                self.route_shared(item.clone());
            }
            return if self.correlator.is_pending(id) {
                Err(TransportError::Protocol(format!("batch reply lacks the response to request {}", id.to_value())))
            } else {
                Ok(())
            };
        }
        match Inbound::classify(&value) {
            Inbound::Response { id: rid, .. } | Inbound::ErrorResponse { id: Some(rid), .. } if &rid == id => {
                self.correlator.route(&value);
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
            _ => self.correlator.violation("ignoring an Mcp-Session-Id that is not visible ASCII".into()),
        }
    }

    /// The revision in force: negotiated if known, else configured.
    fn revision(&self) -> String {
        lock(&self.negotiated).clone().unwrap_or_else(|| self.configured_revision.clone())
    }

    /// POSTs a notification or a response to a server request; any 2xx is success.
    async fn post_message(&self, body: &Bytes) -> Result<(), TransportError> {
        let (resp, session) = self.send(Outbound::Post(body)).await?;
        if resp.status().is_success() { Ok(()) } else { Err(status_error(resp, session.as_deref()).await) }
    }

    /// Tells the server we gave up on `id` (SPEC §2), bounded in time; failure is reported.
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
        match tokio::time::timeout(bound, self.post_message(&body)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => self.correlator.report(&e),
            Err(_) => tracing::debug!("notifications/cancelled POST timed out"),
        }
    }

    /// Routes one inbound message; server requests are answered by POST in the background.
    fn route_shared(self: &Arc<Self>, value: Value) {
        if let Routed::ServerRequest { id, method, params } = self.correlator.route(&value) {
            let inner = self.clone();
            tokio::spawn(async move {
                let answer = inner.correlator.answer(&id, method, params).await;
                let body = Bytes::from(answer.to_string());
                tokio::select! {
                    _ = inner.shutdown.cancelled() => {}
                    r = with_timeout(inner.timeout, inner.post_message(&body)) => {
                        if let Err(e) = r {
                            inner.correlator.report(&e);
                        }
                    }
                }
            });
        }
    }

    fn dispatch_event(self: &Arc<Self>, event: SseEvent) {
        if let Some(value) = event_message(&self.correlator, event) {
            match value {
                Value::Array(items) if self.revision() == BATCH_REVISION => {
                    items.into_iter().for_each(|v| self.route_shared(v))
                }
                other => self.route_shared(other),
            }
        }
    }

    /// Reads one SSE response to its end, dispatching its events.
    async fn read_events(self: &Arc<Self>, mut resp: Response, cursor: &mut Cursor) -> ReadOutcome {
        let mut parser = SseParser::new(self.max_bytes);
        let mut progressed = false;
        let mut any_bytes = false;
        loop {
            let chunk = tokio::select! {
                _ = self.shutdown.cancelled() => break,
                c = resp.chunk() => c,
            };
            let bytes = match chunk {
                Ok(Some(b)) => b,
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(error = %e.without_url(), "SSE stream broke");
                    break;
                }
            };
            any_bytes |= !bytes.is_empty();
            for item in parser.feed(&bytes) {
                match item {
                    SseItem::Oversize { limit } => self.correlator.oversize(limit),
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
            if self.shutdown.is_cancelled() {
                return StreamEnd::Shutdown;
            }
            if watch.is_some_and(|id| !self.correlator.is_pending(id)) {
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
                _ = self.shutdown.cancelled() => return StreamEnd::Shutdown,
                _ = tokio::time::sleep(wait) => {}
            }
            if watch.is_some_and(|id| !self.correlator.is_pending(id)) {
                return StreamEnd::Settled;
            }
            match with_timeout(self.timeout, self.send(Outbound::Get(Some(&last_id)))).await {
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
        let deadline = self.timeout.map(|t| {
            let ms = u64::try_from(t.as_millis()).unwrap_or(u64::MAX);
            Duration::from_millis((ms / 4).clamp(1, 1000))
        });
        let (started_tx, started_rx) = oneshot::channel::<()>();
        let inner = self.clone();
        tokio::spawn(async move {
            let open = inner.open_listener();
            let opened = tokio::select! {
                _ = inner.shutdown.cancelled() => None,
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
                    if inner.shut(TransportError::Closed { reason: Some("HTTP GET stream closed".into()) }) {
                        inner.delete_session().await;
                    }
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
        let bound = self.timeout.map_or(CLEANUP_BOUND, |t| t.min(CLEANUP_BOUND));
        match tokio::time::timeout(bound, self.send(Outbound::Delete)).await {
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

/// Turns a dispatched SSE event into a JSON value, reporting what cannot be one. Events
/// named anything but `message` (or unnamed) are not JSON-RPC and are skipped.
pub(crate) fn event_message(correlator: &Correlator, event: SseEvent) -> Option<Value> {
    if event.event.as_deref().is_some_and(|name| name != "message") {
        tracing::debug!(event = event.event.as_deref(), "ignoring SSE event that is not a message");
        return None;
    }
    match serde_json::from_str(&event.data) {
        Ok(v) => Some(v),
        Err(e) => {
            correlator.violation(format!("SSE event data is not JSON: {e}"));
            None
        }
    }
}

/// Runs `fut` under the connection timeout, mapping expiry to `Request timeout after <t>ms`.
pub(crate) async fn with_timeout<T>(
    timeout: Option<Duration>,
    fut: impl std::future::Future<Output = Result<T, TransportError>>,
) -> Result<T, TransportError> {
    match timeout {
        None => fut.await,
        Some(t) => tokio::time::timeout(t, fut).await.unwrap_or_else(|_| {
            Err(TransportError::Timeout { ms: u64::try_from(t.as_millis()).unwrap_or(u64::MAX), sent: true })
        }),
    }
}

// ---------------------------------------------------------------------------------------
// HTTP plumbing shared with the legacy SSE transport.

/// Parses the configured URL; only http and https are usable.
pub(crate) fn parse_url(raw: &str) -> Result<Url, TransportError> {
    let url = Url::parse(raw).map_err(|e| TransportError::Config(format!("invalid URL: {e}")))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(TransportError::Config(format!("unsupported URL scheme {other:?}; expected http or https"))),
    }
}

/// Why a redirect was refused. Kept as a type so [`request_error`] can find it.
#[derive(Debug)]
struct RedirectRefused(String);

impl std::fmt::Display for RedirectRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RedirectRefused {}

/// Follows 307/308 to the same origin only: configured headers (tokens) must never reach
/// another origin, and other redirect codes would turn a POST into a GET.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(origin) = attempt.previous().first().map(Url::origin) else { return attempt.stop() };
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(RedirectRefused(format!("too many redirects (over {MAX_REDIRECTS})")));
        }
        if !matches!(attempt.status().as_u16(), 307 | 308) {
            return attempt.stop();
        }
        let to = attempt.url().origin();
        if to == origin {
            attempt.follow()
        } else {
            let msg = format!(
                "refusing cross-origin redirect from {} to {} (configured headers would leak)",
                origin.ascii_serialization(),
                to.ascii_serialization()
            );
            attempt.error(RedirectRefused(msg))
        }
    })
}

/// The HTTP client both transports use: rustls, same-origin redirects, and no proxy for
/// loopback servers (a proxy from the environment must not intercept a local mock).
pub(crate) fn build_client(url: &Url) -> Result<reqwest::Client, TransportError> {
    let mut builder = reqwest::Client::builder().use_rustls_tls().redirect(redirect_policy());
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if loopback {
        builder = builder.no_proxy();
    }
    builder.build().map_err(|e| TransportError::Config(format!("cannot build the HTTP client: {e}")))
}

/// Configured headers plus whatever the auth hook returned; values are marked sensitive
/// and never appear in errors or logs.
pub(crate) struct AuthHeaders {
    headers: RwLock<HeaderMap>,
    hook: Option<AuthRefresh>,
}

impl AuthHeaders {
    /// Validates the configured headers; an invalid one is named (never its value).
    pub(crate) fn new(
        configured: &BTreeMap<String, String>,
        hook: Option<AuthRefresh>,
    ) -> Result<Self, TransportError> {
        let mut map = HeaderMap::new();
        for (name, value) in configured {
            let (n, v) =
                header_pair(name, value).ok_or_else(|| TransportError::Config(format!("invalid header {name:?}")))?;
            map.append(n, v);
        }
        Ok(AuthHeaders { headers: RwLock::new(map), hook })
    }

    fn snapshot(&self) -> HeaderMap {
        self.headers.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Asks the hook for fresh headers; true when it gave some (the caller re-sends).
    async fn refresh(&self) -> bool {
        let Some(hook) = &self.hook else { return false };
        let Some(fresh) = hook().await else { return false };
        let mut map = self.headers.write().unwrap_or_else(|e| e.into_inner());
        for (name, value) in &fresh {
            match header_pair(name, value) {
                Some((n, v)) => {
                    map.insert(n, v);
                }
                None => tracing::warn!(header = %name, "auth refresh returned an invalid header; ignored"),
            }
        }
        true
    }
}

fn header_pair(name: &str, value: &str) -> Option<(HeaderName, HeaderValue)> {
    let n = HeaderName::from_bytes(name.as_bytes()).ok()?;
    let mut v = HeaderValue::from_str(value).ok()?;
    v.set_sensitive(true);
    Some((n, v))
}

/// Sends a request built from the current headers; on HTTP 401/403 asks the auth hook once
/// and, if it returns headers, re-sends once. The final response of any status is returned.
pub(crate) async fn send_with_auth(
    auth: &AuthHeaders,
    build: impl Fn(HeaderMap) -> reqwest::RequestBuilder,
) -> Result<Response, TransportError> {
    let resp = build(auth.snapshot()).send().await.map_err(request_error)?;
    if !matches!(resp.status().as_u16(), 401 | 403) || !auth.refresh().await {
        return Ok(resp);
    }
    drop(resp);
    build(auth.snapshot()).send().await.map_err(request_error)
}

/// Maps a reqwest failure without its URL (which may carry credentials).
pub(crate) fn request_error(e: reqwest::Error) -> TransportError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(err) = source {
        if let Some(refused) = err.downcast_ref::<RedirectRefused>() {
            return TransportError::Protocol(refused.to_string());
        }
        source = err.source();
    }
    let connect = e.is_connect();
    let e = e.without_url();
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(err) = source {
        msg.push_str(": ");
        msg.push_str(&err.to_string());
        source = err.source();
    }
    if connect {
        TransportError::Connect(msg)
    } else {
        // The request may have reached the server: acceptance is unknown.
        TransportError::ConnectionLost(msg)
    }
}

/// The error for a non-2xx status: `SessionExpired` for a 404 on a request that carried a
/// session, else `HTTP <status>: <body>` with the body bounded and the auth hints.
pub(crate) async fn status_error(resp: Response, session: Option<&str>) -> TransportError {
    let status = resp.status().as_u16();
    if status == 404
        && let Some(session_id) = session
    {
        return TransportError::SessionExpired { session_id: session_id.to_owned() };
    }
    let hint = |name: &str| resp.headers().get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let www_authenticate = hint("www-authenticate");
    let mcp_auth_server = hint("mcp-auth-server");
    let body = read_truncated(resp, ERROR_BODY_LIMIT).await;
    TransportError::Http { status, body, www_authenticate, mcp_auth_server, accepted: false }
}

/// The lowercase MIME essence of the response's Content-Type.
pub(crate) fn mime(resp: &Response) -> Option<String> {
    let raw = resp.headers().get(reqwest::header::CONTENT_TYPE)?.to_str().ok()?;
    let essence = raw.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    if essence.is_empty() { None } else { Some(essence) }
}

/// Reads at most `limit` bytes of a body (lossily decoded); the rest is never read.
pub(crate) async fn read_truncated(mut resp: Response, limit: usize) -> String {
    let mut buf = Vec::new();
    while buf.len() < limit {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                let take = chunk.len().min(limit - buf.len());
                buf.extend_from_slice(&chunk[..take]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Why a capped body read failed.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Over the cap; reading stopped there.
    TooLarge,
    /// The connection failed mid-body.
    Failed(String),
}

/// Reads a whole body, refusing (without buffering) anything over `limit` bytes.
pub(crate) async fn read_capped(mut resp: Response, limit: usize) -> Result<Vec<u8>, BodyError> {
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge);
    }
    let mut buf = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if buf.len() + chunk.len() > limit {
                    return Err(BodyError::TooLarge);
                }
                buf.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(buf),
            Err(e) => return Err(BodyError::Failed(e.without_url().to_string())),
        }
    }
}
