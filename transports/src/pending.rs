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
use tokio::sync::{Notify, oneshot};

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
    /// Progress notifications seen per watched `progressToken` (its JSON text), so a
    /// request that resets its timeout on progress can tell a new one arrived.
    progress: Mutex<HashMap<String, u64>>,
    progressed: Notify,
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
            progress: Mutex::new(HashMap::new()),
            progressed: Notify::new(),
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
    pub fn route(&self, value: Value) -> Routed {
        self.route_inbound(Inbound::from_value(value))
    }

    /// [`Self::route`] for a message already classified (parsed straight from its text).
    pub fn route_inbound(&self, inbound: Inbound) -> Routed {
        match inbound {
            Inbound::Response { id, result } => self.settle(id, Ok(result)),
            Inbound::ErrorResponse { id: Some(id), error } => self.settle(id, Err(TransportError::Rpc(error))),
            Inbound::ErrorResponse { id: None, error } => {
                self.violation(format!("error response with a null id: {} {}", error.code, error.message));
                Routed::Dropped
            }
            Inbound::Notification { method, params } => {
                if method == "notifications/progress" {
                    self.count_progress(&params);
                }
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

    fn count_progress(&self, params: &Value) {
        let Some(token) = params.get("progressToken") else { return };
        if let Some(n) = lock(&self.progress).get_mut(&token.to_string()) {
            *n += 1;
            self.progressed.notify_waiters();
        }
    }

    fn progress_seen(&self, key: &str) -> u64 {
        lock(&self.progress).get(key).copied().unwrap_or_default()
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
    /// The request's total bound (`max_total_timeout_ms`) expired.
    TotalTimeout(u64),
    /// The caller cancelled.
    Cancelled,
}

impl GaveUp {
    /// The caller's error; `sent` says whether the request had been written.
    pub fn into_error(self, sent: bool) -> TransportError {
        match self {
            GaveUp::Timeout(ms) => TransportError::Timeout { ms, sent },
            GaveUp::TotalTimeout(ms) => TransportError::TotalTimeout { ms, sent },
            GaveUp::Cancelled => TransportError::Cancelled { reason: None },
        }
    }
}

/// Unwatches a progress token when its wait ends, however it ends.
struct ProgressWatch<'a> {
    correlator: &'a Correlator,
    key: Option<String>,
}

impl Drop for ProgressWatch<'_> {
    fn drop(&mut self) {
        if let Some(key) = &self.key {
            lock(&self.correlator.progress).remove(key);
        }
    }
}

/// Waits for a registered request's reply, bounded by `timeout` and the caller's token.
/// With `reset_timeout_on_progress`, each `notifications/progress` for the request's token
/// restarts `timeout`, but never past `max_total_timeout_ms` (SPEC §2). On expiry or
/// cancellation the request is forgotten (a later reply counts as late) and `Err(GaveUp)`
/// tells the transport to notify the server as its SPEC section says.
pub async fn wait_reply(
    correlator: &Correlator,
    id: &RequestId,
    mut rx: oneshot::Receiver<Reply>,
    timeout: Option<Duration>,
    options: &RequestOptions,
) -> Result<Reply, GaveUp> {
    // No token, no cancellation: nothing to allocate per request.
    let cancelled = async {
        match &options.cancel {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(cancelled);
    let started = tokio::time::Instant::now();
    let total = options.max_total_timeout_ms.map(|ms| (ms, started + Duration::from_millis(ms)));
    let watch = ProgressWatch {
        correlator,
        key: options.reset_timeout_on_progress.then_some(options.progress_token.as_ref()).flatten().map(|t| {
            let key = t.to_string();
            lock(&correlator.progress).insert(key.clone(), 0);
            key
        }),
    };
    let mut idle_deadline = timeout.map(|t| started + t);
    let mut seen = 0;
    loop {
        let progressed = correlator.progressed.notified();
        if let Some(key) = &watch.key {
            let now_seen = correlator.progress_seen(key);
            if now_seen != seen {
                seen = now_seen;
                idle_deadline = timeout.map(|t| tokio::time::Instant::now() + t);
            }
        }
        // The earlier of the two bounds fires, and names itself.
        let (deadline, gave_up) = match (idle_deadline, total) {
            (Some(idle), Some((ms, end))) if end <= idle => (Some(end), GaveUp::TotalTimeout(ms)),
            (None, Some((ms, end))) => (Some(end), GaveUp::TotalTimeout(ms)),
            (idle, _) => (idle, GaveUp::Timeout(timeout.map(|t| t.as_millis() as u64).unwrap_or_default())),
        };
        let timer = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            reply = &mut rx => return Ok(reply.unwrap_or(Err(TransportError::Closed { reason: None }))),
            _ = &mut cancelled => {
                correlator.forget(id, true);
                return Err(GaveUp::Cancelled);
            }
            _ = timer => {
                correlator.forget(id, true);
                return Err(gave_up);
            }
            _ = progressed, if watch.key.is_some() => {}
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
        assert_eq!(c.route(json!({"jsonrpc":"2.0","id":"1","result":{}})), Routed::Dropped);
        assert_eq!(c.route(json!({"jsonrpc":"2.0","id":1,"result":{"ok":true}})), Routed::Settled);
        assert_eq!(rx.await.expect("sent").expect("ok"), json!({"ok": true}));
        let id2 = c.next_id();
        let _rx2 = c.register(id2.clone());
        c.forget(&id2, true);
        assert_eq!(c.route(json!({"jsonrpc":"2.0","id":2,"result":{}})), Routed::Dropped);
        let d = c.diagnostics();
        assert_eq!((d.late_responses, d.unknown_responses), (1, 1));
    }

    fn progress(c: &Correlator, token: i64) {
        c.route(
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":1}}),
        );
    }

    #[tokio::test(start_paused = true)]
    async fn progress_resets_the_timeout_only_when_asked() {
        // Without reset: the 100 ms timeout fires at 100 despite progress at 80.
        let options = RequestOptions { progress_token: Some(json!(7)), ..RequestOptions::default() };
        assert_eq!(with_progress(&options, 7, 1).await, (Err(GaveUp::Timeout(100)), 100));
        // With reset: progress at 80, 160, 240 pushes expiry to 340.
        let options = RequestOptions { reset_timeout_on_progress: true, ..options };
        assert_eq!(with_progress(&options, 7, 3).await, (Err(GaveUp::Timeout(100)), 340));
        // Progress for another token resets nothing.
        assert_eq!(with_progress(&options, 8, 1).await, (Err(GaveUp::Timeout(100)), 100));
    }

    /// A fresh request waited for with a 100 ms timeout under `options` while progress for
    /// `token` arrives `times` times, every 80 ms: how the wait ended, and after how many ms.
    async fn with_progress(options: &RequestOptions, token: i64, times: usize) -> (Result<(), GaveUp>, u128) {
        let (c, id, rx) = fresh();
        let started = tokio::time::Instant::now();
        let out = race(&c, &id, rx, options, |c| async move {
            for _ in 0..times {
                tokio::time::sleep(Duration::from_millis(80)).await;
                progress(&c, token);
            }
        })
        .await;
        (out, started.elapsed().as_millis())
    }

    #[tokio::test(start_paused = true)]
    async fn progress_never_extends_past_the_total_timeout() {
        let (c, id, rx) = fresh();
        let options = RequestOptions {
            progress_token: Some(json!(7)),
            reset_timeout_on_progress: true,
            max_total_timeout_ms: Some(250),
            ..RequestOptions::default()
        };
        let started = tokio::time::Instant::now();
        let out = race(&c, &id, rx, &options, |c| async move {
            loop {
                tokio::time::sleep(Duration::from_millis(50)).await;
                progress(&c, 7);
            }
        })
        .await;
        assert_eq!((out.clone(), started.elapsed().as_millis()), (Err(GaveUp::TotalTimeout(250)), 250));
        assert_eq!(
            out.expect_err("gave up").into_error(true).to_string(),
            "Request timeout after 250ms (max total timeout)"
        );
        assert!(lock(&c.progress).is_empty(), "the token is unwatched once the wait ends");
    }

    fn fresh() -> (std::sync::Arc<Correlator>, RequestId, oneshot::Receiver<Reply>) {
        let c = std::sync::Arc::new(Correlator::new(Handlers::default(), false));
        let id = c.next_id();
        let rx = c.register(id.clone());
        (c, id, rx)
    }

    /// Waits for the request with a 100 ms timeout while `feed` runs beside it.
    async fn race<F: std::future::Future<Output = ()>>(
        c: &std::sync::Arc<Correlator>,
        id: &RequestId,
        rx: oneshot::Receiver<Reply>,
        options: &RequestOptions,
        feed: impl FnOnce(std::sync::Arc<Correlator>) -> F,
    ) -> Result<(), GaveUp> {
        let feeding = feed(c.clone());
        tokio::select! {
            out = wait_reply(c, id, rx, Some(Duration::from_millis(100)), options) => out.map(|_| ()),
            () = async { feeding.await; std::future::pending::<()>().await } => unreachable!("feed parks"),
        }
    }

    #[test]
    fn string_ids_never_repeat() {
        let c = Correlator::new(Handlers::default(), true);
        assert_eq!(c.next_id(), RequestId::String("1".into()));
        assert_eq!(c.next_id(), RequestId::String("2".into()));
    }
}
