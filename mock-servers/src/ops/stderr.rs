//! `stderr` (stdio): write to stderr, which the client must treat as a log, never an error.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::placeholder;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::Stderr {
    fn about(&self) -> About {
        let explain = "writes to its stderr (a log, which the client must never treat as an error)";
        About::new(Transports::STDIO, Fault::Here, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        // Only the choice: a bad `generate.fill` writes nothing (as it always has).
        let payload = self.payload()?;
        cx.placeholders(placeholder::field_of(payload), placeholder::in_payload(payload))
    }

    fn ends_in_output(&self) -> bool {
        true
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let bytes = match self.payload() {
                Ok(p) => placeholder::bytes(p, run.latest.as_ref()),
                Err(_) => Ok(Vec::new()),
            };
            match bytes {
                Ok(bytes) => run.mock.write_stderr(&bytes).await,
                Err(e) => run.note(&format!("stderr: {e}; nothing written")),
            }
        })
    }
}
