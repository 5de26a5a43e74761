//! `stateless` (2026-07-28): a standing change to the request checks the mock makes as a
//! 2026-07-28 server (see [`crate::stateless`]); on a stateful revision it changes nothing.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use crate::sync::lock;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::Stateless {
    fn about(&self) -> About {
        let explain = "changes the checks it makes on every 2026-07-28 request (the `_meta` and mirrored-header checks, the versions it accepts)";
        About::new(Transports::ALL.standing_rule(), Fault::None, explain)
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        if let Some(rules) = lock(&run.mock.stateless).as_mut() {
            rules.apply(self);
        }
        Box::pin(async {})
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        run.shared.set_stateless_rules(|rules| rules.apply(self));
        Box::pin(async {})
    }
}
