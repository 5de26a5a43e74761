//! [`AuthError`]: why the OAuth flow failed, one variant per step that can fail, so a host
//! (and a test) can tell discovery from registration from the token request without
//! reading text. It converts into `TransportError::Auth`,
//! whose `Display` prefixes `Authorization failed: `. No variant holds a token, code,
//! verifier or secret: only URLs, field names and what servers answered.

use std::fmt;

/// An authorization server's non-2xx answer: its status and the OAuth `error` /
/// `error_description`, or the start of the body when it has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// The OAuth `error` code, when the body is JSON with one.
    pub error: Option<String>,
    /// The OAuth `error_description`, when given with `error`.
    pub description: Option<String>,
    /// The body's first bytes as text (quoted only when there is no `error`).
    pub body: String,
}

impl fmt::Display for Refusal {
    /// `HTTP <status>` plus the OAuth `error` (and its description) or the body's start.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.error, &self.description) {
            (Some(e), Some(d)) => write!(f, "HTTP {}: {e} ({d})", self.status),
            (Some(e), None) => write!(f, "HTTP {}: {e}", self.status),
            _ if self.body.is_empty() => write!(f, "HTTP {}", self.status),
            _ => write!(f, "HTTP {}: {}", self.status, self.body),
        }
    }
}

/// Which token endpoint grant a [`AuthError`] of the token step was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRequest {
    /// The `authorization_code` grant that ends a flow.
    Code,
    /// The `refresh_token` grant.
    Refresh,
}

impl fmt::Display for TokenRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TokenRequest::Code => "the token request",
            TokenRequest::Refresh => "the refresh request",
        })
    }
}

/// Every way the OAuth flow a `401`/`403` started can fail (`docs/authorization.md` names
/// the steps).
#[derive(Debug, Clone, thiserror::Error)]
pub enum AuthError {
    /// The OAuth traffic's own HTTP client could not be built.
    #[error("cannot build the OAuth HTTP client: {reason}")]
    HttpClient {
        /// What the HTTP library said.
        reason: String,
    },
    /// An OAuth request got no answer: `at` is the origin and path (no query).
    #[error("{at}: {reason}")]
    Unreachable {
        /// Where the request went.
        at: String,
        /// `timed out`, `could not connect`, or the HTTP library's words.
        reason: String,
    },
    /// A metadata URL answered 2xx with a body that is not a JSON object.
    #[error("{url} answered a body that is not a JSON object")]
    MetadataNotAnObject {
        /// The metadata URL.
        url: String,
    },
    /// A metadata URL answered neither 2xx nor 4xx.
    #[error("{url} answered {refusal}")]
    MetadataRefused {
        /// The metadata URL.
        url: String,
        /// What it answered.
        refusal: Refusal,
    },
    /// The `resource_metadata` of the `401`'s challenge does not parse.
    #[error("the 401's resource_metadata {given:?} is not a URL")]
    ResourceMetadataNotAUrl {
        /// The parameter as given.
        given: String,
    },
    /// Every protected resource metadata URL was missing.
    #[error("no protected resource metadata (tried {})", tried.join(", "))]
    NoResourceMetadata {
        /// The URLs, in the order tried.
        tried: Vec<String>,
    },
    /// The protected resource metadata is another resource's (RFC 9728 §3.3).
    #[error("the protected resource metadata names resource {named:?}, not {endpoint}")]
    ForeignResource {
        /// The `resource` the document names.
        named: String,
        /// The canonical URI of the endpoint it was fetched for.
        endpoint: String,
    },
    /// The protected resource metadata names no authorization server.
    #[error("the protected resource metadata lists no authorization_servers")]
    NoAuthorizationServers,
    /// The authorization server the resource names is not a URL.
    #[error("the authorization server {issuer:?} is not a URL")]
    IssuerNotAUrl {
        /// The issuer as named.
        issuer: String,
    },
    /// Every authorization server metadata URL was missing.
    #[error("no authorization server metadata (tried {})", tried.join(", "))]
    NoServerMetadata {
        /// The URLs, in the order tried.
        tried: Vec<String>,
    },
    /// The metadata's `issuer` is not the one its URL was built from (RFC 8414 §3.3).
    #[error("the authorization server metadata claims issuer {claimed:?}, not {issuer:?}")]
    IssuerMismatch {
        /// The `issuer` the document claims.
        claimed: String,
        /// The issuer the URL was built from.
        issuer: String,
    },
    /// The metadata has no `code_challenge_methods_supported` where the revision requires it.
    #[error(
        "the authorization server metadata has no code_challenge_methods_supported: PKCE is not supported, so the client refuses to proceed"
    )]
    PkceUnadvertised,
    /// The metadata lists PKCE methods without `S256`.
    #[error("the authorization server does not support PKCE S256 (code_challenge_methods_supported: {methods:?})")]
    NoS256 {
        /// The methods listed.
        methods: Vec<String>,
    },
    /// The metadata has no such endpoint.
    #[error("the authorization server metadata has no {field}")]
    MissingEndpoint {
        /// `authorization_endpoint` or `token_endpoint`.
        field: &'static str,
    },
    /// An endpoint of the metadata is unusable.
    #[error("{field}: {problem}")]
    BadEndpoint {
        /// The metadata field.
        field: String,
        /// Why ([`AuthError::NotAUrl`] or [`AuthError::NotHttps`]).
        problem: Box<AuthError>,
    },
    /// An authorization server URL does not parse.
    #[error("{raw:?} is not a URL")]
    NotAUrl {
        /// The text.
        raw: String,
    },
    /// An authorization server URL is plain `http` on a host that is not loopback.
    #[error("{origin} is not https")]
    NotHttps {
        /// Its origin.
        origin: String,
    },
    /// The host's secret cannot be sent any way the server accepts.
    #[error(
        "the authorization server's token_endpoint_auth_methods_supported ({supported:?}) has none of client_secret_basic, client_secret_post, none"
    )]
    NoClientAuthMethod {
        /// The methods the server lists.
        supported: Vec<String>,
    },
    /// The pre-registered client is bound to another issuer, and this one does not register.
    #[error(
        "no client id: the pre-registered client belongs to {bound}, not to {issuer}, which offers no registration"
    )]
    ClientBoundElsewhere {
        /// The issuer the client belongs to.
        bound: String,
        /// The issuer met.
        issuer: String,
    },
    /// No client id: none configured, and the server offers no registration.
    #[error("no client id: the authorization server offers no registration and none is configured")]
    NoClientId,
    /// The registration request got no answer.
    #[error("dynamic client registration failed: {0}")]
    RegistrationUnreachable(Box<AuthError>),
    /// The registration endpoint refused.
    #[error("dynamic client registration refused: {0}")]
    RegistrationRefused(Refusal),
    /// The registration answer has no `client_id`.
    #[error("dynamic client registration answered no client_id")]
    RegistrationWithoutClientId,
    /// The host's user-interaction step failed.
    #[error("the authorization step failed: {0}")]
    UserStep(Box<AuthError>),
    /// A host's own reason its user-interaction step failed.
    #[error("{reason}")]
    Host {
        /// The host's words.
        reason: String,
    },
    /// `follow_redirect` could not build its user agent.
    #[error("cannot build the user agent: {reason}")]
    UserAgent {
        /// What the HTTP library said.
        reason: String,
    },
    /// `follow_redirect` got no answer.
    #[error("the authorization endpoint could not be reached: {reason}")]
    AuthorizationEndpointUnreachable {
        /// What the HTTP library said.
        reason: String,
    },
    /// The authorization endpoint's `Location` does not resolve to a URL.
    #[error("the authorization endpoint redirected to {location:?}, not a URL")]
    RedirectNotAUrl {
        /// The `Location` header.
        location: String,
    },
    /// The authorization endpoint answered without redirecting.
    #[error("the authorization endpoint answered HTTP {status} instead of redirecting")]
    NotRedirected {
        /// The status.
        status: u16,
    },
    /// The configured redirect URI does not parse.
    #[error("the redirect_uri {redirect_uri:?} is not a URL")]
    RedirectUriNotAUrl {
        /// The configured redirect URI.
        redirect_uri: String,
    },
    /// The redirect went elsewhere than the registered redirect URI.
    #[error("the authorization server redirected to {to}, not to the registered redirect_uri")]
    WrongRedirect {
        /// Its origin and path.
        to: String,
    },
    /// The redirect's `iss` is another issuer's (RFC 9207).
    #[error("the redirect's iss {iss:?} is not the issuer {issuer:?} (RFC 9207): ignored")]
    ForeignIss {
        /// The `iss` parameter.
        iss: String,
        /// The issuer asked.
        issuer: String,
    },
    /// The redirect lacks the `iss` the metadata promises (RFC 9207).
    #[error("the redirect has no iss, which the authorization server's metadata promises (RFC 9207)")]
    MissingIss,
    /// The authorization server refused the authorization request.
    #[error("the authorization server refused: {error}{}", description.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        /// The `error` parameter.
        error: String,
        /// The `error_description` parameter, when given.
        description: Option<String>,
    },
    /// The redirect's `state` is not ours.
    #[error("the redirect's state is not the one sent: the answer is discarded")]
    StateMismatch,
    /// The redirect has no code.
    #[error("the redirect carries no code")]
    NoCode,
    /// A token request got no answer.
    #[error("{request} failed: {cause}")]
    TokenUnreachable {
        /// Which grant.
        request: TokenRequest,
        /// Why ([`AuthError::Unreachable`]).
        cause: Box<AuthError>,
    },
    /// The token endpoint refused.
    #[error("{request} was refused: {refusal}")]
    TokenRefused {
        /// Which grant.
        request: TokenRequest,
        /// What it answered.
        refusal: Refusal,
    },
    /// The token endpoint answered something that is not JSON.
    #[error("{request} answered a body that is not JSON")]
    TokenNotJson {
        /// Which grant.
        request: TokenRequest,
    },
    /// The token is not a `Bearer` one.
    #[error("{request} answered token_type {token_type:?}, not Bearer")]
    NotBearer {
        /// Which grant.
        request: TokenRequest,
        /// The `token_type` answered.
        token_type: String,
    },
    /// The token answer has no (or an empty) `access_token`.
    #[error("{request} answered no access_token")]
    NoAccessToken {
        /// Which grant.
        request: TokenRequest,
    },
    /// The access token cannot be an `Authorization` header value.
    #[error("the access token is not a valid header value")]
    TokenNotAHeaderValue,
}
