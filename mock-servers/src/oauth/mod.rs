//! The mock's OAuth authorization server (`authorization_server`): what a protected MCP
//! server and its authorization server answer, served on the mock's own origin beside the
//! MCP endpoint, with the faults a scenario plants. The rules a client must follow against
//! it are in `docs/authorization.md`; this module is the other side, written from the RFCs
//! and the MCP authorization pages alone, never from the bundled client (which this crate
//! never depends on), so the two cannot share a bug: PKCE is verified here with its own
//! SHA-256, tokens are bound to the `resource` the client asked for.
//!
//! Pure of I/O: the HTTP handler ([`crate::http::server`]) hands a request's method, path
//! and body to [`AuthServer::handle`] or the MCP endpoint's credential to
//! [`AuthServer::guard`] and sends back the [`Answer`], recorded like any other.
//!
//! # Layout
//!
//! - [`metadata`] — protected resource metadata (RFC 9728) and authorization server
//!   metadata (RFC 8414 / OpenID Connect Discovery) at their well-known locations.
//! - [`registration`] — `/register` (RFC 7591).
//! - [`authorize`] — `/authorize`: checks the request and redirects at once with a code
//!   (no user interface: the client's host callback follows the redirect).
//! - [`token`] — `/token`: `authorization_code` with PKCE S256, `refresh_token` with
//!   rotation, and the scripted faults.
//! - [`guard`] — the MCP endpoint as a resource server: `401` / `403` challenges.

pub mod authorize;
pub mod guard;
pub mod metadata;
pub mod registration;
pub mod token;

use bytes::Bytes;
use mcp_scenario::script::step;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Duration;

/// What the record's `why` of every authorization-server answer starts with.
pub const WHY: &str = "authorization server";

/// The MCP endpoint's path on the mock: the resource the tokens are for.
pub const MCP_PATH: &str = "/mcp";

/// Whether a request to `path` (with its query) is for the authorization server rather
/// than the MCP endpoint: the well-known documents and the three OAuth endpoints. The
/// transcript leaves these exchanges out of its JSON-RPC view (they carry no MCP message).
pub fn is_oauth_path(path: &str) -> bool {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    path.starts_with("/.well-known/")
        || path.contains("/.well-known/")
        || matches!(path, "/authorize" | "/token" | "/register")
}

/// An HTTP answer of the authorization server or the guard.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The status.
    pub status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
    /// Why, for the record (starts with [`WHY`] for the authorization server's own).
    pub why: String,
    /// Wait this long before answering (a slow token endpoint).
    pub delay: Option<Duration>,
}

impl Answer {
    /// A JSON answer.
    pub(crate) fn json(status: u16, body: &serde_json::Value, why: impl Into<String>) -> Self {
        Answer {
            status,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("cache-control".into(), "no-store".into()),
            ],
            body: Bytes::from(serde_json::to_vec(body).unwrap_or_default()),
            why: why.into(),
            delay: None,
        }
    }

    /// An OAuth error answer (`{"error": …, "error_description": …}`, RFC 6749 §5.2).
    pub(crate) fn error(status: u16, error: &str, description: &str, why: impl Into<String>) -> Self {
        Answer::json(status, &serde_json::json!({"error": error, "error_description": description}), why)
    }

    /// An empty answer.
    pub(crate) fn empty(status: u16, headers: Vec<(String, String)>, why: impl Into<String>) -> Self {
        Answer { status, headers, body: Bytes::new(), why: why.into(), delay: None }
    }
}

/// A client the server knows: its redirect URIs (empty: any loopback or https one, for a
/// pre-registered or metadata-document client).
#[derive(Debug, Clone, Default)]
struct Client {
    redirect_uris: Vec<String>,
}

/// An authorization code waiting to be exchanged.
#[derive(Debug, Clone)]
struct Code {
    client_id: String,
    redirect_uri: String,
    challenge: Option<String>,
    resource: Option<String>,
    scopes: BTreeSet<String>,
}

/// A token's grant: what it is for and what it allows.
#[derive(Debug, Clone)]
struct Grant {
    client_id: String,
    resource: Option<String>,
    scopes: BTreeSet<String>,
    live: bool,
}

/// What the server has issued so far.
#[derive(Debug, Default)]
struct Issued {
    clients: BTreeMap<String, Client>,
    codes: HashMap<String, Code>,
    access: HashMap<String, Grant>,
    refresh: HashMap<String, Grant>,
    /// Counters for the values handed out (`client-1`, `mock-code-1`, …): stable, so
    /// snapshots are; every one but the client id is a secret the policy redacts.
    next_client: u32,
    next_code: u32,
    next_access: u32,
    next_refresh: u32,
    /// Token requests seen (for `token_fault.times`).
    token_requests: u32,
}

/// The authorization server of one mock, as the scenario configured it.
#[derive(Debug)]
pub struct AuthServer {
    config: step::AuthorizationServer,
    /// `http://127.0.0.1:<port>`.
    origin: String,
    issued: Mutex<Issued>,
}

impl AuthServer {
    /// The server for `config` on the mock at `origin`.
    pub fn new(config: step::AuthorizationServer, origin: &str) -> Self {
        let mut issued = Issued::default();
        for id in &config.clients {
            issued.clients.insert(id.clone(), Client::default());
        }
        AuthServer { config, origin: origin.to_string(), issued: Mutex::new(issued) }
    }

    /// `{origin}` expanded.
    fn expand(&self, text: &str) -> String {
        text.replace("{origin}", &self.origin)
            .replace("{port}", self.origin.rsplit(':').next().unwrap_or_default())
            .replace("{issuer}", &self.issuer())
    }

    /// The real issuer: the origin plus `issuer_path`.
    pub fn issuer(&self) -> String {
        format!("{}{}", self.origin, self.issuer_path())
    }

    fn issuer_path(&self) -> String {
        self.config.issuer_path.as_deref().map(|p| p.trim_end_matches('/')).unwrap_or_default().to_string()
    }

    /// The resource the tokens are for: the MCP endpoint's URL.
    pub fn resource(&self) -> String {
        format!("{}{MCP_PATH}", self.origin)
    }

    /// Answers a request to the authorization server, or `None` when `path` is not one
    /// of its (the MCP endpoint's, for the guard).
    pub fn handle(&self, http_method: &str, path: &str, body: &[u8]) -> Option<Answer> {
        if !is_oauth_path(path) {
            return None;
        }
        let (bare, query) = path.split_once('?').unwrap_or((path, ""));
        let answer = match (http_method, bare) {
            ("GET", p) if p.contains("/.well-known/") => self.well_known(p),
            ("POST", "/register") => self.register(body),
            ("GET", "/authorize") => self.authorize(query),
            ("POST", "/token") => self.token(body),
            (_, "/register" | "/token") => method_not_allowed("POST"),
            (_, "/authorize") => method_not_allowed("GET"),
            _ => method_not_allowed("GET"),
        };
        Some(answer)
    }

    /// Every access token issued so far stops working (`expire_tokens`).
    pub fn expire_tokens(&self) {
        let mut issued = crate::sync::lock(&self.issued);
        for grant in issued.access.values_mut() {
            grant.live = false;
        }
    }
}

fn method_not_allowed(allow: &str) -> Answer {
    Answer::empty(405, vec![("allow".into(), allow.into())], format!("{WHY}: method not allowed"))
}

/// The scopes of a space-separated `scope` value.
pub(crate) fn scopes(value: &str) -> BTreeSet<String> {
    value.split_whitespace().map(str::to_string).collect()
}

/// The parameters of a query or form body, the last value of a name winning.
pub(crate) fn params(text: &[u8]) -> BTreeMap<String, String> {
    url::form_urlencoded::parse(text).into_owned().collect()
}

#[cfg(test)]
mod tests;
