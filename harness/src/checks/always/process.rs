//! `always: client process ends cleanly`: an external client exits 0 by itself — not by a
//! crash, a signal, a non-zero exit, or the harness killing it for flooding stdout or
//! stderr — having reported every plan step (or one unsupported), and leaves nothing
//! behind but the mock (whose pids the mock records; it exits on its own once its stdin
//! closes): neither in its process group nor outside it (a process that moved out with
//! `setsid`, however the client ended, since the group kill cannot reach it). Each message
//! says what the client did and what to do about it. A hang
//! is judged by the deadline rule; a client that could not start is a harness error. Only
//! external clients have a process report, so the bundled target never breaks it. It rests
//! on no MCP sentence but on the harm to the host (crashed on input, left processes behind):
//! a robustness finding, the same level in every scenario.

use super::{At, Rule};
use crate::checks::Run;
use mcp_results::{Escaped, Leftover, Pipe, ProcessEnd, ProcessReport, StepStatus};
use mcp_scenario::basis::Level;

/// See the module docs.
pub struct ProcessEndsCleanly;

/// What a robustness finding about the client's process rests on.
const HARM: &str = "a host's client must not crash on what a server sends, nor leave processes behind (no MCP sentence; the harm is the host's)";

impl Rule for ProcessEndsCleanly {
    const NAME: &'static str = "client process ends cleanly";
    type Violation = Unclean;

    /// A crash or a leftover names no MCP sentence of its own: it is harm to the host, a
    /// robustness finding whatever the scenario checks.
    fn basis(&self, _run: &Run<'_>) -> (Level, Option<String>) {
        (Level::Robustness, Some(HARM.into()))
    }

    fn judge(&self, run: &Run<'_>) -> Vec<(At, Unclean)> {
        let Some(report) = &run.outcome.process else { return Vec::new() };
        let mocks: Vec<u32> = run.transcript.mock_pids().collect();
        let reported = Reported::of(run);
        let mut found = Vec::new();
        match &report.end {
            ProcessEnd::Exited { code: 0 } if reported.silent_end() => {
                found.push(Unclean::Unreported { reported: reported.clone() });
            }
            ProcessEnd::Exited { code: 0 } | ProcessEnd::KilledAtDeadline | ProcessEnd::NotStarted { .. } => {}
            ProcessEnd::Exited { .. } | ProcessEnd::Signalled { .. } | ProcessEnd::KilledForFlooding { .. } => {
                // A line of NULs or escapes says nothing: the last one with something to read.
                let readable = |l: &&str| l.chars().any(|c| !c.is_whitespace() && !c.is_control());
                let last_stderr = report.stderr_tail.lines().rev().find(readable);
                let last_stderr = last_stderr.map(|l| l.chars().take(300).collect());
                found.push(Unclean::Ended {
                    end: report.end.clone(),
                    reported: reported.clone(),
                    advice: advice(report),
                    last_stderr,
                });
            }
        }
        let left: Vec<_> = report.leftovers.iter().filter(|l| !mocks.contains(&l.pid)).cloned().collect();
        if !left.is_empty() {
            found.push(Unclean::LeftBehind { end: report.end.clone(), left });
        }
        let escaped: Vec<_> = report.escaped.iter().filter(|e| !mocks.contains(&e.process.pid)).cloned().collect();
        if !escaped.is_empty() {
            found.push(Unclean::Escaped { end: report.end.clone(), escaped });
        }
        found.into_iter().map(|v| (At::End, v)).collect()
    }
}

/// How far the client got through its plan, in its own lines.
#[derive(Debug, Clone)]
pub struct Reported {
    /// Steps it reported (ok, error or unsupported).
    lines: usize,
    /// Plan steps.
    total: usize,
    /// The first step it never reported, described.
    first_missing: Option<String>,
    /// Whether it reported a step unsupported (it may then stop: the run is skipped).
    unsupported: bool,
}

impl Reported {
    fn of(run: &Run<'_>) -> Self {
        let steps = &run.outcome.steps;
        let missing = steps.iter().find(|s| s.status == StepStatus::NotRun);
        Reported {
            lines: steps.iter().filter(|s| s.status != StepStatus::NotRun).count(),
            total: run.scenario.client.len(),
            first_missing: missing.map(|s| format!("step {} ({})", s.step, s.what)),
            unsupported: steps.iter().any(|s| s.status == StepStatus::Unsupported),
        }
    }

    /// A clean exit that left steps without a line, with no unsupported step to explain it.
    fn silent_end(&self) -> bool {
        self.first_missing.is_some() && !self.unsupported
    }
}

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "after reporting {} of {} plan steps", self.lines, self.total)?;
        match &self.first_missing {
            Some(step) => write!(f, "; {step} got no line"),
            None => Ok(()),
        }
    }
}

/// What to do about an end, for the message: the contract rule the end broke.
fn advice(report: &ProcessReport) -> String {
    match &report.end {
        ProcessEnd::KilledForFlooding { pipe: Pipe::Stdout, .. } => {
            "only contract lines belong on stdout (clients/README.md): send logs to stderr".into()
        }
        ProcessEnd::KilledForFlooding { pipe: Pipe::Stderr, .. } => format!(
            "it wrote {} bytes to stderr, far more than any log (the last {} kept, the rest dropped): find what loops writing there",
            report.stderr_bytes,
            report.stderr_tail.len()
        ),
        ProcessEnd::Signalled { .. } => {
            "the harness sent it no signal: the driver or its SDK crashed or was killed from outside; see its stderr (results.json, client.stderr_tail)".into()
        }
        _ => "a non-zero exit means the driver or its SDK broke (clients/README.md); see its stderr (results.json, client.stderr_tail)".into(),
    }
}

/// How the process ended badly.
#[derive(Debug, thiserror::Error)]
pub enum Unclean {
    /// It did not exit 0 by itself: how it ended, how far it got, what to do, and the last
    /// line it wrote to stderr.
    #[error("{end} {reported}: {advice}{}", last_line(.last_stderr))]
    Ended { end: ProcessEnd, reported: Reported, advice: String, last_stderr: Option<String> },
    /// It exited 0 without reporting every step, and reported none unsupported.
    #[error(
        "client exited 0 {reported}: a driver prints one line per plan step (or stops at an unsupported one) before it exits (clients/README.md); an SDK call that returned early or a swallowed exception ends a driver like this"
    )]
    Unreported { reported: Reported },
    /// It left processes in its group (the harness killed them).
    #[error("{end} but left {} process(es) behind in its process group (killed by the harness): {}; a client ends what it started before it exits", .left.len(), named(.left))]
    LeftBehind { end: ProcessEnd, left: Vec<Leftover> },
    /// Processes it started left its group and outlived it (the harness killed them).
    #[error("{end} but left {} process(es) running outside its process group (moved out with setsid/setpgid, so killing the group missed them; killed by the harness): {}; a client ends what it started before it exits", .escaped.len(), escaped_named(.escaped))]
    Escaped { end: ProcessEnd, escaped: Vec<Escaped> },
}

fn named(left: &[Leftover]) -> String {
    left.iter().map(|l| format!("pid {} `{}`", l.pid, l.command)).collect::<Vec<_>>().join(", ")
}

fn escaped_named(escaped: &[Escaped]) -> String {
    let one = |e: &Escaped| {
        let how = if e.holding.is_empty() {
            "found by MCP_HARNESS_RUN_DIR in its environment".to_string()
        } else {
            let pipes: Vec<String> = e.holding.iter().map(ToString::to_string).collect();
            format!("holding the client's {} open", pipes.join(" and "))
        };
        format!("pid {} `{}` ({how})", e.process.pid, e.process.command)
    };
    escaped.iter().map(one).collect::<Vec<_>>().join(", ")
}

fn last_line(line: &Option<String>) -> String {
    line.as_ref().map(|l| format!("; last stderr line: {l}")).unwrap_or_default()
}
