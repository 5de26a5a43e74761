//! `expect_get` (HTTP): wait for the client's GET (the Streamable HTTP listener, a
//! resumption, or the legacy SSE stream) and answer it: an open stream that becomes the
//! current one by default, else a plain response. With `repeat`, the answer stands for every
//! later GET (a retry or reconnect loop meets it again, recorded); with `optional`, the
//! script does not wait for a GET that has not come (the listener is a MAY) and the first
//! one that comes later gets the answer. With `resumption`, the step takes only GETs with
//! (`true`) or without (`false`) `Last-Event-ID`, and so do its `repeat` and `optional`:
//! which GET meets which answer is then the script's, not the client's timing.

use super::op::{About, Fault, Op};
use super::rules::{self, Problem, Validation};
use super::transports::Transports;
use crate::http::conn::{GetAnswer, GetKind, OPTIONAL_GET, Shape, StandingGet};
use crate::http::run::HttpRun;
use crate::http::standing;
use crate::sync::lock;
use bytes::Bytes;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::ExpectGet {
    fn about(&self) -> About {
        // Any answer but the default open event stream (a 405, a JSON body, a closed stream)
        // is the fault, met once the GET was answered.
        let default = self.status == 200 && self.content_type.is_none() && self.text.is_none() && !self.close;
        let fault = if default { Fault::None } else { Fault::InAnswer };
        let get = match GetKind::of(self.resumption) {
            GetKind::Any => "GET",
            GetKind::Listener => "GET without Last-Event-ID (the listener)",
            GetKind::Resumption => "resumption GET (with Last-Event-ID)",
        };
        let mut explain = match shape(self) {
            Shape::OpenStream => {
                format!("waits for the client's {get} and answers with an open SSE stream (the current stream from now on)")
            }
            Shape::EndedStream => format!("waits for the client's {get} and answers with an SSE stream that ends at once"),
            Shape::Plain => format!("waits for the client's {get} and answers {}", self.status),
        };
        if self.optional { explain.push_str("; it is optional (a client that sends none is not held to it)"); }
        if self.repeat { explain.push_str("; every later one is answered the same way"); }
        About::new(Transports::HTTP, fault, explain)
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
        let kind = GetKind::of(self.resumption);
        let earlier = cx.earlier_gets();
        if earlier.iter().any(|(k, _)| (*k == GetKind::Any) != (kind == GetKind::Any)) {
            return Err(Problem::field(
                "resumption",
                "an earlier `expect_get` on this connection sets `resumption` and this one does not, or the \
                 other way round: a GET both could take would go to either; set `resumption` on every \
                 `expect_get` of the connection (`false` for the listener, `true` for resumptions) or on none",
            ));
        }
        if earlier.iter().any(|(k, optional)| *optional && k.overlaps(kind)) {
            return Err(Problem::Rule(
                "an `expect_get` after an optional one that takes the same GETs on the same connection: make the \
                 optional one the last, or tell them apart with `resumption`"
                    .into(),
            ));
        }
        cx.expects_get(kind, self.optional);
        cx.opens_stream(self.label.as_deref());
        Ok(())
    }

    fn consumes(&self) -> Vec<&str> {
        vec![GetKind::of(self.resumption).key()]
    }

    fn describe(&self, name: &'static str) -> String {
        if self.optional { format!("{name} (optional)") } else { name.to_string() }
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let answer = answer(self, run);
            let kind = GetKind::of(self.resumption);
            if self.repeat || self.optional {
                // Kept before the GET is taken, so no GET ever falls between the two.
                lock(&run.conn.standing_gets).set(StandingGet {
                    kind,
                    answer: answer.clone(),
                    first_pending: self.optional,
                    repeat: self.repeat,
                });
            }
            // An optional step whose GET has not come takes its budget itself: the handler
            // then gives the GET, whenever it comes, the standing answer.
            if self.optional && run.conn.take(kind.key()) {
                return;
            }
            {
                let mut standing = lock(&run.conn.standing_gets);
                if let Some(s) = standing.of_kind(kind) {
                    s.first_pending = false;
                }
                if self.optional && !self.repeat {
                    standing.remove(kind);
                }
            }
            let i = run.consume(kind.key(), None, false).await;
            let n = run.n();
            let Some(tx) = run.held[i].inbound.reply.take() else { return };
            let exchange = run.held[i].inbound.exchange;
            let socket = run.held[i].inbound.socket.clone();
            let why = if self.optional { OPTIONAL_GET } else { "expect_get" };
            let (response, handle) = standing::respond(&run.shared, n, exchange, socket, &answer, why, false);
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
    let headers = run.shared.with_allow(step.status, &http::Method::GET, headers);
    let shape = shape(step);
    let body = match shape {
        Shape::OpenStream => Bytes::new(),
        _ => Bytes::from(step.text.as_deref().map(|t| run.expand(t)).unwrap_or_default()),
    };
    GetAnswer { status: step.status, headers, body, shape, label: step.label.clone().unwrap_or_else(|| "get".into()) }
}
