//! What the checks' unit tests share: a scenario holding one check, and that check judged
//! against a bundled run whose mock recorded the given events.

use super::Run;
use crate::scope::{Deadline, Scope, TargetKind};
use crate::transcript::Transcript;
use mcp_results::ClientOutcome;
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, checks::Check};

/// A scenario over `transport` (2025-11-25, a bare `connect`) whose one check is `check`,
/// written as in a file (`sent: {method: ping}`).
pub fn scenario(transport: &str, check: &str) -> Scenario {
    let text = format!(
        "name: t\nsummary: s\ntransport: {transport}\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver: []\nchecks:\n  - {check}\n    project: \"SPEC §0\"\n"
    );
    mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &text).expect("parses")
}

/// A stdio scenario (2025-11-25) whose plan is `client` (YAML list items, each line ending
/// in a newline) and whose server only runs the handshake: for checks that read the plan.
pub fn with_plan(client: &str) -> Scenario {
    let text = format!(
        "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n{client}server:\n  - op: handshake\n"
    );
    mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &text).expect("parses")
}

/// An HTTP scenario (2025-11-25, a bare `connect`) whose server script is `server` (YAML list
/// items, each line ending in a newline), which may go on with the scenario's `checks:`.
pub fn with_script(server: &str) -> Scenario {
    let text = format!(
        "name: t\nsummary: s\ntransport: http\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n{server}"
    );
    mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &text).expect("parses")
}

/// The scope of a third-party (`cmd:`) run of `scenario` over its first transport, with the
/// default deadline and no start-up allowance.
pub fn external_scope(scenario: &Scenario) -> Scope {
    Scope {
        target: TargetKind::External,
        transport: scenario.transport.to_vec()[0],
        revision: scenario.revision,
        deadline: Deadline { scenario_ms: scenario.deadline_ms, startup_ms: 0 },
    }
}

/// Plan step `step`, reported as succeeded.
pub fn ok_step(step: usize) -> mcp_results::StepOutcome {
    mcp_results::StepOutcome {
        step,
        what: String::new(),
        status: mcp_results::StepStatus::Ok,
        result: None,
        error: None,
        elapsed_ms: 1,
    }
}

/// `evaluate` applied to the scenario's one check and a bundled run over `events`.
pub fn judge<T>(scenario: &Scenario, events: Vec<WireEvent>, evaluate: impl FnOnce(&Check, &Run<'_>) -> T) -> T {
    judge_outcome(scenario, events, &ClientOutcome::default(), evaluate)
}

/// [`judge`] with the client's outcome given too.
pub fn judge_outcome<T>(
    scenario: &Scenario,
    events: Vec<WireEvent>,
    outcome: &ClientOutcome,
    evaluate: impl FnOnce(&Check, &Run<'_>) -> T,
) -> T {
    let transcript = Transcript::new(vec![events]);
    let scope = Scope {
        target: TargetKind::Bundled,
        transport: scenario.transport.to_vec()[0],
        revision: scenario.revision,
        deadline: Deadline { scenario_ms: scenario.deadline_ms, startup_ms: 0 },
    };
    let run = Run { scenario, scope, outcome, transcript: &transcript };
    evaluate(&scenario.checks[0].check, &run)
}
