//! The crate's one error enum.

use std::path::PathBuf;

/// A scenario file that cannot be used: unreadable, or malformed (naming where and why);
/// or one of the pieces read apart from a file (a transport or revision name on a command
/// line, a driver's declaration line, a `via` section), naming what is wrong and what to
/// write. The loader puts the latter into [`ScenarioError::Invalid`] with their place.
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
    /// A transport name that is none of the transports (`TransportName::parse`).
    #[error(
        "unknown transport `{name}`: write {valid}{}",
        closest.map(|t| format!("; did you mean `{t}`?")).unwrap_or_default()
    )]
    UnknownTransport {
        /// The name as written.
        name: String,
        /// The valid names, as messages list them.
        valid: &'static str,
        /// The name of the transport it obviously means, if one.
        closest: Option<&'static str>,
    },
    /// A revision that is none of the revisions (`Revision::parse`).
    #[error("unknown revision `{given}`: write one of {}", valid.join(", "))]
    UnknownRevision {
        /// The revision as written.
        given: String,
        /// The revisions there are, oldest first.
        valid: Vec<&'static str>,
    },
    /// A driver's declaration line does not parse (`Declaration::parse`).
    #[error(
        "not a contract declaration ({source}); expected one line like {{\"contract\":\"{version}\",\"performs\":{{\"connect\":[\"handshake\"],\"close\":[]}}}}"
    )]
    NotADeclaration {
        /// What the JSON parser said.
        source: serde_json::Error,
        /// The contract version this harness speaks.
        version: &'static str,
    },
    /// A `via` section on a scenario that does not run over Streamable HTTP alone.
    #[error("proxies sit in front of Streamable HTTP only: write `transport: http`")]
    ViaNeedsHttp,
    /// A fault's count or size is 0 where it must be at least 1.
    #[error("fault {number} ({fault}): `{field}` must be at least 1")]
    FaultFieldZero {
        /// The fault's 1-based position in `faults`.
        number: usize,
        /// Its kind, as written after `fault:`.
        fault: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A `cut` fault with neither or both of its bounds.
    #[error("fault {number} (cut): give exactly one of `after_bytes`, `after_events`")]
    CutBoundNotOne {
        /// The fault's 1-based position in `faults`.
        number: usize,
    },
    /// A `cut` fault after 0 events.
    #[error("fault {number} (cut): `after_events` must be at least 1 (to cut before any byte, write `after_bytes: 0`)")]
    CutAfterNoEvents {
        /// The fault's 1-based position in `faults`.
        number: usize,
    },
}
