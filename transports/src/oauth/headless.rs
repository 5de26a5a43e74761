//! The user-interaction step without a person: a callback that opens the authorization URL
//! itself and returns where the authorization server redirected. For headless
//! authorization servers — this project's mock redirects at once — and tests; an
//! application's callback opens a browser and waits on its redirect URI instead.

use super::AuthorizeCallback;
use super::error::AuthError;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// A callback that GETs the authorization URL (no redirect followed, no MCP header sent)
/// and answers the URL its `302`/`303` `Location` names, resolved against it.
pub fn follow_redirect(timeout: Option<Duration>) -> AuthorizeCallback {
    Arc::new(move |url: Url| {
        Box::pin(async move {
            let mut b = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).no_proxy();
            if let Some(t) = timeout {
                b = b.timeout(t);
            }
            let client = b.build().map_err(|e| AuthError::UserAgent { reason: e.to_string() })?;
            let resp = client
                .get(url.clone())
                .send()
                .await
                .map_err(|e| AuthError::AuthorizationEndpointUnreachable { reason: e.without_url().to_string() })?;
            let status = resp.status().as_u16();
            let location = resp.headers().get("location").and_then(|v| v.to_str().ok());
            match location {
                Some(l) if resp.status().is_redirection() => {
                    url.join(l).map_err(|_| AuthError::RedirectNotAUrl { location: l.to_string() })
                }
                _ => Err(AuthError::NotRedirected { status }),
            }
        })
    })
}
