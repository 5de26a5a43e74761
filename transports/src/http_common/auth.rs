//! Configured headers, the auth refresh hook, and the one re-send after a 401/403
//! (SPEC §4 "Auth refresh"). Header values are marked sensitive and never appear in
//! errors or logs.

use super::client::{ConfigError, request_error};
use crate::error::TransportError;
use futures::future::BoxFuture;
use reqwest::Response;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// Asked once per request after an HTTP 401/403; returns headers (e.g. a fresh
/// `Authorization`) that replace same-named configured headers from then on, or `None` to
/// give up. The manager wires it to its auth source (SPEC §4 "Auth refresh").
pub type AuthRefresh = Arc<dyn Fn() -> BoxFuture<'static, Option<BTreeMap<String, String>>> + Send + Sync>;

/// Configured headers plus whatever the auth hook returned.
pub(crate) struct AuthHeaders {
    headers: RwLock<HeaderMap>,
    hook: Option<AuthRefresh>,
}

impl AuthHeaders {
    /// Validates the configured headers; an invalid one is named (never its value).
    pub(crate) fn new(configured: &BTreeMap<String, String>, hook: Option<AuthRefresh>) -> Result<Self, ConfigError> {
        let mut map = HeaderMap::new();
        for (name, value) in configured {
            let (n, v) = header_pair(name, value).ok_or_else(|| ConfigError::InvalidHeader(name.clone()))?;
            map.append(n, v);
        }
        Ok(AuthHeaders { headers: RwLock::new(map), hook })
    }

    fn snapshot(&self) -> HeaderMap {
        self.headers.read().unwrap_or_else(|e| e.into_inner()).clone()
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

/// Sends a request built from the current headers; on HTTP 401/403 asks the auth hook once
/// and, if it returns headers, re-sends once. The final response of any status is returned.
pub(crate) async fn send_with_auth(
    auth: &AuthHeaders,
    build: impl Fn(HeaderMap) -> reqwest::RequestBuilder,
) -> Result<Response, TransportError> {
    let resp = build(auth.snapshot()).send().await.map_err(request_error)?;
    if !matches!(resp.status().as_u16(), 401 | 403) || !auth.refresh().await {
        return Ok(resp);
    }
    drop(resp);
    build(auth.snapshot()).send().await.map_err(request_error)
}
