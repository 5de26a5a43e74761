//! `reply`: answer an expected request (the latest, or the one labelled `to`) with a
//! result or an error, optionally with a corrupted id, padding, CRLF or split writes
//! (stdio). A result answering `subscriptions/listen` carries
//! `_meta["io.modelcontextprotocol/subscriptionId"]` = the request's id unless the script set
//! one (2026-07-28 subscriptions.mdx Graceful Closure: "Like every other message on the
//! stream, the response carries io.modelcontextprotocol/subscriptionId in _meta").

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{self, Problem, Validation};
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::payload::{self, META_SUBSCRIPTION_ID};
use mcp_scenario::script::{LineEnd, step};
use serde_json::Value;


/// The reply line answering `request`.
fn line(step: &step::Reply, request: Option<&Value>, end: LineEnd) -> Vec<u8> {
    let id = request.and_then(|m| m.get("id")).cloned().unwrap_or(Value::Null);
    let result = step.result.clone().map(|r| stamp_subscription(r, request));
    let id = payload::reply_id(&id, step.wrong_id);
    payload::reply_line(id, result.as_ref(), step.error.as_ref(), step.pad_to, end)
}

/// A `subscriptions/listen` result gets its subscription id in `_meta` (the request's id)
/// when the script wrote none; every other result is left as written.
fn stamp_subscription(mut result: Value, request: Option<&Value>) -> Value {
    let Some(request) = request.filter(|m| m.get("method").and_then(Value::as_str) == Some("subscriptions/listen")) else {
        return result;
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    if let Value::Object(map) = &mut result
        && let Value::Object(meta) = map.entry("_meta").or_insert_with(|| Value::Object(Default::default()))
    {
        meta.entry(META_SUBSCRIPTION_ID).or_insert(id);
    }
    result
}

impl Op for step::Reply {
    fn about(&self) -> About {
        // A corrupted id, split writes or CRLF are the fault; a well-formed answer is none.
        let odd = self.wrong_id.is_some() || !self.chunks.is_empty() || self.line_end != LineEnd::Lf;
        let fault = if odd { Fault::Here } else { Fault::None };
        let to = super::op::to_words(self.to.as_deref());
        let what = match (&self.result, &self.error) {
            (_, Some(e)) => format!("the error {}", super::op::short(e)),
            (Some(r), None) => format!("the result {}", super::op::short(r)),
            (None, None) => "an empty result".into(),
        };
        let mut explain = format!("answers {to} with {what}");
        if let Some(w) = self.wrong_id { explain.push_str(&format!(", under a wrong id ({w:?})")); }
        if !self.chunks.is_empty() { explain.push_str(&format!(", written in {} pieces", self.chunks.len() + 1)); }
        About::new(Transports::ALL, fault, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.expected(self.to.as_deref())?;
        rules::one_of(("result", &self.result), ("error", &self.error))
    }

    fn ends_in_output(&self) -> bool {
        true
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let target = match &self.to {
                Some(l) => run.requests.get(l),
                None => run.latest.as_ref(),
            };
            let bytes = line(self, target, self.line_end);
            run.write_split(&bytes, self.chunking(), "reply").await;
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(i) = run.target(self.to.as_deref()) else {
                return run.note("reply: no expected request to answer; nothing sent");
            };
            let request = run.held[i].inbound.message.clone();
            let message: Value = serde_json::from_slice(&line(self, Some(&request), LineEnd::Lf)).unwrap_or(Value::Null);
            run.answer(i, &message, &[], "reply");
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn listen_results_name_their_subscription() {
        let listen = json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": {}});
        let stamped = stamp_subscription(json!({"resultType": "complete"}), Some(&listen));
        assert_eq!(stamped, json!({"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: 7}}));
        let own = json!({"_meta": {META_SUBSCRIPTION_ID: "x"}});
        assert_eq!(stamp_subscription(own.clone(), Some(&listen)), own);
        let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call"});
        assert_eq!(stamp_subscription(json!({"content": []}), Some(&call)), json!({"content": []}));
    }
}
