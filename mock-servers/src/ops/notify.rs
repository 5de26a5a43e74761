//! `notify`: send a notification (on stdout, or on the current stream over HTTP).

use super::op::Op;
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::payload;
use mcp_scenario::script::{LineEnd, step};

impl Op for step::Notify {
    fn transports(&self) -> Transports {
        Transports::ALL
    }

    fn ends_in_output(&self) -> bool {
        true
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let message = payload::notification(&self.method, self.params.as_ref());
            run.mock.write(&payload::line(&message, LineEnd::Lf), "notify").await;
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move { run.send_message(None, &payload::notification(&self.method, self.params.as_ref()), "notify") })
    }
}
