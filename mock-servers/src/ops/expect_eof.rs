//! `expect_eof` (stdio): wait until stdin reaches EOF.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::ExpectEof {
    fn about(&self) -> About {
        About::new(Transports::STDIO, Fault::None, "waits until its stdin reaches EOF (the client closed it)")
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(run.eof())
    }
}
