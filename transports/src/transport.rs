//! The [`Transport`] trait every bundled transport implements (SPEC §2), and the handlers
//! through which it reports what it cannot return to a caller.

use crate::error::TransportError;
use crate::message::{RequestId, RpcError};
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::{Arc, Mutex, PoisonError};
use tokio_util::sync::CancellationToken;

/// What a request resolves to: the response's `result`, or why there is none.
pub type Reply = Result<Value, TransportError>;

/// Called once when the transport closes, whatever the cause.
pub type CloseHandler = Arc<dyn Fn() + Send + Sync>;
/// Called for every problem no caller will see: protocol violations, dropped lines, late or
/// unknown responses, listener failures.
pub type ErrorHandler = Arc<dyn Fn(&TransportError) + Send + Sync>;
/// Called for every server notification: `(method, params)`.
pub type NotificationHandler = Arc<dyn Fn(&str, &Value) + Send + Sync>;
/// Answers a server-to-client request: `(method, params)` → result or JSON-RPC error.
pub type RequestHandler = Arc<dyn Fn(String, Value) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// The callbacks a transport reports through. All optional; a server request with no
/// `on_request` handler is answered `-32601 Method not found`.
#[derive(Clone, Default)]
pub struct Handlers {
    /// See [`CloseHandler`].
    pub on_close: Option<CloseHandler>,
    /// See [`ErrorHandler`].
    pub on_error: Option<ErrorHandler>,
    /// See [`NotificationHandler`].
    pub on_notification: Option<NotificationHandler>,
    /// See [`RequestHandler`].
    pub on_request: Option<RequestHandler>,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("on_close", &self.on_close.is_some())
            .field("on_error", &self.on_error.is_some())
            .field("on_notification", &self.on_notification.is_some())
            .field("on_request", &self.on_request.is_some())
            .finish()
    }
}

/// Per-request options.
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// Overrides the connection's resolved timeout for this request; `Some(0)` disables it.
    pub timeout_ms: Option<u64>,
    /// Cancelling this token rejects the request and tells the server (SPEC §2).
    pub cancel: Option<CancellationToken>,
    /// The request's `_meta.progressToken`, whose `notifications/progress` may reset the
    /// timeout (see [`RequestOptions::for_params`], which reads it from the params).
    pub progress_token: Option<Value>,
    /// Each progress notification for [`Self::progress_token`] restarts the timeout.
    pub reset_timeout_on_progress: bool,
    /// A bound on the whole request that progress never extends (`None`: no bound).
    pub max_total_timeout_ms: Option<u64>,
    /// Filled with the request's id before it is sent (each attempt overwrites it); one slot
    /// per request.
    pub sent_id: Option<SentId>,
}

/// Where a caller learns the JSON-RPC id its request went out with. Needed where a server
/// refers back to the request by id: a `subscriptions/listen`'s notifications carry it as
/// their subscription id.
#[derive(Debug, Clone, Default)]
pub struct SentId(Arc<Mutex<Option<RequestId>>>);

impl SentId {
    /// The id of the latest attempt, once one was sent.
    pub fn get(&self) -> Option<RequestId> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Whether `other` is this very slot (not merely one holding the same id).
    pub(crate) fn same_slot(&self, other: &SentId) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub(crate) fn set(&self, id: &RequestId) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(id.clone());
    }
}

impl RequestOptions {
    /// These options with the progress token taken from `params._meta.progressToken`.
    pub fn for_params(mut self, params: Option<&Value>) -> Self {
        self.progress_token = params.and_then(|p| p.pointer("/_meta/progressToken")).cloned();
        self
    }

    /// Tells [`Self::sent_id`], if any, that the request goes out as `id`.
    pub(crate) fn announce(&self, id: &RequestId) {
        if let Some(slot) = &self.sent_id {
            slot.set(id);
        }
    }
}

/// Counters and buffers a transport keeps for diagnostics; the harness reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Responses that arrived for a request already timed out or cancelled (dropped).
    pub late_responses: u64,
    /// Responses whose id matched no request, ever (dropped).
    pub unknown_responses: u64,
    /// Inbound messages dropped as malformed or not JSON-RPC.
    pub protocol_violations: u64,
    /// Inbound messages dropped for exceeding the size cap.
    pub oversize_dropped: u64,
    /// The last bytes the server wrote to stderr (stdio only), lossily decoded.
    pub stderr_tail: String,
}

/// A connected (or once-connected) MCP transport. Implementations are cheap to share
/// behind an `Arc`; every method takes `&self`.
#[async_trait::async_trait]
pub trait Transport: Send + Sync {
    /// Sends a request and waits for its response, its timeout or its cancellation.
    async fn request(&self, method: &str, params: Option<Value>, options: RequestOptions) -> Reply;

    /// Sends a notification. A write failure is returned, never swallowed.
    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), TransportError>;

    /// Closes the transport: pending requests fail with `Transport closed`, the close handler
    /// fires once, and every resource (process, sockets) is released. Bounded in time.
    async fn close(&self);

    /// Whether requests can be sent.
    fn is_connected(&self) -> bool;

    /// A snapshot of the diagnostic counters.
    fn diagnostics(&self) -> Diagnostics;

    /// The protocol revision negotiated for this transport, once known (HTTP transports use
    /// it for `MCP-Protocol-Version`); the client sets it after `initialize`.
    fn set_protocol_version(&self, _version: &str) {}

    /// Called by the client after `notifications/initialized` (HTTP starts its GET listener).
    async fn on_initialized(&self) {}

    /// Whether this transport mirrors `x-mcp-header` tool parameters into `Mcp-Param-*`
    /// headers (2026-07-28 Streamable HTTP), and so must refuse tools whose annotations
    /// are invalid.
    fn mirrors_param_headers(&self) -> bool {
        false
    }

    /// A modern-revision transport whose server turned out legacy switches to the stateful
    /// shape (session, GET listener…) before the client's `initialize`; false when it
    /// cannot.
    fn fall_back_to_stateful(&self) -> bool {
        false
    }

    /// The `x-mcp-header` annotations of tools, by tool name, learnt from `tools/list`;
    /// they replace earlier ones of the same tools.
    fn set_tool_param_headers(&self, _tools: Vec<(String, Vec<crate::param_headers::Annotation>)>) {}
}
