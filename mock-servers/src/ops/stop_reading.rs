//! `stop_reading` (stdio): stop reading stdin, so the client's writes eventually block.

use super::op::{Fault, Op};
use super::transports::Transports;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use std::sync::atomic::Ordering;

impl Op for step::StopReading {
    fn fault(&self) -> Fault {
        Fault::Here
    }

    fn explain(&self) -> String {
        "stops reading its stdin, so the client's writes eventually block".into()
    }

    fn transports(&self) -> Transports {
        Transports::STDIO
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move { run.mock.reading.store(false, Ordering::SeqCst) })
    }
}
