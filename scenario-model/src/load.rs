//! Loading a scenario file strictly: serde-saphyr with strict booleans, duplicate keys and
//! unknown fields rejected; then semantic validation (labels, step numbers, payloads), each
//! error naming file:line:column and the field.
//!
//! The rules of each server op (which transports it needs, its fields' values, its payload)
//! belong to the op, which lives in the mock (`mcp_mock::ops`): [`load`] and [`parse`]
//! check the format and the cross-references between its parts only; the mock's loader
//! passes its op rules in through [`load_with`] / [`parse_with`], and they report through a
//! [`Locator`], so every message still names file:line:column the same way. Likewise the
//! checks are validated by the harness, which evaluates them (`harness/src/checks/`).

use crate::error::ScenarioError;
use crate::plan::ClientStep;
use crate::scenario::{Scenario, TransportName};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_saphyr::Spanned;
use std::collections::HashSet;
use std::fmt::Display;
use std::path::Path;

/// Rules for the server script that the caller adds to the format's own (the mock's op
/// rules). Called once, after the scenario-wide rules and before the client plan's, with a
/// [`Locator`] to place each complaint.
pub type ServerRules<'r> = &'r dyn Fn(&Scenario, &Locator<'_>) -> Result<(), ScenarioError>;

/// Reads and validates one scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    load_with(path, &|_, _| Ok(()))
}

/// Reads and validates one scenario file, with `server_rules` for the server script.
pub fn load_with(path: &Path, server_rules: ServerRules<'_>) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read { path: path.into(), source })?;
    let scenario = parse_with(path, &text, server_rules)?;
    // The name is the snapshots' name and what lists and reports show: a file whose stem
    // says otherwise would be found under one name and reported under another.
    if let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        && stem != scenario.name
    {
        return Err(Locator::new(path, &text).field(
            "name",
            format!(
                "field `name`: {:?} differs from the file name {stem:?}: write `name: {stem}` (or rename the file to {}.yaml, and its snapshots with it)",
                scenario.name, scenario.name
            ),
        ));
    }
    Ok(scenario)
}

/// Parses and validates scenario text; `path` is only used in messages.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    parse_with(path, text, &|_, _| Ok(()))
}

/// Parses and validates scenario text with `server_rules` for the server script; `path` is
/// only used in messages.
pub fn parse_with(path: &Path, text: &str, server_rules: ServerRules<'_>) -> Result<Scenario, ScenarioError> {
    let options = serde_saphyr::options! { strict_booleans: true };
    let scenario: Scenario = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let (line, column) = e.location().map(|l| (l.line() as u32, l.column() as u32)).unwrap_or((0, 0));
        let message = with_hint(first_line(&e.to_string()));
        // A value of the wrong type is reported at the mapping that holds it: find its own
        // line and say which field wants what.
        if let Some((at_line, at_column, m)) = wrong_type(text, line, &message) {
            return ScenarioError::Invalid { path: path.into(), line: at_line, column: at_column, message: m };
        }
        // A line whose indentation does not line up explains most structural errors better
        // than the parser's symptom at the enclosing mapping (`missing field …`).
        if let Some(m) = crate::indent::misaligned(text) {
            let message = format!("{m} (the parser then reported at {line}:{column}: {message})");
            return ScenarioError::Invalid { path: path.into(), line: m.line, column: m.column, message };
        }
        let message = duplicate_key(text, line, &message).unwrap_or(message);
        ScenarioError::Invalid { path: path.into(), line, column, message }
    })?;
    // A second, loose pass only to learn where each step starts, for validation messages.
    Validator { at: Locator::new(path, text), server_rules }.validate(&scenario)?;
    Ok(scenario)
}

/// serde-saphyr's duplicate-key message names a library option the user cannot set; say
/// which key is given twice, where, and what to do.
fn duplicate_key(text: &str, line: u32, message: &str) -> Option<String> {
    let key = message.strip_prefix("duplicate mapping key: ")?.split(',').next()?.trim().to_string();
    let second = text.lines().nth((line as usize).checked_sub(1)?)?;
    let indent = second.len() - second.trim_start().len();
    let first = text.lines().take(line as usize - 1).position(|l| {
        let rest = l.get(indent..).unwrap_or("");
        l.len() - l.trim_start().len() == indent
            && rest.strip_prefix(key.as_str()).is_some_and(|r| r.trim_start().starts_with(':'))
    });
    let first = first.map(|i| format!(" (first on line {})", i + 1)).unwrap_or_default();
    Some(format!("`{key}` is given twice in the same mapping{first}: remove one"))
}

/// serde's "invalid type: string \"two\", expected usize", reported at the start of the step
/// that holds the value: the line below `from_line` that gives that value, the field's name,
/// and what to write instead.
fn wrong_type(text: &str, from_line: u32, message: &str) -> Option<(u32, u32, String)> {
    let rest = message.strip_prefix("invalid type: ")?;
    let (got, expected) = rest.split_once(", expected ")?;
    let value = got.split_once(' ').map(|(_, v)| v.trim_matches('"'))?;
    let (index, line) = text.lines().enumerate().skip((from_line as usize).saturating_sub(1)).find(|(_, l)| {
        l.split_once(':').is_some_and(|(_, v)| v.trim().trim_matches(|c| c == '"' || c == '\'') == value)
    })?;
    let key = line.split_once(':')?.0.trim().trim_start_matches("- ").trim();
    let column = line.len() - line.trim_start().trim_start_matches("- ").len() + 1;
    let (want, example) = match expected.trim() {
        "usize" | "u64" | "u32" | "u16" | "u8" | "i64" | "i32" => ("a whole number", "2".to_string()),
        "f64" | "f32" => ("a number", "0.5".to_string()),
        "a boolean" => ("`true` or `false`", "true".to_string()),
        "a string" => ("a string", format!("\"{value}\"")),
        other => (other, String::new()),
    };
    let write = if example.is_empty() { String::new() } else { format!(": write e.g. `{key}: {example}`") };
    Some((index as u32 + 1, column as u32, format!("field `{key}`: expected {want}, not {got}{write}")))
}

/// `; did you mean `x`?` for the closest of serde's "expected one of a, b, c" to `given`.
fn did_you_mean(given: &str, message: &str) -> String {
    let Some((_, list)) = message.split_once("expected one of ") else { return String::new() };
    let closest = list
        .split(',')
        .map(|c| c.trim().trim_matches('`'))
        .map(|c| (strsim::levenshtein(given, c), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d);
    closest.map(|(_, c)| format!("; did you mean `{c}`?")).unwrap_or_default()
}

/// What to write instead of a field the format no longer has; what a parser budget means.
fn with_hint(message: String) -> String {
    // serde-saphyr stops runaway input (deep nesting, alias bombs) with a `Debug` of its
    // budget, e.g. `budget breached: Depth { depth: 65 }`: say what it means for a scenario.
    if let Some(budget) = message.strip_prefix("budget breached: ") {
        return format!(
            "the YAML is beyond what the loader accepts ({budget}): nesting too deep, or anchors and aliases that expand to too many nodes; a scenario file needs neither"
        );
    }
    for kind in ["unknown variant `", "unknown field `"] {
        if let Some(given) = message.split_once(kind).and_then(|(_, r)| r.split_once('`')).map(|(g, _)| g.to_string()) {
            let hint = did_you_mean(&given, &message);
            if !hint.is_empty() {
                return format!("{message}{hint}");
            }
        }
    }
    if message.contains("unknown field `bundled_only`") {
        return format!(
            "{message} (`bundled_only` was replaced by bases: give each check `project: \"SPEC §n …\"` for a rule of our own SPEC.md, which is a note for third-party clients; see scenarios/README.md, \"What a check rests on\")"
        );
    }
    message
}

/// Places a validation message in the scenario file: each method turns a message about one
/// part of the scenario into [`ScenarioError::Invalid`] at the line and column where that
/// part starts (0:0 when unknown), prefixed the way every loader message is
/// (`server step 3: …`).
pub struct Locator<'a> {
    path: &'a Path,
    spans: Spans,
}

impl<'a> Locator<'a> {
    /// Learns where `text` (the contents of `path`) puts each of its parts, with a second,
    /// loose parse that only records where each step and check starts.
    pub fn new(path: &'a Path, text: &str) -> Self {
        Locator { path, spans: serde_saphyr::from_str(text).unwrap_or_default() }
    }

    /// A message about a top-level field (at its line and column; 0:0 when absent).
    pub fn field(&self, name: &str, message: impl Display) -> ScenarioError {
        let at = match name {
            "name" => self.spans.name.as_ref(),
            "fault" => self.spans.fault.as_ref(),
            "deviations" => self.spans.deviations.as_ref(),
            "revision" => self.spans.revision.as_ref(),
            "via" => self.spans.via.as_ref(),
            _ => None,
        };
        let (line, column) = at.map(|s| (s.referenced.line() as u32, s.referenced.column() as u32)).unwrap_or((0, 0));
        ScenarioError::Invalid { path: self.path.into(), line, column, message: message.to_string() }
    }

    /// A message about the scenario as a whole (at 0:0).
    pub fn scenario(&self, message: impl Display) -> ScenarioError {
        ScenarioError::Invalid { path: self.path.into(), line: 0, column: 0, message: message.to_string() }
    }

    /// A message about server step `index` (0-based; the message numbers it from 1).
    pub fn server_step(&self, index: usize, message: impl Display) -> ScenarioError {
        self.at(&self.spans.server, index, format!("server step {}: {message}", index + 1))
    }

    /// A message about client plan step `index` (0-based; the message numbers it from 1).
    pub fn client_step(&self, index: usize, message: impl Display) -> ScenarioError {
        self.at(&self.spans.client, index, format!("client step {}: {message}", index + 1))
    }

    /// A message about check `index` (0-based; the message numbers it from 1).
    pub fn check(&self, index: usize, message: impl Display) -> ScenarioError {
        self.at(&self.spans.checks, index, format!("check {}: {message}", index + 1))
    }

    /// Where check `index` (0-based) starts: line and column, 1-based.
    pub fn check_position(&self, index: usize) -> Option<(u32, u32)> {
        self.spans.checks.get(index).map(|s| (s.referenced.line() as u32, s.referenced.column() as u32))
    }

    fn at(&self, list: &[Spanned<IgnoredAny>], index: usize, message: String) -> ScenarioError {
        let (line, column) =
            list.get(index).map(|s| (s.referenced.line() as u32, s.referenced.column() as u32)).unwrap_or((0, 0));
        ScenarioError::Invalid { path: self.path.into(), line, column, message }
    }
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

/// Where the top-level keys stand, for messages: the [`Locator`]'s loose parse, lenient on
/// purpose (unknown keys ignored, each key optional) since strictness is the main parse's.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Spans {
    name: Option<Spanned<IgnoredAny>>,
    fault: Option<Spanned<IgnoredAny>>,
    deviations: Option<Spanned<IgnoredAny>>,
    revision: Option<Spanned<IgnoredAny>>,
    via: Option<Spanned<IgnoredAny>>,
    client: Vec<Spanned<IgnoredAny>>,
    server: Vec<Spanned<IgnoredAny>>,
    checks: Vec<Spanned<IgnoredAny>>,
}

struct Validator<'a> {
    at: Locator<'a>,
    server_rules: ServerRules<'a>,
}

impl Validator<'_> {
    fn validate(&self, s: &Scenario) -> Result<(), ScenarioError> {
        if s.name.is_empty() || !s.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            let fixed: String = s
                .name
                .to_ascii_lowercase()
                .split(|c: char| !(c.is_ascii_alphanumeric()))
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join("-");
            return Err(self.at.field(
                "name",
                format!("field `name`: {:?} must be lowercase letters, digits and `-` (e.g. `name: {fixed}`)", s.name),
            ));
        }
        if s.transport.to_vec().contains(&TransportName::LegacySse) && s.revision.as_str() != "2024-11-05" {
            return Err(self.at.field("revision", "field `revision`: legacy-sse scenarios speak 2024-11-05 (write `revision: 2024-11-05`, or another transport)"));
        }
        if let Some(via) = &s.via {
            crate::via::validate(via, &s.transport.to_vec())
                .map_err(|m| self.at.field("via", format!("field `via`: {m}")))?;
        }
        if let Some(fault) = s.fault {
            let steps = s.server.len();
            match s.server.get(fault.wrapping_sub(1)) {
                None => {
                    return Err(self.at.field(
                        "fault",
                        format!(
                            "field `fault`: server step {fault} does not exist (the script has {steps} steps, numbered from 1): write the number of the step that makes the scenario's fault"
                        ),
                    ));
                }
                Some(crate::ServerStep::NewConnection(_)) => {
                    return Err(self.at.field(
                        "fault",
                        format!(
                            "field `fault`: server step {fault} is a `new_connection`, which makes no fault: write the number of the step after it that does"
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        for (step, why) in &s.deviations {
            let steps = s.server.len();
            let problem = match s.server.get(step.wrapping_sub(1)) {
                None => {
                    Some(format!("server step {step} does not exist (the script has {steps} steps, numbered from 1)"))
                }
                Some(crate::ServerStep::NewConnection(_)) => {
                    Some(format!("server step {step} is a `new_connection`, which sends nothing"))
                }
                Some(_) if why.trim().is_empty() => Some(format!("server step {step} has no reason")),
                Some(_) => None,
            };
            if let Some(problem) = problem {
                return Err(self.at.field(
                    "deviations",
                    format!(
                        "field `deviations`: {problem}: write `<step number>: \"why the message breaks the revision's schema on purpose\"`"
                    ),
                ));
            }
        }
        // Each op's own rules come from the caller.
        (self.server_rules)(s, &self.at)?;
        let mut plan_labels = HashSet::new();
        let mut abandoned = HashSet::new();
        for (i, step) in s.client.iter().enumerate() {
            let err = |m: String| self.at.client_step(i, m);
            match step {
                ClientStep::Request { label: Some(l), .. } if !plan_labels.insert(l.clone()) => {
                    return Err(err(format!("field `as`: label {l:?} is used twice")));
                }
                ClientStep::Request { background: true, label: None, .. } => {
                    return Err(err("field `as`: a background request needs a label".into()));
                }
                ClientStep::Await { request } | ClientStep::Cancel { request } | ClientStep::Abandon { request }
                    if !plan_labels.contains(request) =>
                {
                    return Err(err(format!("field `request`: no earlier request is labelled {request:?}")));
                }
                ClientStep::Await { request } | ClientStep::Cancel { request } | ClientStep::Abandon { request }
                    if abandoned.contains(request) =>
                {
                    return Err(err(format!(
                        "field `request`: {request:?} was abandoned by an earlier step, so nothing is left to act on; \
                         drop this step, or `cancel` / `await` it before the `abandon`"
                    )));
                }
                ClientStep::Abandon { request } => {
                    abandoned.insert(request.clone());
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_old_bundled_only_field_says_what_replaced_it() {
        let text =
            "name: x\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nbundled_only: true\nclient: []\nserver: []\n";
        let e = super::parse(std::path::Path::new("x.yaml"), text).expect_err("rejected").to_string();
        assert!(e.starts_with("x.yaml:5:1: unknown field `bundled_only`") && e.contains("project:"), "{e}");
    }

    use super::*;
    use crate::script::ServerStep;

    const GOOD: &str = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": []}\nchecks:\n  - outcome: {step: 2, ok: true}\n";

    fn err(text: &str) -> String {
        parse(Path::new("x.yaml"), text).expect_err("must fail").to_string()
    }

    #[test]
    fn runaway_yaml_is_refused_in_words() {
        let deep = format!(
            "name: t\nsummary: s\nclient:\n{}",
            (1..80).map(|i| format!("{}- a:\n", "  ".repeat(i))).collect::<String>()
        );
        let e = err(&deep);
        assert!(e.contains("is beyond what the loader accepts (Depth") && e.contains("nesting too deep"), "{e}");
    }

    #[test]
    fn a_deviation_names_a_step_and_says_why() {
        let base = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n  - op: handshake\n";
        let ok = format!("{base}deviations:\n  1: \"an initialize result without capabilities\"\n");
        assert_eq!(parse(Path::new("x.yaml"), &ok).expect("loads").deviations.len(), 1);
        let missing = format!("{base}deviations:\n  4: \"x\"\n");
        let e = parse(Path::new("x.yaml"), &missing).expect_err("no step 4").to_string();
        assert!(e.contains("x.yaml:10:3: field `deviations`: server step 4 does not exist"), "{e}");
    }

    #[test]
    fn a_fault_step_must_exist() {
        let text = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nfault: 3\nclient:\n  - op: connect\nserver:\n  - op: handshake\n";
        let e = err(text);
        assert!(e.contains("x.yaml:5:8: field `fault`: server step 3 does not exist (the script has 1 steps"), "{e}");
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
    fn messages_name_the_field_its_line_and_what_to_write() {
        let e = err(&GOOD.replace("name: t\n", "name: Wait Sent\n"));
        assert_eq!(
            e,
            "x.yaml:1:7: field `name`: \"Wait Sent\" must be lowercase letters, digits and `-` (e.g. `name: wait-sent`)"
        );
        let e =
            err(&GOOD
                .replace("    method: tools/list\nserver", "    method: tools/list\n    timeout_ms: \"two\"\nserver"));
        assert!(e.starts_with("x.yaml:9:5: field `timeout_ms`: expected a whole number, not string \"two\": write e.g. `timeout_ms: 2`"), "{e}");
        let e = err(&GOOD.replace("  - op: expect\n", "  - op: expct\n"));
        assert!(e.contains("unknown variant `expct`") && e.ends_with("did you mean `expect`?"), "{e}");
        let e = err(&GOOD.replace("    method: tools/list\nserver", "    methd: tools/list\nserver"));
        assert!(e.ends_with("did you mean `method`?"), "{e}");
    }

    #[test]
    fn locator_names_a_check_by_line_and_column() {
        let e = Locator::new(Path::new("x.yaml"), GOOD).check(0, "field `step`: wrong").to_string();
        assert_eq!(e, "x.yaml:16:5: check 1: field `step`: wrong");
        let e = Locator::new(Path::new("x.yaml"), GOOD).check(3, "unknown place").to_string();
        assert_eq!(e, "x.yaml:0:0: check 4: unknown place");
    }

    #[test]
    fn an_abandoned_request_cannot_be_acted_on_again() {
        let plan = "client:\n  - op: connect\n  - op: request\n    method: tools/call\n    background: true\n    as: c\n  - op: abandon\n    request: c\n  - op: await\n    request: c\nserver";
        let e = err(&GOOD.replace("client:\n  - op: connect\n  - op: request\n    method: tools/list\nserver", plan));
        assert!(e.starts_with("x.yaml:13:5: client step 4: field `request`: \"c\" was abandoned"), "{e}");
        let e = err(&GOOD
            .replace("client:\n  - op: connect\n", "client:\n  - op: connect\n  - op: abandon\n    request: nobody\n"));
        assert!(e.contains("field `request`: no earlier request is labelled \"nobody\""), "{e}");
    }

    #[test]
    fn duplicate_keys_and_loose_booleans_are_rejected() {
        err(&GOOD.replace("summary: s\n", "summary: s\nsummary: t\n"));
        err(&GOOD.replace("ok: true", "ok: yes"));
    }

    #[test]
    fn server_rules_report_through_the_locator() {
        // Op rules are the mock's (`mcp_mock::load`); here a stand-in refuses step 3.
        let rules = |s: &Scenario, at: &Locator<'_>| match s.server.get(2) {
            Some(ServerStep::Reply(_)) => Err(at.server_step(2, "no replies today")),
            _ => Ok(()),
        };
        let e = parse_with(Path::new("x.yaml"), GOOD, &rules).expect_err("refused").to_string();
        assert_eq!(e, "x.yaml:13:5: server step 3: no replies today");
        assert!(parse(Path::new("x.yaml"), GOOD).is_ok());
    }
}
