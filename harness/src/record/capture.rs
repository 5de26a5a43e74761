//! What a recording holds: one [`ConnectionCapture`] per connection (a spawn of the stdio
//! server, an HTTP session), each a list of [`Captured`] events with their time since the
//! connection began. Secrets are already redacted when an event is built ([`super::secrets`]).
//! The recorder keeps the capture beside the scenario (`<name>.capture.jsonl`, one
//! connection per line) so `--append` can add a connection and tests can compare a replay
//! with what was captured. Its bytes are the wire model's [`Recorded`], kept whole
//! ([`Recorded::whole`]: the script is written from every byte a real server sent). A
//! client's HTTP request is the mock's own [`WireEvent::HttpRequest`]; the other events are
//! not `WireEvent`s, the mock's own record, because they are cut at another grain: a stdio server's output line by line (a write may hold several
//! lines, a line span writes), an HTTP response's head apart from its body, an SSE stream
//! as parsed events; and a capture has no script to mark.

use crate::error::HarnessError;
use mcp_scenario::wire::{Recorded, WireEvent};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One thing that crossed the wire (or happened to the server) during a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Captured {
    /// stdio: one line the client wrote (without its `\n`); `json` when it parsed.
    ClientLine {
        /// Microseconds since the connection began.
        t_us: u64,
        /// The line.
        bytes: Recorded,
        /// The parsed (and redacted) JSON.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        json: Option<Value>,
    },
    /// stdio: one line the server wrote; `terminated` is false for bytes the server left
    /// without a final `\n`.
    ServerLine {
        /// Microseconds since the connection began.
        t_us: u64,
        /// The line, without its `\n` (a `\r` before it is kept).
        bytes: Recorded,
        /// Whether a `\n` ended it.
        terminated: bool,
    },
    /// stdio: bytes the server wrote to stderr.
    Stderr {
        /// Microseconds since the connection began.
        t_us: u64,
        /// The bytes.
        bytes: Recorded,
    },
    /// stdio: the client closed the server's stdin.
    StdinEof {
        /// Microseconds since the connection began.
        t_us: u64,
    },
    /// stdio: the recorder got a signal (from the client) and passed it to the server.
    Signal {
        /// Microseconds since the connection began.
        t_us: u64,
        /// E.g. `SIGTERM`.
        name: String,
    },
    /// stdio: the server exited.
    Exit {
        /// Microseconds since the connection began.
        t_us: u64,
        /// Its exit code, when it exited normally.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        /// The signal that killed it, otherwise.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<String>,
    },
    /// HTTP: a request the client sent (through the proxy), as the mock records one: always a
    /// [`WireEvent::HttpRequest`] (headers that matter and JSON redacted, the body kept
    /// whole, its time since the connection began). One model of a recorded request serves
    /// the mock's record and the recorder's capture.
    HttpRequest(WireEvent),
    /// HTTP: the head of the upstream's response.
    HttpResponse {
        /// Microseconds since the connection began.
        t_us: u64,
        /// The exchange it answers.
        exchange: usize,
        /// The status code.
        status: u16,
        /// The headers that matter (lowercase names), secrets redacted.
        headers: BTreeMap<String, String>,
    },
    /// HTTP: a whole non-stream response body.
    HttpBody {
        /// Microseconds since the connection began (when the body had fully arrived).
        t_us: u64,
        /// The exchange.
        exchange: usize,
        /// The body.
        body: Recorded,
        /// The body as JSON, when it parsed (redacted).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        json: Option<Value>,
    },
    /// HTTP: one SSE event (or comment) the upstream sent on a stream.
    SseEvent {
        /// Microseconds since the connection began.
        t_us: u64,
        /// The exchange whose stream it came on.
        exchange: usize,
        /// `event:`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event: Option<String>,
        /// `id:`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// `retry:`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry: Option<u64>,
        /// `data:` lines joined with `\n` (redacted).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// A comment line's text (`: …`), for keep-alives.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment: Option<String>,
    },
    /// HTTP: how a stream (or body) ended.
    StreamEnd {
        /// Microseconds since the connection began.
        t_us: u64,
        /// The exchange.
        exchange: usize,
        /// `clean`, `reset` (the upstream broke it), `client` (the client went away),
        /// `stall` (still open when the recording stopped).
        how: String,
    },
}

impl Captured {
    /// When it happened, in microseconds since the connection began.
    pub fn t_us(&self) -> u64 {
        match self {
            Captured::ClientLine { t_us, .. }
            | Captured::ServerLine { t_us, .. }
            | Captured::Stderr { t_us, .. }
            | Captured::StdinEof { t_us }
            | Captured::Signal { t_us, .. }
            | Captured::Exit { t_us, .. }
            | Captured::HttpResponse { t_us, .. }
            | Captured::HttpBody { t_us, .. }
            | Captured::SseEvent { t_us, .. }
            | Captured::StreamEnd { t_us, .. } => *t_us,
            Captured::HttpRequest(request) => request.t_us().unwrap_or(0),
        }
    }
}

/// One connection's capture.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectionCapture {
    /// `stdio`, `http` or `legacy-sse`.
    pub transport: String,
    /// What was recorded: the server command (stdio) or the upstream URL (HTTP).
    pub source: String,
    /// The events, in the order the recorder saw them.
    pub events: Vec<Captured>,
    /// What was redacted: a description (`Authorization header`, `JSON member
    /// "access_token"`, `pattern sk-…`) and how many values.
    #[serde(default)]
    pub redacted: BTreeMap<String, usize>,
}

/// The capture file kept beside a scenario: `scenario.yaml` → `scenario.capture.jsonl`.
pub fn capture_path(out: &Path) -> PathBuf {
    out.with_extension("capture.jsonl")
}

/// Reads a capture file (one connection per line).
pub fn read(path: &Path) -> Result<Vec<ConnectionCapture>, HarnessError> {
    let text = std::fs::read_to_string(path).map_err(|e| HarnessError::io(format!("reading {}", path.display()), e))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|source| HarnessError::BadCapture {
                path: path.into(),
                line: i + 1,
                source,
            })
        })
        .collect()
}

/// The capture file's text for `connections`.
pub fn render(connections: &[ConnectionCapture]) -> String {
    connections.iter().map(|c| serde_json::to_string(c).unwrap_or_default() + "\n").collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture `--append` cannot read back names its line and says how to go on.
    #[test]
    fn a_line_that_is_no_connection_is_named_by_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.capture.jsonl");
        let good = render(&[ConnectionCapture { transport: "stdio".into(), ..Default::default() }]);
        std::fs::write(&path, format!("{good}\n{{\"transport\": 1}}\n")).expect("write");
        let err = read(&path).expect_err("the third line is no connection");
        assert!(matches!(err, HarnessError::BadCapture { line: 3, .. }), "{err:?}");
        assert!(err.to_string().contains("record without --append"), "{err}");
        std::fs::write(&path, good).expect("write");
        assert_eq!(read(&path).expect("reads").len(), 1);
    }
}
