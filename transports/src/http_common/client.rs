//! The reqwest client both HTTP transports use: URL checks, the same-origin redirect
//! policy, no proxy for loopback servers, and what its failures mean.

use crate::error::TransportError;
use url::Url;

/// Redirect hops followed (same origin, 307/308 only).
const MAX_REDIRECTS: usize = 5;

/// Why an HTTP-kind configuration cannot be used; becomes [`TransportError::Config`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// The configured URL does not parse.
    #[error("invalid URL: {0}")]
    InvalidUrl(#[from] url::ParseError),
    /// The configured URL is neither http nor https.
    #[error("unsupported URL scheme {0:?}; expected http or https")]
    UnsupportedScheme(String),
    /// An https URL, in a build without the `tls` feature.
    #[error(
        "https needs TLS, which this build of mcp-transports leaves out: build it with its `tls` feature (on by default; `cargo build --features mcp-transports/tls`)"
    )]
    TlsNotBuilt,
    /// A configured header name or value is not valid HTTP (its value is never shown).
    #[error("invalid header {0:?}")]
    InvalidHeader(String),
    /// reqwest could not build a client (e.g. no TLS backend).
    #[error("cannot build the HTTP client: {0}")]
    Client(reqwest::Error),
}

impl From<ConfigError> for TransportError {
    fn from(e: ConfigError) -> Self {
        TransportError::Config(e.to_string())
    }
}

/// Parses the configured URL; only http and https are usable.
pub(crate) fn parse_url(raw: &str) -> Result<Url, ConfigError> {
    let url = Url::parse(raw)?;
    match url.scheme() {
        "http" => Ok(url),
        "https" if cfg!(feature = "tls") => Ok(url),
        "https" => Err(ConfigError::TlsNotBuilt),
        other => Err(ConfigError::UnsupportedScheme(other.to_owned())),
    }
}

/// Why a redirect was refused. Kept as a type so [`request_error`] can find it in the
/// reqwest error's source chain.
#[derive(Debug, thiserror::Error)]
enum RedirectRefused {
    #[error("too many redirects (over {max})")]
    TooMany { max: usize },
    #[error("refusing cross-origin redirect from {from} to {to} (configured headers would leak)")]
    CrossOrigin { from: String, to: String },
}

/// Follows 307/308 to the same origin only: configured headers (tokens) must never reach
/// another origin, and other redirect codes would turn a POST into a GET.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(origin) = attempt.previous().first().map(Url::origin) else { return attempt.stop() };
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(RedirectRefused::TooMany { max: MAX_REDIRECTS });
        }
        if !matches!(attempt.status().as_u16(), 307 | 308) {
            return attempt.stop();
        }
        let to = attempt.url().origin();
        if to == origin {
            attempt.follow()
        } else {
            let (from, to) = (origin.ascii_serialization(), to.ascii_serialization());
            attempt.error(RedirectRefused::CrossOrigin { from, to })
        }
    })
}

/// The HTTP client both transports use: rustls (with the `tls` feature), same-origin redirects, and no proxy for
/// loopback servers (a proxy from the environment must not intercept a local mock).
pub(super) fn build_client(url: &Url) -> Result<reqwest::Client, ConfigError> {
    let mut builder = reqwest::Client::builder().redirect(redirect_policy());
    #[cfg(feature = "tls")]
    {
        builder = builder.use_rustls_tls();
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if loopback {
        builder = builder.no_proxy();
    }
    builder.build().map_err(ConfigError::Client)
}

/// Maps a reqwest failure without its URL (which may carry credentials).
pub(super) fn request_error(e: reqwest::Error) -> TransportError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(err) = source {
        if let Some(refused) = err.downcast_ref::<RedirectRefused>() {
            return TransportError::Protocol(refused.to_string());
        }
        source = err.source();
    }
    let connect = e.is_connect();
    let e = e.without_url();
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(err) = source {
        msg.push_str(": ");
        msg.push_str(&err.to_string());
        source = err.source();
    }
    if connect {
        TransportError::Connect(msg)
    } else {
        // The request may have reached the server: acceptance is unknown.
        TransportError::ConnectionLost(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inner errors keep the exact texts `TransportError::Config` carried before.
    #[test]
    fn config_errors_keep_their_text() {
        let text = |e: ConfigError| TransportError::from(e).to_string();
        assert_eq!(
            text(parse_url("ftp://x/").expect_err("scheme")),
            "Invalid configuration: unsupported URL scheme \"ftp\"; expected http or https"
        );
        assert_eq!(
            text(parse_url("not a url").expect_err("parse")),
            "Invalid configuration: invalid URL: relative URL without a base"
        );
        assert_eq!(text(ConfigError::InvalidHeader("x y".into())), "Invalid configuration: invalid header \"x y\"");
        // https is usable exactly when the crate was built with TLS.
        let https = parse_url("https://example.invalid/mcp");
        if cfg!(feature = "tls") {
            assert!(https.is_ok());
        } else {
            assert!(text(https.expect_err("no tls")).contains("build it with its `tls` feature"));
        }
        assert_eq!(RedirectRefused::TooMany { max: 5 }.to_string(), "too many redirects (over 5)");
    }
}
