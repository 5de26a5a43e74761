//! The crate's one error enum. Every variant says what happened and what to do.

use std::path::PathBuf;

/// What stops the harness from running (as opposed to a scenario that fails).
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// A path given on the command line does not exist.
    #[error("no such file or directory: {0} (give scenario files or folders, e.g. scenarios/stdio)")]
    MissingPath(PathBuf),
    /// A target name that is not known.
    #[error(
        "unknown target {0:?}: use bundled, bundled:stdio, bundled:http, bundled:legacy-sse, cmd:\"<command line>\" or cmd+persistent:\"<command line>\""
    )]
    UnknownTarget(String),
    /// A scenario file cannot be read or is malformed (the message names file:line:column
    /// and the field).
    #[error(transparent)]
    Scenario(#[from] mcp_scenario::ScenarioError),
    /// The mock could not serve, record or bind (the message says what and what to do).
    #[error(transparent)]
    Mock(mcp_mock::MockError),
    /// `record` options that cannot work (the message says what to write instead).
    #[error("{0}")]
    RecordOptions(String),
    /// `explain <name>` found no scenario file by that path or name.
    #[error("no scenario file {given:?} and no scenario named {given:?} under {}{hint}", .dir.display())]
    ScenarioNotFound {
        /// The name or path as given.
        given: String,
        /// Where it was looked for.
        dir: PathBuf,
        /// `; did you mean …?`, or how to search.
        hint: String,
    },
    /// `explain <name>` found several scenario files of that name.
    #[error("{} scenarios are named {given:?} under {}: {}; give the file's path", .paths.len(), .dir.display(), .paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    AmbiguousScenario {
        /// The name as given.
        given: String,
        /// Where it was looked for.
        dir: PathBuf,
        /// The files of that name.
        paths: Vec<PathBuf>,
    },
    /// Scenarios were found, but the filters left none.
    #[error(
        "none of the {0} scenarios matches the filters (--filter, --transport, --revision, --tag): `mcp-harness list` with the same filters shows what they select"
    )]
    NothingSelected(usize),
    /// A `--tag` no scenario carries (a typo selects nothing, silently).
    #[error("unknown tag `{given}`{hint}: the scenarios carry {known}")]
    UnknownTag {
        /// The tag as given (without `!`).
        given: String,
        /// `; did you mean …?`, or empty.
        hint: String,
        /// Every tag the scenarios carry, comma-separated.
        known: String,
    },
    /// No scenario matched the paths.
    #[error("no scenario files (*.yaml) found under {0}")]
    NoScenarios(String),
    /// A baseline lists driver self-test scenarios, which are never expected failures.
    #[error(
        "baseline {}: lists driver self-test scenario(s) {}: a driver applies every plan field or reports it `unsupported` (clients/README.md, \"Driver self-test\"), so these are never expected failures; remove them and fix the driver",
        .file.display(), .entries.join(", ")
    )]
    SelftestBaselined {
        /// The baseline file.
        file: PathBuf,
        /// Its entries naming self-test scenarios.
        entries: Vec<String>,
    },
    /// A `--partition` that is not `k/n` with 1 <= k <= n (the message says what to write).
    #[error("{0}")]
    Partition(String),
    /// Shard reports that `merge` cannot join into one (the message says which and why).
    #[error("{0}")]
    Merge(String),
    /// `scenarios export` would overwrite edited files (the message says how to go on).
    #[error("{0}")]
    Export(String),
    /// A recording given to `check-record` cannot be judged (the message says why and
    /// what to give instead).
    #[error("{0}")]
    Recording(String),
    /// A proxy a scenario's `via:` asks for could not start (the message says which and
    /// why, e.g. nginx missing and how to install it).
    #[error(transparent)]
    Proxy(#[from] mcp_proxies::ProxyError),
    /// The second upstream mock of `via: nginx: second_upstream` could not start.
    #[error("the second upstream: {0}")]
    SecondUpstream(#[source] crate::http_mock::MockStartError),
    /// A mock announced a URL the proxies cannot be put in front of.
    #[error("{whose} URL {url:?} is not http://host:port/path")]
    MockUrl {
        /// `the mock's`, `the second upstream's`.
        whose: &'static str,
        /// The URL it announced.
        url: String,
    },
    /// `record --append` found a capture file it cannot read back: a line that is not a
    /// connection this version writes (a capture from another version, or edited by hand).
    #[error("{}:{line}: not a connection capture ({source}); record without --append to start a new capture", .path.display())]
    BadCapture {
        /// The capture file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What serde found.
        source: serde_json::Error,
    },
    /// Writing a file failed (reports, snapshots, what a run's proxies need).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// A scenario the mock could not load is a scenario error, whichever loader met it first.
impl From<mcp_mock::MockError> for HarnessError {
    fn from(e: mcp_mock::MockError) -> Self {
        match e {
            mcp_mock::MockError::Scenario(e) => HarnessError::Scenario(e),
            e => HarnessError::Mock(e),
        }
    }
}

impl HarnessError {
    /// Wraps an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        HarnessError::Io { context: context.into(), source }
    }

    /// The process exit code for this error (documented in `mcp-harness --help`).
    pub fn exit_code(&self) -> i32 {
        2
    }
}
