//! The crate's one error enum.

use crate::scenario::{Revision, TransportName};
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
    /// A transport name that is none of [`TransportName::ALL`].
    #[error(
        "unknown transport `{name}`: write {}{}",
        TransportName::VALID,
        closest.map(|t| format!("; did you mean `{}`?", t.as_str())).unwrap_or_default()
    )]
    UnknownTransport {
        /// The name as written.
        name: String,
        /// The transport it obviously means, if one.
        closest: Option<TransportName>,
    },
    /// A revision that is none of [`Revision::ALL`].
    #[error(
        "unknown revision `{given}`: write one of {}",
        Revision::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
    )]
    UnknownRevision {
        /// The revision as written.
        given: String,
    },
    /// A driver's declaration line does not parse.
    #[error(
        "not a contract declaration ({0}); expected one line like {{\"contract\":\"{version}\",\"performs\":{{\"connect\":[\"handshake\"],\"close\":[]}}}}",
        version = crate::contract::VERSION
    )]
    NotADeclaration(#[source] serde_json::Error),
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
