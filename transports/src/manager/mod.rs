//! The manager layer (SPEC §7): named connections that reconnect after an unexpected close
//! (backoff 500, 1000, 2000, 4000 ms plus jitter, a storm breaker), keep the last tools
//! visible meanwhile and reload them after, refresh a list on its `list_changed`, start a
//! new session after a 404 and retry that request once, and replay a failed tool call only
//! when that cannot run it twice; 2026-07-28 subscriptions are re-sent after a reconnect,
//! reporting the window in which notifications may have been missed.
//!
//! # Layout
//!
//! - [`policy`] — the backoff schedule and breaker settings ([`ReconnectPolicy`]).
//! - [`breaker`] — the storm breaker's sliding window.
//! - [`retry`] — the tool-call replay rule, from typed facts only.
//! - [`event`] — what a connection reports about itself, with times.
//! - [`resubscribe`] — 2026-07-28 subscriptions across a reconnect: which failed listen is
//!   re-sent, and matching the new acknowledgement (the possibly-missed window's end).
//! - [`connection`] — one [`ManagedConnection`]: its transport generations and recovery,
//!   and its long-lived `subscriptions/listen`.

pub mod breaker;
pub mod connection;
pub mod event;
pub mod policy;
pub mod resubscribe;
pub mod retry;

pub use connection::{ManagedConfig, ManagedConnection, Status};
pub use event::{EventKind, ManagerEvent};
pub use policy::ReconnectPolicy;

use crate::error::TransportError;
use crate::pending::lock;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Managed connections by name.
#[derive(Default)]
pub struct Manager {
    connections: Mutex<BTreeMap<String, ManagedConnection>>,
}

impl Manager {
    /// No connections yet.
    pub fn new() -> Self {
        Manager::default()
    }

    /// Connects `name`, replacing (and closing) a connection of that name.
    pub async fn connect(&self, name: &str, config: ManagedConfig) -> Result<ManagedConnection, TransportError> {
        let connection = ManagedConnection::connect(config).await?;
        let old = lock(&self.connections).insert(name.to_owned(), connection.clone());
        if let Some(old) = old {
            old.close().await;
        }
        Ok(connection)
    }

    /// The connection named `name`.
    pub fn get(&self, name: &str) -> Option<ManagedConnection> {
        lock(&self.connections).get(name).cloned()
    }

    /// The names, in order.
    pub fn names(&self) -> Vec<String> {
        lock(&self.connections).keys().cloned().collect()
    }

    /// Closes and forgets `name`.
    pub async fn disconnect(&self, name: &str) {
        let removed = lock(&self.connections).remove(name);
        if let Some(c) = removed {
            c.close().await;
        }
    }

    /// Closes every connection.
    pub async fn close_all(&self) {
        let all: Vec<ManagedConnection> = std::mem::take(&mut *lock(&self.connections)).into_values().collect();
        for c in all {
            c.close().await;
        }
    }
}
