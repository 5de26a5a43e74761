//! The OAuth client of the HTTP transports (`docs/authorization.md` is the contract, each
//! rule citing its MCP page or RFC). A host configures it with [`OAuthConfig`] on
//! [`crate::TransportConfig::oauth`]; a `401` then starts the flow — protected resource
//! metadata, authorization server metadata, registration, authorization code with PKCE
//! S256 through the host's [`AuthorizeCallback`], the token request with `resource` — and
//! the request is re-sent once with the token. A `401` with a token held refreshes it; a
//! `403 insufficient_scope` steps up to the union of the scopes (2025-11-25 on).
//!
//! Why not the `oauth2` crate: what it covers (PKCE, building the authorization URL,
//! the token request and its answer) is a small part here (`pkce`, `authorize`, `token`:
//! some 150 lines), while the MCP-specific bulk (RFC 9728 discovery, the pages' metadata
//! orders and validation, registration priority, `resource`, step-up) is not in it; it
//! would add a second `rand` and `sha2`, `chrono` and its own HTTP client abstraction to
//! a crate whose fresh build the 2-core CI pays for, and its errors quote server bodies
//! in shapes this crate's texts (SPEC §2) do not use.
//!
//! # Layout
//!
//! - [`challenge`] — the `Bearer` challenge of `WWW-Authenticate`.
//! - [`discovery`] — protected resource and authorization server metadata.
//! - [`registration`] — pre-registered, metadata-document or dynamic client registration.
//! - [`pkce`] — verifier, S256 challenge, `state`.
//! - [`authorize`] — the authorization URL and the check of the redirect.
//! - [`token`] — the token endpoint's grants.
//! - [`headless`] — a callback that follows the authorization server's redirect itself.
//! - `http` — the OAuth traffic's own HTTP client (no redirects, no MCP headers).
//! - [`error`] — [`AuthError`]: which step of the flow failed, and why.

pub mod authorize;
pub mod challenge;
pub mod discovery;
pub mod error;
pub mod headless;
mod http;
pub mod pkce;
pub mod registration;
pub mod token;

use crate::error::TransportError;
use challenge::Challenge;
use discovery::ServerMetadata;
pub use error::AuthError;
use futures::future::BoxFuture;
use registration::Registration;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use token::{Grant, Tokens};
use url::Url;

pub use headless::follow_redirect;

/// The user-interaction step, the host's: given the authorization URL, return the URL the
/// authorization server redirected the user agent to (with `code` and `state`), or why
/// not. An application opens a browser and listens on its redirect URI; tests use
/// [`follow_redirect`].
pub type AuthorizeCallback = Arc<dyn Fn(Url) -> BoxFuture<'static, Result<Url, AuthError>> + Send + Sync>;

/// How many times one connection steps up its scopes ("no more than a few times").
const MAX_STEP_UPS: usize = 3;

/// Who the client is to an authorization server. Every field is optional: with none, the
/// client registers dynamically where the server offers it. Hosts fill it from their own
/// settings (a command line, a conformance context, a scenario's plan).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ClientIdentity {
    /// A pre-registered client id (first in the pages' registration priority).
    pub client_id: Option<String>,
    /// The pre-registered client's secret, for a confidential client. It is sent the way
    /// the authorization server's `token_endpoint_auth_methods_supported` allows
    /// ([`registration::ClientAuth`]).
    pub client_secret: Option<String>,
    /// The issuer that pre-registered [`ClientIdentity::client_id`]: when set, that client
    /// is used at this authorization server only (2026-07-28 client-registration,
    /// Authorization Server Binding); `None` uses it at whichever server the resource names.
    pub client_issuer: Option<String>,
    /// A Client ID Metadata Document URL, used as the client id where the authorization
    /// server accepts those.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for when neither the challenge nor the resource metadata names any.
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for ClientIdentity {
    /// Everything but the secret, which shows as `<redacted>` when there is one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientIdentity")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("client_issuer", &self.client_issuer)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// A host's authorization client. Clones share what was obtained (registrations, tokens),
/// so a transport the manager reconnects keeps its token.
#[derive(Clone)]
pub struct OAuthConfig {
    /// Who the client is.
    pub identity: ClientIdentity,
    /// The redirect URI (registered dynamically, sent on every authorization request).
    pub redirect_uri: String,
    /// `client_name` for dynamic registration.
    pub client_name: String,
    /// The user-interaction step.
    pub authorize: AuthorizeCallback,
    store: Arc<tokio::sync::Mutex<Store>>,
}

impl OAuthConfig {
    /// A public client that registers itself, with the loopback redirect URI
    /// `http://127.0.0.1/callback` and `authorize` as its user-interaction step.
    pub fn new(authorize: AuthorizeCallback) -> Self {
        OAuthConfig {
            identity: ClientIdentity::default(),
            redirect_uri: "http://127.0.0.1/callback".into(),
            client_name: "mcp-transports".into(),
            authorize,
            store: Arc::default(),
        }
    }
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("identity", &self.identity)
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// What the flows obtained, per resource (the canonical URI of an MCP endpoint).
#[derive(Default)]
struct Store {
    sessions: HashMap<String, Session>,
}

/// One resource's authorization state.
#[derive(Default)]
struct Session {
    tokens: Option<Tokens>,
    /// The server and client identity the tokens came from (what a refresh uses).
    server: Option<ServerMetadata>,
    client: Option<Registration>,
    /// Registrations by issuer: never used at another authorization server.
    registrations: HashMap<String, Registration>,
    /// The scopes asked for so far.
    requested: BTreeSet<String>,
    /// The `resource` the tokens were asked for (what a refresh sends again).
    audience: Option<String>,
    step_ups: usize,
}

/// Which authorization page's rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revision {
    /// 2025-03-26 (and the legacy 2024-11-05): no resource metadata; the base URL's
    /// metadata or the default endpoints.
    Base2025_03,
    /// 2025-06-18: resource metadata, RFC 8414 only.
    Rfc8414Only,
    /// 2025-11-25 and later: both metadata forms, PKCE in the metadata, step-up.
    Current,
}

impl Revision {
    fn of(protocol_version: &str) -> Self {
        match protocol_version {
            v if v >= "2025-11-25" => Revision::Current,
            v if v >= "2025-06-18" => Revision::Rfc8414Only,
            _ => Revision::Base2025_03,
        }
    }
}

/// One transport's side of the authorization client: the endpoint it authorizes for.
pub(crate) struct Authorizer {
    config: OAuthConfig,
    endpoint: Url,
    resource: String,
    revision: Revision,
    http: http::OAuthHttp,
}

fn bearer(access: &str) -> String {
    format!("Bearer {access}")
}

impl Authorizer {
    /// The authorizer of the endpoint `endpoint`, speaking `protocol_version`'s rules.
    ///
    /// Its OAuth requests have no timer of their own: a flow runs inside an MCP request (or
    /// the handshake, a notification, the GET listener), whose one budget bounds it (SPEC
    /// §2). A second timer set to the same length, started a discovery later, raced that
    /// budget: on a machine that woke both at once, the run's error became the token
    /// request's "timed out" instead of `Request timeout after <t>ms`.
    pub(crate) fn new(config: &OAuthConfig, endpoint: &Url, protocol_version: &str) -> Result<Self, TransportError> {
        let loopback = discovery::secure(endpoint.as_str()).is_ok() && endpoint.scheme() == "http";
        Ok(Authorizer {
            config: config.clone(),
            endpoint: endpoint.clone(),
            resource: discovery::canonical(endpoint),
            revision: Revision::of(protocol_version),
            http: http::OAuthHttp::new(loopback).map_err(|e| TransportError::Config(e.to_string()))?,
        })
    }

    /// The `Authorization` value of the token held for this endpoint, if any.
    pub(crate) fn current(&self) -> Option<String> {
        let store = self.config.store.try_lock().ok()?;
        store.sessions.get(&self.resource)?.tokens.as_ref().map(|t| bearer(&t.access))
    }

    /// What to do about a `401`/`403` answered to a request that carried `sent`: the new
    /// `Authorization` value to re-send with, `None` to hand the answer to the caller, or
    /// the flow's failure. One flow at a time: a request that waited for another's flow
    /// takes its token.
    pub(crate) async fn respond(
        &self,
        status: u16,
        www_authenticate: Option<&str>,
        sent: Option<&str>,
    ) -> Result<Option<String>, TransportError> {
        let mut store = self.config.store.lock().await;
        let session = store.sessions.entry(self.resource.clone()).or_default();
        let held = session.tokens.as_ref().map(|t| bearer(&t.access));
        if held.is_some() && held.as_deref() != sent {
            return Ok(held);
        }
        let challenge = www_authenticate.and_then(challenge::parse).unwrap_or_default();
        let result = match status {
            401 => {
                if let Some(fresh) = self.refresh(session).await {
                    return Ok(Some(fresh));
                }
                self.flow(session, &challenge, None).await
            }
            403 if challenge.error.as_deref() == Some("insufficient_scope") && self.revision == Revision::Current => {
                let asked = challenge.scopes();
                if asked.iter().all(|s| session.requested.contains(s)) || session.step_ups >= MAX_STEP_UPS {
                    // Already asked for every one of them (or too often): a new flow would
                    // ask again for the same, so the 403 goes to the caller.
                    return Ok(None);
                }
                session.step_ups += 1;
                let mut wanted = session.requested.clone();
                wanted.extend(asked);
                self.flow(session, &challenge, Some(wanted)).await
            }
            _ => return Ok(None),
        };
        result.map(Some).map_err(TransportError::Auth)
    }

    /// Refreshes the held token; `None` when there is nothing to refresh with or the
    /// server refused (the tokens are dropped: the whole flow runs again).
    async fn refresh(&self, session: &mut Session) -> Option<String> {
        let (Some(tokens), Some(server), Some(client)) = (&session.tokens, &session.server, &session.client) else {
            return None;
        };
        let old = tokens.refresh.clone()?;
        let scope = (!session.requested.is_empty()).then(|| join(&session.requested));
        let grant = Grant::Refresh { token: &old, scope: scope.as_deref() };
        let audience = session.audience.clone().unwrap_or_else(|| self.resource.clone());
        match token::request(&self.http, &server.token_endpoint, client, &audience, grant).await {
            Ok(new) => {
                let access = bearer(&new.access);
                session.tokens = Some(Tokens { access: new.access, refresh: new.refresh.or(Some(old)) });
                Some(access)
            }
            Err(why) => {
                tracing::debug!(%why, "refresh failed; authorizing again");
                session.tokens = None;
                None
            }
        }
    }

    /// The whole flow (`docs/authorization.md` steps 2–7); `scopes` set for a step-up.
    async fn flow(
        &self,
        session: &mut Session,
        challenge: &Challenge,
        scopes: Option<BTreeSet<String>>,
    ) -> Result<String, AuthError> {
        // The `resource` sent is the identifier the resource metadata publishes, verbatim
        // (the canonical URI "aligns with the `resource` parameter in RFC 9728"); without
        // resource metadata (2025-03-26), the endpoint's canonical URI.
        let (issuer, scopes_supported, audience) = if self.revision == Revision::Base2025_03 {
            (self.endpoint.origin().ascii_serialization(), Vec::new(), self.resource.clone())
        } else {
            let prm = discovery::protected_resource(&self.http, &self.endpoint, challenge.resource_metadata.as_deref())
                .await?;
            (prm.issuer, prm.scopes_supported, prm.resource)
        };
        let server = match discovery::authorization_server(&self.http, &issuer, self.revision).await? {
            Some(s) => s,
            None => discovery::default_endpoints(&self.endpoint)?,
        };
        let client = match session.registrations.get(&server.issuer) {
            Some(c) => c.clone(),
            None => {
                let c = registration::register(&self.http, &self.config, &server).await?;
                session.registrations.insert(server.issuer.clone(), c.clone());
                c
            }
        };
        let scopes =
            select_scopes(scopes, challenge, scopes_supported, &self.config.identity.scopes, &server.scopes_supported);
        let scope = (!scopes.is_empty()).then(|| join(&scopes));
        let pkce = pkce::Pkce::fresh();
        let state = pkce::state();
        let request = authorize::Request {
            endpoint: &server.authorization_endpoint,
            client_id: &client.client_id,
            redirect_uri: &self.config.redirect_uri,
            challenge: &pkce.challenge,
            state: &state,
            scope: scope.as_deref(),
            resource: &audience,
        };
        let redirect = (self.config.authorize)(request.url()).await.map_err(|e| AuthError::UserStep(Box::new(e)))?;
        let code =
            authorize::code_from(&redirect, &self.config.redirect_uri, &state, &server.issuer, server.iss_parameter)?;
        let grant = Grant::Code { code: &code, redirect_uri: &self.config.redirect_uri, verifier: &pkce.verifier };
        let tokens = token::request(&self.http, &server.token_endpoint, &client, &audience, grant).await?;
        let access = bearer(&tokens.access);
        session.requested = scopes;
        session.audience = Some(audience);
        session.tokens = Some(tokens);
        session.server = Some(server);
        session.client = Some(client);
        Ok(access)
    }
}

/// The scope that asks for a refresh token (OpenID Connect Core §11).
const OFFLINE_ACCESS: &str = "offline_access";

/// The scopes of an authorization request (`docs/authorization.md` step 5): the step-up's
/// union when one is under way, else the challenge's, else the resource metadata's
/// `scopes_supported`, else the host's. Then `offline_access` when the authorization
/// server lists it in its own `scopes_supported` (this client wants refresh tokens: it
/// registers the `refresh_token` grant), never otherwise ("MAY add `offline_access` … when
/// the Authorization Server metadata contains it in `scopes_supported`", 2026-07-28 index,
/// Refresh Tokens).
fn select_scopes(
    step_up: Option<BTreeSet<String>>,
    challenge: &Challenge,
    resource_scopes: Vec<String>,
    configured: &[String],
    server_scopes: &[String],
) -> BTreeSet<String> {
    let mut scopes: BTreeSet<String> = match step_up {
        Some(s) => s,
        None if !challenge.scopes().is_empty() => challenge.scopes().into_iter().collect(),
        None if !resource_scopes.is_empty() => resource_scopes.into_iter().collect(),
        None => configured.iter().cloned().collect(),
    };
    if server_scopes.iter().any(|s| s == OFFLINE_ACCESS) {
        scopes.insert(OFFLINE_ACCESS.to_string());
    }
    scopes
}

fn join(scopes: &BTreeSet<String>) -> String {
    scopes.iter().cloned().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn scopes_come_from_the_first_source_that_names_any_and_offline_access_only_when_offered() {
        let challenge = Challenge { scope: Some("a b".into()), ..Challenge::default() };
        let none = Challenge::default();
        let prm = || strings(&["p"]);
        assert_eq!(select_scopes(None, &challenge, prm(), &strings(&["h"]), &[]), set(&["a", "b"]));
        assert_eq!(select_scopes(None, &none, prm(), &strings(&["h"]), &[]), set(&["p"]));
        assert_eq!(select_scopes(None, &none, vec![], &strings(&["h"]), &[]), set(&["h"]));
        assert_eq!(select_scopes(None, &none, vec![], &[], &strings(&["x"])), set(&[]));
        assert_eq!(select_scopes(Some(set(&["s", "t"])), &challenge, prm(), &[], &[]), set(&["s", "t"]));
        let offered = strings(&["p", OFFLINE_ACCESS]);
        assert_eq!(select_scopes(None, &none, prm(), &[], &offered), set(&["p", OFFLINE_ACCESS]));
        assert_eq!(select_scopes(None, &none, vec![], &[], &offered), set(&[OFFLINE_ACCESS]));
    }
}
