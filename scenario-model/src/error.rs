//! The crate's one error enum.

use std::path::PathBuf;

/// A scenario file that cannot be used: unreadable, or malformed (naming where and why).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The scenario file could not be read.
    #[error("{path}: cannot read scenario: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The scenario is malformed; `line`/`column` are 1-based (0 when unknown).
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong, naming the field.
        message: String,
    },
}
