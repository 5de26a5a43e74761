//! The crate's one error enum. `Display` gives SPEC §2's exact strings: scenarios assert them.

use crate::message::{RequestId, RpcError};
use crate::oauth::error::AuthError;
use serde_json::Value;

/// Whether the server may have acted on a request that failed. Drives the manager's retry
/// rule (SPEC §7): only `NotSent` is safe to replay for a non-idempotent tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acceptance {
    /// No byte of the request reached the server.
    NotSent,
    /// Bytes were sent; whether the server acted is unknown.
    Unknown,
    /// The server acknowledged the request (e.g. an HTTP 2xx status arrived).
    Accepted,
}

/// A coarse class of error, for reports and retry decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The transport is not (or no longer) connected.
    NotConnected,
    /// The transport closed while the request was pending.
    Closed,
    /// The server answered with a JSON-RPC error.
    Rpc,
    /// The server answered with a non-2xx HTTP status.
    Http,
    /// The HTTP session expired (404 on a request that carried a session id).
    SessionExpired,
    /// A reply stream ended before the matching response.
    NoResponse,
    /// The request timed out.
    Timeout,
    /// The caller cancelled the request.
    Cancelled,
    /// The peer broke the protocol (bad content type, empty body, invalid JSON-RPC…).
    Protocol,
    /// Spawning, reading or writing failed.
    Io,
    /// The configuration is unusable.
    Config,
    /// The OAuth authorization flow failed (discovery, registration, the user step, the
    /// token endpoint).
    Auth,
}

/// Every way a transport operation can fail.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TransportError {
    /// The transport was never connected or has closed.
    #[error("Transport not connected")]
    NotConnected,
    /// The transport closed while the request was pending; `reason` names the cause.
    #[error("Transport closed{}", reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed {
        /// Why, when known (e.g. `legacy SSE stream closed`).
        reason: Option<String>,
    },
    /// A JSON-RPC error response.
    #[error("MCP error {}: {}", .0.code, .0.message)]
    Rpc(RpcError),
    /// A non-2xx HTTP status.
    #[error("HTTP {status}: {body}{}", auth_hint(www_authenticate, mcp_auth_server))]
    Http {
        /// The status code.
        status: u16,
        /// The response body, bounded.
        body: String,
        /// The `WWW-Authenticate` header, when present.
        www_authenticate: Option<String>,
        /// The `Mcp-Auth-Server` header, when present.
        mcp_auth_server: Option<String>,
        /// Whether the request was accepted before the status arrived (always `false` for
        /// a status on the POST itself).
        accepted: bool,
    },
    /// A 404 on a request that carried a session id: the session expired.
    #[error("Session expired: HTTP 404 for session {session_id}")]
    SessionExpired {
        /// The session id that the server no longer knows.
        session_id: String,
    },
    /// A reply stream ended before the response with the request's id.
    #[error("No response received for request ID {id}")]
    NoResponse {
        /// The request's id.
        id: RequestId,
    },
    /// The request's timeout fired.
    #[error("Request timeout after {ms}ms")]
    Timeout {
        /// The timeout that applied, in milliseconds.
        ms: u64,
        /// Whether the request had been written before the timeout fired.
        sent: bool,
    },
    /// The request's total bound (`max_total_timeout_ms`) expired, however much progress
    /// arrived: unlike [`TransportError::Timeout`], progress cannot extend it.
    #[error("Request timeout after {ms}ms (max total timeout)")]
    TotalTimeout {
        /// The total bound, in milliseconds.
        ms: u64,
        /// Whether the request had been written before the bound expired.
        sent: bool,
    },
    /// The caller cancelled the request.
    #[error("Request cancelled{}", reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    Cancelled {
        /// The caller's reason, if any.
        reason: Option<String>,
    },
    /// The peer broke the protocol.
    #[error("Protocol error: {0}")]
    Protocol(String),
    /// A message over the configured size cap.
    #[error("Message too large: over {limit} bytes")]
    MessageTooLarge {
        /// The cap in bytes.
        limit: usize,
    },
    /// Spawning the server process failed.
    #[error("Failed to spawn {command}: {message}")]
    Spawn {
        /// The program.
        command: String,
        /// The OS error.
        message: String,
    },
    /// Writing a message failed (e.g. EPIPE); `sent` is false when no byte went out.
    #[error("Write failed: {message}")]
    Write {
        /// The OS error.
        message: String,
    },
    /// Connecting (TCP, TLS, HTTP) failed before anything was sent.
    #[error("Connection failed: {0}")]
    Connect(String),
    /// The connection broke after the request may have reached the server (a reset before
    /// the status line, say): unlike [`TransportError::Connect`], acceptance is unknown.
    #[error("Connection lost: {0}")]
    ConnectionLost(String),
    /// The legacy SSE endpoint event named another origin.
    #[error("Legacy SSE endpoint origin mismatch: {0}")]
    LegacyEndpointOriginMismatch(String),
    /// No `endpoint` event arrived within the timeout.
    #[error("Legacy SSE endpoint event not received")]
    LegacyEndpointNotReceived,
    /// The server speaks a protocol revision we do not.
    #[error("Unsupported protocol version: {0}")]
    UnsupportedProtocolVersion(String),
    /// The configuration cannot be used.
    #[error("Invalid configuration: {0}")]
    Config(String),
    /// The OAuth flow a 401 started failed (`docs/authorization.md`); the [`AuthError`] says
    /// at which step, and never holds a token, code, verifier or secret.
    #[error("Authorization failed: {0}")]
    Auth(#[from] AuthError),
    /// A `subscriptions/listen` stream dropped (2026-07-28) and is being re-sent: reported,
    /// never returned, so the caller learns notifications may have been missed.
    #[error(
        "Subscription stream dropped ({cause}); re-sending subscriptions/listen (attempt {attempt} of {max}): notifications may have been missed until it is acknowledged again"
    )]
    SubscriptionDropped {
        /// Why the stream ended.
        cause: String,
        /// Which re-send this is, from 1.
        attempt: usize,
        /// How many re-sends are allowed.
        max: usize,
    },
}

fn auth_hint(www: &Option<String>, auth_server: &Option<String>) -> String {
    let parts: Vec<String> = [("WWW-Authenticate", www), ("Mcp-Auth-Server", auth_server)]
        .iter()
        .filter_map(|(name, v)| v.as_ref().map(|v| format!("{name}: {v}")))
        .collect();
    if parts.is_empty() { String::new() } else { format!(" [{}]", parts.join("; ")) }
}

impl TransportError {
    /// The error's class.
    pub fn kind(&self) -> ErrorKind {
        use TransportError::*;
        match self {
            NotConnected => ErrorKind::NotConnected,
            Closed { .. } => ErrorKind::Closed,
            Rpc(_) => ErrorKind::Rpc,
            Http { .. } => ErrorKind::Http,
            SessionExpired { .. } => ErrorKind::SessionExpired,
            NoResponse { .. } | SubscriptionDropped { .. } => ErrorKind::NoResponse,
            Timeout { .. } | TotalTimeout { .. } => ErrorKind::Timeout,
            Cancelled { .. } => ErrorKind::Cancelled,
            Protocol(_) | MessageTooLarge { .. } | UnsupportedProtocolVersion(_) => ErrorKind::Protocol,
            LegacyEndpointOriginMismatch(_) | LegacyEndpointNotReceived => ErrorKind::Protocol,
            Spawn { .. } | Write { .. } | Connect(_) | ConnectionLost(_) => ErrorKind::Io,
            Config(_) => ErrorKind::Config,
            Auth(_) => ErrorKind::Auth,
        }
    }

    /// Whether the server may have acted on the request (SPEC §7).
    pub fn acceptance(&self) -> Acceptance {
        use TransportError::*;
        match self {
            NotConnected | Spawn { .. } | Connect(_) | Config(_) | Auth(_) => Acceptance::NotSent,
            Write { .. } => Acceptance::NotSent,
            Timeout { sent: false, .. } | TotalTimeout { sent: false, .. } => Acceptance::NotSent,
            Http { accepted: false, status, .. } if *status == 401 || *status == 403 => Acceptance::NotSent,
            Http { accepted: true, .. } | Rpc(_) | NoResponse { .. } => Acceptance::Accepted,
            SessionExpired { .. } => Acceptance::NotSent,
            _ => Acceptance::Unknown,
        }
    }

    /// Whether a reconnect and retry may help (the manager still checks [`Self::acceptance`]).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::NotConnected
                | ErrorKind::Closed
                | ErrorKind::Io
                | ErrorKind::SessionExpired
                | ErrorKind::NoResponse
        ) || matches!(self, TransportError::Http { status, .. } if *status >= 500)
    }

    /// The JSON-RPC `data` member of an [`TransportError::Rpc`] error.
    pub fn rpc_data(&self) -> Option<&Value> {
        match self {
            TransportError::Rpc(e) => e.data.as_ref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_matches_spec_strings() {
        assert_eq!(TransportError::NotConnected.to_string(), "Transport not connected");
        assert_eq!(TransportError::Closed { reason: None }.to_string(), "Transport closed");
        assert_eq!(
            TransportError::Closed { reason: Some("legacy SSE stream closed".into()) }.to_string(),
            "Transport closed: legacy SSE stream closed"
        );
        assert_eq!(
            TransportError::Rpc(RpcError { code: -32601, message: "Method not found".into(), data: None }).to_string(),
            "MCP error -32601: Method not found"
        );
        assert_eq!(TransportError::Timeout { ms: 50, sent: true }.to_string(), "Request timeout after 50ms");
        assert_eq!(
            TransportError::NoResponse { id: RequestId::Number(3) }.to_string(),
            "No response received for request ID 3"
        );
        let http = TransportError::Http {
            status: 401,
            body: "no".into(),
            www_authenticate: Some("Bearer realm=\"x\"".into()),
            mcp_auth_server: None,
            accepted: false,
        };
        assert_eq!(http.to_string(), "HTTP 401: no [WWW-Authenticate: Bearer realm=\"x\"]");
    }
}
