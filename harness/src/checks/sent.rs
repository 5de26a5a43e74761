//! `sent`: the client sent a message with this method (and params containing these
//! members, an id of this type, at least this size), at least once or exactly `count` times,
//! on one connection or any. A wire
//! check: it applies to every target.

use super::{CheckKind, Run, subset};
use crate::transcript::method_of;
use mcp_scenario::checks::{IdType, SentCheck};
use serde_json::Value;
use std::convert::Infallible;

impl CheckKind for SentCheck {
    const NAME: &'static str = "sent";
    type Invalid = Infallible;
    type Failure = Failure;

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let on: Vec<&Value> = match self.connection {
            Some(n) => run.transcript.connection(n).map(|c| c.client_messages().collect()).unwrap_or_default(),
            None => run.transcript.client_messages().collect(),
        };
        let matching = on
            .iter()
            .filter(|m| method_of(m) == Some(self.method.as_str()))
            .filter(|m| self.params.as_ref().is_none_or(|p| subset(p, m.get("params").unwrap_or(&Value::Null))))
            .filter(|m| self.id_type.is_none_or(|t| id_has_type(m.get("id"), t)))
            .filter(|m| self.min_bytes.is_none_or(|n| serde_json::to_string(m).map_or(0, |t| t.len()) >= n))
            .count();
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
