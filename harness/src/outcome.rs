//! The client side of a run, as both targets report it (the outcome types themselves live
//! in `mcp_results`): step descriptions, steps that never ran, the shared lock.

use mcp_results::{StepOutcome, StepStatus};
use mcp_scenario::ClientStep;

/// Locks a mutex shared with the client's side tasks. A poisoned lock holds plain data that
/// is still usable, and a run must keep reporting rather than panic.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A short description of a plan step (the `what` of its outcome), e.g. `request tools/list`.
pub fn describe_step(step: &ClientStep) -> String {
    match step {
        ClientStep::Connect(_) => "connect".into(),
        ClientStep::Request { method, .. } => format!("request {method}"),
        ClientStep::Await { request } => format!("await {request}"),
        ClientStep::Cancel { request } => format!("cancel {request}"),
        ClientStep::Abandon { request } => format!("abandon {request}"),
        ClientStep::Notify { method, .. } => format!("notify {method}"),
        ClientStep::Wait { ms } => format!("wait {ms}ms"),
        ClientStep::WaitSent { method, http_method, .. } => match (http_method, method) {
            (Some(h), Some(m)) => format!("wait_sent {h} {m}"),
            (Some(one), None) | (None, Some(one)) => format!("wait_sent {one}"),
            (None, None) => "wait_sent".into(),
        },
        ClientStep::WaitClosed { .. } => "wait_closed".into(),
        ClientStep::WaitNotification { method, .. } => format!("wait_notification {method}"),
        ClientStep::Close => "close".into(),
        ClientStep::WaitManager { event, .. } => format!("wait_manager {event}"),
        ClientStep::ManagerTools => "manager_tools".into(),
    }
}

/// The outcome of plan step `index` (0-based) that never ran or never finished.
pub fn not_run(index: usize, step: &ClientStep, why: Option<String>) -> StepOutcome {
    StepOutcome {
        step: index + 1,
        what: describe_step(step),
        status: StepStatus::NotRun,
        result: None,
        error: why,
        elapsed_ms: 0,
    }
}
