//! `stop_reading` (stdio): stop reading stdin, so the client's writes eventually block.

use super::op::{About, Fault, Op};
use super::rules::{Problem, Validation};
use super::transports::Transports;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use std::sync::atomic::Ordering;

impl Op for step::StopReading {
    fn about(&self) -> About {
        About::new(Transports::STDIO, Fault::Here, "stops reading its stdin, so the client's writes eventually block")
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.stops_reading();
        Ok(())
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move { run.mock.reading.store(false, Ordering::SeqCst) })
    }
}
