//! Check data: what must hold of a run's outcome and wire transcript. Each kind has its own
//! data type, so the harness implements one trait per kind (`harness/src/checks/<kind>.rs`:
//! its load-time validation, which targets it applies to, how it is evaluated).

use crate::default_true;
use crate::plan::default_jitter;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

/// A check on the outcome or the wire. Written as a one-key mapping, e.g.
/// `- outcome: {step: 2, ok: true}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// The outcome of a plan step (1-based).
    Outcome(OutcomeCheck),
    /// The client sent a message with this method (on the given connection, default any).
    Sent(SentCheck),
    /// The client never sent a message with this method.
    NotSent(NotSentCheck),
    /// The client's first `first` message precedes its first `then` message.
    SentBefore(OrderCheck),
    /// The client sent `notifications/cancelled` for the request the server labelled.
    Cancelled(CancelledCheck),
    /// The client's answer to a server-to-client request.
    Answered(AnsweredCheck),
    /// The mock received (or did not receive) a signal.
    Signal(SignalCheck),
    /// The mock saw its stdin reach EOF.
    StdinClosed(StdinClosedCheck),
    /// The bundled client's diagnostic counters (skipped for external clients).
    Diagnostics(DiagnosticsCheck),
    /// The client reported receiving this notification.
    Notified(NotifiedCheck),
    /// HTTP: the client's HTTP requests that match (by HTTP method, JSON-RPC method, path,
    /// query, connection) carried a header, with a value, a number of times.
    Http(HttpCheck),
    /// HTTP: the client's requests to a path (the authorization server's `/authorize`,
    /// `/token`, `/register`) carried a parameter — in the query, the form body, or a JSON
    /// body's top-level member — with a value, a number of times or every time.
    Param(ParamCheck),
    /// The client never reported receiving a notification with this method.
    NotNotified(NotNotifiedCheck),
    /// HTTP: the client's first request matching `first` reached the mock before its first
    /// request matching `then` (HTTP exchanges and the JSON-RPC messages they carry).
    HttpOrder(HttpOrderCheck),
    /// HTTP: the client closed a stream the script opened (the mock saw it go away).
    StreamClosed(StreamClosedCheck),
    /// A plan step failed with exactly this error text (bundled target only).
    ErrorIs(ErrorIsCheck),
    /// The bundled manager's reconnect attempts waited the backoff schedule (bundled only).
    Backoff(BackoffCheck),
    /// A plan step given no timeout failed by itself before the run deadline (the client has
    /// a default timeout); a step still waiting at the deadline is "no default timeout".
    TimesOut(TimesOutCheck),
    /// The client's messages on a connection are, in order, the ones a recorded session
    /// pinned (`mcp-harness record`); the first that differs is reported with both sides.
    Replays(ReplaysCheck),
}

/// See [`Check::Replays`]. Written by `mcp-harness record`, e.g.
/// `- replays: {connection: 1, messages: [{method: initialize}, {method:
/// notifications/initialized}, {method: tools/call, params: {"name": "add"}}]}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaysCheck {
    /// The connection (1-based; default 1).
    #[serde(default = "default_connection")]
    pub connection: usize,
    /// The client's JSON-RPC messages as recorded, in wire order; the client must send
    /// exactly these (each matching), no fewer and no more.
    pub messages: Vec<RecordedMessage>,
}

fn default_connection() -> usize {
    1
}

/// One client message a recording pinned (see [`ReplaysCheck`]): a request or notification
/// (`method`, `params` as a subset), or the client's answer to a server request (`answer`).
#[skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedMessage {
    /// The JSON-RPC method (a request or a notification).
    pub method: Option<String>,
    /// Members the message's params must contain (recursive subset match; ids, `_meta` and
    /// client-specific fields are left out by the recorder).
    pub params: Option<Value>,
    /// The client's response to the server request the script labelled so (`request … as:`).
    pub answer: Option<String>,
}

/// See [`Check::TimesOut`]. Example: `- times_out: {step: 2}` with a `request` that sets no
/// `timeout_ms` on a `connect` that sets none, against a script that never answers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimesOutCheck {
    /// The plan step (1-based).
    pub step: usize,
}

/// See [`Check::Backoff`]. Example: `- backoff: {delays_ms: [20, 40, 80], slack_ms: 500}`:
/// exactly three reconnect attempts, each planned after exactly its delay with a drawn delay
/// (planned plus jitter) within `delays_ms[n]..=delays_ms[n]·(1 + jitter)`, the n-th starting at
/// least its drawn delay and at most that plus `slack_ms` after the close or failed attempt
/// before it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackoffCheck {
    /// The expected delay before each attempt, in order.
    pub delays_ms: Vec<u64>,
    /// The jitter fraction the connection was given (default 0.2): the drawn delays may exceed
    /// the planned ones by at most this fraction.
    #[serde(default = "default_jitter")]
    pub jitter: f64,
    /// Scheduling slack allowed above the drawn delay (default 500: a respawn on a loaded
    /// machine; the planned and drawn delays are checked exactly, so the bound only has to
    /// catch a wait far off them).
    #[serde(default = "default_backoff_slack_ms")]
    pub slack_ms: u64,
}

fn default_backoff_slack_ms() -> u64 {
    500
}

/// See [`Check::NotNotified`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotNotifiedCheck {
    /// The notification method.
    pub method: String,
}

/// See [`Check::HttpOrder`]. Example: `- http_order: {first: {method:
/// notifications/initialized}, then: {http_method: GET}}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpOrderCheck {
    /// The request that must come first.
    pub first: HttpFilter,
    /// The request that must come after it.
    pub then: HttpFilter,
    /// `then` must come after the mock answered `first`, not only after `first` arrived:
    /// for a rule about waiting for that answer. Requests a client sends at once on two
    /// connections arrive in either order; whether it waited for an answer does not
    /// (pair it with a held answer, e.g. the handshake's `hold_initialized_ms`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub answered: bool,
}

/// Which HTTP requests a filter selects; every given field must match.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpFilter {
    /// The HTTP method (`POST`, `GET`, `DELETE`).
    pub http_method: Option<String>,
    /// The JSON-RPC method the request's body carries.
    pub method: Option<String>,
    /// The path, without the query.
    pub path: Option<String>,
}

/// See [`Check::StreamClosed`]. Example: `- stream_closed: {stream: call}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamClosedCheck {
    /// The stream's name as the script gives it: an `open_stream` answering a request the
    /// script labelled (`as:` on the `expect`, or the `open_stream`'s own `as:`), or an
    /// `expect_get` stream (`get` unless named).
    pub stream: String,
}

/// See [`Check::ErrorIs`]. Example: `- error_is: {step: 2, text: "Transport not connected"}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorIsCheck {
    /// The plan step (1-based).
    pub step: usize,
    /// The whole error text (SPEC's strings; `outcome`'s `error` matches a prefix).
    pub text: String,
}

/// See [`Check::Http`]. Examples: `- http: {http_method: DELETE}` (a DELETE was sent);
/// `- http: {http_method: GET, header: Last-Event-ID, value: "7"}`;
/// `- http: {method: tools/list, header: Mcp-Session-Id, value: "{session}", every: true}`;
/// `- http: {method: initialize, header: Mcp-Session-Id, count: 0}`.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpCheck {
    /// Only requests with this HTTP method (`POST`, `GET`, `DELETE`).
    pub http_method: Option<String>,
    /// Only POSTs whose JSON-RPC body has this method.
    pub method: Option<String>,
    /// Only requests to this path (without the query).
    pub path: Option<String>,
    /// Only requests whose query string (after `?`) is exactly this; `""` selects requests
    /// without one.
    pub query: Option<String>,
    /// Only on this connection (1-based).
    pub connection: Option<usize>,
    /// The header that must be present (case-insensitive name).
    pub header: Option<String>,
    /// The header's value, compared as the spec compares it: `Accept` by member (each media
    /// type listed here must be among the client's, order and parameters ignored),
    /// `Content-Type` by media type, `Authorization` with a case-insensitive scheme, every
    /// other header exactly. `{session}` stands for the session id the mock issued on
    /// that connection. Authorization values are recorded as `Bearer <redacted:N>` (N
    /// numbers distinct tokens by first appearance).
    pub value: Option<String>,
    /// Exactly this many matching requests (default: at least one).
    pub count: Option<usize>,
    /// No more than this many matching requests (none passes): "must not retry / must not
    /// loop" rules, read after an observation window (a plan `wait`) long enough for a
    /// client's retry to arrive.
    pub at_most: Option<usize>,
    /// Every request matching the filters carried the header (and value); at least one.
    #[serde(default)]
    pub every: bool,
    /// With `every`: the requests are optional (the GET listener is a MAY, DELETE on close a
    /// SHOULD), so none at all passes; each one the client does send must carry the header.
    /// For a MUST about "all requests" that should not fail a client for sending none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// Only requests the client sent after its first message with this JSON-RPC method on
    /// the same connection, e.g. `initialize` for a rule about "all subsequent requests".
    /// A client that never sent it (a 2026-07-28 client that did not fall back) is not
    /// judged by this check, and a note says so: the rule had nothing to apply to. Likewise
    /// a `value` with `{session}` is not judged where the mock issued no session.
    pub after: Option<String>,
}

/// See [`Check::Param`]. E.g. `- param: {path: /token, name: resource, value:
/// "{origin}/mcp", every: true}`; `- param: {path: /authorize, name: code_challenge_method,
/// value: S256, every: true}`; `- param: {path: /token, name: refresh_token, count: 0}`.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParamCheck {
    /// The requests' path, without the query (`/token`).
    pub path: String,
    /// Only requests with this HTTP method.
    pub http_method: Option<String>,
    /// The parameter's name.
    pub name: String,
    /// Its value (a JSON array member holds it when one of its strings is it); `{origin}`
    /// stands for the mock's origin, `http://127.0.0.1:<port>`. Absent: any value. A
    /// secret's value is never printed in a failure.
    pub value: Option<String>,
    /// Exactly this many of the requests carried it (`0`: none did). Default: at least one.
    pub count: Option<usize>,
    /// Every request to the path carried it; at least one request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub every: bool,
    /// Only requests the mock answered with this HTTP status (`400`: the ones it refused).
    pub answered: Option<u16>,
    /// Judge only a client that sent at least one request to the path carrying the parameter
    /// (with the value), whatever the answer: a rule about, say, refresh requests has nothing
    /// to apply to in a client that never refreshes (the check is then not judged), and in
    /// one that did, `count: 0` judges how its requests fared, not a mere absence.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_if_sent: bool,
}

/// See [`Check::Outcome`].
#[skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutcomeCheck {
    /// The plan step (1-based).
    pub step: usize,
    /// Must the step succeed (`true`) or fail (`false`)? Every `outcome` check says which,
    /// or gives `error` (which implies `ok: false`), or `settled: true`.
    pub ok: Option<bool>,
    /// The step must end, by success or by failure, before the run deadline; which one is
    /// not judged (for a rule that only asks the client not to hang). Instead of `ok`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub settled: bool,
    /// The error text must start with this (bundled target only; implies `ok: false`).
    pub error: Option<String>,
    /// The result must contain these members (a recursive subset match).
    pub result: Option<Value>,
    /// The step must finish within this many ms (a bound, never a race: 100 ms or more from
    /// the step's own timeout).
    pub within_ms: Option<u64>,
    /// The step must take at least this many ms (10 ms or more below the step's own timeout,
    /// or 100 ms or more above it: a timer fires a little early or late).
    pub at_least_ms: Option<u64>,
}

/// See [`Check::Sent`].
#[skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SentCheck {
    /// The method.
    pub method: String,
    /// Exactly this many times (default: at least once).
    pub count: Option<usize>,
    /// No more than this many times (none passes): "must not retry / must not loop" rules,
    /// read after an observation window (a plan `wait`) long enough for a retry to arrive.
    pub at_most: Option<usize>,
    /// The params must contain these members (recursive subset match).
    pub params: Option<Value>,
    /// Only on this connection (1-based).
    pub connection: Option<usize>,
    /// Only requests whose id has this JSON type (`string` / `integer`).
    pub id_type: Option<IdType>,
    /// Only messages at least this many bytes long (as serialised JSON): e.g. padded params.
    pub min_bytes: Option<usize>,
}

/// See [`SentCheck::id_type`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IdType {
    /// A JSON string.
    String,
    /// A JSON integer.
    Integer,
}

/// See [`Check::NotSent`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotSentCheck {
    /// The method.
    pub method: String,
}

/// See [`Check::Notified`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotifiedCheck {
    /// The method.
    pub method: String,
}

/// See [`Check::SentBefore`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderCheck {
    /// The method that must come first.
    pub first: String,
    /// The method that must come after.
    pub then: String,
}

/// See [`Check::Cancelled`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelledCheck {
    /// The server script's label of the cancelled request.
    pub request: String,
    /// `false` asserts that no cancellation was sent for it.
    #[serde(default = "default_true")]
    pub sent: bool,
}

/// See [`Check::Answered`].
#[skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnsweredCheck {
    /// The server `request` step's label.
    pub request: String,
    /// The answer's result must contain these members.
    pub result: Option<Value>,
    /// The answer must be an error with this code.
    pub error_code: Option<i64>,
    /// The answer must be an error (any code): for a MUST that asks for an error but no code.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub error: bool,
    /// The answer must be an empty result: no member but `_meta` (a ping's answer:
    /// "The receiver MUST respond promptly with an empty response"). `result: {}` is a
    /// subset, which any result holds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty: bool,
}

/// See [`Check::Signal`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalCheck {
    /// The signal name, e.g. `SIGTERM`.
    pub name: String,
    /// `false` asserts the signal never arrived.
    #[serde(default = "default_true")]
    pub received: bool,
}

/// See [`Check::StdinClosed`].
#[skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StdinClosedCheck {
    /// The connection (1-based); default 1.
    pub connection: Option<usize>,
}

/// See [`Check::Diagnostics`]. Each given counter must equal the value.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsCheck {
    /// Inbound messages dropped as malformed or not JSON-RPC.
    pub protocol_violations: Option<u64>,
    /// Responses for timed-out or cancelled requests.
    pub late_responses: Option<u64>,
    /// Responses with an id never used.
    pub unknown_responses: Option<u64>,
    /// Messages dropped for size.
    pub oversize_dropped: Option<u64>,
    /// The captured stderr must contain this text.
    pub stderr_contains: Option<String>,
}
