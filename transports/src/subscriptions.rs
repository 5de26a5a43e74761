//! `subscriptions/listen` on the modern revisions (2026-07-28, SPEC §4, seed 003 §5.4): the
//! change notifications a client opted in to arrive on the listen request's stream, each
//! carrying `_meta["io.modelcontextprotocol/subscriptionId"]` (the listen request's id).
//!
//! [`Subscriptions`] sits in front of the caller's notification handler: a change
//! notification (the `notifications/subscriptions/acknowledged` first, then
//! `…/list_changed`, `resources/updated`) is delivered only when it carries the id of a
//! subscription that was acknowledged while a listen request was in flight; one without an
//! id, or for an unknown subscription, is dropped and reported. Request-scoped
//! notifications (progress, logging) pass through untouched.
//!
//! The listen loop itself ([`crate::stateless::Stateless`]) re-sends a listen whose stream
//! dropped (the stream ended with no response), with the same filter after a short
//! backoff, reporting the possibly-missed window; a response ends the subscription cleanly.

use crate::error::TransportError;
use crate::pending::lock;
use crate::transport::{ErrorHandler, NotificationHandler};
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The `_meta` key of a notification's subscription.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The first message of every subscription.
pub const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// The notifications that only arrive through a subscription on 2026-07-28.
const CHANGE_NOTIFICATIONS: &[&str] = &[
    ACKNOWLEDGED,
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
];
/// The waits before re-sending a dropped listen, one per attempt; then the drop is the
/// caller's error. Short: the listen request is re-established, not replayed.
pub const RELISTEN_BACKOFF_MS: &[u64] = &[20, 50, 100, 200, 400];

/// The subscriptions of one connection (see the module docs).
#[derive(Default)]
pub struct Subscriptions {
    /// Acknowledged subscription ids (their JSON text: `1` and `"1"` differ).
    active: Mutex<BTreeSet<String>>,
    /// Listen requests in flight: an acknowledgement is only believed while one is.
    listening: AtomicUsize,
    deliver: Option<NotificationHandler>,
    report: Option<ErrorHandler>,
}

impl Subscriptions {
    /// A gate in front of `deliver`, reporting through `report`.
    pub fn new(deliver: Option<NotificationHandler>, report: Option<ErrorHandler>) -> Arc<Self> {
        Arc::new(Subscriptions { deliver, report, ..Subscriptions::default() })
    }

    /// The notification handler to give the transport.
    pub fn handler(self: &Arc<Self>) -> NotificationHandler {
        let me = self.clone();
        Arc::new(move |method: &str, params: &Value| me.on_notification(method, params))
    }

    fn on_notification(&self, method: &str, params: &Value) {
        if CHANGE_NOTIFICATIONS.contains(&method) {
            let id = params.get("_meta").and_then(|m| m.get(META_SUBSCRIPTION_ID)).filter(|v| !v.is_null());
            let Some(id) = id.map(Value::to_string) else {
                return self.drop_it(format!("{method} without _meta[\"{META_SUBSCRIPTION_ID}\"] dropped"));
            };
            if method == ACKNOWLEDGED {
                if self.listening.load(Ordering::SeqCst) == 0 {
                    return self.drop_it(format!("{method} for subscription {id} while no listen is open dropped"));
                }
                lock(&self.active).insert(id);
            } else if !lock(&self.active).contains(&id) {
                return self.drop_it(format!("{method} for unacknowledged subscription {id} dropped"));
            }
        }
        if let Some(deliver) = &self.deliver {
            deliver(method, params);
        }
    }

    fn drop_it(&self, why: String) {
        tracing::debug!(%why, "subscription notification dropped");
        self.report(&TransportError::Protocol(why));
    }

    /// Reports through the error handler.
    pub fn report(&self, err: &TransportError) {
        if let Some(report) = &self.report {
            report(err);
        }
    }

    /// A listen request is about to be sent; returns the ids acknowledged so far, so
    /// [`Self::listen_ended`] can retire the ones this listen added.
    pub fn listen_started(&self) -> BTreeSet<String> {
        self.listening.fetch_add(1, Ordering::SeqCst);
        lock(&self.active).clone()
    }

    /// Whether a subscription was acknowledged since [`Self::listen_started`] returned
    /// `before`.
    pub fn acknowledged_since(&self, before: &BTreeSet<String>) -> bool {
        lock(&self.active).iter().any(|id| !before.contains(id))
    }

    /// A listen request ended (response, error or drop): the subscriptions it opened end.
    pub fn listen_ended(&self, before: &BTreeSet<String>) {
        self.listening.fetch_sub(1, Ordering::SeqCst);
        let only_one = self.listening.load(Ordering::SeqCst) == 0;
        let mut active = lock(&self.active);
        if only_one {
            active.clear();
        } else {
            active.retain(|id| before.contains(id));
        }
    }
}

/// Whether a listen request's failure is its stream dropping (re-established), rather
/// than an answer, a cancellation or the transport closing (given to the caller).
pub fn dropped(err: &TransportError) -> bool {
    matches!(err, TransportError::NoResponse { .. } | TransportError::ConnectionLost(_))
}

/// The wait before re-listen attempt `attempt` (from 1), if another is allowed.
pub fn backoff(attempt: usize) -> Option<Duration> {
    RELISTEN_BACKOFF_MS.get(attempt - 1).map(|ms| Duration::from_millis(*ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn change_notifications_need_an_acknowledged_subscription() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let reports = Arc::new(Mutex::new(Vec::new()));
        let (s, r) = (seen.clone(), reports.clone());
        let gate = Subscriptions::new(
            Some(Arc::new(move |m: &str, _: &Value| lock(&s).push(m.to_owned()))),
            Some(Arc::new(move |e: &TransportError| lock(&r).push(e.to_string()))),
        );
        let h = gate.handler();
        let with_id = |id: Value| json!({"_meta": {META_SUBSCRIPTION_ID: id}});
        h("notifications/tools/list_changed", &with_id(json!(1)));
        let before = gate.listen_started();
        h(ACKNOWLEDGED, &with_id(json!(1)));
        h("notifications/tools/list_changed", &with_id(json!(1)));
        h("notifications/tools/list_changed", &with_id(json!("1")));
        h("notifications/tools/list_changed", &json!({}));
        h("notifications/progress", &json!({}));
        gate.listen_ended(&before);
        h("notifications/tools/list_changed", &with_id(json!(1)));
        assert_eq!(*lock(&seen), [ACKNOWLEDGED, "notifications/tools/list_changed", "notifications/progress"]);
        assert_eq!(lock(&reports).len(), 4);
    }
}
