//! Targets: which client runs the scenarios.

use crate::error::HarnessError;
use mcp_scenario::TransportName;
use std::fmt;

/// The client under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The bundled transports, in-process; `None` runs every transport a scenario names.
    Bundled(Option<TransportName>),
    /// An external client program (see `clients/README.md`).
    Cmd(String),
}

impl Target {
    /// Parses `bundled`, `bundled:stdio`, `bundled:http`, `bundled:legacy-sse`, `cmd:<line>`.
    pub fn parse(s: &str) -> Result<Self, HarnessError> {
        match s {
            "bundled" => Ok(Target::Bundled(None)),
            "bundled:stdio" => Ok(Target::Bundled(Some(TransportName::Stdio))),
            "bundled:http" => Ok(Target::Bundled(Some(TransportName::Http))),
            "bundled:legacy-sse" => Ok(Target::Bundled(Some(TransportName::LegacySse))),
            _ => match s.strip_prefix("cmd:") {
                Some(line) if !line.trim().is_empty() => Ok(Target::Cmd(line.trim().to_string())),
                _ => Err(HarnessError::UnknownTarget(s.to_string())),
            },
        }
    }

    /// Whether the target runs scenarios over `transport`.
    pub fn covers(&self, transport: TransportName) -> bool {
        match self {
            Target::Bundled(None) | Target::Cmd(_) => true,
            Target::Bundled(Some(t)) => *t == transport,
        }
    }

    /// Whether exact error texts and internal counters are checked (bundled only).
    pub fn is_bundled(&self) -> bool {
        matches!(self, Target::Bundled(_))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Bundled(None) => write!(f, "bundled"),
            Target::Bundled(Some(t)) => write!(f, "bundled:{}", t.as_str()),
            Target::Cmd(line) => write!(f, "cmd:{line}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_targets_and_rejects_others() {
        assert_eq!(Target::parse("bundled:stdio").expect("ok"), Target::Bundled(Some(TransportName::Stdio)));
        assert_eq!(Target::parse("cmd: node x.js").expect("ok"), Target::Cmd("node x.js".into()));
        assert!(Target::parse("bundeld").is_err());
        assert!(Target::parse("cmd:").is_err());
    }
}
