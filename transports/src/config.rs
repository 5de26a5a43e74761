//! Per-connection settings and timeout resolution (SPEC §2).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The default per-request timeout when neither env nor config sets one.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// The default cap on one inbound message (stdio line, SSE event, HTTP body).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// The environment variable that overrides every configured timeout.
pub const TIMEOUT_ENV: &str = "MCP_TIMEOUT_MS";

/// Which transport a configuration selects (SPEC §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransportKind {
    /// A child process speaking JSON Lines (the default when no type is given).
    #[default]
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE (2024-11-05).
    Sse,
}

/// Everything a transport needs to connect. Fields that do not apply to a kind are ignored.
#[derive(Debug, Clone, Default)]
pub struct TransportConfig {
    /// Which transport.
    pub kind: TransportKind,
    /// stdio: the program to spawn.
    pub command: String,
    /// stdio: its arguments.
    pub args: Vec<String>,
    /// stdio: extra environment variables for the child.
    pub env: BTreeMap<String, String>,
    /// stdio: the child's working directory.
    pub cwd: Option<PathBuf>,
    /// HTTP kinds: the server URL.
    pub url: String,
    /// HTTP kinds: user-configured headers (generated protocol headers win over them).
    pub headers: BTreeMap<String, String>,
    /// Per-connection timeout in ms (`None` → 30000; `Some(0)` disables).
    pub timeout_ms: Option<u64>,
    /// Use string request ids ("1", "2", …) instead of numbers.
    pub string_ids: bool,
    /// Cap on one inbound message; `None` → 16 MiB.
    pub max_message_bytes: Option<usize>,
    /// The protocol revision to speak (e.g. "2025-11-25").
    pub protocol_version: String,
    /// The value of `MCP_TIMEOUT_MS` to use instead of reading the process environment.
    /// In-process test targets run many clients at once, so they cannot share one process
    /// environment; `None` reads the real environment.
    pub timeout_env_override: Option<Option<String>>,
    /// HTTP kinds: the OAuth authorization client (`docs/authorization.md`); `None`: a 401
    /// goes to the refresh hook, if any, else to the caller.
    pub oauth: Option<crate::oauth::OAuthConfig>,
}

impl TransportConfig {
    /// The message cap in force.
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes.unwrap_or(DEFAULT_MAX_MESSAGE_BYTES)
    }

    /// The resolved timeout; `None` means disabled.
    pub fn timeout(&self) -> Option<Duration> {
        let env = match &self.timeout_env_override {
            Some(v) => v.clone(),
            None => std::env::var(TIMEOUT_ENV).ok(),
        };
        resolve_timeout(env.as_deref(), self.timeout_ms)
    }
}

/// `MCP_TIMEOUT_MS` (a valid non-negative integer) beats the configured timeout, which beats
/// 30000 ms; `0` disables timeouts. An invalid env value is ignored with a warning.
pub fn resolve_timeout(env: Option<&str>, configured_ms: Option<u64>) -> Option<Duration> {
    let from_env = env.and_then(|raw| match raw.trim().parse::<u64>() {
        Ok(ms) => Some(ms),
        Err(_) => {
            tracing::warn!(value = raw, "ignoring invalid {TIMEOUT_ENV}; expected a non-negative integer");
            None
        }
    });
    match from_env.or(configured_ms).unwrap_or(DEFAULT_TIMEOUT_MS) {
        0 => None,
        ms => Some(Duration::from_millis(ms)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_beats_config_beats_default() {
        assert_eq!(resolve_timeout(Some("40"), Some(100)), Some(Duration::from_millis(40)));
        assert_eq!(resolve_timeout(None, Some(100)), Some(Duration::from_millis(100)));
        assert_eq!(resolve_timeout(None, None), Some(Duration::from_millis(30_000)));
        assert_eq!(resolve_timeout(Some("0"), Some(100)), None);
        assert_eq!(resolve_timeout(None, Some(0)), None);
        assert_eq!(resolve_timeout(Some("-5"), Some(100)), Some(Duration::from_millis(100)));
        assert_eq!(resolve_timeout(Some("abc"), None), Some(Duration::from_millis(30_000)));
    }
}
