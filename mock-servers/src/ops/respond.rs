//! `respond` (HTTP): answer the expected request with any status, headers, content type
//! and body; with `repeat`, every later request with its method that no step consumes gets
//! the same answer (a retry meets what the first attempt met).

use super::op::{About, Fault, Op, answers_to};
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::run::HttpRun;
use crate::http::conn::StandingResponse;
use crate::sync::lock;
use crate::placeholder;
use bytes::Bytes;
use futures::future::BoxFuture;
use mcp_scenario::payload::Payload;
use mcp_scenario::script::step;

impl Op for step::Respond {
    fn about(&self) -> About {
        let mut explain = format!("answers {} with HTTP {}", super::op::to_words(self.to.as_deref()), self.status);
        if let Some(ct) = &self.content_type { explain.push_str(&format!(" ({ct})")); }
        if let Some(j) = &self.json { explain.push_str(&format!(" and the body {}", super::op::short(j))); }
        if let Some(t) = &self.text { explain.push_str(&format!(" and the body {:?}", super::op::shorten(t))); }
        if self.repeat { explain.push_str("; every later such request is answered the same way"); }
        About::new(Transports::HTTP, Fault::Here, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.answer(self.to.as_deref(), self.status, &self.headers)?;
        let body = self.body()?;
        if let Some(Payload::Generate(g)) = body {
            g.bytes()?;
        }
        match body {
            Some(p) => cx.placeholders(placeholder::field_of(p), placeholder::in_payload(p)),
            None => Ok(()),
        }
    }

    fn answers(&self, label: Option<&str>) -> bool {
        answers_to(self.to.as_deref(), label)
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some((i, tx)) = run.take_reply("respond", self.to.as_deref()) else { return };
            let request = &run.held[i].inbound.message;
            let (body, default_type) = match self.body() {
                Ok(Some(Payload::Json(j))) => (
                    placeholder::json(j, Some(request)).map(|j| serde_json::to_vec(&j).unwrap_or_default()),
                    Some("application/json"),
                ),
                Ok(Some(Payload::Text(t))) => {
                    (placeholder::text(t, Some(request)).map(|t| run.expand(&t).into_bytes()), Some("text/plain"))
                }
                Ok(Some(p)) => (Ok(p.bytes().unwrap_or_default()), Some("text/plain")),
                _ => (Ok(Vec::new()), None),
            };
            let body = body.unwrap_or_else(|e| {
                run.note(format!("respond: {e}; the body is empty"));
                Vec::new()
            });
            let mut hs: Vec<(String, String)> = Vec::new();
            if let Some(ct) = self.content_type.as_deref().or(default_type) {
                hs.push(("content-type".into(), ct.into()));
            }
            hs.extend(run.headers(&self.headers));
            let exchange = run.held[i].inbound.exchange;
            let body = Bytes::from(body);
            if self.repeat {
                // Kept before the answer leaves, so a retry cannot come first.
                let again = StandingResponse { status: self.status, headers: hs.clone(), body: body.clone() };
                lock(&run.conn.standing_responses).insert(run.held[i].inbound.key.clone(), again);
            }
            tx.send(run.shared.respond(run.n(), exchange, self.status, &hs, body, "respond"));
        })
    }
}
