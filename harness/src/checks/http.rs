//! `http`: the client's HTTP requests that match (by HTTP method, JSON-RPC method, path,
//! connection) carried a header, with a value, a number of times — or every time. A wire
//! check for the HTTP transports; only recorded request headers can be checked.

use super::{CheckKind, Finding, Run, at_most, header_value};
use crate::transcript::method_of;
use mcp_scenario::Scenario;
use mcp_scenario::checks::{HttpCheck, HttpFilter};
use mcp_scenario::wire::{RECORDED_REQUEST_HEADERS, WireEvent, is_recorded_header};
use serde_json::Value;

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::NoneSent { .. } | Failure::NoneCarrying { .. })
            || matches!(self, Failure::Count { carrying, want, .. } if carrying < want)
    }
}

impl CheckKind for HttpCheck {
    fn explain(&self) -> String {
        let filter =
            HttpFilter { http_method: self.http_method.clone(), method: self.method.clone(), path: self.path.clone() };
        let mut which = filter_parts(&filter);
        if let Some(c) = self.connection {
            which.push(format!("on connection {c}"));
        }
        if let Some(m) = &self.after {
            which.push(format!("sent after {m}"));
        }
        let which =
            if which.is_empty() { "HTTP requests".to_string() } else { format!("{} requests", which.join(" ")) };
        let header = match (&self.header, &self.value) {
            (Some(h), Some(v)) => format!(" carried `{h}: {v}`"),
            (Some(h), None) => format!(" carried `{h}`"),
            _ => String::new(),
        };
        let how_many = match (self.count, self.at_most, self.every) {
            (Some(n), _, _) => format!("exactly {n} of the client's {which}"),
            (_, Some(n), _) => format!("at most {n} of the client's {which}"),
            (_, _, true) if self.optional => format!("every one of the client's {which} (none at all is fine)"),
            (_, _, true) => format!("every one of the client's {which} (at least one)"),
            _ => format!("at least one of the client's {which}"),
        };
        format!("{how_many}{}", if header.is_empty() { " reached the mock".into() } else { header })
    }

    type Invalid = Invalid;
    type Failure = Failure;

    /// An upper bound (`at_most`, `count: 0`), or `every` over optional requests (none sent
    /// holds it), holds by an absence.
    fn holds_by_absence(&self, _run: &Run<'_>) -> bool {
        self.at_most.is_some() || self.count == Some(0) || (self.every && self.optional)
    }

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
        if self.at_most.is_some() && (self.every || self.count.is_some()) {
            return Err(Invalid::AtMostWith(if self.every { "every" } else { "count" }));
        }
        if self.connection == Some(0) {
            return Err(Invalid::ConnectionZero);
        }
        check_http_method(self.http_method.as_deref())
    }

    fn judges(&self, _scenario: &Scenario) -> Vec<String> {
        self.method.clone().or_else(|| self.http_method.clone()).into_iter().collect()
    }

    /// A rule about what follows a message the client never sent, or about a session the
    /// mock never issued, has nothing to apply to.
    fn unjudged(&self, run: &Run<'_>) -> Option<String> {
        let in_scope =
            || run.transcript.connections().iter().filter(|c| self.connection.is_none_or(|n| n == c.number()));
        if let Some(after) = &self.after
            && !in_scope().any(|c| c.events().iter().any(|e| sent_method(e, after)))
        {
            return Some(format!(
                "not judged: the client never sent {after}, and this rule is about the requests after it"
            ));
        }
        let wants_session = self.value.as_ref().is_some_and(|v| v.contains("{session}"));
        (wants_session && in_scope().all(|c| c.session_id().is_empty()))
            .then(|| "not judged: the mock issued no session id, and this rule is about the one it issued".to_string())
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let header = self.header.as_ref().map(|n| n.to_ascii_lowercase());
        let filter = filter_of(self);
        let (mut matching, mut carrying) = (0usize, 0usize);
        // When each carrying request reached the mock (µs), for `at_most`'s message.
        let mut carried_at: Vec<u64> = Vec::new();
        let mut lacking: Option<String> = None;
        for connection in run.transcript.connections() {
            if self.connection.is_some_and(|c| c != connection.number()) {
                continue;
            }
            // The session id the mock issued on this connection, for `{session}`.
            let session = connection.session_id();
            let mut after_seen = self.after.is_none();
            for e in connection.events() {
                let (Some(http_method), Some(path), Some(t_us)) = (e.http_method(), e.path(), e.t_us()) else {
                    continue;
                };
                if !after_seen {
                    after_seen = self.after.as_deref().is_some_and(|m| sent_method(e, m));
                    continue;
                }
                if !selects(self, &filter, e) {
                    continue;
                }
                matching += 1;
                let header_of = |name: &str| e.headers().and_then(|h| h.get(name));
                let carried = match &header {
                    None => true,
                    Some(name) => header_of(name).is_some_and(|got| {
                        self.value
                            .as_ref()
                            .is_none_or(|want| header_value::matches(name, got, &want.replace("{session}", &session)))
                    }),
                };
                if carried {
                    carrying += 1;
                    carried_at.push(t_us);
                } else if lacking.is_none() {
                    let got = header
                        .as_deref()
                        .and_then(header_of)
                        .map(|v| format!("{v:?}"))
                        .unwrap_or_else(|| "none".into());
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
        if let Some(limit) = self.at_most {
            return match at_most::exceeded(limit, carried_at) {
                Some(times) => Err(Failure::TooMany { carrying, what, carries, limit, times }),
                None => Ok(()),
            };
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

/// Whether a recorded request passes the check's filters (HTTP method, JSON-RPC method,
/// path, query).
fn selects(h: &HttpCheck, filter: &HttpFilter, request: &WireEvent) -> bool {
    let query = request.path().and_then(|p| p.split_once('?')).map_or("", |(_, q)| q);
    request_matches(filter, request) && h.query.as_ref().is_none_or(|q| q == query)
}

/// Whether `event` is a client request whose body carries `method` (one of a batch's).
fn sent_method(event: &WireEvent, method: &str) -> bool {
    let filter = HttpFilter { method: Some(method.to_string()), ..HttpFilter::default() };
    request_matches(&filter, event)
}

/// The check's request filters, in the form `http_order` shares.
fn filter_of(h: &HttpCheck) -> HttpFilter {
    HttpFilter { http_method: h.http_method.clone(), method: h.method.clone(), path: h.path.clone() }
}

/// Whether an event is a recorded request that passes a filter (HTTP method, a JSON-RPC
/// method its body carries — one of a batch's —, path without the query). Shared with
/// `http_order`.
pub(super) fn request_matches(f: &HttpFilter, event: &WireEvent) -> bool {
    let (Some(http_method), Some(path)) = (event.http_method(), event.path()) else { return false };
    let methods: Vec<&str> = match event.json() {
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
    /// `at_most` with `every` or `count`.
    #[error("fields `at_most` and `{0}`: give one, not both (`at_most` is the \"no more than N\" form)")]
    AtMostWith(&'static str),
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
    #[error("{lacking} of {matching} {what} lacked {header} (e.g. {example})")]
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
    /// `at_most`: more requests than allowed (a retry or a loop).
    #[error("the client sent {carrying} {what}{carries}, expected at most {limit} (at {times})")]
    TooMany {
        /// How many carried it.
        carrying: usize,
        /// The filters in words.
        what: String,
        /// ` with <header>[: <value>]`.
        carries: String,
        /// The most allowed.
        limit: usize,
        /// When they came, relative to the first.
        times: String,
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

/// The words for each field a filter gives: its HTTP method, `` `method` ``, `to <path>`.
pub(super) fn filter_parts(f: &HttpFilter) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(m) = &f.http_method {
        parts.push(m.clone());
    }
    if let Some(m) = &f.method {
        parts.push(format!("`{m}`"));
    }
    if let Some(p) = &f.path {
        parts.push(format!("to {p}"));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::super::{evaluated, testing};
    use super::*;
    use mcp_scenario::checks::Check;

    /// A run whose mock saw a GET at each of `at_ms`.
    fn judge(check: &str, at_ms: &[u64]) -> Result<(), String> {
        let scenario = testing::scenario("http", &format!("http: {check}"));
        let gets = at_ms
            .iter()
            .enumerate()
            .map(|(i, ms)| WireEvent::HttpRequest {
                t_us: 5_000 + ms * 1000,
                exchange: i as u64 + 1,
                http_method: "GET".into(),
                path: "/mcp".into(),
                headers: Default::default(),
                body: None,
                json: None,
            })
            .collect();
        testing::judge(&scenario, gets, evaluated)
    }

    #[test]
    fn at_most_counts_the_matching_requests_and_names_when_they_came() {
        assert_eq!(judge("{http_method: GET, at_most: 3}", &[0, 1004, 2010]), Ok(()));
        assert_eq!(
            judge("{http_method: GET, at_most: 1}", &[0, 1004, 2010]),
            Err("the client sent 3 GET request(s), expected at most 1 (at +0 ms, +1004 ms, +2010 ms)".into())
        );
        assert_eq!(
            judge("{http_method: GET, at_most: 0}", &[7]),
            Err("the client sent 1 GET request(s), expected at most 0 (at +0 ms)".into())
        );
    }

    /// A POST of `method` carrying `headers`, at exchange `n`.
    fn post(n: u64, method: &str, headers: &[(&str, &str)]) -> WireEvent {
        WireEvent::HttpRequest {
            t_us: n * 1000,
            exchange: n,
            http_method: "POST".into(),
            path: "/mcp".into(),
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: None,
            json: Some(serde_json::json!({"jsonrpc": "2.0", "id": n, "method": method})),
        }
    }

    /// `(unjudged note, evaluation)` of one check over `events`.
    fn both(check: &str, events: Vec<WireEvent>) -> (Option<String>, Result<(), String>) {
        let scenario = testing::scenario("http", &format!("http: {check}"));
        testing::judge(&scenario, events, |check, run| {
            let Check::Http(h) = check else { panic!("an http check") };
            (h.unjudged(run), h.evaluate(run).map_err(|f| f.to_string()))
        })
    }

    #[test]
    fn after_judges_only_what_followed_the_method_and_nothing_without_it() {
        let check = "{method: prompts/list, header: MCP-Protocol-Version, value: \"2025-11-25\", every: true, after: initialize}";
        let v = [("mcp-protocol-version", "2025-11-25")];
        let modern = [("mcp-protocol-version", "2026-07-28")];
        // A modern prompts/list before the fallback is not about the rule; the one after is.
        let fell_back = vec![post(1, "prompts/list", &modern), post(2, "initialize", &[]), post(3, "prompts/list", &v)];
        assert_eq!(both(check, fell_back), (None, Ok(())));
        let wrong_after = vec![post(1, "initialize", &[]), post(2, "prompts/list", &modern)];
        assert!(both(check, wrong_after).1.is_err(), "the request after initialize is judged");
        let never = vec![post(1, "prompts/list", &modern)];
        let (note, _) = both(check, never);
        assert!(note.is_some_and(|n| n.contains("never sent initialize")));
    }

    #[test]
    fn a_request_without_the_header_is_named_in_words_no_redaction_takes_for_a_credential() {
        let check = "{path: /mcp, header: Authorization, every: true, after: initialize}";
        let bearer = [("authorization", "Bearer t1")];
        let events = vec![post(1, "initialize", &[]), post(2, "tools/list", &bearer), post(3, "ping", &[])];
        let (_, judged) = both(check, events);
        let message = judged.expect_err("the ping lacked it");
        assert_eq!(message, "1 of 2 HTTP request(s) to /mcp lacked Authorization (e.g. POST /mcp had none)");
        // The secret policy leaves it whole: no `Authorization: <value>` in it to redact.
        assert_eq!(mcp_mock::transcript::Redactor::secrets_only().text(&message), message);
    }

    #[test]
    fn a_session_rule_is_not_judged_where_no_session_was_issued() {
        let check = "{method: tools/list, header: Mcp-Session-Id, value: \"{session}\", count: 1}";
        let (note, _) = both(check, vec![post(1, "tools/list", &[])]);
        assert!(note.is_some_and(|n| n.contains("no session id")));
    }
}
