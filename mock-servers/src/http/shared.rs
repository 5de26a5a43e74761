//! The state one HTTP mock shares between its request handlers and its script engines:
//! connections (script parts), sessions, standing rules, the auth requirement, the tasks it
//! runs and how it ends; and the helpers that build responses and record them in the same
//! breath.

use super::body::{MockBody, Piece, StreamBody, StreamWatch};
use super::conn::{AuthRule, Conn, Part, Route, StreamHandle};
use super::flavour::Flavour;
use super::journal::Journal;
use super::raw::SocketControl;
use crate::budget::Budget;
use crate::shutdown::{Ending, ExitReason};
use crate::sync::lock;
use bytes::Bytes;
use futures::future::BoxFuture;
use http::{HeaderName, HeaderValue, Response, StatusCode};
use mcp_scenario::Revision;
use mcp_scenario::script::{ServerStep, StreamEnd};
use mcp_scenario::wire::{Recorded, WireEvent};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Runs one connection's script: the engine, handed in by whoever builds the [`Shared`]
/// (so the state never depends on the engine that uses it).
pub type Engine = fn(Arc<Shared>, Arc<Conn>, Vec<ServerStep>) -> BoxFuture<'static, ()>;

/// A session id and whether it still works.
struct Session {
    connection: usize,
    live: bool,
    /// When expired: only requests with this HTTP method are refused (`None`: all).
    expired_for: Option<String>,
}

/// Everything one HTTP mock shares.
pub struct Shared {
    /// The record writer.
    pub journal: Journal,
    /// Streamable HTTP or legacy SSE.
    pub flavour: Flavour,
    /// The scenario's revision.
    pub revision: Revision,
    /// The bound port.
    pub port: u16,
    /// The answers to unscripted requests a client may send at any time.
    pub defaults: crate::defaults::Defaults,
    parts: Vec<Part>,
    engine: Engine,
    conns: Mutex<Vec<Arc<Conn>>>,
    sessions: Mutex<HashMap<String, Session>>,
    sessions_issued: AtomicBool,
    /// A `handshake` with `refuse_before` opens the script: refuse sessionless requests
    /// until a session is issued.
    pub refuse_before_session: bool,
    rules: RwLock<HashMap<String, Arc<str>>>,
    /// The 2026-07-28 request checks (`None` on stateful revisions).
    stateless: RwLock<Option<crate::stateless::Rules>>,
    auth: RwLock<Option<AuthRule>>,
    /// The authorization server (`authorization_server`), once the script installed it.
    oauth: RwLock<Option<Arc<crate::oauth::AuthServer>>>,
    tokens: Mutex<HashMap<String, usize>>,
    exchanges: AtomicU64,
    open_streams: Mutex<Vec<(usize, u64, Weak<StreamWatch>)>>,
    /// Legacy SSE: the path and query of every `endpoint` event sent so far; a POST
    /// anywhere else is refused (see [`Shared::is_endpoint`]).
    endpoints: Mutex<Vec<String>>,
    /// Cancels every task the mock spawned once it has ended.
    tasks: CancellationToken,
    /// How many connection scripts are inside a poll, or woken and waiting for one, right
    /// now (see [`InPoll`]).
    scripts_in_poll: Arc<AtomicUsize>,
    ending: Ending,
}

/// Why a request is refused before the first session by a `handshake` with `refuse_before`.
pub const NO_SESSION_YET: &str = "no session yet";

impl Shared {
    /// The shared state for a scenario's script, split into connections, each run by
    /// `engine`.
    pub fn new(
        journal: Journal,
        flavour: Flavour,
        revision: Revision,
        port: u16,
        parts: Vec<Part>,
        engine: Engine,
    ) -> Self {
        Shared {
            journal,
            flavour,
            revision,
            port,
            defaults: crate::defaults::Defaults::default(),
            parts,
            engine,
            conns: Mutex::new(Vec::new()),
            sessions: Mutex::new(HashMap::new()),
            sessions_issued: AtomicBool::new(false),
            refuse_before_session: false,
            rules: RwLock::new(HashMap::new()),
            stateless: RwLock::new(
                (revision.as_str() >= "2026-07-28").then(|| crate::stateless::Rules::for_revision(revision.as_str())),
            ),
            auth: RwLock::new(None),
            oauth: RwLock::new(None),
            tokens: Mutex::new(HashMap::new()),
            exchanges: AtomicU64::new(0),
            open_streams: Mutex::new(Vec::new()),
            endpoints: Mutex::new(Vec::new()),
            tasks: CancellationToken::new(),
            scripts_in_poll: Arc::new(AtomicUsize::new(0)),
            ending: Ending::default(),
        }
    }

    /// Legacy SSE: remembers the endpoint an `endpoint` event named, as the path and query a
    /// POST to it carries (an absolute or network-path URI loses its origin, a relative one is
    /// resolved against the SSE URL, `/sse`).
    pub fn announce_endpoint(&self, uri: &str) {
        lock(&self.endpoints).push(endpoint_path(uri));
    }

    /// Legacy SSE: whether a POST to `path` (with its query) goes to an endpoint the mock
    /// announced. A real 2024-11-05 server takes messages only there ("All subsequent client
    /// messages MUST be sent as HTTP POST requests to this endpoint"), so a POST that drops
    /// the query or guesses a path must not reach the script.
    pub fn is_endpoint(&self, path: &str) -> bool {
        lock(&self.endpoints).iter().any(|e| e == path)
    }

    /// The `Allow` value of a 405 refusing `refused` at the MCP endpoint: the methods it
    /// does take (RFC 9110 §15.5.6 requires the header on every 405). Streamable HTTP takes
    /// POST, GET (the listener) and DELETE (session end); 2026-07-28, which has neither,
    /// only POST; the legacy SSE endpoint only its GET.
    pub fn allow_besides(&self, refused: &http::Method) -> String {
        let takes: &[http::Method] = match (self.flavour, self.stateless_rules().is_some()) {
            (Flavour::LegacySse, _) => &[http::Method::GET],
            (Flavour::StreamableHttp, true) => &[http::Method::POST],
            (Flavour::StreamableHttp, false) => &[http::Method::GET, http::Method::POST, http::Method::DELETE],
        };
        takes.iter().filter(|m| *m != refused).map(http::Method::as_str).collect::<Vec<_>>().join(", ")
    }

    /// `headers` with the `Allow` a 405 refusing `refused` needs, unless the script gave
    /// one.
    pub fn with_allow(
        &self,
        status: u16,
        refused: &http::Method,
        mut headers: Vec<(String, String)>,
    ) -> Vec<(String, String)> {
        if status == 405 && !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("allow")) {
            headers.push(("allow".into(), self.allow_besides(refused)));
        }
        headers
    }

    /// The 2026-07-28 request checks in force, if the revision is stateless.
    pub fn stateless_rules(&self) -> Option<crate::stateless::Rules> {
        self.stateless.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Changes the 2026-07-28 request checks (the `stateless` op).
    pub fn set_stateless_rules(&self, f: impl FnOnce(&mut crate::stateless::Rules)) {
        if let Some(rules) = self.stateless.write().unwrap_or_else(|e| e.into_inner()).as_mut() {
            f(rules);
        }
    }

    /// Spawns a task that ends when the mock does.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let cancelled = self.tasks.clone().cancelled_owned();
        tokio::spawn(async move {
            tokio::select! {
                () = cancelled => {}
                () = task => {}
            }
        });
    }

    /// Ends the mock: flushes the record (waiting at most 2 s), seals it, and hands `serve`
    /// its [`ExitReason`]. Only the first call counts.
    pub fn end(&self, reason: ExitReason) {
        self.ending.end(|| {
            self.journal.flush(Duration::from_secs(2));
            self.journal.seal();
            reason
        });
    }

    /// Waits (at most `bound`) until no connection script is inside a poll or woken and not
    /// yet polled: a step that has written its answer records its progress before it next
    /// awaits, and a request delivered to a script is consumed at its next poll; a stop that
    /// sealed the record in between would report a finished script as stopped short.
    pub async fn scripts_settled(&self, bound: Duration) {
        let since = std::time::Instant::now();
        while self.scripts_in_poll.load(Ordering::SeqCst) > 0 && since.elapsed() < bound {
            tokio::task::yield_now().await;
        }
    }

    /// Waits until the mock has ended, then cancels its tasks.
    pub async fn ended(&self) -> ExitReason {
        let reason = self.ending.wait().await;
        self.tasks.cancel();
        reason
    }

    /// Microseconds since the mock started, on the clock of every recorded event.
    pub fn now_us(&self) -> u64 {
        self.journal.now_us()
    }

    /// Records an event on connection `n`.
    pub fn record(&self, n: usize, event: &WireEvent) {
        self.journal.record(n, event);
    }

    /// Records a note on connection `n`.
    pub fn note(&self, n: usize, text: impl Into<String>) {
        self.record(n, &WireEvent::Note { t_us: self.journal.now_us(), text: text.into() });
    }

    /// The next exchange number.
    pub fn next_exchange(&self) -> u64 {
        self.exchanges.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// `http://127.0.0.1:<port>`.
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Expands `{origin}`, `{port}` and `{connection}` in scripted text.
    pub fn expand(&self, text: &str, connection: usize) -> String {
        text.replace("{origin}", &self.origin())
            .replace("{port}", &self.port.to_string())
            .replace("{connection}", &connection.to_string())
    }

    /// Starts the next connection and its script; `None` when the script has no more parts.
    pub fn start_next(self: &Arc<Self>) -> Option<Arc<Conn>> {
        let conn = {
            let mut conns = lock(&self.conns);
            let n = conns.len() + 1;
            let part = self.parts.get(n - 1)?;
            let conn = Arc::new(Conn::new(n, part.budget.clone()));
            conns.push(conn.clone());
            conn
        };
        self.record(
            conn.index,
            &WireEvent::Started {
                pid: std::process::id(),
                stderr_shared: false,
                origin_unix_us: Some(self.journal.origin_unix_us()),
            },
        );
        self.record(conn.index, &WireEvent::Listening { port: self.port });
        let steps = self.parts[conn.index - 1].steps.clone();
        let script = (self.engine)(self.clone(), conn.clone(), steps);
        self.spawn(InPoll::new(script, self.scripts_in_poll.clone()));
        Some(conn)
    }

    /// The latest connection (connection 1 exists from the start).
    pub fn latest(self: &Arc<Self>) -> Arc<Conn> {
        if let Some(c) = lock(&self.conns).last() {
            return c.clone();
        }
        self.start_next().unwrap_or_else(|| {
            // No script at all: nothing to wait for.
            let conn = Conn::new(1, Budget::default());
            conn.mark_ready();
            Arc::new(conn)
        })
    }

    /// Connection `n`, if it started.
    pub fn conn(&self, n: usize) -> Option<Arc<Conn>> {
        lock(&self.conns).get(n.wrapping_sub(1)).cloned()
    }

    /// Every started connection.
    pub fn conns(&self) -> Vec<Arc<Conn>> {
        lock(&self.conns).clone()
    }

    /// The latest connection if it still `wants` the message, else the next one if the
    /// script has one (a new session / stream), else the latest (where it is unscripted).
    pub fn conn_for_new(self: &Arc<Self>, wants: impl Fn(&Conn) -> bool) -> Arc<Conn> {
        let latest = self.latest();
        if wants(&latest) {
            return latest;
        }
        self.start_next().unwrap_or(latest)
    }

    /// Decides which connection a Streamable HTTP request belongs to, refusing requests with
    /// a missing (400), unknown or expired (404) session.
    pub fn route_streamable(self: &Arc<Self>, session: Option<&str>, is_initialize: bool, http_method: &str) -> Route {
        if let Some(id) = session {
            let found = lock(&self.sessions).get(id).map(|s| {
                let refused = !s.live && s.expired_for.as_deref().is_none_or(|m| m == http_method);
                (s.connection, !refused)
            });
            return match found {
                Some((n, true)) => Route::Conn(self.conn(n).unwrap_or_else(|| self.latest())),
                Some((n, false)) => Route::Refuse(
                    self.conn(n).unwrap_or_else(|| self.latest()),
                    404,
                    "session expired",
                    "Session not found",
                ),
                None if self.sessions_issued.load(Ordering::SeqCst) => {
                    Route::Refuse(self.latest(), 404, "unknown session", "Session not found")
                }
                None => Route::Conn(if is_initialize {
                    self.conn_for_new(|c| c.wants("initialize"))
                } else {
                    self.latest()
                }),
            };
        }
        if is_initialize {
            return Route::Conn(self.conn_for_new(|c| c.wants("initialize")));
        }
        let latest = self.latest();
        if lock(&latest.session).is_some() {
            return Route::Refuse(latest, 400, "session missing", "Bad Request: Mcp-Session-Id header is required");
        }
        if self.refuse_before_session && !self.sessions_issued.load(Ordering::SeqCst) {
            return Route::Refuse(latest, 400, NO_SESSION_YET, "Bad Request: No valid session ID provided");
        }
        Route::Conn(latest)
    }

    /// Registers a session id issued on connection `n`.
    pub fn issue_session(&self, conn: &Conn, id: &str) {
        lock(&self.sessions).insert(id.to_string(), Session { connection: conn.index, live: true, expired_for: None });
        *lock(&conn.session) = Some(id.to_string());
        self.sessions_issued.store(true, Ordering::SeqCst);
    }

    /// Expires connection `conn`'s session: later requests carrying it get 404 — only those
    /// with `http_method`, when given.
    pub fn expire_session(&self, conn: &Conn, http_method: Option<&str>) {
        if let Some(id) = lock(&conn.session).as_ref()
            && let Some(s) = lock(&self.sessions).get_mut(id)
        {
            s.live = false;
            s.expired_for = http_method.map(str::to_ascii_uppercase);
        }
    }

    /// Adds a `reply_always` rule: `{"result": …}` or `{"error": …}`. The answer is kept
    /// serialised (`"result":…`), so a benchmark's hot path only splices in the id.
    pub fn add_rule(&self, method: &str, answer: &Value) {
        let fragment = match answer.as_object().and_then(|o| o.iter().next()) {
            Some((k, v)) => format!("{}:{}", Value::from(k.as_str()), v),
            None => "\"result\":{}".to_string(),
        };
        self.rules.write().unwrap_or_else(|e| e.into_inner()).insert(method.to_string(), Arc::from(fragment));
    }

    /// The standing answer for `method` as a serialised `"result":…` / `"error":…` member.
    pub fn rule(&self, method: &str) -> Option<Arc<str>> {
        let rules = self.rules.read().unwrap_or_else(|e| e.into_inner());
        if rules.is_empty() {
            return None;
        }
        rules.get(method).cloned()
    }

    /// Installs the authorization server (`authorization_server`).
    pub fn serve_oauth(&self, server: crate::oauth::AuthServer) {
        *self.oauth.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(server));
    }

    /// The authorization server, once installed.
    pub fn oauth(&self) -> Option<Arc<crate::oauth::AuthServer>> {
        self.oauth.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Sets the bearer token requirement.
    pub fn require_auth(&self, rule: AuthRule) {
        *self.auth.write().unwrap_or_else(|e| e.into_inner()) = Some(rule);
    }

    /// The refusal for a request's Authorization value, if the requirement rejects it.
    pub fn auth_refusal(&self, http_method: &str, authorization: Option<&str>) -> Option<AuthRule> {
        let auth = self.auth.read().unwrap_or_else(|e| e.into_inner());
        let rule = auth.as_ref()?;
        if rule.http_method.as_deref().is_some_and(|m| m != http_method) {
            return None;
        }
        let token = authorization.and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")));
        if token.map(str::trim) == Some(rule.token.as_str()) { None } else { Some(rule.clone()) }
    }

    /// An Authorization value with its credential replaced by `<redacted:N>` (the secret
    /// policy's header rule, [`crate::secrets`]), N numbering distinct credentials by first
    /// appearance, so a transcript can tell a refreshed token from the old one without ever
    /// holding either.
    pub fn redact_credential(&self, value: &str) -> String {
        let mut numbered = |_: &crate::secrets::Found, secret: &str| {
            let mut tokens = lock(&self.tokens);
            let next = tokens.len() + 1;
            format!("<redacted:{}>", *tokens.entry(secret.to_string()).or_insert(next))
        };
        crate::secrets::Policy::default().header("authorization", value, &mut numbered)
    }

    /// Builds a complete response and records it.
    pub fn respond(
        &self,
        conn: usize,
        exchange: u64,
        status: u16,
        headers: &[(String, String)],
        body: Bytes,
        why: &str,
    ) -> Response<MockBody> {
        let recorded = (!body.is_empty()).then(|| Recorded::of(&body));
        let response = self.head(conn, exchange, status, headers, recorded, why);
        response.body(MockBody::full(body)).unwrap_or_else(|_| fallback())
    }

    /// A `200 application/json` response with a JSON-RPC message, recorded.
    pub fn respond_json(
        &self,
        conn: usize,
        exchange: u64,
        status: u16,
        message: &Value,
        extra: &[(String, String)],
        why: &str,
    ) -> Response<MockBody> {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        headers.extend_from_slice(extra);
        let body = serde_json::to_vec(message).unwrap_or_default();
        self.respond(conn, exchange, status, &headers, Bytes::from(body), why)
    }

    /// Opens a stream in answer to `exchange`, recorded; the script writes through the handle.
    #[allow(clippy::too_many_arguments)]
    pub fn open_stream(
        self: &Arc<Self>,
        conn: usize,
        exchange: u64,
        socket: Arc<SocketControl>,
        status: u16,
        headers: &[(String, String)],
        label: String,
        is_get: bool,
        why: &str,
    ) -> (Response<MockBody>, StreamHandle) {
        let response = self.head(conn, exchange, status, headers, None, why);
        let me = Arc::downgrade(self);
        let watch = StreamWatch::new(move || {
            if let Some(me) = me.upgrade() {
                me.record_end(conn, exchange, "client went away");
            }
        });
        lock(&self.open_streams).push((conn, exchange, Arc::downgrade(&watch)));
        let (tx, body) = StreamBody::channel(socket, watch.clone());
        let response = response.body(MockBody::Stream(body)).unwrap_or_else(|_| fallback());
        (response, StreamHandle { tx, watch, exchange, label, is_get })
    }

    /// Writes bytes on a stream, recorded. A stream the client left takes nothing more.
    pub fn write(&self, conn: usize, stream: &StreamHandle, bytes: Vec<u8>, why: &str) {
        if self.record_write(conn, stream, &bytes, why) {
            stream.push(Piece::Data(Bytes::from(bytes)));
        }
    }

    /// Records a write on a stream; false (and a note) when the stream has ended.
    fn record_write(&self, conn: usize, stream: &StreamHandle, bytes: &[u8], why: &str) -> bool {
        if stream.watch.ended.load(Ordering::SeqCst) {
            self.note(conn, format!("{why}: stream #{} has ended; nothing written", stream.exchange));
            return false;
        }
        self.record(
            conn,
            &WireEvent::StreamWrite {
                t_us: self.journal.now_us(),
                exchange: stream.exchange,
                bytes: Recorded::of(bytes),
                why: why.into(),
            },
        );
        true
    }

    /// Ends a stream the way the script says, recorded. `stall` leaves it open.
    pub fn end_stream(&self, conn: usize, stream: &StreamHandle, how: StreamEnd, partial: Option<&str>) {
        if let (StreamEnd::MidEvent, Some(p)) = (how, partial) {
            self.write(conn, stream, p.as_bytes().to_vec(), "end_stream mid_event");
        }
        let name = match how {
            StreamEnd::Clean => "clean",
            StreamEnd::MidEvent => "mid_event",
            StreamEnd::Reset => "reset",
            StreamEnd::Stall => "stall",
        };
        let ended =
            if how == StreamEnd::Stall { !stream.watch.ended.load(Ordering::SeqCst) } else { stream.watch.end() };
        if ended {
            self.record_end(conn, stream.exchange, name);
            stream.push(Piece::End(how));
        }
    }

    /// Records that the stream of `exchange` ended, and how.
    pub fn record_end(&self, conn: usize, exchange: u64, how: &str) {
        self.record(conn, &WireEvent::StreamEnd { t_us: self.journal.now_us(), exchange, how: how.into() });
    }

    /// Waits (at most `grace`) until no stream is open. A client that closed its streams
    /// just before the mock was told to stop is still seen leaving them, so the record does
    /// not depend on which of the two the kernel delivered first.
    pub async fn streams_settled(&self, grace: std::time::Duration) {
        let watches: Vec<Arc<StreamWatch>> =
            lock(&self.open_streams).iter().filter_map(|(_, _, w)| w.upgrade()).collect();
        let _ = tokio::time::timeout(grace, async {
            for w in watches {
                w.settled().await;
            }
        })
        .await;
    }

    /// Records the streams still open as the mock stops.
    pub fn record_open_streams(&self) {
        for (conn, exchange, watch) in lock(&self.open_streams).iter() {
            if let Some(w) = watch.upgrade()
                && w.end()
            {
                self.record(
                    *conn,
                    &WireEvent::StreamEnd {
                        t_us: self.journal.now_us(),
                        exchange: *exchange,
                        how: "open when the mock stopped".into(),
                    },
                );
            }
        }
    }

    /// A response head with the valid ones of `headers` (the others are noted), recorded
    /// with `body` as the response to `exchange`. A header named again replaces the earlier
    /// one (a scenario's `headers` come after the mock's own, so `content-type` there is the
    /// one sent): the head holds one value per name, and the record holds that head.
    fn head(
        &self,
        conn: usize,
        exchange: u64,
        status: u16,
        headers: &[(String, String)],
        body: Option<Recorded>,
        why: &str,
    ) -> http::response::Builder {
        let mut builder =
            Response::builder().status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
        let mut recorded = BTreeMap::new();
        if let Some(head) = builder.headers_mut() {
            for (name, value) in headers {
                match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
                    (Ok(n), Ok(v)) => {
                        recorded.insert(n.as_str().to_string(), value.clone());
                        head.insert(n, v);
                    }
                    _ => self.note(conn, format!("header {name:?}: {value:?} is not a valid HTTP header; left out")),
                }
            }
        }
        let t_us = self.journal.now_us();
        let event =
            WireEvent::HttpResponse { t_us, exchange, status, headers: recorded, body, json: None, why: why.into() };
        self.record(conn, &event);
        builder
    }
}

fn fallback() -> Response<MockBody> {
    let mut r = Response::new(MockBody::empty());
    *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    r
}

/// A connection script that counts itself while it is being polled, so a stop can wait out
/// the synchronous tail of a step (its effect, then its progress record) on another thread.
struct InPoll {
    inner: futures::future::BoxFuture<'static, ()>,
    count: Arc<AtomicUsize>,
    waker: Arc<ScriptWaker>,
}

impl InPoll {
    fn new(inner: futures::future::BoxFuture<'static, ()>, count: Arc<AtomicUsize>) -> Self {
        let waker =
            Arc::new(ScriptWaker { woken: AtomicBool::new(false), count: count.clone(), task: Mutex::new(None) });
        InPoll { inner, count, waker }
    }
}

impl Future for InPoll {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.waker.arm(cx.waker());
        let waker = std::task::Waker::from(self.waker.clone());
        let polled = self.inner.as_mut().poll(&mut Context::from_waker(&waker));
        self.count.fetch_sub(1, Ordering::SeqCst);
        polled
    }
}

/// The waker a script is polled with: a wake (a message delivered to its inbox, a timer)
/// counts the script as busy until its next poll, so [`Shared::scripts_settled`] also waits
/// for a script that has work waiting but that a loaded machine has not run yet (a request
/// delivered just before the stop would otherwise leave its `expect` unconsumed).
struct ScriptWaker {
    woken: AtomicBool,
    count: Arc<AtomicUsize>,
    task: Mutex<Option<std::task::Waker>>,
}

impl ScriptWaker {
    /// Called at the start of each poll: the wake, if any, is being served.
    fn arm(&self, task: &std::task::Waker) {
        if self.woken.swap(false, Ordering::SeqCst) {
            self.count.fetch_sub(1, Ordering::SeqCst);
        }
        let mut slot = lock(&self.task);
        if !slot.as_ref().is_some_and(|w| w.will_wake(task)) {
            *slot = Some(task.clone());
        }
    }
}

impl std::task::Wake for ScriptWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.woken.swap(true, Ordering::SeqCst) {
            self.count.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(task) = lock(&self.task).as_ref() {
            task.wake_by_ref();
        }
    }
}

/// The path and query a POST to the endpoint `uri` carries: the URI resolved against the
/// SSE URL, without its origin (the client may reach the mock through a proxy or by another
/// host name; the origin is judged by the scenarios about it, not here).
fn endpoint_path(uri: &str) -> String {
    let base = url::Url::parse("http://mock.invalid/sse").expect("a valid base");
    match base.join(uri) {
        Ok(url) => match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        },
        Err(_) => uri.to_string(),
    }
}

#[cfg(test)]
mod endpoint_tests {
    use super::endpoint_path;

    #[test]
    fn endpoints_lose_their_origin_and_keep_their_query() {
        for (endpoint, path) in [
            ("/message?session_id=1", "/message?session_id=1"),
            ("http://127.0.0.1:9/rpc/message?session_id=1", "/rpc/message?session_id=1"),
            ("//localhost:9/message", "/message"),
            ("messages/?session_id=1&sid=x", "/messages/?session_id=1&sid=x"),
        ] {
            assert_eq!(endpoint_path(endpoint), path, "{endpoint}");
        }
    }
}

#[cfg(test)]
mod in_poll_tests {
    use super::InPoll;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::sync::Notify;

    /// A script woken (a request delivered to its inbox) counts as busy until it is polled,
    /// so a stop waits for it to consume what it was handed.
    #[tokio::test(flavor = "current_thread")]
    async fn a_woken_script_is_busy_until_its_next_poll() {
        let (count, delivered, polls) =
            (Arc::new(AtomicUsize::new(0)), Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
        let script = {
            let (delivered, polls) = (delivered.clone(), polls.clone());
            Box::pin(async move {
                loop {
                    polls.fetch_add(1, Ordering::SeqCst);
                    delivered.notified().await;
                }
            })
        };
        tokio::spawn(InPoll::new(script, count.clone()));
        while polls.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(count.load(Ordering::SeqCst), 0, "parked: not busy");
        delivered.notify_waiters();
        // On this one thread the script cannot have run yet: it is woken, not polled.
        assert_eq!(count.load(Ordering::SeqCst), 1, "woken and waiting for its poll: busy");
        while polls.load(Ordering::SeqCst) == 1 {
            tokio::task::yield_now().await;
        }
        assert_eq!(count.load(Ordering::SeqCst), 0, "polled and parked again: not busy");
    }
}
