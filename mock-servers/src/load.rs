//! Loading a scenario file strictly: serde-saphyr with strict booleans, duplicate keys and
//! unknown fields rejected; then semantic validation (labels, step numbers, payloads), each
//! error naming file:line:column and the field.

use crate::error::MockError;
use crate::scenario::{Check, ClientStep, Scenario, ServerStep, TransportName};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_saphyr::Spanned;
use std::collections::HashSet;
use std::path::Path;

/// Reads and validates one scenario file.
pub fn load(path: &Path) -> Result<Scenario, MockError> {
    let text = std::fs::read_to_string(path).map_err(|source| MockError::Read { path: path.into(), source })?;
    parse(path, &text)
}

/// Parses and validates scenario text; `path` is only used in messages.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, MockError> {
    let options = serde_saphyr::options! { strict_booleans: true };
    let scenario: Scenario = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let (line, column) = e.location().map(|l| (l.line() as u32, l.column() as u32)).unwrap_or((0, 0));
        MockError::Invalid { path: path.into(), line, column, message: first_line(&e.to_string()) }
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

impl Validator<'_> {
    fn at(&self, list: &[Spanned<IgnoredAny>], index: usize, message: String) -> MockError {
        let (line, column) = list.get(index).map(|s| (s.referenced.line() as u32, s.referenced.column() as u32)).unwrap_or((0, 0));
        MockError::Invalid { path: self.path.into(), line, column, message }
    }

    fn validate(&self, s: &Scenario) -> Result<(), MockError> {
        if s.name.is_empty() || !s.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            return Err(MockError::Invalid {
                path: self.path.into(),
                line: 0,
                column: 0,
                message: format!("field `name`: {:?} must be lowercase letters, digits and `-`", s.name),
            });
        }
        if s.transport.to_vec().contains(&TransportName::LegacySse) && s.revision.as_str() != "2024-11-05" {
            return Err(MockError::Invalid {
                path: self.path.into(),
                line: 0,
                column: 0,
                message: "field `revision`: legacy-sse scenarios speak 2024-11-05".into(),
            });
        }
        let mut server_labels = HashSet::new();
        let mut server_requests = HashSet::new();
        for (i, step) in s.server.iter().enumerate() {
            let err = |m: String| self.at(&self.spans.server, i, format!("server step {}: {m}", i + 1));
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
                        return Err(err("op `send` takes exactly one of `text`, `hex`, `base64`, `json`, `generate`".into()));
                    }
                    crate::payload::send_bytes(step).map_err(|m| err(m))?;
                }
                ServerStep::Stderr { text, generate } => {
                    if text.is_some() == generate.is_some() {
                        return Err(err("op `stderr` takes exactly one of `text`, `generate`".into()));
                    }
                }
                ServerStep::Request { label, .. } => {
                    if !server_requests.insert(label.clone()) {
                        return Err(err(format!("field `as`: label {label:?} is used twice")));
                    }
                }
                ServerStep::ExpectResponse { to } if !server_requests.contains(to) => {
                    return Err(err(format!("field `to`: no earlier `request` is labelled {to:?}")));
                }
                ServerStep::Exit { signal: Some(sig), code } => {
                    if code.is_some() {
                        return Err(err("fields `code` and `signal`: give one, not both".into()));
                    }
                    if crate::signals::by_name(sig).is_none() {
                        return Err(err(format!("field `signal`: unknown signal {sig:?} (e.g. SIGKILL, SIGTERM, SIGSEGV)")));
                    }
                }
                _ => {}
            }
        }
        let mut plan_labels = HashSet::new();
        for (i, step) in s.client.iter().enumerate() {
            let err = |m: String| self.at(&self.spans.client, i, format!("client step {}: {m}", i + 1));
            match step {
                ClientStep::Request { label: Some(l), .. } => {
                    if !plan_labels.insert(l.clone()) {
                        return Err(err(format!("field `as`: label {l:?} is used twice")));
                    }
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
        for (i, check) in s.checks.iter().enumerate() {
            let err = |m: String| self.at(&self.spans.checks, i, format!("check {}: {m}", i + 1));
            match check {
                Check::Outcome(o) if o.step == 0 || o.step > s.client.len() => {
                    return Err(err(format!(
                        "field `step`: plan step {} does not exist (the client plan has {} steps, numbered from 1)",
                        o.step,
                        s.client.len()
                    )));
                }
                Check::Outcome(o) if o.error.is_some() && o.ok == Some(true) => {
                    return Err(err("fields `ok: true` and `error`: an expected error implies `ok: false`".into()));
                }
                Check::Cancelled(c) if !server_labels.contains(&c.request) => {
                    return Err(err(format!("field `request`: no server `expect` is labelled {:?}", c.request)));
                }
                Check::Answered(a) if !server_requests.contains(&a.request) => {
                    return Err(err(format!("field `request`: no server `request` is labelled {:?}", a.request)));
                }
                Check::Signal(sig) if crate::signals::by_name(&sig.name).is_none() => {
                    return Err(err(format!("field `name`: unknown signal {:?}", sig.name)));
                }
                _ => {}
            }
        }
        Ok(())
    }
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
    fn check_on_missing_step_is_rejected_with_location() {
        let e = err(&GOOD.replace("step: 2", "step: 9"));
        assert!(e.starts_with("x.yaml:16:"), "{e}");
        assert!(e.contains("plan step 9 does not exist"), "{e}");
    }

    #[test]
    fn duplicate_keys_and_loose_booleans_are_rejected() {
        err(&GOOD.replace("summary: s\n", "summary: s\nsummary: t\n"));
        err(&GOOD.replace("ok: true", "ok: yes"));
    }

    #[test]
    fn send_needs_exactly_one_payload() {
        let e = err(&GOOD.replace("  - op: reply\n", "  - op: send\n    text: a\n    hex: ff\n  - op: reply\n"));
        assert!(e.contains("exactly one of"), "{e}");
    }
}
