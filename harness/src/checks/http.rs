//! `http`: the client's HTTP requests that match (by HTTP method, JSON-RPC method, path,
//! connection) carried a header, with a value, a number of times — or every time. A wire
//! check for the HTTP transports; only recorded request headers can be checked.

use super::{CheckKind, Run, header_value};
use crate::transcript::method_of;
use mcp_scenario::Scenario;
use mcp_scenario::checks::{HttpCheck, HttpFilter};
use mcp_scenario::wire::{RECORDED_REQUEST_HEADERS, WireEvent, is_recorded_header};
use serde_json::Value;

impl CheckKind for HttpCheck {
    const NAME: &'static str = "http";
    type Invalid = Invalid;
    type Failure = Failure;

    fn validate(&self, _scenario: &Scenario) -> Result<(), Invalid> {
        if let Some(name) = &self.header {
            if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(Invalid::HeaderName(name.clone()));
            }
            if !is_recorded_header(name) {
                return Err(Invalid::NotRecorded(name.clone()));
            }
        }
        if self.header.is_none() && (self.value.is_some() || self.every) {
            return Err(Invalid::NeedsHeader);
        }
        if self.optional && !self.every {
            return Err(Invalid::OptionalWithoutEvery);
        }
        if self.every && self.count.is_some() {
            return Err(Invalid::EveryAndCount);
        }
        if self.connection == Some(0) {
            return Err(Invalid::ConnectionZero);
        }
        check_http_method(self.http_method.as_deref())
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let header = self.header.as_ref().map(|n| n.to_ascii_lowercase());
        let filter = filter_of(self);
        let (mut matching, mut carrying) = (0usize, 0usize);
        let mut lacking: Option<String> = None;
        for connection in run.transcript.connections() {
            if self.connection.is_some_and(|c| c != connection.number()) {
                continue;
            }
            // The session id the mock issued on this connection, for `{session}`.
            let session = connection.session_id();
            for e in connection.events() {
                let WireEvent::HttpRequest { http_method, path, headers, json, .. } = e else { continue };
                if !selects(self, &filter, http_method, path, json.as_ref()) {
                    continue;
                }
                matching += 1;
                let carried = match &header {
                    None => true,
                    Some(name) => headers.get(name).is_some_and(|got| {
                        self.value
                            .as_ref()
                            .is_none_or(|want| header_value::matches(name, got, &want.replace("{session}", &session)))
                    }),
                };
                if carried {
                    carrying += 1;
                } else if lacking.is_none() {
                    let got = header
                        .as_ref()
                        .and_then(|n| headers.get(n))
                        .map(|v| format!("{v:?}"))
                        .unwrap_or_else(|| "absent".into());
                    lacking = Some(format!("{http_method} {path} had {got}"));
                }
            }
        }
        let what = describe_filter(self);
        let carries = match (&self.header, &self.value) {
            (Some(n), Some(v)) => format!(" with {}", header_value::describe(n, v)),
            (Some(n), None) => format!(" with {n}"),
            _ => String::new(),
        };
        if self.every {
            if matching == 0 && self.optional {
                return Ok(());
            }
            if matching == 0 {
                return Err(Failure::NoneSent { what });
            }
            if carrying < matching {
                return Err(Failure::Lacked {
                    lacking: matching - carrying,
                    matching,
                    what,
                    header: match (&self.header, &self.value) {
                        (Some(n), Some(v)) => header_value::describe(n, v),
                        (n, _) => n.clone().unwrap_or_default(),
                    },
                    example: lacking.unwrap_or_default(),
                });
            }
            return Ok(());
        }
        match self.count {
            Some(want) if want != carrying => Err(Failure::Count { carrying, what, carries, want }),
            None if carrying == 0 => Err(Failure::NoneCarrying {
                what,
                carries,
                example: lacking.map(|l| format!(" (e.g. {l})")).unwrap_or_default(),
            }),
            _ => Ok(()),
        }
    }
}

/// Whether a request passes the check's filters (HTTP method, JSON-RPC method, path, query).
fn selects(h: &HttpCheck, filter: &HttpFilter, http_method: &str, path: &str, json: Option<&Value>) -> bool {
    let query = path.split_once('?').map_or("", |(_, q)| q);
    request_matches(filter, http_method, path, json) && h.query.as_ref().is_none_or(|q| q == query)
}

/// The check's request filters, in the form `http_order` shares.
fn filter_of(h: &HttpCheck) -> HttpFilter {
    HttpFilter { http_method: h.http_method.clone(), method: h.method.clone(), path: h.path.clone() }
}

/// Whether a recorded request passes a filter (HTTP method, a JSON-RPC method its body
/// carries — one of a batch's —, path without the query). Shared with `http_order`.
pub(super) fn request_matches(f: &HttpFilter, http_method: &str, path: &str, json: Option<&Value>) -> bool {
    let methods: Vec<&str> = match json {
        Some(Value::Array(items)) => items.iter().filter_map(method_of).collect(),
        Some(v) => method_of(v).into_iter().collect(),
        None => Vec::new(),
    };
    !(f.http_method.as_ref().is_some_and(|m| m != http_method)
        || f.method.as_ref().is_some_and(|m| !methods.contains(&m.as_str()))
        || f.path.as_ref().is_some_and(|p| path.split('?').next() != Some(p.as_str())))
}

/// A filter in words, e.g. `POST tools/list request(s) to /mcp`.
pub(super) fn describe_request(f: &HttpFilter) -> String {
    let mut what = f.http_method.clone().unwrap_or_else(|| "HTTP".into());
    if let Some(m) = &f.method {
        what.push(' ');
        what.push_str(m);
    }
    what.push_str(" request(s)");
    if let Some(p) = &f.path {
        what.push_str(&format!(" to {p}"));
    }
    what
}

/// The filters in words, e.g. `POST tools/list request(s) to /mcp on connection 2`.
fn describe_filter(h: &HttpCheck) -> String {
    let mut what = describe_request(&filter_of(h));
    if let Some(q) = &h.query {
        what.push_str(&format!(" with query {q:?}"));
    }
    if let Some(c) = h.connection {
        what.push_str(&format!(" on connection {c}"));
    }
    what
}

/// A lowercase or empty HTTP method is a mistake in the file (the mock records them upper
/// case). Shared with `http_order`.
pub(super) fn check_http_method(method: Option<&str>) -> Result<(), Invalid> {
    match method {
        Some(m) if m.is_empty() || !m.chars().all(|c| c.is_ascii_uppercase()) => Err(Invalid::HttpMethod(m.into())),
        _ => Ok(()),
    }
}

/// An `http` check the loader rejects.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// Not a header name at all.
    #[error("field `header`: {0:?} is not a valid header name")]
    HeaderName(String),
    /// A header the mock does not record.
    #[error(
        "field `header`: {0:?} is not recorded, so it cannot be checked (recorded: {recorded})",
        recorded = format!("{}, mcp-param-*", RECORDED_REQUEST_HEADERS.join(", "))
    )]
    NotRecorded(String),
    /// `value` or `every` without `header`.
    #[error("fields `value` / `every` need `header`")]
    NeedsHeader,
    /// Both `every` and `count`.
    #[error("fields `every` and `count`: give one, not both")]
    EveryAndCount,
    /// `optional` without `every`.
    #[error("field `optional` qualifies `every: true` (none sent passes): add `every: true` or drop it")]
    OptionalWithoutEvery,
    /// `connection: 0`.
    #[error("field `connection`: connections are numbered from 1")]
    ConnectionZero,
    /// A lowercase or empty HTTP method.
    #[error("field `http_method`: {0:?} must be an uppercase HTTP method such as POST, GET, DELETE")]
    HttpMethod(String),
}

/// How the client's HTTP requests differed from the check.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// `every`: no request matched the filters.
    #[error("the client sent no {what}")]
    NoneSent {
        /// The filters in words.
        what: String,
    },
    /// `every`: some matching requests lacked the header (or value).
    #[error("{lacking} of {matching} {what} lacked {header}: e.g. {example}")]
    Lacked {
        /// How many lacked it.
        lacking: usize,
        /// How many matched the filters.
        matching: usize,
        /// The filters in words.
        what: String,
        /// The header, with the value expected (`Accept listing text/event-stream`).
        header: String,
        /// The first request that lacked it.
        example: String,
    },
    /// Not the expected number of requests carrying the header.
    #[error("the client sent {carrying} {what}{carries}, expected {want}")]
    Count {
        /// How many carried it.
        carrying: usize,
        /// The filters in words.
        what: String,
        /// ` with <header>[: <value>]`.
        carries: String,
        /// How many were expected.
        want: usize,
    },
    /// No request carried the header.
    #[error("the client sent no {what}{carries}{example}")]
    NoneCarrying {
        /// The filters in words.
        what: String,
        /// ` with <header>[: <value>]`.
        carries: String,
        /// ` (e.g. <the first request that lacked it>)`, when one matched the filters.
        example: String,
    },
}
