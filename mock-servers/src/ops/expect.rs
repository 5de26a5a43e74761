//! `expect`: wait for the next client message with a method (request or notification),
//! optionally labelling it for later steps and checks.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::Expect {
    fn about(&self) -> About {
        let explain = match &self.label {
            Some(l) => format!("waits for the client's `{}` (labelled `{l}`)", self.method),
            None => format!("waits for the client's `{}`", self.method),
        };
        About::new(Transports::ALL, Fault::None, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.expects(self.label.as_deref());
        cx.expects_method(&self.method);
        Ok(())
    }

    fn consumes(&self) -> Vec<&str> {
        vec![&self.method]
    }

    fn describe(&self, name: &'static str) -> String {
        format!("{name} {}", self.method)
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let message = run.expect(&self.method).await;
            if let Some(id) = message.get("id").cloned() {
                if let Some(l) = &self.label {
                    run.labelled(l, &id, &self.method);
                    run.requests.insert(l.clone(), message.clone());
                }
                run.latest = Some(message);
            }
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let answered_next = next.is_some_and(|n| n.answers(self.label.as_deref()));
            let i = run.consume(&self.method, self.label.clone(), answered_next).await;
            if run.held[i].inbound.message.get("id").is_some_and(|id| !id.is_null()) {
                run.latest = Some(i);
            }
        })
    }
}
