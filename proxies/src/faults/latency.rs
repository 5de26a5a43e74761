//! `latency`: the response head is held `ms`, plus up to `jitter_ms` at random.

use super::FaultOp;
use rand::Rng;
use std::time::Duration;

pub(super) struct Latency {
    pub ms: u64,
    pub jitter_ms: u64,
}

impl FaultOp for Latency {
    fn head_delay(&self) -> Duration {
        let jitter = if self.jitter_ms == 0 { 0 } else { rand::rng().random_range(0..=self.jitter_ms) };
        Duration::from_millis(self.ms + jitter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_in_its_range() {
        let l = Latency { ms: 10, jitter_ms: 5 };
        for _ in 0..50 {
            let d = l.head_delay().as_millis();
            assert!((10..=15).contains(&d), "{d}");
        }
        assert_eq!(Latency { ms: 7, jitter_ms: 0 }.head_delay(), Duration::from_millis(7));
    }
}
