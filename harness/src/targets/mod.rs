//! Targets: which client runs the scenarios, behind one trait.
//!
//! - [`Client`] (this file) — what the runner asks of a client under test.
//! - [`Target`] (this file) — a parsed `--target` value: one [`Client`].
//! - [`bundled`] — the bundled transports, driven in-process through the client plan.
//! - [`cmd`] — any client as an external program under `clients/README.md`'s contract,
//!   with its process hygiene (deadline, process group, capped pipes).
//! - [`persistent`] — the same contract with one driver process serving many plans
//!   (`cmd+persistent:`), restarted after any run it did not end cleanly.
//! - [`declaration`] — what an external driver declares it handles, asked once before the
//!   runs; plans using anything else are skipped with the field named.
//! - [`readiness`] — when a stdio server the bundled client spawned is serving, so its
//!   connect clock starts then.
//! - `escapees` — who an external client left running outside its process group (its
//!   group itself: [`crate::process_group`]).

pub mod bundled;
pub mod cmd;
pub mod declaration;
mod escapees;
pub mod persistent;
pub mod readiness;

use crate::error::HarnessError;
use crate::scope::TargetKind;
use futures::future::BoxFuture;
use mcp_results::ClientOutcome;
use mcp_scenario::{Scenario, TransportName};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The least time a stdio server left running by a client that is done may take to read what
/// the client wrote last ([`crate::run_record::RunRecord::until_mocks_served_all`]), however
/// little of the run's deadline is left: the client's own exit is not the run's fault.
pub(crate) const MOCK_SERVE_FLOOR: Duration = Duration::from_secs(1);

/// Where the client finds the mock server for this run.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// stdio: the command line that starts the mock (the client spawns it).
    Command(Vec<String>),
    /// HTTP kinds: the mock's URL.
    Url(String),
}

/// The client side of one run, as the runner hands it to a target.
#[derive(Debug)]
pub struct ClientRun<'a> {
    /// The scenario (its client plan, revision, name).
    pub scenario: &'a Scenario,
    /// The transport of this run.
    pub transport: TransportName,
    /// Where the mock is.
    pub endpoint: Endpoint,
    /// The run's record, in the run's directory where the mock records the wire
    /// (`conn-<n>.jsonl`): what a `wait_sent` step follows, read once for the whole run.
    pub record: &'a crate::run_record::RunRecord,
    /// When the client part is cut short: the scenario's deadline plus the target's
    /// [`Client::startup_allowance`].
    pub deadline: crate::scope::Deadline,
}

/// A client under test. The runner knows targets only through this trait.
pub trait Client: fmt::Debug + Send + Sync {
    /// The target as given on the command line (`bundled`, `bundled:http`, `cmd:<line>`);
    /// reports show it.
    fn spec(&self) -> String;

    /// What the target's runs are judged as (which checks and rules apply).
    fn kind(&self) -> TargetKind;

    /// Whether the target runs scenarios over `transport`.
    fn covers(&self, transport: TransportName) -> bool;

    /// How long the client normally takes from being asked to run a plan to spawning a
    /// stdio server: the part of a run's start-up that is the client's own, not the
    /// machine's (`crate::starvation`). Zero for a client already running.
    fn usual_startup(&self) -> Duration {
        Duration::ZERO
    }

    /// Whether the client's connect clock starts only once the stdio server it spawned is
    /// serving (the bundled plan runner waits for the mock's readiness before its
    /// handshake), so the server's start-up is in none of the scenario's times. An SDK that
    /// spawns the server and starts its handshake's timer at once counts the start-up
    /// (`clients/CONTRACT.md`, `connect.timeout_ms`): for it, a slow start is a lag
    /// (`crate::starvation`).
    fn waits_for_server_ready(&self) -> bool {
        false
    }

    /// Extra time on top of the scenario's deadline, for the client to start.
    fn startup_allowance(&self) -> Duration {
        Duration::ZERO
    }

    /// Runs at once per core by default (`-j` overrides).
    fn runs_per_core(&self) -> usize;

    /// Observation-window runs (plans that mostly idle on purpose) at once per core, on top
    /// of [`Client::runs_per_core`], so a window takes no slot from the short runs. Default 0:
    /// windows share the short runs' slots, for a client whose start-up burns CPU.
    fn window_runs_per_core(&self) -> usize {
        0
    }

    /// The `@<label>` that names this client's snapshots beside the bundled client's.
    fn snapshot_label(&self) -> Option<String> {
        None
    }

    /// Runs the client through the plan against the mock at `run.endpoint`, never past
    /// `run.deadline` (plus a bounded clean-up). The outcome has one entry per plan step;
    /// `hung` says whether the deadline cut the run short.
    fn run<'a>(&'a self, run: ClientRun<'a>) -> BoxFuture<'a, ClientOutcome>;

    /// Called once before the runs with how many may run at once: starts what the target
    /// keeps between runs (persistent drivers), so no run's mock waits on a start-up.
    fn warm_up(&self, _slots: usize) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// Called once the runs are over: ends whatever the target keeps between runs (a
    /// persistent driver). Runs after it start afresh.
    fn finish(&self) {}

    /// Why the scenario is skipped for this client before anything runs, if it is: its plan
    /// uses an op or field the driver does not declare (known once [`Client::warm_up`] ran).
    fn declines(&self, _scenario: &Scenario) -> Option<String> {
        None
    }
}

/// The client under test, as parsed from `--target`.
#[derive(Debug, Clone)]
pub struct Target(Arc<dyn Client>);

impl Target {
    /// Parses `bundled`, `bundled:stdio`, `bundled:http`, `bundled:legacy-sse`, `cmd:<line>`,
    /// `cmd+persistent:<line>`.
    pub fn parse(s: &str) -> Result<Self, HarnessError> {
        match s {
            "bundled" => Ok(Target::bundled(None)),
            "bundled:stdio" => Ok(Target::bundled(Some(TransportName::Stdio))),
            "bundled:http" => Ok(Target::bundled(Some(TransportName::Http))),
            "bundled:legacy-sse" => Ok(Target::bundled(Some(TransportName::LegacySse))),
            _ => match (s.strip_prefix("cmd:"), s.strip_prefix("cmd+persistent:")) {
                (Some(line), _) if !line.trim().is_empty() => Ok(Target::cmd(line.trim())),
                (_, Some(line)) if !line.trim().is_empty() => {
                    Ok(Target(Arc::new(persistent::Persistent::new(line.trim()))))
                }
                _ => Err(HarnessError::UnknownTarget(s.to_string())),
            },
        }
    }

    /// The bundled transports; `None` runs every transport a scenario names.
    pub fn bundled(only: Option<TransportName>) -> Self {
        Target(Arc::new(bundled::Bundled::new(only)))
    }

    /// An external client program (see `clients/README.md`).
    pub fn cmd(command_line: impl Into<String>) -> Self {
        Target(Arc::new(cmd::Cmd::new(command_line)))
    }
}

impl std::ops::Deref for Target {
    type Target = dyn Client;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_targets_and_rejects_others() {
        let parsed = |s: &str| Target::parse(s).expect("parses").to_string();
        assert_eq!(parsed("bundled:stdio"), "bundled:stdio");
        assert_eq!(parsed("bundled"), "bundled");
        assert_eq!(parsed("cmd: node x.js"), "cmd:node x.js");
        assert!(Target::parse("bundeld").is_err());
        assert!(Target::parse("cmd:").is_err());
        assert_eq!(parsed("cmd+persistent: node x.js"), "cmd+persistent:node x.js");
        assert!(Target::parse("cmd+persistent:").is_err());
        let warm = Target::parse("cmd+persistent:node x.js").expect("parses");
        let cold = Target::parse("cmd:node x.js").expect("parses");
        assert_eq!(warm.snapshot_label(), cold.snapshot_label(), "one client, one set of snapshots");
        let stdio = Target::parse("bundled:stdio").expect("parses");
        assert!(stdio.covers(TransportName::Stdio) && !stdio.covers(TransportName::Http));
        assert_eq!(Target::parse("cmd:x").expect("parses").kind(), TargetKind::External);
    }
}
