//! `message_event` (HTTP): the SSE `event:` name later JSON-RPC messages are written with.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::sync::lock;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::MessageEvent {
    fn about(&self) -> About {
        let explain = if self.name.is_empty() {
            "writes later JSON-RPC messages as unnamed SSE events".into()
        } else {
            format!("writes later JSON-RPC messages as SSE events named `{}`", self.name)
        };
        About::new(Transports::HTTP.standing_rule(), Fault::None, explain)
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move { *lock(&run.conn.message_event) = self.name.clone() })
    }
}
