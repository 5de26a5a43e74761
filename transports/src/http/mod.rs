//! Streamable HTTP, stateful revisions 2025-03-26 / 2025-06-18 / 2025-11-25 (SPEC §4).
//!
//! Every message is one POST. A request's reply is either one `application/json` body or
//! an SSE stream that may carry notifications and server-to-client requests before the
//! response; the stream is read by a background task per request, which settles the
//! request through the shared [`Correlator`](crate::pending::Correlator) and keeps draining after the match. An
//! optional GET stream (started by
//! [`Transport::on_initialized`](crate::Transport::on_initialized)) carries unsolicited
//! server messages. Streams that break after an event with an `id` are resumed with
//! GET + `Last-Event-ID`; an accepted POST is never re-sent.
//!
//! This file holds the transport itself (its state, connect, what its
//! [`Transport`](crate::Transport) methods do that the legacy transport's do not, and how
//! one message is POSTed); the rest of the life of an exchange is in pieces:
//!
//! - `session` — `Mcp-Session-Id`, the negotiated revision, the protocol headers of every
//!   exchange, the DELETE at close.
//! - `reply` — a request's POST and its answer: a validated JSON body, or an SSE stream.
//! - `stream` — reading SSE streams and resuming them with GET + `Last-Event-ID`.
//! - `listener` — the optional GET stream for unsolicited server messages.
//!
//! The HTTP plumbing shared with the legacy transport (client, auth, status errors,
//! capped body reads, the request/notification/cancellation flows, the `Transport` impl)
//! is in `http_common`.
//!
//! 2026-07-28 (stateless, `mirror`): the same POST and reply flows, with every request's
//! metadata headers mirrored from its body; no session, no GET listener, no DELETE, no
//! resumption, and cancellation is closing the reply stream alone (no
//! `notifications/cancelled` POST). A non-2xx whose body is the request's JSON-RPC error
//! (400 + -32022, 404 + -32601…) settles the request with that error, so the client layer
//! can negotiate on it.

mod listener;
pub mod mirror;
mod reply;
mod session;
mod stream;

use crate::config::TransportConfig;
use crate::error::TransportError;
use crate::http_common::{HttpCore, HttpFront, HttpKind, parse_url, status_error};
use crate::message::RequestId;
use crate::param_headers::Annotation;
use crate::pending::lock;
use crate::transport::Handlers;
use bytes::Bytes;
use futures::future::BoxFuture;
use session::Outbound;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::DropGuard;
use url::Url;

pub use crate::http_common::{AuthRefresh, ERROR_BODY_LIMIT};
pub use stream::MAX_RESUME_ATTEMPTS;

/// The only revision that still allowed JSON-RPC batches.
const BATCH_REVISION: &str = "2025-03-26";

const EVENT_STREAM: &str = "text/event-stream";

/// The Streamable HTTP transport. Cheap to share; see the module docs. It implements
/// [`Transport`](crate::Transport) as the legacy transport does (`http_common`).
pub struct HttpTransport {
    inner: Arc<Inner>,
    /// Background tasks hold the inner state; dropping the transport must stop them.
    _stop_on_drop: DropGuard,
}

/// The state the transport and its background tasks share.
pub(crate) struct Inner {
    core: HttpCore,
    /// The configured URL: every POST, GET and DELETE goes here.
    url: Url,
    /// The revision asked for, in force until one is negotiated.
    configured_revision: String,
    /// `Mcp-Session-Id` from the initialize response (see `session`).
    session_id: Mutex<Option<String>>,
    /// The revision the client negotiated (see
    /// [`Transport::set_protocol_version`](crate::Transport::set_protocol_version)).
    negotiated: Mutex<Option<String>>,
    /// The GET listener is started once, after `notifications/initialized`.
    listener_started: AtomicBool,
    /// A modern revision (2026-07-28+): see the module docs. Cleared when the client falls
    /// back to the stateful handshake (a legacy server).
    stateless: AtomicBool,
    /// `x-mcp-header` annotations by tool name (2026-07-28), for `Mcp-Param-*`.
    pub(crate) tool_params: Mutex<HashMap<String, Vec<Annotation>>>,
}

impl HttpFront for HttpTransport {
    type Kind = Inner;

    fn kind(&self) -> &Arc<Inner> {
        &self.inner
    }
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
        let url = parse_url(&config.url)?;
        let inner = Inner {
            core: HttpCore::new(&url, config, handlers, auth_refresh, true)?,
            url,
            configured_revision: config.protocol_version.clone(),
            session_id: Mutex::new(None),
            negotiated: Mutex::new(None),
            listener_started: AtomicBool::new(false),
            stateless: AtomicBool::new(crate::stateless::is_modern(&config.protocol_version)),
            tool_params: Mutex::new(HashMap::new()),
        };
        let stop = inner.core.shutdown.clone().drop_guard();
        Ok(Arc::new(HttpTransport { inner: Arc::new(inner), _stop_on_drop: stop }))
    }

    /// The session id the server assigned at initialize, if any.
    pub fn session_id(&self) -> Option<String> {
        self.inner.session()
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

impl Inner {
    /// Whether the transport speaks the stateless revision now.
    pub(crate) fn is_stateless(&self) -> bool {
        self.stateless.load(Ordering::SeqCst)
    }

    /// Closes the transport (see [`HttpCore::shut`]) and, the first time, ends the session.
    async fn shut(&self, err: TransportError) {
        if self.core.shut(err) {
            self.delete_session().await;
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

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shut(TransportError::Closed { reason: None }))
    }

    fn set_protocol_version(&self, version: &str) {
        *lock(&self.negotiated) = Some(version.to_owned());
    }

    fn posts_cancelled(&self) -> bool {
        !self.is_stateless()
    }

    fn mirrors_param_headers(&self) -> bool {
        self.is_stateless()
    }

    fn fall_back_to_stateful(&self) -> bool {
        self.stateless.store(false, Ordering::SeqCst);
        true
    }

    fn set_tool_param_headers(&self, tools: Vec<(String, Vec<Annotation>)>) {
        lock(&self.tool_params).extend(tools);
    }

    /// Starts the GET listener, once.
    fn on_initialized(self: &Arc<Self>) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.core.is_connected() && !self.is_stateless() && !self.listener_started.swap(true, Ordering::SeqCst) {
                self.start_listener().await;
            }
        })
    }
}
