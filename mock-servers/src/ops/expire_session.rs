//! `expire_session` (HTTP): the current session expires; requests carrying its id get 404
//! (only those with `http_method`, when given).

use super::op::{About, Fault, Op};
use super::rules::{self, Problem, Validation};
use super::transports::Transports;
use crate::http::run::HttpRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::ExpireSession {
    fn about(&self) -> About {
        let explain = "expires the session: from now on a request carrying its id is answered 404";
        About::new(Transports::HTTP.standing_rule(), Fault::FromNextMessage, explain)
    }

    fn validate(&self, _cx: &mut Validation<'_>) -> Result<(), Problem> {
        rules::http_method_filter(self.http_method.as_deref())
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move { run.shared.expire_session(&run.conn, self.http_method.as_deref()) })
    }
}
