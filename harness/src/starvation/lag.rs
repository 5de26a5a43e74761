//! The harness's own scheduling lag, measured while a run goes on: a task on the run's
//! runtime asks to wake every [`TICK`] and records how late it woke. On an idle machine that
//! is a millisecond or two; when the CPUs are oversubscribed, every timer of the run — the
//! bundled client's, the harness's waits — is late by about as much, and the mock and an
//! external client (other processes on the same CPUs) fare no better.
//!
//! Each late wake-up is kept with when it happened, so a run's lag can be read over the part
//! of the run in which the scenario's timers ran ([`Lags::within`]): a stall while the mock
//! was still starting, or while the harness checked the finished run, delays no timer the
//! verdict compares, and counting it made runs look starved that were not.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the watch wakes: fine enough to see a stall of a few tens of ms, cheap enough
/// for dozens of runs at once (100 wake-ups a second each).
pub const TICK: Duration = Duration::from_millis(10);

/// Measures the scheduling lag from [`LagWatch::start`] to [`LagWatch::stop`].
pub struct LagWatch {
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

struct State {
    base: Instant,
    /// When the tick in progress began, in µs after `base`.
    tick_began_us: AtomicU64,
    /// Every tick that woke late by [`KEPT`] or more.
    late: Mutex<Vec<LateTick>>,
}

/// A late wake-up shorter than this is kept by no one: no margin is that small (the
/// smallest is `margin::FLOOR`), and a long run keeps its list short.
const KEPT: Duration = Duration::from_millis(5);

/// One late wake-up: the tick asked to sleep at `began_us` and woke at `ended_us`, `late_us`
/// after it should have (µs after the watch's start).
#[derive(Debug, Clone, Copy)]
struct LateTick {
    began_us: u64,
    ended_us: u64,
    late_us: u64,
}

/// The late wake-ups a watch saw.
#[derive(Debug, Clone)]
pub struct Lags {
    base: Instant,
    ticks: Vec<LateTick>,
}

impl Lags {
    /// The largest lag over the whole watch.
    pub fn max(&self) -> Duration {
        Duration::from_micros(self.ticks.iter().map(|t| t.late_us).max().unwrap_or(0))
    }

    /// The largest lag of a tick that overlapped `from..=to` (a stall that began before
    /// `from` and lasted into it counts).
    pub fn within(&self, from: Instant, to: Instant) -> Duration {
        let us = |at: Instant| at.saturating_duration_since(self.base).as_micros() as u64;
        let (from, to) = (us(from), us(to));
        let late = self.ticks.iter().filter(|t| t.began_us <= to && t.ended_us >= from).map(|t| t.late_us).max();
        Duration::from_micros(late.unwrap_or(0))
    }
}

impl State {
    fn now_us(&self) -> u64 {
        self.base.elapsed().as_micros() as u64
    }

    fn keep(&self, tick: LateTick) {
        if tick.late_us >= KEPT.as_micros() as u64 {
            self.late.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(tick);
        }
    }
}

impl LagWatch {
    /// Starts watching on the current tokio runtime.
    pub fn start() -> LagWatch {
        let state =
            Arc::new(State { base: Instant::now(), tick_began_us: AtomicU64::new(0), late: Mutex::new(Vec::new()) });
        let watched = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let began = watched.now_us();
                watched.tick_began_us.store(began, Ordering::Relaxed);
                tokio::time::sleep(TICK).await;
                let ended = watched.now_us();
                let late = (ended - began).saturating_sub(TICK.as_micros() as u64);
                watched.keep(LateTick { began_us: began, ended_us: ended, late_us: late });
            }
        });
        LagWatch { state, task }
    }

    /// Stops watching; the late wake-ups seen, counting a tick still overdue now (a stall
    /// that lasts until the run ends is a lag too).
    pub fn stop(self) -> Lags {
        self.task.abort();
        let began = self.state.tick_began_us.load(Ordering::Relaxed);
        let now = self.state.now_us();
        let overdue = now.saturating_sub(began).saturating_sub(TICK.as_micros() as u64);
        self.state.keep(LateTick { began_us: began, ended_us: now, late_us: overdue });
        let ticks = std::mem::take(&mut *self.state.late.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        Lags { base: self.state.base, ticks }
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
        let lag = watch.stop().max();
        assert!(lag >= Duration::from_millis(100), "{lag:?}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_stall_still_going_on_at_stop_counts() {
        let watch = LagWatch::start();
        tokio::task::yield_now().await;
        std::thread::sleep(Duration::from_millis(80));
        let lag = watch.stop().max();
        assert!(lag >= Duration::from_millis(60), "{lag:?}");
    }

    /// A stall outside the window the scenario's timers ran in is no lag of that window;
    /// one that overlaps it is, wherever it began.
    #[test]
    fn a_window_counts_only_the_stalls_that_overlap_it() {
        let base = Instant::now();
        let ms = |n: u64| n * 1000;
        let tick = |began: u64, ended: u64, late: u64| LateTick {
            began_us: ms(began),
            ended_us: ms(ended),
            late_us: ms(late),
        };
        // A 400 ms stall during the mock's start-up, then a 30 ms one during the plan.
        let lags = Lags { base, ticks: vec![tick(100, 510, 400), tick(900, 940, 30)] };
        let at = |n: u64| base + Duration::from_millis(n);
        assert_eq!(lags.max(), Duration::from_millis(400));
        assert_eq!(lags.within(at(600), at(1500)), Duration::from_millis(30));
        assert_eq!(lags.within(at(500), at(1500)), Duration::from_millis(400));
        assert_eq!(lags.within(at(1000), at(1500)), Duration::ZERO);
    }
}
