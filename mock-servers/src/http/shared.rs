//! The state one HTTP mock process shares between its request handlers and its script
//! engines: connections (script parts), sessions, standing rules, the auth requirement, and
//! the helpers that build responses and record them in the same breath.

use super::Flavour;
use super::body::{MockBody, Piece, StreamBody, StreamWatch};
use super::journal::Journal;
use super::raw::SocketControl;
use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response, StatusCode};
use mcp_scenario::Revision;
use mcp_scenario::script::{ServerStep, StreamEnd};
use mcp_scenario::wire::{Recorded, WireEvent};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use tokio::sync::{Notify, mpsc, oneshot};

/// The budget key of a GET (the listener / legacy stream) in a connection's budget.
pub const GET: &str = "http:GET";
/// The budget key of a DELETE.
pub const DELETE: &str = "http:DELETE";

/// A message (or GET / DELETE) the script may consume, with the way to answer it.
pub struct Inbound {
    /// The JSON-RPC method, or [`GET`] / [`DELETE`].
    pub key: String,
    /// The JSON-RPC message (`null` for GET / DELETE).
    pub message: Value,
    /// The HTTP exchange that carried it.
    pub exchange: u64,
    /// The TCP connection that carried it.
    pub socket: Arc<SocketControl>,
    /// Where the HTTP response goes; `None` once answered.
    pub reply: Option<oneshot::Sender<Response<MockBody>>>,
}

/// The script's handle on one open stream.
#[derive(Clone)]
pub struct StreamHandle {
    /// Where pieces go.
    pub tx: mpsc::UnboundedSender<Piece>,
    /// Shared with the body.
    pub watch: Arc<StreamWatch>,
    /// The exchange whose response this stream is.
    pub exchange: u64,
    /// Its name for `stream:` fields.
    pub label: String,
    /// Whether it answers a GET (those stay open when the script ends).
    pub is_get: bool,
}

/// One connection: a part of the script (a session over Streamable HTTP, a GET stream over
/// legacy SSE) and what has arrived for it.
pub struct Conn {
    /// 1-based.
    pub index: usize,
    budget: Mutex<HashMap<String, usize>>,
    inbox: Mutex<VecDeque<Inbound>>,
    /// Woken when the inbox grows.
    pub inbox_ready: Notify,
    answers: Mutex<HashMap<String, Value>>,
    /// Woken when a client answer arrives.
    pub answer_ready: Notify,
    /// The session id issued on this connection.
    pub session: Mutex<Option<String>>,
    /// Where messages the script did not ask for go over legacy SSE (the current stream).
    pub current_stream: Mutex<Option<StreamHandle>>,
    /// The `event:` name of JSON-RPC messages on streams.
    pub message_event: Mutex<String>,
}

impl Conn {
    fn new(index: usize, steps: &[ServerStep]) -> Self {
        let mut budget: HashMap<String, usize> = HashMap::new();
        for step in steps {
            let keys: &[&str] = match step {
                ServerStep::Handshake { .. } => &["initialize", "notifications/initialized"],
                ServerStep::Expect { method, .. } => {
                    *budget.entry(method.clone()).or_default() += 1;
                    &[]
                }
                ServerStep::ExpectGet { .. } => &[GET],
                ServerStep::ExpectDelete { .. } => &[DELETE],
                _ => &[],
            };
            for k in keys {
                *budget.entry((*k).to_string()).or_default() += 1;
            }
        }
        Conn {
            index,
            budget: Mutex::new(budget),
            inbox: Mutex::new(VecDeque::new()),
            inbox_ready: Notify::new(),
            answers: Mutex::new(HashMap::new()),
            answer_ready: Notify::new(),
            session: Mutex::new(None),
            current_stream: Mutex::new(None),
            message_event: Mutex::new("message".into()),
        }
    }

    /// Whether the script will still consume a message with this key.
    pub fn wants(&self, key: &str) -> bool {
        lock(&self.budget).get(key).is_some_and(|n| *n > 0)
    }

    /// Takes one unit of budget for `key`; false when the message is unscripted.
    pub fn take(&self, key: &str) -> bool {
        match lock(&self.budget).get_mut(key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }

    /// Hands a scripted message to the script.
    pub fn deliver(&self, inbound: Inbound) {
        lock(&self.inbox).push_back(inbound);
        self.inbox_ready.notify_waiters();
    }

    /// Waits for the next scripted message with `key`.
    pub async fn next(&self, key: &str) -> Inbound {
        loop {
            let notified = self.inbox_ready.notified();
            {
                let mut inbox = lock(&self.inbox);
                if let Some(pos) = inbox.iter().position(|m| m.key == key)
                    && let Some(m) = inbox.remove(pos)
                {
                    return m;
                }
            }
            notified.await;
        }
    }

    /// Stores the client's answer to a server-to-client request.
    pub fn answer(&self, id: &Value, message: Value) {
        lock(&self.answers).insert(id.to_string(), message);
        self.answer_ready.notify_waiters();
    }

    /// Waits for the client's answer to the request with `id`.
    pub async fn answered(&self, id: &Value) {
        let key = id.to_string();
        loop {
            let notified = self.answer_ready.notified();
            if lock(&self.answers).contains_key(&key) {
                return;
            }
            notified.await;
        }
    }
}

/// A session id and whether it still works.
struct Session {
    connection: usize,
    live: bool,
}

/// The bearer token requirement (`require_auth`).
#[derive(Clone)]
pub struct AuthRule {
    /// The accepted token.
    pub token: String,
    /// The refusal status.
    pub status: u16,
    /// The `WWW-Authenticate` value.
    pub www_authenticate: String,
    /// The refusal body.
    pub text: String,
}

/// Where a request goes.
pub enum Route {
    /// To this connection.
    Conn(Arc<Conn>),
    /// Refused before the script sees it: status, body, why.
    Refuse(Arc<Conn>, u16, &'static str, &'static str),
}

/// Everything one mock process shares.
pub struct Shared {
    /// The record writer.
    pub journal: Journal,
    /// Streamable HTTP or legacy SSE.
    pub flavour: Flavour,
    /// The scenario's revision.
    pub revision: Revision,
    /// The bound port.
    pub port: u16,
    parts: Vec<Vec<ServerStep>>,
    conns: Mutex<Vec<Arc<Conn>>>,
    sessions: Mutex<HashMap<String, Session>>,
    sessions_issued: AtomicBool,
    rules: RwLock<HashMap<String, Arc<str>>>,
    auth: RwLock<Option<AuthRule>>,
    tokens: Mutex<HashMap<String, usize>>,
    exchanges: AtomicU64,
    open_streams: Mutex<Vec<(usize, u64, Weak<StreamWatch>)>>,
}

impl Shared {
    /// The shared state for a scenario's script, split into connections.
    pub fn new(journal: Journal, flavour: Flavour, revision: Revision, port: u16, parts: Vec<Vec<ServerStep>>) -> Self {
        Shared {
            journal,
            flavour,
            revision,
            port,
            parts,
            conns: Mutex::new(Vec::new()),
            sessions: Mutex::new(HashMap::new()),
            sessions_issued: AtomicBool::new(false),
            rules: RwLock::new(HashMap::new()),
            auth: RwLock::new(None),
            tokens: Mutex::new(HashMap::new()),
            exchanges: AtomicU64::new(0),
            open_streams: Mutex::new(Vec::new()),
        }
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
            let steps = self.parts.get(n - 1)?;
            let conn = Arc::new(Conn::new(n, steps));
            conns.push(conn.clone());
            conn
        };
        self.record(conn.index, &WireEvent::Started { pid: std::process::id() });
        self.record(conn.index, &WireEvent::Listening { port: self.port });
        let steps = self.parts[conn.index - 1].clone();
        tokio::spawn(super::engine::run(self.clone(), conn.clone(), steps));
        Some(conn)
    }

    /// The latest connection (connection 1 exists from the start).
    pub fn latest(self: &Arc<Self>) -> Arc<Conn> {
        if let Some(c) = lock(&self.conns).last() {
            return c.clone();
        }
        self.start_next().unwrap_or_else(|| Arc::new(Conn::new(1, &[])))
    }

    /// Connection `n`, if it started.
    pub fn conn(&self, n: usize) -> Option<Arc<Conn>> {
        lock(&self.conns).get(n.wrapping_sub(1)).cloned()
    }

    /// Every started connection.
    pub fn conns(&self) -> Vec<Arc<Conn>> {
        lock(&self.conns).clone()
    }

    /// The latest connection if it still wants `key`, else the next one if the script has
    /// one (a new session / stream), else the latest (where `key` is unscripted).
    pub fn conn_for_new(self: &Arc<Self>, key: &str) -> Arc<Conn> {
        let latest = self.latest();
        if latest.wants(key) {
            return latest;
        }
        self.start_next().unwrap_or(latest)
    }

    /// Decides which connection a Streamable HTTP request belongs to, refusing requests with
    /// a missing (400), unknown or expired (404) session.
    pub fn route_streamable(self: &Arc<Self>, session: Option<&str>, is_initialize: bool) -> Route {
        if let Some(id) = session {
            let found = lock(&self.sessions).get(id).map(|s| (s.connection, s.live));
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
                None => Route::Conn(if is_initialize { self.conn_for_new("initialize") } else { self.latest() }),
            };
        }
        if is_initialize {
            return Route::Conn(self.conn_for_new("initialize"));
        }
        let latest = self.latest();
        if lock(&latest.session).is_some() {
            return Route::Refuse(latest, 400, "session missing", "Bad Request: Mcp-Session-Id header is required");
        }
        Route::Conn(latest)
    }

    /// Registers a session id issued on connection `n`.
    pub fn issue_session(&self, conn: &Conn, id: &str) {
        lock(&self.sessions).insert(id.to_string(), Session { connection: conn.index, live: true });
        *lock(&conn.session) = Some(id.to_string());
        self.sessions_issued.store(true, Ordering::SeqCst);
    }

    /// Expires connection `conn`'s session: later requests carrying it get 404.
    pub fn expire_session(&self, conn: &Conn) {
        if let Some(id) = lock(&conn.session).as_ref()
            && let Some(s) = lock(&self.sessions).get_mut(id)
        {
            s.live = false;
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

    /// Sets the bearer token requirement.
    pub fn require_auth(&self, rule: AuthRule) {
        *self.auth.write().unwrap_or_else(|e| e.into_inner()) = Some(rule);
    }

    /// The refusal for a request's Authorization value, if the requirement rejects it.
    pub fn auth_refusal(&self, authorization: Option<&str>) -> Option<AuthRule> {
        let auth = self.auth.read().unwrap_or_else(|e| e.into_inner());
        let rule = auth.as_ref()?;
        let token = authorization.and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")));
        if token.map(str::trim) == Some(rule.token.as_str()) { None } else { Some(rule.clone()) }
    }

    /// An Authorization value with its credential replaced by `<redacted:N>`, N numbering
    /// distinct credentials by first appearance, so a transcript can tell a refreshed token
    /// from the old one without ever holding either.
    pub fn redact_credential(&self, value: &str) -> String {
        let (scheme, secret) = match value.split_once(' ') {
            Some((s, rest)) => (Some(s), rest.trim()),
            None => (None, value.trim()),
        };
        let n = {
            let mut tokens = lock(&self.tokens);
            let next = tokens.len() + 1;
            *tokens.entry(secret.to_string()).or_insert(next)
        };
        match scheme {
            Some(s) => format!("{s} <redacted:{n}>"),
            None => format!("<redacted:{n}>"),
        }
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
        let (response, recorded) = self.head(conn, status, headers);
        self.record(
            conn,
            &WireEvent::HttpResponse {
                t_us: self.journal.now_us(),
                exchange,
                status,
                headers: recorded,
                body: (!body.is_empty()).then(|| Recorded::of(&body)),
                json: None,
                why: why.into(),
            },
        );
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
        let (response, recorded) = self.head(conn, status, headers);
        self.record(
            conn,
            &WireEvent::HttpResponse {
                t_us: self.journal.now_us(),
                exchange,
                status,
                headers: recorded,
                body: None,
                json: None,
                why: why.into(),
            },
        );
        let me = Arc::downgrade(self);
        let watch = StreamWatch::new(move || {
            if let Some(me) = me.upgrade() {
                me.record(
                    conn,
                    &WireEvent::StreamEnd { t_us: me.journal.now_us(), exchange, how: "client went away".into() },
                );
            }
        });
        lock(&self.open_streams).push((conn, exchange, Arc::downgrade(&watch)));
        let (tx, body) = StreamBody::channel(socket, watch.clone());
        let response = response.body(MockBody::Stream(body)).unwrap_or_else(|_| fallback());
        (response, StreamHandle { tx, watch, exchange, label, is_get })
    }

    /// Writes bytes on a stream, recorded. A stream the client left takes nothing more.
    pub fn write(&self, conn: usize, stream: &StreamHandle, bytes: Vec<u8>, why: &str) {
        if stream.watch.ended.load(Ordering::SeqCst) {
            self.note(conn, format!("{why}: stream #{} has ended; nothing written", stream.exchange));
            return;
        }
        self.record(
            conn,
            &WireEvent::StreamWrite {
                t_us: self.journal.now_us(),
                exchange: stream.exchange,
                bytes: Recorded::of(&bytes),
                why: why.into(),
            },
        );
        let _ = stream.tx.send(Piece::Data(Bytes::from(bytes)));
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
            self.record(
                conn,
                &WireEvent::StreamEnd { t_us: self.journal.now_us(), exchange: stream.exchange, how: name.into() },
            );
            let _ = stream.tx.send(Piece::End(how));
        }
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

    fn head(
        &self,
        conn: usize,
        status: u16,
        headers: &[(String, String)],
    ) -> (http::response::Builder, BTreeMap<String, String>) {
        let mut builder =
            Response::builder().status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
        let mut recorded = BTreeMap::new();
        for (name, value) in headers {
            match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
                (Ok(n), Ok(v)) => {
                    recorded.insert(n.as_str().to_string(), value.clone());
                    builder = builder.header(n, v);
                }
                _ => self.note(conn, format!("header {name:?}: {value:?} is not a valid HTTP header; left out")),
            }
        }
        (builder, recorded)
    }
}

fn fallback() -> Response<MockBody> {
    let mut r = Response::new(MockBody::empty());
    *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    r
}

/// Locks a mutex, surviving poisoning (a panicked task must not take the mock down).
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
