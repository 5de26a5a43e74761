//! The storm breaker (SPEC §7): a server that comes back and falls over again at once would
//! otherwise be reconnected forever, each success restarting the backoff. The breaker
//! counts unexpected closes in a sliding window and, once it opens, the connection stays
//! down until the caller connects it again.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Counts unexpected closes within a window.
#[derive(Debug, Clone)]
pub struct StormBreaker {
    closes: usize,
    window: Duration,
    seen: VecDeque<Instant>,
}

impl StormBreaker {
    /// Opens on the `closes`-th close within `window`.
    pub fn new(closes: usize, window: Duration) -> Self {
        StormBreaker { closes: closes.max(1), window, seen: VecDeque::new() }
    }

    /// Records a close at `now`; true when the breaker is now open.
    pub fn record(&mut self, now: Instant) -> bool {
        while self.seen.front().is_some_and(|t| now.duration_since(*t) > self.window) {
            self.seen.pop_front();
        }
        self.seen.push_back(now);
        self.seen.len() >= self.closes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_on_the_nth_close_within_the_window_only() {
        let t0 = Instant::now();
        let mut b = StormBreaker::new(3, Duration::from_millis(100));
        assert!(!b.record(t0));
        assert!(!b.record(t0 + Duration::from_millis(10)));
        assert!(b.record(t0 + Duration::from_millis(20)));
        let mut slow = StormBreaker::new(3, Duration::from_millis(100));
        assert!(!slow.record(t0));
        assert!(!slow.record(t0 + Duration::from_millis(90)));
        assert!(!slow.record(t0 + Duration::from_millis(200)), "the first close left the window");
    }
}
