//! Where the server is, and the options a session is opened with.

use mcp_transports::TransportConfig;
use mcp_transports::config::TransportKind;
use mcp_transports::oauth::OAuthConfig;
use std::collections::BTreeMap;

/// The server to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// Streamable HTTP at this URL.
    Http(String),
    /// Legacy HTTP+SSE (2024-11-05) at this URL.
    LegacySse(String),
    /// A child process speaking JSON Lines on stdio.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// Everything needed to open a [`Session`](crate::session::Session).
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// The server.
    pub server: Server,
    /// The revision to speak first (`2026-07-28` is stateless: no handshake).
    pub protocol_version: String,
    /// Extra HTTP headers (the transports' generated protocol headers win over them).
    pub headers: BTreeMap<String, String>,
    /// Per-request timeout; `None` → the transports' default (`MCP_TIMEOUT_MS`, else 30 s).
    pub timeout_ms: Option<u64>,
    /// The OAuth client of the HTTP transports (`None`: a 401 fails the request). One
    /// value for the whole session, so a reconnect keeps the tokens obtained.
    pub oauth: Option<OAuthConfig>,
}

impl ConnectOptions {
    /// Options for a server with the default revision and no extras.
    pub fn new(server: Server, protocol_version: impl Into<String>) -> Self {
        ConnectOptions {
            server,
            protocol_version: protocol_version.into(),
            headers: BTreeMap::new(),
            timeout_ms: None,
            oauth: None,
        }
    }

    /// The bundled transports' configuration for these options at `protocol_version`.
    pub fn transport_config(&self, protocol_version: &str) -> TransportConfig {
        let mut config = TransportConfig {
            protocol_version: protocol_version.to_owned(),
            timeout_ms: self.timeout_ms,
            headers: self.headers.clone(),
            ..TransportConfig::default()
        };
        match &self.server {
            Server::Http(url) => {
                config.kind = TransportKind::Http;
                config.url = url.clone();
                config.oauth = self.oauth.clone();
            }
            Server::LegacySse(url) => {
                config.kind = TransportKind::Sse;
                config.url = url.clone();
                config.oauth = self.oauth.clone();
            }
            Server::Command { program, args } => {
                config.kind = TransportKind::Stdio;
                config.command = program.clone();
                config.args = args.clone();
            }
        }
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_kind_selects_its_transport() {
        let http = ConnectOptions::new(Server::Http("http://127.0.0.1:1/mcp".into()), "2025-11-25");
        let c = http.transport_config("2026-07-28");
        assert_eq!(
            (c.kind, c.url.as_str(), c.protocol_version.as_str()),
            (TransportKind::Http, "http://127.0.0.1:1/mcp", "2026-07-28")
        );
        let sse = ConnectOptions::new(Server::LegacySse("http://127.0.0.1:1/sse".into()), "2024-11-05");
        assert_eq!(sse.transport_config("2024-11-05").kind, TransportKind::Sse);
        let cmd = ConnectOptions::new(Server::Command { program: "srv".into(), args: vec!["-v".into()] }, "2025-11-25");
        let c = cmd.transport_config("2025-11-25");
        assert_eq!((c.kind, c.command.as_str(), c.args.clone()), (TransportKind::Stdio, "srv", vec!["-v".to_owned()]));
        assert!(c.oauth.is_none() && http.transport_config("2025-11-25").oauth.is_none());
    }

    #[test]
    fn the_oauth_client_goes_to_http_transports_only() {
        let oauth = crate::authorization::oauth_config(&Default::default(), None);
        let mut http = ConnectOptions::new(Server::Http("http://127.0.0.1:1/mcp".into()), "2025-11-25");
        http.oauth = Some(oauth.clone());
        assert!(http.transport_config("2025-11-25").oauth.is_some());
        let mut cmd = ConnectOptions::new(Server::Command { program: "srv".into(), args: vec![] }, "2025-11-25");
        cmd.oauth = Some(oauth);
        assert!(cmd.transport_config("2025-11-25").oauth.is_none());
    }
}
