//! `ignore_sigterm` (stdio): from now on, record SIGTERM and keep running.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use std::sync::atomic::Ordering;

impl Op for step::IgnoreSigterm {
    fn about(&self) -> About {
        // In force from here; the client meets it when it closes, whatever it sends before.
        About::new(Transports::STDIO, Fault::Here, "from now on records SIGTERM and keeps running")
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move { run.mock.ignore_sigterm.store(true, Ordering::SeqCst) })
    }
}
