//! Configured headers, the auth refresh hook, the OAuth authorizer, and the one re-send
//! after a 401/403 (SPEC §4 "Auth refresh" and "Authorization"). Header values are marked
//! sensitive and never appear in errors or logs.

use super::client::{ConfigError, request_error};
use crate::error::TransportError;
use crate::oauth::Authorizer;
use futures::future::BoxFuture;
use reqwest::Response;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// Asked once per request after an HTTP 401/403; returns headers (e.g. a fresh
/// `Authorization`) that replace same-named configured headers from then on, or `None` to
/// give up. The manager wires it to its auth source (SPEC §4 "Auth refresh").
pub type AuthRefresh = Arc<dyn Fn() -> BoxFuture<'static, Option<BTreeMap<String, String>>> + Send + Sync>;

/// Configured headers plus whatever the auth hook or the authorizer returned.
pub(crate) struct AuthHeaders {
    headers: RwLock<HeaderMap>,
    hook: Option<AuthRefresh>,
    oauth: Option<Authorizer>,
}

impl AuthHeaders {
    /// Validates the configured headers; an invalid one is named (never its value). A token
    /// the authorizer already holds for this endpoint (a reconnect) is sent from the start.
    pub(crate) fn new(
        configured: &BTreeMap<String, String>,
        hook: Option<AuthRefresh>,
        oauth: Option<Authorizer>,
    ) -> Result<Self, ConfigError> {
        let mut map = HeaderMap::new();
        for (name, value) in configured {
            let (n, v) = header_pair(name, value).ok_or_else(|| ConfigError::InvalidHeader(name.clone()))?;
            map.append(n, v);
        }
        if let Some((n, v)) =
            oauth.as_ref().and_then(Authorizer::current).and_then(|b| header_pair("authorization", &b))
        {
            map.insert(n, v);
        }
        Ok(AuthHeaders { headers: RwLock::new(map), hook, oauth })
    }

    fn snapshot(&self) -> HeaderMap {
        self.headers.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, name: HeaderName, value: HeaderValue) {
        self.headers.write().unwrap_or_else(|e| e.into_inner()).insert(name, value);
    }

    /// Asks the hook for fresh headers; true when it gave some (the caller re-sends).
    async fn refresh(&self) -> bool {
        let Some(hook) = &self.hook else { return false };
        let Some(fresh) = hook().await else { return false };
        let mut map = self.headers.write().unwrap_or_else(|e| e.into_inner());
        for (name, value) in &fresh {
            match header_pair(name, value) {
                Some((n, v)) => {
                    map.insert(n, v);
                }
                None => tracing::warn!(header = %name, "auth refresh returned an invalid header; ignored"),
            }
        }
        true
    }
}

fn header_pair(name: &str, value: &str) -> Option<(HeaderName, HeaderValue)> {
    let n = HeaderName::from_bytes(name.as_bytes()).ok()?;
    let mut v = HeaderValue::from_str(value).ok()?;
    v.set_sensitive(true);
    Some((n, v))
}

/// Sends a request built from the current headers. On HTTP 401/403 with an authorization
/// client, the authorizer decides (a token from its flow, a refresh, a step-up, or the
/// answer as it is); without one, the auth hook is asked once. Either way the request is
/// re-sent at most once; the final response of any status is returned.
pub(crate) async fn send_with_auth(
    auth: &AuthHeaders,
    build: impl Fn(HeaderMap) -> reqwest::RequestBuilder,
) -> Result<Response, TransportError> {
    let sent = auth.snapshot();
    let resp = build(sent.clone()).send().await.map_err(request_error)?;
    let status = resp.status().as_u16();
    if !matches!(status, 401 | 403) {
        return Ok(resp);
    }
    if let Some(oauth) = &auth.oauth {
        let challenge = resp.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let used = sent.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let Some(value) = oauth.respond(status, challenge.as_deref(), used.as_deref()).await? else {
            return Ok(resp);
        };
        let (n, v) = header_pair("authorization", &value)
            .ok_or_else(|| TransportError::Auth(crate::oauth::AuthError::TokenNotAHeaderValue))?;
        auth.set(n, v);
    } else if !auth.refresh().await {
        return Ok(resp);
    }
    drop(resp);
    build(auth.snapshot()).send().await.map_err(request_error)
}
