//! `send`: write raw bytes (text, hex, base64, JSON or generated), optionally split into
//! several writes: on stdout over stdio, on the current stream over HTTP.

use super::op::Op;
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

/// The bytes to write (validated at load time).
fn bytes(step: &step::Send) -> Vec<u8> {
    step.payload().and_then(|p| p.bytes()).unwrap_or_default()
}

impl Op for step::Send {
    fn transports(&self) -> Transports {
        Transports::ALL
    }

    fn validate(&self, _cx: &mut Validation<'_>) -> Result<(), Problem> {
        self.payload()?.bytes()?;
        Ok(())
    }

    fn ends_in_output(&self) -> bool {
        true
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move { run.write_split(&bytes(self), self.chunking(), "send").await })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(s) = run.stream_for("send", None) else { return };
            let bytes = bytes(self);
            let chunking = self.chunking();
            let (pieces, rest) = chunking.split(&bytes);
            for piece in pieces {
                run.shared.write(run.n(), &s, piece.to_vec(), "send");
                if let Some(d) = chunking.delay() {
                    tokio::time::sleep(d).await;
                }
            }
            if !rest.is_empty() {
                run.shared.write(run.n(), &s, rest.to_vec(), "send");
            }
        })
    }
}
