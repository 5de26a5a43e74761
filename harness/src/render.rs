//! Rendering a run as the readable, line-oriented, normalised text that snapshots hold.
//!
//! Normalised so it is stable across runs and machines: client request ids are renumbered
//! by first appearance, the client's own version is masked, temp paths and pids removed,
//! timestamps and durations left out (checks judge timing), long payloads shortened, and
//! Authorization values / bearer tokens redacted.

use crate::target::Target;
use mcp_scenario::results::{ClientOutcome, StepStatus};
use mcp_scenario::wire::{Recorded, WireEvent};
use mcp_scenario::{ClientStep, Scenario, TransportName};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// Payloads longer than this are shown as a prefix and their length.
const SHOW_BYTES: usize = 240;

/// A short description of a plan step.
pub fn describe_step(step: &ClientStep) -> String {
    match step {
        ClientStep::Connect { .. } => "connect".into(),
        ClientStep::Request { method, .. } => format!("request {method}"),
        ClientStep::Await { request } => format!("await {request}"),
        ClientStep::Cancel { request } => format!("cancel {request}"),
        ClientStep::Notify { method, .. } => format!("notify {method}"),
        ClientStep::Wait { ms } => format!("wait {ms}ms"),
        ClientStep::WaitClosed { .. } => "wait_closed".into(),
        ClientStep::WaitNotification { method, .. } => format!("wait_notification {method}"),
        ClientStep::Close => "close".into(),
    }
}

/// Renumbers request ids by first appearance, keeping each id's JSON type.
#[derive(Default)]
struct Ids {
    map: HashMap<String, Value>,
    numbers: i64,
    strings: i64,
    /// HTTP exchange numbers, renumbered by first appearance in the transcript.
    exchanges: HashMap<u64, usize>,
}

impl Ids {
    /// The normal form of an HTTP exchange number.
    fn exchange(&mut self, x: u64) -> usize {
        let next = self.exchanges.len() + 1;
        *self.exchanges.entry(x).or_insert(next)
    }

    /// Learns a client request id (first appearance wins) and returns its normal form.
    fn learn(&mut self, id: &Value) -> Value {
        let key = id.to_string();
        if let Some(v) = self.map.get(&key) {
            return v.clone();
        }
        let v = match id {
            Value::Number(_) => {
                self.numbers += 1;
                Value::from(self.numbers)
            }
            Value::String(_) => {
                self.strings += 1;
                Value::from(format!("id-{}", self.strings))
            }
            other => other.clone(),
        };
        self.map.insert(key, v.clone());
        v
    }

    fn get(&self, id: &Value) -> Value {
        self.map.get(&id.to_string()).cloned().unwrap_or_else(|| id.clone())
    }
}

/// Renders the whole run.
pub fn transcript(
    scenario: &Scenario,
    transport: TransportName,
    target: &Target,
    outcome: &ClientOutcome,
    connections: &[Vec<WireEvent>],
    run_dir: &Path,
) -> String {
    let mut ids = Ids::default();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "scenario: {} · transport: {} · target: {}",
        scenario.name,
        transport.as_str(),
        target_label(target)
    );
    if connections.is_empty() {
        s.push_str("(the mock never started)\n");
    }
    for (n, events) in connections.iter().enumerate() {
        let _ = writeln!(s, "── connection {} ──", n + 1);
        // The Streamable HTTP GET listener runs beside the POSTs; its own section keeps the
        // transcript independent of which of the two the client happened to send first.
        let (main, listener) = http_lanes(events, transport);
        render_lane(&mut s, &main, &mut ids);
        if !listener.is_empty() {
            s.push_str("·· GET listener ··\n");
            render_lane(&mut s, &listener, &mut ids);
        }
        // An HTTP mock is always stopped by the harness; that is not the client's doing.
        if transport == TransportName::Stdio && !events.iter().any(|e| matches!(e, WireEvent::Exit { .. })) {
            s.push_str("· mock did not exit by itself (killed by the client or the harness)\n");
        }
    }
    s.push_str("── outcome ──\n");
    for step in &outcome.steps {
        let status = match step.status {
            StepStatus::Ok => match &step.result {
                Some(r) => format!("ok {}", shorten(&normalise_json(r, &mut ids).to_string())),
                None => "ok".into(),
            },
            StepStatus::Error => format!("error: {}", step.error.as_deref().unwrap_or("")),
            StepStatus::Unsupported => format!("unsupported: {}", step.error.as_deref().unwrap_or("")),
            StepStatus::NotRun => {
                format!("not run{}", step.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default())
            }
        };
        // Durations go in coarse buckets, for the bundled client only: a third-party
        // client's step times include its runtime's start-up, which varies too much.
        let took = match (target.is_bundled(), step.status) {
            (true, StepStatus::Ok | StepStatus::Error) => format!(" [{}]", duration_bucket(step.elapsed_ms)),
            _ => String::new(),
        };
        let _ = writeln!(s, "{} {}: {}{took}", step.step, step.what, status);
    }
    if outcome.hung {
        s.push_str("client hung until the run deadline\n");
    }
    s.push_str(&crate::external::render_process(outcome));
    if !outcome.notifications.is_empty() {
        s.push_str("── notifications seen by the client ──\n");
        for (method, params) in &outcome.notifications {
            let _ = writeln!(s, "{method} {}", shorten(&params.to_string()));
        }
    }
    if !outcome.reports.is_empty() {
        s.push_str("── client reports ──\n");
        for r in &outcome.reports {
            let _ = writeln!(s, "{}", shorten(r));
        }
    }
    if let Some(d) = &outcome.diagnostics {
        let _ = writeln!(
            s,
            "── client counters ──\nprotocol_violations={} late_responses={} unknown_responses={} oversize_dropped={}",
            d.protocol_violations, d.late_responses, d.unknown_responses, d.oversize_dropped
        );
    }
    let s = normalise_http(&s, connections);
    redact(&s.replace(&run_dir.display().to_string(), "<run-dir>"))
}

/// Renders one lane. A stream the client abandoned is noticed by the mock whenever the
/// socket closes, which races with the client's next request, so those endings are listed
/// after the lane, in exchange order, rather than where they happened to be recorded.
fn render_lane(s: &mut String, events: &[&WireEvent], ids: &mut Ids) {
    let abandoned = |e: &WireEvent| matches!(e, WireEvent::StreamEnd { how, .. } if *how == "client went away");
    for e in events.iter().filter(|e| !abandoned(e)) {
        if let Some(line) = event_line(e, ids) {
            s.push_str(&line);
            s.push('\n');
        }
    }
    let mut later: Vec<&&WireEvent> = events.iter().filter(|e| abandoned(e)).collect();
    later.sort_by_key(|e| exchange_of(e));
    for e in later {
        if let Some(line) = event_line(e, ids) {
            s.push_str(&line);
            s.push('\n');
        }
    }
}

/// Splits an HTTP connection's events into the main lane and the GET listener lane
/// (Streamable HTTP only; legacy SSE's GET stream is causally ordered with its POSTs).
fn http_lanes(events: &[WireEvent], transport: TransportName) -> (Vec<&WireEvent>, Vec<&WireEvent>) {
    if transport != TransportName::Http {
        return (events.iter().collect(), Vec::new());
    }
    let gets: std::collections::HashSet<u64> = events
        .iter()
        .filter_map(|e| match e {
            WireEvent::HttpRequest { exchange, http_method, .. } if http_method == "GET" => Some(*exchange),
            _ => None,
        })
        .collect();
    events.iter().partition(|e| exchange_of(e).is_none_or(|x| !gets.contains(&x)))
}

fn exchange_of(e: &WireEvent) -> Option<u64> {
    match e {
        WireEvent::HttpRequest { exchange, .. }
        | WireEvent::HttpResponse { exchange, .. }
        | WireEvent::StreamWrite { exchange, .. }
        | WireEvent::StreamEnd { exchange, .. } => Some(*exchange),
        _ => None,
    }
}

/// Replaces the mock's port and the session ids it issued (by first appearance) with
/// stable placeholders.
fn normalise_http(s: &str, connections: &[Vec<WireEvent>]) -> String {
    let mut out = s.to_string();
    let mut sessions: Vec<String> = Vec::new();
    for e in connections.iter().flatten() {
        match e {
            WireEvent::Listening { port } => {
                for host in ["127.0.0.1", "localhost"] {
                    out = out.replace(&format!("{host}:{port}"), &format!("{host}:<port>"));
                }
            }
            WireEvent::HttpResponse { headers, .. } => {
                if let Some(id) = headers.get("mcp-session-id")
                    && !id.is_empty()
                    && !sessions.contains(id)
                {
                    sessions.push(id.clone());
                }
            }
            _ => {}
        }
    }
    for (i, id) in sessions.iter().enumerate() {
        out = out.replace(id.as_str(), &format!("<session-{}>", i + 1));
    }
    out
}

/// The request headers a transcript shows: those that matter, minus the mock's own host.
fn shown_headers(headers: &std::collections::BTreeMap<String, String>) -> String {
    let shown: Vec<String> = headers
        .iter()
        .filter(|(k, v)| !(k.as_str() == "host" && v.starts_with("127.0.0.1:")))
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    if shown.is_empty() { String::new() } else { format!(" [{}]", shown.join("; ")) }
}

/// HTTP events as transcript lines; exchanges renumbered by first appearance.
fn http_line(e: &WireEvent, ids: &mut Ids) -> Option<String> {
    Some(match e {
        WireEvent::HttpRequest { exchange, http_method, path, headers, body, json, .. } => {
            let x = ids.exchange(*exchange);
            let mut line = format!("→ #{x} {http_method} {path}{}", shown_headers(headers));
            match (json, body) {
                (Some(v), _) => {
                    let _ = write!(line, "\n    {}", shorten(&normalise_json(&client_ids(v, ids), ids).to_string()));
                }
                (None, Some(b)) => {
                    let _ = write!(line, "\n    (not JSON) {}", show(b));
                }
                (None, None) => {}
            }
            line
        }
        WireEvent::HttpResponse { exchange, status, headers, body, why, .. } => {
            let x = ids.exchange(*exchange);
            let hs: Vec<String> = headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            let hs = if hs.is_empty() { String::new() } else { format!(" [{}]", hs.join("; ")) };
            let mut line = format!("← #{x} {status}{hs}  ({why})");
            if let Some(b) = body {
                let shown = match b.text.as_deref().filter(|_| !b.truncated()).map(serde_json::from_str::<Value>) {
                    Some(Ok(v)) => shorten(&normalise_json(&v, ids).to_string()),
                    _ => show(b),
                };
                let _ = write!(line, "\n    {shown}");
            }
            line
        }
        WireEvent::StreamWrite { exchange, bytes, why, .. } => {
            let x = ids.exchange(*exchange);
            let shown = match bytes.text.as_deref().filter(|_| !bytes.truncated()) {
                Some(text) => sse_text(text, ids),
                None => show(bytes),
            };
            format!("⇐ #{x} {shown}  ({why})")
        }
        WireEvent::StreamEnd { exchange, how, .. } => format!("· #{} stream ended: {how}", ids.exchange(*exchange)),
        WireEvent::Note { text, .. } => format!("· note: {text}"),
        _ => return None,
    })
}

/// SSE bytes on one line: `data:` lines holding JSON are normalised, everything escaped.
fn sse_text(text: &str, ids: &mut Ids) -> String {
    let mut out = String::new();
    for piece in text.split_inclusive(['\n', '\r']) {
        let body = piece.trim_end_matches(['\n', '\r']);
        let ending = &piece[body.len()..];
        match body.strip_prefix("data: ").map(serde_json::from_str::<Value>) {
            Some(Ok(v)) if v.is_object() => {
                out.push_str("data: ");
                out.push_str(&normalise_json(&v, ids).to_string());
                out.push_str(&escape(ending.as_bytes()));
            }
            _ => out.push_str(&escape(piece.as_bytes())),
        }
    }
    shorten(&out)
}

/// A coarse duration class, so snapshots record "waited about a second" without flaking.
/// The boundaries sit away from the protocol's own timings (timeouts of tens to hundreds
/// of ms, 1 s grace periods, 2 s close sequences).
pub fn duration_bucket(ms: u64) -> &'static str {
    match ms {
        0..500 => "<0.5s",
        500..1500 => "~1s",
        1500..5000 => "~2-4s",
        _ => "≥5s",
    }
}

fn target_label(target: &Target) -> String {
    match target {
        Target::Bundled(_) => "bundled".into(),
        Target::Cmd(_) => "cmd".into(),
    }
}

fn event_line(e: &WireEvent, ids: &mut Ids) -> Option<String> {
    Some(match e {
        WireEvent::Started { .. }
        | WireEvent::Script { .. }
        | WireEvent::Labelled { .. }
        | WireEvent::Listening { .. } => return None,
        WireEvent::HttpRequest { .. }
        | WireEvent::HttpResponse { .. }
        | WireEvent::StreamWrite { .. }
        | WireEvent::StreamEnd { .. }
        | WireEvent::Note { .. } => return http_line(e, ids),
        WireEvent::FromClient { bytes, json, terminated, .. } => {
            let body = match json {
                Some(v) => shorten(&normalise_json(&client_ids(v, ids), ids).to_string()),
                None => format!("(not JSON) {}", show(bytes)),
            };
            let cr = if bytes.text.as_deref().is_some_and(|t| t.ends_with('\r')) { " ⟨CRLF⟩" } else { "" };
            let unterminated = if *terminated { "" } else { " ⟨no newline⟩" };
            format!("→ {body}{cr}{unterminated}")
        }
        WireEvent::ToClient { bytes, why, .. } => {
            let shown = match bytes.text.as_deref().filter(|_| !bytes.truncated()) {
                Some(text) => server_text(text, ids),
                None => show(bytes),
            };
            format!("← {shown}  [{why}]")
        }
        WireEvent::Stderr { bytes, .. } => format!("⇠ stderr {}", show(bytes)),
        WireEvent::StdinEof { .. } => "· stdin closed by the client".into(),
        WireEvent::Signal { name, ignored, .. } => {
            format!("· {name} received{}", if *ignored { " (ignored)" } else { "" })
        }
        WireEvent::Exit { code, signal, why, .. } => match (code, signal) {
            (_, Some(sig)) => format!("· mock killed itself with {sig} ({why})"),
            (Some(c), None) => format!("· mock exited {c} ({why})"),
            (None, None) => format!("· mock exited ({why})"),
        },
    })
}

/// Learns the ids of the client's requests (a message with both method and id).
fn client_ids(v: &Value, ids: &mut Ids) -> Value {
    if let (Some(_), Some(id)) = (v.get("method"), v.get("id")) {
        ids.learn(id);
    }
    if let Value::Array(items) = v {
        for item in items {
            client_ids(item, ids);
        }
    }
    v.clone()
}

/// Server bytes: each complete JSON line is normalised; everything else shown escaped.
fn server_text(text: &str, ids: &mut Ids) -> String {
    let mut parts = Vec::new();
    for piece in text.split_inclusive('\n') {
        let body = piece.trim_end_matches('\n').trim_end_matches('\r');
        match serde_json::from_str::<Value>(body) {
            Ok(v) if v.is_object() && piece.ends_with('\n') => {
                let ending = if piece.ends_with("\r\n") { "\\r\\n" } else { "\\n" };
                parts.push(format!("{}{ending}", shorten(&normalise_json(&v, ids).to_string())));
            }
            _ => parts.push(shorten(&escape(piece.as_bytes()))),
        }
    }
    parts.join(" ")
}

/// Normalises ids in responses (and `requestId` in cancellations) and masks client versions.
fn normalise_json(v: &Value, ids: &mut Ids) -> Value {
    let mut v = v.clone();
    if let Some(obj) = v.as_object_mut() {
        let is_response = !obj.contains_key("method");
        let is_client_request = obj.contains_key("method");
        if let Some(id) = obj.get("id").cloned()
            && (is_response || is_client_request)
        {
            obj.insert("id".into(), ids.get(&id));
        }
        if let Some(rid) = obj.get("params").and_then(|p| p.get("requestId")).cloned()
            && let Some(p) = obj.get_mut("params").and_then(Value::as_object_mut)
        {
            p.insert("requestId".into(), ids.get(&rid));
        }
        if let Some(version) =
            obj.get_mut("params").and_then(|p| p.get_mut("clientInfo")).and_then(|c| c.get_mut("version"))
        {
            *version = Value::from("<version>");
        }
    }
    v
}

/// Shows recorded bytes: escaped text or hex, shortened, with the length when cut.
fn show(bytes: &Recorded) -> String {
    let body = match (&bytes.text, &bytes.hex) {
        (Some(t), _) => escape(t.as_bytes()),
        (None, Some(h)) => escape(&hex_decode(h)),
        (None, None) => String::new(),
    };
    let shown = shorten(&body);
    if bytes.truncated() || shown.len() < body.len() { format!("{shown} ({} bytes)", bytes.len) } else { shown }
}

fn hex_decode(h: &str) -> Vec<u8> {
    (0..h.len() / 2).filter_map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok()).collect()
}

/// Escapes control characters and invalid UTF-8 so every byte is visible on one line.
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{feff}' => out.push_str("\\u{feff}"),
                c if c.is_control() => {
                    let _ = write!(out, "\\u{{{:x}}}", c as u32);
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

fn shorten(s: &str) -> String {
    if s.len() <= SHOW_BYTES {
        return s.to_string();
    }
    let mut end = SHOW_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Replaces bearer tokens and Authorization values with `<redacted>`.
pub fn redact(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = find_secret(rest) {
        let (head, tail) = rest.split_at(pos.0);
        out.push_str(head);
        out.push_str(&tail[..pos.1]);
        out.push_str("<redacted>");
        let value_len = tail[pos.1..]
            .find(|c: char| c.is_whitespace() || c == '"' || c == ',' || c == '\\')
            .unwrap_or(tail.len() - pos.1);
        rest = &tail[pos.1 + value_len..];
    }
    out.push_str(rest);
    out
}

/// Finds `Bearer <token>` or `access_token": "<token>`: returns (start, prefix length).
fn find_secret(s: &str) -> Option<(usize, usize)> {
    let candidates = [("Bearer ", 7), ("bearer ", 7), ("access_token\":\"", 15), ("refresh_token\":\"", 16)];
    candidates
        .iter()
        .filter_map(|(pat, len)| s.find(pat).map(|i| (i, *len)))
        .filter(|(i, len)| s[i + len..].chars().next().is_some_and(|c| c != '<'))
        .min_by_key(|(i, _)| *i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_invalid_utf8_and_controls() {
        assert_eq!(escape(b"a\xffb\r\n"), "a\\xffb\\r\\n");
        assert_eq!(escape("\u{feff}{}".as_bytes()), "\\u{feff}{}");
    }

    #[test]
    fn redacts_bearer_tokens() {
        assert_eq!(redact("authorization: Bearer abc.def-123 next"), "authorization: Bearer <redacted> next");
        assert_eq!(redact("{\"access_token\":\"s3cr3t\"}"), "{\"access_token\":\"<redacted>\"}");
        assert_eq!(redact("Bearer <redacted>"), "Bearer <redacted>");
    }

    #[test]
    fn ids_renumber_by_first_appearance_keeping_type() {
        let mut ids = Ids::default();
        assert_eq!(ids.learn(&Value::from(7)), Value::from(1));
        assert_eq!(ids.learn(&Value::from("x")), Value::from("id-1"));
        assert_eq!(ids.learn(&Value::from(7)), Value::from(1));
        assert_eq!(ids.get(&Value::from(99)), Value::from(99));
    }
}
