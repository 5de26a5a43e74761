//! How a mock is asked to stop ([`Shutdown`]) and how it ended ([`ExitReason`]).
//!
//! The mocks are libraries (`serve(scenario, io, shutdown) -> ExitReason`, like
//! mini-redis's `run(listener, shutdown)`): they never exit the process or signal
//! themselves. The binary edge (`cli::run`, called by `mcp-mock` and `mcp-harness mock`)
//! turns the [`ExitReason`] into a self-signal and an exit code, after the mock has flushed
//! its record.

use crate::sync::lock;
use nix::sys::signal::Signal;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{Notify, mpsc};
use tokio::time::Sleep;

/// How a mock ended, and what the process serving it should do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitReason {
    /// The exit code: the script's `exit` code, 0 at stdin EOF, 124 when the mock's
    /// deadline expired, 128+N when stopped by signal N. With [`ExitReason::signal`], the
    /// code to exit with if raising the signal does not end the process.
    pub code: i32,
    /// A signal the process raises on itself before exiting (a script's
    /// `exit: {signal: …}`).
    pub signal: Option<Signal>,
    /// Why the mock ended: `script`, `stdin EOF`, `deadline`, `SIGTERM`, …
    pub why: String,
}

impl ExitReason {
    /// An exit with `code` for `why`.
    pub fn code(code: i32, why: impl Into<String>) -> Self {
        ExitReason { code, signal: None, why: why.into() }
    }

    /// Whether the mock was asked to stop (SIGTERM, SIGINT, SIGHUP reached it) rather than
    /// ending by its script, stdin EOF or its deadline: how a person's run normally ends.
    pub fn stopped(&self) -> bool {
        self.signal.is_none() && matches!(self.why.as_str(), "SIGTERM" | "SIGINT" | "SIGHUP")
    }
}

/// Where a running mock leaves its [`ExitReason`]: set once, by whichever part of the mock
/// ends it first (the script, stdin EOF, a signal, the deadline), and awaited by `serve`.
#[derive(Default)]
pub struct Ending {
    reason: Mutex<Option<ExitReason>>,
    ended: Notify,
}

impl Ending {
    /// Whether the mock has ended.
    pub fn is_set(&self) -> bool {
        lock(&self.reason).is_some()
    }

    /// Ends the mock with the reason `last_words` returns. Only the first caller's
    /// `last_words` runs (under the lock, so nothing else ends the mock meanwhile: it is
    /// where the mock records its last events); later callers get false.
    pub fn end(&self, last_words: impl FnOnce() -> ExitReason) -> bool {
        let mut reason = lock(&self.reason);
        if reason.is_some() {
            return false;
        }
        *reason = Some(last_words());
        self.ended.notify_waiters();
        true
    }

    /// Waits until the mock has ended.
    pub async fn wait(&self) -> ExitReason {
        loop {
            let notified = self.ended.notified();
            if let Some(reason) = lock(&self.reason).clone() {
                return reason;
            }
            notified.await;
        }
    }
}

/// What asks a running mock to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A signal reached the mock (SIGTERM, SIGINT or SIGHUP for a process).
    Signal(Signal),
    /// The mock's own deadline expired.
    Deadline,
}

/// The source of [`Stop`]s a mock listens to: the process's signals in the binaries, a
/// channel in tests; and an optional deadline.
pub struct Shutdown {
    signals: Signals,
    deadline: Option<Pin<Box<Sleep>>>,
}

enum Signals {
    Process(Box<[tokio::signal::unix::Signal; 3]>),
    Channel(mpsc::UnboundedReceiver<Signal>),
    Never,
}

impl Shutdown {
    /// The process's SIGTERM, SIGINT and SIGHUP, and `deadline` from now (none: a mock run
    /// by a person, which its host or Ctrl-C stops). The handlers are installed at once, so
    /// a signal that arrives before the mock listens is not lost; if they cannot be
    /// installed, only the deadline stops the mock. Call inside a Tokio runtime.
    pub fn process(deadline: Option<Duration>) -> Self {
        let kinds = [SignalKind::terminate(), SignalKind::interrupt(), SignalKind::hangup()];
        let signals = match kinds.map(signal) {
            [Ok(term), Ok(int), Ok(hup)] => Signals::Process(Box::new([term, int, hup])),
            _ => Signals::Never,
        };
        Shutdown { signals, deadline: deadline.map(|d| Box::pin(tokio::time::sleep(d))) }
    }

    /// A shutdown driven by the returned sender (each signal sent reaches the mock as if
    /// the process had received it), with an optional deadline. Call inside a Tokio runtime.
    pub fn channel(deadline: Option<Duration>) -> (mpsc::UnboundedSender<Signal>, Self) {
        let (tx, rx) = mpsc::unbounded_channel();
        (tx, Shutdown { signals: Signals::Channel(rx), deadline: deadline.map(|d| Box::pin(tokio::time::sleep(d))) })
    }

    /// Waits for the next request to stop; never returns when there is none to come. The
    /// deadline fires once.
    pub async fn next(&mut self) -> Stop {
        let Shutdown { signals, deadline } = self;
        let expiry = async {
            match deadline.as_mut() {
                Some(sleep) => sleep.as_mut().await,
                None => std::future::pending().await,
            }
        };
        let signal = async {
            match signals {
                Signals::Process(s) => {
                    let [term, int, hup] = &mut **s;
                    tokio::select! {
                        _ = term.recv() => Signal::SIGTERM,
                        _ = int.recv() => Signal::SIGINT,
                        _ = hup.recv() => Signal::SIGHUP,
                    }
                }
                Signals::Channel(rx) => match rx.recv().await {
                    Some(sig) => sig,
                    None => std::future::pending().await,
                },
                Signals::Never => std::future::pending().await,
            }
        };
        let stop = tokio::select! {
            sig = signal => Stop::Signal(sig),
            () = expiry => Stop::Deadline,
        };
        if stop == Stop::Deadline {
            *deadline = None;
        }
        stop
    }
}
