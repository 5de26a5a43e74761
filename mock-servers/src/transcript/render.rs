//! Rendering a run as the readable, line-oriented, normalised text that snapshots hold.
//!
//! Normalised so it is stable across runs and machines: what varies (ports, session ids,
//! request ids, the run dir, the client's version) and secrets go through the run's
//! [`Redactor`]; pids, timestamps, durations and the manager's event times are left out
//! (checks judge timing: `within_ms`, `at_least_ms`, `backoff`); long payloads are shortened.

use super::lanes::{
    answered_only, deleted_at, failed_connects, http_lanes, listener_shown, without_drop, without_eof_racing_exit,
};
use super::{Redactor, Transcript};
use mcp_results::{ClientOutcome, ManagerEventRecord, StepStatus};
use mcp_scenario::wire::{Recorded, WireEvent};
use mcp_scenario::{Scenario, TransportName};
use serde_json::Value;
use std::fmt::Write as _;

/// Payloads longer than this are shown as a prefix and their length.
const SHOW_BYTES: usize = 240;

/// Whose transcript it is: the header names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client {
    /// The label the header shows: `bundled`, `cmd`, `host`.
    pub label: &'static str,
    /// Whether it is the bundled client.
    pub bundled: bool,
}

impl Client {
    /// An MCP host pointed at a standalone mock (`mcp-mock serve|stdio --record`): it ran
    /// no plan, so its transcript has no outcome but the wire.
    pub const HOST: Client = Client { label: "host", bundled: false };
}

/// Renders the whole run, through the run's one redactor (learnt from its wire, see
/// [`Redactor::for_run`]; its ids and exchange numbers are learnt here, in rendering order).
pub fn transcript(
    scenario: &Scenario,
    transport: TransportName,
    target: Client,
    outcome: &ClientOutcome,
    transcript: &Transcript,
    redactor: &mut Redactor,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "scenario: {} · transport: {} · target: {}", scenario.name, transport.as_str(), target.label);
    if transcript.connections().is_empty() {
        s.push_str("(the mock never started)\n");
    }
    let failed = failed_connects(scenario, outcome, transcript.connections().len());
    for connection in transcript.connections() {
        let events = connection.recorded();
        let upstream =
            if connection.upstream() > 1 { format!(" (upstream {})", connection.upstream()) } else { String::new() };
        let probe = if connection.is_probe() { " (a probe copy: no script)" } else { "" };
        let _ = writeln!(s, "── connection {}{upstream}{probe} ──", connection.number());
        // The Streamable HTTP GET listener runs beside the POSTs; its own section keeps the
        // transcript independent of which of the two the client happened to send first.
        let (main, listener) = http_lanes(events, transport);
        let deleted = deleted_at(&main);
        let main = without_eof_racing_exit(main);
        let dropped = (transport == TransportName::Stdio && failed.contains(&connection.number()))
            .then(|| without_drop(&main))
            .flatten();
        render_lane(&mut s, dropped.as_deref().unwrap_or(&main), redactor);
        let listener = listener_shown(&listener, deleted);
        if !listener.is_empty() {
            s.push_str("·· GET listener ··\n");
            render_lane(&mut s, &listener, redactor);
        }
        // An HTTP mock is always stopped by the harness; that is not the client's doing.
        if dropped.is_some() {
            s.push_str(
                "· the client dropped the connection its connect failed on (closed stdin, killed the mock, or both)\n",
            );
        } else if transport == TransportName::Stdio && !connection.mock_exited() {
            s.push_str("· mock did not exit by itself (killed by the client or the harness)\n");
        }
    }
    // The client's hop (`via:`): what the client sent and got, before the proxies changed
    // it. Runs of tiny writes on one stream (a re-chunking proxy's) are one line. Only the
    // endings the proxy made itself are shown: whether the proxy saw a stream's clean end
    // before the client closed it, or before the run stopped the proxy, is a race (the
    // mock's side shows how the server ended it).
    if !transcript.client_hop().is_empty() {
        s.push_str("── client ↔ proxy ──\n");
        let made_by_proxy =
            |e: &&WireEvent| !matches!(e, WireEvent::StreamEnd { how, .. } if !how.ends_with("by the proxy"));
        let hop: Vec<WireEvent> = transcript.client_hop().iter().filter(made_by_proxy).cloned().collect();
        let (main, listener) = http_lanes(&hop, transport);
        let merged = json_bodies(merge_writes(&main), redactor);
        render_lane(&mut s, &merged.iter().collect::<Vec<_>>(), redactor);
        let listener = answered_only(listener_shown(&listener, deleted_at(&main)));
        if !listener.is_empty() {
            s.push_str("·· GET listener ··\n");
            let merged = json_bodies(merge_writes(&listener), redactor);
            render_lane(&mut s, &merged.iter().collect::<Vec<_>>(), redactor);
        }
    }
    s.push_str("── outcome ──\n");
    if target == Client::HOST {
        s.push_str("(a host ran no plan: nothing reported but the wire)\n");
    }
    for step in &outcome.steps {
        let status = match step.status {
            StepStatus::Ok => match &step.result {
                Some(r) => format!("ok {}", shorten(&redactor.json_text(r))),
                None => "ok".into(),
            },
            StepStatus::Error => format!("error: {}", step.error.as_deref().unwrap_or("")),
            StepStatus::Unsupported => format!("unsupported: {}", step.error.as_deref().unwrap_or("")),
            StepStatus::NotRun => {
                format!("not run{}", step.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default())
            }
        };
        // No durations here: a step's time depends on the machine's load, and any class
        // boundary is straddled by some step on a loaded machine (`make soak` found them).
        // Timing claims are checks (`at_least_ms`, `within_ms`); the HTML report shows the
        // real times.
        let _ = writeln!(s, "{} {}: {}", step.step, step.what, status);
    }
    if outcome.hung {
        s.push_str("client hung until the run deadline\n");
    }
    // Only what is stable about an external client's process: how it ended, never its
    // stderr or timings.
    if let Some(p) = &outcome.process {
        let _ = writeln!(s, "── client process ──\n{}", p.end);
    }
    if !outcome.notifications.is_empty() {
        s.push_str("── notifications seen by the client ──\n");
        for (method, params) in seen_notifications(&outcome.notifications, redactor) {
            let _ = writeln!(s, "{method} {}", shorten(&params.to_string()));
        }
    }
    if !outcome.reports.is_empty() {
        s.push_str("── client reports ──\n");
        for r in &outcome.reports {
            let _ = writeln!(s, "{}", shorten(r));
        }
    }
    // The manager's events in their order, without their times: any time class is straddled
    // by some run on a loaded machine, and the reconnect schedule is the `backoff` check's,
    // judged with tolerances. A delay the plan set (`after a planned 20ms backoff`) is part of
    // an event's text: it is the plan's, not a measurement.
    if !outcome.manager_events.is_empty() {
        s.push_str("── manager ──\n");
        // A replay decision races with the reconnect the same failure started, so the
        // decisions are listed after the connection's own events.
        let decision = |e: &&ManagerEventRecord| matches!(e.event.as_str(), "replayed" | "replay_refused");
        let (decisions, lifecycle): (Vec<_>, Vec<_>) = outcome.manager_events.iter().partition(decision);
        for e in lifecycle.iter().chain(&decisions) {
            let _ = writeln!(s, "{}", shorten(&e.detail));
        }
    }
    if let Some(d) = &outcome.diagnostics {
        let _ = writeln!(
            s,
            "── client counters ──\nprotocol_violations={} late_responses={} unknown_responses={} oversize_dropped={}",
            d.protocol_violations, d.late_responses, d.unknown_responses, d.oversize_dropped
        );
    }
    redactor.text(&s)
}

/// The notifications a client reported, subscription ids in normal form, grouped by
/// subscription: first those of none, then each subscription's, by id. Order is defined per
/// subscription (2026-07-28 `basic/patterns/subscriptions.mdx`, Acknowledgment), so each
/// subscription's are in the order the client saw them. No MCP rule orders a client's
/// handling of other notifications, and a client may handle each in its own task (rmcp
/// does: the soak saw `notifications/message` and a vendor notification swap places), so
/// those are listed sorted, as the set of what the client saw.
fn seen_notifications(notifications: &[(String, Value)], redactor: &Redactor) -> Vec<(String, Value)> {
    let mut seen: Vec<(Option<String>, String, Value)> = notifications
        .iter()
        .map(|(method, params)| {
            let mut params = params.clone();
            let sid = redactor.subscription_id(&mut params).map(|id| id.to_string());
            (sid, method.clone(), params)
        })
        .collect();
    // Stable: within a subscription the key ties, so the client's order stays.
    seen.sort_by_cached_key(|(sid, method, params)| {
        (sid.clone(), sid.is_none().then(|| (method.clone(), params.to_string())))
    });
    seen.into_iter().map(|(_, method, params)| (method, params)).collect()
}

/// Renders one lane. A stream the client abandoned is noticed by the mock whenever the
/// socket closes, which races with the client's next request, so those endings are listed
/// after the lane, in exchange order, rather than where they happened to be recorded.
fn render_lane(s: &mut String, events: &[&WireEvent], redactor: &mut Redactor) {
    let abandoned = |e: &WireEvent| matches!(e, WireEvent::StreamEnd { how, .. } if *how == "client went away");
    for e in events.iter().filter(|e| !abandoned(e)) {
        if let Some(line) = event_line(e, redactor) {
            s.push_str(&line);
            s.push('\n');
        }
    }
    let mut later: Vec<&&WireEvent> = events.iter().filter(|e| abandoned(e)).collect();
    later.sort_by_key(|e| e.exchange());
    for e in later {
        if let Some(line) = event_line(e, redactor) {
            s.push_str(&line);
            s.push('\n');
        }
    }
}

/// Writes shorter than this, in a row on one stream, are shown as one line.
const TINY_WRITE: usize = 16;

/// Consecutive tiny writes on one stream (a re-chunking proxy's) as one write, its `why`
/// saying how many there were; every other write keeps its own line, so a transcript
/// still shows how a proxy grouped the server's events.
fn merge_writes(events: &[&WireEvent]) -> Vec<WireEvent> {
    let mut out: Vec<(WireEvent, usize, Vec<u8>)> = Vec::new();
    for e in events {
        if let WireEvent::StreamWrite { exchange, bytes, .. } = e
            && bytes.len < TINY_WRITE
            && let Some((WireEvent::StreamWrite { exchange: last, .. }, n, acc)) = out.last_mut()
            && last == exchange
            && acc.len() / *n < TINY_WRITE
        {
            *n += 1;
            acc.extend_from_slice(&bytes.kept());
            continue;
        }
        let acc = match e {
            WireEvent::StreamWrite { bytes, .. } => bytes.kept(),
            _ => Vec::new(),
        };
        out.push(((*e).clone(), 1, acc));
    }
    out.into_iter()
        .map(|(e, n, acc)| match e {
            WireEvent::StreamWrite { t_us, exchange, why, .. } if n > 1 => WireEvent::StreamWrite {
                t_us,
                exchange,
                bytes: Recorded::of(&acc),
                why: format!("{why}, {n} writes of < {TINY_WRITE} bytes"),
            },
            e => e,
        })
        .collect()
}

/// A write that is one whole JSON body (an `application/json` answer as the proxy passed
/// it on) normalised like the mock's JSON bodies, so its request id reads the same on both
/// hops.
fn json_bodies(events: Vec<WireEvent>, redactor: &Redactor) -> Vec<WireEvent> {
    events
        .into_iter()
        .map(|e| match e {
            WireEvent::StreamWrite { t_us, exchange, bytes, why } => {
                let json = bytes.whole_text().and_then(|t| serde_json::from_str::<Value>(t).ok());
                let bytes = match json.filter(|v| v.is_object() || v.is_array()) {
                    Some(v) => Recorded::of(redactor.json_text(&v).as_bytes()),
                    None => bytes,
                };
                WireEvent::StreamWrite { t_us, exchange, bytes, why }
            }
            e => e,
        })
        .collect()
}

/// The request headers a transcript shows: those that matter, minus the mock's own host,
/// each value through the secret policy's header rule. A `=?base64?…?=` value (2026-07-28)
/// is followed by its decoded text, as a JSON string (redacted like any text).
fn shown_headers(headers: &std::collections::BTreeMap<String, String>, redactor: &Redactor) -> String {
    let shown: Vec<String> = headers
        .iter()
        .filter(|(k, v)| !(k.as_str() == "host" && v.starts_with("127.0.0.1:")))
        .map(|(k, v)| match v.starts_with("=?base64?").then(|| crate::stateless::decode(v)) {
            Some(Some(text)) => {
                // A secret in the decoded text is in the encoded value too.
                let decoded = redactor.header(k, &text);
                let shown = if decoded == text { v.as_str() } else { "=?base64?<redacted>?=" };
                format!("{k}: {shown} (decoded {})", Value::from(decoded))
            }
            Some(None) => format!("{k}: {v} (not valid base64 UTF-8)"),
            None => format!("{k}: {}", redactor.header(k, v)),
        })
        .collect();
    if shown.is_empty() { String::new() } else { format!(" [{}]", shown.join("; ")) }
}

/// HTTP events as transcript lines; exchanges renumbered by first appearance.
fn http_line(e: &WireEvent, redactor: &mut Redactor) -> Option<String> {
    Some(match e {
        WireEvent::HttpRequest { exchange, http_method, path, headers, body, json, .. } => {
            let x = redactor.exchange(*exchange);
            let mut line = format!("→ #{x} {http_method} {path}{}", shown_headers(headers, redactor));
            match (json, body) {
                (Some(v), _) => {
                    redactor.learn_request_ids(v);
                    let _ = write!(line, "\n    {}", shorten(&redactor.json_text(v)));
                }
                (None, Some(b)) => {
                    let _ = write!(line, "\n    (not JSON) {}", show(b, redactor));
                }
                (None, None) => {}
            }
            line
        }
        WireEvent::HttpResponse { exchange, status, headers, body, why, .. } => {
            let x = redactor.exchange(*exchange);
            let hs: Vec<String> = headers.iter().map(|(k, v)| format!("{k}: {}", redactor.header(k, v))).collect();
            let hs = if hs.is_empty() { String::new() } else { format!(" [{}]", hs.join("; ")) };
            let mut line = format!("← #{x} {status}{hs}  ({why})");
            if let Some(b) = body {
                let shown = match b.whole_text().map(serde_json::from_str::<Value>) {
                    Some(Ok(v)) => shorten(&redactor.json_text(&v)),
                    _ => show(b, redactor),
                };
                let _ = write!(line, "\n    {shown}");
            }
            line
        }
        WireEvent::StreamWrite { exchange, bytes, why, .. } => {
            let x = redactor.exchange(*exchange);
            let shown = match bytes.whole_text() {
                Some(text) => sse_text(text, redactor),
                None => show(bytes, redactor),
            };
            format!("⇐ #{x} {shown}  ({why})")
        }
        WireEvent::StreamEnd { exchange, how, .. } => {
            format!("· #{} stream ended: {how}", redactor.exchange(*exchange))
        }
        WireEvent::Note { text, .. } => format!("· note: {text}"),
        _ => return None,
    })
}

/// SSE bytes on one line: `data:` lines holding JSON are normalised, everything escaped.
fn sse_text(text: &str, redactor: &Redactor) -> String {
    let mut out = String::new();
    for piece in text.split_inclusive(['\n', '\r']) {
        let body = piece.trim_end_matches(['\n', '\r']);
        let ending = &piece[body.len()..];
        match body.strip_prefix("data: ").map(serde_json::from_str::<Value>) {
            Some(Ok(v)) if v.is_object() => {
                out.push_str("data: ");
                out.push_str(&redactor.json_text(&v));
                out.push_str(&escape(ending.as_bytes()));
            }
            _ => out.push_str(&escape(redactor.text(piece).as_bytes())),
        }
    }
    shorten(&out)
}

fn event_line(e: &WireEvent, redactor: &mut Redactor) -> Option<String> {
    Some(match e {
        WireEvent::Started { .. }
        | WireEvent::Script { .. }
        | WireEvent::Labelled { .. }
        | WireEvent::Listening { .. } => return None,
        WireEvent::HttpRequest { .. }
        | WireEvent::HttpResponse { .. }
        | WireEvent::StreamWrite { .. }
        | WireEvent::StreamEnd { .. }
        | WireEvent::Note { .. } => return http_line(e, redactor),
        WireEvent::FromClient { bytes, json, terminated, .. } => {
            let body = match json {
                Some(v) => {
                    redactor.learn_request_ids(v);
                    shorten(&redactor.json_text(v))
                }
                None => format!("(not JSON) {}", show(bytes, redactor)),
            };
            let cr = if bytes.text.as_deref().is_some_and(|t| t.ends_with('\r')) { " ⟨CRLF⟩" } else { "" };
            let unterminated = if *terminated { "" } else { " ⟨no newline⟩" };
            format!("→ {body}{cr}{unterminated}")
        }
        WireEvent::ToClient { bytes, why, .. } => {
            let shown = match bytes.whole_text() {
                Some(text) => server_text(text, redactor),
                None => show(bytes, redactor),
            };
            format!("← {shown}  [{why}]")
        }
        WireEvent::Stderr { bytes, .. } => format!("⇠ stderr {}", show(bytes, redactor)),
        WireEvent::StdinEof { parent_exiting: false, .. } => "· stdin closed by the client".into(),
        WireEvent::StdinEof { parent_exiting: true, .. } => "· stdin ended as the client's process exited".into(),
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

/// Server bytes: each complete JSON line is normalised; everything else shown escaped.
fn server_text(text: &str, redactor: &Redactor) -> String {
    let mut parts = Vec::new();
    for piece in text.split_inclusive('\n') {
        let body = piece.trim_end_matches('\n').trim_end_matches('\r');
        match serde_json::from_str::<Value>(body) {
            Ok(v) if v.is_object() && piece.ends_with('\n') => {
                let ending = if piece.ends_with("\r\n") { "\\r\\n" } else { "\\n" };
                parts.push(format!("{}{ending}", shorten(&redactor.json_text(&v))));
            }
            _ => parts.push(shorten(&escape(redactor.text(piece).as_bytes()))),
        }
    }
    parts.join(" ")
}

/// Shows recorded bytes: escaped text or hex, secrets redacted, shortened, with the length
/// when cut.
fn show(bytes: &Recorded, redactor: &Redactor) -> String {
    // Secrets go before anything is cut: a secret cut in two has no shape left.
    let body = match (&bytes.text, &bytes.hex) {
        (Some(t), _) => escape(redactor.text(t).as_bytes()),
        (None, Some(_)) => redactor.text(&escape(&bytes.kept())),
        (None, None) => String::new(),
    };
    let shown = shorten(&body);
    if bytes.truncated() || shown.len() < body.len() { format!("{shown} ({} bytes)", bytes.len) } else { shown }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_invalid_utf8_and_controls() {
        assert_eq!(escape(b"a\xffb\r\n"), "a\\xffb\\r\\n");
        assert_eq!(escape("\u{feff}{}".as_bytes()), "\\u{feff}{}");
    }

    #[test]
    fn a_secret_is_redacted_before_a_long_line_is_cut() {
        // The cut falls inside the value: cut first, the member would have no shape left.
        let text = format!("{}{{\"apiKey\":\"SECRETKEY42\"}}", "x".repeat(SHOW_BYTES - 16));
        let shown = show(&Recorded::of(text.as_bytes()), &Redactor::default());
        assert!(!shown.contains("SECRE") && shown.contains("\"apiKey\":\"<reda"), "{shown}");
    }

    #[test]
    fn seen_notifications_keep_order_within_a_subscription_only_and_sort_the_rest() {
        use mcp_scenario::payload::META_SUBSCRIPTION_ID;
        use serde_json::json;
        let mut r = Redactor::default();
        r.learn_request_ids(&json!({"id": 8, "method": "subscriptions/listen"}));
        r.learn_request_ids(&json!({"id": 9, "method": "subscriptions/listen"}));
        let on = |sid: u64, n: u64| (format!("m{n}"), json!({"_meta": {META_SUBSCRIPTION_ID: sid}}));
        let plain = |n: u64| (format!("m{n}"), json!({}));
        let seen = seen_notifications(&[on(9, 1), plain(7), on(8, 2), plain(3), on(9, 4), on(8, 5)], &r);
        let order: Vec<String> = seen.iter().map(|(m, p)| format!("{m}{}", p["_meta"][META_SUBSCRIPTION_ID])).collect();
        assert_eq!(order, ["m3null", "m7null", "m21", "m51", "m12", "m42"]);
    }
}
