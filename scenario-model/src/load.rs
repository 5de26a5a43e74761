//! Loading a scenario file strictly: serde-saphyr with strict booleans, duplicate keys and
//! unknown fields rejected; then semantic validation (labels, step numbers, payloads), each
//! error naming file:line:column and the field.
//!
//! Checks are validated by the harness, which evaluates them (`harness/src/checks/`); it
//! names their locations with a [`Locator`].

use crate::error::ScenarioError;
use crate::plan::ClientStep;
use crate::scenario::{Scenario, TransportName};
use crate::script::ServerStep;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_saphyr::Spanned;
use std::collections::HashSet;
use std::path::Path;

/// Reads and validates one scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read { path: path.into(), source })?;
    parse(path, &text)
}

/// Parses and validates scenario text; `path` is only used in messages.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    let options = serde_saphyr::options! { strict_booleans: true };
    let scenario: Scenario = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let (line, column) = e.location().map(|l| (l.line() as u32, l.column() as u32)).unwrap_or((0, 0));
        ScenarioError::Invalid { path: path.into(), line, column, message: first_line(&e.to_string()) }
    })?;
    // A second, loose pass only to learn where each step starts, for validation messages.
    let spans: Spans = serde_saphyr::from_str(text).unwrap_or_default();
    Validator { path, spans: &spans }.validate(&scenario)?;
    Ok(scenario)
}

fn first_line(message: &str) -> String {
    // serde-saphyr appends a source snippet and repeats the location; we print our own.
    let line = message.lines().next().unwrap_or(message).trim();
    let line = line.strip_prefix("error: ").unwrap_or(line);
    match line.strip_prefix("line ").and_then(|rest| rest.split_once(": ")) {
        Some((location, rest)) if location.contains(" column ") => rest.to_string(),
        _ => line.to_string(),
    }
}

#[derive(Deserialize, Default)]
struct Spans {
    #[serde(default)]
    client: Vec<Spanned<IgnoredAny>>,
    #[serde(default)]
    server: Vec<Spanned<IgnoredAny>>,
    #[serde(default)]
    checks: Vec<Spanned<IgnoredAny>>,
}

struct Validator<'a> {
    path: &'a Path,
    spans: &'a Spans,
}

/// The error for item `index` of `list`, located where the item starts (0:0 if unknown).
fn locate(path: &Path, list: &[Spanned<IgnoredAny>], index: usize, message: String) -> ScenarioError {
    let (line, column) =
        list.get(index).map(|s| (s.referenced.line() as u32, s.referenced.column() as u32)).unwrap_or((0, 0));
    ScenarioError::Invalid { path: path.into(), line, column, message }
}

/// Where the parts of a scenario file start, so validation done outside this crate names
/// file:line:column the way the loader does.
pub struct Locator<'a> {
    path: &'a Path,
    spans: Spans,
}

impl<'a> Locator<'a> {
    /// Learns where `text` (the contents of `path`) puts each of its parts.
    pub fn new(path: &'a Path, text: &str) -> Self {
        Locator { path, spans: serde_saphyr::from_str(text).unwrap_or_default() }
    }

    /// The error for check `index` (0-based):
    /// `<path>:<line>:<column>: check <index + 1>: <message>`.
    pub fn check(&self, index: usize, message: impl std::fmt::Display) -> ScenarioError {
        locate(self.path, &self.spans.checks, index, format!("check {}: {message}", index + 1))
    }
}

impl Validator<'_> {
    fn at(&self, list: &[Spanned<IgnoredAny>], index: usize, message: String) -> ScenarioError {
        locate(self.path, list, index, message)
    }

    fn validate(&self, s: &Scenario) -> Result<(), ScenarioError> {
        if s.name.is_empty() || !s.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            return Err(ScenarioError::Invalid {
                path: self.path.into(),
                line: 0,
                column: 0,
                message: format!("field `name`: {:?} must be lowercase letters, digits and `-`", s.name),
            });
        }
        if s.transport.to_vec().contains(&TransportName::LegacySse) && s.revision.as_str() != "2024-11-05" {
            return Err(ScenarioError::Invalid {
                path: self.path.into(),
                line: 0,
                column: 0,
                message: "field `revision`: legacy-sse scenarios speak 2024-11-05".into(),
            });
        }
        let mut server_labels = HashSet::new();
        let mut server_requests = HashSet::new();
        let transports = s.transport.to_vec();
        let mut stream_labels: HashSet<String> = ["get", "post"].iter().map(|l| l.to_string()).collect();
        for (i, step) in s.server.iter().enumerate() {
            let err = |m: String| self.at(&self.spans.server, i, format!("server step {}: {m}", i + 1));
            http_step_problem(step, &transports, &server_labels, &mut stream_labels).map_err(err)?;
            match step {
                ServerStep::Expect { label: Some(l), .. } => {
                    server_labels.insert(l.clone());
                }
                ServerStep::Reply { to: Some(l), result, error, .. } => {
                    if !server_labels.contains(l) {
                        return Err(err(format!("field `to`: no earlier `expect` is labelled {l:?}")));
                    }
                    if result.is_some() && error.is_some() {
                        return Err(err("fields `result` and `error`: give one, not both".into()));
                    }
                }
                ServerStep::Reply { result: Some(_), error: Some(_), .. } => {
                    return Err(err("fields `result` and `error`: give one, not both".into()));
                }
                ServerStep::Send { text, hex, base64, json, generate, .. } => {
                    let given = [text.is_some(), hex.is_some(), base64.is_some(), json.is_some(), generate.is_some()];
                    if given.iter().filter(|g| **g).count() != 1 {
                        return Err(err(
                            "op `send` takes exactly one of `text`, `hex`, `base64`, `json`, `generate`".into()
                        ));
                    }
                    crate::payload::send_bytes(step).map_err(&err)?;
                }
                ServerStep::Stderr { text, generate } if text.is_some() == generate.is_some() => {
                    return Err(err("op `stderr` takes exactly one of `text`, `generate`".into()));
                }
                ServerStep::Request { label, .. } if !server_requests.insert(label.clone()) => {
                    return Err(err(format!("field `as`: label {label:?} is used twice")));
                }
                ServerStep::ExpectResponse { to } if !server_requests.contains(to) => {
                    return Err(err(format!("field `to`: no earlier `request` is labelled {to:?}")));
                }
                ServerStep::Exit { signal: Some(sig), code } => {
                    if code.is_some() {
                        return Err(err("fields `code` and `signal`: give one, not both".into()));
                    }
                    if crate::signals::by_name(sig).is_none() {
                        return Err(err(format!(
                            "field `signal`: unknown signal {sig:?} (e.g. SIGKILL, SIGTERM, SIGSEGV)"
                        )));
                    }
                }
                _ => {}
            }
        }
        let mut plan_labels = HashSet::new();
        for (i, step) in s.client.iter().enumerate() {
            let err = |m: String| self.at(&self.spans.client, i, format!("client step {}: {m}", i + 1));
            match step {
                ClientStep::Request { label: Some(l), .. } if !plan_labels.insert(l.clone()) => {
                    return Err(err(format!("field `as`: label {l:?} is used twice")));
                }
                ClientStep::Request { background: true, label: None, .. } => {
                    return Err(err("field `as`: a background request needs a label".into()));
                }
                ClientStep::Await { request } | ClientStep::Cancel { request } if !plan_labels.contains(request) => {
                    return Err(err(format!("field `request`: no earlier request is labelled {request:?}")));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Problems with an HTTP step (or a stdio step in a scenario without stdio), naming the
/// field. Keeps the stream labels seen so far, so `stream:` fields can be checked.
fn http_step_problem(
    step: &ServerStep,
    transports: &[TransportName],
    labels: &HashSet<String>,
    streams: &mut HashSet<String>,
) -> Result<(), String> {
    let http = transports.iter().any(|t| *t != TransportName::Stdio);
    let op = serde_json::to_value(step)
        .ok()
        .and_then(|v| v.get("op").and_then(|o| o.as_str()).map(str::to_string))
        .unwrap_or_default();
    let http_only = step.is_http_only();
    if http_only && !http {
        return Err(format!("op `{op}` needs transport `http` or `legacy-sse`; this scenario runs over stdio only"));
    }
    let stdio_only = matches!(
        step,
        ServerStep::Stderr { .. }
            | ServerStep::StopReading
            | ServerStep::IgnoreSigterm
            | ServerStep::IgnoreStdinEof
            | ServerStep::ExpectEof
    );
    if stdio_only && !transports.contains(&TransportName::Stdio) {
        return Err(format!("op `{op}` only means something over stdio; this scenario does not run over stdio"));
    }
    if matches!(step, ServerStep::Endpoint { .. }) && !transports.contains(&TransportName::LegacySse) {
        return Err(
            "op `endpoint` is the legacy SSE `endpoint` event; this scenario does not run over `legacy-sse`".into()
        );
    }
    let check_to = |to: &Option<String>| match to {
        Some(l) if !labels.contains(l) => Err(format!("field `to`: no earlier `expect` is labelled {l:?}")),
        _ => Ok(()),
    };
    let check_stream = |name: &Option<String>, streams: &HashSet<String>| match name {
        Some(l) if !streams.contains(l) && !labels.contains(l) => {
            Err(format!("field `stream`: no earlier `open_stream` or `expect_get` names a stream {l:?}"))
        }
        _ => Ok(()),
    };
    match step {
        ServerStep::Respond { to, status, headers, json, text, generate, .. } => {
            check_to(to)?;
            check_status(*status)?;
            check_headers(headers)?;
            if [json.is_some(), text.is_some(), generate.is_some()].iter().filter(|g| **g).count() > 1 {
                return Err("op `respond` takes at most one of `json`, `text`, `generate`".into());
            }
            if let Some(g) = generate {
                crate::payload::generated(g)?;
            }
        }
        ServerStep::RawResponse { to, text, hex, base64, .. } => {
            check_to(to)?;
            if [text.is_some(), hex.is_some(), base64.is_some()].iter().filter(|g| **g).count() != 1 {
                return Err("op `raw_response` takes exactly one of `text`, `hex`, `base64`".into());
            }
            let as_send = ServerStep::Send {
                text: text.clone(),
                hex: hex.clone(),
                base64: base64.clone(),
                json: None,
                generate: None,
                chunks: Vec::new(),
                chunk_delay_ms: 0,
            };
            crate::payload::send_bytes(&as_send)?;
        }
        ServerStep::OpenStream { to, label, status, headers, .. } => {
            check_to(to)?;
            check_status(*status)?;
            check_headers(headers)?;
            if let Some(l) = label.clone().or_else(|| to.clone()) {
                streams.insert(l);
            }
        }
        ServerStep::Event { stream, comment, event, id, retry, data, json, .. } => {
            check_stream(stream, streams)?;
            if data.is_some() && json.is_some() {
                return Err("fields `data` and `json`: give one, not both".into());
            }
            if comment.is_none()
                && event.is_none()
                && id.is_none()
                && retry.is_none()
                && data.is_none()
                && json.is_none()
            {
                return Err("op `event` needs at least one of `comment`, `event`, `id`, `retry`, `data`, `json`".into());
            }
            for (field, value) in [("event", event), ("id", id)] {
                if value.as_deref().is_some_and(|v| v.contains(['\n', '\r'])) {
                    return Err(format!(
                        "field `{field}`: a line break would end the field early; use `send` for raw bytes"
                    ));
                }
            }
        }
        ServerStep::EndStream { stream, .. } => check_stream(stream, streams)?,
        ServerStep::ExpectGet { label, status, headers, .. } => {
            check_status(*status)?;
            check_headers(headers)?;
            if let Some(l) = label {
                streams.insert(l.clone());
            }
        }
        ServerStep::ExpectDelete { status, .. } => check_status(*status)?,
        ServerStep::RequireAuth { token, status, www_authenticate, .. } => {
            if token.trim().is_empty() || token.contains(char::is_whitespace) {
                return Err("field `token`: give a non-empty token without spaces".into());
            }
            if !(400..500).contains(status) {
                return Err(format!("field `status`: {status} is not a 4xx status (use 401 or 403)"));
            }
            if let Some(v) = www_authenticate {
                http::HeaderValue::from_str(v)
                    .map_err(|_| format!("field `www_authenticate`: {v:?} is not a valid header value"))?;
            }
        }
        ServerStep::ReplyAlways { result: Some(_), error: Some(_), .. } => {
            return Err("fields `result` and `error`: give one, not both".into());
        }
        _ => {}
    }
    Ok(())
}

fn check_status(status: u16) -> Result<(), String> {
    if (100..600).contains(&status) {
        Ok(())
    } else {
        Err(format!("field `status`: {status} is not an HTTP status (100–599)"))
    }
}

fn check_headers(headers: &std::collections::BTreeMap<String, String>) -> Result<(), String> {
    for (name, value) in headers {
        http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("field `headers`: {name:?} is not a valid header name"))?;
        http::HeaderValue::from_str(value)
            .map_err(|_| format!("field `headers`: the value of {name:?} is not a valid header value"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": []}\nchecks:\n  - outcome: {step: 2, ok: true}\n";

    fn err(text: &str) -> String {
        parse(Path::new("x.yaml"), text).expect_err("must fail").to_string()
    }

    #[test]
    fn good_scenario_loads() {
        let s = parse(Path::new("x.yaml"), GOOD).expect("loads");
        assert_eq!(s.client.len(), 2);
    }

    #[test]
    fn misspelt_field_names_location_and_field() {
        let e = err(&GOOD.replace("    method: tools/list\nserver", "    methd: tools/list\nserver"));
        assert!(e.starts_with("x.yaml:"), "{e}");
        assert!(e.contains("methd"), "{e}");
        let loc: Vec<&str> = e.splitn(4, ':').collect();
        assert!(loc[1].parse::<u32>().expect("line") > 0, "{e}");
    }

    #[test]
    fn locator_names_a_check_by_line_and_column() {
        let e = Locator::new(Path::new("x.yaml"), GOOD).check(0, "field `step`: wrong").to_string();
        assert_eq!(e, "x.yaml:16:5: check 1: field `step`: wrong");
        let e = Locator::new(Path::new("x.yaml"), GOOD).check(3, "unknown place").to_string();
        assert_eq!(e, "x.yaml:0:0: check 4: unknown place");
    }

    #[test]
    fn duplicate_keys_and_loose_booleans_are_rejected() {
        err(&GOOD.replace("summary: s\n", "summary: s\nsummary: t\n"));
        err(&GOOD.replace("ok: true", "ok: yes"));
    }

    #[test]
    fn http_ops_are_validated_naming_the_field() {
        let http = GOOD.replace("transport: stdio", "transport: http");
        let e = err(&GOOD.replace("  - op: reply\n", "  - op: expect_get\n  - op: reply\n"));
        assert!(e.contains("needs transport `http` or `legacy-sse`"), "{e}");
        let e = err(&http.replace("  - op: reply\n", "  - op: respond\n    status: 700\n  - op: reply\n"));
        assert!(e.contains("field `status`"), "{e}");
        let e = err(&http.replace("  - op: reply\n", "  - op: end_stream\n    stream: nope\n  - op: reply\n"));
        assert!(e.contains("field `stream`"), "{e}");
        let e = err(&http.replace("  - op: reply\n", "  - op: stop_reading\n  - op: reply\n"));
        assert!(e.contains("only means something over stdio"), "{e}");
    }

    #[test]
    fn send_needs_exactly_one_payload() {
        let e = err(&GOOD.replace("  - op: reply\n", "  - op: send\n    text: a\n    hex: ff\n  - op: reply\n"));
        assert!(e.contains("exactly one of"), "{e}");
    }
}
