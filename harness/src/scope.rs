//! What a run is judged as: which kind of target, over which transport, in which revision.
//! Checks and always-on rules decide from a [`Scope`] whether they apply (DESIGN "Checks:
//! what applies to whom"); the transcript shows step durations for the bundled target only.

use mcp_scenario::{Revision, TransportName};

/// The kind of client under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// The bundled transports, in-process: judged on SPEC.md's project rules too (exact
    /// error texts, diagnostic counters, `params` always present).
    Bundled,
    /// A client run as an external program (`cmd:`): judged on the wire and on outcome
    /// classes only; its own wording is recorded, not judged.
    External,
}

impl TargetKind {
    /// The label transcripts show (`bundled`, `cmd`).
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Bundled => "bundled",
            TargetKind::External => "cmd",
        }
    }

    /// Whether this is the bundled client (judged on SPEC.md's project rules).
    pub fn is_bundled(self) -> bool {
        self == TargetKind::Bundled
    }

    /// How transcripts name this kind of client and show its step durations.
    pub fn client(self) -> mcp_mock::transcript::render::Client {
        mcp_mock::transcript::render::Client { label: self.as_str(), bundled: self.is_bundled() }
    }
}

/// One run's target kind, transport and revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    /// The kind of client under test.
    pub target: TargetKind,
    /// The transport of the run.
    pub transport: TransportName,
    /// The revision the scenario speaks.
    pub revision: Revision,
}
