//! `event` (HTTP): write one SSE event on a stream: comments, `event`, `id`, `retry`,
//! `data` lines, a blank line.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{self, Problem, Validation};
use crate::http::run::HttpRun;
use crate::http::sse::{self, SseEvent};
use crate::placeholder;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::Event {
    fn about(&self) -> About {
        // A priming event (an id, perhaps a `retry`, and empty data; 2025-11-25 transports:
        // the server SHOULD send one "to prime the client to reconnect") is what a conformant
        // server writes; any other hand-made event is the scenario's fault.
        let priming = self.id.is_some()
            && self.data.as_deref().is_none_or(str::is_empty)
            && self.json.is_none()
            && self.comment.is_none()
            && self.event.is_none()
            && self.line_end == mcp_scenario::script::SseLineEnd::Lf;
        let fault = if priming { Fault::None } else { Fault::Here };
        let mut parts = Vec::new();
        if let Some(e) = &self.event { parts.push(format!("event `{e}`")); }
        if let Some(id) = &self.id { parts.push(format!("id {id:?}")); }
        if let Some(r) = self.retry { parts.push(format!("retry {r}ms")); }
        if self.comment.is_some() { parts.push("a comment".into()); }
        if let Some(j) = &self.json { parts.push(format!("data {}", super::op::short(j))); }
        if let Some(d) = &self.data { parts.push(format!("data {:?}", super::op::shorten(d))); }
        let on = self.stream.as_deref().map_or("the current stream".to_string(), |s| format!("stream `{s}`"));
        let explain =
            format!("writes an SSE event on {on}: {}", if parts.is_empty() { "empty".into() } else { parts.join(", ") });
        About::new(Transports::HTTP, fault, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.stream(self.stream.as_deref())?;
        rules::one_of(("data", &self.data), ("json", &self.json))?;
        let fields = [
            self.comment.is_some(),
            self.event.is_some(),
            self.id.is_some(),
            self.retry.is_some(),
            self.data.is_some(),
            self.json.is_some(),
        ];
        if !fields.contains(&true) {
            return Err(Problem::Rule(
                "op `event` needs at least one of `comment`, `event`, `id`, `retry`, `data`, `json`".into(),
            ));
        }
        for (field, value) in [("event", &self.event), ("id", &self.id)] {
            if value.as_deref().is_some_and(|v| v.contains(['\n', '\r'])) {
                return Err(Problem::field(field, "a line break would end the field early; use `send` for raw bytes"));
            }
        }
        cx.placeholders("data", self.data.as_deref().is_some_and(placeholder::in_text))?;
        cx.placeholders("json", self.json.as_ref().is_some_and(placeholder::in_json))
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(s) = run.stream_for("event", self.stream.as_deref()) else { return };
            let request = run.latest_request();
            let json_text = self.json.as_ref().map(|j| placeholder::json(j, request).map(|j| j.to_string())).transpose();
            let data = self.data.as_deref().map(|d| placeholder::text(d, request)).transpose();
            let (json_text, data) = match (json_text, data) {
                (Ok(j), Ok(d)) => (j, d),
                (Err(e), _) | (_, Err(e)) => return run.note(format!("event: {e}; nothing sent")),
            };
            let e = SseEvent {
                comment: self.comment.as_deref(),
                event: self.event.as_deref(),
                id: self.id.as_deref(),
                retry: self.retry,
                data: data.as_deref().or(json_text.as_deref()),
            };
            // An `end_stream` right after it is recorded before these bytes go out
            // (the engine's sends wait for its next yield: `http::outbox`).
            run.shared.write(run.n(), &s, sse::event(&e, self.line_end), "event");
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(yaml: &str) -> step::Event {
        serde_saphyr::from_str(yaml).expect("an event step")
    }

    #[test]
    fn a_priming_event_is_no_fault() {
        assert_eq!(event("id: e-1\nretry: 20\ndata: \"\"").about().fault, Fault::None);
        assert_eq!(event("id: e-1").about().fault, Fault::None);
        assert_eq!(event("id: e-1\ndata: x").about().fault, Fault::Here);
        assert_eq!(event("comment: keep-alive").about().fault, Fault::Here);
        assert_eq!(event("id: e-1\nline_end: cr").about().fault, Fault::Here);
    }
}
