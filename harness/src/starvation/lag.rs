//! The harness's own scheduling lag, measured while a run goes on: a task on the run's
//! runtime asks to wake every [`TICK`] and records how late it woke. On an idle machine that
//! is a millisecond or two; when the CPUs are oversubscribed, every timer of the run — the
//! bundled client's, the harness's waits — is late by about as much, and the mock and an
//! external client (other processes on the same CPUs) fare no better.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the watch wakes: fine enough to see a stall of a few tens of ms, cheap enough
/// for dozens of runs at once (100 wake-ups a second each).
pub const TICK: Duration = Duration::from_millis(10);

/// Measures the largest scheduling lag from [`LagWatch::start`] to [`LagWatch::stop`].
pub struct LagWatch {
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

struct State {
    base: Instant,
    /// The largest lag seen, in µs.
    max_us: AtomicU64,
    /// When the tick in progress began, in µs after `base`.
    tick_began_us: AtomicU64,
}

impl State {
    fn now_us(&self) -> u64 {
        self.base.elapsed().as_micros() as u64
    }
}

impl LagWatch {
    /// Starts watching on the current tokio runtime.
    pub fn start() -> LagWatch {
        let state =
            Arc::new(State { base: Instant::now(), max_us: AtomicU64::new(0), tick_began_us: AtomicU64::new(0) });
        let watched = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let began = watched.now_us();
                watched.tick_began_us.store(began, Ordering::Relaxed);
                tokio::time::sleep(TICK).await;
                let late = (watched.now_us() - began).saturating_sub(TICK.as_micros() as u64);
                watched.max_us.fetch_max(late, Ordering::Relaxed);
            }
        });
        LagWatch { state, task }
    }

    /// Stops watching; the largest lag seen, counting a tick still overdue now (a stall that
    /// lasts until the run ends is a lag too).
    pub fn stop(self) -> Duration {
        self.task.abort();
        let overdue = self
            .state
            .now_us()
            .saturating_sub(self.state.tick_began_us.load(Ordering::Relaxed))
            .saturating_sub(TICK.as_micros() as u64);
        Duration::from_micros(self.state.max_us.load(Ordering::Relaxed).max(overdue))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stalled runtime is a lag: the watch cannot wake while its only thread sleeps.
    #[tokio::test(flavor = "current_thread")]
    async fn a_stall_of_the_runtime_shows_as_lag() {
        let watch = LagWatch::start();
        tokio::task::yield_now().await; // let the watch take its first tick
        std::thread::sleep(Duration::from_millis(120));
        tokio::task::yield_now().await;
        let lag = watch.stop();
        assert!(lag >= Duration::from_millis(100), "{lag:?}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_stall_still_going_on_at_stop_counts() {
        let watch = LagWatch::start();
        tokio::task::yield_now().await;
        std::thread::sleep(Duration::from_millis(80));
        let lag = watch.stop();
        assert!(lag >= Duration::from_millis(60), "{lag:?}");
    }
}
