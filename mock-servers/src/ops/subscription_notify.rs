//! `subscription_notify` (2026-07-28): a notification on a `subscriptions/listen`
//! request's subscription, carrying `_meta["io.modelcontextprotocol/subscriptionId"]` =
//! that request's id (or, for a broken server, none or another one). Over HTTP it goes on
//! the stream answering that request; over stdio on stdout.

use super::op::{About, Fault, Op};
use super::rules::{Problem, Validation};
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::payload::{self, META_SUBSCRIPTION_ID};
use mcp_scenario::script::{LineEnd, step};
use serde_json::{Value, json};


/// The notification for the listen request whose id is `id`.
fn message(step: &step::SubscriptionNotify, id: &Value) -> Value {
    let mut params = match &step.params {
        Some(Value::Object(m)) => m.clone(),
        _ => serde_json::Map::new(),
    };
    let sid = match step.subscription_id {
        step::SubscriptionId::Own => Some(id.clone()),
        step::SubscriptionId::Omit => None,
        step::SubscriptionId::Other => Some(json!("no-such-subscription")),
    };
    if let Some(sid) = sid {
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.insert(META_SUBSCRIPTION_ID.into(), sid);
        }
    }
    payload::notification(&step.method, Some(&Value::Object(params)))
}

impl Op for step::SubscriptionNotify {
    fn about(&self) -> About {
        // A notification without its subscription id, or with another, is the fault.
        let fault = if self.subscription_id == step::SubscriptionId::Own { Fault::None } else { Fault::Here };
        let explain = format!("sends `{}` on the subscription opened by `{}`", self.method, self.to);
        About::new(Transports::ALL, fault, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.expected(Some(&self.to))
    }

    fn ends_in_output(&self) -> bool {
        true
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let id = run.requests.get(&self.to).and_then(|m| m.get("id")).cloned().unwrap_or(Value::Null);
            run.mock.write(&payload::line(&message(self, &id), LineEnd::Lf), "subscription_notify").await;
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(i) = run.target(Some(&self.to)) else {
                return run.note("subscription_notify: no such listen request; nothing sent");
            };
            let id = run.held[i].inbound.message.get("id").cloned().unwrap_or(Value::Null);
            let Some(stream) = run.held[i].stream.clone().and_then(|l| run.stream(Some(&l))) else {
                return run.note("subscription_notify: the listen request has no open stream; nothing sent");
            };
            run.send_message(Some(stream), &message(self, &id), "subscription_notify");
        })
    }
}
