//! `request`: send a server-to-client request with a fresh id (`srv-1`, `srv-2`, …) or
//! the one the step gives, labelled for `expect_response` and checks.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::payload;
use mcp_scenario::script::{LineEnd, step};
use serde_json::{Value, json};
use std::collections::HashMap;

/// Gives the request the next id (remembered under its label) and builds it.
fn issue(step: &step::Request, ids: &mut HashMap<String, Value>) -> (Value, Value) {
    let id = step.id.clone().unwrap_or_else(|| json!(format!("srv-{}", ids.len() + 1)));
    ids.insert(step.label.clone(), id.clone());
    let message = payload::request(&id, &step.method, step.params.as_ref());
    (id, message)
}

impl Op for step::Request {
    fn about(&self) -> About {
        let explain = format!("sends the client the request `{}` (labelled `{}`)", self.method, self.label);
        About::new(Transports::ALL, Fault::None, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        match &self.id {
            Some(Value::String(_)) | None => {}
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {}
            Some(other) => {
                return Err(Problem::Field {
                    field: "id",
                    why: format!("{other} is not a string or an integer (a malformed request is a `send` step)"),
                });
            }
        }
        cx.requests(&self.label)
    }

    fn ends_in_output(&self) -> bool {
        true
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let (id, message) = issue(self, &mut run.server_ids);
            run.labelled(&self.label, &id, &self.method);
            run.mock.write(&payload::line(&message, LineEnd::Lf), "request").await;
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let (id, message) = issue(self, &mut run.server_ids);
            run.record(&mcp_scenario::WireEvent::Labelled {
                label: self.label.clone(),
                id,
                method: self.method.clone(),
            });
            run.send_message(None, &message, "request");
        })
    }
}
