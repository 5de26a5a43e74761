//! `index.html`: the run's report for people, one self-contained file (inline CSS and
//! script, no network, works from `file://`).
//!
//! The page holds the runs as one JSON document and a small inline script draws it: the
//! summary table with its filters at load, and a run's detail (its sequence diagrams, checks,
//! plan steps and snapshot diff) only when the run is opened. Why not render every diagram
//! server-side: the bundled library is ~260 runs of 10–60 wire events each, and markup per
//! event for every run would make the page several times larger and slow to open, while
//! most readers open a handful of runs. The script builds the DOM with `textContent` only,
//! so no recorded byte is ever parsed as markup; the JSON is embedded with `<`, `>` and `&`
//! written as `\u` escapes, so it cannot close its `<script>` element.
//!
//! What each wire event becomes ([`Event`]) is decided here, in Rust, so it is tested with
//! the rest of the crate; the script only lays the events out. Everything shown comes from
//! [`RunResult`]: its `wire` is already redacted by the runner ([`crate::transcript::Redactor`])
//! and the whole document passes through [`Redactor::value`] (the secret policy,
//! [`mcp_mock::secrets`]) again on the way out (step results and messages carry tokens too).
//!
//! Open a run directly with `index.html#run-<n>`, or every run with `index.html#all`.

use crate::report::Totals;
use crate::transcript::Redactor;
use mcp_results::{CheckResult, JudgedCheck, RunResult, SnapshotStatus, Status, StepOutcome, Verdict};
use mcp_scenario::WireEvent;
use mcp_scenario::wire::Recorded;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashSet;

/// The page's style sheet.
const STYLE: &str = include_str!("html/report.css");
/// The page's script: reads the `#data` JSON and draws the table and the runs.
const SCRIPT: &str = include_str!("html/report.js");

/// The whole page for `results`.
pub fn page(results: &[RunResult], wall_ms: u64) -> String {
    let doc = Doc {
        totals: Totals::of(results),
        wall_ms,
        wall: human_duration(wall_ms),
        runs: results.iter().enumerate().map(|(i, r)| RunView::of(i + 1, r)).collect(),
    };
    let mut data = serde_json::to_value(&doc).unwrap_or(Value::Null);
    Redactor::secrets_only().value(&mut data);
    let json = script_safe(&data.to_string());
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>mcp-harness report</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <header><h1>mcp-harness report</h1><p id=\"totals\"></p></header>\n\
         <noscript><p>This report draws its tables and diagrams with an inline script; \
         enable JavaScript for this file, or read results.json beside it.</p></noscript>\n\
         <section id=\"chips\"></section>\n<section id=\"filters\"></section>\n<table id=\"runs\"></table>\n\
         <script type=\"application/json\" id=\"data\">{json}</script>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>\n"
    )
}

/// JSON text that cannot end or confuse its `<script>` element: `<`, `>`, `&` and the two
/// JavaScript line separators as `\u` escapes (JSON strings read them back unchanged; the
/// characters only occur inside strings).
fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The page's data.
#[derive(Serialize)]
struct Doc<'a> {
    totals: Totals,
    wall_ms: u64,
    /// `wall_ms` for people.
    wall: String,
    runs: Vec<RunView<'a>>,
}

/// A duration for people: `850 ms`, `4.2 s`, `9 min 0 s`, `1 h 2 min`.
pub fn human_duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{} min {} s", ms / 60_000, (ms % 60_000) / 1000),
        _ => format!("{} h {} min", ms / 3_600_000, (ms % 3_600_000) / 60_000),
    }
}

/// One run as the page shows it.
#[derive(Serialize)]
struct RunView<'a> {
    /// 1-based, for `#run-<n>`.
    n: usize,
    scenario: &'a str,
    path: String,
    transport: &'static str,
    target: &'a str,
    status: &'static str,
    /// The one badge the run gets: its status, with what its baseline says of it.
    badge: String,
    /// Where the run sorts (0 first): what fails the job, then what asks for a look, then
    /// the rest ([`attention`]).
    rank: u8,
    duration_ms: u64,
    /// `duration_ms` for people.
    duration: String,
    reason: Option<&'a str>,
    baseline: Option<&'static str>,
    failures: &'a [CheckResult],
    warnings: &'a [CheckResult],
    notes: &'a [CheckResult],
    checks: &'a [JudgedCheck],
    steps: &'a [StepOutcome],
    snapshot: SnapshotView,
    client: Option<String>,
    connections: Vec<ConnectionView>,
}

impl<'a> RunView<'a> {
    fn of(n: usize, r: &'a RunResult) -> Self {
        let client = r.client.as_ref().map(|c| {
            let mut s = c.end.to_string();
            if !c.stderr_tail.is_empty() {
                s.push_str("\nstderr (tail):\n");
                s.push_str(&c.stderr_tail);
            }
            s
        });
        RunView {
            n,
            scenario: &r.scenario,
            path: r.path.display().to_string(),
            transport: r.transport.as_str(),
            target: &r.target,
            status: r.status.as_str(),
            badge: badge(r),
            rank: attention(r),
            duration_ms: r.duration_ms,
            duration: human_duration(r.duration_ms),
            reason: r.reason.as_deref(),
            baseline: r.baseline.map(|b| b.as_str()),
            failures: &r.failures,
            warnings: &r.warnings,
            notes: &r.notes,
            checks: &r.judged,
            steps: &r.steps,
            snapshot: SnapshotView::of(&r.snapshot),
            client,
            connections: r
                .wire
                .iter()
                .enumerate()
                .map(|(i, events)| ConnectionView { number: i + 1, events: events_of(events) })
                .collect(),
        }
    }
}

/// A run's one badge: its status, and what its expected-failures baseline says when that
/// adds something (an expected failure, a stale entry, a flaky run).
fn badge(r: &RunResult) -> String {
    let status = r.status.as_str().replace('_', " ");
    let said = match r.baseline {
        Some(Verdict::ExpectedFailure | Verdict::ExpectedNotExercised) => "expected (baseline)",
        Some(Verdict::UnexpectedFailure | Verdict::UnexpectedNotExercised) => "not in the baseline",
        Some(Verdict::StaleEntry) => "baseline entry stale",
        Some(Verdict::Flaky) => "flaky (baseline)",
        Some(Verdict::Pass | Verdict::Skipped) | None => return status,
    };
    format!("{status} · {said}")
}

/// How urgently a run asks to be read, 0 first: it fails the job (a failure, an error, a
/// run not exercised, a stale baseline entry — unless its baseline expects it), it asks for
/// a look (warned; expected by the baseline), it passed, it was not judged.
fn attention(r: &RunResult) -> u8 {
    let expected =
        matches!(r.baseline, Some(Verdict::ExpectedFailure | Verdict::ExpectedNotExercised | Verdict::Flaky));
    match r.status {
        _ if r.baseline == Some(Verdict::StaleEntry) => 0,
        Status::Failed | Status::Error if !expected => 0,
        Status::NotExercised | Status::FlakyUnderLoad if !expected => 1,
        Status::Warned => 2,
        Status::Failed | Status::Error | Status::NotExercised | Status::FlakyUnderLoad => 3,
        Status::Passed => 4,
        Status::NotApplicable | Status::Skipped | Status::Pending | Status::NotRun => 5,
    }
}

/// The snapshot comparison, flattened for the script.
#[derive(Serialize)]
struct SnapshotView {
    state: &'static str,
    path: Option<String>,
    diff: Option<String>,
}

impl SnapshotView {
    fn of(s: &SnapshotStatus) -> Self {
        let (state, path, diff) = match s {
            SnapshotStatus::NotCompared => ("not compared", None, None),
            SnapshotStatus::Matched => ("matched", None, None),
            SnapshotStatus::Updated { path } => ("updated", Some(path), None),
            SnapshotStatus::Created { path } => ("created", Some(path), None),
            SnapshotStatus::Missing { path } => ("missing", Some(path), None),
            SnapshotStatus::Withheld { path } => ("pending review", Some(path), None),
            SnapshotStatus::Mismatch { path, diff } => ("differs", Some(path), Some(diff.clone())),
        };
        SnapshotView { state, path: path.map(|p| p.display().to_string()), diff }
    }
}

/// One connection's diagram.
#[derive(Serialize)]
struct ConnectionView {
    number: usize,
    events: Vec<Event>,
}

/// Who an event is drawn from and to: the wire event's own ([`WireEvent::direction`]).
pub use mcp_scenario::wire::Direction;

/// What an event is, which decides how it is drawn (the script's CSS class).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A JSON-RPC request.
    Request,
    /// A JSON-RPC result.
    Response,
    /// A JSON-RPC error response.
    Error,
    /// A JSON-RPC notification.
    Notification,
    /// An HTTP request or response head with no JSON-RPC in it.
    Http,
    /// A server-sent event or SSE comment.
    Sse,
    /// Bytes that are not a JSON message (raw lines, hex, non-SSE stream bytes).
    Raw,
    /// Something broke: a reset, a stall, a stream cut mid-event, a signal.
    Fault,
    /// Something closed or ended: stdin EOF, a stream closed, the mock exiting.
    Close,
    /// The mock's own life and notes (started, listening, stderr, script notes).
    Life,
}

/// One wire event as the diagram draws it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// Milliseconds since the mock started serving the connection (events the mock records
    /// without a time take the previous one's).
    pub t_ms: f64,
    /// Milliseconds since the previous event on this connection.
    pub dt_ms: f64,
    /// Who it goes from and to.
    pub direction: Direction,
    /// What it is.
    pub kind: Kind,
    /// The one-line label.
    pub label: String,
    /// The full recorded text (bytes, headers, why), shown when the event is clicked.
    pub detail: String,
    /// The HTTP exchange it belongs to.
    pub exchange: Option<u64>,
    /// Whether it belongs to a GET (the listener's stream, or a legacy SSE stream).
    pub get: bool,
    /// Its index among the connection's records: what a verdict's `about` points at.
    pub at: usize,
}

/// The diagram events of one connection's records, in wire order.
pub fn events_of(recorded: &[WireEvent]) -> Vec<Event> {
    let mut out = Vec::new();
    let mut gets: HashSet<u64> = HashSet::new();
    let mut script_ended = false;
    let mut last_us = 0u64;
    // A mark whose output follows comes before the last step's output; the end is drawn at
    // the mark after that output, unless the mock was killed before recording one.
    let marked_after_output =
        recorded.iter().any(|e| matches!(e, WireEvent::Script { finished: true, output_follows: false, .. }));
    for (at, e) in recorded.iter().enumerate() {
        let t_us = time_of(e).unwrap_or(last_us);
        let dt_ms = t_us.saturating_sub(last_us) as f64 / 1000.0;
        last_us = t_us;
        // The mock records its script's end again at each later event; draw it once.
        if let WireEvent::Script { finished: true, output_follows, .. } = e {
            if script_ended || (*output_follows && marked_after_output) {
                continue;
            }
            script_ended = true;
        }
        if e.http_method() == Some("GET")
            && let Some(x) = e.exchange()
        {
            gets.insert(x);
        }
        let Some((kind, label, detail)) = describe(e) else { continue };
        let exchange = e.exchange();
        out.push(Event {
            t_ms: t_us as f64 / 1000.0,
            dt_ms,
            direction: e.direction(),
            kind,
            label,
            detail,
            exchange,
            get: exchange.is_some_and(|x| gets.contains(&x)),
            at,
        });
    }
    out
}

/// When an event happened; a script's progress mark is no event on the wire.
fn time_of(e: &WireEvent) -> Option<u64> {
    if matches!(e, WireEvent::Script { .. }) { None } else { e.t_us() }
}

/// What one record is drawn as (its kind, label and detail); `None` for records that are
/// bookkeeping, not wire (labels, script progress except its end). Where it is drawn is the
/// event's own ([`WireEvent::direction`], [`WireEvent::exchange`]).
fn describe(e: &WireEvent) -> Option<(Kind, String, String)> {
    let detail = e.bytes().map(bytes_text).unwrap_or_default();
    Some(match e {
        WireEvent::Started { .. } => (Kind::Life, "mock started".into(), detail),
        WireEvent::Listening { .. } => (Kind::Life, "listening on 127.0.0.1:<port>".into(), detail),
        WireEvent::FromClient { json, terminated, .. } => {
            let (kind, mut label) = match json {
                Some(v) => message_label(v),
                None => (Kind::Raw, format!("raw line: {}", short(&detail))),
            };
            if !terminated {
                label.push_str(" (no final newline)");
            }
            (kind, label, detail)
        }
        WireEvent::ToClient { bytes, why, .. } => {
            let (kind, label) = lines_label(bytes);
            (kind, format!("{label} [{why}]"), detail)
        }
        WireEvent::Stderr { .. } => (Kind::Life, format!("stderr: {}", short(&detail)), detail),
        WireEvent::StdinEof { parent_exiting, .. } => {
            let what = if *parent_exiting { "stdin ended as the client exited (EOF)" } else { "stdin closed (EOF)" };
            (Kind::Close, what.into(), detail)
        }
        WireEvent::Signal { name, ignored, .. } => {
            let label = format!("signal {name}{}", if *ignored { " (ignored by the script)" } else { "" });
            (Kind::Fault, label, detail)
        }
        WireEvent::Labelled { .. } => return None,
        WireEvent::Script { reached, total, finished, .. } => {
            if !finished {
                return None;
            }
            (Kind::Life, format!("script ended ({reached}/{total} steps)"), detail)
        }
        WireEvent::Exit { code, signal, why, .. } => {
            let how = match (code, signal) {
                (_, Some(s)) => format!("killed by {s}"),
                (Some(c), None) => format!("exit {c}"),
                (None, None) => "exit".into(),
            };
            (Kind::Close, format!("mock {how} ({why})"), detail)
        }
        WireEvent::HttpRequest { exchange, http_method, path, headers, .. } => {
            let (kind, what) = match body_label(e) {
                (Kind::Http, _) if http_method == "GET" => (Kind::Http, " (stream listener)".into()),
                labelled => labelled,
            };
            (kind, format!("{http_method} {path} #{exchange}{what}"), with_headers(headers, detail))
        }
        WireEvent::HttpResponse { exchange, status, headers, why, .. } => {
            let content_type = headers.get("content-type").map(|c| format!(" {c}")).unwrap_or_default();
            let (kind, what) = body_label(e);
            let kind = if *status >= 400 && kind == Kind::Http { Kind::Error } else { kind };
            (kind, format!("{status} #{exchange}{content_type}{what} [{why}]"), with_headers(headers, detail))
        }
        WireEvent::StreamWrite { exchange, bytes, why, .. } => {
            let (kind, label) = sse_label(bytes);
            (kind, format!("#{exchange} {label} [{why}]"), detail)
        }
        WireEvent::StreamEnd { exchange, how, .. } => {
            let kind = match how.as_str() {
                "clean" | "client went away" | "open when the mock stopped" => Kind::Close,
                _ => Kind::Fault,
            };
            let label = match how.as_str() {
                "clean" => format!("stream #{exchange} closed"),
                "stall" => format!("stream #{exchange} stalled (left open, nothing more sent)"),
                "reset" => format!("stream #{exchange} reset (connection cut)"),
                "mid_event" => format!("stream #{exchange} cut mid-event"),
                other => format!("stream #{exchange} ended: {other}"),
            };
            (kind, label, detail)
        }
        WireEvent::Note { text, .. } => (Kind::Life, format!("note: {}", short(text)), text.clone()),
    })
}

/// The kind of an HTTP request's or response's body and what its label says of it: the
/// message in it (its JSON as the mock parsed it, or a parse of the body the mock recorded
/// without one: response bodies), raw bytes, or nothing.
fn body_label(e: &WireEvent) -> (Kind, String) {
    let parsed = || e.bytes()?.text.as_deref().and_then(|t| serde_json::from_str(t).ok());
    match (e.json().cloned().or_else(parsed), e.bytes()) {
        (Some(v), _) => {
            let (kind, label) = message_label(&v);
            (kind, format!(": {label}"))
        }
        (None, Some(b)) => (Kind::Raw, format!(": body {}", short(&bytes_text(b)))),
        (None, None) => (Kind::Http, String::new()),
    }
}

/// The recorded bytes as text (hex when they were not UTF-8), with a note when only a
/// prefix was kept.
fn bytes_text(b: &Recorded) -> String {
    let mut s = match (&b.text, &b.hex) {
        (Some(t), _) => t.clone(),
        (None, Some(h)) => format!("hex {h}"),
        (None, None) => String::new(),
    };
    if b.truncated() {
        s.push_str(&format!("\n… ({} bytes in all)", b.len));
    }
    s
}

/// At most 80 characters of `s` on one line (control characters shown escaped).
fn short(s: &str) -> String {
    let one_line: String = s.escape_debug().collect();
    let one_line = one_line.trim_matches('"');
    match one_line.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line.to_string(),
    }
}

fn with_headers(headers: &std::collections::BTreeMap<String, String>, body: String) -> String {
    let mut s: String = headers.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
    if !body.is_empty() {
        s.push('\n');
        s.push_str(&body);
    }
    s
}

/// The kind and label of one JSON value on the wire.
fn message_label(v: &Value) -> (Kind, String) {
    let id = |v: &Value| v.get("id").map(|id| format!(" (id {id})")).unwrap_or_default();
    match v {
        Value::Array(items) => {
            let labels: Vec<String> = items.iter().map(|i| message_label(i).1).collect();
            (Kind::Request, format!("batch of {}: {}", items.len(), labels.join(", ")))
        }
        _ => match (v.get("method").and_then(Value::as_str), v.get("id"), v.get("error")) {
            (Some(m), Some(_), _) => (Kind::Request, format!("{m}{}", id(v))),
            (Some(m), None, _) => (Kind::Notification, m.to_string()),
            (None, _, Some(err)) => {
                let code = err.get("code").map(Value::to_string).unwrap_or_default();
                let message = err.get("message").and_then(Value::as_str).unwrap_or("");
                (Kind::Error, format!("error {code} {}{}", short(message), id(v)))
            }
            (None, Some(_), None) if v.get("result").is_some() => (Kind::Response, format!("result{}", id(v))),
            _ => (Kind::Raw, format!("JSON {}", short(&v.to_string()))),
        },
    }
}

/// The kind and label of bytes written to a stdio client: one or more JSON lines, or raw.
fn lines_label(b: &Recorded) -> (Kind, String) {
    let Some(text) = &b.text else { return (Kind::Raw, format!("{} raw bytes", b.len)) };
    let lines: Vec<&str> = text.split('\n').filter(|l| !l.trim().is_empty()).collect();
    let parsed: Vec<Value> = lines.iter().filter_map(|l| serde_json::from_str(l).ok()).collect();
    if lines.is_empty() {
        return (Kind::Raw, format!("{} bytes of whitespace", b.len));
    }
    if parsed.len() < lines.len() || !text.ends_with('\n') {
        let mut label = format!("raw: {}", short(text));
        if !text.ends_with('\n') {
            label.push_str(" (no final newline)");
        }
        return (Kind::Raw, label);
    }
    match parsed.as_slice() {
        [one] => message_label(one),
        many => {
            let labels: Vec<String> = many.iter().map(|m| message_label(m).1).collect();
            (message_label(&many[0]).0, format!("{} lines: {}", many.len(), labels.join(", ")))
        }
    }
}

/// The kind and label of bytes written on an HTTP stream: SSE fields, comments, or raw.
fn sse_label(b: &Recorded) -> (Kind, String) {
    let Some(text) = &b.text else { return (Kind::Raw, format!("{} raw bytes", b.len)) };
    let mut parts = Vec::new();
    let mut data = Vec::new();
    let mut sse = true;
    for line in text.split(['\n', '\r']).filter(|l| !l.is_empty()) {
        match line.split_once(':') {
            Some(("", comment)) => parts.push(format!("comment \"{}\"", short(comment.trim()))),
            Some(("data", d)) => data.push(d.trim_start().to_string()),
            Some((field @ ("event" | "id" | "retry"), value)) => parts.push(format!("{field}={}", value.trim())),
            _ => sse = false,
        }
    }
    if !sse {
        return (Kind::Raw, format!("raw bytes: {}", short(text)));
    }
    let mut kind = Kind::Sse;
    if !data.is_empty() {
        let joined = data.join("\n");
        match serde_json::from_str::<Value>(&joined) {
            Ok(v) => {
                let (k, label) = message_label(&v);
                kind = k;
                parts.push(format!("data: {label}"));
            }
            Err(_) => parts.push(format!("data: {}", short(&joined))),
        }
    }
    if parts.is_empty() {
        parts.push("empty write".into());
    }
    (kind, format!("SSE {}", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn post(t_us: u64, exchange: u64, json: Value) -> WireEvent {
        WireEvent::HttpRequest {
            t_us,
            exchange,
            http_method: "POST".into(),
            path: "/mcp".into(),
            headers: BTreeMap::new(),
            body: None,
            json: Some(json),
        }
    }

    #[test]
    fn durations_read_as_people_say_them() {
        let said: Vec<String> = [0, 999, 1_000, 4_250, 59_999, 540_206, 3_725_000].map(human_duration).into();
        assert_eq!(said, ["0 ms", "999 ms", "1.0 s", "4.2 s", "60.0 s", "9 min 0 s", "1 h 2 min"]);
    }

    #[test]
    fn a_run_gets_one_badge_and_failures_sort_first() {
        let run = |status: Status, baseline: Option<Verdict>| {
            let mut r: RunResult = serde_json::from_value(serde_json::json!({
                "scenario": "s", "path": "s.yaml", "transport": "stdio", "status": "passed"
            }))
            .expect("a run");
            (r.status, r.baseline) = (status, baseline);
            r
        };
        let expected = run(Status::Failed, Some(Verdict::ExpectedFailure));
        assert_eq!(badge(&expected), "failed · expected (baseline)");
        assert_eq!(badge(&run(Status::Passed, Some(Verdict::Pass))), "passed");
        let ranks: Vec<u8> = [
            run(Status::Failed, None),
            run(Status::NotExercised, None),
            run(Status::Warned, None),
            expected,
            run(Status::Passed, Some(Verdict::StaleEntry)),
            run(Status::Passed, None),
            run(Status::Skipped, None),
        ]
        .iter()
        .map(attention)
        .collect();
        assert_eq!(ranks, [0, 1, 2, 3, 0, 4, 5]);
    }

    #[test]
    fn http_events_keep_the_listener_order_and_the_time_between_them() {
        let get = WireEvent::HttpRequest {
            t_us: 3_000,
            exchange: 2,
            http_method: "GET".into(),
            path: "/mcp".into(),
            headers: BTreeMap::new(),
            body: None,
            json: None,
        };
        let write = WireEvent::StreamWrite {
            t_us: 4_500,
            exchange: 2,
            bytes: Recorded::of(
                b"event: message\nid: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\n",
            ),
            why: "notify".into(),
        };
        let reset = WireEvent::StreamEnd { t_us: 5_000, exchange: 2, how: "reset".into() };
        let events = events_of(&[
            WireEvent::Listening { port: 1 },
            post(1_000, 1, serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
            get,
            write,
            reset,
            post(6_000, 3, serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled"})),
        ]);
        let labels: Vec<&str> = events.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "listening on 127.0.0.1:<port>",
                "POST /mcp #1: tools/list (id 1)",
                "GET /mcp #2 (stream listener)",
                "#2 SSE event=message, id=7, data: notifications/x [notify]",
                "stream #2 reset (connection cut)",
                "POST /mcp #3: notifications/cancelled",
            ]
        );
        assert_eq!(events.iter().map(|e| e.get).collect::<Vec<_>>(), [false, false, true, true, true, false]);
        assert_eq!(events[3].dt_ms, 1.5);
        assert_eq!(events[4].kind, Kind::Fault);
        assert_eq!(events[5].kind, Kind::Notification);
        assert_eq!(events[3].direction, Direction::MockToClient);
    }

    #[test]
    fn a_script_ends_after_its_last_output_once() {
        let script =
            |output_follows| WireEvent::Script { t_us: 0, reached: 1, total: 1, finished: true, output_follows };
        let reply = WireEvent::ToClient {
            t_us: 10,
            bytes: Recorded::of(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"),
            why: "reply".into(),
        };
        let labels: Vec<String> = events_of(&[script(true), reply.clone(), script(false), script(false)])
            .into_iter()
            .map(|e| e.label)
            .collect();
        assert_eq!(labels.len(), 2, "{labels:?}");
        assert_eq!(labels[1], "script ended (1/1 steps)");
        // Killed before the mark after the output: the end is still drawn, where it was marked.
        let labels: Vec<String> = events_of(&[script(true), reply]).into_iter().map(|e| e.label).collect();
        assert_eq!(labels, ["script ended (1/1 steps)", "result (id 1) [reply]"]);
    }

    #[test]
    fn stdio_raw_bytes_and_closes_are_drawn() {
        let events = events_of(&[
            WireEvent::Started { pid: 9, stderr_shared: false, origin_unix_us: None },
            WireEvent::ToClient { t_us: 10, bytes: Recorded::of(b"starting up...\n"), why: "send".into() },
            WireEvent::ToClient { t_us: 20, bytes: Recorded::of(b"\xff\x00"), why: "send".into() },
            WireEvent::ToClient {
                t_us: 30,
                bytes: Recorded::of(
                    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"nope\"}}\n",
                ),
                why: "reply".into(),
            },
            WireEvent::StdinEof { t_us: 40, parent_exiting: false },
            WireEvent::Exit { t_us: 50, code: Some(0), signal: None, why: "stdin EOF".into() },
        ]);
        let kinds: Vec<Kind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [Kind::Life, Kind::Raw, Kind::Raw, Kind::Error, Kind::Close, Kind::Close]);
        assert_eq!(events[1].label, "raw: starting up...\\n [send]");
        assert_eq!(events[2].detail, "hex ff00");
        assert_eq!(events[3].label, "error -32601 nope (id 1) [reply]");
    }

    #[test]
    fn the_page_cannot_be_broken_out_of_and_carries_no_token() {
        let mut run: RunResult = serde_json::from_value(serde_json::json!({
            "scenario": "s</script><img src=x onerror=alert(1)>",
            "path": "scenarios/s.yaml",
            "transport": "http",
            "status": "failed",
            "failures": [{"check": "check 1 (sent)", "message": "saw Authorization: Bearer sekrit-token", "level": "must"}],
        }))
        .expect("a run");
        run.wire = vec![vec![post(1, 1, serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "</script>"}))]];
        let page = page(&[run], 5);
        assert!(!page.contains("sekrit-token"), "the token reached the page");
        let data = page.split("id=\"data\">").nth(1).and_then(|s| s.split("</script>").next()).expect("data");
        assert!(!data.contains('<') && !data.contains('>'), "raw markup in the data: {data}");
        let back: Value = serde_json::from_str(data).expect("the data is JSON");
        assert_eq!(back["runs"][0]["scenario"], "s</script><img src=x onerror=alert(1)>");
        assert_eq!(back["runs"][0]["connections"][0]["events"][0]["label"], "POST /mcp #1: </script> (id 1)");
    }
}
