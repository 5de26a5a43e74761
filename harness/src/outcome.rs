//! Shared state of a run's client side (the outcome types live in `mcp_scenario::results`).

/// Locks a mutex shared with the client's side tasks. A poisoned lock holds plain data that
/// is still usable, and a run must keep reporting rather than panic.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
