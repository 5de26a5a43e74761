//! The HTTP client of the OAuth traffic (metadata, registration, token requests): its own
//! reqwest client, which follows no redirect (an authorization server's answer is taken as
//! it is) and never carries the MCP connection's headers, so the access token can only
//! reach the MCP endpoint. Its requests are bounded by the MCP request a flow runs in
//! (`Authorizer::new` says why they have no timer of their own).

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
    /// `HTTP <status>` plus the OAuth `error` / `error_description` or the body's start.
    pub fn describe(&self) -> String {
        let field = |k: &str| self.json.as_ref().and_then(|j| j.get(k)).and_then(Value::as_str).map(str::to_string);
        match (field("error"), field("error_description")) {
            (Some(e), Some(d)) => format!("HTTP {}: {e} ({d})", self.status),
            (Some(e), None) => format!("HTTP {}: {e}", self.status),
            _ if self.text.is_empty() => format!("HTTP {}", self.status),
            _ => format!("HTTP {}: {}", self.status, self.text),
        }
    }
}

impl OAuthHttp {
    /// A client; `loopback` leaves proxies from the environment out.
    pub fn new(loopback: bool) -> Result<Self, String> {
        let mut b = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
        if loopback {
            b = b.no_proxy();
        }
        let client = b.build().map_err(|e| format!("cannot build the OAuth HTTP client: {e}"))?;
        Ok(OAuthHttp { client })
    }

    /// GETs a metadata document: `Some` for a 2xx JSON object, `None` for a 4xx (try the
    /// next location); an error otherwise. `version` is sent as `MCP-Protocol-Version`.
    pub async fn get_json(&self, url: &Url, version: Option<&str>) -> Result<Option<Value>, String> {
        let mut r = self.client.get(url.clone()).header("accept", "application/json");
        if let Some(v) = version {
            r = r.header("mcp-protocol-version", v);
        }
        let a = self.send(r, url).await?;
        match a.status {
            200..=299 => match a.json {
                Some(doc @ Value::Object(_)) => Ok(Some(doc)),
                _ => Err(format!("{url} answered a body that is not a JSON object")),
            },
            400..=499 => Ok(None),
            _ => Err(format!("{url} answered {}", a.describe())),
        }
    }

    /// POSTs a form (`application/x-www-form-urlencoded`), with `authorization` as the
    /// `Authorization` header when given (client authentication, never a bearer token).
    pub async fn post_form(
        &self,
        url: &Url,
        pairs: &[(&str, &str)],
        authorization: Option<&str>,
    ) -> Result<Answered, String> {
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
    pub async fn post_json(&self, url: &Url, body: &Value) -> Result<Answered, String> {
        let r = self.client.post(url.clone()).header("accept", "application/json").json(body);
        self.send(r, url).await
    }

    async fn send(&self, r: reqwest::RequestBuilder, url: &Url) -> Result<Answered, String> {
        let resp = r.send().await.map_err(|e| failure(url, e))?;
        let status = resp.status().as_u16();
        let bytes = resp.bytes().await.map_err(|e| failure(url, e))?;
        let json = serde_json::from_slice(&bytes).ok();
        let text: String = String::from_utf8_lossy(&bytes).chars().take(BODY_QUOTE).collect();
        Ok(Answered { status, json, text })
    }
}

/// A transport failure, named by its origin and path (no query) and its kind.
fn failure(url: &Url, e: reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else {
        e.without_url().to_string()
    };
    format!("{}{}: {what}", url.origin().ascii_serialization(), url.path())
}
