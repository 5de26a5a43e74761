//! `expire_session` (HTTP): the current session expires; requests carrying its id get 404.

use super::op::Op;
use super::transports::Transports;
use crate::http::run::HttpRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::ExpireSession {
    fn transports(&self) -> Transports {
        Transports::HTTP.standing_rule()
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move { run.shared.expire_session(&run.conn) })
    }
}
