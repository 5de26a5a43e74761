//! `always: client process ends cleanly`: an external client exits 0 by itself — not by a
//! crash, a signal, a non-zero exit, or the harness killing it for flooding stdout. A hang
//! is judged by the deadline rule; a client that could not start is a harness error. Only
//! external clients have a process report, so the bundled target never breaks it.

use super::{At, Rule};
use crate::checks::Run;
use mcp_scenario::results::ProcessEnd;

/// See the module docs.
pub struct ProcessEndsCleanly;

impl Rule for ProcessEndsCleanly {
    const NAME: &'static str = "client process ends cleanly";
    type Violation = Unclean;

    fn judge(&self, run: &Run<'_>) -> Vec<(At, Unclean)> {
        let Some(report) = &run.outcome.process else { return Vec::new() };
        match &report.end {
            ProcessEnd::Exited { code: 0 } | ProcessEnd::KilledAtDeadline | ProcessEnd::NotStarted { .. } => Vec::new(),
            ProcessEnd::Exited { .. } | ProcessEnd::Signalled { .. } | ProcessEnd::KilledForFlooding { .. } => {
                let last_stderr = report.stderr_tail.lines().rev().find(|l| !l.trim().is_empty());
                let last_stderr = last_stderr.map(|l| l.chars().take(300).collect());
                vec![(At::End, Unclean { end: report.end.clone(), last_stderr })]
            }
        }
    }
}

/// How the process ended, with the last line it wrote to stderr.
#[derive(Debug, thiserror::Error)]
#[error("{end}{}", last_line(.last_stderr))]
pub struct Unclean {
    end: ProcessEnd,
    last_stderr: Option<String>,
}

fn last_line(line: &Option<String>) -> String {
    line.as_ref().map(|l| format!("; last stderr line: {l}")).unwrap_or_default()
}
