//! `backoff`: the bundled manager's reconnect attempts waited the schedule (SPEC §7). Each
//! `attempt` event is measured from the event that made it necessary (the close, or the
//! attempt before it failing); the bound is one-sided below (it must wait at least the
//! delay) and loose above (jitter plus scheduling slack on a loaded machine); the delay the
//! manager planned must equal the schedule exactly. The manager is the bundled
//! client's, so other targets skip the check.

use super::{CheckKind, Run};
use crate::scope::Scope;
use mcp_scenario::checks::BackoffCheck;
use std::convert::Infallible;

impl CheckKind for BackoffCheck {
    fn explain(&self) -> String {
        format!(
            "the manager's reconnect attempts waited {:?} ms (jitter {}, slack {}ms; bundled client only)",
            self.delays_ms, self.jitter, self.slack_ms
        )
    }

    const NAME: &'static str = "backoff";

    fn reads_outcome(&self) -> Option<&'static str> {
        Some("the bundled manager's reconnect events")
    }
    type Invalid = Infallible;
    type Failure = Failure;

    fn applies(&self, scope: &Scope) -> bool {
        scope.target.is_bundled()
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let mut waited = Vec::new();
        let mut since = None;
        for e in &run.outcome.manager_events {
            match e.event.as_str() {
                "disconnected" | "attempt_failed" => since = Some(e.at_ms),
                "attempt" => waited.push((e.at_ms.saturating_sub(since.unwrap_or(e.at_ms)), e.planned_ms)),
                _ => {}
            }
        }
        if waited.len() != self.delays_ms.len() {
            return Err(Failure::Count { got: waited.len(), want: self.delays_ms.len() });
        }
        // The schedule the manager says it followed must be the expected one exactly; the
        // measured waits prove it did wait (strictly at least, loosely at most).
        for (n, (&(_, planned), &want)) in waited.iter().zip(&self.delays_ms).enumerate() {
            if planned != Some(want) {
                return Err(Failure::Planned { attempt: n + 1, got: planned, want });
            }
        }
        for (n, (&(got, _), &want)) in waited.iter().zip(&self.delays_ms).enumerate() {
            let most = (want as f64 * (1.0 + self.jitter.max(0.0))).ceil() as u64 + self.slack_ms;
            if got < want || got > most {
                return Err(Failure::Delay { attempt: n + 1, got, least: want, most });
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
    #[error("reconnect attempt {attempt} was planned after {got:?}ms, expected {want}ms")]
    Planned {
        /// 1-based.
        attempt: usize,
        /// The planned delay reported.
        got: Option<u64>,
        /// The schedule's delay.
        want: u64,
    },
    /// An attempt outside its window.
    #[error("reconnect attempt {attempt} waited {got}ms, expected {least}..={most}ms")]
    Delay {
        /// 1-based.
        attempt: usize,
        /// Measured wait.
        got: u64,
        /// The schedule's delay.
        least: u64,
        /// Delay with jitter and slack.
        most: u64,
    },
}
