//! `ignore_stdin_eof` (stdio): from now on, keep running after stdin reaches EOF.

use super::op::{Fault, Op};
use super::transports::Transports;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use std::sync::atomic::Ordering;

impl Op for step::IgnoreStdinEof {
    /// In force from here; the client meets it when it closes, whatever it sends before.
    fn fault(&self) -> Fault {
        Fault::Here
    }

    fn explain(&self) -> String {
        "from now on keeps running after its stdin reaches EOF".into()
    }

    fn transports(&self) -> Transports {
        Transports::STDIO
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move { run.mock.ignore_eof.store(true, Ordering::SeqCst) })
    }
}
