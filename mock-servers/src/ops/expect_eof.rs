//! `expect_eof` (stdio): wait until stdin reaches EOF.

use super::op::Op;
use super::transports::Transports;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::ExpectEof {
    fn explain(&self) -> String {
        "waits until its stdin reaches EOF (the client closed it)".into()
    }

    fn transports(&self) -> Transports {
        Transports::STDIO
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(run.eof())
    }
}
