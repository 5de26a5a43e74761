//! The server script: what the mock does, step by step ([`ServerStep`], one variant per
//! `op:`, each over its data struct in [`step`]), and the small value types its steps use
//! (line endings, how a stream or socket ends, id corruptions, generated payloads). What
//! each op *does* — its rules, transports and behaviour — is the mock's (`mcp_mock::ops`).

use crate::default_true;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    Handshake(step::Handshake),
    /// Wait for the next client message with this method (request or notification).
    /// Messages for methods no later `expect` names are answered `-32601` at once.
    Expect(step::Expect),
    /// Answer an expected request (the latest one, or the one labelled `to`).
    Reply(step::Reply),
    /// Write raw bytes to the client, optionally split into several writes. Exactly one of
    /// `text`, `hex`, `base64`, `json`, `generate`.
    Send(step::Send),
    /// Send a notification.
    Notify(step::Notify),
    /// Send a server-to-client request; `expect_response` waits for the answer.
    Request(step::Request),
    /// Wait for the client's answer to a server-to-client request.
    ExpectResponse(step::ExpectResponse),
    /// Write to stderr (the client must treat it as a log, never an error). Exactly one of
    /// `text`, `generate`.
    Stderr(step::Stderr),
    /// Do nothing for this long.
    Delay(step::Delay),
    /// Stop executing the script: never answer again (unscripted requests still get -32601).
    Stall(step::Stall),
    /// Stop reading stdin, so the client's writes eventually block.
    StopReading(step::StopReading),
    /// After `stop_reading`: wait until the client writes to stdin (or closes it). What it
    /// wrote stays unread: the mock only learns that it is there.
    ExpectWrite(step::ExpectWrite),
    /// Close stdin (the read end of the client's pipe) and keep running: the client's later
    /// writes fail at once (EPIPE). The mock no longer sees stdin EOF, so after its script
    /// it waits for a signal (the client's close sequence).
    CloseStdin(step::CloseStdin),
    /// From now on, record SIGTERM and keep running.
    IgnoreSigterm(step::IgnoreSigterm),
    /// From now on, keep running after stdin reaches EOF.
    IgnoreStdinEof(step::IgnoreStdinEof),
    /// Wait until stdin reaches EOF.
    ExpectEof(step::ExpectEof),
    /// Exit now, with a code or by a signal (e.g. `SIGKILL`).
    Exit(step::Exit),
    /// The steps after this one run on the client's next connection. Over Streamable HTTP a
    /// connection is a session (the next `initialize` starts it); over legacy SSE it is the
    /// next GET stream.
    NewConnection(step::NewConnection),
    /// HTTP: answer the expected request (the latest, or the one labelled `to`) with any
    /// status, headers, content type and body. Header values and `text` may use `{origin}`
    /// (e.g. `http://127.0.0.1:4242`) and `{port}`.
    Respond(step::Respond),
    /// HTTP: answer the expected request with raw bytes written on the socket instead of a
    /// well-formed response (bad status lines, broken chunking, wrong Content-Length…).
    /// Exactly one of `text`, `hex`, `base64`.
    RawResponse(step::RawResponse),
    /// HTTP: answer the expected POST with `200 text/event-stream` and keep the stream open.
    /// It becomes the current stream: later `reply`, `notify`, `request`, `event` and `send`
    /// steps write on it. The `reply` to the request it answers ends it cleanly (unless
    /// `keep_open`); reply streams still open when the script runs to its end are ended
    /// cleanly too (end one otherwise with `end_stream`; keep it open with `stall`).
    OpenStream(step::OpenStream),
    /// HTTP: write one SSE event on a stream: comment lines, then `event`, `id`, `retry` and
    /// `data` lines (multi-line `data` becomes several `data:` lines), then a blank line.
    Event(step::Event),
    /// HTTP: end a stream (default: the current one).
    EndStream(step::EndStream),
    /// HTTP: wait for the client's GET (the Streamable HTTP listener, or the legacy SSE
    /// stream) and answer it: by default with an open `text/event-stream` that becomes the
    /// current stream. Unscripted GETs are answered 405.
    ExpectGet(step::ExpectGet),
    /// HTTP: wait for the client's DELETE (session end) and answer it. Unscripted DELETEs
    /// are answered 200.
    ExpectDelete(step::ExpectDelete),
    /// Streamable HTTP: the current session expires; from now on a request carrying its id
    /// is answered 404.
    ExpireSession(step::ExpireSession),
    /// HTTP: from now on every request must carry `Authorization: Bearer <token>`; others
    /// are answered `status` with `WWW-Authenticate` (and never reach the script).
    RequireAuth(step::RequireAuth),
    /// Streamable HTTP: from now on the mock is also an OAuth authorization server, served
    /// beside the MCP endpoint on the same origin (protected resource metadata, authorization
    /// server metadata at both well-known forms, `/register`, `/authorize`, `/token`), and
    /// the MCP endpoint answers `401` with `WWW-Authenticate: Bearer resource_metadata="…"`
    /// until a request carries a token it issued for `{origin}/mcp`. Its fields plant the
    /// faults (docs/authorization.md lists the rules they test).
    AuthorizationServer(step::AuthorizationServer),
    /// Streamable HTTP, with `authorization_server`: every access token issued so far stops
    /// working (a token that expired mid-session): the next request carrying one is
    /// answered `401` `error="invalid_token"`. Refresh tokens keep working.
    ExpireTokens(step::ExpireTokens),
    /// A standing rule (for benchmarks and noise): every later request with this method
    /// that no `expect` consumes is answered at once with this result (or error).
    ReplyAlways(step::ReplyAlways),
    /// HTTP: the SSE `event:` name later JSON-RPC messages are written with (default
    /// `message`; an empty name writes unnamed events).
    MessageEvent(step::MessageEvent),
    /// Legacy SSE: send the `endpoint` event on the current stream.
    Endpoint(step::Endpoint),
    /// 2026-07-28: a standing change to the checks the mock makes on every request (by
    /// default all on, accepting the scenario's revision): turn the `_meta` or mirrored
    /// header checks off, or accept other versions.
    Stateless(step::Stateless),
    /// 2026-07-28: send a notification on a `subscriptions/listen` request's subscription
    /// (its stream over HTTP, stdout over stdio) with
    /// `_meta["io.modelcontextprotocol/subscriptionId"]` set to that request's id — or,
    /// to break the rule, with none or another id.
    SubscriptionNotify(step::SubscriptionNotify),
}

/// Declares a step with the fields every op of its kind takes alike, after its own:
/// - `http_answer:` a step that answers an HTTP request with a head of its own (`respond`,
///   `open_stream`, `expect_get`) takes `headers`, the extra response headers;
/// - `split_writes:` a step that writes bytes (`reply`, `send`, `raw_response`) takes `chunks`
///   and `chunk_delay_ms`, which split those bytes into several writes the same way.
///
/// A macro rather than a `#[serde(flatten)]` struct: flattening would lose
/// `deny_unknown_fields`, and with it the loader's refusal of a misspelled field.
macro_rules! step_with {
    (http_answer: $($step:tt)*) => {
        step_with! { @append {
            /// Extra response headers, e.g. `{Location: "/mcp2"}`; one named like a header the
            /// mock sets itself (`content-type`, `cache-control`) replaces it.
            #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
            pub headers: BTreeMap<String, String>,
        } $($step)* }
    };
    (split_writes: $($step:tt)*) => {
        step_with! { @append {
            /// Split the bytes into writes of these sizes (the rest goes in a last write).
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub chunks: Vec<usize>,
            /// Delay between split writes, in ms.
            #[serde(default)]
            pub chunk_delay_ms: u64,
        } $($step)* }
    };
    (@append { $($shared:tt)* } $(#[$attr:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $(#[$attr])*
        pub struct $name {
            $($fields)*
            $($shared)*
        }
    };
}

/// `Deserialize` for the data struct of an op that takes no fields: any field is refused,
/// naming the op.
macro_rules! no_fields {
    ($($name:ident => $op:literal,)*) => {$(
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Fields;
                impl<'de> serde::de::Visitor<'de> for Fields {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("op `", $op, "` (it takes no fields)"))
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<$name, A::Error> {
                        match map.next_key::<String>()? {
                            Some(field) => Err(serde::de::Error::custom(format!(
                                concat!("unknown field `{}`: op `", $op, "` takes no fields"),
                                field
                            ))),
                            None => Ok($name {}),
                        }
                    }
                }
                deserializer.deserialize_map(Fields)
            }
        }
    )*};
}

/// The data of each server op, one struct per `op:` (the variant of [`ServerStep`] with the
/// same name). Fields keep the YAML names; `as` is `label`. An `Option` field may be left
/// out (serde reads a missing `Option` as `None`) and is not written when `None`
/// (`skip_serializing_none`).
pub mod step {
    use super::{Generate, LineEnd, SocketEnd, SseLineEnd, StreamEnd, WrongId, default_auth_status, default_status};
    use crate::default_true;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::Value;
    use serde_with::skip_serializing_none;
    use std::collections::BTreeMap;

    /// `op: handshake` (see [`ServerStep::Handshake`](super::ServerStep::Handshake)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Handshake {
        /// Overrides the protocolVersion the mock answers with.
        pub protocol_version: Option<String>,
        /// Overrides the advertised server capabilities (default: what the plan calls and
        /// the script serves or announces, so a client that uses only negotiated
        /// capabilities sends what the scenario is about; `{}` for a bare `connect`).
        pub capabilities: Option<Value>,
        /// Streamable HTTP (stateful revisions): issue an `Mcp-Session-Id` on the initialize
        /// response (default true). Once issued, requests without it get 400 and requests
        /// with an unknown or expired one get 404.
        #[serde(default = "default_true")]
        pub session: bool,
        /// Streamable HTTP: the session id to issue (default: a fresh random one).
        pub session_id: Option<String>,
        /// Streamable HTTP: answer the `notifications/initialized` POST (202) only this
        /// many ms after it arrived, so that whether the client waited for that answer
        /// before its next request shows in the record (`http_order` with `answered`).
        pub hold_initialized_ms: Option<u64>,
        /// Streamable HTTP, the first connection's handshake: until a session is issued, a
        /// request other than `initialize` without one is refused `400` with a body that is
        /// no modern error (`Bad Request: No valid session ID provided`), as a 2025 server
        /// answers a client's modern first request, whichever it is (a `server/discover`
        /// probe, the call itself).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub refuse_before: bool,
    }

    /// `op: expect` (see [`ServerStep::Expect`](super::ServerStep::Expect)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Expect {
        /// The JSON-RPC method.
        pub method: String,
        /// A label that later steps and checks use to refer to this request.
        #[serde(rename = "as")]
        pub label: Option<String>,
    }

    step_with! { split_writes:
    /// `op: reply` (see [`ServerStep::Reply`](super::ServerStep::Reply)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Reply {
        /// The label of the request to answer; default: the latest expected request.
        pub to: Option<String>,
        /// The result (default `{}` unless `error` is given).
        pub result: Option<Value>,
        /// A JSON-RPC error object instead of a result.
        pub error: Option<Value>,
        /// Answer with a corrupted id.
        pub wrong_id: Option<WrongId>,
        /// Pad the result with a `_pad` string so the whole line is about this many bytes.
        pub pad_to: Option<usize>,
        /// Line ending: `lf` (default) or `crlf`.
        #[serde(default)]
        pub line_end: LineEnd,
    }
    }

    step_with! { split_writes:
    /// `op: send` (see [`ServerStep::Send`](super::ServerStep::Send)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Send {
        /// Verbatim UTF-8 text (YAML escapes such as `\r\n` apply in double quotes).
        pub text: Option<String>,
        /// Arbitrary bytes as hex, e.g. `ff fe 0a` (spaces ignored).
        pub hex: Option<String>,
        /// Arbitrary bytes as standard base64.
        pub base64: Option<String>,
        /// Any JSON value, written compactly on one line followed by `\n`.
        pub json: Option<Value>,
        /// A large payload generated from a size, never stored in the file.
        pub generate: Option<Generate>,
    }
    }

    /// `op: notify` (see [`ServerStep::Notify`](super::ServerStep::Notify)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Notify {
        /// The method.
        pub method: String,
        /// The params (omitted when absent).
        pub params: Option<Value>,
    }

    /// `op: request` (see [`ServerStep::Request`](super::ServerStep::Request)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Request {
        /// The method.
        pub method: String,
        /// The params (omitted when absent).
        pub params: Option<Value>,
        /// The label `expect_response` and checks use.
        #[serde(rename = "as")]
        pub label: String,
        /// The request's JSON-RPC id, a string or an integer (default: a fresh `srv-<n>`),
        /// e.g. `0`, or an id the client also uses for its own requests.
        pub id: Option<Value>,
    }

    /// `op: expect_response` (see [`ServerStep::ExpectResponse`](super::ServerStep::ExpectResponse)).
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ExpectResponse {
        /// The label given to the `request` step.
        pub to: String,
    }

    /// `op: stderr` (see [`ServerStep::Stderr`](super::ServerStep::Stderr)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Stderr {
        /// Verbatim UTF-8 text.
        pub text: Option<String>,
        /// A generated payload.
        pub generate: Option<Generate>,
    }

    /// `op: delay` (see [`ServerStep::Delay`](super::ServerStep::Delay)).
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Delay {
        /// Milliseconds.
        pub ms: u64,
    }

    /// `op: stall` (see [`ServerStep::Stall`](super::ServerStep::Stall)).
    #[derive(Debug, Clone, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Stall {}

    /// `op: stop_reading` (see [`ServerStep::StopReading`](super::ServerStep::StopReading)).
    #[derive(Debug, Clone, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct StopReading {}

    /// `op: expect_write` (see [`ServerStep::ExpectWrite`](super::ServerStep::ExpectWrite)).
    #[derive(Debug, Clone, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ExpectWrite {}

    /// `op: close_stdin` (see [`ServerStep::CloseStdin`](super::ServerStep::CloseStdin)).
    #[derive(Debug, Clone, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct CloseStdin {}

    /// `op: ignore_sigterm` (see [`ServerStep::IgnoreSigterm`](super::ServerStep::IgnoreSigterm)).
    #[derive(Debug, Clone, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct IgnoreSigterm {}

    /// `op: ignore_stdin_eof` (see [`ServerStep::IgnoreStdinEof`](super::ServerStep::IgnoreStdinEof)).
    #[derive(Debug, Clone, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct IgnoreStdinEof {}

    /// `op: expect_eof` (see [`ServerStep::ExpectEof`](super::ServerStep::ExpectEof)).
    #[derive(Debug, Clone, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ExpectEof {}

    /// `op: exit` (see [`ServerStep::Exit`](super::ServerStep::Exit)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Exit {
        /// The exit code (default 0).
        pub code: Option<i32>,
        /// A signal to kill the mock with instead.
        pub signal: Option<String>,
    }

    /// `op: new_connection` (see [`ServerStep::NewConnection`](super::ServerStep::NewConnection)).
    #[derive(Debug, Clone, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct NewConnection {}

    step_with! { http_answer:
    /// `op: respond` (see [`ServerStep::Respond`](super::ServerStep::Respond)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Respond {
        /// The label of the request to answer; default: the latest expected message.
        pub to: Option<String>,
        /// The HTTP status (default 200).
        #[serde(default = "default_status")]
        pub status: u16,
        /// The `Content-Type` (default `application/json` for `json`, `text/plain` for
        /// `text` / `generate`, none for an empty body).
        pub content_type: Option<String>,
        /// A JSON body, written compactly.
        pub json: Option<Value>,
        /// A verbatim text body.
        pub text: Option<String>,
        /// A large generated body (`newline` is ignored unless true).
        pub generate: Option<Generate>,
        /// The standing answer for every later request with this method that no step
        /// consumes, recorded as `respond (repeat)`: a client that re-sends meets the same
        /// answer each time.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub repeat: bool,
    }
    }

    step_with! { split_writes:
    /// `op: raw_response` (see [`ServerStep::RawResponse`](super::ServerStep::RawResponse)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct RawResponse {
        /// The label of the request to answer; default: the latest expected message.
        pub to: Option<String>,
        /// Verbatim UTF-8 text (YAML escapes such as `\r\n` apply in double quotes).
        pub text: Option<String>,
        /// Arbitrary bytes as hex (spaces ignored).
        pub hex: Option<String>,
        /// Arbitrary bytes as standard base64.
        pub base64: Option<String>,
        /// What happens to the connection after the bytes: `close` (default), `reset`, `stall`.
        #[serde(default)]
        pub then: SocketEnd,
    }
    }

    step_with! { http_answer:
    /// `op: open_stream` (see [`ServerStep::OpenStream`](super::ServerStep::OpenStream)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct OpenStream {
        /// The label of the request to answer; default: the latest expected message.
        pub to: Option<String>,
        /// The stream's name for `stream:` fields (default: the request's label, else `post`).
        #[serde(rename = "as")]
        pub label: Option<String>,
        /// The HTTP status (default 200).
        #[serde(default = "default_status")]
        pub status: u16,
        /// The `Content-Type` (default `text/event-stream`).
        pub content_type: Option<String>,
        /// Keep the stream open after the reply to its request (for events after the match).
        #[serde(default)]
        pub keep_open: bool,
    }
    }

    /// `op: event` (see [`ServerStep::Event`](super::ServerStep::Event)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Event {
        /// The stream (default: the current one).
        pub stream: Option<String>,
        /// A comment (`: <text>`), e.g. a keep-alive.
        pub comment: Option<String>,
        /// The `event:` field.
        pub event: Option<String>,
        /// The `id:` field.
        pub id: Option<String>,
        /// The `retry:` field, in ms.
        pub retry: Option<u64>,
        /// The data, verbatim; each line becomes one `data:` line.
        pub data: Option<String>,
        /// The data as JSON, written compactly on one `data:` line.
        pub json: Option<Value>,
        /// Line ending: `lf` (default), `crlf` or `cr`.
        #[serde(default)]
        pub line_end: SseLineEnd,
    }

    /// `op: end_stream` (see [`ServerStep::EndStream`](super::ServerStep::EndStream)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct EndStream {
        /// The stream (default: the current one).
        pub stream: Option<String>,
        /// `clean` (default), `mid_event` (write `partial`, then abort the connection),
        /// `reset` (TCP RST) or `stall` (write nothing more, keep the connection open).
        #[serde(default)]
        pub how: StreamEnd,
        /// `mid_event`: the unfinished event written before the abort (default
        /// `data: {"jsonrpc":"2.0",`).
        pub partial: Option<String>,
    }

    step_with! { http_answer:
    /// `op: expect_get` (see [`ServerStep::ExpectGet`](super::ServerStep::ExpectGet)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ExpectGet {
        /// The stream's name for `stream:` fields (default `get`).
        #[serde(rename = "as")]
        pub label: Option<String>,
        /// The HTTP status (default 200). A non-2xx status is answered without a stream; a
        /// 405 carries `Allow` with the methods the endpoint takes, unless `headers` names one.
        #[serde(default = "default_status")]
        pub status: u16,
        /// The `Content-Type` (default `text/event-stream`); any other type is answered
        /// with `text` as the body and no stream.
        pub content_type: Option<String>,
        /// A body for a non-stream answer.
        pub text: Option<String>,
        /// Answer with a stream that ends at once.
        #[serde(default)]
        pub close: bool,
        /// The standing answer for every later GET no other step consumes, recorded as
        /// `expect_get (repeat)`: a retry or reconnect loop meets the same answer each time
        /// (an open stream repeats as a stream that ends at once).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub repeat: bool,
        /// The script need not reach this GET (the listener is a MAY): when none has come
        /// by the time the script gets here, the step does not wait; the first GET that
        /// comes later gets its answer. Needs an answer the mock can give on its own (a
        /// non-2xx status, `close`, or a non-stream content type) and no later `expect_get`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub optional: bool,
        /// Which GETs the step consumes: `true`, only a resumption (a GET carrying
        /// `Last-Event-ID`); `false`, only a GET without one (the listener); unset, any GET.
        /// Set it where both kinds can come, so a listener's retry never takes the answer
        /// meant for a resumption (or the other way round); its `repeat` and `optional`
        /// then stand for that kind alone, and a GET of the other kind no step consumes is
        /// answered 405. On one connection, either every `expect_get` sets it or none does.
        pub resumption: Option<bool>,
    }
    }

    /// `op: expect_delete` (see [`ServerStep::ExpectDelete`](super::ServerStep::ExpectDelete)).
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ExpectDelete {
        /// The HTTP status (default 200). A 405 carries `Allow` with the methods the endpoint
        /// takes.
        #[serde(default = "default_status")]
        pub status: u16,
        /// Never answer (the client's close must be bounded in time).
        #[serde(default)]
        pub hang: bool,
    }

    /// `op: expire_session` (see [`ServerStep::ExpireSession`](super::ServerStep::ExpireSession)).
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ExpireSession {
        /// Only requests with this HTTP method get the 404 (e.g. `POST`); others are served
        /// as if the session were live. With `POST`, a client's optional GET listener is
        /// answered the same whenever it comes, so the scenario does not race it. Default:
        /// every request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub http_method: Option<String>,
    }

    /// `op: require_auth` (see [`ServerStep::RequireAuth`](super::ServerStep::RequireAuth)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct RequireAuth {
        /// The one accepted bearer token (never recorded; transcripts show
        /// `Bearer <redacted:N>`).
        pub token: String,
        /// The status for a missing or wrong token: 401 (default) or 403.
        #[serde(default = "default_auth_status")]
        pub status: u16,
        /// The `WWW-Authenticate` value (default `Bearer error="invalid_token"`).
        pub www_authenticate: Option<String>,
        /// The body of the refusal (default empty).
        pub text: Option<String>,
        /// Only requests with this HTTP method must carry the token (e.g. `POST`); others are
        /// served as if no rule were set. With `POST`, a client's optional GET listener is
        /// answered the same whether it comes before or after the rule (the spec lets the
        /// client open it at any time), so the scenario does not race it. Default: every
        /// request.
        pub http_method: Option<String>,
    }

    /// A well-known location of the mock's authorization server, for
    /// `authorization_server`'s `missing`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum WellKnown {
        /// `/.well-known/oauth-protected-resource/mcp` (RFC 9728, at the endpoint's path).
        ResourcePath,
        /// `/.well-known/oauth-protected-resource` (RFC 9728, at the root).
        ResourceRoot,
        /// `/.well-known/oauth-authorization-server[<issuer path>]` (RFC 8414).
        Oauth,
        /// `/.well-known/openid-configuration[<issuer path>]` (OpenID Connect Discovery,
        /// path insertion).
        Openid,
        /// `<issuer path>/.well-known/openid-configuration` (OpenID Connect Discovery, path
        /// appending; with no issuer path the same URL as `openid`).
        OpenidAppended,
    }

    /// How the mock's `/register` (RFC 7591) answers.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Registration {
        /// Registers any client: `201` with a fresh `client_id` (`client-1`, …).
        #[default]
        Open,
        /// Refuses: `400` `{"error": "invalid_client_metadata"}`.
        Refused,
        /// No registration endpoint: the metadata names none and `/register` is `404`.
        Absent,
    }

    /// The `state` the mock's `/authorize` redirect carries back with the code.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum ReturnedState {
        /// The one the authorization request sent (OAuth 2.1 §4.1.2).
        #[default]
        Echo,
        /// Another value: an authorization response that answers some other request (the
        /// cross-site request forgery `state` exists to catch).
        Altered,
        /// None, although the request sent one.
        Omitted,
    }

    fn is_echo(state: &ReturnedState) -> bool {
        *state == ReturnedState::Echo
    }

    /// A fault of the mock's token endpoint.
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct TokenFault {
        /// Answer with this status instead (`400` carries `{"error": "invalid_grant"}`, a
        /// 5xx `{"error": "server_error"}`). Default: the normal answer, only delayed.
        pub status: Option<u16>,
        /// Wait this long before answering (a slow token endpoint).
        pub delay_ms: Option<u64>,
        /// Only the first this many token requests meet the fault (default: every one).
        pub times: Option<u32>,
        /// Only requests with this `grant_type` (`authorization_code`, `refresh_token`)
        /// meet the fault (default: both).
        pub grant_type: Option<String>,
    }

    /// `op: authorization_server` (see
    /// [`ServerStep::AuthorizationServer`](super::ServerStep::AuthorizationServer)). With no
    /// fields it is a conformant authorization server: S256 PKCE, open registration, refresh
    /// tokens rotated on use, tokens bound to the `resource` the client asked for.
    #[skip_serializing_none]
    #[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct AuthorizationServer {
        /// The protected resource metadata's `scopes_supported` (default: none given).
        pub scopes_supported: Option<Vec<String>>,
        /// The `scope` of the 401 challenge (default: none given).
        pub challenge_scope: Option<String>,
        /// Whether the 401 challenge names `resource_metadata` (default true; `false`: the
        /// client must find the metadata at the well-known URIs).
        #[serde(default = "default_true")]
        pub resource_metadata: bool,
        /// Well-known locations answered `404`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub missing: Vec<WellKnown>,
        /// A path for the issuer (`/tenant1`): the issuer is `{origin}/tenant1`, so the
        /// metadata is found by path insertion or appending.
        pub issuer_path: Option<String>,
        /// The `issuer` the metadata document claims (default: the real one; `{origin}`
        /// expands): anything else is an issuer mismatch.
        pub issuer: Option<String>,
        /// The protected resource metadata's `resource` (default `{origin}/mcp`; `{origin}`
        /// expands): anything else names another resource.
        pub resource: Option<String>,
        /// The metadata's `authorization_servers` (default: the issuer; `{origin}` expands).
        pub authorization_servers: Option<Vec<String>>,
        /// The metadata's `code_challenge_methods_supported` (default `["S256"]`; `[]`
        /// leaves the field out: PKCE not advertised).
        pub code_challenge_methods: Option<Vec<String>>,
        /// How `/register` answers (default `open`).
        #[serde(default)]
        pub registration: Registration,
        /// Client ids the server knows without registration (pre-registered clients).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub clients: Vec<String>,
        /// Advertise `client_id_metadata_document_supported` and accept an `https` URL as a
        /// client id (the mock does not fetch it: it cannot serve HTTPS).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub client_id_metadata_documents: bool,
        /// A fault of the token endpoint (status, delay, how many times).
        pub token_fault: Option<TokenFault>,
        /// Issue refresh tokens (default true).
        #[serde(default = "default_true")]
        pub refresh_tokens: bool,
        /// Rotate refresh tokens: each refresh answers a new one and the used one is refused
        /// from then on (`invalid_grant`) (default true).
        #[serde(default = "default_true")]
        pub rotate_refresh_tokens: bool,
        /// The scopes a JSON-RPC method needs (`{"tools/call": "files:write"}`): a token
        /// without them is answered `403` `error="insufficient_scope"` with those scopes.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        pub method_scopes: BTreeMap<String, String>,
        /// The scopes the server grants at most (default: what the client asks for); a
        /// scope outside it is silently left out of the token (a step-up that never gets
        /// its scope).
        pub grants: Option<Vec<String>>,
        /// `/authorize` redirects here instead of the client's `redirect_uri` (`{origin}`,
        /// `{port}` expand): a redirect the client never registered.
        pub redirect_to: Option<String>,
        /// The `state` the `/authorize` redirect carries back with its code (default `echo`:
        /// the request's; `altered` or `omitted`: a response the client must discard).
        #[serde(default, skip_serializing_if = "is_echo")]
        pub returned_state: ReturnedState,
        /// `/authorize` adds `iss` with this value to its redirect and the metadata says
        /// `authorization_response_iss_parameter_supported: true` (RFC 9207); `{issuer}` is
        /// the real issuer, `{origin}` expands.
        pub iss: Option<String>,
    }

    /// `op: reply_always` (see [`ServerStep::ReplyAlways`](super::ServerStep::ReplyAlways)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ReplyAlways {
        /// The JSON-RPC method.
        pub method: String,
        /// The result (default `{}` unless `error` is given).
        pub result: Option<Value>,
        /// A JSON-RPC error object instead of a result.
        pub error: Option<Value>,
    }

    /// `op: stateless` (see [`ServerStep::Stateless`](super::ServerStep::Stateless)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Stateless {
        /// Check `_meta` (protocol version, client capabilities) and the version on every
        /// request (default true).
        pub check_meta: Option<bool>,
        /// Streamable HTTP: check `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` against
        /// the body (default true).
        pub check_headers: Option<bool>,
        /// The versions accepted; others get `-32022` listing these (default: the
        /// scenario's revision).
        pub supported_versions: Option<Vec<String>>,
        /// Streamable HTTP: the `Mcp-Param-{Name}` headers the mock's tools declare with
        /// `x-mcp-header`, tool → name part → dot-separated argument path (e.g.
        /// `{execute_sql: {Region: region}}`); a call must carry exactly those whose
        /// argument is present, equal to it.
        pub param_headers: Option<std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>>,
    }

    /// Which subscription id a `subscription_notify` carries.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum SubscriptionId {
        /// The id of the listen request it belongs to.
        #[default]
        Own,
        /// None at all (a broken server).
        Omit,
        /// One no listen request had (a broken server).
        Other,
    }

    /// `op: subscription_notify` (see
    /// [`ServerStep::SubscriptionNotify`](super::ServerStep::SubscriptionNotify)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct SubscriptionNotify {
        /// The label of the expected `subscriptions/listen` request.
        pub to: String,
        /// The method, e.g. `notifications/subscriptions/acknowledged`.
        pub method: String,
        /// The params (`_meta` is added).
        pub params: Option<Value>,
        /// Which subscription id to carry (default `own`).
        #[serde(default)]
        pub subscription_id: SubscriptionId,
    }

    /// `op: message_event` (see [`ServerStep::MessageEvent`](super::ServerStep::MessageEvent)).
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct MessageEvent {
        /// The event name; `""` for none.
        pub name: String,
    }

    /// `op: endpoint` (see [`ServerStep::Endpoint`](super::ServerStep::Endpoint)).
    #[skip_serializing_none]
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Endpoint {
        /// The POST URI (default `/message?session_id=<connection>`); may use `{origin}`,
        /// `{port}` and `{connection}`, e.g. `{origin}/message` or
        /// `http://localhost:{port}/message` (another origin).
        pub uri: Option<String>,
    }

    /// `op: expire_tokens` (see [`ServerStep::ExpireTokens`](super::ServerStep::ExpireTokens)).
    #[derive(Debug, Clone, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ExpireTokens {}

    // The ops without fields refuse any, saying so (the derive's message would list the
    // fields expected, and there are none).
    no_fields! {
        Stall => "stall",
        StopReading => "stop_reading",
        ExpectWrite => "expect_write",
        CloseStdin => "close_stdin",
        IgnoreSigterm => "ignore_sigterm",
        IgnoreStdinEof => "ignore_stdin_eof",
        ExpectEof => "expect_eof",
        NewConnection => "new_connection",
        ExpireTokens => "expire_tokens",
    }
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
    /// The label an `expect` step gives the message it consumes (checks refer to it).
    pub fn expect_label(&self) -> Option<&str> {
        match self {
            ServerStep::Expect(e) => e.label.as_deref(),
            _ => None,
        }
    }

    /// The label of a server-to-client `request` (checks and `expect_response` refer to it).
    pub fn request_label(&self) -> Option<&str> {
        match self {
            ServerStep::Request(r) => Some(&r.label),
            _ => None,
        }
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

/// The script split into connections at its `new_connection` steps: part 1 is the first
/// connection's script, and so on (a script without `new_connection` is one part).
pub fn connection_parts(steps: &[ServerStep]) -> impl Iterator<Item = &[ServerStep]> {
    steps.split(|s| matches!(s, ServerStep::NewConnection(_)))
}

/// The steps of connection `n` (1-based): the script is split at `new_connection` steps.
/// A connection past the last part gets an empty script (it only auto-answers).
pub fn connection_script(steps: &[ServerStep], n: usize) -> Vec<ServerStep> {
    connection_parts(steps).nth(n - 1).map(<[ServerStep]>::to_vec).unwrap_or_default()
}
