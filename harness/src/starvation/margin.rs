//! A scenario's timing margin: how late the machine may run before its verdict could turn
//! on the lateness instead of on the client. Every verdict that involves time compares two
//! times — a request timeout against a server delay, a plan `wait` against a stall, a
//! backoff against its tolerance, a step against the run deadline — so the margin is the
//! smallest gap between two times the scenario names (each `…_ms` or `ms` field), and between
//! each of them and zero (a timer against an answer sent at once) and the deadline — but a
//! check's bound and a time after it, which lateness cannot carry across it (`races`).
//! Other pairs that never race make it smaller than it needs to be: that costs a re-run,
//! never a wrong verdict.

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

/// What a time the scenario names is to a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A time something happens at (a timeout, a delay, a wait).
    At,
    /// A check's lower bound (`at_least_ms`): the event it bounds must come no earlier.
    AtLeast,
    /// A check's upper bound (`within_ms`): the event it bounds must come no later.
    Within,
}

/// Whether lateness can carry an event timed `a` across `b` (or back), so the gap between them is a
/// margin. Lateness only ever delays: an event after a lower bound stays after it however
/// late it comes (a 150 ms timeout against its own `at_least_ms: 140`), and one after an upper
/// bound stays after it (a 1500 ms timeout against a `within_ms: 1400` that a right client meets
/// long before). Only an event timed before a bound can be carried across it.
fn races((a, ka): (u64, Kind), (b, kb): (u64, Kind)) -> bool {
    match (ka, kb) {
        (Kind::At, Kind::At) => true,
        (Kind::At, _) => a < b,
        (_, Kind::At) => b < a,
        // Two bounds: an event held between them, or bounds of two steps.
        _ => true,
    }
}

/// The scenario's margins (one walk over its times).
pub fn of(scenario: &Scenario) -> Margins {
    let mut times = Vec::new();
    if let Ok(value) = serde_json::to_value(scenario) {
        collect(&value, None, &mut times);
    }
    let deadline = scenario.deadline_ms;
    let mut margin = deadline;
    for (i, &(a, kind)) in times.iter().enumerate() {
        margin = margin.min(a);
        if a < deadline {
            margin = margin.min(deadline - a);
        }
        for &(b, other) in &times[i + 1..] {
            if a != b && races((a, kind), (b, other)) {
                margin = margin.min(a.abs_diff(b));
            }
        }
    }
    let longest = times.iter().map(|&(t, _)| t).max().unwrap_or(0);
    Margins {
        timing: Duration::from_millis(margin).max(FLOOR),
        slack: Duration::from_millis(deadline.saturating_sub(longest)).max(FLOOR),
    }
}

/// Every positive number under a key named `ms` or ending in `_ms` (but the deadline, which
/// the margin measures against), arrays of them included, with what it is to a verdict.
fn collect(value: &Value, kind: Option<Kind>, out: &mut Vec<(u64, Kind)>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let kind = match key.as_str() {
                    "deadline_ms" => None,
                    "at_least_ms" => Some(Kind::AtLeast),
                    "within_ms" => Some(Kind::Within),
                    k if k == "ms" || k.ends_with("_ms") => Some(Kind::At),
                    _ => None,
                };
                collect(v, kind, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, kind, out)),
        Value::Number(n) => {
            if let Some(kind) = kind {
                out.extend(n.as_u64().filter(|&ms| ms > 0).map(|ms| (ms, kind)));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(client: &str, server: &str) -> Scenario {
        let text = format!(
            "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\ndeadline_ms: 2000\nclient:\n{client}server:\n  - op: handshake\n{server}checks:\n  - outcome: {{step: 2, ok: true}}\n    project: \"SPEC §3\"\n"
        );
        mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &text).expect("a scenario")
    }

    #[test]
    fn the_margin_is_the_closest_race() {
        let s = scenario(
            "  - op: connect\n  - op: request\n    method: tools/list\n    timeout_ms: 300\n",
            "  - op: expect\n    method: tools/list\n  - op: delay\n    ms: 700\n  - op: reply\n    result: {\"tools\": []}\n",
        );
        // 300 against 700 is 400; 300 against zero is 300; 700 against the 2000 deadline, 1300.
        assert_eq!(of(&s).timing, Duration::from_millis(300));
    }

    #[test]
    fn a_scenario_without_times_has_its_deadline_and_never_less_than_the_floor() {
        let plain = scenario(
            "  - op: connect\n  - op: request\n    method: tools/list\n",
            "  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": []}\n",
        );
        assert_eq!(of(&plain).timing, Duration::from_millis(2000));
        let close = scenario(
            "  - op: connect\n  - op: request\n    method: tools/list\n    timeout_ms: 300\n",
            "  - op: expect\n    method: tools/list\n  - op: delay\n    ms: 310\n  - op: reply\n    result: {\"tools\": []}\n",
        );
        assert_eq!(of(&close).timing, FLOOR);
        assert_eq!(of(&close).slack, Duration::from_millis(2000 - 310));
    }

    #[test]
    fn a_check_bound_races_only_the_times_before_it() {
        // A 800 ms timeout checked with `at_least_ms: 790` and `within_ms: 1075`, against a
        // 550 ms delay: lateness cannot bring the timeout before 790, so the margin is the
        // delay against the lower bound (240), not the 10 ms between the bound and the timeout.
        let s = scenario(
            "  - op: connect\n    timeout_ms: 800\n  - op: request\n    method: tools/list\n",
            "  - op: expect\n    method: tools/list\n  - op: delay\n    ms: 550\n  - op: reply\n    result: {\"tools\": []}\n",
        );
        let bounded = |bounds: &str| {
            let text = format!(
                "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\ndeadline_ms: 2000\nclient:\n  - op: connect\n    timeout_ms: 800\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: delay\n    ms: 550\n  - op: reply\n    result: {{\"tools\": []}}\nchecks:\n  - outcome: {{step: 2, ok: false, {bounds}}}\n    project: \"SPEC §3\"\n"
            );
            of(&mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &text).expect("a scenario")).timing
        };
        assert_eq!(of(&s).timing, Duration::from_millis(250));
        assert_eq!(bounded("at_least_ms: 790, within_ms: 1075"), Duration::from_millis(240));
        // An upper bound after the timeout is no race either; one before a time is.
        assert_eq!(bounded("within_ms: 900"), Duration::from_millis(100));
        assert_eq!(bounded("within_ms: 700"), Duration::from_millis(150));
    }
}
