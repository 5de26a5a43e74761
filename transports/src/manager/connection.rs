//! One managed connection (SPEC §7): a transport plus the handshake, replaced on an
//! unexpected close by a new one after backoff, with the tools of the last good connection
//! kept visible meanwhile.
//!
//! Each transport the connection opens gets a generation number, captured by its handlers,
//! so the close of a transport the manager itself tore down (or one already replaced) never
//! starts another reconnect.

use super::breaker::StormBreaker;
use super::event::{EventKind, ManagerEvent};
use super::policy::ReconnectPolicy;
use super::resubscribe::{self, AckBook, AfterFailure};
use super::retry::{self, Replay};
use crate::client::{self, ClientOptions, InitializeResult};
use crate::config::{TransportConfig, TransportKind};
use crate::error::TransportError;
use crate::http::AuthRefresh;
use crate::pending::lock;
use crate::stateless;
use crate::subscriptions::{ACKNOWLEDGED, META_SUBSCRIPTION_ID};
use crate::transport::{Handlers, Reply, RequestOptions, Transport};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How a managed connection is set up.
#[derive(Clone)]
pub struct ManagedConfig {
    /// The transport to open (re-read on every reconnect).
    pub transport: TransportConfig,
    /// The handshake's options.
    pub client: ClientOptions,
    /// Backoff and breaker.
    pub policy: ReconnectPolicy,
    /// The caller's handlers: notifications, errors and server requests are passed on;
    /// `on_close` fires when the connection is down for good (gave up, breaker, closed).
    pub handlers: Handlers,
    /// The HTTP auth refresh hook, handed to every transport opened.
    pub auth: Option<AuthRefresh>,
    /// Event times are measured from here (the harness passes its run start).
    pub epoch: Instant,
}

/// Where the connection stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Connected and handshaken.
    Ready,
    /// Down; reconnecting (the stale tools stay visible).
    Reconnecting,
    /// Down for good: every attempt failed or the breaker opened.
    Failed(String),
    /// Closed by the caller.
    Closed,
}

impl Status {
    /// A short stable name.
    pub fn name(&self) -> &'static str {
        match self {
            Status::Ready => "ready",
            Status::Reconnecting => "reconnecting",
            Status::Failed(_) => "failed",
            Status::Closed => "closed",
        }
    }
}

struct Current {
    transport: Option<Arc<dyn Transport>>,
    /// The last transport installed, kept for its diagnostics once torn down.
    last: Option<Arc<dyn Transport>>,
    generation: u64,
    status: Status,
    init: Option<InitializeResult>,
}

struct Inner {
    config: ManagedConfig,
    current: Mutex<Current>,
    tools: Mutex<Vec<Value>>,
    resources: Mutex<Vec<Value>>,
    prompts: Mutex<Vec<Value>>,
    events: Mutex<Vec<ManagerEvent>>,
    changed: Notify,
    next_generation: AtomicU64,
    breaker: Mutex<StormBreaker>,
    closing: AtomicBool,
    /// Subscription acknowledgements by generation, for the listens re-sent after a reconnect.
    acks: Mutex<AckBook>,
}

/// A connection that reconnects itself. Cheap to clone.
#[derive(Clone)]
pub struct ManagedConnection {
    inner: Arc<Inner>,
}

impl ManagedConnection {
    /// Opens the transport and runs the handshake. A failure here is the caller's: only a
    /// connection that was up is reconnected.
    pub async fn connect(config: ManagedConfig) -> Result<Self, TransportError> {
        let breaker = StormBreaker::new(config.policy.breaker_closes, config.policy.breaker_window);
        let inner = Arc::new(Inner {
            config,
            current: Mutex::new(Current {
                transport: None,
                last: None,
                generation: 0,
                status: Status::Reconnecting,
                init: None,
            }),
            tools: Mutex::new(Vec::new()),
            resources: Mutex::new(Vec::new()),
            prompts: Mutex::new(Vec::new()),
            events: Mutex::new(Vec::new()),
            changed: Notify::new(),
            next_generation: AtomicU64::new(1),
            breaker: Mutex::new(breaker),
            closing: AtomicBool::new(false),
            acks: Mutex::new(AckBook::default()),
        });
        Inner::open_and_install(&inner, None).await?;
        Ok(ManagedConnection { inner })
    }

    /// Where the connection stands.
    pub fn status(&self) -> Status {
        lock(&self.inner.current).status.clone()
    }

    /// The tools of the last good connection: still the old ones while reconnecting.
    pub fn tools(&self) -> Vec<Value> {
        lock(&self.inner.tools).clone()
    }

    /// The resources last listed after a `resources/list_changed`.
    pub fn resources(&self) -> Vec<Value> {
        lock(&self.inner.resources).clone()
    }

    /// The prompts last listed after a `prompts/list_changed`.
    pub fn prompts(&self) -> Vec<Value> {
        lock(&self.inner.prompts).clone()
    }

    /// Everything the connection did so far.
    pub fn events(&self) -> Vec<ManagerEvent> {
        lock(&self.inner.events).clone()
    }

    /// The current transport, if any.
    pub fn transport(&self) -> Option<Arc<dyn Transport>> {
        lock(&self.inner.current).transport.clone()
    }

    /// The current transport, else the last one (its counters, after the connection died).
    pub fn last_transport(&self) -> Option<Arc<dyn Transport>> {
        let current = lock(&self.inner.current);
        current.transport.clone().or_else(|| current.last.clone())
    }

    /// Waits until `count` events named `name` happened (see [`EventKind::name`]), or
    /// `bound` passes; returns whether they did.
    pub async fn wait_event(&self, name: &str, count: usize, bound: Duration) -> bool {
        let seen = || lock(&self.inner.events).iter().filter(|e| e.kind.name() == name).count() >= count;
        tokio::time::timeout(bound, async {
            loop {
                let changed = self.inner.changed.notified();
                if seen() {
                    return;
                }
                changed.await;
            }
        })
        .await
        .is_ok()
    }

    /// Sends a request on the current transport, waiting out a reconnect in progress
    /// (bounded by the request's timeout). A 404 for the session starts a new session and
    /// the request is sent once more; a second 404 is returned.
    /// On 2026-07-28 a `subscriptions/listen` lives across reconnects (see [`Self::listen`]).
    pub async fn request(&self, method: &str, params: Option<Value>, options: RequestOptions) -> Reply {
        if method == resubscribe::LISTEN && self.is_modern() {
            return self.listen(params, options).await;
        }
        let (transport, generation) = self.ready(&options).await?;
        match transport.request(method, params.clone(), options.clone()).await {
            Err(TransportError::SessionExpired { .. }) => {
                Inner::recover(&self.inner, generation, true).await;
                let (transport, _) = self.ready(&options).await?;
                transport.request(method, params, options).await
            }
            other => other,
        }
    }

    /// Calls a tool. A call that fails at the transport level is replayed once, after a
    /// reconnect, only when [`retry::decide`] allows it; otherwise the caller gets the error.
    pub async fn call_tool(&self, params: Value, options: RequestOptions) -> Reply {
        let name = params.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        let (transport, generation) = self.ready(&options).await?;
        let err = match transport.request("tools/call", Some(params.clone()), options.clone()).await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let tool =
            lock(&self.inner.tools).iter().find(|t| t.get("name").and_then(Value::as_str) == Some(&name)).cloned();
        let decision = retry::decide(&err, tool.as_ref());
        match decision {
            Replay::NotATransportFailure => return Err(err),
            Replay::RefusedMayHaveRun => {
                self.inner.event(EventKind::ReplayRefused { tool: name });
                return Err(err);
            }
            Replay::NeverAccepted => self.inner.event(EventKind::Replayed { tool: name, why: "never accepted" }),
            Replay::IdempotentTool => {
                self.inner.event(EventKind::Replayed { tool: name, why: "idempotent tool" });
            }
        }
        let new_session = matches!(err, TransportError::SessionExpired { .. });
        Inner::recover(&self.inner, generation, new_session).await;
        // No new connection to replay on: the caller gets the call's own error.
        let Ok((transport, _)) = self.ready(&options).await else { return Err(err) };
        transport.request("tools/call", Some(params), options).await
    }

    /// A 2026-07-28 `subscriptions/listen` (SPEC §7): one subscription for the caller,
    /// however many connections it takes. When its connection goes down under it, it is
    /// re-sent on the next one with the same params (a new request: a new JSON-RPC id, so a
    /// new subscription id); the window from the drop to the new acknowledgement is
    /// reported as possibly missed (`subscription_restored`). A refused re-send, or a
    /// connection that stays down, ends it with the error (`subscription_lost`); a response
    /// (the server's graceful end) ends it cleanly.
    pub async fn listen(&self, params: Option<Value>, options: RequestOptions) -> Reply {
        let filter = params.as_ref().and_then(|p| p.get("notifications")).map_or_else(|| "{}".into(), Value::to_string);
        // Since when the subscription is not known to be active on a live connection.
        let mut dropped_at: Option<Instant> = None;
        let mut skip = None;
        loop {
            let (transport, generation) = match self.ready_after(skip, &options).await {
                Ok(ready) => ready,
                Err(e) => {
                    if dropped_at.is_some() {
                        self.inner.event(EventKind::SubscriptionLost { error: e.to_string() });
                    }
                    return Err(e);
                }
            };
            if dropped_at.is_some() {
                self.inner.event(EventKind::SubscriptionResent { filter: filter.clone() });
            }
            let request = transport.request(resubscribe::LISTEN, params.clone(), options.clone());
            tokio::pin!(request);
            let acknowledged = self.acknowledged(generation);
            tokio::pin!(acknowledged);
            let mut awaiting_ack = true;
            let outcome = loop {
                tokio::select! {
                    biased;
                    () = &mut acknowledged, if awaiting_ack => {
                        awaiting_ack = false;
                        self.restored(&mut dropped_at);
                    }
                    outcome = &mut request => break outcome,
                }
            };
            if awaiting_ack && lock(&self.inner.acks).claim(generation).is_some() {
                self.restored(&mut dropped_at);
            }
            let err = match outcome {
                Err(e) => e,
                ok => return ok,
            };
            let down = !transport.is_connected() || {
                let current = lock(&self.inner.current);
                current.generation != generation || current.status != Status::Ready
            };
            match resubscribe::after_failure(&err, down, self.inner.closing.load(Ordering::SeqCst)) {
                AfterFailure::ToCaller => {
                    if dropped_at.is_some() {
                        self.inner.event(EventKind::SubscriptionLost { error: err.to_string() });
                    }
                    return Err(err);
                }
                AfterFailure::Resend => {
                    // A re-sent listen that drops before its acknowledgement keeps the first drop's time.
                    dropped_at.get_or_insert_with(Instant::now);
                    // Idempotent: the close handler normally started it already.
                    Inner::spawn_recover(&self.inner, generation);
                    skip = Some(generation);
                }
            }
        }
    }

    /// Whether this connection speaks a modern revision (2026-07-28) with subscriptions.
    fn is_modern(&self) -> bool {
        let t = &self.inner.config.transport;
        stateless::is_modern(&t.protocol_version) && t.kind != TransportKind::Sse
    }

    /// Resolves once a subscription acknowledgement of `generation` is claimed.
    async fn acknowledged(&self, generation: u64) {
        loop {
            let changed = self.inner.changed.notified();
            if lock(&self.inner.acks).claim(generation).is_some() {
                return;
            }
            changed.await;
        }
    }

    /// A subscription is active again: report the window since the drop, if there was one.
    fn restored(&self, dropped_at: &mut Option<Instant>) {
        if let Some(since) = dropped_at.take() {
            self.inner.event(EventKind::SubscriptionRestored { missed: since.elapsed() });
        }
    }

    /// Closes for good: no reconnect follows.
    pub async fn close(&self) {
        self.inner.closing.store(true, Ordering::SeqCst);
        let transport = {
            let mut current = lock(&self.inner.current);
            current.status = Status::Closed;
            current.transport.take()
        };
        self.inner.changed.notify_waiters();
        if let Some(t) = transport {
            t.close().await;
        }
    }

    /// The current transport once ready, waiting for a reconnect in progress, bounded by
    /// the request's timeout (else the connection's).
    async fn ready(&self, options: &RequestOptions) -> Result<(Arc<dyn Transport>, u64), TransportError> {
        let bound = crate::pending::effective_timeout(self.inner.config.transport.timeout(), options);
        match bound {
            None => self.wait_ready(None).await,
            Some(b) => {
                tokio::time::timeout(b, self.wait_ready(None)).await.unwrap_or(Err(TransportError::NotConnected))
            }
        }
    }

    /// A transport other than generation `skip` once ready. Unbounded but for the caller's
    /// cancellation: a reconnect always ends, ready or down for good.
    async fn ready_after(
        &self,
        skip: Option<u64>,
        options: &RequestOptions,
    ) -> Result<(Arc<dyn Transport>, u64), TransportError> {
        let cancel = options.cancel.clone().unwrap_or_default();
        tokio::select! {
            ready = self.wait_ready(skip) => ready,
            () = cancel.cancelled() => Err(TransportError::Cancelled { reason: None }),
        }
    }

    async fn wait_ready(&self, skip: Option<u64>) -> Result<(Arc<dyn Transport>, u64), TransportError> {
        loop {
            let changed = self.inner.changed.notified();
            {
                let current = lock(&self.inner.current);
                match (&current.status, &current.transport) {
                    (Status::Ready, Some(t)) if Some(current.generation) != skip => {
                        return Ok((t.clone(), current.generation));
                    }
                    (Status::Failed(_) | Status::Closed, _) => return Err(TransportError::NotConnected),
                    _ => {}
                }
            }
            changed.await;
        }
    }
}

impl Inner {
    fn event(&self, kind: EventKind) {
        tracing::debug!(event = %kind, "managed connection");
        lock(&self.events).push(ManagerEvent { at: self.config.epoch.elapsed(), kind });
        self.changed.notify_waiters();
    }

    /// Opens a transport and handshakes on it; on success it becomes current, and
    /// `installed` is recorded before anything can see it current (so a close of the new
    /// transport is always recorded after it).
    async fn open_and_install(inner: &Arc<Inner>, installed: Option<EventKind>) -> Result<(), TransportError> {
        let generation = inner.next_generation.fetch_add(1, Ordering::SeqCst);
        let closed = Arc::new(AtomicBool::new(false));
        let handlers = Inner::handlers(inner, generation, closed.clone());
        let config = &inner.config;
        let transport =
            client::create_client_transport(&config.transport, handlers, config.auth.clone(), &config.client).await?;
        let init = client::handshake(transport.as_ref(), &config.client).await?;
        if inner.closing.load(Ordering::SeqCst) {
            transport.close().await;
            return Err(TransportError::NotConnected);
        }
        let closed_meanwhile = {
            let mut current = lock(&inner.current);
            if let Some(kind) = installed {
                inner.event(kind);
            }
            *lock(&inner.tools) = init.tools.clone();
            current.transport = Some(transport.clone());
            current.last = Some(transport.clone());
            current.generation = generation;
            current.status = Status::Ready;
            current.init = Some(init);
            closed.load(Ordering::SeqCst) || !transport.is_connected()
        };
        inner.changed.notify_waiters();
        if closed_meanwhile {
            // It closed between the handshake and now; its close handler saw a stale generation.
            Inner::spawn_recover(inner, generation);
        }
        Ok(())
    }

    /// `closed` is set when this transport closes, so an install that races with the close
    /// still notices it.
    fn handlers(inner: &Arc<Inner>, generation: u64, closed: Arc<AtomicBool>) -> Handlers {
        let user = inner.config.handlers.clone();
        let (on_close_inner, on_note_inner) = (Arc::downgrade(inner), Arc::downgrade(inner));
        let user_notification = user.on_notification.clone();
        Handlers {
            on_close: Some(Arc::new(move || {
                closed.store(true, Ordering::SeqCst);
                if let Some(inner) = on_close_inner.upgrade() {
                    Inner::spawn_recover(&inner, generation);
                }
            })),
            on_notification: Some(Arc::new(move |method: &str, params: &Value| {
                if let Some(h) = &user_notification {
                    h(method, params);
                }
                if method == ACKNOWLEDGED {
                    Inner::record_ack(&on_note_inner, generation, params);
                }
                if let Some(list) = changed_list(method) {
                    Inner::spawn_refresh(&on_note_inner, generation, list);
                }
            })),
            on_error: user.on_error,
            on_request: user.on_request,
        }
    }

    /// Keeps an acknowledgement (the subscription gate already checked it) for the listen
    /// of `generation` waiting on it.
    fn record_ack(weak: &Weak<Inner>, generation: u64, params: &Value) {
        let Some(inner) = weak.upgrade() else { return };
        let id = params.get("_meta").and_then(|m| m.get(META_SUBSCRIPTION_ID)).map(Value::to_string);
        lock(&inner.acks).record(generation, id.unwrap_or_default());
        inner.changed.notify_waiters();
    }

    fn spawn_recover(inner: &Arc<Inner>, generation: u64) {
        let weak = Arc::downgrade(inner);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Some(inner) = weak.upgrade() {
                    Inner::recover(&inner, generation, false).await;
                }
            });
        }
    }

    /// Replaces transport `generation` unless that already happened (or the connection is
    /// closing): a new session at once after a 404, else the backoff schedule. Returns when
    /// the connection is ready again or down for good; a caller that finds another
    /// recovery running just waits for it (through [`ManagedConnection::ready`]).
    async fn recover(inner: &Arc<Inner>, generation: u64, new_session: bool) {
        let stale = {
            let mut current = lock(&inner.current);
            if current.generation != generation
                || current.status != Status::Ready
                || inner.closing.load(Ordering::SeqCst)
            {
                return;
            }
            current.status = Status::Reconnecting;
            current.transport.take()
        };
        inner.changed.notify_waiters();
        if let Some(t) = stale {
            t.close().await;
        }
        if new_session {
            inner.event(EventKind::NewSession);
            if Inner::open_and_install(inner, None).await.is_ok() {
                return;
            }
        } else {
            inner.event(EventKind::Disconnected);
            let open = lock(&inner.breaker).record(Instant::now());
            if open {
                // Down and recorded at once: whoever waits on the event sees the final
                // status, and whoever sees the status (a listen reporting its loss) comes after
                // the event.
                inner.fail_with(
                    "reconnect storm: the breaker is open",
                    EventKind::BreakerOpen { closes: inner.config.policy.breaker_closes },
                );
                return;
            }
        }
        let policy = inner.config.policy.clone();
        for attempt in 1..=policy.attempts {
            let delay = policy.delay(attempt, rand::random::<f64>());
            tokio::time::sleep(delay).await;
            if inner.closing.load(Ordering::SeqCst) {
                return;
            }
            inner.event(EventKind::Attempt { attempt, planned: policy.planned_delay(attempt), delay });
            match Inner::open_and_install(inner, Some(EventKind::Reconnected { attempt })).await {
                Ok(()) => return,
                Err(e) => inner.event(EventKind::AttemptFailed { attempt, error: e.to_string() }),
            }
        }
        inner.fail("gave up reconnecting");
        inner.event(EventKind::GaveUp { attempts: policy.attempts });
    }

    fn fail(&self, why: &str) {
        lock(&self.current).status = Status::Failed(why.into());
        self.changed.notify_waiters();
        if let Some(h) = &self.config.handlers.on_close {
            h();
        }
    }

    /// [`Inner::fail`] with the event that explains it, recorded under the status lock: no
    /// task can see the failure before the event is in the list.
    fn fail_with(&self, why: &str, kind: EventKind) {
        {
            let mut current = lock(&self.current);
            current.status = Status::Failed(why.into());
            tracing::debug!(event = %kind, "managed connection");
            lock(&self.events).push(ManagerEvent { at: self.config.epoch.elapsed(), kind });
        }
        self.changed.notify_waiters();
        if let Some(h) = &self.config.handlers.on_close {
            h();
        }
    }

    fn spawn_refresh(weak: &Weak<Inner>, generation: u64, list: &'static str) {
        let weak = weak.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let Some(inner) = weak.upgrade() else { return };
                let transport = {
                    let current = lock(&inner.current);
                    if current.generation != generation || current.status != Status::Ready {
                        return;
                    }
                    current.transport.clone()
                };
                let Some(transport) = transport else { return };
                match refresh(transport.as_ref(), list).await {
                    Ok(items) => {
                        let slot = match list {
                            "tools" => &inner.tools,
                            "resources" => &inner.resources,
                            _ => &inner.prompts,
                        };
                        *lock(slot) = items;
                        inner.event(EventKind::Refreshed { list });
                    }
                    Err(e) => {
                        if let Some(h) = &inner.config.handlers.on_error {
                            h(&e);
                        }
                    }
                }
            });
        }
    }
}

/// The list a `notifications/<list>/list_changed` names.
fn changed_list(method: &str) -> Option<&'static str> {
    match method {
        "notifications/tools/list_changed" => Some("tools"),
        "notifications/resources/list_changed" => Some("resources"),
        "notifications/prompts/list_changed" => Some("prompts"),
        _ => None,
    }
}

/// Lists `list` again, following `nextCursor` (bounded like the handshake's tools/list).
async fn refresh(transport: &dyn Transport, list: &str) -> Result<Vec<Value>, TransportError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..client::MAX_TOOL_PAGES {
        let params = cursor.as_ref().map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let page = transport.request(&format!("{list}/list"), Some(params), RequestOptions::default()).await?;
        match page.get(list) {
            Some(Value::Array(found)) => items.extend(found.iter().cloned()),
            _ => return Err(TransportError::Protocol(format!("{list}/list result has no {list} array"))),
        }
        let next = page.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
        if next.is_none() || next == cursor {
            break;
        }
        cursor = next;
    }
    Ok(items)
}
