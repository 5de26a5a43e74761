//! `ignore_sigterm` (stdio): from now on, record SIGTERM and keep running.

use super::op::Op;
use super::transports::Transports;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use std::sync::atomic::Ordering;

impl Op for step::IgnoreSigterm {
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
