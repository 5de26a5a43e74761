//! `stderr` (stdio): write to stderr, which the client must treat as a log, never an error.

use super::op::Op;
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::Stderr {
    fn transports(&self) -> Transports {
        Transports::STDIO
    }

    fn validate(&self, _cx: &mut Validation<'_>) -> Result<(), Problem> {
        // Only the choice: a bad `generate.fill` writes nothing (as it always has).
        self.payload()?;
        Ok(())
    }

    fn ends_in_output(&self) -> bool {
        true
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let bytes = self.payload().and_then(|p| p.bytes()).unwrap_or_default();
            run.mock.write_stderr(&bytes).await;
        })
    }
}
