//! `diagnostics`: the bundled client's own counters (messages dropped as malformed, late or
//! unknown responses, oversize drops) and its captured server stderr. They are internals of
//! the bundled transports, so the check applies to the bundled target only; other targets
//! skip it.

use super::{CheckKind, Finding, Run};
use crate::scope::Scope;
use mcp_scenario::checks::DiagnosticsCheck;
use std::convert::Infallible;

impl Finding for Failure {}

impl CheckKind for DiagnosticsCheck {
    fn explain(&self) -> String {
        "the bundled client's diagnostic counters have the given values (bundled client only)".into()
    }

    const READS_OUTCOME: Option<&'static str> = Some("the bundled client's counters");
    type Invalid = Infallible;
    type Failure = Failure;

    fn applies(&self, scope: &Scope) -> bool {
        scope.target.is_bundled()
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let got = run.outcome.diagnostics.clone().unwrap_or_default();
        let counters = [
            ("protocol_violations", self.protocol_violations, got.protocol_violations),
            ("late_responses", self.late_responses, got.late_responses),
            ("unknown_responses", self.unknown_responses, got.unknown_responses),
            ("oversize_dropped", self.oversize_dropped, got.oversize_dropped),
        ];
        for (name, want, got) in counters {
            if let Some(want) = want
                && want != got
            {
                return Err(Failure::Counter { name, got, want });
            }
        }
        if let Some(text) = &self.stderr_contains
            && !got.stderr_tail.contains(text.as_str())
        {
            return Err(Failure::Stderr { got: got.stderr_tail, want: text.clone() });
        }
        Ok(())
    }
}

/// How the counters differed from the check.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// A counter has another value.
    #[error("{name} is {got}, expected {want}")]
    Counter {
        /// The counter.
        name: &'static str,
        /// Its value.
        got: u64,
        /// The value expected.
        want: u64,
    },
    /// The captured stderr lacks the text.
    #[error("captured stderr {got:?} does not contain {want:?}")]
    Stderr {
        /// The captured stderr tail.
        got: String,
        /// The text expected.
        want: String,
    },
}
