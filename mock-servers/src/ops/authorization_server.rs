//! `authorization_server` (Streamable HTTP): from now on the mock is also an OAuth
//! authorization server on its own origin, and its MCP endpoint a resource server that
//! wants a token it issued ([`crate::oauth`]). A standing rule; the client meets it with its
//! next request (a `401`).

use super::op::{About, Fault, Op};
use super::rules::{Problem, Validation};
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::oauth::AuthServer;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::AuthorizationServer {
    fn about(&self) -> About {
        let mut faults = Vec::new();
        if !self.resource_metadata {
            faults.push("its 401 names no resource_metadata".to_string());
        }
        if !self.missing.is_empty() {
            faults.push(format!("{} well-known location(s) answer 404", self.missing.len()));
        }
        if let Some(i) = &self.issuer {
            faults.push(format!("its metadata claims issuer {i}"));
        }
        if let Some(r) = &self.resource {
            faults.push(format!("its resource metadata names resource {r}"));
        }
        if self.code_challenge_methods.as_ref().is_some_and(|m| !m.iter().any(|m| m == "S256")) {
            faults.push("it does not advertise PKCE S256".into());
        }
        if self.registration != step::Registration::Open {
            faults.push(format!("registration is {:?}", self.registration).to_lowercase());
        }
        if let Some(f) = &self.token_fault {
            faults.push(format!(
                "its token endpoint answers {}{}",
                f.status.map_or("late".to_string(), |s| s.to_string()),
                f.delay_ms.map_or(String::new(), |d| format!(" after {d} ms"))
            ));
        }
        if !self.method_scopes.is_empty() {
            faults.push(format!("methods need scopes {:?}", self.method_scopes));
        }
        if let Some(t) = &self.redirect_to {
            faults.push(format!("/authorize redirects to {t}"));
        }
        let base = "from now on serves an OAuth authorization server beside the MCP endpoint, which answers 401 until a request carries a token it issued";
        let explain = if faults.is_empty() { base.into() } else { format!("{base}; {}", faults.join("; ")) };
        About::new(Transports::STREAMABLE_HTTP.standing_rule(), Fault::FromNextMessage, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.serves_oauth();
        if let Some(p) = &self.issuer_path
            && (!p.starts_with('/') || p.len() < 2 || p.contains(['?', '#']))
        {
            return Err(Problem::field("issuer_path", format!("{p:?} is not a path like /tenant1")));
        }
        if let Some(s) = self.token_fault.as_ref().and_then(|f| f.status)
            && !(400..600).contains(&s)
        {
            return Err(Problem::field("token_fault", format!("status {s} is not a 4xx or 5xx")));
        }
        if let Some(g) = self.token_fault.as_ref().and_then(|f| f.grant_type.as_deref())
            && !matches!(g, "authorization_code" | "refresh_token")
        {
            return Err(Problem::field("token_fault", format!("grant_type {g:?}: authorization_code or refresh_token")));
        }
        Ok(())
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        run.shared.serve_oauth(AuthServer::new(self.clone(), &run.shared.origin()));
        Box::pin(async {})
    }
}
