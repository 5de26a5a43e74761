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
