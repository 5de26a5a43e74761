//! `http_order`: the client's first HTTP request matching `first` reached the mock before
//! its first request matching `then` — an order between HTTP exchanges (a GET, a DELETE)
//! and the JSON-RPC messages other requests carry. Requests are ordered by the mock's
//! exchange numbers, given as each request arrives. A wire check for the HTTP transports.

use super::http::{Invalid as HttpInvalid, check_http_method, describe_request, request_matches};
use super::{CheckKind, Finding, Run};
use mcp_scenario::checks::{HttpFilter, HttpOrderCheck};
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, TransportName};

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::Missing(_))
    }
}

impl CheckKind for HttpOrderCheck {
    fn explain(&self) -> String {
        format!(
            "the client's first {} reached the mock{} before its first {}",
            filter_words(&self.first),
            if self.answered { " and was answered" } else { "" },
            filter_words(&self.then)
        )
    }

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
            run.transcript.events().filter(|e| request_matches(f, e)).filter_map(WireEvent::exchange).min()
        };
        let (first, then) = (describe_request(&self.first), describe_request(&self.then));
        match (first_of(&self.first), first_of(&self.then)) {
            (None, _) => Err(Failure::Missing(first)),
            (_, None) => Err(Failure::Missing(then)),
            (Some(a), Some(b)) if a > b => Err(Failure::After { first, a, then, b }),
            (Some(a), Some(b)) if self.answered && !answered_before(run, a, b) => {
                Err(Failure::BeforeAnswer { first, a, then, b })
            }
            _ => Ok(()),
        }
    }
}

/// Whether the mock's answer to exchange `a` was recorded before request `b` arrived.
fn answered_before(run: &Run<'_>, a: u64, b: u64) -> bool {
    for e in run.transcript.events() {
        if e.status().is_some() && e.exchange() == Some(a) {
            return true;
        }
        if e.http_method().is_some() && e.exchange() == Some(b) {
            return false;
        }
    }
    false
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
    /// `answered`: the `then` request came before the answer to `first`.
    #[error("the client's first {then} (#{b}) reached the mock before its first {first} (#{a}) was answered")]
    BeforeAnswer {
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

#[cfg(test)]
mod tests {
    use super::super::{evaluated, testing};
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// `initialized` is exchange 1 and the GET exchange 2; the events come in `order`
    /// (`"init"`, `"answer"`: the 202 to it, `"get"`).
    fn judge(check: &str, order: &[&str]) -> Result<(), String> {
        let scenario = testing::scenario("http", &format!("http_order: {check}"));
        let request = |exchange: u64, http_method: &str, json: Option<serde_json::Value>| WireEvent::HttpRequest {
            t_us: exchange,
            exchange,
            http_method: http_method.into(),
            path: "/mcp".into(),
            headers: BTreeMap::new(),
            body: None,
            json,
        };
        let events = order
            .iter()
            .map(|e| match *e {
                "init" => request(1, "POST", Some(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))),
                "get" => request(2, "GET", None),
                _ => WireEvent::HttpResponse {
                    t_us: 3,
                    exchange: 1,
                    status: 202,
                    headers: BTreeMap::new(),
                    body: None,
                    json: None,
                    why: "accepted".into(),
                },
            })
            .collect();
        testing::judge(&scenario, events, evaluated)
    }
    #[test]
    fn answered_asks_for_the_answer_before_the_next_request() {
        let arrival = "{first: {method: notifications/initialized}, then: {http_method: GET}}";
        let answered = "{first: {method: notifications/initialized}, then: {http_method: GET}, answered: true}";
        assert_eq!(judge(arrival, &["init", "get", "answer"]), Ok(()), "arrival order alone");
        assert_eq!(judge(answered, &["init", "answer", "get"]), Ok(()));
        assert_eq!(
            judge(answered, &["init", "get", "answer"]),
            Err("the client's first GET request(s) (#2) reached the mock before its first HTTP notifications/initialized request(s) (#1) was answered".into())
        );
        assert_eq!(judge(answered, &["init", "get"]), judge(answered, &["init", "get", "answer"]), "never answered");
    }
}
