//! How a managed connection reconnects (SPEC §7): the backoff schedule with its jitter, and
//! the storm breaker's window. Plain data, so a caller can shrink the base delay (scenarios
//! run in milliseconds) without changing the shape of the schedule.

use std::time::Duration;

/// The default first delay; the schedule doubles it: 500, 1000, 2000, 4000 ms.
pub const DEFAULT_BASE_DELAY: Duration = Duration::from_millis(500);
/// The default number of reconnect attempts after an unexpected close.
pub const DEFAULT_ATTEMPTS: u32 = 4;
/// The default jitter: up to this fraction of each delay is added at random, so many
/// clients of one crashed server do not reconnect in lockstep.
pub const DEFAULT_JITTER_RATIO: f64 = 0.2;
/// The default storm breaker: this many unexpected closes …
pub const DEFAULT_BREAKER_CLOSES: usize = 3;
/// … within this window stop reconnecting.
pub const DEFAULT_BREAKER_WINDOW: Duration = Duration::from_secs(60);

/// The reconnect schedule and the storm breaker of one managed connection.
#[derive(Debug, Clone, PartialEq)]
pub struct ReconnectPolicy {
    /// The first delay; attempt n waits `base_delay · 2^(n-1)` plus jitter.
    pub base_delay: Duration,
    /// Attempts after an unexpected close before giving up.
    pub attempts: u32,
    /// Up to this fraction of each delay is added at random (`0` for none).
    pub jitter_ratio: f64,
    /// Unexpected closes within [`Self::breaker_window`] that open the breaker.
    pub breaker_closes: usize,
    /// See [`Self::breaker_closes`].
    pub breaker_window: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            base_delay: DEFAULT_BASE_DELAY,
            attempts: DEFAULT_ATTEMPTS,
            jitter_ratio: DEFAULT_JITTER_RATIO,
            breaker_closes: DEFAULT_BREAKER_CLOSES,
            breaker_window: DEFAULT_BREAKER_WINDOW,
        }
    }
}

impl ReconnectPolicy {
    /// The delay before attempt `attempt` (1-based), without jitter.
    pub fn planned_delay(&self, attempt: u32) -> Duration {
        self.base_delay.saturating_mul(1u32 << attempt.saturating_sub(1).min(20))
    }

    /// The delay before attempt `attempt` with jitter drawn from `unit` (in `[0, 1)`).
    pub fn delay(&self, attempt: u32, unit: f64) -> Duration {
        let planned = self.planned_delay(attempt);
        planned + planned.mul_f64(self.jitter_ratio.max(0.0) * unit.clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_schedule_is_500_1000_2000_4000_ms() {
        let p = ReconnectPolicy::default();
        let planned: Vec<u128> = (1..=p.attempts).map(|n| p.planned_delay(n).as_millis()).collect();
        assert_eq!(planned, [500, 1000, 2000, 4000]);
        assert_eq!(p.delay(1, 0.0), Duration::from_millis(500));
        assert_eq!(p.delay(4, 0.5), Duration::from_millis(4400));
    }

    #[test]
    fn a_smaller_base_keeps_the_doubling() {
        let p = ReconnectPolicy { base_delay: Duration::from_millis(20), jitter_ratio: 0.0, ..Default::default() };
        let delays: Vec<u128> = (1..=4).map(|n| p.delay(n, 0.9).as_millis()).collect();
        assert_eq!(delays, [20, 40, 80, 160]);
    }
}
