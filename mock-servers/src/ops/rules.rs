//! Load-time validation of server steps: the context ops validate against ([`Validation`])
//! and what they can complain about ([`Problem`]). The loader places each problem at its
//! step's file:line:column (`server step N: <problem>`), inside [`crate::error::MockError`].

use super::transports::Transports;
use crate::http::conn::GetKind;
use mcp_scenario::TransportName;
use mcp_scenario::payload::PayloadError;
use std::collections::{BTreeMap, HashSet};

/// What is wrong with one server step, naming the field. The messages are the loader's.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// An HTTP op in a scenario that runs over stdio only.
    #[error("op `{0}` needs transport `http` or `legacy-sse`; this scenario runs over stdio only")]
    NeedsHttp(&'static str),
    /// A stdio op in a scenario that does not run over stdio.
    #[error("op `{0}` only means something over stdio; this scenario does not run over stdio")]
    NeedsStdio(&'static str),
    /// An op that applies to none of the scenario's transports (and none of the above).
    #[error("op `{0}` applies to none of the transports this scenario runs over")]
    NoTransport(&'static str),
    /// `to` names no earlier `expect`.
    #[error("field `to`: no earlier `expect` is labelled {0:?}")]
    NoSuchExpect(String),
    /// `to` names no earlier `request`.
    #[error("field `to`: no earlier `request` is labelled {0:?}")]
    NoSuchRequest(String),
    /// `stream` names no earlier stream.
    #[error("field `stream`: no earlier `open_stream` or `expect_get` names a stream {0:?}")]
    NoSuchStream(String),
    /// A label used twice.
    #[error("field `as`: label {0:?} is used twice")]
    LabelTwice(String),
    /// Two fields of which only one may be given.
    #[error("fields `{0}` and `{1}`: give one, not both")]
    Both(&'static str, &'static str),
    /// A status outside 100–599.
    #[error("field `status`: {0} is not an HTTP status (100–599)")]
    Status(u16),
    /// A header name HTTP does not allow.
    #[error("field `headers`: {0:?} is not a valid header name")]
    HeaderName(String),
    /// A header value HTTP does not allow.
    #[error("field `headers`: the value of {0:?} is not a valid header value")]
    HeaderValue(String),
    /// The payload fields are wrong.
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// One field's value breaks an op's own rule.
    #[error("field `{field}`: {why}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// An op's own rule about the step as a whole, in its words.
    #[error("{0}")]
    Rule(String),
}

impl Problem {
    /// A problem with one field's value.
    pub fn field(field: &'static str, why: impl Into<String>) -> Self {
        Problem::Field { field, why: why.into() }
    }
}

/// What validating a step may consult and record: the scenario's transports, and the
/// labels and streams the steps before it defined.
pub struct Validation<'a> {
    transports: &'a [TransportName],
    expects: HashSet<String>,
    requests: HashSet<String>,
    streams: HashSet<String>,
    /// The `expect_get` steps earlier on this connection: the GETs each takes, and whether
    /// it is optional.
    gets: Vec<(GetKind, bool)>,
    /// An earlier `expect` on this connection waits for a request: `{id}` has a value.
    answering: bool,
    /// An earlier `authorization_server` installs the mock's authorization server.
    oauth: bool,
    /// An earlier `stop_reading` on this connection: the mock reads stdin no more.
    stopped_reading: bool,
}

impl<'a> Validation<'a> {
    /// The context before the first step of a scenario running over `transports`.
    pub fn new(transports: &'a [TransportName]) -> Self {
        Validation {
            transports,
            expects: HashSet::new(),
            requests: HashSet::new(),
            streams: ["get", "post"].iter().map(|l| l.to_string()).collect(),
            gets: Vec::new(),
            answering: false,
            oauth: false,
            stopped_reading: false,
        }
    }

    /// Records an `authorization_server` step: the mock serves OAuth from here on.
    pub fn serves_oauth(&mut self) {
        self.oauth = true;
    }

    /// Whether an earlier step installs the authorization server.
    pub fn has_oauth(&self) -> bool {
        self.oauth
    }

    /// Whether the scenario runs over `transport`.
    pub fn runs_over(&self, transport: TransportName) -> bool {
        self.transports.contains(&transport)
    }

    /// The generic rule: the scenario must run over at least one transport the op
    /// (`name`) applies to.
    pub fn applies(&self, name: &'static str, op: Transports) -> Result<(), Problem> {
        let http = self.transports.iter().any(|t| *t != TransportName::Stdio);
        if !op.stdio && !http {
            return Err(Problem::NeedsHttp(name));
        }
        if !op.http && !op.legacy_sse && !self.runs_over(TransportName::Stdio) {
            return Err(Problem::NeedsStdio(name));
        }
        if !self.transports.iter().any(|t| op.contains(*t)) {
            return Err(Problem::NoTransport(name));
        }
        Ok(())
    }

    /// Records an `expect` label.
    pub fn expects(&mut self, label: Option<&str>) {
        if let Some(l) = label {
            self.expects.insert(l.to_string());
        }
    }

    /// Records an `expect` of `method`: a method outside `notifications/` is a request,
    /// which later payloads can answer with `{id}`.
    pub fn expects_method(&mut self, method: &str) {
        if !method.starts_with("notifications/") {
            self.answering = true;
        }
    }

    /// A `new_connection`: the steps after it run on the next connection, where no request
    /// has been expected yet and no `expect_get` came.
    pub fn new_connection(&mut self) {
        self.answering = false;
        self.gets.clear();
        self.stopped_reading = false;
    }

    /// Records a `stop_reading` step.
    pub fn stops_reading(&mut self) {
        self.stopped_reading = true;
    }

    /// Whether an earlier `stop_reading` on this connection stopped the mock reading stdin.
    pub fn stopped_reading(&self) -> bool {
        self.stopped_reading
    }

    /// Whether an earlier `expect` on this connection waits for a request.
    pub fn answering(&self) -> bool {
        self.answering
    }

    /// `field` may use the placeholders ([`crate::placeholder`]) only when a request is being
    /// answered.
    pub fn placeholders(&self, field: &'static str, used: bool) -> Result<(), Problem> {
        if used && !self.answering {
            return Err(Problem::field(
                field,
                "`{id}` and `{progressToken}` stand for the request being answered, but no earlier `expect` on this connection waits for a request; add that `expect` first, or write the value out",
            ));
        }
        Ok(())
    }

    /// Checks a `to` field that names an earlier `expect`.
    pub fn expected(&self, to: Option<&str>) -> Result<(), Problem> {
        match to {
            Some(l) if !self.expects.contains(l) => Err(Problem::NoSuchExpect(l.to_string())),
            _ => Ok(()),
        }
    }

    /// The rules of a step that answers an expected request with an HTTP status and
    /// headers: `to` names an earlier `expect`, and HTTP allows the status and headers.
    pub fn answer(&self, to: Option<&str>, status: u16, headers: &BTreeMap<String, String>) -> Result<(), Problem> {
        self.expected(to)?;
        response(status, headers)
    }

    /// Records a server-to-client request's label, which must be new.
    pub fn requests(&mut self, label: &str) -> Result<(), Problem> {
        if self.requests.insert(label.to_string()) { Ok(()) } else { Err(Problem::LabelTwice(label.to_string())) }
    }

    /// Checks a `to` field that names an earlier `request`.
    pub fn requested(&self, to: &str) -> Result<(), Problem> {
        if self.requests.contains(to) { Ok(()) } else { Err(Problem::NoSuchRequest(to.to_string())) }
    }

    /// Records an `expect_get` taking GETs of `kind`.
    pub fn expects_get(&mut self, kind: GetKind, optional: bool) {
        self.gets.push((kind, optional));
    }

    /// The `expect_get` steps earlier on this connection: the GETs each takes, and whether
    /// it is optional.
    pub fn earlier_gets(&self) -> &[(GetKind, bool)] {
        &self.gets
    }

    /// Records a stream name.
    pub fn opens_stream(&mut self, name: Option<&str>) {
        if let Some(l) = name {
            self.streams.insert(l.to_string());
        }
    }

    /// Checks a `stream` field: an earlier stream name or `expect` label.
    pub fn stream(&self, name: Option<&str>) -> Result<(), Problem> {
        match name {
            Some(l) if !self.streams.contains(l) && !self.expects.contains(l) => {
                Err(Problem::NoSuchStream(l.to_string()))
            }
            _ => Ok(()),
        }
    }
}

/// At most one of two fields.
pub fn one_of<A, B>(a: (&'static str, &Option<A>), b: (&'static str, &Option<B>)) -> Result<(), Problem> {
    if a.1.is_some() && b.1.is_some() { Err(Problem::Both(a.0, b.0)) } else { Ok(()) }
}

/// A standing rule's `http_method` filter names a method the mock serves.
pub fn http_method_filter(method: Option<&str>) -> Result<(), Problem> {
    match method {
        Some(m) if !["GET", "POST", "DELETE"].contains(&m.to_ascii_uppercase().as_str()) => {
            Err(Problem::field("http_method", format!("{m:?}: write GET, POST or DELETE")))
        }
        _ => Ok(()),
    }
}

/// An HTTP status (100–599).
pub fn status(status: u16) -> Result<(), Problem> {
    if (100..600).contains(&status) { Ok(()) } else { Err(Problem::Status(status)) }
}

/// An HTTP answer's status and headers.
pub fn response(status_code: u16, header_list: &BTreeMap<String, String>) -> Result<(), Problem> {
    status(status_code)?;
    headers(header_list)
}

/// Header names and values HTTP allows.
pub fn headers(headers: &BTreeMap<String, String>) -> Result<(), Problem> {
    for (name, value) in headers {
        http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| Problem::HeaderName(name.clone()))?;
        http::HeaderValue::from_str(value).map_err(|_| Problem::HeaderValue(name.clone()))?;
    }
    Ok(())
}
