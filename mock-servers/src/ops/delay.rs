//! `delay`: do nothing for a while.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use std::time::Duration;

impl Op for step::Delay {
    fn about(&self) -> About {
        About::new(Transports::ALL, Fault::Here, format!("waits {}ms", self.ms))
    }

    fn run_stdio<'a>(&'a self, _run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(tokio::time::sleep(Duration::from_millis(self.ms)))
    }

    fn run_http<'a>(&'a self, _run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(tokio::time::sleep(Duration::from_millis(self.ms)))
    }
}
