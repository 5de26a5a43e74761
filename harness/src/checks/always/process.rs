//! `always: client process ends cleanly`: an external client exits 0 by itself — not by a
//! crash, a signal, a non-zero exit, or the harness killing it for flooding stdout — and
//! leaves nothing behind in its process group but the mock (whose pids the mock records;
//! it exits on its own once its stdin closes). A hang
//! is judged by the deadline rule; a client that could not start is a harness error. Only
//! external clients have a process report, so the bundled target never breaks it. It rests
//! on the scenario's strongest check (see `scenario_basis`).

use super::{At, Rule};
use crate::checks::Run;
use mcp_scenario::basis::Level;
use mcp_scenario::results::{Leftover, ProcessEnd};

/// See the module docs.
pub struct ProcessEndsCleanly;

impl Rule for ProcessEndsCleanly {
    const NAME: &'static str = "client process ends cleanly";
    const BASIS: (Level, Option<&'static str>) = (Level::Unclassified, None);
    type Violation = Unclean;

    /// A crash or a leftover names no MCP sentence of its own: it weighs what the scenario's
    /// checks weigh (a crash in a scenario of SPEC.md rules is a note for a third party).
    fn basis(&self, run: &Run<'_>) -> (Level, Option<String>) {
        super::scenario_basis(run)
    }

    fn judge(&self, run: &Run<'_>) -> Vec<(At, Unclean)> {
        let Some(report) = &run.outcome.process else { return Vec::new() };
        match &report.end {
            ProcessEnd::Exited { code: 0 } => {
                let mocks: Vec<u32> = run.transcript.mock_pids().collect();
                let left: Vec<_> = report.leftovers.iter().filter(|l| !mocks.contains(&l.pid)).cloned().collect();
                if left.is_empty() { Vec::new() } else { vec![(At::End, Unclean::LeftBehind { left })] }
            }
            ProcessEnd::KilledAtDeadline | ProcessEnd::NotStarted { .. } => Vec::new(),
            ProcessEnd::Exited { .. } | ProcessEnd::Signalled { .. } | ProcessEnd::KilledForFlooding { .. } => {
                let last_stderr = report.stderr_tail.lines().rev().find(|l| !l.trim().is_empty());
                let last_stderr = last_stderr.map(|l| l.chars().take(300).collect());
                vec![(At::End, Unclean::Ended { end: report.end.clone(), last_stderr })]
            }
        }
    }
}

/// How the process ended badly.
#[derive(Debug, thiserror::Error)]
pub enum Unclean {
    /// It did not exit 0 by itself: how it ended, with the last line it wrote to stderr.
    #[error("{end}{}", last_line(.last_stderr))]
    Ended { end: ProcessEnd, last_stderr: Option<String> },
    /// It exited 0 but left processes in its group (the harness killed them).
    #[error("client exited 0 but left {} process(es) behind in its process group (killed by the harness): {}", .left.len(), named(.left))]
    LeftBehind { left: Vec<Leftover> },
}

fn named(left: &[Leftover]) -> String {
    left.iter().map(|l| format!("pid {} `{}`", l.pid, l.command)).collect::<Vec<_>>().join(", ")
}

fn last_line(line: &Option<String>) -> String {
    line.as_ref().map(|l| format!("; last stderr line: {l}")).unwrap_or_default()
}
