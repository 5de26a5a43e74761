//! The wire transcript's data: one [`WireEvent`] per thing that crossed the wire or
//! happened in the mock's life, as the mock records it (one JSON object per line in
//! `<run-dir>/conn-<n>.jsonl`) and the harness reads it back.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Bytes longer than this are recorded as a prefix plus their full length.
pub const RECORD_PREFIX_BYTES: usize = 1024;

/// Recorded bytes: UTF-8 text when valid, else hex; truncated past [`RECORD_PREFIX_BYTES`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// The (prefix of the) bytes as text, when valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The (prefix of the) bytes as hex, when not valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

    /// Whether only a prefix was kept.
    pub fn truncated(&self) -> bool {
        let kept = self.text.as_ref().map(|t| t.len()).or(self.hex.as_ref().map(|h| h.len() / 2)).unwrap_or(0);
        kept < self.len
    }
}

/// One event on the wire or in the mock's life.
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin_unix_us: Option<u64>,
    },
    /// One line the client wrote (without its `\n`); `json` when it parsed.
    FromClient {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The bytes.
        bytes: Recorded,
        /// The parsed JSON, if the line was valid JSON.
        #[serde(default, skip_serializing_if = "Option::is_none")]
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        /// The signal it kills itself with, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<Recorded>,
        /// The body parsed as JSON, when it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<Recorded>,
        /// The body parsed as JSON, when it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
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
    fn records_text_hex_and_prefixes() {
        assert_eq!(Recorded::of(b"hi").text.as_deref(), Some("hi"));
        assert_eq!(Recorded::of(b"\xff\x00").hex.as_deref(), Some("ff00"));
        let big = Recorded::of(&vec![b'x'; 5000]);
        assert!(big.truncated());
        assert_eq!(big.len, 5000);
    }
}
