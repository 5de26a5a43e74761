//! The HTTP client of the OAuth traffic (metadata, registration, token requests): its own
//! reqwest client, which follows no redirect (an authorization server's answer is taken as
//! it is) and never carries the MCP connection's headers, so the access token can only
//! reach the MCP endpoint. Its requests are bounded by the MCP request a flow runs in
//! (`Authorizer::new` says why they have no timer of their own).

use super::error::{AuthError, Refusal};
use serde_json::Value;
use url::Url;

/// How much of an error body an error message quotes.
const BODY_QUOTE: usize = 200;

/// The OAuth traffic's client.
#[derive(Clone)]
pub struct OAuthHttp {
    client: reqwest::Client,
}

/// An answer: status and body (JSON when it parses).
pub struct Answered {
    /// The status.
    pub status: u16,
    /// The body as JSON, if it is.
    pub json: Option<Value>,
    /// The body's first bytes as text, for messages.
    pub text: String,
}

impl Answered {
    /// The answer as a refusal: its status and the OAuth `error` / `error_description`,
    /// else the body's start.
    pub fn refusal(&self) -> Refusal {
        let field = |k: &str| self.json.as_ref().and_then(|j| j.get(k)).and_then(Value::as_str).map(str::to_string);
        let error = field("error");
        let description = error.as_ref().and_then(|_| field("error_description"));
        Refusal { status: self.status, error, description, body: self.text.clone() }
    }
}

impl OAuthHttp {
    /// A client; `loopback` leaves proxies from the environment out.
    pub fn new(loopback: bool) -> Result<Self, AuthError> {
        let mut b = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
        if loopback {
            b = b.no_proxy();
        }
        let client = b.build().map_err(|e| AuthError::HttpClient { reason: e.to_string() })?;
        Ok(OAuthHttp { client })
    }

    /// GETs a metadata document: `Some` for a 2xx JSON object, `None` for a 4xx (try the
    /// next location); an error otherwise. `version` is sent as `MCP-Protocol-Version`.
    pub async fn get_json(&self, url: &Url, version: Option<&str>) -> Result<Option<Value>, AuthError> {
        let mut r = self.client.get(url.clone()).header("accept", "application/json");
        if let Some(v) = version {
            r = r.header("mcp-protocol-version", v);
        }
        let a = self.send(r, url).await?;
        match a.status {
            200..=299 => match a.json {
                Some(doc @ Value::Object(_)) => Ok(Some(doc)),
                _ => Err(AuthError::MetadataNotAnObject { url: url.to_string() }),
            },
            400..=499 => Ok(None),
            _ => Err(AuthError::MetadataRefused { url: url.to_string(), refusal: a.refusal() }),
        }
    }

    /// POSTs a form (`application/x-www-form-urlencoded`), with `authorization` as the
    /// `Authorization` header when given (client authentication, never a bearer token).
    pub async fn post_form(
        &self,
        url: &Url,
        pairs: &[(&str, &str)],
        authorization: Option<&str>,
    ) -> Result<Answered, AuthError> {
        let body: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
        let mut r = self.client.post(url.clone());
        if let Some(value) = authorization {
            r = r.header("authorization", value);
        }
        let r = r
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body);
        self.send(r, url).await
    }

    /// POSTs a JSON document.
    pub async fn post_json(&self, url: &Url, body: &Value) -> Result<Answered, AuthError> {
        let r = self.client.post(url.clone()).header("accept", "application/json").json(body);
        self.send(r, url).await
    }

    async fn send(&self, r: reqwest::RequestBuilder, url: &Url) -> Result<Answered, AuthError> {
        let resp = r.send().await.map_err(|e| failure(url, e))?;
        let status = resp.status().as_u16();
        let bytes = resp.bytes().await.map_err(|e| failure(url, e))?;
        let json = serde_json::from_slice(&bytes).ok();
        let text: String = String::from_utf8_lossy(&bytes).chars().take(BODY_QUOTE).collect();
        Ok(Answered { status, json, text })
    }
}

/// A transport failure, named by its origin and path (no query) and its kind.
fn failure(url: &Url, e: reqwest::Error) -> AuthError {
    let reason = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else {
        e.without_url().to_string()
    };
    AuthError::Unreachable { at: format!("{}{}", url.origin().ascii_serialization(), url.path()), reason }
}
