//! The crate's one error enum.

/// Everything that can go wrong loading a scenario or running a mock.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// The scenario file could not be loaded (the message names file:line:column and the
    /// field).
    #[error(transparent)]
    Scenario(#[from] mcp_scenario::ScenarioError),
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
    /// A user's secret pattern (`record --redact-pattern`) is not a regular expression.
    #[error("{pattern:?} is not a regular expression: {message}")]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// What the regular expression parser said.
        message: String,
    },
    /// `serve` was given a scenario that lists no HTTP transport.
    #[error(
        "the scenario runs over stdio only: give `mcp-mock stdio <scenario>` to the host as its server command instead"
    )]
    StdioOnly,
    /// `serve` was given a scenario that lists both HTTP transports, and no `--transport`.
    #[error(
        "the scenario runs over both http and legacy-sse: pick one with --transport http or --transport legacy-sse"
    )]
    TwoHttpTransports,
}

impl MockError {
    /// Wraps an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        MockError::Io { context: context.into(), source }
    }
}
