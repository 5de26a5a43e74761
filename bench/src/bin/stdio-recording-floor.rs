//! The floor of a stdio server that records what crosses the wire, as the mock must: std,
//! blocking, no runtime. Each line is parsed (its envelope only, borrowed: `id` and `method`),
//! its event and its answer's event go to the record in one `write`, then the answer goes
//! out, carrying the line's id (`initialize` gets a handshake result, so a client can
//! handshake first as with the mock; a notification is recorded, not answered). The events
//! have the mock's shape without its parsed copy of the line, so this is the least any
//! recording server does: what it costs above `stdio-echo` is one parse and one `write`.
//! Hence its own borrowed types rather than `WireEvent` (which owns the line's text and its
//! parsed `json`) or `mcp_bench::reply_to` (which parses the whole line into a `Value`).
//!
//! Usage: `stdio-recording-floor RECORD` (a file, appended to; `/dev/null` keeps the `write`
//! and stores nothing).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::fs::OpenOptions;
use std::io::{BufRead, BufWriter, Write};
use std::time::Instant;

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    /// Raw, as written: a borrowed `str` would refuse a method written with escapes (and the
    /// line would go unanswered); only a plain `"initialize"` needs telling apart.
    #[serde(borrow)]
    method: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct Event<'a> {
    event: &'static str,
    t_us: u128,
    bytes: Bytes<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<&'static str>,
}

#[derive(Serialize)]
struct Bytes<'a> {
    text: &'a str,
    len: usize,
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: stdio-recording-floor RECORD");
        std::process::exit(2);
    };
    let mut record = match OpenOptions::new().create(true).append(true).open(&path) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("stdio-recording-floor: cannot open the record {path}: {e}");
            std::process::exit(1);
        }
    };
    let start = Instant::now();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut output = BufWriter::new(std::io::stdout().lock());
    let (mut line, mut events, mut answer) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = std::str::from_utf8(line.strip_suffix(b"\n").unwrap_or(&line)).unwrap_or_default();
        let Ok(envelope) = serde_json::from_str::<Envelope>(text) else { continue };
        events.clear();
        answer.clear();
        push_event(&mut events, "from_client", start, text, None);
        if let Some(id) = envelope.id {
            answer.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
            answer.extend_from_slice(id.get().as_bytes());
            answer.extend_from_slice(match envelope.method.map(RawValue::get) {
                Some(r#""initialize""#) => {
                    br#","result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"stdio-recording-floor","version":"0"}}}"#
                }
                _ => br#","result":{"content":[{"type":"text","text":"ok"}]}}"#,
            });
            answer.push(b'\n');
            let sent = std::str::from_utf8(&answer).unwrap_or_default();
            push_event(&mut events, "to_client", start, sent, Some("reply"));
        }
        // The record first, as the mock does: an answer the client saw is in the record.
        if record.write_all(&events).is_err() {
            return;
        }
        if !answer.is_empty() && output.write_all(&answer).and_then(|_| output.flush()).is_err() {
            return;
        }
    }
}

fn push_event(events: &mut Vec<u8>, event: &'static str, start: Instant, text: &str, why: Option<&'static str>) {
    let bytes = Bytes { text, len: text.len() };
    let event = Event { event, t_us: start.elapsed().as_micros(), bytes, why };
    if serde_json::to_writer(&mut *events, &event).is_ok() {
        events.push(b'\n');
    }
}
