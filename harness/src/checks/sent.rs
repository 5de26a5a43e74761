//! `sent`: the client sent a message with this method (and params containing these
//! members, an id of this type, at least this size), at least once, exactly `count` times or
//! `at_most` times, on one connection or any. A wire check: it applies to every target.

use super::{CheckKind, Finding, Run, subset};
use crate::transcript::method_of;
use mcp_scenario::Scenario;
use mcp_scenario::checks::{IdType, SentCheck};
use mcp_scenario::wire::WireEvent;
use serde_json::Value;

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::Never { .. }) || matches!(self, Failure::Count { got, want, .. } if got < want)
    }
}

impl CheckKind for SentCheck {
    fn explain(&self) -> String {
        let times = match (self.count, self.at_most) {
            (Some(n), _) => format!("exactly {n} time(s)"),
            (None, Some(n)) => format!("at most {n} time(s)"),
            _ => "at least once".into(),
        };
        let mut s = format!("the client sent `{}` {times}", self.method);
        if let Some(p) = &self.params {
            s.push_str(&format!(", with params containing {p}"));
        }
        if let Some(c) = self.connection {
            s.push_str(&format!(", on connection {c}"));
        }
        s
    }

    type Invalid = Invalid;
    type Failure = Failure;

    /// An upper bound (`at_most`, `count: 0`) holds by an absence.
    fn holds_by_absence(&self, _run: &Run<'_>) -> bool {
        self.at_most.is_some() || self.count == Some(0)
    }

    fn validate(&self, _scenario: &Scenario) -> Result<(), Invalid> {
        if self.count.is_some() && self.at_most.is_some() { Err(Invalid::CountAndAtMost) } else { Ok(()) }
    }

    fn judges(&self, _scenario: &Scenario) -> Vec<String> {
        vec![self.method.clone()]
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let connections: Vec<_> =
            run.transcript.connections().iter().filter(|c| self.connection.is_none_or(|n| n == c.number())).collect();
        // When each matching message reached the mock (µs), for `at_most`'s message. A request
        // its revision calls malformed (a 2026-07-28 one without its `_meta`) was not sent as
        // that method: the always-on rule fails it, and it satisfies no check here.
        let times: Vec<u64> = connections
            .iter()
            .flat_map(|c| {
                let malformed: Vec<&Value> = super::always::unmarked(run, c).into_iter().map(|(_, m, _)| m).collect();
                c.events()
                    .iter()
                    .filter(move |e| {
                        e.client_message()
                            .is_some_and(|m| selects(self, m) && !malformed.iter().any(|b| std::ptr::eq(*b, m)))
                    })
                    .filter_map(WireEvent::t_us)
            })
            .collect();
        let matching = times.len();
        if let Some(limit) = self.at_most {
            return match super::at_most::exceeded(limit, times) {
                Some(times) => Err(Failure::TooMany { method: self.method.clone(), got: matching, limit, times }),
                None => Ok(()),
            };
        }
        match self.count {
            Some(want) if want != matching => Err(Failure::Count { method: self.method.clone(), got: matching, want }),
            None if matching == 0 => Err(Failure::Never {
                method: self.method.clone(),
                params: self.params.clone(),
                id_type: self.id_type,
                min_bytes: self.min_bytes,
            }),
            _ => Ok(()),
        }
    }
}

/// The method matches and the params contain the check's members.
fn selects(check: &SentCheck, m: &Value) -> bool {
    method_of(m) == Some(check.method.as_str())
        && check.params.as_ref().is_none_or(|p| subset(p, m.get("params").unwrap_or(&Value::Null)))
        && check.id_type.is_none_or(|t| id_has_type(m.get("id"), t))
        && check.min_bytes.is_none_or(|n| serde_json::to_string(m).map_or(0, |t| t.len()) >= n)
}

/// A `sent` check the loader rejects.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// Both `count` and `at_most`.
    #[error("fields `count` and `at_most`: give one, not both (`at_most` is the \"no more than N\" form)")]
    CountAndAtMost,
}

/// How the client's messages differed from the check.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Not the expected number of matching messages.
    #[error("client sent {method} {got} time(s), expected {want}")]
    Count {
        /// The method.
        method: String,
        /// How many matched.
        got: usize,
        /// How many were expected.
        want: usize,
    },
    /// `at_most`: more matching messages than allowed (a retry or a loop).
    #[error("client sent {method} {got} time(s), expected at most {limit} (at {times})")]
    TooMany {
        /// The method.
        method: String,
        /// How many matched.
        got: usize,
        /// The most allowed.
        limit: usize,
        /// When they came, relative to the first.
        times: String,
    },
    /// No matching message.
    #[error("client never sent {method}{}{}{}", with_params(.params), with_id_type(.id_type), with_min_bytes(.min_bytes))]
    Never {
        /// The method.
        method: String,
        /// The params filter, if any.
        params: Option<Value>,
        /// The id type filter, if any.
        id_type: Option<IdType>,
        /// The size filter, if any.
        min_bytes: Option<usize>,
    },
}

fn id_has_type(id: Option<&Value>, t: IdType) -> bool {
    match t {
        IdType::String => id.is_some_and(Value::is_string),
        IdType::Integer => id.is_some_and(|v| v.is_i64() || v.is_u64()),
    }
}

fn with_id_type(t: &Option<IdType>) -> String {
    match t {
        Some(IdType::String) => " with a string id".into(),
        Some(IdType::Integer) => " with an integer id".into(),
        None => String::new(),
    }
}

fn with_min_bytes(n: &Option<usize>) -> String {
    n.map(|n| format!(" of at least {n} bytes")).unwrap_or_default()
}

fn with_params(p: &Option<Value>) -> String {
    p.as_ref().map(|p| format!(" with params containing {p}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::{evaluated, testing};
    use super::*;
    use mcp_scenario::wire::Recorded;
    use serde_json::json;

    /// A stdio run whose client sent `tools/call` at each of `at_ms`, and one ping.
    fn judge(check: &str, at_ms: &[u64]) -> Result<(), String> {
        let scenario = testing::scenario("stdio", &format!("sent: {check}"));
        let message = |t_us: u64, method: &str| {
            let v = json!({"jsonrpc": "2.0", "id": t_us, "method": method});
            WireEvent::FromClient {
                t_us,
                bytes: Recorded::of(v.to_string().as_bytes()),
                json: Some(v),
                terminated: true,
            }
        };
        let mut events: Vec<WireEvent> = at_ms.iter().map(|ms| message(3_000 + ms * 1000, "tools/call")).collect();
        events.push(message(1, "ping"));
        testing::judge(&scenario, events, evaluated)
    }

    #[test]
    fn at_most_counts_only_the_matching_messages_and_names_when_they_came() {
        assert_eq!(judge("{method: tools/call, at_most: 2}", &[0, 1001]), Ok(()), "the ping is not counted");
        assert_eq!(
            judge("{method: tools/call, at_most: 1}", &[0, 1001]),
            Err("client sent tools/call 2 time(s), expected at most 1 (at +0 ms, +1001 ms)".into())
        );
        assert_eq!(judge("{method: tools/call, count: 2}", &[0, 1001]), Ok(()), "count is still exact");
    }
}
