//! The scenario file format (v1): what the client under test is asked to do (`client`),
//! what the mock server does (`server`), and what must hold afterwards (`checks`).
//!
//! The Rust types are the single source of truth: the loader deserialises them strictly
//! (unknown fields rejected) and `scenarios/schema.json` is generated from them.
//! Documentation with examples: `scenarios/README.md`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One scenario file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Unique name; also the snapshot's file name. Lowercase words joined by `-`.
    pub name: String,
    /// One sentence: what this scenario proves.
    pub summary: String,
    /// The transport(s) this scenario runs over.
    pub transport: TransportSet,
    /// The MCP protocol revision the mock speaks, e.g. `2025-11-25`.
    pub revision: Revision,
    /// Where the rule comes from: SPEC section, MCP spec page, seed section, or bug URL.
    #[serde(default)]
    pub refs: Vec<String>,
    /// Hard deadline for the whole run in ms; on expiry the client is killed and the run is
    /// reported as a timeout.
    #[serde(default = "default_deadline_ms")]
    pub deadline_ms: u64,
    /// The scenario checks a behaviour SPEC.md sets for the bundled transports that the MCP
    /// specification leaves to each client (e.g. listing tools during the handshake);
    /// external clients skip it with that reason instead of failing it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bundled_only: bool,
    /// The client plan: what the client under test is asked to do, in order.
    pub client: Vec<ClientStep>,
    /// The server script the mock executes, in order. A `new_connection` step starts the
    /// script of the client's next connection (a respawn, a new HTTP session).
    pub server: Vec<ServerStep>,
    /// What must hold of the outcome and the wire transcript.
    #[serde(default)]
    pub checks: Vec<Check>,
}

fn default_deadline_ms() -> u64 {
    3000
}

/// The transports a scenario runs over: one name or a list of names.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TransportSet {
    /// A single transport.
    One(TransportName),
    /// Several transports; the scenario runs once per transport.
    Many(Vec<TransportName>),
}

impl TransportSet {
    /// The transports as a list.
    pub fn to_vec(&self) -> Vec<TransportName> {
        match self {
            TransportSet::One(t) => vec![*t],
            TransportSet::Many(ts) => ts.clone(),
        }
    }
}

/// A wire transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TransportName {
    /// Newline-delimited JSON over a child process's stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE (2024-11-05).
    LegacySse,
}

impl TransportName {
    /// The name as written in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportName::Stdio => "stdio",
            TransportName::Http => "http",
            TransportName::LegacySse => "legacy-sse",
        }
    }
}

/// An MCP protocol revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub enum Revision {
    /// 2024-11-05 (legacy HTTP+SSE).
    #[serde(rename = "2024-11-05")]
    R2024_11_05,
    /// 2025-03-26 (Streamable HTTP, batches).
    #[serde(rename = "2025-03-26")]
    R2025_03_26,
    /// 2025-06-18.
    #[serde(rename = "2025-06-18")]
    R2025_06_18,
    /// 2025-11-25.
    #[serde(rename = "2025-11-25")]
    R2025_11_25,
    /// 2026-07-28 (stateless).
    #[serde(rename = "2026-07-28")]
    R2026_07_28,
}

impl Revision {
    /// The revision string as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::R2024_11_05 => "2024-11-05",
            Revision::R2025_03_26 => "2025-03-26",
            Revision::R2025_06_18 => "2025-06-18",
            Revision::R2025_11_25 => "2025-11-25",
            Revision::R2026_07_28 => "2026-07-28",
        }
    }
}

/// A generated payload: `size` copies of `fill`, then `\n` when `newline` is true.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Generate {
    /// Number of fill bytes.
    pub size: usize,
    /// The fill byte, as a one-character ASCII string. Default `x`.
    #[serde(default = "default_fill")]
    pub fill: String,
    /// Append `\n`. Default true.
    #[serde(default = "default_true")]
    pub newline: bool,
}

fn default_fill() -> String {
    "x".into()
}

fn default_true() -> bool {
    true
}

/// How a `reply` corrupts the id it answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WrongId {
    /// The same value with the other JSON type: `2` → `"2"`, `"2"` → `2` when numeric.
    OtherType,
    /// `null`.
    Null,
    /// An id the client never used.
    Unknown,
}

/// One step of the mock's script.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum ServerStep {
    /// Expect `initialize`, reply with a canned result (protocolVersion = the scenario's
    /// revision unless overridden), then expect `notifications/initialized`.
    Handshake {
        /// Overrides the protocolVersion the mock answers with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        protocol_version: Option<String>,
        /// Overrides the advertised server capabilities (default `{}`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capabilities: Option<Value>,
        /// Streamable HTTP (stateful revisions): issue an `Mcp-Session-Id` on the initialize
        /// response (default true). Once issued, requests without it get 400 and requests
        /// with an unknown or expired one get 404.
        #[serde(default = "default_true")]
        session: bool,
        /// Streamable HTTP: the session id to issue (default: a fresh random one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
    },
    /// Wait for the next client message with this method (request or notification).
    /// Messages for methods no later `expect` names are answered `-32601` at once.
    Expect {
        /// The JSON-RPC method.
        method: String,
        /// A label that later steps and checks use to refer to this request.
        #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// Answer an expected request (the latest one, or the one labelled `to`).
    Reply {
        /// The label of the request to answer; default: the latest expected request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
        /// The result (default `{}` unless `error` is given).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// A JSON-RPC error object instead of a result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<Value>,
        /// Answer with a corrupted id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wrong_id: Option<WrongId>,
        /// Pad the result with a `_pad` string so the whole line is about this many bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pad_to: Option<usize>,
        /// Line ending: `lf` (default) or `crlf`.
        #[serde(default)]
        line_end: LineEnd,
        /// Split the reply into writes of these sizes (the rest goes in a last write).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chunks: Vec<usize>,
        /// Delay between split writes, in ms.
        #[serde(default)]
        chunk_delay_ms: u64,
    },
    /// Write raw bytes to the client, optionally split into several writes. Exactly one of
    /// `text`, `hex`, `base64`, `json`, `generate`.
    Send {
        /// Verbatim UTF-8 text (YAML escapes such as `\r\n` apply in double quotes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Arbitrary bytes as hex, e.g. `ff fe 0a` (spaces ignored).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hex: Option<String>,
        /// Arbitrary bytes as standard base64.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base64: Option<String>,
        /// Any JSON value, written compactly on one line followed by `\n`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        json: Option<Value>,
        /// A large payload generated from a size, never stored in the file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generate: Option<Generate>,
        /// Split the bytes into writes of these sizes (the rest goes in a last write).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chunks: Vec<usize>,
        /// Delay between split writes, in ms.
        #[serde(default)]
        chunk_delay_ms: u64,
    },
    /// Send a notification.
    Notify {
        /// The method.
        method: String,
        /// The params (omitted when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
    },
    /// Send a server-to-client request; `expect_response` waits for the answer.
    Request {
        /// The method.
        method: String,
        /// The params (omitted when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
        /// The label `expect_response` and checks use.
        #[serde(rename = "as")]
        label: String,
    },
    /// Wait for the client's answer to a server-to-client request.
    ExpectResponse {
        /// The label given to the `request` step.
        to: String,
    },
    /// Write to stderr (the client must treat it as a log, never an error). Exactly one of
    /// `text`, `generate`.
    Stderr {
        /// Verbatim UTF-8 text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// A generated payload.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generate: Option<Generate>,
    },
    /// Do nothing for this long.
    Delay {
        /// Milliseconds.
        ms: u64,
    },
    /// Stop executing the script: never answer again (unscripted requests still get -32601).
    Stall,
    /// Stop reading stdin, so the client's writes eventually block.
    StopReading,
    /// From now on, record SIGTERM and keep running.
    IgnoreSigterm,
    /// From now on, keep running after stdin reaches EOF.
    IgnoreStdinEof,
    /// Wait until stdin reaches EOF.
    ExpectEof,
    /// Exit now, with a code or by a signal (e.g. `SIGKILL`).
    Exit {
        /// The exit code (default 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        /// A signal to kill the mock with instead.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<String>,
    },
    /// The steps after this one run on the client's next connection. Over Streamable HTTP a
    /// connection is a session (the next `initialize` starts it); over legacy SSE it is the
    /// next GET stream.
    NewConnection,
    /// HTTP: answer the expected request (the latest, or the one labelled `to`) with any
    /// status, headers, content type and body. Header values and `text` may use `{origin}`
    /// (e.g. `http://127.0.0.1:4242`) and `{port}`.
    Respond {
        /// The label of the request to answer; default: the latest expected message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
        /// The HTTP status (default 200).
        #[serde(default = "default_status")]
        status: u16,
        /// Extra response headers, e.g. `{Location: "/mcp2"}`.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        headers: std::collections::BTreeMap<String, String>,
        /// The `Content-Type` (default `application/json` for `json`, `text/plain` for
        /// `text` / `generate`, none for an empty body).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_type: Option<String>,
        /// A JSON body, written compactly.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        json: Option<Value>,
        /// A verbatim text body.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// A large generated body (`newline` is ignored unless true).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generate: Option<Generate>,
    },
    /// HTTP: answer the expected request with raw bytes written on the socket instead of a
    /// well-formed response (bad status lines, broken chunking, wrong Content-Length…).
    /// Exactly one of `text`, `hex`, `base64`.
    RawResponse {
        /// The label of the request to answer; default: the latest expected message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
        /// Verbatim UTF-8 text (YAML escapes such as `\r\n` apply in double quotes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Arbitrary bytes as hex (spaces ignored).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hex: Option<String>,
        /// Arbitrary bytes as standard base64.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base64: Option<String>,
        /// Split the bytes into writes of these sizes (the rest goes in a last write).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chunks: Vec<usize>,
        /// Delay between split writes, in ms.
        #[serde(default)]
        chunk_delay_ms: u64,
        /// What happens to the connection after the bytes: `close` (default), `reset`, `stall`.
        #[serde(default)]
        then: SocketEnd,
    },
    /// HTTP: answer the expected POST with `200 text/event-stream` and keep the stream open.
    /// It becomes the current stream: later `reply`, `notify`, `request`, `event` and `send`
    /// steps write on it. The `reply` to the request it answers ends it cleanly (unless
    /// `keep_open`); reply streams still open when the script runs to its end are ended
    /// cleanly too (end one otherwise with `end_stream`; keep it open with `stall`).
    OpenStream {
        /// The label of the request to answer; default: the latest expected message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
        /// The stream's name for `stream:` fields (default: the request's label, else `post`).
        #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
        label: Option<String>,
        /// The HTTP status (default 200).
        #[serde(default = "default_status")]
        status: u16,
        /// Extra response headers.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        headers: std::collections::BTreeMap<String, String>,
        /// The `Content-Type` (default `text/event-stream`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_type: Option<String>,
        /// Keep the stream open after the reply to its request (for events after the match).
        #[serde(default)]
        keep_open: bool,
    },
    /// HTTP: write one SSE event on a stream: comment lines, then `event`, `id`, `retry` and
    /// `data` lines (multi-line `data` becomes several `data:` lines), then a blank line.
    Event {
        /// The stream (default: the current one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stream: Option<String>,
        /// A comment (`: <text>`), e.g. a keep-alive.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment: Option<String>,
        /// The `event:` field.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event: Option<String>,
        /// The `id:` field.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The `retry:` field, in ms.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry: Option<u64>,
        /// The data, verbatim; each line becomes one `data:` line.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// The data as JSON, written compactly on one `data:` line.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        json: Option<Value>,
        /// Line ending: `lf` (default), `crlf` or `cr`.
        #[serde(default)]
        line_end: SseLineEnd,
    },
    /// HTTP: end a stream (default: the current one).
    EndStream {
        /// The stream (default: the current one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stream: Option<String>,
        /// `clean` (default), `mid_event` (write `partial`, then abort the connection),
        /// `reset` (TCP RST) or `stall` (write nothing more, keep the connection open).
        #[serde(default)]
        how: StreamEnd,
        /// `mid_event`: the unfinished event written before the abort (default
        /// `data: {"jsonrpc":"2.0",`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<String>,
    },
    /// HTTP: wait for the client's GET (the Streamable HTTP listener, or the legacy SSE
    /// stream) and answer it: by default with an open `text/event-stream` that becomes the
    /// current stream. Unscripted GETs are answered 405.
    ExpectGet {
        /// The stream's name for `stream:` fields (default `get`).
        #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
        label: Option<String>,
        /// The HTTP status (default 200). A non-2xx status is answered without a stream.
        #[serde(default = "default_status")]
        status: u16,
        /// Extra response headers.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        headers: std::collections::BTreeMap<String, String>,
        /// The `Content-Type` (default `text/event-stream`); any other type is answered
        /// with `text` as the body and no stream.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_type: Option<String>,
        /// A body for a non-stream answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Answer with a stream that ends at once.
        #[serde(default)]
        close: bool,
    },
    /// HTTP: wait for the client's DELETE (session end) and answer it. Unscripted DELETEs
    /// are answered 200.
    ExpectDelete {
        /// The HTTP status (default 200).
        #[serde(default = "default_status")]
        status: u16,
        /// Never answer (the client's close must be bounded in time).
        #[serde(default)]
        hang: bool,
    },
    /// Streamable HTTP: the current session expires; from now on a request carrying its id
    /// is answered 404.
    ExpireSession,
    /// HTTP: from now on every request must carry `Authorization: Bearer <token>`; others
    /// are answered `status` with `WWW-Authenticate` (and never reach the script).
    RequireAuth {
        /// The one accepted bearer token (never recorded; transcripts show
        /// `Bearer <redacted:N>`).
        token: String,
        /// The status for a missing or wrong token: 401 (default) or 403.
        #[serde(default = "default_auth_status")]
        status: u16,
        /// The `WWW-Authenticate` value (default `Bearer error="invalid_token"`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        www_authenticate: Option<String>,
        /// The body of the refusal (default empty).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// A standing rule (for benchmarks and noise): every later request with this method
    /// that no `expect` consumes is answered at once with this result (or error).
    ReplyAlways {
        /// The JSON-RPC method.
        method: String,
        /// The result (default `{}` unless `error` is given).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// A JSON-RPC error object instead of a result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<Value>,
    },
    /// HTTP: the SSE `event:` name later JSON-RPC messages are written with (default
    /// `message`; an empty name writes unnamed events).
    MessageEvent {
        /// The event name; `""` for none.
        name: String,
    },
    /// Legacy SSE: send the `endpoint` event on the current stream.
    Endpoint {
        /// The POST URI (default `/message?session_id=<connection>`); may use `{origin}`,
        /// `{port}` and `{connection}`, e.g. `{origin}/message` or
        /// `http://localhost:{port}/message` (another origin).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
    },
}

fn default_status() -> u16 {
    200
}

fn default_auth_status() -> u16 {
    401
}

/// How a stream ends (see [`ServerStep::EndStream`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StreamEnd {
    /// The body ends normally (terminating chunk).
    #[default]
    Clean,
    /// An unfinished event, then the connection is aborted.
    MidEvent,
    /// A TCP reset (SO_LINGER 0, then close).
    Reset,
    /// No more bytes; the connection stays open.
    Stall,
}

/// What happens to the socket after a raw response (see [`ServerStep::RawResponse`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SocketEnd {
    /// Close the connection (FIN).
    #[default]
    Close,
    /// Reset the connection (RST).
    Reset,
    /// Keep it open and silent.
    Stall,
}

/// The line ending of an SSE event (see [`ServerStep::Event`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SseLineEnd {
    /// `\n`.
    #[default]
    Lf,
    /// `\r\n`.
    Crlf,
    /// `\r`.
    Cr,
}

impl ServerStep {
    /// Whether the step only means something over HTTP (Streamable HTTP or legacy SSE).
    /// `reply_always` is not among them: it is a standing rule the stdio mock ignores.
    pub fn is_http_only(&self) -> bool {
        matches!(
            self,
            ServerStep::Respond { .. }
                | ServerStep::RawResponse { .. }
                | ServerStep::OpenStream { .. }
                | ServerStep::Event { .. }
                | ServerStep::EndStream { .. }
                | ServerStep::ExpectGet { .. }
                | ServerStep::ExpectDelete { .. }
                | ServerStep::ExpireSession
                | ServerStep::RequireAuth { .. }
                | ServerStep::MessageEvent { .. }
                | ServerStep::Endpoint { .. }
        )
    }
}

/// Line ending for a reply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineEnd {
    /// `\n`.
    #[default]
    Lf,
    /// `\r\n`.
    Crlf,
}

/// One step of the client plan.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientStep {
    /// Connect (spawn / open) and, unless `handshake: false`, run the MCP handshake.
    Connect {
        /// Run initialize / initialized (default true).
        #[serde(default = "default_true")]
        handshake: bool,
        /// The connection's timeout in ms (`0` disables).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
        /// Environment for the client (e.g. `MCP_TIMEOUT_MS`).
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        env: std::collections::BTreeMap<String, String>,
        /// Cap on one inbound message, in bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_message_bytes: Option<usize>,
        /// Use string request ids.
        #[serde(default)]
        string_ids: bool,
        /// Roots the client answers `roots/list` with.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        roots: Vec<Value>,
        /// HTTP transports: headers the user configured (e.g. an `Authorization` bearer
        /// token). Generated protocol headers must win over them.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        headers: std::collections::BTreeMap<String, String>,
        /// HTTP transports: install an auth refresh hook that, asked on a 401/403, returns
        /// these headers (e.g. a new bearer token); `{}` makes a hook that returns nothing.
        /// Absent: no hook.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        auth_refresh: Option<std::collections::BTreeMap<String, String>>,
    },
    /// Send a request and wait for its outcome (unless `background`).
    Request {
        /// The method.
        method: String,
        /// The params.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
        /// A per-request timeout override in ms.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
        /// Do not wait; `await` or `cancel` it later by `as`.
        #[serde(default)]
        background: bool,
        /// The label for `await` / `cancel`.
        #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
        label: Option<String>,
        /// Pad the params with a `_pad` string of this many bytes (large requests without
        /// storing them in the file).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pad_params: Option<usize>,
    },
    /// Wait for a background request's outcome (recorded on this step).
    Await {
        /// The label of the background request.
        request: String,
    },
    /// Cancel a background request.
    Cancel {
        /// The label of the background request.
        request: String,
    },
    /// Send a notification.
    Notify {
        /// The method.
        method: String,
        /// The params.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
    },
    /// Pause the plan for this long.
    Wait {
        /// Milliseconds.
        ms: u64,
    },
    /// Wait until the client has received a notification with this method (bounded by
    /// `timeout_ms`, default 1000). Lets a plan act only once the server got somewhere.
    WaitNotification {
        /// The notification method.
        method: String,
        /// Bound in ms.
        #[serde(default = "default_wait_closed_ms")]
        timeout_ms: u64,
    },
    /// Wait until the transport reports closed (bounded by `timeout_ms`, default 1000).
    WaitClosed {
        /// Bound in ms.
        #[serde(default = "default_wait_closed_ms")]
        timeout_ms: u64,
    },
    /// Close the connection.
    Close,
}

fn default_wait_closed_ms() -> u64 {
    1000
}

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
    NotSent(MethodRef),
    /// The client's first `first` message precedes its first `then` message.
    SentBefore(OrderCheck),
    /// The client sent `notifications/cancelled` for the request the server labelled.
    Cancelled(CancelledCheck),
    /// The client's answer to a server-to-client request.
    Answered(AnsweredCheck),
    /// The mock received (or did not receive) a signal.
    Signal(SignalCheck),
    /// The mock saw its stdin reach EOF.
    StdinClosed(ConnectionRef),
    /// The bundled client's diagnostic counters (skipped for external clients).
    Diagnostics(DiagnosticsCheck),
    /// The client reported receiving this notification.
    Notified(MethodRef),
    /// HTTP: the client's HTTP requests that match (by HTTP method, JSON-RPC method, path,
    /// connection) carried a header, with a value, a number of times.
    Http(HttpCheck),
}

/// See [`Check::Http`]. Examples: `- http: {http_method: DELETE}` (a DELETE was sent);
/// `- http: {http_method: GET, header: Last-Event-ID, value: "7"}`;
/// `- http: {method: tools/list, header: Mcp-Session-Id, value: "{session}", every: true}`;
/// `- http: {method: initialize, header: Mcp-Session-Id, count: 0}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpCheck {
    /// Only requests with this HTTP method (`POST`, `GET`, `DELETE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_method: Option<String>,
    /// Only POSTs whose JSON-RPC body has this method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Only requests to this path (without the query).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Only on this connection (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<usize>,
    /// The header that must be present (case-insensitive name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// The header's exact value; `{session}` stands for the session id the mock issued on
    /// that connection. Authorization values are recorded as `Bearer <redacted:N>` (N
    /// numbers distinct tokens by first appearance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Exactly this many matching requests (default: at least one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// Every request matching the filters carried the header (and value); at least one.
    #[serde(default)]
    pub every: bool,
}

/// See [`Check::Outcome`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutcomeCheck {
    /// The plan step (1-based).
    pub step: usize,
    /// Must the step succeed (`true`) or fail (`false`)?
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// The error text must start with this (bundled target only; implies `ok: false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The result must contain these members (a recursive subset match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The step must finish within this many ms (a bound, never a race).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_ms: Option<u64>,
    /// The step must take at least this many ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least_ms: Option<u64>,
}

/// See [`Check::Sent`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SentCheck {
    /// The method.
    pub method: String,
    /// Exactly this many times (default: at least once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// The params must contain these members (recursive subset match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Only on this connection (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<usize>,
}

/// A method name.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MethodRef {
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
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnsweredCheck {
    /// The server `request` step's label.
    pub request: String,
    /// The answer's result must contain these members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The answer must be an error with this code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i64>,
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

/// A connection number.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectionRef {
    /// The connection (1-based); default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<usize>,
}

/// See [`Check::Diagnostics`]. Each given counter must equal the value.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsCheck {
    /// Inbound messages dropped as malformed or not JSON-RPC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_violations: Option<u64>,
    /// Responses for timed-out or cancelled requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_responses: Option<u64>,
    /// Responses with an id never used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_responses: Option<u64>,
    /// Messages dropped for size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversize_dropped: Option<u64>,
    /// The captured stderr must contain this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_contains: Option<String>,
}
