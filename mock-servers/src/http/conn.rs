//! The data of one HTTP connection (a session over Streamable HTTP, a GET stream over
//! legacy SSE): its part of the script and message budget, what has arrived for it, its
//! open streams; plus the small records the handler and the engine pass each other (and the
//! standing answers the script leaves for messages no step consumes).

use super::body::{MockBody, Piece, StreamWatch};
use super::outbox;
use super::raw::SocketControl;
use crate::budget::Budget;
use crate::inbox::{Answers, Inbox};
use crate::sync::lock;
use bytes::Bytes;
use http::Response;
use mcp_scenario::ServerStep;
use serde_json::Value;

use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// One connection's part of the server script, and how many messages of each key it
/// consumes (see [`crate::ops::budget`]).
pub struct Part {
    /// The steps.
    pub steps: Vec<ServerStep>,
    /// Messages by key (method, [`GET`], [`DELETE`]).
    pub budget: Budget,
}

/// The budget key of a GET (the listener / legacy stream) in a connection's budget, for
/// steps that take any GET.
pub const GET: &str = "http:GET";
/// The budget key of a GET without `Last-Event-ID` (`expect_get` with `resumption: false`).
pub const GET_LISTENER: &str = "http:GET:listener";
/// The budget key of a GET with `Last-Event-ID` (`expect_get` with `resumption: true`).
pub const GET_RESUMPTION: &str = "http:GET:resumption";
/// The budget key of a DELETE.
pub const DELETE: &str = "http:DELETE";

/// Whether `key` is a GET's or a DELETE's budget key, not a JSON-RPC method's.
pub fn is_http_only(key: &str) -> bool {
    [GET, GET_LISTENER, GET_RESUMPTION, DELETE].contains(&key)
}

/// Which GETs an `expect_get` step consumes (its `resumption` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GetKind {
    /// Any GET.
    Any,
    /// Only a GET without `Last-Event-ID`.
    Listener,
    /// Only a GET with `Last-Event-ID`.
    Resumption,
}

impl GetKind {
    /// The kind a step's `resumption` field asks for.
    pub fn of(resumption: Option<bool>) -> Self {
        match resumption {
            None => GetKind::Any,
            Some(false) => GetKind::Listener,
            Some(true) => GetKind::Resumption,
        }
    }

    /// The kind of a GET that arrived with `headers` (recorded, lowercase names): a
    /// resumption when it carries `Last-Event-ID`.
    pub fn arrived(headers: &std::collections::BTreeMap<String, String>) -> Self {
        if headers.contains_key("last-event-id") { GetKind::Resumption } else { GetKind::Listener }
    }

    /// The budget keys a GET that arrived as this kind is consumed under, in order: its own
    /// kind's, then any GET's.
    fn budget_keys(self) -> [&'static str; 2] {
        [self.key(), GET]
    }

    /// The budget key of steps of this kind.
    pub fn key(self) -> &'static str {
        match self {
            GetKind::Any => GET,
            GetKind::Listener => GET_LISTENER,
            GetKind::Resumption => GET_RESUMPTION,
        }
    }

    /// Whether a step of this kind takes a GET that arrived as `arrived`.
    pub fn admits(self, arrived: GetKind) -> bool {
        self == GetKind::Any || self == arrived
    }

    /// Whether some GET is taken by steps of both kinds.
    pub fn overlaps(self, other: GetKind) -> bool {
        self == GetKind::Any || other == GetKind::Any || self == other
    }
}

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
    pub reply: Option<ReplyTx>,
}

/// The way to a held request's HTTP response.
pub struct ReplyTx(oneshot::Sender<Response<MockBody>>);

impl ReplyTx {
    /// Wraps the handler's end of the response channel.
    pub fn new(tx: oneshot::Sender<Response<MockBody>>) -> Self {
        ReplyTx(tx)
    }

    /// Sends the response: when the engine yields, if the engine sends it (see
    /// [`super::outbox`]). A handler that gave up on it drops it.
    pub fn send(self, response: Response<MockBody>) {
        outbox::send(move || {
            let _ = self.0.send(response);
        });
    }
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

impl StreamHandle {
    /// Hands a piece to the stream's body: when the engine yields, if the engine sends it
    /// (see [`super::outbox`]). A body already gone drops it.
    pub fn push(&self, piece: Piece) {
        let tx = self.tx.clone();
        outbox::send(move || {
            let _ = tx.send(piece);
        });
    }
}

/// One connection: a part of the script (a session over Streamable HTTP, a GET stream over
/// legacy SSE) and what has arrived for it.
pub struct Conn {
    /// 1-based.
    pub index: usize,
    budget: Mutex<Budget>,
    inbox: Inbox<Inbound>,
    answers: Answers,
    /// The session id issued on this connection.
    pub session: Mutex<Option<String>>,
    /// Where messages the script did not ask for go over legacy SSE (the current stream).
    pub current_stream: Mutex<Option<StreamHandle>>,
    /// The `event:` name of JSON-RPC messages on streams.
    pub message_event: Mutex<String>,
    /// The answers for GETs no step consumes (`expect_get` with `repeat` / `optional`).
    pub standing_gets: Mutex<StandingGets>,
    /// The answers for requests no step consumes, by method (`respond` with `repeat`).
    pub standing_responses: Mutex<std::collections::HashMap<String, StandingResponse>>,
    /// Set once the script has applied the standing rules it starts with (see
    /// [`crate::ops::Transports::standing`]): requests wait for it, so the first request cannot
    /// overtake a leading `require_auth`.
    ready: tokio::sync::watch::Sender<bool>,
}

impl Conn {
    /// Connection `index` (1-based), whose script consumes `budget` messages by key.
    pub fn new(index: usize, budget: Budget) -> Self {
        Conn {
            index,
            budget: Mutex::new(budget),
            inbox: Inbox::default(),
            answers: Answers::default(),
            session: Mutex::new(None),
            current_stream: Mutex::new(None),
            message_event: Mutex::new("message".into()),
            standing_gets: Mutex::new(StandingGets::default()),
            standing_responses: Mutex::new(std::collections::HashMap::new()),
            ready: tokio::sync::watch::Sender::new(false),
        }
    }

    /// The script has applied its leading standing rules; requests may be handled.
    pub fn mark_ready(&self) {
        self.ready.send_replace(true);
    }

    /// Waits until the script has applied its leading standing rules.
    pub async fn ready(&self) {
        // Every request passes here: once ready, no receiver is made.
        if *self.ready.borrow() {
            return;
        }
        let mut rx = self.ready.subscribe();
        // The sender lives as long as the connection, which outlives this borrow.
        let _ = rx.wait_for(|ready| *ready).await;
    }

    /// Whether the script will still consume a message with this key.
    pub fn wants(&self, key: &str) -> bool {
        lock(&self.budget).wants(key)
    }

    /// Takes one unit of budget for `key`; false when the message is unscripted.
    pub fn take(&self, key: &str) -> bool {
        lock(&self.budget).take(key)
    }

    /// The budget key a GET that arrived as `arrived` is consumed under, if the script
    /// will still consume one: its own kind's, else any GET's (validation keeps the two
    /// apart on one connection).
    pub fn get_key(&self, arrived: GetKind) -> Option<&'static str> {
        let budget = lock(&self.budget);
        arrived.budget_keys().into_iter().find(|key| budget.wants(key))
    }

    /// Takes one unit of budget for a GET that arrived as `arrived` ([`Self::get_key`]),
    /// under one lock so two GETs at once cannot both count on the last unit.
    pub fn take_get(&self, arrived: GetKind) -> Option<&'static str> {
        let mut budget = lock(&self.budget);
        arrived.budget_keys().into_iter().find(|key| budget.take(key))
    }

    /// Hands a scripted message to the script.
    pub fn deliver(&self, inbound: Inbound) {
        self.inbox.deliver(inbound);
    }

    /// Waits for the next scripted message with `key`.
    pub async fn next(&self, key: &str) -> Inbound {
        self.inbox.take(|m| m.key == key, || {}).await
    }

    /// Stores the client's answer to a server-to-client request.
    pub fn answer(&self, id: &Value, message: Value) {
        self.answers.insert(id, message);
    }

    /// Waits for the client's answer to the request with `id`.
    pub async fn answered(&self, id: &Value) {
        self.answers.wait(&id.to_string(), || {}).await;
    }
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
    /// Only requests with this HTTP method are judged (upper case); `None`: all.
    pub http_method: Option<String>,
}

/// Where a request goes.
pub enum Route {
    /// To this connection.
    Conn(Arc<Conn>),
    /// Refused before the script sees it: status, body, why.
    Refuse(Arc<Conn>, u16, &'static str, &'static str),
}

/// One GET answer, as an `expect_get` step gives it.
#[derive(Clone, Debug)]
pub struct GetAnswer {
    /// The status.
    pub status: u16,
    /// The response headers (content type included).
    pub headers: Vec<(String, String)>,
    /// A non-stream body.
    pub body: Bytes,
    /// How the answer is shaped.
    pub shape: Shape,
    /// The stream's name for `stream:` fields (an open stream).
    pub label: String,
}

/// How a GET answer is shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// An open stream the script writes on (repeats end at once).
    OpenStream,
    /// A 2xx `text/event-stream` answer with no bytes that ends at once (`close`).
    EndedStream,
    /// A plain response (non-2xx, or another content type).
    Plain,
}

/// The standing answers a connection keeps for GETs, at most one per kind.
#[derive(Default, Debug)]
pub struct StandingGets(Vec<StandingGet>);

impl StandingGets {
    /// Keeps `standing`, in place of the one of its kind.
    pub fn set(&mut self, standing: StandingGet) {
        self.remove(standing.kind);
        self.0.push(standing);
    }

    /// The one of `kind`.
    pub fn of_kind(&mut self, kind: GetKind) -> Option<&mut StandingGet> {
        self.0.iter_mut().find(|s| s.kind == kind)
    }

    /// Drops the one of `kind`.
    pub fn remove(&mut self, kind: GetKind) {
        self.0.retain(|s| s.kind != kind);
    }

    /// The one that answers a GET that arrived as `arrived`.
    pub fn admitting(&mut self, arrived: GetKind) -> Option<&mut StandingGet> {
        self.0.iter_mut().find(|s| s.kind.admits(arrived))
    }
}

/// What the record says answered a GET of an `optional` `expect_get`: the transcript leaves
/// such a GET out when refused, since whether the client sent it before its plan ended is
/// its timing (`transcript::lanes`).
pub const OPTIONAL_GET: &str = "expect_get (optional)";

/// The standing answer of one `expect_get`.
#[derive(Clone, Debug)]
pub struct StandingGet {
    /// The GETs it answers.
    pub kind: GetKind,
    /// The answer.
    pub answer: GetAnswer,
    /// An `optional` step moved on before its GET came: the next GET is that step's.
    pub first_pending: bool,
    /// Every later GET gets the answer too.
    pub repeat: bool,
}

/// An HTTP answer a `respond` step gave, standing for every later request with its method.
#[derive(Clone, Debug)]
pub struct StandingResponse {
    /// The status.
    pub status: u16,
    /// The response headers (content type included).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}
