//! `close_stdin` (stdio): close the read end of the client's pipe while the mock keeps
//! running, so the client's next write fails at once (EPIPE).

use super::op::{About, Fault, Op};
use super::transports::Transports;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::CloseStdin {
    fn about(&self) -> About {
        let explain = "closes its stdin (the client's later writes fail with a broken pipe) and keeps running";
        About::new(Transports::STDIO, Fault::Here, explain)
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            run.mock.close_stdin().await;
            run.note("close_stdin: the mock closed its stdin; the client's writes now fail");
        })
    }
}
