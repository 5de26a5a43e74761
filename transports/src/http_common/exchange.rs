//! The state every HTTP-kind transport has ([`HttpCore`]) and the flows both run alike: a
//! request under its one timeout budget (SPEC §2), notifications, answers to server
//! requests, and `notifications/cancelled` when a caller gives up.

use super::auth::{AuthHeaders, AuthRefresh};
use super::client::build_client;
use crate::config::TransportConfig;
use crate::error::TransportError;
use crate::message::{self, RequestId};
use crate::pending::{self, Correlator, Routed};
use crate::sse::SseEvent;
use crate::transport::{Handlers, Reply, RequestOptions};
use bytes::Bytes;
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;
use url::Url;

/// Upper bound on close-time and cancellation traffic (DELETE, notifications/cancelled).
const CLEANUP_BOUND: Duration = Duration::from_secs(1);

/// The OAuth authorizer of `url` when the configuration has an authorization client.
fn authorizer(url: &Url, config: &TransportConfig) -> Result<Option<crate::oauth::Authorizer>, TransportError> {
    config.oauth.as_ref().map(|o| crate::oauth::Authorizer::new(o, url, &config.protocol_version)).transpose()
}

/// What both HTTP-kind transports keep, whatever their wire shape.
pub(crate) struct HttpCore {
    /// The client with the same-origin redirect policy.
    pub(crate) client: reqwest::Client,
    /// Configured and refreshed headers.
    pub(crate) auth: AuthHeaders,
    /// Ids, pending requests, handlers, counters.
    pub(crate) correlator: Correlator,
    /// The connection's resolved timeout (`None`: disabled).
    pub(crate) timeout: Option<Duration>,
    /// The cap on one inbound message.
    pub(crate) max_bytes: usize,
    connected: AtomicBool,
    /// Cancelled on close: stops listeners, reply streams, resumptions and answers.
    pub(crate) shutdown: CancellationToken,
}

impl HttpCore {
    /// Builds the client and validates the configured headers. `connected` says whether
    /// requests may be sent at once (Streamable HTTP has no connect step; legacy SSE waits
    /// for its `endpoint` event and then calls [`Self::mark_connected`]).
    pub(crate) fn new(
        url: &Url,
        config: &TransportConfig,
        handlers: Handlers,
        auth_refresh: Option<AuthRefresh>,
        connected: bool,
    ) -> Result<Self, TransportError> {
        Ok(HttpCore {
            client: build_client(url)?,
            auth: AuthHeaders::new(&config.headers, auth_refresh, authorizer(url, config)?)?,
            correlator: Correlator::new(handlers, config.string_ids),
            timeout: config.timeout(),
            max_bytes: config.max_message_bytes(),
            connected: AtomicBool::new(connected),
            shutdown: CancellationToken::new(),
        })
    }

    /// Whether requests can be sent.
    pub(crate) fn is_connected(&self) -> bool {
        self.connected.load(Ordering::SeqCst) && !self.correlator.is_closed()
    }

    /// The connect step finished: requests may be sent.
    pub(crate) fn mark_connected(&self) {
        self.connected.store(true, Ordering::SeqCst);
    }

    /// Disconnects: background tasks stop, pending requests fail with `err`, the close
    /// handler fires once. Returns false when it had already closed.
    pub(crate) fn shut(&self, err: TransportError) -> bool {
        self.shutdown.cancel();
        if !self.connected.swap(false, Ordering::SeqCst) {
            return false;
        }
        self.correlator.close(err)
    }

    /// How long close-time and cancellation traffic may take: at most a second, and never
    /// longer than the connection's timeout.
    pub(crate) fn cleanup_bound(&self) -> Duration {
        self.timeout.map_or(CLEANUP_BOUND, |t| t.min(CLEANUP_BOUND))
    }
}

/// What differs between the HTTP-kind transports; everything else is in this module.
pub(crate) trait HttpKind: Send + Sync + 'static {
    /// The shared state.
    fn core(&self) -> &HttpCore;

    /// Delivers one registered request (`body` is its JSON-RPC object) and waits for what
    /// carries its reply. Every failure settles `id` through the correlator; the caller's
    /// wait owns the timeout, and the transport's shutdown stops it.
    fn exchange(self: Arc<Self>, id: RequestId, body: Bytes, is_init: bool) -> BoxFuture<'static, ()>;

    /// POSTs a notification, an answer or a cancellation; any 2xx is success.
    fn post_message<'a>(&'a self, body: &'a Bytes) -> BoxFuture<'a, Result<(), TransportError>>;

    /// [`Transport::close`](crate::Transport::close): [`HttpCore::shut`], plus what the kind
    /// does the first time.
    fn close(&self) -> BoxFuture<'_, ()>;

    /// [`Transport::set_protocol_version`](crate::Transport::set_protocol_version). Default:
    /// nothing.
    fn set_protocol_version(&self, version: &str) {
        let _ = version;
    }

    /// Whether giving up on a request POSTs `notifications/cancelled` (default yes; on
    /// 2026-07-28 Streamable HTTP closing the reply stream is the whole cancellation).
    fn posts_cancelled(&self) -> bool {
        true
    }

    /// [`Transport::mirrors_param_headers`](crate::Transport::mirrors_param_headers).
    fn mirrors_param_headers(&self) -> bool {
        false
    }

    /// [`Transport::fall_back_to_stateful`](crate::Transport::fall_back_to_stateful).
    fn fall_back_to_stateful(&self) -> bool {
        false
    }

    /// [`Transport::set_tool_param_headers`](crate::Transport::set_tool_param_headers).
    fn set_tool_param_headers(&self, tools: Vec<(String, Vec<crate::param_headers::Annotation>)>) {
        let _ = tools;
    }

    /// [`Transport::on_initialized`](crate::Transport::on_initialized). Default: nothing.
    fn on_initialized(self: &Arc<Self>) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// Sends a request and waits for its reply under its one timeout budget (SPEC §2). On
/// timeout or cancellation the exchange is aborted, which closes its response stream, and
/// the server is told with `notifications/cancelled` (never for `initialize`); a caller
/// that drops the future mid-wait does the same.
pub(crate) async fn request<K: HttpKind>(
    inner: &Arc<K>,
    method: &str,
    params: Option<Value>,
    options: RequestOptions,
) -> Reply {
    let core = inner.core();
    if !core.is_connected() {
        return Err(TransportError::NotConnected);
    }
    let (id, rx) = core.correlator.open_request()?;
    options.announce(&id);
    let body = Bytes::from(message::request(&id, method, params.as_ref()));
    let is_init = method == "initialize";
    let task = {
        let (inner, id) = (inner.clone(), id.clone());
        tokio::spawn(async move {
            let shutdown = inner.core().shutdown.clone();
            tokio::select! {
                _ = shutdown.cancelled() => {}
                _ = inner.exchange(id, body, is_init) => {}
            }
        })
    };
    await_exchange(inner, id, rx, task.abort_handle(), is_init, &options).await
}

/// Sends a notification, bounded by the connection timeout.
pub(crate) async fn notify<K: HttpKind>(inner: &K, method: &str, params: Option<Value>) -> Result<(), TransportError> {
    let core = inner.core();
    if !core.is_connected() {
        return Err(TransportError::NotConnected);
    }
    let body = Bytes::from(message::notification(method, params).to_string());
    tokio::select! {
        _ = core.shutdown.cancelled() => Err(TransportError::Closed { reason: None }),
        r = with_timeout(core.timeout, inner.post_message(&body)) => r,
    }
}

/// Routes one inbound message; server requests are answered by POST in the background.
pub(crate) fn route<K: HttpKind>(inner: &Arc<K>, value: Value) {
    if let Routed::ServerRequest { id, method, params } = inner.core().correlator.route(value) {
        let inner = inner.clone();
        tokio::spawn(async move {
            let core = inner.core();
            let answer = core.correlator.answer(&id, method, params).await;
            let body = Bytes::from(answer.to_string());
            tokio::select! {
                _ = core.shutdown.cancelled() => {}
                r = with_timeout(core.timeout, inner.post_message(&body)) => if let Err(e) = r {
                    core.correlator.report(&e);
                }
            }
        });
    }
}

/// Tells the server we gave up on `id` (SPEC §2), bounded in time; failure is reported.
/// Nothing is sent once the transport has closed.
async fn send_cancelled<K: HttpKind>(inner: &K, id: &RequestId, reason: &str) {
    let core = inner.core();
    if !core.is_connected() || !inner.posts_cancelled() {
        return;
    }
    let body = Bytes::from(message::cancelled(id, reason).to_string());
    match tokio::time::timeout(core.cleanup_bound(), inner.post_message(&body)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => core.correlator.report(&e),
        Err(_) => tracing::debug!("notifications/cancelled POST timed out"),
    }
}

/// Waits for a registered request whose exchange runs in `task` (see [`request`]).
async fn await_exchange<K: HttpKind>(
    inner: &Arc<K>,
    id: RequestId,
    rx: oneshot::Receiver<Reply>,
    task: AbortHandle,
    is_init: bool,
    options: &RequestOptions,
) -> Reply {
    let core = inner.core();
    let mut guard = {
        let (forget_inner, forget_id) = (inner.clone(), id.clone());
        let (cancel_inner, cancel_id) = (inner.clone(), id.clone());
        let cancel: Option<BoxFuture<'static, ()>> = (!is_init).then(|| {
            Box::pin(async move { send_cancelled(&*cancel_inner, &cancel_id, "request abandoned by the caller").await })
                as _
        });
        AbandonGuard::new(task.clone(), move || forget_inner.core().correlator.forget(&forget_id, true), cancel)
    };
    let timeout = pending::effective_timeout(core.timeout, options);
    let outcome = pending::wait_reply(&core.correlator, &id, rx, timeout, options).await;
    guard.disarm();
    match outcome {
        // On success the exchange task keeps draining the reply stream.
        Ok(reply) => reply,
        Err(gave_up) => {
            // Aborting the exchange closes the request's response stream.
            task.abort();
            // Conservative: the POST may have left before the clock ran out.
            let err = gave_up.into_error(true);
            if !is_init {
                send_cancelled(&**inner, &id, &err.to_string()).await;
            }
            Err(err)
        }
    }
}

/// Runs a cleanup if dropped while armed: when the caller drops a request future mid-wait,
/// the request's exchange is aborted, its id counts as abandoned and the server is told, as
/// for cancellation.
struct AbandonGuard(Option<Box<dyn FnOnce() + Send>>);

impl AbandonGuard {
    /// Arms the guard for a request whose exchange is `task`; `cancel` sends
    /// `notifications/cancelled` (`None` for initialize).
    fn new(
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
    fn disarm(&mut self) {
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
