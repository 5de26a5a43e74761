//! `ignore_sigterm` (stdio): from now on, record SIGTERM and keep running.

use super::op::{Fault, Op};
use super::transports::Transports;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use std::sync::atomic::Ordering;

impl Op for step::IgnoreSigterm {
    /// In force from here; the client meets it when it closes, whatever it sends before.
    fn fault(&self) -> Fault {
        Fault::Here
    }

    fn explain(&self) -> String {
        "from now on records SIGTERM and keeps running".into()
    }

    fn transports(&self) -> Transports {
        Transports::STDIO
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move { run.mock.ignore_sigterm.store(true, Ordering::SeqCst) })
    }
}
