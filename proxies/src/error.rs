//! [`ProxyError`], the crate's one error enum.

/// What went wrong starting or running a proxy.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// A socket or file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The record file could not be created.
    #[error("cannot record the proxy's hop: {0}")]
    Record(String),
    /// nginx is not installed where the harness looks.
    #[error(
        "nginx is not installed (looked at $MCP_NGINX, `nginx` on PATH, /usr/sbin/nginx): install the Debian package with `apt-get install -y nginx`, or point MCP_NGINX at an nginx binary"
    )]
    NginxMissing,
    /// nginx started but did not come up.
    #[error("nginx did not start: {why}; its stderr: {stderr}")]
    NginxStart {
        /// What happened instead.
        why: String,
        /// What nginx wrote to stderr (trimmed).
        stderr: String,
    },
    /// The upstream could not be reached or broke.
    #[error("upstream: {0}")]
    Upstream(String),
    /// A body stage ended the response abruptly on purpose (`cut`, `reset`).
    #[error("cut by the proxy")]
    Cut,
}

impl ProxyError {
    /// An I/O error with what was being done.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        ProxyError::Io { what: what.into(), source }
    }
}
