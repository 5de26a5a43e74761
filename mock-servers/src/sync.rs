//! Small synchronisation helpers shared by both engines.

use std::sync::{Mutex, MutexGuard};

/// Locks a mutex, surviving poisoning (a panicked task must not take the mock down).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
