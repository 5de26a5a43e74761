//! A scenario's timing margin: how late the machine may run before its verdict could turn
//! on the lateness instead of on the client. Every verdict that involves time compares two
//! times — a request timeout against a server delay, a plan `wait` against a stall, a
//! backoff against its tolerance, a step against the run deadline — so the margin is the
//! smallest gap between two times the scenario names (each `…_ms` or `ms` field), and between
//! each of them and zero (a timer against an answer sent at once) and the deadline. Pairs
//! that never race make it smaller than it needs to be: that costs a re-run, never a wrong
//! verdict.

use mcp_scenario::Scenario;
use serde_json::Value;
use std::time::Duration;

/// The smallest margin a scenario gets: a 2-core machine running the library beside a build
/// lags some tens of ms, up to about this; below it most of the library would re-run. The
/// library's real races keep 250 ms apart (`harness/tests/harness/margins.rs`).
pub const FLOOR: Duration = Duration::from_millis(100);

/// A scenario's two limits on a run's lag, each at least [`FLOOR`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Margins {
    /// The timing margin: the smallest gap between two times the scenario names, or between
    /// one and zero or the deadline.
    pub timing: Duration,
    /// The room a plan has before its deadline: the deadline less the longest time the
    /// scenario names. What a run the deadline ended is held to: a lag shorter than this
    /// could not have kept its plan from finishing.
    pub slack: Duration,
}

/// The scenario's margins (one walk over its times).
pub fn of(scenario: &Scenario) -> Margins {
    let mut times = Vec::new();
    if let Ok(value) = serde_json::to_value(scenario) {
        collect(&value, false, &mut times);
    }
    let deadline = scenario.deadline_ms;
    let mut margin = deadline;
    for (i, &a) in times.iter().enumerate() {
        margin = margin.min(a);
        if a < deadline {
            margin = margin.min(deadline - a);
        }
        for &b in &times[i + 1..] {
            if a != b {
                margin = margin.min(a.abs_diff(b));
            }
        }
    }
    let longest = times.iter().copied().max().unwrap_or(0);
    Margins {
        timing: Duration::from_millis(margin).max(FLOOR),
        slack: Duration::from_millis(deadline.saturating_sub(longest)).max(FLOOR),
    }
}

/// Every positive number under a key named `ms` or ending in `_ms` (but the deadline, which
/// the margin measures against), arrays of them included.
fn collect(value: &Value, timed: bool, out: &mut Vec<u64>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let timed = key != "deadline_ms" && (key == "ms" || key.ends_with("_ms"));
                collect(v, timed, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, timed, out)),
        Value::Number(n) if timed => out.extend(n.as_u64().filter(|&ms| ms > 0)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `tools/list` scenario with a 2000 ms deadline: the request bounded by `timeout_ms`,
    /// the mock's reply delayed by `delay_ms` (each left out when `None`).
    fn listing(timeout_ms: Option<u64>, delay_ms: Option<u64>) -> Scenario {
        let timeout = timeout_ms.map_or_else(String::new, |ms| format!("    timeout_ms: {ms}\n"));
        let delay = delay_ms.map_or_else(String::new, |ms| format!("  - op: delay\n    ms: {ms}\n"));
        let text = format!(
            "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\ndeadline_ms: 2000\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\n{timeout}server:\n  - op: handshake\n  - op: expect\n    method: tools/list\n{delay}  - op: reply\n    result: {{\"tools\": []}}\nchecks:\n  - outcome: {{step: 2, ok: true}}\n    project: \"SPEC §3\"\n"
        );
        mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &text).expect("a scenario")
    }

    #[test]
    fn the_margin_is_the_closest_race() {
        // 300 against 700 is 400; 300 against zero is 300; 700 against the 2000 deadline, 1300.
        assert_eq!(of(&listing(Some(300), Some(700))).timing, Duration::from_millis(300));
    }

    #[test]
    fn a_scenario_without_times_has_its_deadline_and_never_less_than_the_floor() {
        assert_eq!(of(&listing(None, None)).timing, Duration::from_millis(2000));
        let close = listing(Some(300), Some(310));
        assert_eq!(of(&close).timing, FLOOR);
        assert_eq!(of(&close).slack, Duration::from_millis(2000 - 310));
    }
}
