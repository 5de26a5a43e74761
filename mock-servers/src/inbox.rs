//! What a connection's script waits on, in both engines: the scripted client messages that
//! arrived before the step that consumes them ([`Inbox`]), and the client's answers to
//! server-to-client requests ([`Answers`]).

use crate::sync::lock;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use tokio::sync::Notify;

/// Scripted messages not yet consumed, oldest first.
pub struct Inbox<T> {
    items: Mutex<VecDeque<T>>,
    ready: Notify,
}

impl<T> Default for Inbox<T> {
    fn default() -> Self {
        Inbox { items: Mutex::new(VecDeque::new()), ready: Notify::new() }
    }
}

impl<T> Inbox<T> {
    /// Hands a message to the script.
    pub fn deliver(&self, item: T) {
        lock(&self.items).push_back(item);
        self.ready.notify_waiters();
    }

    /// Whether a message `wanted` accepts is waiting.
    pub fn contains(&self, wanted: impl Fn(&T) -> bool) -> bool {
        lock(&self.items).iter().any(wanted)
    }

    /// Takes the oldest message `wanted` accepts, waiting for one; `waiting` runs each time
    /// there is none yet, just before the wait.
    pub async fn take(&self, wanted: impl Fn(&T) -> bool, mut waiting: impl FnMut()) -> T {
        loop {
            let notified = self.ready.notified();
            {
                let mut items = lock(&self.items);
                if let Some(pos) = items.iter().position(&wanted)
                    && let Some(item) = items.remove(pos)
                {
                    return item;
                }
            }
            waiting();
            notified.await;
        }
    }
}

/// The client's answers to server-to-client requests, by id (its JSON text, so `1` and
/// `"1"` differ).
#[derive(Default)]
pub struct Answers {
    by_id: Mutex<HashMap<String, Value>>,
    ready: Notify,
}

impl Answers {
    /// Stores the answer to the request with `id`.
    pub fn insert(&self, id: &Value, message: Value) {
        lock(&self.by_id).insert(id.to_string(), message);
        self.ready.notify_waiters();
    }

    /// Whether the request whose id's JSON text is `key` has been answered.
    pub fn contains(&self, key: &str) -> bool {
        lock(&self.by_id).contains_key(key)
    }

    /// Waits for the answer to the request whose id's JSON text is `key`; `waiting` runs
    /// each time it has not come yet, just before the wait.
    pub async fn wait(&self, key: &str, mut waiting: impl FnMut()) {
        loop {
            let notified = self.ready.notified();
            if self.contains(key) {
                return;
            }
            waiting();
            notified.await;
        }
    }
}
