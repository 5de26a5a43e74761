//! Which HTTP transport a mock speaks.

use mcp_scenario::TransportName;

/// Which HTTP transport the mock speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// Streamable HTTP (2025-03-26 … 2025-11-25): POST, optional GET listener, DELETE.
    StreamableHttp,
    /// Legacy HTTP+SSE (2024-11-05): GET stream with an `endpoint` event, POSTs to it.
    LegacySse,
}

impl Flavour {
    /// The path printed in the `listening` line.
    pub fn path(self) -> &'static str {
        match self {
            Flavour::StreamableHttp => "/mcp",
            Flavour::LegacySse => "/sse",
        }
    }

    /// The transport, as scenarios name it.
    pub fn transport(self) -> TransportName {
        match self {
            Flavour::StreamableHttp => TransportName::Http,
            Flavour::LegacySse => TransportName::LegacySse,
        }
    }
}
