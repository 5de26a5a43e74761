//! `param`: the client's requests to a path carried a parameter — in the query, the form
//! body, or a JSON body's top-level member — with a value, so many times or every time. A
//! wire check for the authorization flow (`/authorize`, `/token`, `/register`), whose
//! requests carry their meaning in parameters, not headers. A secret parameter's value
//! (the one secret policy's names: `code`, `code_verifier`, …) is never printed.

use super::{CheckKind, Finding, Run};
use mcp_mock::secrets::is_secret_param;
use mcp_scenario::Scenario;
use mcp_scenario::checks::ParamCheck;
use mcp_scenario::wire::WireEvent;
use serde_json::Value;

impl Finding for Failure {
    fn short(&self) -> bool {
        matches!(self, Failure::NoneSent { .. } | Failure::NoneCarrying { .. })
            || matches!(self, Failure::Count { carrying, want, .. } if carrying < want)
    }
}

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
        let which = match self.answered {
            Some(status) => format!("{which} answered {status}"),
            None => which,
        };
        let only = if self.only_if_sent {
            format!(" (judged only when the client sent a {} request carrying {carried})", self.path)
        } else {
            String::new()
        };
        let rule = match (self.count, self.every) {
            (Some(0), _) => format!("none of the client's {which} carried {carried}"),
            (Some(n), _) => format!("exactly {n} of the client's {which} carried {carried}"),
            (_, true) => format!("every one of the client's {which} (at least one) carried {carried}"),
            _ => format!("at least one of the client's {which} carried {carried}"),
        };
        rule + &only
    }

    type Invalid = Invalid;
    type Failure = Failure;

    /// `count: 0` holds by an absence, unless `only_if_sent`: the client then sent such
    /// requests, and the check judges how they fared.
    fn holds_by_absence(&self, _run: &Run<'_>) -> bool {
        self.count == Some(0) && !self.only_if_sent
    }

    fn unjudged(&self, run: &Run<'_>) -> Option<String> {
        if !self.only_if_sent || requests(self, run, false).iter().any(|r| r.carried) {
            return None;
        }
        let carried = match &self.value {
            Some(v) if !is_secret_param(&self.name) => format!("{}={v}", self.name),
            _ => self.name.clone(),
        };
        Some(format!(
            "not judged: the client sent no {} request carrying {carried}, and this rule is about those",
            self.path
        ))
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
        let what = format!(
            "{}{}{}",
            self.http_method.as_deref().map(|m| format!("{m} ")).unwrap_or_default(),
            self.path,
            self.answered.map(|s| format!(" (answered {s})")).unwrap_or_default()
        );
        let carries = match &self.value {
            Some(v) if !is_secret_param(&self.name) => format!("{}={v}", self.name),
            _ => self.name.clone(),
        };
        let requests = requests(self, run, true);
        let matching = requests.len();
        let carrying = requests.iter().filter(|r| r.carried).count();
        let example = requests.iter().find(|r| !r.carried).map(|r| match &r.first_value {
            None => format!("one had no {}", self.name),
            Some(_) if is_secret_param(&self.name) => format!("one had another {}", self.name),
            Some(v) => format!("one had {}={v}", self.name),
        });
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

/// One request to the check's path: whether it carried the parameter (with the value), and
/// the first value it had.
struct Request {
    carried: bool,
    first_value: Option<String>,
}

/// The client's requests to the check's path (and method), in order; with `answered`, only
/// those the mock answered with that status when `by_answer` is set.
fn requests(check: &ParamCheck, run: &Run<'_>, by_answer: bool) -> Vec<Request> {
    let mut out = Vec::new();
    for connection in run.transcript.connections() {
        let origin = connection
            .recorded()
            .iter()
            .find_map(WireEvent::listening_port)
            .map(|port| format!("http://127.0.0.1:{port}"));
        let want = check.value.as_ref().map(|v| v.replace("{origin}", origin.as_deref().unwrap_or("{origin}")));
        let answers: std::collections::HashMap<u64, u16> = match check.answered.filter(|_| by_answer) {
            Some(_) => connection.events().iter().filter_map(|e| Some((e.exchange()?, e.status()?))).collect(),
            None => Default::default(),
        };
        for e in connection.events() {
            let (Some(exchange), Some(http_method), Some(path)) = (e.exchange(), e.http_method(), e.path()) else {
                continue;
            };
            let (bare, query) = path.split_once('?').unwrap_or((path, ""));
            if bare != check.path || check.http_method.as_ref().is_some_and(|m| !m.eq_ignore_ascii_case(http_method)) {
                continue;
            }
            if by_answer && check.answered.is_some_and(|want| answers.get(&exchange) != Some(&want)) {
                continue;
            }
            let values = values_of(&check.name, query, e.bytes().and_then(|b| b.text.as_deref()), e.json());
            let carried =
                want.as_ref().map_or(!values.is_empty(), |w| values.iter().any(|v| same_value(&check.name, v, w)));
            out.push(Request { carried, first_value: values.into_iter().next() });
        }
    }
    out
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
    use crate::checks::CheckKind;
    use crate::checks::testing::{judge, scenario};
    use mcp_scenario::checks::Check;
    use mcp_scenario::wire::WireEvent;
    use serde_json::json;

    /// A form POST to /token (exchange `n`) and the mock's answer with `status`.
    fn token(n: u64, grant: &str, status: u16) -> Vec<WireEvent> {
        let form = format!("grant_type={grant}&refresh_token=r{n}");
        let request = json!({"event": "http_request", "t_us": n, "exchange": n, "http_method": "POST", "path": "/token",
            "headers": {}, "body": {"text": form, "len": form.len()}});
        let response = json!({"event": "http_response", "t_us": n + 1, "exchange": n, "status": status, "headers": {}, "why": "t"});
        [request, response].into_iter().map(|v| serde_json::from_value(v).expect("a wire event")).collect()
    }

    /// `(unjudged reason, evaluation held, holds by absence)` of the scenario's one check.
    fn judged(check: &str, events: Vec<WireEvent>) -> (Option<String>, bool, bool) {
        judge(&scenario("http", check), events, |c, run| {
            let Check::Param(p) = c else { panic!("a param check") };
            (p.unjudged(run), p.evaluate(run).is_ok(), p.holds_by_absence(run))
        })
    }

    #[test]
    fn answered_selects_by_the_mocks_status_and_only_if_sent_skips_a_client_that_never_sent_it() {
        let rule = "param: {path: /token, name: grant_type, value: refresh_token, answered: 400, count: 0, only_if_sent: true}";
        let refused: Vec<WireEvent> = [token(1, "refresh_token", 200), token(2, "refresh_token", 400)].concat();
        let (why, held, absence) = judged(rule, refused);
        assert_eq!((why, held, absence), (None, false, false), "a refused refresh fails it");
        let accepted: Vec<WireEvent> = [token(1, "refresh_token", 200), token(2, "refresh_token", 200)].concat();
        assert_eq!(judged(rule, accepted), (None, true, false), "refreshes all accepted: held, on what it did");
        let (why, ..) = judged(rule, token(1, "authorization_code", 400));
        assert!(why.is_some_and(|w| w.contains("no /token request carrying grant_type=refresh_token")));
        let plain = "param: {path: /token, name: grant_type, value: refresh_token, count: 0}";
        assert_eq!(judged(plain, vec![]), (None, true, true), "without only_if_sent, count 0 is an absence");
    }

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
