//! `expect_get` (HTTP): wait for the client's GET (the Streamable HTTP listener, or the
//! legacy SSE stream) and answer it: an open stream that becomes the current one by
//! default, else a plain response.

use super::op::Op;
use super::transports::Transports;
use super::rules::{self, Problem, Validation};
use crate::http::conn::GET;
use crate::http::run::HttpRun;
use bytes::Bytes;
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use mcp_scenario::wire::WireEvent;

impl Op for step::ExpectGet {
    fn transports(&self) -> Transports {
        Transports::HTTP
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        rules::response(self.status, &self.headers)?;
        cx.opens_stream(self.label.as_deref());
        Ok(())
    }

    fn consumes(&self) -> Vec<&str> {
        vec![GET]
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let i = run.consume(GET, None, false).await;
            let n = run.n();
            let ok = (200..300).contains(&self.status);
            let ct = self.content_type.clone().unwrap_or_else(|| "text/event-stream".into());
            let is_sse = ct.starts_with("text/event-stream");
            let mut hs = Vec::new();
            if ok && (is_sse || self.content_type.is_some()) {
                hs.push(("content-type".to_string(), ct));
            }
            if is_sse && ok {
                hs.push(("cache-control".into(), "no-cache".into()));
            }
            hs.extend(run.headers(&self.headers));
            let Some(tx) = run.held[i].inbound.reply.take() else { return };
            let exchange = run.held[i].inbound.exchange;
            if ok && is_sse && !self.close {
                let name = self.label.clone().unwrap_or_else(|| "get".into());
                let socket = run.held[i].inbound.socket.clone();
                let (response, handle) =
                    run.shared.open_stream(n, exchange, socket, self.status, &hs, name, true, "expect_get");
                let _ = tx.send(response);
                run.add_stream(handle);
            } else {
                let body = self.text.as_deref().map(|t| run.expand(t)).unwrap_or_default();
                let _ = tx.send(run.shared.respond(n, exchange, self.status, &hs, Bytes::from(body), "expect_get"));
                if self.close && is_sse {
                    run.record(&WireEvent::StreamEnd {
                        t_us: run.shared.journal.now_us(),
                        exchange,
                        how: "clean".into(),
                    });
                }
            }
        })
    }
}
