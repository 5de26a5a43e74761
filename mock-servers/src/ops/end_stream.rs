//! `end_stream` (HTTP): end a stream cleanly, mid-event, by TCP reset, or by stalling.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::run::HttpRun;
use crate::placeholder;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::EndStream {
    fn about(&self) -> About {
        let which = self.stream.as_deref().map_or("the current stream".to_string(), |s| format!("stream `{s}`"));
        let how = match self.how {
            mcp_scenario::script::StreamEnd::Clean => "cleanly",
            mcp_scenario::script::StreamEnd::MidEvent => "in the middle of an event",
            mcp_scenario::script::StreamEnd::Reset => "with a connection reset",
            mcp_scenario::script::StreamEnd::Stall => "by going silent (the socket stays open)",
        };
        About::new(Transports::HTTP, Fault::Here, format!("ends {which} {how}"))
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.stream(self.stream.as_deref())?;
        cx.placeholders("partial", self.partial.as_deref().is_some_and(placeholder::in_text))
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(s) = run.stream(self.stream.as_deref()) else {
                return run.note("end_stream: no open stream; nothing to end");
            };
            let partial = self.partial.as_deref().unwrap_or("data: {\"jsonrpc\":\"2.0\",");
            let partial = placeholder::text(partial, run.latest_request()).unwrap_or_else(|e| {
                run.note(format!("end_stream: {e}; the partial event is written without it"));
                partial.into()
            });
            run.shared.end_stream(run.n(), &s, self.how, Some(&partial));
            run.drop_stream(s.exchange);
        })
    }
}
