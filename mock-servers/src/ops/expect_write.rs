//! `expect_write` (stdio, after `stop_reading`): wait until the client writes to stdin (or
//! closes it), leaving what it wrote unread. A server that exits right after spawn needs it
//! to exit at a known point: after the client's first write went into the pipe, not racing
//! it (a write before the exit succeeds; one after it fails with EPIPE).

use super::op::{About, Fault, Op};
use super::rules::{Problem, Validation};
use super::transports::Transports;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::ExpectWrite {
    fn about(&self) -> About {
        About::new(
            Transports::STDIO,
            Fault::None,
            "waits until the client writes to its stdin (or closes it), leaving the bytes unread",
        )
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        if cx.stopped_reading() {
            Ok(())
        } else {
            Err(Problem::Rule(
                "op `expect_write` waits for bytes the mock leaves unread, so it needs an earlier `stop_reading` on this connection (to wait for a message the mock reads, write `expect` with its method)".into(),
            ))
        }
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(run.unread_write())
    }
}
