//! `param`: the client's requests to a path carried a parameter — in the query, the form
//! body, or a JSON body's top-level member — with a value, so many times or every time. A
//! wire check for the authorization flow (`/authorize`, `/token`, `/register`), whose
//! requests carry their meaning in parameters, not headers. A secret parameter's value
//! (the one secret policy's names: `code`, `code_verifier`, …) is never printed.

use super::{CheckKind, Run};
use mcp_mock::secrets::is_secret_param;
use mcp_scenario::Scenario;
use mcp_scenario::checks::ParamCheck;
use mcp_scenario::wire::WireEvent;
use serde_json::Value;

impl CheckKind for ParamCheck {
    fn explain(&self) -> String {
        let which = format!(
            "{}{} requests",
            self.http_method.as_deref().map(|m| format!("{m} ")).unwrap_or_default(),
            self.path
        );
        let carried = match &self.value {
            Some(v) => format!("`{}={v}`", self.name),
            None => format!("`{}`", self.name),
        };
        match (self.count, self.every) {
            (Some(0), _) => format!("none of the client's {which} carried {carried}"),
            (Some(n), _) => format!("exactly {n} of the client's {which} carried {carried}"),
            (_, true) => format!("every one of the client's {which} (at least one) carried {carried}"),
            _ => format!("at least one of the client's {which} carried {carried}"),
        }
    }

    const NAME: &'static str = "param";
    type Invalid = Invalid;
    type Failure = Failure;

    fn short(failure: &Failure) -> bool {
        matches!(failure, Failure::NoneSent { .. } | Failure::NoneCarrying { .. })
            || matches!(failure, Failure::Count { carrying, want, .. } if carrying < want)
    }

    fn holds_by_absence(&self, _run: &Run<'_>) -> bool {
        self.count == Some(0)
    }

    fn validate(&self, _scenario: &Scenario) -> Result<(), Invalid> {
        if !self.path.starts_with('/') || self.path.contains('?') {
            return Err(Invalid::Path(self.path.clone()));
        }
        if self.every && self.count.is_some() {
            return Err(Invalid::EveryAndCount);
        }
        if self.name.is_empty() {
            return Err(Invalid::NoName);
        }
        Ok(())
    }

    fn evaluate(&self, run: &Run<'_>) -> Result<(), Failure> {
        let what = format!("{}{}", self.http_method.as_deref().map(|m| format!("{m} ")).unwrap_or_default(), self.path);
        let carries = match &self.value {
            Some(v) if !is_secret_param(&self.name) => format!("{}={v}", self.name),
            _ => self.name.clone(),
        };
        let (mut matching, mut carrying) = (0usize, 0usize);
        let mut example = None;
        for connection in run.transcript.connections() {
            let origin = connection.recorded().iter().find_map(|e| match e {
                WireEvent::Listening { port } => Some(format!("http://127.0.0.1:{port}")),
                _ => None,
            });
            let want = self.value.as_ref().map(|v| v.replace("{origin}", origin.as_deref().unwrap_or("{origin}")));
            for e in connection.events() {
                let WireEvent::HttpRequest { http_method, path, body, json, .. } = e else { continue };
                let (bare, query) = path.split_once('?').unwrap_or((path, ""));
                if bare != self.path || self.http_method.as_ref().is_some_and(|m| !m.eq_ignore_ascii_case(http_method))
                {
                    continue;
                }
                matching += 1;
                let values = values_of(&self.name, query, body.as_ref().and_then(|b| b.text.as_deref()), json.as_ref());
                if want.as_ref().map_or(!values.is_empty(), |w| values.iter().any(|v| same_value(&self.name, v, w))) {
                    carrying += 1;
                } else if example.is_none() {
                    example = Some(match values.first() {
                        None => format!("one had no {}", self.name),
                        Some(_) if is_secret_param(&self.name) => format!("one had another {}", self.name),
                        Some(v) => format!("one had {}={v}", self.name),
                    });
                }
            }
        }
        let example = example.map(|e| format!(" ({e})")).unwrap_or_default();
        match (self.count, self.every) {
            (_, true) if matching == 0 => Err(Failure::NoneSent { what }),
            (_, true) if carrying < matching => {
                Err(Failure::Lacked { lacking: matching - carrying, matching, what, carries, example })
            }
            (Some(want), _) if want != carrying => Err(Failure::Count { carrying, want, what, carries }),
            (None, false) if carrying == 0 && matching == 0 => Err(Failure::NoneSent { what }),
            (None, false) if carrying == 0 => Err(Failure::NoneCarrying { what, carries, example }),
            _ => Ok(()),
        }
    }
}

/// Whether a parameter's value is the one a check wants. A `scope` is a set: "their order
/// does not matter" (RFC 6749 §3.3), so a client that lists the scopes in another order than
/// the scenario (or the bundled client) sends the same scope; any other value is compared
/// as a string.
fn same_value(name: &str, value: &str, want: &str) -> bool {
    if name != "scope" {
        return value == want;
    }
    let words =
        |s: &str| s.split(' ').filter(|w| !w.is_empty()).map(str::to_string).collect::<std::collections::BTreeSet<_>>();
    words(value) == words(want)
}

/// The values of parameter `name` in a request: its query, its form body (a body that is
/// not JSON), or its JSON body's top-level member (a string, or an array's strings).
fn values_of(name: &str, query: &str, body: Option<&str>, json: Option<&Value>) -> Vec<String> {
    let mut values: Vec<String> =
        url::form_urlencoded::parse(query.as_bytes()).filter(|(k, _)| k == name).map(|(_, v)| v.into_owned()).collect();
    match json {
        Some(Value::Object(map)) => match map.get(name) {
            Some(Value::String(s)) => values.push(s.clone()),
            Some(Value::Array(items)) => values.extend(items.iter().filter_map(Value::as_str).map(str::to_string)),
            Some(other) if !other.is_null() => values.push(other.to_string()),
            _ => {}
        },
        Some(_) => {}
        None => {
            if let Some(text) = body {
                values.extend(
                    url::form_urlencoded::parse(text.as_bytes())
                        .filter(|(k, _)| k == name)
                        .map(|(_, v)| v.into_owned()),
                );
            }
        }
    }
    values
}

/// Why a `param` check is refused at load time.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// Not a path.
    #[error("field `path`: {0:?} is not a path without a query (e.g. /token)")]
    Path(String),
    /// Both.
    #[error("fields `every` and `count`: give one, not both")]
    EveryAndCount,
    /// No name.
    #[error("field `name`: give the parameter's name")]
    NoName,
}

/// Why a `param` check failed.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// No request to the path at all.
    #[error("the client sent no {what} request")]
    NoneSent {
        /// The requests.
        what: String,
    },
    /// Some lacked it.
    #[error("{lacking} of the client's {matching} {what} request(s) lacked {carries}{example}")]
    Lacked {
        /// How many lacked it.
        lacking: usize,
        /// How many there were.
        matching: usize,
        /// The requests.
        what: String,
        /// The parameter (and value).
        carries: String,
        /// One that lacked it.
        example: String,
    },
    /// Not as many as asked.
    #[error("{carrying} of the client's {what} request(s) carried {carries}, expected {want}")]
    Count {
        /// How many did.
        carrying: usize,
        /// How many should have.
        want: usize,
        /// The requests.
        what: String,
        /// The parameter (and value).
        carries: String,
    },
    /// None carried it.
    #[error("none of the client's {what} requests carried {carries}{example}")]
    NoneCarrying {
        /// The requests.
        what: String,
        /// The parameter (and value).
        carries: String,
        /// One that lacked it.
        example: String,
    },
}

#[cfg(test)]
mod tests {
    use super::{same_value, values_of};
    use serde_json::json;

    #[test]
    fn a_scope_is_compared_as_a_set_and_other_values_as_strings() {
        assert!(same_value("scope", "mcp:tools mcp:resources", "mcp:resources mcp:tools"));
        assert!(!same_value("scope", "mcp:tools", "mcp:resources mcp:tools"));
        assert!(!same_value("scope", "mcp:tools mcp:resources extra", "mcp:resources mcp:tools"));
        assert!(!same_value("state", "a b", "b a"));
        assert!(same_value("state", "a b", "a b"));
    }

    #[test]
    fn parameters_come_from_the_query_a_form_or_a_json_body() {
        assert_eq!(values_of("a", "a=1&b=2&a=3", None, None), ["1", "3"]);
        assert_eq!(
            values_of("resource", "", Some("grant_type=x&resource=http%3A%2F%2Fh%2Fmcp"), None),
            ["http://h/mcp"]
        );
        let body = json!({"application_type": "native", "grant_types": ["authorization_code", "refresh_token"]});
        assert_eq!(values_of("grant_types", "", None, Some(&body)), ["authorization_code", "refresh_token"]);
        assert_eq!(values_of("application_type", "", None, Some(&body)), ["native"]);
        assert!(values_of("x", "", Some("{not a form"), Some(&body)).is_empty());
    }
}
