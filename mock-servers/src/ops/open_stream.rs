//! `open_stream` (HTTP): answer the expected POST with an open `text/event-stream`, which
//! becomes the current stream; the reply to that request ends it (unless `keep_open`).

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::run::HttpRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::OpenStream {
    fn about(&self) -> About {
        let to = super::op::to_words(self.to.as_deref());
        let mut explain = format!("answers {to} with {} text/event-stream and keeps the stream open", self.status);
        if let Some(l) = &self.label { explain.push_str(&format!(" (stream `{l}`)")); }
        if self.keep_open { explain.push_str("; the reply does not end it"); }
        About::new(Transports::HTTP, Fault::None, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.answer(self.to.as_deref(), self.status, &self.headers)?;
        cx.opens_stream(self.label.as_deref().or(self.to.as_deref()));
        Ok(())
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some((i, tx)) = run.take_reply("open_stream", self.to.as_deref()) else { return };
            let name = self.label.clone().or_else(|| run.held[i].label.clone()).unwrap_or_else(|| "post".into());
            let content_type = self.content_type.clone().unwrap_or_else(|| "text/event-stream".into());
            let mut hs = vec![("content-type".to_string(), content_type), ("cache-control".into(), "no-cache".into())];
            hs.extend(run.headers(&self.headers));
            let inbound = &run.held[i].inbound;
            let (response, handle) = run.shared.open_stream(
                run.conn.index,
                inbound.exchange,
                inbound.socket.clone(),
                self.status,
                &hs,
                name.clone(),
                false,
                "open_stream",
            );
            run.held[i].stream = Some(name);
            run.held[i].keep_open = self.keep_open;
            tx.send(response);
            run.add_stream(handle);
        })
    }
}
