//! `expect_response`: wait for the client's answer to a server-to-client `request`.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use serde_json::Value;

impl Op for step::ExpectResponse {
    fn about(&self) -> About {
        About::new(Transports::ALL, Fault::None, format!("waits for the client's answer to its request `{}`", self.to))
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.requested(&self.to)
    }

    fn describe(&self, name: &'static str) -> String {
        format!("{name} {}", self.to)
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let key = run.server_ids.get(&self.to).map(Value::to_string).unwrap_or_default();
            run.answered(&key).await;
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let id = run.server_ids.get(&self.to).cloned().unwrap_or(Value::Null);
            run.conn.answered(&id).await;
        })
    }
}
