//! `subscriptions/listen` on the modern revisions (2026-07-28, SPEC §4, seed 003 §5.4): the
//! change notifications a client opted in to arrive on the listen request's stream, each
//! carrying `_meta["io.modelcontextprotocol/subscriptionId"]` (the listen request's id).
//!
//! [`Subscriptions`] sits in front of the caller's notification handler: a change
//! notification (the `notifications/subscriptions/acknowledged` first, then
//! `…/list_changed`, `resources/updated`) is delivered only when it carries the id of a
//! listen request still in flight whose subscription was acknowledged; one without an id,
//! or for any other id, is dropped and reported. Each listen's subscription ends with that
//! listen alone: others stay open. Request-scoped notifications (progress, logging) pass
//! through untouched.
//!
//! The listen loop itself ([`crate::stateless::Stateless`]) re-sends a listen whose stream
//! dropped (the stream ended with no response), with the same filter after a short
//! backoff, reporting the possibly-missed window; a response ends the subscription cleanly.

use crate::error::TransportError;
use crate::message::RequestId;
use crate::pending::lock;
use crate::transport::{ErrorHandler, NotificationHandler, SentId};
use serde_json::Value;
use std::sync::Arc;
use std::sync::Mutex;
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
    /// Listen requests in flight, each with the id it went out with and whether the
    /// server acknowledged its subscription.
    listens: Mutex<Vec<Listen>>,
    deliver: Option<NotificationHandler>,
    report: Option<ErrorHandler>,
}

/// One listen request in flight.
struct Listen {
    sent: SentId,
    acknowledged: bool,
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
            let id = params.get("_meta").and_then(|m| m.get(META_SUBSCRIPTION_ID));
            let Some(id) = id.and_then(RequestId::from_value) else {
                return self.drop_it(format!("{method} without _meta[\"{META_SUBSCRIPTION_ID}\"] dropped"));
            };
            let shown = id.to_value();
            let refused = match lock(&self.listens).iter_mut().find(|l| l.sent.get().as_ref() == Some(&id)) {
                None => Some(format!("{method} for subscription {shown}, no open listen request, dropped")),
                Some(listen) if method == ACKNOWLEDGED => {
                    listen.acknowledged = true;
                    None
                }
                Some(listen) if !listen.acknowledged => {
                    Some(format!("{method} for unacknowledged subscription {shown} dropped"))
                }
                Some(_) => None,
            };
            if let Some(why) = refused {
                return self.drop_it(why);
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

    /// A listen request is about to be sent: its notifications are let through once the
    /// transport fills `sent` (give it as [`RequestOptions::sent_id`]) and the server
    /// acknowledges that id.
    ///
    /// [`RequestOptions::sent_id`]: crate::RequestOptions::sent_id
    pub fn listen_started(&self, sent: &SentId) {
        lock(&self.listens).push(Listen { sent: sent.clone(), acknowledged: false });
    }

    /// Whether the listen sent through `sent` has had its subscription acknowledged.
    pub fn acknowledged(&self, sent: &SentId) -> bool {
        lock(&self.listens).iter().any(|l| l.sent.same_slot(sent) && l.acknowledged)
    }

    /// The listen sent through `sent` ended (response, error or drop): its subscription
    /// ends; the other listens' stay.
    pub fn listen_ended(&self, sent: &SentId) {
        lock(&self.listens).retain(|l| !l.sent.same_slot(sent));
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

    type Seen = Arc<Mutex<Vec<String>>>;

    fn gate() -> (Arc<Subscriptions>, Seen, Seen) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let reports = Arc::new(Mutex::new(Vec::new()));
        let (s, r) = (seen.clone(), reports.clone());
        let gate = Subscriptions::new(
            Some(Arc::new(move |m: &str, _: &Value| lock(&s).push(m.to_owned()))),
            Some(Arc::new(move |e: &TransportError| lock(&r).push(e.to_string()))),
        );
        (gate, seen, reports)
    }

    fn with_id(id: Value) -> Value {
        json!({"_meta": {META_SUBSCRIPTION_ID: id}})
    }

    #[test]
    fn change_notifications_need_an_acknowledged_subscription() {
        let (gate, seen, reports) = gate();
        let h = gate.handler();
        h("notifications/tools/list_changed", &with_id(json!(1)));
        let listen = SentId::default();
        gate.listen_started(&listen);
        listen.set(&RequestId::Number(1));
        h("notifications/tools/list_changed", &with_id(json!(1)));
        h(ACKNOWLEDGED, &with_id(json!(2)));
        h(ACKNOWLEDGED, &with_id(json!(1)));
        assert!(gate.acknowledged(&listen));
        h("notifications/tools/list_changed", &with_id(json!(1)));
        h("notifications/tools/list_changed", &with_id(json!("1")));
        h("notifications/tools/list_changed", &json!({}));
        h("notifications/progress", &json!({}));
        gate.listen_ended(&listen);
        h("notifications/tools/list_changed", &with_id(json!(1)));
        assert_eq!(*lock(&seen), [ACKNOWLEDGED, "notifications/tools/list_changed", "notifications/progress"]);
        assert_eq!(lock(&reports).len(), 6, "{:?}", lock(&reports));
    }

    #[test]
    fn a_listen_ending_ends_only_its_own_subscription() {
        let (gate, seen, _) = gate();
        let h = gate.handler();
        let (first, second) = (SentId::default(), SentId::default());
        gate.listen_started(&first);
        gate.listen_started(&second);
        first.set(&RequestId::Number(1));
        second.set(&RequestId::Number(2));
        h(ACKNOWLEDGED, &with_id(json!(1)));
        h(ACKNOWLEDGED, &with_id(json!(2)));
        gate.listen_ended(&first);
        h("notifications/resources/updated", &with_id(json!(2)));
        h("notifications/tools/list_changed", &with_id(json!(1)));
        assert_eq!(*lock(&seen), [ACKNOWLEDGED, ACKNOWLEDGED, "notifications/resources/updated"]);
        assert!(gate.acknowledged(&second) && !gate.acknowledged(&first));
    }
}
