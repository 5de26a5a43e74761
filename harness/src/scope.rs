//! What a run is judged as: which kind of target, over which transport, in which revision.
//! Checks and always-on rules decide from a [`Scope`] whether they apply (DESIGN "Checks:
//! what applies to whom"); the transcript shows step durations for the bundled target only.
//! The run's [`Deadline`] is part of it, so every message about the deadline explains it.

use mcp_scenario::{Revision, TransportName};
use std::fmt;
use std::time::Duration;

/// Environment variable setting the start-up allowance of external clients (ms; by default
/// [`STARTUP_FACTOR`] times the start-up measured, at least [`DEFAULT_STARTUP_MS`]).
pub const STARTUP_ENV: &str = "MCP_HARNESS_STARTUP_MS";

/// The least extra time an external client gets on top of the scenario's deadline, for its
/// runtime to start (node, python and their SDK imports).
pub const DEFAULT_STARTUP_MS: u64 = 2000;

/// The start-up allowance, as a multiple of the start-up measured before the runs: runs
/// start their clients many at once, the measurement starts one alone.
pub const STARTUP_FACTOR: u32 = 3;

/// A run's deadline and where its two parts come from: the scenario's `deadline_ms` (default
/// 3000) plus the target's start-up allowance (none for the bundled client, which runs
/// in-process; [`STARTUP_ENV`] for an external one). Messages about a deadline show this
/// arithmetic, so `8000ms` beside a scenario's `6000` is never a mystery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    /// The scenario's `deadline_ms`.
    pub scenario_ms: u64,
    /// The target's start-up allowance, in ms.
    pub startup_ms: u64,
}

impl Deadline {
    /// The whole deadline.
    pub fn total(self) -> Duration {
        Duration::from_millis(self.scenario_ms + self.startup_ms)
    }

    /// Why a step was not run when the deadline ended the run, for transcripts and snapshots:
    /// the scenario's part only, as the start-up allowance is measured and so varies with the
    /// machine's load (a snapshot holds no timing).
    pub fn expired(self) -> String {
        if self.startup_ms == 0 {
            format!("run deadline of {}ms expired", self.scenario_ms)
        } else {
            format!("run deadline of {}ms + the start-up allowance expired", self.scenario_ms)
        }
    }
}

impl fmt::Display for Deadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.startup_ms == 0 {
            write!(f, "{}ms (the scenario's `deadline_ms`, default 3000)", self.scenario_ms)
        } else {
            write!(
                f,
                "{}ms (the scenario's `deadline_ms` {}ms, default 3000, + {}ms start-up allowance for an external client's runtime: {STARTUP_FACTOR}× its measured start-up, at least {DEFAULT_STARTUP_MS}, or {STARTUP_ENV})",
                self.scenario_ms + self.startup_ms,
                self.scenario_ms,
                self.startup_ms
            )
        }
    }
}

/// The kind of client under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// The bundled transports, in-process: judged on SPEC.md's project rules too (exact
    /// error texts, diagnostic counters, `params` always present).
    Bundled,
    /// A client run as an external program (`cmd:`): judged on the wire and on outcome
    /// classes only; its own wording is recorded, not judged.
    External,
}

impl TargetKind {
    /// The label transcripts show (`bundled`, `cmd`).
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Bundled => "bundled",
            TargetKind::External => "cmd",
        }
    }

    /// Whether this is the bundled client (judged on SPEC.md's project rules).
    pub fn is_bundled(self) -> bool {
        self == TargetKind::Bundled
    }

    /// How transcripts name this kind of client and show its step durations.
    pub fn client(self) -> mcp_mock::transcript::render::Client {
        mcp_mock::transcript::render::Client { label: self.as_str(), bundled: self.is_bundled() }
    }
}

/// One run's target kind, transport and revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    /// The kind of client under test.
    pub target: TargetKind,
    /// The transport of the run.
    pub transport: TransportName,
    /// The revision the scenario speaks.
    pub revision: Revision,
    /// The run's deadline.
    pub deadline: Deadline,
}

#[cfg(test)]
mod tests {
    use super::Deadline;

    #[test]
    fn a_deadline_shows_where_its_numbers_come_from() {
        let external = Deadline { scenario_ms: 6000, startup_ms: 2000 };
        assert_eq!(
            external.to_string(),
            "8000ms (the scenario's `deadline_ms` 6000ms, default 3000, + 2000ms start-up allowance for an external client's runtime: 3× its measured start-up, at least 2000, or MCP_HARNESS_STARTUP_MS)"
        );
        assert_eq!(external.total().as_millis(), 8000);
        let bundled = Deadline { scenario_ms: 3000, startup_ms: 0 };
        assert_eq!(bundled.to_string(), "3000ms (the scenario's `deadline_ms`, default 3000)");
    }

    #[test]
    fn an_expired_deadline_names_no_measured_time() {
        let loaded = Deadline { scenario_ms: 6000, startup_ms: 2750 };
        assert_eq!(loaded.expired(), "run deadline of 6000ms + the start-up allowance expired");
        assert_eq!(Deadline { startup_ms: 2000, ..loaded }.expired(), loaded.expired());
        assert_eq!(Deadline { scenario_ms: 3000, startup_ms: 0 }.expired(), "run deadline of 3000ms expired");
    }
}
