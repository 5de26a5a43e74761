//! `/token` (OAuth 2.1 §3.2, §4.1.3, §4.3): the `authorization_code` grant, which checks
//! the one-time code, its client and redirect URI and the PKCE verifier (RFC 7636 §4.6:
//! `BASE64URL(SHA256(code_verifier)) == code_challenge`, computed here with this crate's
//! own SHA-256), and the `refresh_token` grant, which rotates the refresh token and refuses
//! a rotated-out one (`invalid_grant`) — what OAuth 2.1 §4.3.1 asks of a server for public
//! clients. The token is bound to the `resource` of the token request (else the
//! authorization request's): the guard accepts it only for the MCP endpoint (RFC 8707).
//! A scripted `token_fault` answers a status instead, or late.

use super::{Answer, AuthServer, Grant, WHY, params};
use crate::sync::lock;
use base64::Engine as _;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// The access token lifetime the answers state.
const EXPIRES_IN: u64 = 3600;

impl AuthServer {
    pub(super) fn token(&self, body: &[u8]) -> Answer {
        let p = params(body);
        let grant_type = p.get("grant_type").map(String::as_str).unwrap_or_default();
        let fault = self.config.token_fault.as_ref().filter(|f| {
            f.grant_type.as_deref().is_none_or(|g| g == grant_type) && {
                let mut issued = lock(&self.issued);
                issued.token_requests += 1;
                f.times.is_none_or(|n| issued.token_requests <= n)
            }
        });
        let mut answer = match fault.and_then(|f| f.status) {
            Some(status) if status < 500 => {
                Answer::error(status, "invalid_grant", "refused (scenario)", format!("{WHY}: token refused (scenario)"))
            }
            Some(status) => {
                Answer::error(status, "server_error", "failed (scenario)", format!("{WHY}: token failed (scenario)"))
            }
            None => match grant_type {
                "authorization_code" => self.exchange_code(&p),
                "refresh_token" => self.refresh(&p),
                _ => Answer::error(
                    400,
                    "unsupported_grant_type",
                    "authorization_code or refresh_token",
                    format!("{WHY}: token refused (grant_type)"),
                ),
            },
        };
        answer.delay = fault.and_then(|f| f.delay_ms).map(Duration::from_millis);
        answer
    }

    fn exchange_code(&self, p: &std::collections::BTreeMap<String, String>) -> Answer {
        let refuse = |why: &str| Answer::error(400, "invalid_grant", why, format!("{WHY}: token refused ({why})"));
        let Some(code) = p.get("code").and_then(|c| lock(&self.issued).codes.remove(c)) else {
            return refuse("unknown or used code");
        };
        if p.get("client_id") != Some(&code.client_id) {
            return refuse("the code was issued to another client");
        }
        if p.get("redirect_uri") != Some(&code.redirect_uri) {
            return refuse("redirect_uri differs from the authorization request's");
        }
        if let Some(challenge) = &code.challenge {
            match p.get("code_verifier") {
                None => return refuse("code_verifier missing"),
                Some(v) if !pkce_matches(v, challenge) => return refuse("code_verifier does not match"),
                Some(_) => {}
            }
        }
        let resource = p.get("resource").cloned().or(code.resource);
        self.issue(Grant { client_id: code.client_id, resource, scopes: code.scopes, live: true }, "issued")
    }

    fn refresh(&self, p: &std::collections::BTreeMap<String, String>) -> Answer {
        let refuse = |why: &str| Answer::error(400, "invalid_grant", why, format!("{WHY}: refresh refused ({why})"));
        let Some(token) = p.get("refresh_token") else { return refuse("refresh_token missing") };
        let grant = {
            let mut issued = lock(&self.issued);
            let Some(grant) = issued.refresh.get_mut(token) else { return refuse("unknown refresh token") };
            if !grant.live {
                return refuse("refresh token already used (rotated)");
            }
            if p.get("client_id") != Some(&grant.client_id) {
                return refuse("the refresh token was issued to another client");
            }
            if self.config.rotate_refresh_tokens {
                grant.live = false;
            }
            grant.clone()
        };
        let resource = p.get("resource").cloned().or(grant.resource);
        let reuse = (!self.config.rotate_refresh_tokens).then(|| token.clone());
        self.issue_with(Grant { resource, live: true, ..grant }, reuse, "refreshed")
    }

    fn issue(&self, grant: Grant, why: &str) -> Answer {
        self.issue_with(grant, None, why)
    }

    /// Issues an access token (and a refresh token, unless refresh tokens are off; `keep`
    /// is the one to answer again when they are not rotated).
    fn issue_with(&self, grant: Grant, keep: Option<String>, why: &str) -> Answer {
        let mut issued = lock(&self.issued);
        issued.next_access += 1;
        let access = format!("mock-access-{}", issued.next_access);
        issued.access.insert(access.clone(), grant.clone());
        let mut body = json!({"access_token": access, "token_type": "Bearer", "expires_in": EXPIRES_IN});
        if self.config.refresh_tokens {
            let refresh = keep.unwrap_or_else(|| {
                issued.next_refresh += 1;
                let r = format!("mock-refresh-{}", issued.next_refresh);
                issued.refresh.insert(r.clone(), grant.clone());
                r
            });
            body["refresh_token"] = json!(refresh);
        }
        if !grant.scopes.is_empty() {
            body["scope"] = json!(grant.scopes.iter().cloned().collect::<Vec<_>>().join(" "));
        }
        Answer::json(200, &body, format!("{WHY}: token {why}"))
    }
}

/// RFC 7636 §4.6 for `S256`: `BASE64URL-ENCODE(SHA256(ASCII(code_verifier))) ==
/// code_challenge`; a verifier outside §4.1's 43–128 unreserved characters never matches.
pub fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    well_formed
        && base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) == challenge
}
