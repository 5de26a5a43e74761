//! The `results.json` document (see the crate doc for its compatibility rule).

use crate::run::{RunResult, Status};
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// The format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// The whole document: totals, wall time, the shard of a partitioned run, every run.
#[skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    /// The document's format version ([`FORMAT_VERSION`]; absent in documents written
    /// before it was added, which are version 1).
    #[serde(default = "version_one")]
    pub format_version: u32,
    /// Runs by status.
    #[serde(default)]
    pub totals: Totals,
    /// The whole run's wall time, in ms.
    #[serde(default)]
    pub wall_ms: u64,
    /// The shard, when the run was one of a partitioned run's (`run --partition k/n`).
    pub partition: Option<Partition>,
    /// Every run, in the library's order.
    pub runs: Vec<RunResult>,
}

fn version_one() -> u32 {
    1
}

/// Why a text is not a document this crate reads.
#[derive(Debug)]
pub enum ReadError {
    /// Not JSON, or not this shape.
    Shape(serde_json::Error),
    /// A format version this crate does not know.
    Version(u32),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Shape(e) => write!(f, "{e}: not a results.json that mcp-harness wrote"),
            ReadError::Version(v) => write!(
                f,
                "format_version {v}: this mcp-harness reads format_version {FORMAT_VERSION} (a document from a newer or older harness; read it with that one)"
            ),
        }
    }
}

impl std::error::Error for ReadError {}

impl Document {
    /// The document of `runs`, with their totals.
    pub fn new(runs: Vec<RunResult>, wall_ms: u64, partition: Option<Partition>) -> Document {
        Document { format_version: FORMAT_VERSION, totals: Totals::of(&runs), wall_ms, partition, runs }
    }

    /// Reads a document, refusing a format version this crate does not know.
    pub fn parse(text: &str) -> Result<Document, ReadError> {
        let doc: Document = serde_json::from_str(text).map_err(ReadError::Shape)?;
        if doc.format_version != FORMAT_VERSION {
            return Err(ReadError::Version(doc.format_version));
        }
        Ok(doc)
    }
}

/// Shard `shard` of `of` (both counted from 1) of a partitioned run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// Which shard, 1..=of.
    pub shard: u32,
    /// How many shards.
    pub of: u32,
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.shard, self.of)
    }
}

/// Runs by status, and the runs with warnings or notes.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Totals {
    /// Runs that passed.
    pub passed: usize,
    /// Runs that failed.
    pub failed: usize,
    /// Runs skipped for the target.
    pub skipped: usize,
    /// Runs the harness could not run.
    pub error: usize,
    /// Runs of scenarios marked `pending` (never run).
    pub pending: usize,
    /// Runs never started because `--fail-fast` stopped after a failure.
    pub not_run: usize,
    /// Runs whose client never met the scenario's fault.
    pub not_exercised: usize,
    /// Runs of scenarios with no check on an MCP sentence, for a third-party client.
    pub not_applicable: usize,
    /// Runs the machine starved whose re-run gave another verdict.
    pub flaky_under_load: usize,
    /// Runs (of any status) with unmet SHOULDs reported as warnings.
    pub warned: usize,
    /// Runs whose only verdict is a warning (status `warned`): the client met the fault and
    /// broke a SHOULD handling it, and no check with an MCP basis held.
    pub warn_only: usize,
    /// Runs (of any status) with unmet SPEC.md rules reported as notes.
    pub noted: usize,
}

impl Totals {
    /// Counts results.
    pub fn of<'a>(results: impl IntoIterator<Item = &'a RunResult>) -> Self {
        let mut t = Totals::default();
        for r in results {
            t.warned += usize::from(!r.warnings.is_empty());
            t.noted += usize::from(!r.notes.is_empty());
            match r.status {
                Status::Passed => t.passed += 1,
                Status::Warned => t.warn_only += 1,
                Status::Failed => t.failed += 1,
                Status::Skipped => t.skipped += 1,
                Status::Error => t.error += 1,
                Status::Pending => t.pending += 1,
                Status::NotRun => t.not_run += 1,
                Status::NotExercised => t.not_exercised += 1,
                Status::NotApplicable => t.not_applicable += 1,
                Status::FlakyUnderLoad => t.flaky_under_load += 1,
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: &str) -> RunResult {
        serde_json::from_value(serde_json::json!({
            "scenario": "s", "path": "scenarios/stdio/s.yaml", "transport": "stdio", "status": status,
        }))
        .expect("a run")
    }

    #[test]
    fn a_document_reads_back_what_it_wrote() {
        let doc =
            Document::new(vec![run("passed"), run("flaky_under_load")], 1234, Some(Partition { shard: 2, of: 3 }));
        let text = serde_json::to_string_pretty(&doc).expect("written");
        assert!(text.contains("\"format_version\": 1"), "{text}");
        let back = Document::parse(&text).expect("read");
        assert_eq!(back.format_version, FORMAT_VERSION);
        assert_eq!(back.totals, doc.totals);
        assert_eq!((back.totals.passed, back.totals.flaky_under_load), (1, 1));
        assert_eq!((back.wall_ms, back.partition), (1234, Some(Partition { shard: 2, of: 3 })));
        assert_eq!(serde_json::to_value(&back.runs).ok(), serde_json::to_value(&doc.runs).ok());
    }

    #[test]
    fn a_document_from_before_the_version_is_version_one_and_members_it_does_not_know_are_ignored() {
        let old = r#"{"totals": {"passed": 1}, "wall_ms": 5, "runs": [{"scenario": "s", "path": "p.yaml", "transport": "http", "status": "passed", "a_later_field": 3}]}"#;
        let doc = Document::parse(old).expect("an older document reads");
        assert_eq!((doc.format_version, doc.totals.passed, doc.runs.len()), (1, 1, 1));
    }

    #[test]
    fn another_format_version_is_refused_with_the_one_this_reads() {
        let e = Document::parse(r#"{"format_version": 2, "runs": []}"#).expect_err("refused");
        assert!(e.to_string().contains("format_version 2: this mcp-harness reads format_version 1"), "{e}");
        assert!(Document::parse("[]").is_err());
    }
}
