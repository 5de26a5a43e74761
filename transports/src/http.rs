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

/// How much of a non-2xx body goes into `HTTP <status>: <body>`.
pub(crate) const ERROR_BODY_LIMIT: usize = 4096;
/// Reconnection delay when the server sent no `retry` (WHATWG's usual default).
const DEFAULT_RETRY_MS: u64 = 1000;
/// Floor on any reconnection delay, so a `retry: 0` server cannot make us spin.
const MIN_RETRY_MS: u64 = 10;
/// Consecutive resumption attempts without progress before a stream is given up.
const MAX_RESUME_ATTEMPTS: u32 = 3;
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

/// A hand-written HTTP/1.1 responder for tests: every request arrives on a channel with
/// its socket, and the test writes whatever bytes the scenario needs (SSE streams, drops).
#[cfg(test)]
pub(crate) mod test_support {
    use crate::transport::Handlers;
    use serde_json::Value;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};
    use tokio::sync::{Notify, mpsc};

    /// How long a test waits for anything before failing.
    pub(crate) const WAIT: Duration = Duration::from_secs(5);

    /// One request received by the test server.
    pub(crate) struct Incoming {
        pub method: String,
        pub path: String,
        pub headers: Vec<(String, String)>,
        pub body: String,
        pub stream: TcpStream,
    }

    impl Incoming {
        pub(crate) fn header(&self, name: &str) -> Option<&str> {
            self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
        }

        pub(crate) fn header_count(&self, name: &str) -> usize {
            self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).count()
        }

        pub(crate) fn json(&self) -> Value {
            serde_json::from_str(&self.body).expect("request body is JSON")
        }

        /// The `method` of the JSON-RPC body, or "" when there is none.
        pub(crate) fn rpc_method(&self) -> String {
            serde_json::from_str::<Value>(&self.body)
                .ok()
                .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_default()
        }

        pub(crate) async fn respond(mut self, status: u16, headers: &[(&str, &str)], body: &str) {
            let mut head = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
            for (n, v) in headers {
                head.push_str(&format!("{n}: {v}\r\n"));
            }
            head.push_str("\r\n");
            head.push_str(body);
            let _ = self.stream.write_all(head.as_bytes()).await;
            let _ = self.stream.shutdown().await;
        }

        pub(crate) async fn json_reply(self, value: Value) {
            self.respond(200, &[("Content-Type", "application/json")], &value.to_string()).await;
        }

        /// Starts an SSE response and hands back the socket for the events.
        pub(crate) async fn sse(mut self, headers: &[(&str, &str)]) -> TcpStream {
            let mut head = String::from("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n");
            for (n, v) in headers {
                head.push_str(&format!("{n}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = self.stream.write_all(head.as_bytes()).await;
            self.stream
        }
    }

    /// Writes raw bytes to an open response.
    pub(crate) async fn send(stream: &mut TcpStream, text: &str) {
        stream.write_all(text.as_bytes()).await.expect("write to client");
    }

    /// Waits until the client closes its side of `stream`.
    pub(crate) async fn wait_client_close(stream: &mut TcpStream) {
        let mut buf = [0u8; 256];
        let closed = tokio::time::timeout(WAIT, async {
            loop {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
        assert!(closed.is_ok(), "client never closed the stream");
    }

    pub(crate) struct TestServer {
        pub url: String,
        pub base: String,
        rx: mpsc::UnboundedReceiver<Incoming>,
    }

    impl TestServer {
        pub(crate) async fn start() -> TestServer {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("addr");
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        if let Some(incoming) = read_request(stream).await {
                            let _ = tx.send(incoming);
                        }
                    });
                }
            });
            let base = format!("http://{addr}");
            TestServer { url: format!("{base}/mcp"), base, rx }
        }

        pub(crate) async fn next(&mut self) -> Incoming {
            tokio::time::timeout(WAIT, self.rx.recv()).await.expect("a request in time").expect("server alive")
        }
    }

    async fn read_request(mut stream: TcpStream) -> Option<Incoming> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break pos;
            }
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut first = lines.next()?.split(' ');
        let (method, path) = (first.next()?.to_owned(), first.next()?.to_owned());
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':').map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned())))
            .collect();
        let len =
            headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse::<usize>().ok()).unwrap_or(0);
        let mut body = buf[head_end + 4..].to_vec();
        while body.len() < len {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            body.extend_from_slice(&chunk[..n]);
        }
        Some(Incoming { method, path, headers, body: String::from_utf8_lossy(&body).into_owned(), stream })
    }

    /// What the handlers saw.
    pub(crate) struct Probe {
        pub notes: mpsc::UnboundedReceiver<(String, Value)>,
        pub errors: mpsc::UnboundedReceiver<String>,
        pub closes: Arc<AtomicUsize>,
        pub closed: Arc<Notify>,
    }

    impl Probe {
        pub(crate) async fn note(&mut self) -> (String, Value) {
            tokio::time::timeout(WAIT, self.notes.recv()).await.expect("a notification in time").expect("open")
        }

        pub(crate) async fn error(&mut self) -> String {
            tokio::time::timeout(WAIT, self.errors.recv()).await.expect("an error report in time").expect("open")
        }

        pub(crate) async fn wait_closed(&self) {
            let notified = self.closed.notified();
            if self.closes.load(Ordering::SeqCst) > 0 {
                return;
            }
            tokio::time::timeout(WAIT, notified).await.expect("close handler in time");
        }

        pub(crate) fn close_count(&self) -> usize {
            self.closes.load(Ordering::SeqCst)
        }
    }

    /// Handlers that record everything; server requests are answered `{"echo": method}`.
    pub(crate) fn probe() -> (Handlers, Probe) {
        let (ntx, notes) = mpsc::unbounded_channel();
        let (etx, errors) = mpsc::unbounded_channel();
        let closes = Arc::new(AtomicUsize::new(0));
        let closed = Arc::new(Notify::new());
        let (c, n) = (closes.clone(), closed.clone());
        let handlers = Handlers {
            on_close: Some(Arc::new(move || {
                c.fetch_add(1, Ordering::SeqCst);
                n.notify_waiters();
            })),
            on_error: Some(Arc::new(move |e| {
                let _ = etx.send(e.to_string());
            })),
            on_notification: Some(Arc::new(move |m, p| {
                let _ = ntx.send((m.to_owned(), p.clone()));
            })),
            on_request: Some(Arc::new(|method, _params| {
                Box::pin(async move { Ok(serde_json::json!({"echo": method})) })
            })),
        };
        (handlers, Probe { notes, errors, closes, closed })
    }

    /// A config for `url` with a fixed timeout that ignores the process environment.
    pub(crate) fn config(url: &str, timeout_ms: u64, kind: crate::config::TransportKind) -> crate::TransportConfig {
        crate::TransportConfig {
            kind,
            url: url.to_owned(),
            timeout_ms: Some(timeout_ms),
            timeout_env_override: Some(None),
            protocol_version: "2025-11-25".into(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use crate::config::TransportKind;
    use tokio_util::sync::CancellationToken;

    fn cfg(url: &str, timeout_ms: u64) -> TransportConfig {
        config(url, timeout_ms, TransportKind::Http)
    }

    fn ok(id: i64, result: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }

    async fn connect(url: &str, timeout_ms: u64) -> (Arc<HttpTransport>, Probe) {
        let (handlers, probe) = probe();
        (HttpTransport::connect(&cfg(url, timeout_ms), handlers).await.expect("connect"), probe)
    }

    /// initialize (JSON reply with a session id), then the negotiated version is set.
    async fn initialize(server: &mut TestServer, t: &Arc<HttpTransport>, version: &str) {
        let call = t.request("initialize", Some(json!({"protocolVersion": version})), RequestOptions::default());
        let serve = async {
            let req = server.next().await;
            assert_eq!(req.rpc_method(), "initialize");
            assert_eq!(req.header("mcp-session-id"), None);
            assert_eq!(req.header("mcp-protocol-version"), None);
            let reply = json!({"jsonrpc": "2.0", "id": req.json()["id"].clone(), "result": {}});
            req.respond(200, &[("Content-Type", "application/json"), ("Mcp-Session-Id", "s-1")], &reply.to_string())
                .await;
        };
        let (r, ()) = tokio::join!(call, serve);
        r.expect("initialize");
        t.set_protocol_version(version);
    }

    #[tokio::test]
    async fn stateless_revision_is_refused() {
        let mut c = cfg("http://127.0.0.1:1/mcp", 100);
        c.protocol_version = "2026-07-28".into();
        let err = HttpTransport::connect(&c, Handlers::default()).await.expect_err("refused");
        assert!(err.to_string().contains("2026-07-28") && err.to_string().contains("not supported yet"), "{err}");
        let err = HttpTransport::connect(&cfg("ftp://x/", 100), Handlers::default()).await.expect_err("refused");
        assert!(matches!(err, TransportError::Config(_)));
    }

    #[tokio::test]
    async fn headers_session_and_protocol_version() {
        let mut server = TestServer::start().await;
        let mut c = cfg(&server.url, 2000);
        c.headers = BTreeMap::from([
            ("ACCEPT".to_owned(), "text/plain".to_owned()),
            ("content-type".to_owned(), "text/plain".to_owned()),
            ("X-Custom".to_owned(), "yes".to_owned()),
        ]);
        let (handlers, _probe) = probe();
        let t = HttpTransport::connect(&c, handlers).await.expect("connect");
        let call = t.request("initialize", None, RequestOptions::default());
        let serve = async {
            let req = server.next().await;
            assert_eq!(req.method, "POST");
            assert_eq!(req.header("content-type"), Some("application/json"));
            assert_eq!(req.header("accept"), Some("application/json, text/event-stream"));
            assert_eq!((req.header_count("accept"), req.header_count("content-type")), (1, 1));
            assert_eq!(req.header("x-custom"), Some("yes"));
            assert_eq!(req.json()["params"], json!({}));
            req.respond(
                200,
                &[("Content-Type", "application/json; charset=utf-8"), ("Mcp-Session-Id", "s-1")],
                &ok(1, json!({"v": 1})).to_string(),
            )
            .await;
        };
        let (r, ()) = tokio::join!(call, serve);
        assert_eq!(r.expect("initialize"), json!({"v": 1}));
        assert_eq!(t.session_id().as_deref(), Some("s-1"));
        t.set_protocol_version("2025-06-18");

        let (r, req) = tokio::join!(t.notify("notifications/initialized", None), async {
            let req = server.next().await;
            assert_eq!(req.header("mcp-session-id"), Some("s-1"));
            assert_eq!(req.header("mcp-protocol-version"), Some("2025-06-18"));
            assert_eq!(req.json(), json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}));
            req.respond(202, &[], "").await;
        });
        r.expect("notification accepted");
        let () = req;

        let (r, ()) = tokio::join!(t.request("tools/list", None, RequestOptions::default()), async {
            let req = server.next().await;
            assert_eq!(req.header("mcp-session-id"), Some("s-1"));
            assert_eq!(req.header("mcp-protocol-version"), Some("2025-06-18"));
            req.json_reply(ok(2, json!({"tools": []}))).await;
        });
        assert_eq!(r.expect("tools/list"), json!({"tools": []}));
    }

    /// wiremock: 2025-03-26 never sends MCP-Protocol-Version; notifications accept any 2xx.
    #[tokio::test]
    async fn revision_2025_03_26_has_no_protocol_header() {
        use wiremock::matchers::{body_partial_json, header_exists, method};
        use wiremock::{Mock, MockServer, Request, ResponseTemplate};
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(body_partial_json(json!({"method": "initialize"})))
            .respond_with(
                ResponseTemplate::new(200).insert_header("Mcp-Session-Id", "abc").set_body_json(ok(1, json!({}))),
            )
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(header_exists("mcp-protocol-version"))
            .respond_with(ResponseTemplate::new(400))
            .with_priority(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(body_partial_json(json!({"method": "notifications/initialized"})))
            .respond_with(ResponseTemplate::new(200))
            .mount(&server)
            .await;
        let (t, _probe) = connect(&format!("{}/mcp", server.uri()), 2000).await;
        t.request("initialize", None, RequestOptions::default()).await.expect("initialize");
        t.set_protocol_version("2025-03-26");
        t.notify("notifications/initialized", None).await.expect("200 accepted for a notification");
        let received: Vec<Request> = server.received_requests().await.expect("recorded");
        assert_eq!(received.len(), 2);
        assert_eq!(received[1].headers.get("mcp-session-id").and_then(|v| v.to_str().ok()), Some("abc"));
    }

    #[tokio::test]
    async fn status_errors_session_expiry_and_auth_hints() {
        let mut server = TestServer::start().await;
        let mut c = cfg(&server.url, 2000);
        c.headers = BTreeMap::from([("Authorization".to_owned(), "Bearer SECRET-TOKEN".to_owned())]);
        let (handlers, _probe) = probe();
        let t = HttpTransport::connect(&c, handlers).await.expect("connect");
        // 404 before any session: a plain HTTP error.
        let (r, ()) = tokio::join!(t.request("a", None, RequestOptions::default()), async {
            server.next().await.respond(404, &[], "nope").await;
        });
        assert_eq!(r.expect_err("404").to_string(), "HTTP 404: nope");
        initialize(&mut server, &t, "2025-11-25").await;
        let (r, ()) = tokio::join!(t.request("b", None, RequestOptions::default()), async {
            server.next().await.respond(404, &[], "gone").await;
        });
        let err = r.expect_err("expired");
        assert!(matches!(&err, TransportError::SessionExpired { session_id } if session_id == "s-1"), "{err}");
        let (r, ()) = tokio::join!(t.notify("n", None), async {
            server.next().await.respond(404, &[], "").await;
        });
        assert!(matches!(r, Err(TransportError::SessionExpired { .. })));
        // A big error body is bounded.
        let big = "x".repeat(10_000);
        let (r, ()) = tokio::join!(t.request("c", None, RequestOptions::default()), async {
            server.next().await.respond(500, &[], &big).await;
        });
        match r.expect_err("500") {
            TransportError::Http { status: 500, body, .. } => assert_eq!(body.len(), ERROR_BODY_LIMIT),
            other => panic!("unexpected {other}"),
        }
        // 401 with hints; the token never shows.
        let (r, ()) = tokio::join!(t.request("d", None, RequestOptions::default()), async {
            let req = server.next().await;
            assert_eq!(req.header("authorization"), Some("Bearer SECRET-TOKEN"));
            req.respond(
                401,
                &[("WWW-Authenticate", "Bearer realm=\"mcp\""), ("Mcp-Auth-Server", "https://auth.example")],
                "denied",
            )
            .await;
        });
        let text = r.expect_err("401").to_string();
        assert_eq!(
            text,
            "HTTP 401: denied [WWW-Authenticate: Bearer realm=\"mcp\"; Mcp-Auth-Server: https://auth.example]"
        );
        assert!(!format!("{text}{:?}", c.headers.len()).contains("SECRET"));
    }

    #[tokio::test]
    async fn auth_refresh_resends_once_then_gives_up() {
        let mut server = TestServer::start().await;
        let mut c = cfg(&server.url, 2000);
        c.headers = BTreeMap::from([("authorization".to_owned(), "Bearer OLD".to_owned())]);
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = asked.clone();
        let hook: AuthRefresh = Arc::new(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move { Some(BTreeMap::from([("Authorization".to_owned(), format!("Bearer NEW{n}"))])) })
        });
        let t = HttpTransport::connect_with_auth(&c, Handlers::default(), Some(hook)).await.expect("connect");
        let (r, ()) = tokio::join!(t.request("a", None, RequestOptions::default()), async {
            let first = server.next().await;
            assert_eq!(first.header("authorization"), Some("Bearer OLD"));
            first.respond(401, &[], "").await;
            let second = server.next().await;
            assert_eq!(second.header("authorization"), Some("Bearer NEW0"));
            assert_eq!(second.json()["id"], json!(1), "the same request is re-sent");
            second.json_reply(ok(1, json!("fine"))).await;
        });
        assert_eq!(r.expect("refreshed"), json!("fine"));
        // A second 401 after the refresh goes back to the caller with the hint.
        let (r, ()) = tokio::join!(t.request("b", None, RequestOptions::default()), async {
            let first = server.next().await;
            assert_eq!(first.header("authorization"), Some("Bearer NEW0"), "refreshed headers stick");
            first.respond(403, &[], "").await;
            server
                .next()
                .await
                .respond(403, &[("WWW-Authenticate", "Bearer error=\"insufficient_scope\"")], "no")
                .await;
        });
        let text = r.expect_err("403").to_string();
        assert_eq!(text, "HTTP 403: no [WWW-Authenticate: Bearer error=\"insufficient_scope\"]");
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        assert!(!text.contains("NEW"));
    }

    #[tokio::test]
    async fn bad_json_replies_are_protocol_errors() {
        use wiremock::matchers::{body_partial_json, method};
        use wiremock::{Mock, MockServer, ResponseTemplate};
        let server = MockServer::start().await;
        let cases: Vec<(&str, ResponseTemplate)> = vec![
            ("wrong-id", ResponseTemplate::new(200).set_body_json(ok(99, json!({})))),
            ("string-id", ResponseTemplate::new(200).set_body_json(json!({"jsonrpc": "2.0", "id": "2", "result": {}}))),
            (
                "both",
                ResponseTemplate::new(200).set_body_json(
                    json!({"jsonrpc": "2.0", "id": 3, "result": {}, "error": {"code": 1, "message": "x"}}),
                ),
            ),
            ("accepted", ResponseTemplate::new(202)),
            ("empty", ResponseTemplate::new(200).insert_header("Content-Type", "application/json")),
            ("not-json", ResponseTemplate::new(200).set_body_raw("{nope", "application/json")),
            ("html", ResponseTemplate::new(200).set_body_raw("<html>", "text/html")),
            ("huge", ResponseTemplate::new(200).set_body_json(ok(8, json!("y".repeat(500))))),
        ];
        for (name, template) in cases {
            Mock::given(method("POST"))
                .and(body_partial_json(json!({"method": name})))
                .respond_with(template)
                .mount(&server)
                .await;
        }
        Mock::given(method("POST"))
            .and(body_partial_json(json!({"method": "rpc-error"})))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32000, "message": "boom", "data": [1]}}),
            ))
            .mount(&server)
            .await;
        let mut c = cfg(&format!("{}/mcp", server.uri()), 2000);
        c.max_message_bytes = Some(256);
        let (handlers, _probe) = probe();
        let t = HttpTransport::connect(&c, handlers).await.expect("connect");
        let expect = [
            ("wrong-id", "Protocol error: response id 99 does not match request id 1"),
            ("string-id", "Protocol error: response id \"2\" does not match request id 2"),
            ("both", "Protocol error: invalid JSON-RPC response: response has both result and error"),
            (
                "accepted",
                "Protocol error: HTTP 202 with no body in reply to request 4; expected application/json or text/event-stream",
            ),
            ("empty", "Protocol error: HTTP 200 with an empty body in reply to request 5"),
            ("not-json", "Protocol error: invalid JSON in reply to request 6"),
            ("html", "Protocol error: unexpected Content-Type text/html in reply to request 7"),
            ("huge", "Message too large: over 256 bytes"),
        ];
        for (name, text) in expect {
            let err = t.request(name, None, RequestOptions::default()).await.expect_err(name);
            assert!(err.to_string().starts_with(text), "{name}: {err}");
        }
        let err = t.request("rpc-error", None, RequestOptions::default()).await.expect_err("rpc error");
        assert_eq!(err.to_string(), "MCP error -32000: boom");
        assert_eq!(err.rpc_data(), Some(&json!([1])));
        assert_eq!(t.diagnostics().oversize_dropped, 1);
    }

    #[tokio::test]
    async fn sse_reply_dispatches_interleaved_messages_then_drains() {
        let mut server = TestServer::start().await;
        let (t, mut probe) = connect(&server.url, 2000).await;
        let call = t.request("tools/call", None, RequestOptions::default());
        let serve = async {
            let mut stream = server.next().await.sse(&[]).await;
            send(&mut stream, ": keep-alive\r\n\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"p\":1}}\r\n\r\n").await;
            send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n").await;
            // The server request is answered by its own POST while the stream stays open.
            let answer = server.next().await;
            assert_eq!(answer.json(), json!({"jsonrpc": "2.0", "id": "srv-1", "result": {"echo": "ping"}}));
            answer.respond(202, &[], "").await;
            send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"done\":true}}\n\n").await;
            stream
        };
        let (r, mut stream) = tokio::join!(call, serve);
        assert_eq!(r.expect("settled"), json!({"done": true}));
        assert_eq!(probe.note().await, ("notifications/progress".to_owned(), json!({"p": 1})));
        // After the match the rest of the stream is still dispatched.
        send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"method\":\"late/note\"}\n\n").await;
        assert_eq!(probe.note().await.0, "late/note");
        drop(stream);
        assert!(t.is_connected());
    }

    #[tokio::test]
    async fn sse_reply_ending_first_is_no_response() {
        let mut server = TestServer::start().await;
        let (t, _probe) = connect(&server.url, 2000).await;
        let (r, ()) = tokio::join!(t.request("x", None, RequestOptions::default()), async {
            let mut stream = server.next().await.sse(&[]).await;
            // A partial event at EOF is discarded, not dispatched.
            send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await;
        });
        assert_eq!(r.expect_err("no response").to_string(), "No response received for request ID 1");
        let (r, ()) = tokio::join!(t.request("y", None, RequestOptions::default()), async {
            let mut stream = server.next().await.sse(&[]).await;
            send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"ok\":1}}\n\n").await;
        });
        assert_eq!(r.expect("complete event counts"), json!({"ok": 1}));
    }

    #[tokio::test]
    async fn oversize_sse_event_is_dropped_and_reported() {
        let mut server = TestServer::start().await;
        let mut c = cfg(&server.url, 2000);
        c.max_message_bytes = Some(100);
        let (handlers, mut probe) = probe();
        let t = HttpTransport::connect(&c, handlers).await.expect("connect");
        let (r, ()) = tokio::join!(t.request("x", None, RequestOptions::default()), async {
            let mut stream = server.next().await.sse(&[]).await;
            let big = format!("data: {{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":\"{}\"}}\n\n", "z".repeat(500));
            send(&mut stream, &big).await;
            send(&mut stream, "data: not json\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":7}\n\n").await;
        });
        assert_eq!(r.expect("the stream resynchronised"), json!(7));
        assert_eq!(probe.error().await, "Message too large: over 100 bytes");
        assert!(probe.error().await.starts_with("Protocol error: SSE event data is not JSON"));
        let d = t.diagnostics();
        assert_eq!((d.oversize_dropped, d.protocol_violations), (1, 1));
    }

    #[tokio::test]
    async fn timeout_closes_the_stream_and_posts_cancelled() {
        let mut server = TestServer::start().await;
        let (t, _probe) = connect(&server.url, 150).await;
        let call = t.request("slow", None, RequestOptions::default());
        let serve = async {
            let mut stream = server.next().await.sse(&[]).await;
            send(&mut stream, ": working\n\n").await;
            wait_client_close(&mut stream).await;
            let note = server.next().await;
            assert_eq!(
                note.json(),
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "Request timeout after 150ms"}})
            );
            note.respond(202, &[], "").await;
        };
        let (r, ()) = tokio::join!(call, serve);
        assert_eq!(r.expect_err("timeout").to_string(), "Request timeout after 150ms");
    }

    #[tokio::test]
    async fn caller_cancellation_closes_the_stream_and_posts_cancelled() {
        let mut server = TestServer::start().await;
        let (t, _probe) = connect(&server.url, 0).await;
        let token = CancellationToken::new();
        let call = t.request("slow", None, RequestOptions { timeout_ms: None, cancel: Some(token.clone()) });
        let serve = async {
            let mut stream = server.next().await.sse(&[]).await;
            token.cancel();
            wait_client_close(&mut stream).await;
            let note = server.next().await;
            assert_eq!(note.rpc_method(), "notifications/cancelled");
            assert_eq!(note.json()["params"]["requestId"], json!(1));
            note.respond(202, &[], "").await;
        };
        let (r, ()) = tokio::join!(call, serve);
        assert!(matches!(r, Err(TransportError::Cancelled { .. })));
    }

    #[tokio::test]
    async fn initialize_timeout_sends_no_cancelled() {
        let mut server = TestServer::start().await;
        let (t, _probe) = connect(&server.url, 100).await;
        let (r, mut stream) = tokio::join!(t.request("initialize", None, RequestOptions::default()), async {
            server.next().await.sse(&[]).await
        });
        assert!(matches!(r, Err(TransportError::Timeout { ms: 100, .. })));
        wait_client_close(&mut stream).await;
        // The next POST the server sees is the next request, not a cancellation.
        let relaxed = RequestOptions { timeout_ms: Some(5000), cancel: None };
        let (_, ()) = tokio::join!(t.request("next", None, relaxed), async {
            let req = server.next().await;
            assert_eq!(req.rpc_method(), "next");
            req.json_reply(ok(2, json!({}))).await;
        });
    }

    #[tokio::test]
    async fn broken_reply_stream_resumes_with_last_event_id() {
        let mut server = TestServer::start().await;
        let (t, _probe) = connect(&server.url, 3000).await;
        initialize(&mut server, &t, "2025-11-25").await;
        let call = t.request("long", None, RequestOptions::default());
        let serve = async {
            let mut stream = server.next().await.sse(&[]).await;
            // The priming event: an id, empty data, and a retry hint; then the connection drops.
            send(&mut stream, "id: ev-1\nretry: 30\ndata:\n\n").await;
            drop(stream);
            let get = server.next().await;
            assert_eq!(get.method, "GET");
            assert_eq!(get.header("last-event-id"), Some("ev-1"));
            assert_eq!(get.header("mcp-session-id"), Some("s-1"));
            assert_eq!(get.header("mcp-protocol-version"), Some("2025-11-25"));
            assert_eq!(get.header("accept"), Some("text/event-stream"));
            let mut stream = get.sse(&[]).await;
            send(&mut stream, "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resumed\":true}}\n\n").await;
        };
        let (r, ()) = tokio::join!(call, serve);
        assert_eq!(r.expect("resumed"), json!({"resumed": true}));
        // The accepted request was never re-POSTed: the next POST is the next request.
        let (_, ()) = tokio::join!(t.request("after", None, RequestOptions::default()), async {
            let req = server.next().await;
            assert_eq!((req.method.as_str(), req.rpc_method().as_str()), ("POST", "after"));
            req.json_reply(ok(3, json!({}))).await;
        });
    }

    #[tokio::test]
    async fn resumption_is_bounded() {
        let mut server = TestServer::start().await;
        let (t, _probe) = connect(&server.url, 5000).await;
        let call = t.request("long", None, RequestOptions::default());
        let serve = async {
            let mut stream = server.next().await.sse(&[]).await;
            send(&mut stream, "id: 7\nretry: 10\n\n").await;
            drop(stream);
            for _ in 0..MAX_RESUME_ATTEMPTS {
                let get = server.next().await;
                assert_eq!((get.method.as_str(), get.header("last-event-id")), ("GET", Some("7")));
                get.respond(503, &[], "busy").await;
            }
        };
        let (r, ()) = tokio::join!(call, serve);
        assert_eq!(r.expect_err("gave up").to_string(), "No response received for request ID 1");
        let (_, ()) = tokio::join!(t.request("after", None, RequestOptions::default()), async {
            let req = server.next().await;
            assert_eq!(req.method, "POST", "no further resumption attempt");
            req.json_reply(ok(2, json!({}))).await;
        });
    }

    #[tokio::test]
    async fn listener_refused_is_disabled_silently() {
        for status in [405u16, 500] {
            let mut server = TestServer::start().await;
            let (t, mut probe) = connect(&server.url, 2000).await;
            initialize(&mut server, &t, "2025-06-18").await;
            let (_, ()) = tokio::join!(t.on_initialized(), async {
                let get = server.next().await;
                assert_eq!(get.method, "GET");
                assert_eq!(get.header("mcp-session-id"), Some("s-1"));
                assert_eq!(get.header("accept"), Some("text/event-stream"));
                get.respond(status, &[], "").await;
            });
            assert!(t.is_connected());
            assert!(probe.errors.try_recv().is_err(), "no error reported");
            assert_eq!(probe.close_count(), 0);
        }
        // A non-SSE 200 disables it too.
        let mut server = TestServer::start().await;
        let (t, _probe) = connect(&server.url, 2000).await;
        let (_, ()) = tokio::join!(t.on_initialized(), async {
            server.next().await.json_reply(json!({})).await;
        });
        assert!(t.is_connected());
    }

    #[tokio::test]
    async fn listener_startup_deadline_bounds_on_initialized() {
        let mut server = TestServer::start().await;
        // t = 400 ms → deadline 100 ms.
        let (t, probe) = connect(&server.url, 400).await;
        let started = tokio::time::Instant::now();
        tokio::time::timeout(WAIT, t.on_initialized()).await.expect("bounded");
        // Bounded by the ~100 ms deadline, not the 400 ms timeout (slack for loaded machines).
        assert!(started.elapsed() < Duration::from_millis(1000), "returned at the deadline");
        let _stalled = server.next().await; // The GET arrived and was never answered.
        assert!(t.is_connected());
        assert_eq!(probe.close_count(), 0);
    }

    #[tokio::test]
    async fn listener_delivers_and_its_end_closes_the_transport() {
        let mut server = TestServer::start().await;
        let (t, mut probe) = connect(&server.url, 2000).await;
        initialize(&mut server, &t, "2025-11-25").await;
        let (_, mut stream) = tokio::join!(t.on_initialized(), async { server.next().await.sse(&[]).await });
        send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n").await;
        assert_eq!(probe.note().await.0, "notifications/tools/list_changed");
        send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"roots/list\"}\n\n").await;
        let answer = server.next().await;
        assert_eq!(answer.json()["result"], json!({"echo": "roots/list"}));
        assert_eq!(answer.header("mcp-session-id"), Some("s-1"));
        answer.respond(202, &[], "").await;
        drop(stream);
        probe.wait_closed().await;
        assert!(!t.is_connected());
        let delete = server.next().await;
        assert_eq!((delete.method.as_str(), delete.header("mcp-session-id")), ("DELETE", Some("s-1")));
        assert!(matches!(t.request("x", None, RequestOptions::default()).await, Err(TransportError::NotConnected)));
        t.close().await;
        assert_eq!(probe.close_count(), 1);
    }

    #[tokio::test]
    async fn listener_without_body_is_disabled_silently() {
        // An SSE content type with Content-Length: 0 is refused at startup.
        let mut server = TestServer::start().await;
        let (t, probe) = connect(&server.url, 2000).await;
        let (_, ()) = tokio::join!(t.on_initialized(), async {
            server.next().await.respond(200, &[("Content-Type", "text/event-stream")], "").await;
        });
        assert!(t.is_connected());
        // 200 SSE that closes before a single byte: also "no body", not a closed transport.
        let mut server = TestServer::start().await;
        let (t2, probe2) = connect(&server.url, 2000).await;
        let (_, ()) = tokio::join!(t2.on_initialized(), async { drop(server.next().await.sse(&[]).await) });
        let (r, ()) = tokio::join!(t2.request("after", None, RequestOptions::default()), async {
            let req = server.next().await;
            assert_eq!(req.method, "POST", "no DELETE, no reconnect GET");
            req.json_reply(ok(1, json!({}))).await;
        });
        r.expect("still connected");
        assert_eq!(probe.close_count() + probe2.close_count(), 0);
    }

    #[tokio::test]
    async fn listener_200_then_close_never_loops() {
        let mut server = TestServer::start().await;
        let (t, probe) = connect(&server.url, 2000).await;
        initialize(&mut server, &t, "2025-11-25").await;
        let (_, mut stream) = tokio::join!(t.on_initialized(), async { server.next().await.sse(&[]).await });
        send(&mut stream, "retry: 10\nid: same\n\n").await;
        drop(stream);
        // Resumptions that make no progress are bounded; then the transport closes.
        for _ in 0..MAX_RESUME_ATTEMPTS {
            let get = server.next().await;
            assert_eq!((get.method.as_str(), get.header("last-event-id")), ("GET", Some("same")));
            let mut stream = get.sse(&[]).await;
            send(&mut stream, "id: same\n\n").await;
        }
        let delete = server.next().await;
        assert_eq!(delete.method, "DELETE");
        probe.wait_closed().await;
        assert!(!t.is_connected());
        assert_eq!(probe.close_count(), 1);
    }

    #[tokio::test]
    async fn listener_resumes_after_an_event_id() {
        let mut server = TestServer::start().await;
        let (t, mut probe) = connect(&server.url, 2000).await;
        initialize(&mut server, &t, "2025-11-25").await;
        let (_, mut stream) = tokio::join!(t.on_initialized(), async { server.next().await.sse(&[]).await });
        send(&mut stream, "retry: 10\nid: g1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n").await;
        assert_eq!(probe.note().await.0, "a");
        drop(stream);
        let get = server.next().await;
        assert_eq!(get.header("last-event-id"), Some("g1"));
        let mut stream = get.sse(&[]).await;
        send(&mut stream, "data: {\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n\n").await;
        assert_eq!(probe.note().await.0, "b");
        assert!(t.is_connected());
        assert_eq!(probe.close_count(), 0);
        t.close().await;
        assert_eq!(probe.close_count(), 1);
    }

    #[tokio::test]
    async fn close_rejects_pending_fires_once_and_deletes_session() {
        let mut server = TestServer::start().await;
        let (t, mut probe) = connect(&server.url, 2000).await;
        initialize(&mut server, &t, "2025-11-25").await;
        let pending = {
            let t = t.clone();
            tokio::spawn(async move { t.request("stall", None, RequestOptions::default()).await })
        };
        let mut stream = server.next().await.sse(&[]).await;
        t.close().await;
        let err = pending.await.expect("joined").expect_err("rejected");
        assert_eq!(err.to_string(), "Transport closed");
        let delete = server.next().await;
        assert_eq!((delete.method.as_str(), delete.header("mcp-session-id")), ("DELETE", Some("s-1")));
        wait_client_close(&mut stream).await;
        t.close().await;
        assert_eq!(probe.close_count(), 1);
        assert!(!t.is_connected());
        assert!(matches!(t.notify("n", None).await, Err(TransportError::NotConnected)));
        assert!(probe.errors.try_recv().is_err());
    }

    #[tokio::test]
    async fn redirects_only_to_the_same_origin() {
        let mut server = TestServer::start().await;
        let mut other = TestServer::start().await;
        let (t, _probe) = connect(&server.url, 2000).await;
        let (r, ()) = tokio::join!(t.request("a", None, RequestOptions::default()), async {
            let loc = format!("{}/moved", server.base);
            server.next().await.respond(307, &[("Location", &loc)], "").await;
            let moved = server.next().await;
            assert_eq!(
                (moved.method.as_str(), moved.path.as_str(), moved.rpc_method().as_str()),
                ("POST", "/moved", "a")
            );
            moved.json_reply(ok(1, json!("here"))).await;
        });
        assert_eq!(r.expect("followed"), json!("here"));
        let (r, ()) = tokio::join!(t.request("b", None, RequestOptions::default()), async {
            let loc = format!("{}/steal", other.base);
            server.next().await.respond(308, &[("Location", &loc)], "").await;
        });
        let text = r.expect_err("refused").to_string();
        assert!(text.contains("refusing cross-origin redirect"), "{text}");
        // Nothing reached the other origin: its next request is one we send ourselves.
        let probe_client = reqwest::Client::builder().no_proxy().build().expect("client");
        let (_, ()) = tokio::join!(probe_client.get(&other.url).send(), async {
            assert_eq!(other.next().await.method, "GET");
        });
    }
}
