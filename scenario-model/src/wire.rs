//! The wire transcript's data: one [`WireEvent`] per thing that crossed the wire or
//! happened in the mock's life, as the mock records it (one JSON object per line in
//! `<run-dir>/conn-<n>.jsonl`) and the harness reads it back.
//!
//! Readers ask an event what they need through its accessors ([`WireEvent::direction`],
//! [`WireEvent::exchange`], [`WireEvent::json`], [`WireEvent::bytes`], [`WireEvent::why`],
//! [`WireEvent::carried_message`]…) rather than matching its variants (most accessors are
//! one `field!` line naming the variants that have the field), so that a field
//! added to an event is added here, plus the renderings that show it (the snapshot text,
//! the HTML report's diagram) and their tests. A rewriter (the transcript's redaction) edits
//! an event's texts and JSON through [`WireEvent::edit_fields`], which a field added here
//! must join too (its test compares what it hands out with the event's JSON record).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;
use std::collections::BTreeMap;

/// Bytes longer than this are recorded as a prefix plus their full length.
pub const RECORD_PREFIX_BYTES: usize = 1024;

/// Recorded bytes: UTF-8 text when valid, else hex; truncated past [`RECORD_PREFIX_BYTES`].
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// The (prefix of the) bytes as text, when valid UTF-8.
    pub text: Option<String>,
    /// The (prefix of the) bytes as hex, when not valid UTF-8.
    pub hex: Option<String>,
    /// The full length in bytes.
    pub len: usize,
}

impl Recorded {
    /// Records `bytes`, keeping a bounded prefix.
    pub fn of(bytes: &[u8]) -> Self {
        let keep = &bytes[..bytes.len().min(RECORD_PREFIX_BYTES)];
        match std::str::from_utf8(keep) {
            Ok(t) => Recorded { text: Some(t.into()), hex: None, len: bytes.len() },
            // A prefix cut in the middle of a character is still text up to the cut.
            Err(e) if e.error_len().is_none() && bytes.len() > keep.len() => Recorded {
                text: Some(String::from_utf8_lossy(&keep[..e.valid_up_to()]).into_owned()),
                hex: None,
                len: bytes.len(),
            },
            Err(_) => Recorded { text: None, hex: Some(hex::encode(keep)), len: bytes.len() },
        }
    }

    /// Records every byte of `bytes`, however long: what a capture of a real session keeps
    /// (`mcp-harness record` writes the script from it), where the mock's record keeps a
    /// prefix ([`Recorded::of`]).
    pub fn whole(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(t) => Recorded { text: Some(t.into()), hex: None, len: bytes.len() },
            Err(_) => Recorded { text: None, hex: Some(hex::encode(bytes)), len: bytes.len() },
        }
    }

    /// Whether only a prefix was kept.
    pub fn truncated(&self) -> bool {
        let kept = self.text.as_ref().map(|t| t.len()).or(self.hex.as_ref().map(|h| h.len() / 2)).unwrap_or(0);
        kept < self.len
    }

    /// The text, when the bytes were UTF-8 and nothing was cut: what can be parsed (as JSON,
    /// as SSE) as the peer would have read it.
    pub fn whole_text(&self) -> Option<&str> {
        self.text.as_deref().filter(|_| !self.truncated())
    }

    /// The kept bytes themselves (the text's, or the hex decoded).
    pub fn kept(&self) -> Vec<u8> {
        match (&self.text, &self.hex) {
            (Some(t), _) => t.as_bytes().to_vec(),
            (None, Some(h)) => hex::decode(h).unwrap_or_default(),
            (None, None) => Vec::new(),
        }
    }
}

/// Where a wire event sits between the two sides, as a sequence diagram draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The client sent it to the mock (a line, a request, closing stdin).
    ClientToMock,
    /// The mock sent it to the client (a write, a response, a stream's bytes).
    MockToClient,
    /// It happened at the mock: its own life, a signal, a stream's end, a note.
    AtMock,
}

/// How far a connection's script got, as a `Script` mark records it
/// ([`WireEvent::script_progress`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptProgress {
    /// Steps started (1-based index of the last step reached; 0 = none).
    pub reached: usize,
    /// Steps in the connection's script.
    pub total: usize,
    /// Whether the script ran to its end (a `stall` counts as its end).
    pub finished: bool,
}

/// One event on the wire or in the mock's life. Options left out when absent (the crate's
/// serde style).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WireEvent {
    /// The mock started serving this connection.
    Started {
        /// The mock's pid (its process group id too when spawned in its own group).
        pid: u32,
        /// stdio: the mock's stderr is its parent's own (the client let the server's stderr
        /// through to its own instead of reading it), so nothing the mock writes there
        /// reaches the client's code.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        stderr_shared: bool,
        /// The wall-clock time (µs since the Unix epoch) of the mock's clock zero, which
        /// every `t_us` of its records counts from: it orders messages across mock
        /// processes (a stdio client's probe copy and its session). Absent in old records.
        origin_unix_us: Option<u64>,
    },
    /// One line the client wrote (without its `\n`); `json` when it parsed.
    FromClient {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The bytes.
        bytes: Recorded,
        /// The parsed JSON, if the line was valid JSON.
        json: Option<Value>,
        /// False when the stream ended without a final newline.
        terminated: bool,
    },
    /// Bytes the mock wrote to the client in one write.
    ToClient {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The bytes.
        bytes: Recorded,
        /// Why the mock wrote them (`reply`, `auto -32601`, `send`…).
        why: String,
    },
    /// Bytes the mock wrote to stderr.
    Stderr {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The bytes.
        bytes: Recorded,
    },
    /// The mock's stdin reached EOF.
    StdinEof {
        /// Microseconds since the mock started.
        t_us: u64,
        /// Whether the process that started the mock (the client) was exiting or gone when
        /// the EOF arrived: a process that exits closes its pipes too, so that EOF is the
        /// exit's, not a close the client made while it lived (and waited for the server).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        parent_exiting: bool,
    },
    /// A signal arrived.
    Signal {
        /// Microseconds since the mock started.
        t_us: u64,
        /// E.g. `SIGTERM`.
        name: String,
        /// Whether the script told the mock to ignore it.
        ignored: bool,
    },
    /// A script label bound to a wire id: a client request an `expect … as:` consumed, or a
    /// server-to-client request the script sent. Checks refer to requests by label.
    Labelled {
        /// The label.
        label: String,
        /// The JSON-RPC id on the wire.
        id: Value,
        /// The method.
        method: String,
    },
    /// How far the script got; written as each step starts and when the script ends.
    Script {
        /// Microseconds since the mock started (0 in records made before it was kept). On
        /// HTTP the journal may write a request after the mark of the step it met, so the
        /// time, not the place in the record, says which came first.
        #[serde(default)]
        t_us: u64,
        /// Steps started (1-based index of the last step reached; 0 = none).
        reached: usize,
        /// Steps in this connection's script.
        total: usize,
        /// Whether the script ran to its end (a `stall` counts as its end).
        finished: bool,
        /// Set on the mark a last step that writes (a stdio `reply`, `notify`…) records as
        /// it starts: the script counts as finished already, so a client that leaves on that
        /// output has not stopped it, but the output's own events come after this one. The
        /// script's events are all recorded at the next finished mark without it.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        output_follows: bool,
    },
    /// The mock is exiting.
    Exit {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The exit code, when exiting normally.
        code: Option<i32>,
        /// The signal it kills itself with, if any.
        signal: Option<String>,
        /// Why (`stdin EOF`, `script`, `SIGTERM`, `deadline`).
        why: String,
    },
    /// HTTP: the mock listens on this port (transcripts show `<port>`).
    Listening {
        /// The TCP port on 127.0.0.1.
        port: u16,
    },
    /// HTTP: a request from the client. Only the headers that matter are kept (see
    /// [`RECORDED_REQUEST_HEADERS`]); an Authorization token is replaced by
    /// `<redacted:N>`, N numbering distinct tokens by first appearance.
    HttpRequest {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The exchange number (per mock process, from 1) that ties responses, stream
        /// writes and stream ends to this request.
        exchange: u64,
        /// `POST`, `GET`, `DELETE`…
        http_method: String,
        /// Path and query.
        path: String,
        /// The headers that matter, lowercase names.
        headers: BTreeMap<String, String>,
        /// The body, when not empty.
        body: Option<Recorded>,
        /// The body parsed as JSON, when it is.
        json: Option<Value>,
    },
    /// HTTP: the mock's response head, and its body unless it is a stream.
    HttpResponse {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The request's exchange number.
        exchange: u64,
        /// The status code.
        status: u16,
        /// Every header the mock set, lowercase names.
        headers: BTreeMap<String, String>,
        /// The body (absent for streams and empty bodies).
        body: Option<Recorded>,
        /// The body parsed as JSON, when it is.
        json: Option<Value>,
        /// Why the mock answered so (`reply`, `auto -32601`, `open_stream`…).
        why: String,
    },
    /// HTTP: bytes the mock wrote on an open stream (or a raw response) in one write.
    StreamWrite {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The exchange number of the request whose response this stream is.
        exchange: u64,
        /// The bytes.
        bytes: Recorded,
        /// Why (`reply`, `notify`, `event`…).
        why: String,
    },
    /// HTTP: how a stream ended: `clean`, `mid_event`, `reset`, `stall` (left open),
    /// `client went away`, `open when the mock stopped`.
    StreamEnd {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The exchange number.
        exchange: u64,
        /// How it ended.
        how: String,
    },
    /// Something the mock noticed about its own script (e.g. a `reply` with nothing left
    /// to answer), recorded so the transcript explains it.
    Note {
        /// Microseconds since the mock started.
        t_us: u64,
        /// What happened.
        text: String,
    },
}

/// The field `$field` of the listed variants of the [`WireEvent`] `$event`, by reference,
/// `None` for the other variants: the one shape of the accessors that hand out a field.
macro_rules! field {
    ($event:expr, $($variant:ident)|+ => $field:ident) => {
        match $event {
            $(WireEvent::$variant { $field, .. })|+ => Some($field),
            _ => None,
        }
    };
}

impl WireEvent {
    /// When the event happened, in microseconds on its mock's clock; `None` for events that
    /// carry no time (and for a `Script` mark from a record made before marks had one).
    pub fn t_us(&self) -> Option<u64> {
        match self {
            WireEvent::Started { .. } | WireEvent::Labelled { .. } | WireEvent::Listening { .. } => None,
            WireEvent::Script { t_us, .. } => (*t_us > 0).then_some(*t_us),
            WireEvent::FromClient { t_us, .. }
            | WireEvent::ToClient { t_us, .. }
            | WireEvent::Stderr { t_us, .. }
            | WireEvent::StdinEof { t_us, .. }
            | WireEvent::Signal { t_us, .. }
            | WireEvent::Exit { t_us, .. }
            | WireEvent::HttpRequest { t_us, .. }
            | WireEvent::HttpResponse { t_us, .. }
            | WireEvent::StreamWrite { t_us, .. }
            | WireEvent::StreamEnd { t_us, .. }
            | WireEvent::Note { t_us, .. } => Some(*t_us),
        }
    }

    /// Which way the event went.
    pub fn direction(&self) -> Direction {
        match self {
            WireEvent::FromClient { .. } | WireEvent::HttpRequest { .. } | WireEvent::StdinEof { .. } => {
                Direction::ClientToMock
            }
            WireEvent::ToClient { .. } | WireEvent::HttpResponse { .. } | WireEvent::StreamWrite { .. } => {
                Direction::MockToClient
            }
            _ => Direction::AtMock,
        }
    }

    /// The HTTP exchange the event belongs to (a request, its response, its stream's writes
    /// and end).
    pub fn exchange(&self) -> Option<u64> {
        field!(self, HttpRequest | HttpResponse | StreamWrite | StreamEnd => exchange).copied()
    }

    /// The event with its exchange number moved up by `base` (events of no exchange as they
    /// are): how records of two mock processes, both counting from 1, are told apart.
    pub fn with_exchange_shifted(mut self, base: u64) -> Self {
        if let Some(exchange) = field!(&mut self, HttpRequest | HttpResponse | StreamWrite | StreamEnd => exchange) {
            *exchange += base;
        }
        self
    }

    /// The JSON the mock parsed from the event's bytes (a client line, a request or
    /// response body), if it was JSON.
    pub fn json(&self) -> Option<&Value> {
        field!(self, FromClient | HttpRequest | HttpResponse => json).and_then(Option::as_ref)
    }

    /// The bytes the event carried: a line or write, stderr, a stream write, an HTTP body.
    pub fn bytes(&self) -> Option<&Recorded> {
        field!(self, FromClient | ToClient | Stderr | StreamWrite => bytes)
            .or(field!(self, HttpRequest | HttpResponse => body).and_then(Option::as_ref))
    }

    /// Why the mock wrote, answered or exited so (`reply`, `auto -32601`, `stdin EOF`…).
    pub fn why(&self) -> Option<&str> {
        field!(self, ToClient | HttpResponse | StreamWrite | Exit => why).map(String::as_str)
    }

    /// Why the mock answered so, for an answer: a write to a stdio client or an HTTP
    /// response (`reply`, `session expired`…), not a stream's later writes or an exit.
    pub fn answer_why(&self) -> Option<&str> {
        field!(self, ToClient | HttpResponse => why).map(String::as_str)
    }

    /// An HTTP request's method (`POST`, `GET`…).
    pub fn http_method(&self) -> Option<&str> {
        field!(self, HttpRequest => http_method).map(String::as_str)
    }

    /// An HTTP request's path, with its query (`/mcp`, `/token?x=1`).
    pub fn path(&self) -> Option<&str> {
        field!(self, HttpRequest => path).map(String::as_str)
    }

    /// An HTTP response's status code.
    pub fn status(&self) -> Option<u16> {
        field!(self, HttpResponse => status).copied()
    }

    /// The headers of an HTTP request or response.
    pub fn headers(&self) -> Option<&BTreeMap<String, String>> {
        field!(self, HttpRequest | HttpResponse => headers)
    }

    /// The session id an HTTP response issued (its `Mcp-Session-Id` header).
    pub fn issued_session_id(&self) -> Option<&str> {
        field!(self, HttpResponse => headers).and_then(|h| h.get("mcp-session-id")).map(String::as_str)
    }

    /// The pid a `Started` event records.
    pub fn started_pid(&self) -> Option<u32> {
        field!(self, Started => pid).copied()
    }

    /// The wall-clock zero of the mock's clock a `Started` event records, when it does.
    pub fn origin_unix_us(&self) -> Option<u64> {
        field!(self, Started => origin_unix_us).copied().flatten()
    }

    /// The JSON message of a line the client wrote (`FromClient`, and what an HTTP request
    /// carries in the message view), if it was JSON.
    pub fn client_message(&self) -> Option<&Value> {
        field!(self, FromClient => json).and_then(Option::as_ref)
    }

    /// The bytes of a line the client wrote (`FromClient`, and what an HTTP request carries
    /// in the message view), JSON or not.
    pub fn client_line(&self) -> Option<&Recorded> {
        field!(self, FromClient => bytes)
    }

    /// The bytes of one write the mock made to the client (`ToClient`, and what an HTTP
    /// response or stream write carries in the message view).
    pub fn mock_write(&self) -> Option<&Recorded> {
        field!(self, ToClient => bytes)
    }

    /// Whether the client sent it: a line, or an HTTP request. Closing stdin is not a send.
    pub fn sent_by_client(&self) -> bool {
        matches!(self, WireEvent::FromClient { .. } | WireEvent::HttpRequest { .. })
    }

    /// Whether it is the mock's record of its own exit.
    pub fn is_exit(&self) -> bool {
        matches!(self, WireEvent::Exit { .. })
    }

    /// Whether it is the mock's stdin reaching EOF.
    pub fn is_stdin_eof(&self) -> bool {
        matches!(self, WireEvent::StdinEof { .. })
    }

    /// For a stdin EOF, whether the client's process was exiting as it came (the exit closed
    /// the pipe) rather than the client closing stdin while it lived; `None` for any other
    /// event.
    pub fn parent_exiting(&self) -> Option<bool> {
        field!(self, StdinEof => parent_exiting).copied()
    }

    /// The name of a signal the mock received (`SIGTERM`); not the one an `Exit` kills the
    /// mock with.
    pub fn signal_name(&self) -> Option<&str> {
        field!(self, Signal => name).map(String::as_str)
    }

    /// How far the script got, from a `Script` mark.
    pub fn script_progress(&self) -> Option<ScriptProgress> {
        match self {
            WireEvent::Script { reached, total, finished, .. } => {
                Some(ScriptProgress { reached: *reached, total: *total, finished: *finished })
            }
            _ => None,
        }
    }

    /// How an HTTP stream ended (`clean`, `client went away`…).
    pub fn stream_end(&self) -> Option<&str> {
        field!(self, StreamEnd => how).map(String::as_str)
    }

    /// For a stdio mock's start, whether its stderr is the client's own (the client spawned
    /// it with stderr inherited), so what it writes there never reaches the client's code.
    pub fn stderr_shared(&self) -> Option<bool> {
        field!(self, Started => stderr_shared).copied()
    }

    /// The port an HTTP mock listens on.
    pub fn listening_port(&self) -> Option<u16> {
        field!(self, Listening => port).copied()
    }

    /// The JSON-RPC message an HTTP record carries, as the client reads it, viewed as a
    /// stdio event would record it: a POST's body as `FromClient`, a JSON response body or a
    /// stream write's `data:` lines as `ToClient`. What checks read alike on every transport.
    /// `None` for every other event (a stdio event is already its own message).
    pub fn carried_message(&self) -> Option<WireEvent> {
        match self {
            WireEvent::HttpRequest { t_us, http_method, json, body, .. } if http_method == "POST" => {
                let bytes = match (body, json) {
                    (Some(b), _) => b.clone(),
                    (None, Some(v)) => Recorded::of(v.to_string().as_bytes()),
                    (None, None) => Recorded::of(b""),
                };
                Some(WireEvent::FromClient { t_us: *t_us, bytes, json: json.clone(), terminated: true })
            }
            WireEvent::HttpResponse { t_us, body: Some(b), why, .. } => {
                let text = b.text.as_deref().filter(|t| t.starts_with(['{', '[']))?;
                Some(WireEvent::written_to_client(*t_us, text, why))
            }
            WireEvent::StreamWrite { t_us, bytes, why, .. } => {
                let text = bytes.text.as_deref().unwrap_or("");
                let data: Vec<&str> =
                    text.split(['\n', '\r']).filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
                (!data.is_empty()).then(|| WireEvent::written_to_client(*t_us, &data.join("\n"), why))
            }
            _ => None,
        }
    }

    /// The event's name as its record spells it (the `event` member: `from_client`,
    /// `http_request`…), without serialising it.
    pub fn kind(&self) -> &'static str {
        match self {
            WireEvent::Started { .. } => "started",
            WireEvent::FromClient { .. } => "from_client",
            WireEvent::ToClient { .. } => "to_client",
            WireEvent::Stderr { .. } => "stderr",
            WireEvent::StdinEof { .. } => "stdin_eof",
            WireEvent::Signal { .. } => "signal",
            WireEvent::Labelled { .. } => "labelled",
            WireEvent::Script { .. } => "script",
            WireEvent::Exit { .. } => "exit",
            WireEvent::Listening { .. } => "listening",
            WireEvent::HttpRequest { .. } => "http_request",
            WireEvent::HttpResponse { .. } => "http_response",
            WireEvent::StreamWrite { .. } => "stream_write",
            WireEvent::StreamEnd { .. } => "stream_end",
            WireEvent::Note { .. } => "note",
        }
    }

    /// Hands `edit` every text and JSON field of the event, in the order its record writes
    /// them (a header map in name order), so a rewriter (the transcript's redaction) edits
    /// the event in place where it would otherwise print it as JSON, edit every string and
    /// read it back. Numbers, flags and the event's name are not handed out.
    pub fn edit_fields(&mut self, mut edit: impl FnMut(Field<'_>)) {
        let recorded = |r: &mut Recorded, edit: &mut dyn FnMut(Field<'_>)| {
            for text in [&mut r.text, &mut r.hex].into_iter().flatten() {
                edit(Field::Text(text));
            }
        };
        let headers = |h: &mut BTreeMap<String, String>, edit: &mut dyn FnMut(Field<'_>)| {
            for (name, value) in h.iter_mut() {
                edit(Field::Header { name, value });
            }
        };
        match self {
            WireEvent::Started { .. }
            | WireEvent::StdinEof { .. }
            | WireEvent::Script { .. }
            | WireEvent::Listening { .. } => {}
            WireEvent::FromClient { bytes, json, .. } => {
                recorded(bytes, &mut edit);
                json.iter_mut().for_each(|v| edit(Field::Json(v)));
            }
            WireEvent::ToClient { bytes, why, .. } | WireEvent::StreamWrite { bytes, why, .. } => {
                recorded(bytes, &mut edit);
                edit(Field::Text(why));
            }
            WireEvent::Stderr { bytes, .. } => recorded(bytes, &mut edit),
            WireEvent::Signal { name, .. } => edit(Field::Text(name)),
            WireEvent::Labelled { label, id, method } => {
                edit(Field::Text(label));
                edit(Field::Json(id));
                edit(Field::Text(method));
            }
            WireEvent::Exit { signal, why, .. } => {
                signal.iter_mut().for_each(|s| edit(Field::Text(s)));
                edit(Field::Text(why));
            }
            WireEvent::HttpRequest { http_method, path, headers: h, body, json, .. } => {
                edit(Field::Text(http_method));
                edit(Field::Text(path));
                headers(h, &mut edit);
                body.iter_mut().for_each(|b| recorded(b, &mut edit));
                json.iter_mut().for_each(|v| edit(Field::Json(v)));
            }
            WireEvent::HttpResponse { headers: h, body, json, why, .. } => {
                headers(h, &mut edit);
                body.iter_mut().for_each(|b| recorded(b, &mut edit));
                json.iter_mut().for_each(|v| edit(Field::Json(v)));
                edit(Field::Text(why));
            }
            WireEvent::StreamEnd { how, .. } => edit(Field::Text(how)),
            WireEvent::Note { text, .. } => edit(Field::Text(text)),
        }
    }

    /// The event as writing its record and reading it back gives: a `json` that is JSON
    /// `null` reads back as absent (an `Option<Value>` reads `null` as `None`). What an
    /// in-place edit must apply to match a rewrite through the record's JSON.
    pub fn read_back(mut self) -> Self {
        if let Some(json) = field!(&mut self, FromClient | HttpRequest | HttpResponse => json)
            && json.as_ref().is_some_and(Value::is_null)
        {
            *json = None;
        }
        self
    }

    /// `text` as one line the mock wrote to the client (the message view of what an HTTP
    /// record carries).
    pub fn written_to_client(t_us: u64, text: &str, why: &str) -> WireEvent {
        WireEvent::ToClient { t_us, bytes: Recorded::of(format!("{text}\n").as_bytes()), why: why.to_string() }
    }
}

/// A field of a [`WireEvent`] handed to [`WireEvent::edit_fields`].
#[derive(Debug)]
pub enum Field<'a> {
    /// A text: a why, a path, a method, recorded bytes' text or hex, a note…
    Text(&'a mut String),
    /// An HTTP header's value, with its (lowercase) name.
    Header {
        /// The header's name.
        name: &'a str,
        /// Its value.
        value: &'a mut String,
    },
    /// A JSON value: a message the mock parsed, a label's wire id.
    Json(&'a mut Value),
}

/// The request headers an HTTP record keeps (lowercase): those the MCP transports define
/// plus the ones that decide how a server treats a request.
pub const RECORDED_REQUEST_HEADERS: &[&str] = &[
    "accept",
    "authorization",
    "content-type",
    "host",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
    "origin",
];

/// The prefix of the 2026-07-28 `Mcp-Param-{Name}` headers, all of which are recorded too.
pub const RECORDED_HEADER_PREFIX: &str = "mcp-param-";

/// Whether an HTTP record keeps the request header `name` (any case).
pub fn is_recorded_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    RECORDED_REQUEST_HEADERS.contains(&lower.as_str()) || lower.starts_with(RECORDED_HEADER_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_options_are_left_out_of_the_record_and_read_back_as_absent() {
        let exit = WireEvent::Exit { t_us: 1, code: None, signal: None, why: "script".into() };
        let text = serde_json::to_string(&exit).expect("serialises");
        assert_eq!(text, r#"{"event":"exit","t_us":1,"why":"script"}"#);
        assert_eq!(serde_json::from_str::<WireEvent>(&text).expect("reads back"), exit);
        assert_eq!(serde_json::to_string(&Recorded::of(b"hi")).expect("serialises"), r#"{"text":"hi","len":2}"#);
    }

    /// One event of every kind, each text and JSON field set.
    fn one_of_each() -> Vec<WireEvent> {
        let recorded = |t: &str| Recorded { text: Some(t.into()), hex: Some(format!("{t}-hex")), len: 1 };
        let headers =
            |p: &str| BTreeMap::from([(format!("{p}-b"), format!("{p}-vb")), (format!("{p}-a"), format!("{p}-va"))]);
        let json = |p: &str| serde_json::json!({"z": p, "a": [format!("{p}-1"), {"k": format!("{p}-2")}], "n": 1});
        vec![
            WireEvent::Started { pid: 1, stderr_shared: true, origin_unix_us: Some(2) },
            WireEvent::FromClient { t_us: 1, bytes: recorded("fc"), json: Some(json("fcj")), terminated: true },
            WireEvent::ToClient { t_us: 1, bytes: recorded("tc"), why: "tc-why".into() },
            WireEvent::Stderr { t_us: 1, bytes: recorded("se") },
            WireEvent::StdinEof { t_us: 1, parent_exiting: true },
            WireEvent::Signal { t_us: 1, name: "SIGTERM".into(), ignored: false },
            WireEvent::Labelled { label: "l".into(), id: serde_json::json!("l-id"), method: "l-m".into() },
            WireEvent::Script { t_us: 1, reached: 1, total: 2, finished: false, output_follows: true },
            WireEvent::Exit { t_us: 1, code: Some(0), signal: Some("SIGKILL".into()), why: "x-why".into() },
            WireEvent::Listening { port: 1 },
            WireEvent::HttpRequest {
                t_us: 1,
                exchange: 1,
                http_method: "POST".into(),
                path: "/p".into(),
                headers: headers("rq"),
                body: Some(recorded("rqb")),
                json: Some(json("rqj")),
            },
            WireEvent::HttpResponse {
                t_us: 1,
                exchange: 1,
                status: 200,
                headers: headers("rs"),
                body: Some(recorded("rsb")),
                json: Some(json("rsj")),
                why: "rs-why".into(),
            },
            WireEvent::StreamWrite { t_us: 1, exchange: 1, bytes: recorded("sw"), why: "sw-why".into() },
            WireEvent::StreamEnd { t_us: 1, exchange: 1, how: "clean".into() },
            WireEvent::Note { t_us: 1, text: "n".into() },
        ]
    }

    /// Every string in `v`, depth first, in member order.
    fn strings_of(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|i| strings_of(i, out)),
            Value::Object(map) => map.values().for_each(|i| strings_of(i, out)),
            _ => {}
        }
    }

    #[test]
    fn the_field_editor_hands_out_every_string_the_record_holds_in_its_order() {
        for mut e in one_of_each() {
            let mut record = serde_json::to_value(&e).expect("serialises");
            assert_eq!(record["event"], e.kind(), "{e:?}");
            record.as_object_mut().expect("an object").shift_remove("event");
            let mut written = Vec::new();
            strings_of(&record, &mut written);
            let mut handed = Vec::new();
            e.edit_fields(|f| match f {
                Field::Text(s) | Field::Header { value: s, .. } => handed.push(s.clone()),
                Field::Json(v) => strings_of(v, &mut handed),
            });
            assert_eq!(handed, written, "{e:?}");
            // An edit in place is the edit of the record's strings.
            e.edit_fields(|f| match f {
                Field::Text(s) | Field::Header { value: s, .. } => s.push('!'),
                Field::Json(v) => *v = Value::from(format!("{v}!")),
            });
            let mut edited = Vec::new();
            e.edit_fields(|f| match f {
                Field::Text(s) | Field::Header { value: s, .. } => edited.push(s.clone()),
                Field::Json(v) => edited.push(v.as_str().unwrap_or_default().to_owned()),
            });
            assert!(edited.iter().all(|s| s.ends_with('!')), "{edited:?}");
        }
    }

    #[test]
    fn each_accessor_answers_for_its_own_kinds_only_with_their_fields() {
        let answering = |answers: fn(&WireEvent) -> bool| -> Vec<&'static str> {
            one_of_each().iter().filter(|e| answers(e)).map(WireEvent::kind).collect()
        };
        assert_eq!(answering(|e| e.path().is_some()), ["http_request"]);
        assert_eq!(answering(|e| e.client_line().is_some()), ["from_client"]);
        assert_eq!(answering(|e| e.mock_write().is_some()), ["to_client"]);
        assert_eq!(answering(WireEvent::sent_by_client), ["from_client", "http_request"]);
        assert_eq!(answering(WireEvent::is_stdin_eof), ["stdin_eof"]);
        assert_eq!(answering(|e| e.parent_exiting().is_some()), ["stdin_eof"]);
        assert_eq!(answering(|e| e.signal_name().is_some()), ["signal"], "an exit's signal is not one received");
        assert_eq!(answering(|e| e.script_progress().is_some()), ["script"]);
        assert_eq!(answering(|e| e.stream_end().is_some()), ["stream_end"]);
        assert_eq!(answering(|e| e.listening_port().is_some()), ["listening"]);
        assert_eq!(answering(|e| e.answer_why().is_some()), ["to_client", "http_response"]);
        assert_eq!(answering(|e| e.stderr_shared().is_some()), ["started"]);
        let of = |kind: &str| one_of_each().into_iter().find(|e| e.kind() == kind).expect("one of each kind");
        assert_eq!(of("http_request").path(), Some("/p"));
        assert_eq!(of("from_client").client_line().and_then(|b| b.text.as_deref()), Some("fc"));
        assert_eq!(of("to_client").mock_write().and_then(|b| b.text.as_deref()), Some("tc"));
        assert_eq!(of("stdin_eof").parent_exiting(), Some(true));
        assert_eq!(of("signal").signal_name(), Some("SIGTERM"));
        assert_eq!(of("script").script_progress(), Some(ScriptProgress { reached: 1, total: 2, finished: false }));
        assert_eq!(of("stream_end").stream_end(), Some("clean"));
        assert_eq!(of("listening").listening_port(), Some(1));
        assert_eq!(of("to_client").answer_why(), Some("tc-why"));
        assert_eq!(of("http_response").answer_why(), Some("rs-why"));
        assert_eq!(of("started").stderr_shared(), Some(true));
    }

    #[test]
    fn a_null_json_reads_back_absent() {
        let e =
            WireEvent::FromClient { t_us: 1, bytes: Recorded::of(b"null"), json: Some(Value::Null), terminated: true };
        let back: WireEvent = serde_json::from_value(serde_json::to_value(&e).expect("serialises")).expect("reads");
        assert_eq!(back, e.clone().read_back());
        assert_ne!(back, e);
        for e in one_of_each() {
            let back: WireEvent = serde_json::from_value(serde_json::to_value(&e).expect("serialises")).expect("reads");
            assert_eq!(back, e.clone().read_back());
        }
    }

    #[test]
    fn records_text_hex_and_prefixes() {
        assert_eq!(Recorded::of(b"hi").text.as_deref(), Some("hi"));
        assert_eq!(Recorded::of(b"\xff\x00").hex.as_deref(), Some("ff00"));
        let big = Recorded::of(&vec![b'x'; 5000]);
        assert!(big.truncated());
        assert_eq!(big.len, 5000);
        assert_eq!(big.whole_text(), None);
        let whole = Recorded::whole(&vec![b'x'; 5000]);
        assert!(!whole.truncated() && whole.whole_text().is_some_and(|t| t.len() == 5000));
        assert_eq!(Recorded::whole(b"\xff\x00").kept(), b"\xff\x00");
    }

    #[test]
    fn exchanges_shift_and_http_records_carry_their_messages() {
        let end = WireEvent::StreamEnd { t_us: 0, exchange: 2, how: "clean".into() };
        assert_eq!(end.clone().with_exchange_shifted(10).exchange(), Some(12));
        assert_eq!(end.direction(), Direction::AtMock);
        let eof = WireEvent::StdinEof { t_us: 0, parent_exiting: false };
        assert_eq!(eof.clone().with_exchange_shifted(10), eof);
        let message = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let post = |http_method: &str| WireEvent::HttpRequest {
            t_us: 5,
            exchange: 1,
            http_method: http_method.into(),
            path: "/mcp".into(),
            headers: BTreeMap::new(),
            body: None,
            json: Some(message.clone()),
        };
        let viewed = post("POST").carried_message().expect("a POST carries its body");
        assert_eq!((viewed.client_message(), viewed.direction()), (Some(&message), Direction::ClientToMock));
        assert_eq!(post("GET").carried_message(), None);
        let write = WireEvent::StreamWrite {
            t_us: 6,
            exchange: 1,
            bytes: Recorded::of(b"id: 1\ndata: {\"id\":1}\n\n"),
            why: "reply".into(),
        };
        let viewed = write.carried_message().expect("a data line carries a message");
        assert_eq!(viewed, WireEvent::written_to_client(6, "{\"id\":1}", "reply"));
        assert_eq!(viewed.why(), Some("reply"));
    }
}
