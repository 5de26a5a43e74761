//! `stream_closed`: the client closed a stream the script opened — the mock recorded it as
//! `client went away` — e.g. the reply stream of a request that timed out or was
//! cancelled (on Streamable HTTP, closing it *is* the cancellation). A wire check for the
//! HTTP transports.
//!
//! Streams are named as the script names them: an `open_stream` is found through the
//! request it answers (which must be labelled, so its wire id is known), an `expect_get`
//! stream through the GETs it answers.

use super::{CheckKind, Finding, Run};
use mcp_scenario::checks::StreamClosedCheck;
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, ServerStep};
use serde_json::Value;

/// What a stream name stands for on the wire.
#[derive(Debug, PartialEq)]
enum Answers {
    /// The reply stream of the request the script labelled so.
    Request(String),
    /// A GET stream.
    Get,
}

/// Resolves a stream name the way the mock names streams: `open_stream`'s `as`, else the
/// label of the request it answers (`to`, else the latest `expect`); `expect_get`'s `as`,
/// else `get`. `None` inside: the stream exists but answers an unlabelled request.
fn resolve(scenario: &Scenario, name: &str) -> Option<Option<Answers>> {
    let mut latest: Option<&str> = None;
    let mut found = None;
    for step in &scenario.server {
        match step {
            ServerStep::Expect(_) => latest = step.expect_label(),
            ServerStep::OpenStream(s) => {
                let answers = s.to.as_deref().or(latest);
                if s.label.as_deref().or(answers).unwrap_or("post") == name {
                    found = Some(answers.map(|l| Answers::Request(l.to_string())));
                }
            }
            ServerStep::ExpectGet(s) if s.label.as_deref().unwrap_or("get") == name => found = Some(Some(Answers::Get)),
            _ => {}
        }
    }
    found
}

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::NeverOpened(_) | Failure::NeverEnded(_))
    }
}

impl CheckKind for StreamClosedCheck {
    fn explain(&self) -> String {
        format!("the client closed the stream `{}`", self.stream)
    }

    type Invalid = Invalid;
    type Failure = Failure;

    fn concerns(&self, _scenario: &Scenario, event: &WireEvent) -> bool {
        event.stream_end().is_some()
    }

    fn validate(&self, scenario: &Scenario) -> Result<(), Invalid> {
        match resolve(scenario, &self.stream) {
            None => Err(Invalid::NoSuchStream(self.stream.clone())),
            Some(None) => Err(Invalid::Unlabelled(self.stream.clone())),
            Some(Some(_)) => Ok(()),
        }
    }

    /// A client process that exits closes its sockets too, so a close is the client's own act
    /// only when the client went on talking to the mock after it (the next step of a plan
    /// that cancelled a request and carried on); a close with nothing after it weighs no more
    /// than an absence.
    fn holds_by_absence(&self, run: &Run<'_>) -> bool {
        let Ok(closes) = closes(self, run) else { return true };
        let last_request =
            run.transcript.events().filter(|e| e.http_method().is_some()).filter_map(WireEvent::t_us).max();
        !closes.iter().any(|&closed| last_request.is_some_and(|t| t > closed))
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        closes(self, run).map(|_| ())
    }
}

/// When the client went away from the stream `check` names (microseconds on the mock's
/// clock), or how the stream did not end by the client.
fn closes(check: &StreamClosedCheck, run: &Run<'_>) -> Result<Vec<u64>, Failure> {
    let name = check.stream.clone();
    let Some(Some(answers)) = resolve(run.scenario, &check.stream) else {
        return Err(Failure::NeverOpened(name));
    };
    let exchanges: Vec<u64> = match &answers {
        Answers::Request(label) => {
            let id = run.transcript.labelled_id(label).ok_or_else(|| Failure::NeverOpened(name.clone()))?;
            run.transcript
                .events()
                .filter(|e| e.http_method().is_some() && e.json().is_some_and(|body| carries(body, id)))
                .filter_map(WireEvent::exchange)
                .collect()
        }
        Answers::Get => {
            run.transcript.events().filter(|e| e.http_method() == Some("GET")).filter_map(WireEvent::exchange).collect()
        }
    };
    let ends: Vec<(&str, u64)> = run
        .transcript
        .events()
        .filter(|e| e.exchange().is_some_and(|x| exchanges.contains(&x)))
        .filter_map(|e| Some((e.stream_end()?, e.t_us()?)))
        .collect();
    let closes: Vec<u64> = ends.iter().filter(|(how, _)| *how == "client went away").map(|(_, t)| *t).collect();
    if !closes.is_empty() {
        Ok(closes)
    } else if ends.is_empty() {
        Err(Failure::NeverEnded(name))
    } else {
        let how: Vec<&str> = ends.iter().map(|(how, _)| *how).collect();
        Err(Failure::EndedOtherwise { name, how: how.join(", ") })
    }
}

/// Whether a POST body is, or (a batch) holds, the request with this id.
fn carries(body: &Value, id: &Value) -> bool {
    let is = |m: &Value| m.get("method").is_some() && m.get("id") == Some(id);
    match body {
        Value::Array(items) => items.iter().any(is),
        one => is(one),
    }
}

/// A `stream_closed` check the loader rejects.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// No step opens a stream of that name.
    #[error("field `stream`: no `open_stream` or `expect_get` names a stream {0:?}")]
    NoSuchStream(String),
    /// The stream answers a request without a label, so its wire id cannot be known.
    #[error(
        "field `stream`: stream {0:?} answers a request without a label; give its `expect` an `as:` so the check can find it on the wire"
    )]
    Unlabelled(String),
}

/// How the stream did not end by the client.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The request it answers never arrived (or no GET did).
    #[error("stream {0:?} was never opened: the mock never received its request")]
    NeverOpened(String),
    /// The stream was still open when the mock stopped recording.
    #[error("stream {0:?} never ended")]
    NeverEnded(String),
    /// The mock or the network ended it, not the client.
    #[error("stream {name:?} ended {how}, not by the client")]
    EndedOtherwise {
        /// The stream.
        name: String,
        /// How it ended.
        how: String,
    },
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    #[test]
    fn a_close_weighs_as_the_clients_act_only_with_a_request_after_it() {
        let s = testing::with_script(
            "  - op: handshake\n  - op: expect\n    method: tools/call\n    as: call\n  - op: open_stream\nchecks:\n  - stream_closed: {stream: call}\n    should: \"s\"\n",
        );
        let check = StreamClosedCheck { stream: "call".into() };
        let request = |t_us, exchange, method: &str| WireEvent::HttpRequest {
            t_us,
            exchange,
            http_method: "POST".into(),
            path: "/mcp".into(),
            headers: Default::default(),
            body: None,
            json: Some(serde_json::json!({"jsonrpc": "2.0", "id": exchange, "method": method})),
        };
        let labelled =
            WireEvent::Labelled { label: "call".into(), id: serde_json::json!(3), method: "tools/call".into() };
        let gone = WireEvent::StreamEnd { t_us: 50, exchange: 3, how: "client went away".into() };
        let weighs = |events: Vec<WireEvent>| {
            testing::judge(&s, events, |_, run| (check.evaluate(run).is_ok(), check.holds_by_absence(run)))
        };
        let base = vec![request(10, 3, "tools/call"), labelled, gone];
        // Closed, and nothing after it: the exit of the client's process closes it too.
        assert_eq!(weighs(base.clone()), (true, true));
        // Closed, then the client went on: its own act.
        let mut then = base;
        then.push(request(80, 4, "tools/list"));
        assert_eq!(weighs(then), (true, false));
    }

    #[test]
    fn stream_names_resolve_as_the_mock_names_streams() {
        let s = testing::with_script(
            "  - op: handshake\n  - op: expect\n    method: tools/call\n    as: call\n  - op: open_stream\n  - op: expect\n    method: x\n  - op: open_stream\n    as: bare\n  - op: expect_get\n    as: listener\n",
        );
        assert_eq!(resolve(&s, "call"), Some(Some(Answers::Request("call".into()))));
        assert_eq!(resolve(&s, "bare"), Some(None));
        assert_eq!(resolve(&s, "listener"), Some(Some(Answers::Get)));
        assert_eq!(resolve(&s, "get"), None);
    }
}
