//! `http_order`: the client's first HTTP request matching `first` reached the mock before
//! its first request matching `then` — an order between HTTP exchanges (a GET, a DELETE)
//! and the JSON-RPC messages other requests carry. Requests are ordered by the mock's
//! exchange numbers, given as each request arrives. A wire check for the HTTP transports.

use super::http::{Invalid as HttpInvalid, check_http_method, describe_request, request_matches};
use super::{CheckKind, Run};
use mcp_scenario::checks::{HttpFilter, HttpOrderCheck};
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, TransportName};

impl CheckKind for HttpOrderCheck {
    fn explain(&self) -> String {
        format!(
            "the client's first {} reached the mock before its first {}",
            filter_words(&self.first),
            filter_words(&self.then)
        )
    }

    const NAME: &'static str = "http_order";
    type Invalid = Invalid;
    type Failure = Failure;

    fn validate(&self, scenario: &Scenario) -> Result<(), Invalid> {
        if scenario.transport.to_vec().iter().all(|t| *t == TransportName::Stdio) {
            return Err(Invalid::NotHttp);
        }
        for (field, f) in [("first", &self.first), ("then", &self.then)] {
            if f.http_method.is_none() && f.method.is_none() && f.path.is_none() {
                return Err(Invalid::Empty(field));
            }
            check_http_method(f.http_method.as_deref()).map_err(|e| Invalid::Field(field, e))?;
        }
        Ok(())
    }

    fn judges(&self, _scenario: &Scenario) -> Vec<String> {
        [&self.first, &self.then].iter().filter_map(|f| f.method.clone().or_else(|| f.http_method.clone())).collect()
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let first_of = |f: &HttpFilter| {
            run.transcript
                .events()
                .filter_map(|e| match e {
                    WireEvent::HttpRequest { exchange, http_method, path, json, .. }
                        if request_matches(f, http_method, path, json.as_ref()) =>
                    {
                        Some(*exchange)
                    }
                    _ => None,
                })
                .min()
        };
        let (first, then) = (describe_request(&self.first), describe_request(&self.then));
        match (first_of(&self.first), first_of(&self.then)) {
            (None, _) => Err(Failure::Missing(first)),
            (_, None) => Err(Failure::Missing(then)),
            (Some(a), Some(b)) if a > b => Err(Failure::After { first, a, then, b }),
            _ => Ok(()),
        }
    }
}

/// An `http_order` check the loader rejects.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// The scenario has no HTTP transport.
    #[error("`http_order` orders HTTP requests; this scenario runs over stdio only")]
    NotHttp,
    /// A filter that selects every request.
    #[error("field `{0}`: give at least one of `http_method`, `method`, `path`")]
    Empty(&'static str),
    /// A bad field inside a filter.
    #[error("field `{0}`: {1}")]
    Field(&'static str, HttpInvalid),
}

/// How the order differed.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// No request matched a filter.
    #[error("the client sent no {0}")]
    Missing(String),
    /// The `then` request came first.
    #[error("the client's first {then} (#{b}) reached the mock before its first {first} (#{a})")]
    After {
        /// `first` in words.
        first: String,
        /// Its exchange.
        a: u64,
        /// `then` in words.
        then: String,
        /// Its exchange.
        b: u64,
    },
}

/// An HTTP filter in words (`POST `initialize``).
fn filter_words(f: &HttpFilter) -> String {
    let parts = super::http::filter_parts(f);
    if parts.is_empty() { "request".into() } else { parts.join(" ") }
}
