//! `endpoint` (legacy SSE): send the `endpoint` event on the current stream. The HTTP engine
//! runs it in either flavour (so its [`About::transports`] are both), but a scenario must run over
//! legacy SSE to use it.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::run::HttpRun;
use crate::http::sse::{self, SseEvent};
use futures::future::BoxFuture;
use mcp_scenario::TransportName;
use mcp_scenario::script::{SseLineEnd, step};

impl Op for step::Endpoint {
    fn about(&self) -> About {
        let explain = match &self.uri {
            Some(uri) => format!("sends the legacy `endpoint` event naming {uri:?}"),
            None => "sends the legacy `endpoint` event naming its POST URL".into(),
        };
        About::new(Transports::HTTP, Fault::None, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        if !cx.runs_over(TransportName::LegacySse) {
            return Err(Problem::Rule(
                "op `endpoint` is the legacy SSE `endpoint` event; this scenario does not run over `legacy-sse`".into(),
            ));
        }
        Ok(())
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let uri = run.expand(self.uri.as_deref().unwrap_or("/message?session_id={connection}"));
            let Some(s) = run.stream_for("endpoint", None) else { return };
            run.shared.announce_endpoint(&uri);
            let e = SseEvent { event: Some("endpoint"), data: Some(&uri), ..SseEvent::default() };
            run.shared.write(run.n(), &s, sse::event(&e, SseLineEnd::Lf), "endpoint");
        })
    }
}
