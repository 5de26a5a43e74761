//! `answered`: the client's answer to a server-to-client request the script sent with
//! `request … as:` — that it answered, with a result containing these members, an error
//! (`error: true`) or an error with this code. A wire check: it applies to every target.

use super::{CheckKind, Finding, NoSuchLabel, Run, subset};
use mcp_scenario::checks::AnsweredCheck;
use mcp_scenario::{Scenario, ServerStep};
use serde_json::Value;

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::NeverSent(_) | Failure::Unanswered(_))
    }
}

impl CheckKind for AnsweredCheck {
    fn explain(&self) -> String {
        let how = match (&self.result, self.error_code, self.error) {
            _ if self.empty => " with an empty result".into(),
            (Some(r), _, _) => format!(" with a result containing {r}"),
            (None, Some(code), _) => format!(" with an error of code {code}"),
            (None, None, true) => " with an error".into(),
            _ => String::new(),
        };
        format!("the client answered the mock's request `{}`{how}", self.request)
    }

    type Invalid = NoSuchLabel;
    type Failure = Failure;

    fn validate(&self, scenario: &Scenario) -> Result<(), NoSuchLabel> {
        NoSuchLabel::check(scenario, ServerStep::request_label, "request", &self.request)
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let id = run.transcript.labelled_id(&self.request).ok_or_else(|| Failure::NeverSent(self.request.clone()))?;
        let answer = run
            .transcript
            .client_messages()
            .find(|v| v.get("id") == Some(id) && v.get("method").is_none())
            .ok_or_else(|| Failure::Unanswered(id.clone()))?;
        if let Some(want) = &self.result {
            let got = answer.get("result").ok_or_else(|| Failure::NoResult(answer.clone()))?;
            if !subset(want, got) {
                return Err(Failure::Result { got: got.clone(), want: want.clone() });
            }
        }
        if self.empty {
            let got = answer.get("result").ok_or_else(|| Failure::NoResult(answer.clone()))?;
            if got.as_object().is_none_or(|m| m.keys().any(|k| k != "_meta")) {
                return Err(Failure::NotEmpty(got.clone()));
            }
        }
        if self.error && answer.get("error").is_none() {
            return Err(Failure::NoError(answer.clone()));
        }
        if let Some(code) = self.error_code {
            let got = answer.pointer("/error/code").and_then(Value::as_i64);
            if got != Some(code) {
                return Err(Failure::NotError { answer: answer.clone(), code });
            }
        }
        Ok(())
    }
}

/// How the client's answer differed from the check.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The mock never sent the labelled request.
    #[error("the mock never sent request {0:?}")]
    NeverSent(String),
    /// No response with the request's id.
    #[error("client never answered server request {0}")]
    Unanswered(Value),
    /// The answer has no result.
    #[error("answer {0} has no result")]
    NoResult(Value),
    /// The result lacks expected members.
    #[error("answer result {got} does not contain {want}")]
    Result {
        /// The answer's result.
        got: Value,
        /// The members expected.
        want: Value,
    },
    /// The result has members (other than `_meta`) where an empty one was due.
    #[error("answer result {0} is not empty")]
    NotEmpty(Value),
    /// The answer is not an error.
    #[error("answer {0} is not an error")]
    NoError(Value),
    /// The answer is not an error with the code.
    #[error("answer {answer} is not an error with code {code}")]
    NotError {
        /// The answer.
        answer: Value,
        /// The code expected.
        code: i64,
    },
}
