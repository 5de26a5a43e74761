//! The MCP endpoint as an OAuth resource server (RFC 6750 §3, RFC 9728 §5.1): a request
//! without a bearer token is answered `401` with `WWW-Authenticate: Bearer
//! resource_metadata="…"` (and `scope` when the scenario gives one); a token this server
//! did not issue, one that expired (`expire_tokens`) or one bound to another resource is
//! `401 error="invalid_token"` ("Invalid or expired tokens MUST receive a HTTP 401", Token
//! Handling); a token without the scopes its JSON-RPC method needs is `403
//! error="insufficient_scope"` with those scopes (Scope Challenge Handling).

use super::{Answer, AuthServer};
use crate::sync::lock;

impl AuthServer {
    /// The refusal for a request to the MCP endpoint carrying `authorization`, whose
    /// JSON-RPC method is `method`; `None` lets it through.
    pub fn guard(&self, authorization: Option<&str>, method: Option<&str>) -> Option<Answer> {
        let token = authorization.and_then(|v| {
            let (scheme, rest) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim().to_string())
        });
        let Some(token) = token else {
            let scope = self.config.challenge_scope.as_deref();
            return Some(self.challenge(401, None, scope, "auth required (no token)"));
        };
        let grant = lock(&self.issued).access.get(&token).cloned();
        let resource = self.resource();
        let why = match &grant {
            None => Some("auth required (unknown token)"),
            Some(g) if !g.live => Some("auth required (token expired)"),
            Some(g) if g.resource.as_deref() != Some(resource.as_str()) => {
                Some("auth required (token for another resource)")
            }
            Some(_) => None,
        };
        if let Some(why) = why {
            return Some(self.challenge(401, Some("invalid_token"), None, why));
        }
        let needed = method.and_then(|m| self.config.method_scopes.get(m))?;
        let granted = grant.map(|g| g.scopes).unwrap_or_default();
        let lacking = super::scopes(needed).iter().any(|s| !granted.contains(s));
        lacking.then(|| {
            self.challenge(403, Some("insufficient_scope"), Some(needed), "auth required (insufficient scope)")
        })
    }

    /// A `Bearer` challenge.
    fn challenge(&self, status: u16, error: Option<&str>, scope: Option<&str>, why: &str) -> Answer {
        let mut params = Vec::new();
        if let Some(e) = error {
            params.push(format!("error=\"{e}\""));
        }
        if let Some(s) = scope {
            params.push(format!("scope=\"{s}\""));
        }
        if self.config.resource_metadata {
            params.push(format!("resource_metadata=\"{}\"", self.resource_metadata_url()));
        }
        let value = if params.is_empty() { "Bearer".to_string() } else { format!("Bearer {}", params.join(", ")) };
        Answer::empty(status, vec![("www-authenticate".into(), value)], why)
    }
}
