//! `/authorize` (OAuth 2.1 §4.1.1): checks the request and redirects at once to the
//! client's `redirect_uri` with a code and the `state` it sent — a headless authorization
//! server, no page for a person, so a host's callback (or a test) just follows the `302`.
//! An unknown client or a redirect URI it never registered is refused with a `400` and no
//! redirect (RFC 6749 §4.1.2.1); other errors go back in the redirect (`error=…`). PKCE is
//! required whenever the metadata advertises it, with a method it lists. `returned_state` can
//! make the redirect carry another `state`, or none (a response the client must discard).

use super::{Answer, AuthServer, Code, WHY, params, scopes};
use crate::sync::lock;
use mcp_scenario::script::step::ReturnedState;
use std::collections::BTreeSet;

impl AuthServer {
    pub(super) fn authorize(&self, query: &str) -> Answer {
        let p = params(query.as_bytes());
        let get = |k: &str| p.get(k).map(String::as_str);
        let Some(client_id) = get("client_id") else {
            return Answer::error(400, "invalid_request", "client_id is required", format!("{WHY}: authorize refused"));
        };
        let registered = lock(&self.issued).clients.get(client_id).map(|c| c.redirect_uris.clone());
        let redirect_uris = match registered {
            Some(uris) => uris,
            None if self.config.client_id_metadata_documents && is_metadata_document_url(client_id) => Vec::new(),
            None => {
                return Answer::error(
                    400,
                    "invalid_client",
                    "unknown client_id",
                    format!("{WHY}: authorize refused (unknown client)"),
                );
            }
        };
        let Some(redirect_uri) = get("redirect_uri") else {
            return Answer::error(
                400,
                "invalid_request",
                "redirect_uri is required",
                format!("{WHY}: authorize refused"),
            );
        };
        let allowed = if redirect_uris.is_empty() {
            is_loopback_or_https(redirect_uri)
        } else {
            redirect_uris.iter().any(|u| u == redirect_uri)
        };
        if !allowed {
            return Answer::error(
                400,
                "invalid_request",
                "redirect_uri is not registered for this client",
                format!("{WHY}: authorize refused (redirect_uri)"),
            );
        }
        let state = get("state");
        let refuse = |error: &str, why: &str| self.redirect(redirect_uri, &[("error", error)], state, why);
        if get("response_type") != Some("code") {
            return refuse("unsupported_response_type", "authorize refused (response_type)");
        }
        let methods = self.config.code_challenge_methods.clone().unwrap_or_else(|| vec!["S256".into()]);
        let challenge = get("code_challenge").map(str::to_string);
        if !methods.is_empty() {
            let method = get("code_challenge_method").unwrap_or("plain");
            if challenge.is_none() || !methods.iter().any(|m| m == method) {
                return refuse("invalid_request", "authorize refused (PKCE)");
            }
        }
        let asked = get("scope").map(scopes).unwrap_or_default();
        let granted: BTreeSet<String> = match &self.config.grants {
            Some(grants) => asked.into_iter().filter(|s| grants.contains(s)).collect(),
            None => asked,
        };
        let code = {
            let mut issued = lock(&self.issued);
            issued.next_code += 1;
            let code = format!("mock-code-{}", issued.next_code);
            issued.codes.insert(
                code.clone(),
                Code {
                    client_id: client_id.to_string(),
                    redirect_uri: redirect_uri.to_string(),
                    challenge,
                    resource: get("resource").map(str::to_string),
                    scopes: granted,
                },
            );
            code
        };
        let target = match &self.config.redirect_to {
            Some(t) => self.expand(t),
            None => redirect_uri.to_string(),
        };
        let altered;
        let returned = match self.config.returned_state {
            ReturnedState::Echo => state,
            ReturnedState::Omitted => None,
            ReturnedState::Altered => {
                altered = format!("not-{}", state.unwrap_or_default());
                Some(altered.as_str())
            }
        };
        self.redirect(&target, &[("code", &code)], returned, "authorized")
    }

    /// A `302` to `target` with `pairs`, the `state` and (when configured) `iss` added.
    fn redirect(&self, target: &str, pairs: &[(&str, &str)], state: Option<&str>, why: &str) -> Answer {
        let location = match url::Url::parse(target) {
            Ok(mut url) => {
                {
                    let mut q = url.query_pairs_mut();
                    for (k, v) in pairs {
                        q.append_pair(k, v);
                    }
                    if let Some(s) = state {
                        q.append_pair("state", s);
                    }
                    if let Some(iss) = &self.config.iss {
                        q.append_pair("iss", &self.expand(iss));
                    }
                }
                url.to_string()
            }
            Err(_) => target.to_string(),
        };
        Answer::empty(302, vec![("location".into(), location)], format!("{WHY}: {why}"))
    }
}

/// A Client ID Metadata Document URL: `https` with a path (2025-11-25 Client ID Metadata
/// Documents: "MUST use the "https" scheme and contain a path component").
fn is_metadata_document_url(id: &str) -> bool {
    url::Url::parse(id).is_ok_and(|u| u.scheme() == "https" && u.path().len() > 1)
}

/// A redirect URI a client with no registered list may use: loopback http, or https
/// ("All redirect URIs MUST be either localhost or use HTTPS").
fn is_loopback_or_https(uri: &str) -> bool {
    url::Url::parse(uri).is_ok_and(|u| {
        u.scheme() == "https"
            || (u.scheme() == "http" && matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")))
    })
}
