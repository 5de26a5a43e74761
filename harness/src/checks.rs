//! Evaluating a run: the scenario's checks plus the always-on rules (DESIGN "Checks").
//! Only failures are returned; an empty list means the run passed its checks.

use crate::scope::{Scope, TargetKind};
use crate::transcript::Transcript;
use mcp_scenario::Scenario;
use mcp_scenario::ServerStep;
use mcp_scenario::checks::{Check, HttpCheck};
use mcp_scenario::results::{CheckResult, ClientOutcome, ProcessEnd, StepStatus};
use mcp_scenario::wire::WireEvent;
use serde_json::Value;

/// What a run's checks are evaluated against.
pub struct Run<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// What the run is judged as.
    pub scope: Scope,
    /// What the client reported.
    pub outcome: &'a ClientOutcome,
    /// What the mock recorded.
    pub transcript: &'a Transcript,
}

/// The client's messages on one connection, in wire order.
fn client_messages(events: &[WireEvent]) -> impl Iterator<Item = &Value> {
    events.iter().filter_map(|e| match e {
        WireEvent::FromClient { json: Some(v), .. } => Some(v),
        _ => None,
    })
}

fn method_of(v: &Value) -> Option<&str> {
    v.get("method").and_then(Value::as_str)
}

/// The id a mock label stands for on a connection (a client request the script expected
/// with `as:`, or a server-to-client request).
fn labelled_id<'a>(connections: &'a [Vec<WireEvent>], label: &str) -> Option<&'a Value> {
    connections.iter().flatten().find_map(|e| match e {
        WireEvent::Labelled { label: l, id, .. } if l == label => Some(id),
        _ => None,
    })
}

/// Recursive subset match: every member of `want` is in `got` with a matching value.
pub fn subset(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w.iter().all(|(k, wv)| g.get(k).is_some_and(|gv| subset(wv, gv))),
        _ => want == got,
    }
}

/// Evaluates every check and always-on rule; returns the failures.
pub fn evaluate(run: &Run<'_>) -> Vec<CheckResult> {
    let (scenario, outcome) = (run.scenario, run.outcome);
    let target = &run.scope.target;
    let mut failures = Vec::new();
    let viewed: Vec<Vec<WireEvent>> = run.transcript.connections().iter().map(|c| c.events().to_vec()).collect();
    let connections = viewed.as_slice();
    for (i, check) in scenario.checks.iter().enumerate() {
        if let Err(message) = evaluate_one(check, target, outcome, connections) {
            failures.push(CheckResult { check: format!("check {} ({})", i + 1, check_name(check)), message });
        }
    }
    always_on(scenario, target, outcome, connections, &mut failures);
    failures.extend(process_failures(outcome));
    failures
}

/// Failures that come from the client process itself rather than from a scenario check: a
/// crash, a signal death, a non-zero exit, flooding. A hang is judged by the always-on
/// deadline rule.
pub fn process_failures(outcome: &ClientOutcome) -> Vec<CheckResult> {
    let Some(report) = &outcome.process else { return Vec::new() };
    let failed = match &report.end {
        ProcessEnd::Exited { code: 0 } | ProcessEnd::KilledAtDeadline | ProcessEnd::NotStarted { .. } => false,
        ProcessEnd::Exited { .. } | ProcessEnd::Signalled { .. } | ProcessEnd::KilledForFlooding { .. } => true,
    };
    if !failed {
        return Vec::new();
    }
    let mut message = report.end.to_string();
    if let Some(last) = report.stderr_tail.lines().rev().find(|l| !l.trim().is_empty()) {
        message.push_str(&format!("; last stderr line: {}", last.chars().take(300).collect::<String>()));
    }
    vec![CheckResult { check: "always: client process ends cleanly".into(), message }]
}

fn check_name(check: &Check) -> &'static str {
    match check {
        Check::Outcome(_) => "outcome",
        Check::Sent(_) => "sent",
        Check::NotSent(_) => "not_sent",
        Check::SentBefore(_) => "sent_before",
        Check::Cancelled(_) => "cancelled",
        Check::Answered(_) => "answered",
        Check::Signal(_) => "signal",
        Check::StdinClosed(_) => "stdin_closed",
        Check::Diagnostics(_) => "diagnostics",
        Check::Notified(_) => "notified",
        Check::Http(_) => "http",
    }
}

fn evaluate_one(
    check: &Check,
    target: &TargetKind,
    outcome: &ClientOutcome,
    connections: &[Vec<WireEvent>],
) -> Result<(), String> {
    let all = || connections.iter().flat_map(|c| client_messages(c));
    match check {
        Check::Outcome(o) => {
            let step = outcome.steps.get(o.step - 1).ok_or_else(|| format!("step {} has no outcome", o.step))?;
            if matches!(step.status, StepStatus::NotRun | StepStatus::Unsupported) {
                return Err(format!(
                    "step {} ({}) did not run: {}",
                    o.step,
                    step.what,
                    step.error.as_deref().unwrap_or("")
                ));
            }
            let want_ok = o.ok.unwrap_or(o.error.is_none());
            let is_ok = step.status == StepStatus::Ok;
            if want_ok != is_ok {
                return Err(match &step.error {
                    Some(e) => format!("step {} ({}) failed: {e}", o.step, step.what),
                    None => format!("step {} ({}) succeeded, expected an error", o.step, step.what),
                });
            }
            if let (Some(prefix), true) = (&o.error, target.is_bundled()) {
                let got = step.error.as_deref().unwrap_or("");
                if !got.starts_with(prefix.as_str()) {
                    return Err(format!("step {} error is {got:?}, expected it to start with {prefix:?}", o.step));
                }
            }
            if let Some(want) = &o.result {
                let got = step.result.clone().unwrap_or(Value::Null);
                if !subset(want, &got) {
                    return Err(format!("step {} result {got} does not contain {want}", o.step));
                }
            }
            if let Some(max) = o.within_ms
                && step.elapsed_ms > max
            {
                return Err(format!("step {} took {}ms, bound is {max}ms", o.step, step.elapsed_ms));
            }
            if let Some(min) = o.at_least_ms
                && step.elapsed_ms < min
            {
                return Err(format!("step {} took {}ms, expected at least {min}ms", o.step, step.elapsed_ms));
            }
            Ok(())
        }
        Check::Sent(s) => {
            let on: Vec<&Value> = match s.connection {
                Some(n) => connections.get(n - 1).map(|c| client_messages(c).collect()).unwrap_or_default(),
                None => all().collect(),
            };
            let matching = on
                .iter()
                .filter(|m| method_of(m) == Some(s.method.as_str()))
                .filter(|m| s.params.as_ref().is_none_or(|p| subset(p, m.get("params").unwrap_or(&Value::Null))))
                .count();
            match s.count {
                Some(n) if n != matching => Err(format!("client sent {} {matching} time(s), expected {n}", s.method)),
                None if matching == 0 => Err(format!("client never sent {}{}", s.method, describe_params(&s.params))),
                _ => Ok(()),
            }
        }
        Check::NotSent(m) => match all().filter(|v| method_of(v) == Some(m.method.as_str())).count() {
            0 => Ok(()),
            n => Err(format!("client sent {} {n} time(s), expected never", m.method)),
        },
        Check::SentBefore(o) => {
            let pos = |method: &str| all().position(|v| method_of(v) == Some(method));
            match (pos(&o.first), pos(&o.then)) {
                (Some(a), Some(b)) if a < b => Ok(()),
                (Some(_), Some(_)) => Err(format!("client sent {} before {}", o.then, o.first)),
                (None, _) => Err(format!("client never sent {}", o.first)),
                (_, None) => Err(format!("client never sent {}", o.then)),
            }
        }
        Check::Cancelled(c) => {
            let id = labelled_id(connections, &c.request)
                .ok_or_else(|| format!("the mock never received request {:?}", c.request))?;
            let sent = all()
                .any(|v| method_of(v) == Some("notifications/cancelled") && v.pointer("/params/requestId") == Some(id));
            match (c.sent, sent) {
                (true, false) => Err(format!("client sent no notifications/cancelled with requestId {id}")),
                (false, true) => Err(format!("client sent notifications/cancelled for {id}, expected none")),
                _ => Ok(()),
            }
        }
        Check::Answered(a) => {
            let id = labelled_id(connections, &a.request)
                .ok_or_else(|| format!("the mock never sent request {:?}", a.request))?;
            let answer = all()
                .find(|v| v.get("id") == Some(id) && v.get("method").is_none())
                .ok_or_else(|| format!("client never answered server request {id}"))?;
            if let Some(want) = &a.result {
                let got = answer.get("result").ok_or_else(|| format!("answer {answer} has no result"))?;
                if !subset(want, got) {
                    return Err(format!("answer result {got} does not contain {want}"));
                }
            }
            if let Some(code) = a.error_code {
                let got = answer.pointer("/error/code").and_then(Value::as_i64);
                if got != Some(code) {
                    return Err(format!("answer {answer} is not an error with code {code}"));
                }
            }
            Ok(())
        }
        Check::Signal(s) => {
            let name = if s.name.starts_with("SIG") { s.name.clone() } else { format!("SIG{}", s.name) };
            let got =
                connections.iter().flatten().any(|e| matches!(e, WireEvent::Signal { name: n, .. } if *n == name));
            match (s.received, got) {
                (true, false) => Err(format!("the mock never received {name}")),
                (false, true) => Err(format!("the mock received {name}, expected not")),
                _ => Ok(()),
            }
        }
        Check::StdinClosed(c) => {
            let n = c.connection.unwrap_or(1);
            let events = connections.get(n - 1).ok_or_else(|| format!("connection {n} never started"))?;
            if events.iter().any(|e| matches!(e, WireEvent::StdinEof { .. })) {
                Ok(())
            } else {
                Err(format!("the client never closed the mock's stdin on connection {n}"))
            }
        }
        Check::Diagnostics(d) => {
            if !target.is_bundled() {
                return Ok(());
            }
            let got = outcome.diagnostics.clone().unwrap_or_default();
            let pairs = [
                ("protocol_violations", d.protocol_violations, got.protocol_violations),
                ("late_responses", d.late_responses, got.late_responses),
                ("unknown_responses", d.unknown_responses, got.unknown_responses),
                ("oversize_dropped", d.oversize_dropped, got.oversize_dropped),
            ];
            for (name, want, got) in pairs {
                if let Some(want) = want
                    && want != got
                {
                    return Err(format!("{name} is {got}, expected {want}"));
                }
            }
            if let Some(text) = &d.stderr_contains
                && !got.stderr_tail.contains(text.as_str())
            {
                return Err(format!("captured stderr {:?} does not contain {text:?}", got.stderr_tail));
            }
            Ok(())
        }
        Check::Http(h) => http_check(h, connections),
        Check::Notified(m) => {
            if outcome.notifications.iter().any(|(method, _)| *method == m.method) {
                Ok(())
            } else {
                Err(format!("client never reported notification {}", m.method))
            }
        }
    }
}

/// See [`Check::Http`].
fn http_check(h: &HttpCheck, connections: &[Vec<WireEvent>]) -> Result<(), String> {
    let header = h.header.as_ref().map(|n| n.to_ascii_lowercase());
    let (mut matching, mut carrying) = (0usize, 0usize);
    let mut lacking: Option<String> = None;
    for (i, events) in connections.iter().enumerate() {
        if h.connection.is_some_and(|c| c != i + 1) {
            continue;
        }
        // The session id the mock issued on this connection, for `{session}`.
        let session = events
            .iter()
            .find_map(|e| match e {
                WireEvent::HttpResponse { headers, .. } => headers.get("mcp-session-id").cloned(),
                _ => None,
            })
            .unwrap_or_default();
        for e in events {
            let WireEvent::HttpRequest { http_method, path, headers, json, .. } = e else { continue };
            let methods: Vec<&str> = match json {
                Some(Value::Array(items)) => items.iter().filter_map(method_of).collect(),
                Some(v) => method_of(v).into_iter().collect(),
                None => Vec::new(),
            };
            if h.http_method.as_ref().is_some_and(|m| m != http_method)
                || h.method.as_ref().is_some_and(|m| !methods.contains(&m.as_str()))
                || h.path.as_ref().is_some_and(|p| path.split('?').next() != Some(p.as_str()))
            {
                continue;
            }
            matching += 1;
            let carried = match &header {
                None => true,
                Some(name) => headers
                    .get(name)
                    .is_some_and(|got| h.value.as_ref().is_none_or(|want| *got == want.replace("{session}", &session))),
            };
            if carried {
                carrying += 1;
            } else if lacking.is_none() {
                let got = header
                    .as_ref()
                    .and_then(|n| headers.get(n))
                    .map(|v| format!("{v:?}"))
                    .unwrap_or_else(|| "absent".into());
                lacking = Some(format!("{http_method} {} had {got}", path));
            }
        }
    }
    let what = describe_http_filter(h);
    let carries = match (&h.header, &h.value) {
        (Some(n), Some(v)) => format!(" with {n}: {v}"),
        (Some(n), None) => format!(" with {n}"),
        _ => String::new(),
    };
    if h.every {
        if matching == 0 {
            return Err(format!("the client sent no {what}"));
        }
        if carrying < matching {
            return Err(format!(
                "{} of {matching} {what} lacked {}{}: e.g. {}",
                matching - carrying,
                h.header.as_deref().unwrap_or(""),
                h.value.as_ref().map(|v| format!(": {v}")).unwrap_or_default(),
                lacking.unwrap_or_default()
            ));
        }
        return Ok(());
    }
    match h.count {
        Some(n) if n != carrying => Err(format!("the client sent {carrying} {what}{carries}, expected {n}")),
        None if carrying == 0 => Err(match lacking {
            Some(l) => format!("the client sent no {what}{carries} (e.g. {l})"),
            None => format!("the client sent no {what}{carries}"),
        }),
        _ => Ok(()),
    }
}

fn describe_http_filter(h: &HttpCheck) -> String {
    let mut what = h.http_method.clone().unwrap_or_else(|| "HTTP".into());
    if let Some(m) = &h.method {
        what.push(' ');
        what.push_str(m);
    }
    what.push_str(" request(s)");
    if let Some(p) = &h.path {
        what.push_str(&format!(" to {p}"));
    }
    if let Some(c) = h.connection {
        what.push_str(&format!(" on connection {c}"));
    }
    what
}

fn describe_params(p: &Option<Value>) -> String {
    p.as_ref().map(|p| format!(" with params containing {p}")).unwrap_or_default()
}

/// Rules every run must satisfy, whatever its checks say.
fn always_on(
    scenario: &Scenario,
    target: &TargetKind,
    outcome: &ClientOutcome,
    connections: &[Vec<WireEvent>],
    failures: &mut Vec<CheckResult>,
) {
    let mut fail =
        |rule: &str, message: String| failures.push(CheckResult { check: format!("always: {rule}"), message });
    if outcome.hung {
        fail(
            "finishes before the deadline",
            format!("the client plan did not finish within {}ms", scenario.deadline_ms),
        );
    }
    let batches_allowed = scenario.revision.as_str() == "2025-03-26";
    for (n, events) in connections.iter().enumerate() {
        let conn = n + 1;
        // The script ran to its end: proof the client reached every scripted step.
        let progress = events.iter().rev().find_map(|e| match e {
            WireEvent::Script { reached, total, finished } => Some((*reached, *total, *finished)),
            _ => None,
        });
        if let Some((reached, total, false)) = progress {
            let steps = mcp_scenario::script::connection_script(&scenario.server, conn);
            let op = steps.get(reached.saturating_sub(1)).map(describe_server_step).unwrap_or_default();
            fail(
                "server script completes",
                format!(
                    "connection {conn}: the mock's script stopped at step {reached} of {total} ({op}): the client never got that far"
                ),
            );
        }
        let mut in_flight: Vec<Value> = Vec::new();
        for e in events {
            match e {
                WireEvent::FromClient { json, bytes, .. } => {
                    let Some(v) = json else {
                        fail(
                            "valid JSON-RPC",
                            format!(
                                "connection {conn}: client sent a line that is not JSON: {:?}",
                                bytes.text.as_deref().unwrap_or("<binary>")
                            ),
                        );
                        continue;
                    };
                    let messages: Vec<&Value> = match v {
                        Value::Array(items) if batches_allowed && !items.is_empty() => items.iter().collect(),
                        _ => vec![v],
                    };
                    for m in messages {
                        if let Err(why) = valid_client_message(m) {
                            fail("valid JSON-RPC", format!("connection {conn}: {why}: {m}"));
                            continue;
                        }
                        if target.is_bundled() && m.get("method").is_some() && m.get("params").is_none() {
                            fail("params always present (SPEC §2)", format!("connection {conn}: {m}"));
                        }
                        if let (Some(_), Some(id)) = (m.get("method"), m.get("id")) {
                            if in_flight.contains(id) {
                                fail(
                                    "unique in-flight ids",
                                    format!("connection {conn}: id {id} reused while still in flight"),
                                );
                            }
                            in_flight.push(id.clone());
                        }
                    }
                }
                WireEvent::ToClient { bytes, .. } => {
                    if let Some(text) = bytes.text.as_deref() {
                        for line in text.lines() {
                            if let Ok(v) = serde_json::from_str::<Value>(line)
                                && v.get("method").is_none()
                                && let Some(id) = v.get("id")
                            {
                                in_flight.retain(|x| x != id);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Checks one client message's JSON-RPC 2.0 shape.
fn valid_client_message(m: &Value) -> Result<(), String> {
    let obj = m.as_object().ok_or("not a JSON object")?;
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("missing or wrong \"jsonrpc\"".into());
    }
    let id_ok = |id: &Value| id.is_string() || id.as_i64().is_some();
    if let Some(method) = obj.get("method") {
        if !method.is_string() {
            return Err("\"method\" is not a string".into());
        }
        if let Some(id) = obj.get("id")
            && !id_ok(id)
        {
            return Err("request id is not a string or an integer".into());
        }
        if let Some(p) = obj.get("params")
            && !p.is_object()
            && !p.is_array()
        {
            return Err("\"params\" is neither an object nor an array".into());
        }
        return Ok(());
    }
    match (obj.get("id"), obj.contains_key("result"), obj.contains_key("error")) {
        (Some(id), true, false) | (Some(id), false, true) if id_ok(id) => Ok(()),
        (Some(_), true, true) => Err("response has both result and error".into()),
        _ => Err("neither a request, a notification nor a response".into()),
    }
}

/// A short description of a server step, for messages.
pub fn describe_server_step(step: &ServerStep) -> String {
    match step {
        ServerStep::Expect { method, .. } => format!("expect {method}"),
        ServerStep::ExpectResponse { to } => format!("expect_response {to}"),
        ServerStep::Handshake { .. } => "handshake".into(),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| v.get("op").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subset_matches_recursively() {
        assert!(subset(&json!({"a": {"b": 1}}), &json!({"a": {"b": 1, "c": 2}, "d": 3})));
        assert!(!subset(&json!({"a": {"b": 2}}), &json!({"a": {"b": 1}})));
        assert!(subset(&json!([1, 2]), &json!([1, 2])));
    }

    #[test]
    fn client_message_shapes() {
        assert!(valid_client_message(&json!({"jsonrpc":"2.0","id":1,"method":"x"})).is_ok());
        assert!(valid_client_message(&json!({"jsonrpc":"2.0","id":"a","result":{}})).is_ok());
        assert!(valid_client_message(&json!({"jsonrpc":"2.0","id":null,"method":"x"})).is_err());
        assert!(valid_client_message(&json!({"jsonrpc":"2.0","id":1.5,"result":{}})).is_err());
        assert!(valid_client_message(&json!({"id":1,"method":"x"})).is_err());
    }
}
