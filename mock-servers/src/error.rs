//! The crate's one error enum.

use std::path::PathBuf;

/// Everything that can go wrong loading a scenario or running a mock.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
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
    /// Recording or serving failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Binding a listening socket failed.
    #[error("cannot listen on {addr}: {source} (is the port in use? pass --port 0 to pick a free one)")]
    Bind {
        /// The address.
        addr: String,
        /// The OS error.
        source: std::io::Error,
    },
}

impl MockError {
    /// Wraps an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        MockError::Io { context: context.into(), source }
    }
}
