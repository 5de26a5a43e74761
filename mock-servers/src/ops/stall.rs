//! `stall`: stop the script for good (it counts as finished); unscripted requests are
//! still answered.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::Stall {
    fn about(&self) -> About {
        About::new(Transports::ALL, Fault::Here, "stops: it never answers again (unscripted requests still get -32601)")
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            run.mock.finish();
            std::future::pending::<()>().await;
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            run.progress(run.index + 1, true);
            std::future::pending::<()>().await;
        })
    }
}
