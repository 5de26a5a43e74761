//! `expire_tokens` (Streamable HTTP, after `authorization_server`): the access tokens
//! issued so far stop working, as a token that expires mid-session does; the client's next
//! request meets `401 invalid_token` and must refresh.

use super::op::{About, Fault, Op};
use super::rules::{Problem, Validation};
use super::transports::Transports;
use crate::http::run::HttpRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::ExpireTokens {
    fn about(&self) -> About {
        let explain = "expires every access token issued so far: the next request carrying one is answered 401 invalid_token";
        About::new(Transports::STREAMABLE_HTTP.standing_rule(), Fault::FromNextMessage, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        if cx.has_oauth() {
            Ok(())
        } else {
            Err(Problem::Rule("op `expire_tokens` needs an earlier `authorization_server` step: there are no tokens to expire".into()))
        }
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        match run.shared.oauth() {
            Some(server) => server.expire_tokens(),
            None => run.note("expire_tokens: no authorization_server step ran before it; nothing expired"),
        }
        Box::pin(async {})
    }
}
