//! The crate's one error enum. Every message says what failed and, where it helps, what to do.

use mcp_transports::TransportError;

/// Why a session or a plan could not finish.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The transport failed to connect, or a request failed (its text is SPEC §2's).
    #[error("{method}: {source}")]
    Transport {
        /// The method being sent (`connect` for the connection itself).
        method: String,
        /// What the transport reported (boxed: it is much larger than the other variants).
        source: Box<TransportError>,
    },
    /// The request's params are not a JSON object.
    #[error("params for {method} must be a JSON object (e.g. '{{\"name\": \"add\"}}'): {reason}")]
    BadParams {
        /// The method.
        method: String,
        /// What is wrong with them.
        reason: String,
    },
    /// A result does not have the shape the method promises.
    #[error("{method}: the result has no {member} array")]
    BadResult {
        /// The method.
        method: String,
        /// The member that is missing.
        member: &'static str,
    },
    /// `MCP_CONFORMANCE_CONTEXT` is not the JSON the scenario needs.
    #[error("MCP_CONFORMANCE_CONTEXT: {0}")]
    BadContext(String),
    /// The whole run outlived its deadline.
    #[error("no answer within {0} ms (the run's deadline; set MCP_TIMEOUT_MS to change the per-request timeout)")]
    Deadline(u64),
    /// A `--header` that is not `Name: value`.
    #[error("expected `Name: value`, got {raw:?}")]
    HeaderNotNameValue {
        /// The argument as given.
        raw: String,
    },
    /// Neither `--url` nor a command names the server.
    #[error("no server: give --url URL, or a command after `--`")]
    NoServer,
    /// Both `--url` and a command name a server.
    #[error("two servers: give either --url or a command after `--`")]
    TwoServers,
    /// OAuth options for a stdio server.
    #[error("OAuth is for HTTP servers: a stdio server takes its credentials from its environment")]
    OAuthOverStdio,
    /// A client secret in the environment without the client id it belongs to.
    #[error("{env} is set but --client-id is not: give the client id it belongs to")]
    SecretWithoutClientId {
        /// The environment variable that holds the secret.
        env: &'static str,
    },
}

impl ClientError {
    /// Wraps a transport error with the method that met it.
    pub fn transport(method: &str, source: TransportError) -> Self {
        ClientError::Transport { method: method.to_owned(), source: Box::new(source) }
    }

    /// The transport error inside, if any.
    pub fn transport_error(&self) -> Option<&TransportError> {
        match self {
            ClientError::Transport { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}
