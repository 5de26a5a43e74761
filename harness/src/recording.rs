//! Judging a recording of a real MCP host (`mcp-harness check-record <scenario> <FILE>`):
//! a host pointed at `mcp-mock serve|stdio --record FILE` cannot be scripted, but what it
//! sent can still be checked.
//!
//! The checks read the structured record beside `FILE` (`FILE.wire/`, see
//! [`mcp_mock::live`]), never the rendering, which is shortened and renumbered for people.
//! They run as for a third-party client (MUSTs fail, SHOULDs warn, SPEC.md rules are
//! notes); checks that read what a client reports about its plan (`outcome`, `error_is`,
//! `notified` …) are listed as not applicable, never passed, since a host runs no plan.

use crate::checks;
use crate::error::HarnessError;
use crate::run_record::{RunRecord, RunWire};
use crate::scope::{Scope, TargetKind};
use crate::transcript::render;
use mcp_mock::live::{About, record_dir_of};
use mcp_results::{ClientOutcome, RunResult, SnapshotStatus, Status};
use mcp_scenario::{Scenario, TransportName};
use std::path::{Path, PathBuf};

/// The label results and the summary give a recording's client.
pub const TARGET: &str = "host recording";

/// Judges the recording at `recording` (the `--record FILE`, or its record dir) against
/// `scenario`, loaded from `path`. `transport` picks the transport when the recording does
/// not say (a record dir written with `--run-dir`) and the scenario lists several.
pub fn check(
    path: &Path,
    scenario: &Scenario,
    recording: &Path,
    transport: Option<TransportName>,
    strict: bool,
) -> Result<RunResult, HarnessError> {
    let dir = record_dir(recording)?;
    let about = About::read(&dir);
    if let Some(about) = &about
        && about.scenario != scenario.name
    {
        return Err(HarnessError::Recording(format!(
            "{} is a recording of scenario `{}`, not of `{}` ({}): give the scenario it was recorded with",
            recording.display(),
            about.scenario,
            scenario.name,
            path.display()
        )));
    }
    let transport = pick_transport(scenario, transport, about.as_ref().map(|a| a.transport), recording)?;
    // Read once, as a run's record is: one transcript, one redactor.
    let RunWire { transcript, mut redactor } = RunRecord::new(&dir).into_wire(Vec::new());
    if transcript.connections().is_empty() {
        return Err(HarnessError::Recording(format!(
            "{} holds no connection (no conn-1.jsonl): the mock never started serving there",
            dir.display()
        )));
    }
    let outcome = ClientOutcome::default();
    let deadline = crate::scope::Deadline { scenario_ms: scenario.deadline_ms, startup_ms: 0 };
    let scope = Scope { target: TargetKind::External, transport, revision: scenario.revision, deadline };
    let run = checks::Run { scenario, scope, outcome: &outcome, transcript: &transcript };
    let mut judged = checks::evaluate_recording(&run);
    // A host is bound by a promise naming `host recording` (or `host`); no other is.
    checks::promise::unbind(scenario, TARGET, &mut judged);
    let mut judged_list = checks::judged(&run, &judged);
    checks::promise::not_applicable(scenario, TARGET, &mut judged_list);
    let wire =
        transcript.connections().iter().map(|c| c.recorded().iter().map(|e| redactor.event(e)).collect()).collect();
    let mut weighed = checks::weigh(judged.unmet, scope.target, strict);
    let status = if weighed.failures.is_empty() { Status::Passed } else { Status::Failed };
    let mut notes = weighed.notes;
    notes.extend(judged.unjudged);
    // Verdict texts quote the wire: they read as the transcript does (as in a run's).
    for c in weighed.failures.iter_mut().chain(&mut weighed.warnings).chain(&mut notes) {
        c.message = redactor.text(&c.message);
    }
    Ok(RunResult {
        scenario: scenario.name.clone(),
        path: path.to_path_buf(),
        transport,
        target: TARGET.into(),
        status,
        duration_ms: 0,
        failures: weighed.failures,
        warnings: weighed.warnings,
        notes,
        reason: None,
        snapshot: SnapshotStatus::NotCompared,
        transcript: render::transcript(scenario, transport, render::Client::HOST, &outcome, &transcript, &mut redactor),
        steps: Vec::new(),
        client: None,
        baseline: None,
        mock_pids: transcript.mock_pids().collect(),
        wire,
        judged: judged_list,
        load: None,
    })
}

/// The record dir of a recording: `FILE.wire/` beside `--record FILE`, or a directory given
/// as it is (a `--run-dir`).
fn record_dir(recording: &Path) -> Result<PathBuf, HarnessError> {
    if recording.is_dir() {
        return Ok(recording.to_path_buf());
    }
    let dir = record_dir_of(recording);
    if dir.is_dir() {
        return Ok(dir);
    }
    Err(HarnessError::Recording(format!(
        "no structured record beside {}: expected the directory {} that `mcp-mock serve|stdio --record {}` writes (or give a --run-dir directory)",
        recording.display(),
        dir.display(),
        recording.display()
    )))
}

/// The recording's transport: the one asked for, else the one it says, else the scenario's
/// only one.
fn pick_transport(
    scenario: &Scenario,
    asked: Option<TransportName>,
    recorded: Option<TransportName>,
    recording: &Path,
) -> Result<TransportName, HarnessError> {
    let listed = scenario.transport.to_vec();
    let names = || listed.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(", ");
    match (asked, recorded) {
        (Some(a), Some(r)) if a != r => Err(HarnessError::Recording(format!(
            "{} was recorded over {}, not {}: drop --transport or give {}",
            recording.display(),
            r.as_str(),
            a.as_str(),
            r.as_str()
        ))),
        (Some(t), _) | (None, Some(t)) if listed.contains(&t) => Ok(t),
        (Some(t), _) | (None, Some(t)) => Err(HarnessError::Recording(format!(
            "the scenario does not run over {} (its `transport` lists {})",
            t.as_str(),
            names()
        ))),
        (None, None) => match listed.as_slice() {
            [one] => Ok(*one),
            _ => Err(HarnessError::Recording(format!(
                "{} does not say its transport and the scenario lists {}: pass --transport",
                recording.display(),
                names()
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(transport: &str) -> Scenario {
        let text = format!(
            "name: t\nsummary: s\ntransport: {transport}\nrevision: 2024-11-05\nclient:\n  - op: connect\nserver:\n  - op: handshake\n"
        );
        mcp_mock::load::parse(Path::new("t.yaml"), &text).expect("parses")
    }

    #[test]
    fn the_transport_comes_from_the_flag_the_recording_or_the_scenario() {
        let both = scenario("[http, legacy-sse]");
        let f = Path::new("f");
        assert_eq!(pick_transport(&both, None, Some(TransportName::LegacySse), f).ok(), Some(TransportName::LegacySse));
        assert_eq!(pick_transport(&both, Some(TransportName::Http), None, f).ok(), Some(TransportName::Http));
        let unsaid = pick_transport(&both, None, None, f).expect_err("ambiguous").to_string();
        assert!(unsaid.contains("pass --transport"), "{unsaid}");
        let clash = pick_transport(&both, Some(TransportName::Http), Some(TransportName::LegacySse), f);
        assert!(clash.expect_err("clash").to_string().contains("recorded over legacy-sse"));
        let stdio = scenario("stdio");
        assert_eq!(pick_transport(&stdio, None, None, f).ok(), Some(TransportName::Stdio));
        assert!(pick_transport(&stdio, Some(TransportName::Http), None, f).is_err());
    }
}
