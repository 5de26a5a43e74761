//! `replays`: the client's JSON-RPC messages on one connection are, in order, the ones a
//! recorded session pinned (`mcp-harness record` writes this check). Replaying a recording
//! against a changed client fails here at the first message that differs, showing the
//! recorded message, the actual one and the server step the mock was at, so the report
//! says where the two sessions parted. A wire check: it applies to every target.

use super::{CheckKind, Finding, Run, script_labels, subset};
use crate::transcript::method_of;
use mcp_scenario::checks::{RecordedMessage, ReplaysCheck};
use mcp_scenario::{Scenario, ServerStep};
use serde_json::Value;

/// Messages longer than this are shown cut, with their length.
const SHOW_CHARS: usize = 300;

impl Finding for Divergence {}

impl CheckKind for ReplaysCheck {
    type Invalid = Invalid;
    type Failure = Divergence;

    fn validate(&self, scenario: &Scenario) -> Result<(), Invalid> {
        if self.connection == 0 {
            return Err(Invalid::Connection);
        }
        for (i, m) in self.messages.iter().enumerate() {
            match (&m.method, &m.answer) {
                (Some(_), None) => {}
                (None, Some(label)) => {
                    if !script_labels(scenario, ServerStep::request_label, label) {
                        return Err(Invalid::NoSuchRequest { index: i + 1, label: label.clone() });
                    }
                    if m.params.is_some() {
                        return Err(Invalid::Shape(i + 1));
                    }
                }
                _ => return Err(Invalid::Shape(i + 1)),
            }
        }
        Ok(())
    }

    fn explain(&self) -> String {
        format!(
            "on connection {}, the client sends exactly the {} JSON-RPC message(s) the recorded session pinned, in order (the first difference is reported with both sides)",
            self.connection,
            self.messages.len()
        )
    }

    fn judges(&self, _scenario: &Scenario) -> Vec<String> {
        self.messages.iter().filter_map(|m| m.method.clone()).collect()
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Divergence> {
        let steps = mcp_scenario::script::connection_script(&run.scenario.server, self.connection);
        let place =
            |n: usize| Place { connection: self.connection, message: n, step: step_for(&self.messages, &steps, n) };
        let sent: Vec<&Value> =
            run.transcript.connection(self.connection).map(|c| c.client_messages().collect()).unwrap_or_default();
        for (i, want) in self.messages.iter().enumerate() {
            match sent.get(i) {
                Some(got) if matches(want, got, run) => {}
                got => {
                    return Err(Divergence {
                        place: place(i + 1),
                        expected: show_expected(want),
                        actual: got.map(|v| show(v)),
                    });
                }
            }
        }
        match sent.get(self.messages.len()) {
            Some(extra) => Err(Divergence {
                place: place(self.messages.len() + 1),
                expected: "nothing more (the recording ends here)".into(),
                actual: Some(show(extra)),
            }),
            None => Ok(()),
        }
    }
}

/// The server step that received recorded message `n` (1-based) in the recording: the
/// k-th `expect` of its method (`expect_response` of its label), where it is the k-th
/// recorded message of that kind. None for a message the script does not await.
fn step_for(messages: &[RecordedMessage], steps: &[ServerStep], n: usize) -> Option<(usize, String)> {
    let want = messages.get(n - 1)?;
    let same = |m: &RecordedMessage| m.method == want.method && m.answer == want.answer;
    let nth = messages[..n - 1].iter().filter(|m| same(m)).count();
    let receives = |s: &ServerStep| match (s, &want.method, &want.answer) {
        (ServerStep::Expect(e), Some(method), _) => &e.method == method,
        (ServerStep::ExpectResponse(r), None, Some(label)) => &r.to == label,
        _ => false,
    };
    steps.iter().enumerate().filter(|(_, s)| receives(s)).nth(nth).map(|(i, s)| (i + 1, mcp_mock::ops::describe(s)))
}

/// Whether the client's message `got` is the recorded `want`.
fn matches(want: &RecordedMessage, got: &Value, run: &Run<'_>) -> bool {
    match (&want.method, &want.answer) {
        (Some(method), _) => {
            method_of(got) == Some(method.as_str())
                && want.params.as_ref().is_none_or(|p| got.get("params").is_some_and(|g| subset(p, g)))
        }
        (None, Some(label)) => {
            method_of(got).is_none()
                && (got.get("result").is_some() || got.get("error").is_some())
                && run.transcript.labelled_id(label).is_some_and(|id| got.get("id") == Some(id))
        }
        (None, None) => false,
    }
}

fn show_expected(m: &RecordedMessage) -> String {
    match (&m.method, &m.answer, &m.params) {
        (Some(method), _, Some(p)) => format!("{method} with params ⊇ {}", cut(p.to_string())),
        (Some(method), _, None) => method.clone(),
        (None, Some(label), _) => format!("the answer to server request {label:?}"),
        (None, None, _) => "?".into(),
    }
}

fn show(v: &Value) -> String {
    cut(v.to_string())
}

fn cut(text: String) -> String {
    if text.chars().count() <= SHOW_CHARS {
        return text;
    }
    let head: String = text.chars().take(SHOW_CHARS).collect();
    format!("{head}… ({} bytes)", text.len())
}

/// Where a replay parted from the recording.
#[derive(Debug)]
pub struct Place {
    connection: usize,
    message: usize,
    /// The server step that received the recorded message, and its description.
    step: Option<(usize, String)>,
}

/// A `replays` check whose data does not fit the scenario.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// Connections are numbered from 1.
    #[error("field `connection`: connections are numbered from 1")]
    Connection,
    /// An entry is neither a message nor an answer.
    #[error("field `messages`: entry {0}: give `method` (and optionally `params`) or `answer`, not both or neither")]
    Shape(usize),
    /// `answer` names no server request.
    #[error("field `messages`: entry {index}: `answer`: no server `request` is labelled {label:?}")]
    NoSuchRequest {
        /// 1-based entry.
        index: usize,
        /// The label.
        label: String,
    },
}

/// The first client message that differs from the recording, both sides shown.
#[derive(Debug, thiserror::Error)]
#[error(
    "replay diverged from the recording at client message {} on connection {}{}: expected {}; actual {}",
    .place.message,
    .place.connection,
    .place.step.as_ref().map(|(n, op)| format!(" (the recording's server step {n}: `{op}`)")).unwrap_or_default(),
    .expected,
    .actual.as_deref().unwrap_or("nothing (the client sent no more messages)")
)]
pub struct Divergence {
    place: Place,
    expected: String,
    actual: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_messages_are_cut_with_their_length() {
        let long = cut("x".repeat(400));
        assert!(long.ends_with("… (400 bytes)"), "{long}");
        assert_eq!(cut("short".into()), "short");
    }

    #[test]
    fn expected_side_names_method_and_params() {
        let m =
            RecordedMessage { method: Some("tools/call".into()), params: Some(json!({"name": "add"})), answer: None };
        assert_eq!(show_expected(&m), r#"tools/call with params ⊇ {"name":"add"}"#);
    }
}
