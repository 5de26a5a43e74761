//! `backoff`: the bundled manager's reconnect attempts waited the schedule (SPEC §7). The
//! manager reports, for each attempt, the schedule's delay and the delay it drew (the planned
//! one plus jitter): the planned delay must equal the schedule exactly and the drawn one lie
//! within `[planned, planned·(1 + jitter)]`, both without slack, since they are the manager's
//! own numbers. The wait measured from the event that made the attempt necessary (the close,
//! or the attempt before it failing) must then be at least the drawn delay and at most that
//! plus scheduling slack on a loaded machine. The manager is the bundled client's, so other
//! targets skip the check.

use super::{CheckKind, Finding, Run};
use crate::scope::Scope;
use mcp_scenario::checks::BackoffCheck;
use std::convert::Infallible;

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::Count { got, want } if got < want)
    }
}

impl CheckKind for BackoffCheck {
    fn explain(&self) -> String {
        format!(
            "the manager's reconnect attempts waited {:?} ms (jitter {}, slack {}ms; bundled client only)",
            self.delays_ms, self.jitter, self.slack_ms
        )
    }

    const READS_OUTCOME: Option<&'static str> = Some("the bundled manager's reconnect events");
    type Invalid = Infallible;
    type Failure = Failure;

    fn applies(&self, scope: &Scope) -> bool {
        scope.target.is_bundled()
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let mut attempts = Vec::new();
        let mut since = None;
        for e in &run.outcome.manager_events {
            match e.event.as_str() {
                "disconnected" | "attempt_failed" => since = Some(e.at_ms),
                "attempt" => {
                    let waited = e.at_ms.saturating_sub(since.unwrap_or(e.at_ms));
                    attempts.push((waited, e.planned_ms, e.delay_ms));
                }
                _ => {}
            }
        }
        if attempts.len() != self.delays_ms.len() {
            return Err(Failure::Count { got: attempts.len(), want: self.delays_ms.len() });
        }
        for (n, (&(_, planned, _), &want)) in attempts.iter().zip(&self.delays_ms).enumerate() {
            if planned != Some(want) {
                return Err(Failure::Planned { attempt: n + 1, got: planned, want });
            }
        }
        let mut draws = Vec::with_capacity(attempts.len());
        for (n, (&(_, _, drawn), &want)) in attempts.iter().zip(&self.delays_ms).enumerate() {
            let most = (want as f64 * (1.0 + self.jitter.max(0.0))).ceil() as u64;
            match drawn {
                Some(d) if (want..=most).contains(&d) => draws.push(d),
                _ => return Err(Failure::Drawn { attempt: n + 1, got: drawn, least: want, most }),
            }
        }
        for (n, (&(waited, _, _), &least)) in attempts.iter().zip(&draws).enumerate() {
            let most = least + self.slack_ms;
            if waited < least || waited > most {
                return Err(Failure::Delay { attempt: n + 1, got: waited, least, most });
            }
        }
        Ok(())
    }
}

/// How the attempts missed the schedule.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Another number of attempts.
    #[error("{got} reconnect attempt(s), expected {want}")]
    Count {
        /// Attempts seen.
        got: usize,
        /// Attempts expected.
        want: usize,
    },
    /// The manager planned another delay.
    #[error("reconnect attempt {attempt} was planned after {}, expected {want}ms", reported(.got))]
    Planned {
        /// 1-based.
        attempt: usize,
        /// The planned delay reported.
        got: Option<u64>,
        /// The schedule's delay.
        want: u64,
    },
    /// The manager drew a delay outside the schedule's jitter.
    #[error(
        "reconnect attempt {attempt} drew a delay of {}, expected {least}..={most}ms (the planned delay plus at most its jitter)",
        reported(.got)
    )]
    Drawn {
        /// 1-based.
        attempt: usize,
        /// The drawn delay reported.
        got: Option<u64>,
        /// The schedule's delay.
        least: u64,
        /// The schedule's delay with the most jitter.
        most: u64,
    },
    /// An attempt outside its window.
    #[error("reconnect attempt {attempt} waited {got}ms, expected {least}..={most}ms")]
    Delay {
        /// 1-based.
        attempt: usize,
        /// Measured wait.
        got: u64,
        /// The delay the manager drew.
        least: u64,
        /// The drawn delay with scheduling slack.
        most: u64,
    },
}

/// A delay the manager reported, or that it reported none.
fn reported(ms: &Option<u64>) -> String {
    ms.map_or_else(|| "no reported delay".into(), |ms| format!("{ms}ms"))
}

#[cfg(test)]
mod tests {
    use super::super::{evaluated, testing};
    use mcp_results::{ClientOutcome, ManagerEventRecord};

    fn event(at_ms: u64, event: &str, planned_ms: Option<u64>, delay_ms: Option<u64>) -> ManagerEventRecord {
        ManagerEventRecord { at_ms, event: event.into(), planned_ms, delay_ms, detail: String::new(), window_ms: None }
    }

    /// The check `backoff: {delays_ms: [100, 200]}` against a manager that closed at 0, drew
    /// `drawn` delays and started its attempts at `at`, the first failing.
    fn judge(drawn: [u64; 2], at: [u64; 2]) -> Result<(), String> {
        let scenario = testing::scenario("stdio", "backoff: {delays_ms: [100, 200], slack_ms: 50}");
        let outcome = ClientOutcome {
            manager_events: vec![
                event(0, "disconnected", None, None),
                event(at[0], "attempt", Some(100), Some(drawn[0])),
                event(at[0] + 5, "attempt_failed", None, None),
                event(at[0] + 5 + at[1], "attempt", Some(200), Some(drawn[1])),
            ],
            ..ClientOutcome::default()
        };
        testing::judge_outcome(&scenario, Vec::new(), &outcome, evaluated)
    }

    #[test]
    fn drawn_delays_within_the_jitter_and_waits_past_them_pass() {
        assert_eq!(judge([100, 240], [100, 260]), Ok(()));
        assert_eq!(judge([119, 200], [140, 249]), Ok(()));
    }

    #[test]
    fn a_delay_drawn_past_the_jitter_fails_whatever_the_wait() {
        let err = judge([100, 241], [100, 241]).expect_err("a delay drawn past the jitter");
        assert!(err.contains("attempt 2 drew a delay of 241ms, expected 200..=240ms"), "{err}");
    }

    #[test]
    fn a_wait_shorter_than_the_drawn_delay_fails() {
        let err = judge([110, 200], [109, 200]).expect_err("a wait shorter than the draw");
        assert!(err.contains("attempt 1 waited 109ms, expected 110..=160ms"), "{err}");
    }
}
