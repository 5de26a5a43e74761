//! What a managed connection reports about itself: every reconnect step with its time, so
//! a caller (the harness) can check the backoff schedule and show it in a transcript.

use std::time::Duration;

/// One thing a managed connection did, `at` measured from the connection's epoch.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagerEvent {
    /// Since the epoch the connection was created with.
    pub at: Duration,
    /// What happened.
    pub kind: EventKind,
}

/// The kinds of [`ManagerEvent`].
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// The transport closed without the caller asking.
    Disconnected,
    /// Reconnect attempt `attempt` starts after waiting `delay`: the schedule's `planned`
    /// delay plus the jitter drawn for it.
    Attempt {
        /// 1-based.
        attempt: u32,
        /// The schedule's delay before it (no jitter).
        planned: Duration,
        /// The delay waited: `planned` plus its jitter.
        delay: Duration,
    },
    /// An attempt failed.
    AttemptFailed {
        /// 1-based.
        attempt: u32,
        /// The error's text.
        error: String,
    },
    /// Connected again (transport + handshake + tools reloaded).
    Reconnected {
        /// The attempt that succeeded.
        attempt: u32,
    },
    /// Every attempt failed; the connection stays down.
    GaveUp {
        /// How many were made.
        attempts: u32,
    },
    /// The storm breaker opened; no more reconnects.
    BreakerOpen {
        /// Unexpected closes counted in the window.
        closes: usize,
    },
    /// A 404 for the session: a new session was started.
    NewSession,
    /// A list was fetched again after its `list_changed` notification.
    Refreshed {
        /// `tools`, `resources` or `prompts`.
        list: &'static str,
    },
    /// A failed `tools/call` is replayed once (the rule's reason).
    Replayed {
        /// The tool.
        tool: String,
        /// Why it is safe.
        why: &'static str,
    },
    /// A failed `tools/call` is not replayed: the server may have run it.
    ReplayRefused {
        /// The tool.
        tool: String,
    },
    /// A 2026-07-28 `subscriptions/listen` that lost its connection was sent again on the
    /// new one, with the same filter.
    SubscriptionResent {
        /// The filter (`params.notifications`), as compact JSON.
        filter: String,
    },
    /// A re-sent subscription was acknowledged: notifications sent during `missed` (from
    /// the drop to this acknowledgement) may never have reached the caller.
    SubscriptionRestored {
        /// The possibly-missed window.
        missed: std::time::Duration,
    },
    /// A subscription that lost its connection could not be re-established (the server
    /// refused the re-sent listen, or the connection stayed down); the caller gets the error.
    SubscriptionLost {
        /// The error's text.
        error: String,
    },
}

impl EventKind {
    /// A short stable name (`reconnected`, `gave_up`, …) that plans wait on.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Disconnected => "disconnected",
            EventKind::Attempt { .. } => "attempt",
            EventKind::AttemptFailed { .. } => "attempt_failed",
            EventKind::Reconnected { .. } => "reconnected",
            EventKind::GaveUp { .. } => "gave_up",
            EventKind::BreakerOpen { .. } => "breaker_open",
            EventKind::NewSession => "new_session",
            EventKind::Refreshed { .. } => "refreshed",
            EventKind::Replayed { .. } => "replayed",
            EventKind::ReplayRefused { .. } => "replay_refused",
            EventKind::SubscriptionResent { .. } => "subscription_resent",
            EventKind::SubscriptionRestored { .. } => "subscription_restored",
            EventKind::SubscriptionLost { .. } => "subscription_lost",
        }
    }

    /// The possibly-missed window of a `subscription_restored` event. Kept out of the
    /// text: a measured time, which a transcript leaves out.
    pub fn window(&self) -> Option<Duration> {
        match self {
            EventKind::SubscriptionRestored { missed } => Some(*missed),
            _ => None,
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EventKind::Disconnected => write!(f, "disconnected"),
            // The drawn delay is left out: it is random, and this text is what transcripts show.
            EventKind::Attempt { attempt, planned, .. } => {
                write!(f, "attempt {attempt} after a planned {}ms backoff", planned.as_millis())
            }
            // The error is left out: which of a dying server's symptoms (EPIPE, EOF) comes
            // first is a race, and this text is what transcripts show.
            EventKind::AttemptFailed { attempt, .. } => write!(f, "attempt {attempt} failed"),
            EventKind::Reconnected { attempt } => write!(f, "reconnected on attempt {attempt}"),
            EventKind::GaveUp { attempts } => write!(f, "gave up after {attempts} attempts"),
            EventKind::BreakerOpen { closes } => write!(f, "storm breaker open after {closes} closes"),
            EventKind::NewSession => write!(f, "session expired: new session"),
            EventKind::Refreshed { list } => write!(f, "{list} refreshed after list_changed"),
            EventKind::Replayed { tool, why } => write!(f, "tools/call {tool} replayed once: {why}"),
            EventKind::ReplayRefused { tool } => {
                write!(f, "tools/call {tool} not replayed: the server may have run it")
            }
            EventKind::SubscriptionResent { filter } => {
                write!(f, "subscriptions/listen re-sent after the reconnect, filter {filter}")
            }
            EventKind::SubscriptionRestored { .. } => {
                write!(f, "subscription acknowledged again: notifications since the drop possibly missed")
            }
            EventKind::SubscriptionLost { error } => write!(f, "subscription not re-established: {error}"),
        }
    }
}
