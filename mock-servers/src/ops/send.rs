//! `send`: write raw bytes (text, hex, base64, JSON or generated), optionally split into
//! several writes: on stdout over stdio, on the current stream over HTTP.

use super::op::Op;
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use crate::placeholder::{self, Missing};
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use serde_json::Value;

/// The bytes to write (validated at load time), placeholders replaced for `request`.
fn bytes(step: &step::Send, request: Option<&Value>) -> Result<Vec<u8>, Missing> {
    match step.payload() {
        Ok(p) => placeholder::bytes(p, request),
        Err(_) => Ok(Vec::new()),
    }
}

impl Op for step::Send {
    fn transports(&self) -> Transports {
        Transports::ALL
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        let payload = self.payload()?;
        payload.bytes()?;
        cx.placeholders(placeholder::field_of(payload), placeholder::in_payload(payload))
    }

    fn ends_in_output(&self) -> bool {
        true
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            match bytes(self, run.latest.as_ref()) {
                Ok(bytes) => run.write_split(&bytes, self.chunking(), "send").await,
                Err(e) => run.note(&format!("send: {e}; nothing sent")),
            }
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(s) = run.stream_for("send", None) else { return };
            let bytes = match bytes(self, run.latest_request()) {
                Ok(bytes) => bytes,
                Err(e) => return run.note(format!("send: {e}; nothing sent")),
            };
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
