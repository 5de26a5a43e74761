//! `expect_get` (HTTP): wait for the client's GET (the Streamable HTTP listener, or the
//! legacy SSE stream) and answer it: an open stream that becomes the current one by
//! default, else a plain response. With `repeat`, the answer stands for every later GET
//! (a retry or reconnect loop meets it again, recorded); with `optional`, the script does
//! not wait for a GET that has not come (the listener is a MAY) and the first one that
//! comes later gets the answer.

use super::op::Op;
use super::rules::{self, Problem, Validation};
use super::transports::Transports;
use crate::http::conn::{GET, GetAnswer, Shape, StandingGet};
use crate::http::run::HttpRun;
use crate::http::standing;
use crate::sync::lock;
use bytes::Bytes;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::ExpectGet {
    fn explain(&self) -> String {
        let mut s = match shape(self) {
            Shape::OpenStream => {
                "waits for the client's GET and answers with an open SSE stream (the current stream from now on)"
                    .to_string()
            }
            Shape::EndedStream => "waits for the client's GET and answers with an SSE stream that ends at once".into(),
            Shape::Plain => format!("waits for the client's GET and answers {}", self.status),
        };
        if self.optional { s.push_str("; the GET is optional (a client that sends none is not held to it)"); }
        if self.repeat { s.push_str("; every later GET is answered the same way"); }
        s
    }

    fn transports(&self) -> Transports {
        Transports::HTTP
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        rules::response(self.status, &self.headers)?;
        if self.optional && shape(self) == Shape::OpenStream {
            return Err(Problem::field(
                "optional",
                "an optional GET needs an answer the mock gives on its own: a non-2xx `status`, \
                 `close: true` or a non-stream `content_type` (later steps could not write on a \
                 stream the script never waited for)",
            ));
        }
        if cx.after_optional_get() {
            return Err(Problem::Rule(
                "an `expect_get` after an optional one on the same connection: make the optional one the last"
                    .into(),
            ));
        }
        if self.optional {
            cx.optional_get();
        }
        cx.opens_stream(self.label.as_deref());
        Ok(())
    }

    fn consumes(&self) -> Vec<&str> {
        vec![GET]
    }

    fn describe(&self, name: &'static str) -> String {
        if self.optional { format!("{name} (optional)") } else { name.to_string() }
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let answer = answer(self, run);
            if self.repeat || self.optional {
                // Kept before the GET is taken, so no GET ever falls between the two.
                *lock(&run.conn.standing_get) =
                    Some(StandingGet { answer: answer.clone(), first_pending: self.optional, repeat: self.repeat });
            }
            // An optional step whose GET has not come takes its budget itself: the handler
            // then gives the GET, whenever it comes, the standing answer.
            if self.optional && run.conn.take(GET) {
                return;
            }
            if let Some(s) = lock(&run.conn.standing_get).as_mut() {
                s.first_pending = false;
            }
            if self.optional && !self.repeat {
                *lock(&run.conn.standing_get) = None;
            }
            let i = run.consume(GET, None, false).await;
            let n = run.n();
            let Some(tx) = run.held[i].inbound.reply.take() else { return };
            let exchange = run.held[i].inbound.exchange;
            let socket = run.held[i].inbound.socket.clone();
            let (response, handle) =
                standing::respond(&run.shared, n, exchange, socket, &answer, "expect_get", false);
            tx.send(response);
            if let Some(handle) = handle {
                run.add_stream(handle);
            }
        })
    }
}

/// How the answer is shaped: an open stream by default.
fn shape(step: &step::ExpectGet) -> Shape {
    let ok = (200..300).contains(&step.status);
    let is_sse = step.content_type.as_deref().is_none_or(|ct| ct.starts_with("text/event-stream"));
    match (ok && is_sse, step.close) {
        (true, false) => Shape::OpenStream,
        (true, true) => Shape::EndedStream,
        _ => Shape::Plain,
    }
}

/// The answer, headers and body expanded for this connection.
fn answer(step: &step::ExpectGet, run: &HttpRun) -> GetAnswer {
    let ok = (200..300).contains(&step.status);
    let ct = step.content_type.clone().unwrap_or_else(|| "text/event-stream".into());
    let is_sse = ct.starts_with("text/event-stream");
    let mut headers = Vec::new();
    if ok && (is_sse || step.content_type.is_some()) {
        headers.push(("content-type".to_string(), ct));
    }
    if is_sse && ok {
        headers.push(("cache-control".into(), "no-cache".into()));
    }
    headers.extend(run.headers(&step.headers));
    let shape = shape(step);
    let body = match shape {
        Shape::OpenStream => Bytes::new(),
        _ => Bytes::from(step.text.as_deref().map(|t| run.expand(t)).unwrap_or_default()),
    };
    GetAnswer { status: step.status, headers, body, shape, label: step.label.clone().unwrap_or_else(|| "get".into()) }
}
