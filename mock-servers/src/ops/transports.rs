//! [`Transports`]: the set of transports an op applies to, and whether it is a standing rule.

use mcp_scenario::TransportName;

/// The transports an op applies to, and whether over HTTP it is a standing rule. Written once
/// per op ([`About::transports`](super::About::transports)) and read by load-time validation (a
/// scenario that runs over none of them is refused) and by both engines (which run an op
/// only over a transport it applies to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transports {
    /// Newline-delimited JSON over stdin/stdout.
    pub stdio: bool,
    /// Streamable HTTP.
    pub http: bool,
    /// Legacy HTTP+SSE.
    pub legacy_sse: bool,
    /// HTTP: the step only sets a rule that holds from then on and never waits for the
    /// client (`require_auth`, `expire_session`, `reply_always`, `message_event`). The
    /// engine applies the standing steps a connection's script starts with before any of
    /// its requests is handled, so no request can overtake them.
    pub standing: bool,
}

impl Transports {
    /// Every transport.
    pub const ALL: Transports = Transports { stdio: true, http: true, legacy_sse: true, standing: false };
    /// stdio only.
    pub const STDIO: Transports = Transports { stdio: true, http: false, legacy_sse: false, standing: false };
    /// Both HTTP transports (Streamable HTTP and legacy HTTP+SSE).
    pub const HTTP: Transports = Transports { stdio: false, http: true, legacy_sse: true, standing: false };

    /// Streamable HTTP only (the authorization server: legacy SSE predates MCP's
    /// authorization pages' discovery rules).
    pub const STREAMABLE_HTTP: Transports = Transports { stdio: false, http: true, legacy_sse: false, standing: false };

    /// The same transports, for a standing rule (see [`Transports::standing`]).
    pub const fn standing_rule(self) -> Transports {
        Transports { standing: true, ..self }
    }

    /// Whether the op applies to `transport`.
    pub fn contains(self, transport: TransportName) -> bool {
        match transport {
            TransportName::Stdio => self.stdio,
            TransportName::Http => self.http,
            TransportName::LegacySse => self.legacy_sse,
        }
    }
}
