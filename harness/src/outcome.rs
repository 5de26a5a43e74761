//! What the client reported: one outcome per plan step, plus what the client saw on the
//! side (notifications, reports, counters). The same shape for every target.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a plan step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// It succeeded.
    Ok,
    /// It failed; `error` says how.
    Error,
    /// The target cannot perform this op.
    Unsupported,
    /// The run ended (deadline, crash) before this step ran or finished.
    NotRun,
}

/// The outcome of one plan step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepOutcome {
    /// 1-based plan step.
    pub step: usize,
    /// A short description, e.g. `request tools/list`.
    pub what: String,
    /// How it ended.
    pub status: StepStatus,
    /// The result, for requests that succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error text, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall time of the step.
    pub elapsed_ms: u64,
}

/// Everything the client side of a run produced.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClientOutcome {
    /// One entry per plan step, in order.
    pub steps: Vec<StepOutcome>,
    /// Notifications the client reported receiving: `(method, params)`.
    pub notifications: Vec<(String, Value)>,
    /// Problems the client reported on the side (the bundled error handler).
    pub reports: Vec<String>,
    /// The bundled client's counters, when the target is bundled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<mcp_diag::Counters>,
    /// The run's deadline expired before the plan finished.
    pub hung: bool,
    /// How an external client's process ended and what it printed besides its step lines
    /// (`cmd:` targets only; the bundled client runs in-process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessReport>,
}

/// How an external client process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum ProcessEnd {
    /// It exited by itself with this code.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// A signal it did not get from the harness killed it (a crash, e.g. `SIGSEGV`).
    Signalled {
        /// The signal's name.
        signal: String,
    },
    /// The harness killed its process group at the run deadline.
    KilledAtDeadline,
    /// The harness killed its process group because it wrote more than the stdout cap.
    KilledForFlooding {
        /// The cap in bytes.
        cap: usize,
    },
    /// It could not be started at all.
    NotStarted {
        /// Why (the command line could not be split, or the program could not be spawned).
        error: String,
    },
}

impl std::fmt::Display for ProcessEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessEnd::Exited { code } => write!(f, "client exited {code}"),
            ProcessEnd::Signalled { signal } => write!(f, "client killed by {signal}"),
            ProcessEnd::KilledAtDeadline => write!(f, "client killed at the run deadline (whole process group)"),
            ProcessEnd::KilledForFlooding { cap } => {
                write!(f, "client killed for flooding stdout past {cap} bytes (whole process group)")
            }
            ProcessEnd::NotStarted { error } => write!(f, "client could not be started: {error}"),
        }
    }
}

/// What the harness saw of an external client process, beyond its step lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessReport {
    /// How it ended.
    pub end: ProcessEnd,
    /// Bytes read from its stdout (up to the cap).
    pub stdout_bytes: usize,
    /// Stdout lines that were not contract lines (kept as diagnostics, never parsed as
    /// results; the first few only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_stdout: Vec<String>,
    /// Bytes it wrote to stderr (counted past the cap, stored up to it).
    pub stderr_bytes: usize,
    /// The end of what it wrote to stderr (its own logs and, for stdio, usually the
    /// mock's inherited stderr).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr_tail: String,
    /// Wall time from spawn to the end of the process, in ms.
    pub wall_ms: u64,
}

/// Diagnostic counters in a serialisable form.
pub mod mcp_diag {
    use serde::{Deserialize, Serialize};

    /// Mirror of `mcp_transports::Diagnostics`.
    #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Counters {
        /// Late responses dropped.
        pub late_responses: u64,
        /// Unknown-id responses dropped.
        pub unknown_responses: u64,
        /// Malformed or non-JSON-RPC messages dropped.
        pub protocol_violations: u64,
        /// Oversize messages dropped.
        pub oversize_dropped: u64,
        /// The tail of the server's stderr.
        pub stderr_tail: String,
    }

    impl From<mcp_transports::Diagnostics> for Counters {
        fn from(d: mcp_transports::Diagnostics) -> Self {
            Counters {
                late_responses: d.late_responses,
                unknown_responses: d.unknown_responses,
                protocol_violations: d.protocol_violations,
                oversize_dropped: d.oversize_dropped,
                stderr_tail: d.stderr_tail,
            }
        }
    }
}

/// Locks a mutex shared with the client's side tasks. A poisoned lock holds plain data that
/// is still usable, and a run must keep reporting rather than panic.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
