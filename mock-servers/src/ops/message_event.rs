//! `message_event` (HTTP): the SSE `event:` name later JSON-RPC messages are written with.

use super::op::Op;
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::sync::lock;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::MessageEvent {
    fn explain(&self) -> String {
        if self.name.is_empty() {
        "writes later JSON-RPC messages as unnamed SSE events".into()
    } else {
        format!("writes later JSON-RPC messages as SSE events named `{}`", self.name)
    }
    }

    fn transports(&self) -> Transports {
        Transports::HTTP.standing_rule()
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move { *lock(&run.conn.message_event) = self.name.clone() })
    }
}
