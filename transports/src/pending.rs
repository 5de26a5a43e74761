//! Id allocation, the pending-request map and inbound dispatch (SPEC §2), shared by every
//! transport so that all of them correlate, drop and report alike.

use crate::error::TransportError;
use crate::message::{Inbound, RequestId, RpcError};
use crate::transport::{Diagnostics, Handlers, Reply, RequestOptions};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;
use tokio::sync::oneshot;

/// How many abandoned (timed out / cancelled) ids are remembered to recognise late replies.
const ABANDONED_MEMORY: usize = 1024;

/// Where an inbound message went.
#[derive(Debug, Clone, PartialEq)]
pub enum Routed {
    /// It settled a pending request.
    Settled,
    /// It was a notification, handed to the notification handler.
    Notification,
    /// It is a server-to-client request the transport must answer (see [`Correlator::answer`]).
    ServerRequest {
        /// The server's id.
        id: RequestId,
        /// The method.
        method: String,
        /// The params.
        params: Value,
    },
    /// It was dropped (late, unknown, invalid) and reported.
    Dropped,
}

/// The state every transport shares: ids, pending requests, handlers, counters.
pub struct Correlator {
    next_id: AtomicI64,
    string_ids: bool,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Reply>>>,
    abandoned: Mutex<VecDeque<RequestId>>,
    diagnostics: Mutex<Diagnostics>,
    handlers: Handlers,
    closed: AtomicBool,
}

impl Correlator {
    /// A fresh correlator; ids start at 1.
    pub fn new(handlers: Handlers, string_ids: bool) -> Self {
        Correlator {
            next_id: AtomicI64::new(1),
            string_ids,
            pending: Mutex::new(HashMap::new()),
            abandoned: Mutex::new(VecDeque::new()),
            diagnostics: Mutex::new(Diagnostics::default()),
            handlers,
            closed: AtomicBool::new(false),
        }
    }

    /// The handlers this transport reports through.
    pub fn handlers(&self) -> &Handlers {
        &self.handlers
    }

    /// The next id; never repeats within this correlator.
    pub fn next_id(&self) -> RequestId {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        if self.string_ids { RequestId::String(n.to_string()) } else { RequestId::Number(n) }
    }

    /// Registers a pending request; the receiver gets its response or its failure.
    pub fn register(&self, id: RequestId) -> oneshot::Receiver<Reply> {
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        rx
    }

    /// Allocates an id and registers it, unless the transport has closed: a request
    /// registered after [`Self::close`] drained the map would never be settled.
    pub fn open_request(&self) -> Result<(RequestId, oneshot::Receiver<Reply>), TransportError> {
        let id = self.next_id();
        let rx = self.register(id.clone());
        if self.is_closed() {
            self.forget(&id, false);
            return Err(TransportError::NotConnected);
        }
        Ok((id, rx))
    }

    /// Removes a pending request without settling it (write failed, or the caller gave up).
    /// With `abandoned`, a later response for it counts as late rather than unknown.
    pub fn forget(&self, id: &RequestId, abandoned: bool) {
        lock(&self.pending).remove(id);
        if abandoned {
            let mut memory = lock(&self.abandoned);
            if memory.len() == ABANDONED_MEMORY {
                memory.pop_front();
            }
            memory.push_back(id.clone());
        }
    }

    /// Fails one pending request with `err` (e.g. an HTTP reply stream that ended early).
    pub fn fail(&self, id: &RequestId, err: TransportError) {
        if let Some(tx) = lock(&self.pending).remove(id) {
            let _ = tx.send(Err(err));
        }
    }

    /// Whether `id` is still waiting for its response.
    pub fn is_pending(&self, id: &RequestId) -> bool {
        lock(&self.pending).contains_key(id)
    }

    /// Rejects every pending request with `err` and fires the close handler, once.
    /// Returns false when the correlator had already closed.
    pub fn close(&self, err: TransportError) -> bool {
        if self.closed.swap(true, Ordering::SeqCst) {
            return false;
        }
        let drained: Vec<_> = lock(&self.pending).drain().collect();
        for (_, tx) in drained {
            let _ = tx.send(Err(err.clone()));
        }
        if let Some(on_close) = &self.handlers.on_close {
            on_close();
        }
        true
    }

    /// Whether [`Self::close`] has run.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Routes one parsed inbound value by SPEC §2's rules. Never panics, never closes.
    pub fn route(&self, value: &Value) -> Routed {
        match Inbound::classify(value) {
            Inbound::Response { id, result } => self.settle(id, Ok(result)),
            Inbound::ErrorResponse { id: Some(id), error } => self.settle(id, Err(TransportError::Rpc(error))),
            Inbound::ErrorResponse { id: None, error } => {
                self.violation(format!("error response with a null id: {} {}", error.code, error.message));
                Routed::Dropped
            }
            Inbound::Notification { method, params } => {
                if let Some(h) = &self.handlers.on_notification {
                    h(&method, &params);
                }
                Routed::Notification
            }
            Inbound::Request { id, method, params } => Routed::ServerRequest { id, method, params },
            Inbound::Invalid(why) => {
                self.violation(format!("not a JSON-RPC message: {why}"));
                Routed::Dropped
            }
        }
    }

    fn settle(&self, id: RequestId, reply: Reply) -> Routed {
        let waiter = lock(&self.pending).remove(&id);
        match waiter {
            Some(tx) => {
                let _ = tx.send(reply);
                Routed::Settled
            }
            None => {
                let late = lock(&self.abandoned).contains(&id);
                let mut d = lock(&self.diagnostics);
                if late {
                    d.late_responses += 1;
                } else {
                    d.unknown_responses += 1;
                }
                drop(d);
                let what = if late { "late response for abandoned request" } else { "response with unknown id" };
                self.report(&TransportError::Protocol(format!("{what} {}", describe_id(&id))));
                Routed::Dropped
            }
        }
    }

    /// Answers a server-to-client request through the request handler (`-32601` without one).
    /// Returns the response object to send back.
    pub async fn answer(&self, id: &RequestId, method: String, params: Value) -> Value {
        let outcome = match &self.handlers.on_request {
            Some(h) => h(method, params).await,
            None => Err(RpcError::method_not_found(&method)),
        };
        crate::message::response(id, outcome)
    }

    /// Counts and reports a dropped inbound message.
    pub fn violation(&self, message: String) {
        lock(&self.diagnostics).protocol_violations += 1;
        self.report(&TransportError::Protocol(message));
    }

    /// Counts and reports a message dropped for its size.
    pub fn oversize(&self, limit: usize) {
        lock(&self.diagnostics).oversize_dropped += 1;
        self.report(&TransportError::MessageTooLarge { limit });
    }

    /// Hands an error to the error handler.
    pub fn report(&self, err: &TransportError) {
        tracing::debug!(error = %err, "transport report");
        if let Some(h) = &self.handlers.on_error {
            h(err);
        }
    }

    /// Mutable access to the counters (e.g. for stderr capture).
    pub fn with_diagnostics<R>(&self, f: impl FnOnce(&mut Diagnostics) -> R) -> R {
        f(&mut lock(&self.diagnostics))
    }

    /// A snapshot of the counters.
    pub fn diagnostics(&self) -> Diagnostics {
        lock(&self.diagnostics).clone()
    }
}

/// Why a wait ended without a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GaveUp {
    /// The timeout fired.
    Timeout(u64),
    /// The caller cancelled.
    Cancelled,
}

/// Waits for a registered request's reply, bounded by `timeout` and the caller's token.
/// On timeout or cancellation the request is forgotten (a later reply counts as late) and
/// `Err(GaveUp)` tells the transport to notify the server as its SPEC section says.
pub async fn wait_reply(
    correlator: &Correlator,
    id: &RequestId,
    rx: oneshot::Receiver<Reply>,
    timeout: Option<Duration>,
    options: &RequestOptions,
) -> Result<Reply, GaveUp> {
    let cancel = options.cancel.clone().unwrap_or_default();
    let timer = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        reply = rx => Ok(reply.unwrap_or(Err(TransportError::Closed { reason: None }))),
        _ = cancel.cancelled() => {
            correlator.forget(id, true);
            Err(GaveUp::Cancelled)
        }
        _ = timer => {
            correlator.forget(id, true);
            Err(GaveUp::Timeout(timeout.map(|t| t.as_millis() as u64).unwrap_or_default()))
        }
    }
}

/// The effective timeout for one request: the per-request override, else the connection's.
pub fn effective_timeout(connection: Option<Duration>, options: &RequestOptions) -> Option<Duration> {
    match options.timeout_ms {
        Some(0) => None,
        Some(ms) => Some(Duration::from_millis(ms)),
        None => connection,
    }
}

fn describe_id(id: &RequestId) -> String {
    match id {
        RequestId::Number(n) => n.to_string(),
        RequestId::String(s) => format!("{s:?}"),
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means another thread panicked mid-update of plain data; the data
    // is still usable and the harness must keep reporting rather than cascade the panic.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn settles_by_id_and_counts_late_and_unknown() {
        let c = Correlator::new(Handlers::default(), false);
        let id = c.next_id();
        let rx = c.register(id.clone());
        assert_eq!(c.route(&json!({"jsonrpc":"2.0","id":"1","result":{}})), Routed::Dropped);
        assert_eq!(c.route(&json!({"jsonrpc":"2.0","id":1,"result":{"ok":true}})), Routed::Settled);
        assert_eq!(rx.await.expect("sent").expect("ok"), json!({"ok": true}));
        let id2 = c.next_id();
        let _rx2 = c.register(id2.clone());
        c.forget(&id2, true);
        assert_eq!(c.route(&json!({"jsonrpc":"2.0","id":2,"result":{}})), Routed::Dropped);
        let d = c.diagnostics();
        assert_eq!((d.late_responses, d.unknown_responses), (1, 1));
    }

    #[test]
    fn string_ids_never_repeat() {
        let c = Correlator::new(Handlers::default(), true);
        assert_eq!(c.next_id(), RequestId::String("1".into()));
        assert_eq!(c.next_id(), RequestId::String("2".into()));
    }
}
