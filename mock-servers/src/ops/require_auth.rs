//! `require_auth` (HTTP): from now on every request must carry `Authorization: Bearer
//! <token>`; the others are refused before the script sees them.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{self, Problem, Validation};
use crate::http::conn::AuthRule;
use crate::http::run::HttpRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::RequireAuth {
    fn about(&self) -> About {
        let explain = format!("from now on answers {} to any request without `Authorization: Bearer <token>`", self.status);
        About::new(Transports::HTTP.standing_rule(), Fault::FromNextMessage, explain)
    }

    fn validate(&self, _cx: &mut Validation<'_>) -> Result<(), Problem> {
        if self.token.trim().is_empty() || self.token.contains(char::is_whitespace) {
            return Err(Problem::field("token", "give a non-empty token without spaces"));
        }
        if !(400..500).contains(&self.status) {
            return Err(Problem::field("status", format!("{} is not a 4xx status (use 401 or 403)", self.status)));
        }
        rules::http_method_filter(self.http_method.as_deref())?;
        if let Some(v) = &self.www_authenticate {
            http::HeaderValue::from_str(v)
                .map_err(|_| Problem::field("www_authenticate", format!("{v:?} is not a valid header value")))?;
        }
        Ok(())
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        run.shared.require_auth(AuthRule {
            token: self.token.clone(),
            status: self.status,
            www_authenticate: self.www_authenticate.clone().unwrap_or_else(|| "Bearer error=\"invalid_token\"".into()),
            text: self.text.clone().unwrap_or_default(),
            http_method: self.http_method.as_ref().map(|m| m.to_ascii_uppercase()),
        });
        Box::pin(async {})
    }
}
