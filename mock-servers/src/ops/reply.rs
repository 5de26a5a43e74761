//! `reply`: answer an expected request (the latest, or the one labelled `to`) with a
//! result or an error, optionally with a corrupted id, padding, CRLF or split writes
//! (stdio).

use super::op::Op;
use super::transports::Transports;
use super::rules::{self, Problem, Validation};
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::payload;
use mcp_scenario::script::{LineEnd, step};
use serde_json::Value;

/// The reply line answering a request with `id`.
fn line(step: &step::Reply, id: &Value, end: LineEnd) -> Vec<u8> {
    let id = payload::reply_id(id, step.wrong_id);
    payload::reply_line(id, step.result.as_ref(), step.error.as_ref(), step.pad_to, end)
}

impl Op for step::Reply {
    fn transports(&self) -> Transports {
        Transports::ALL
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
            let id = target.and_then(|m| m.get("id")).cloned().unwrap_or(Value::Null);
            let bytes = line(self, &id, self.line_end);
            run.write_split(&bytes, self.chunking(), "reply").await;
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(i) = run.target(self.to.as_deref()) else {
                return run.note("reply: no expected request to answer; nothing sent");
            };
            let id = run.held[i].inbound.message.get("id").cloned().unwrap_or(Value::Null);
            let message: Value = serde_json::from_slice(&line(self, &id, LineEnd::Lf)).unwrap_or(Value::Null);
            run.answer(i, &message, &[], "reply");
        })
    }
}
