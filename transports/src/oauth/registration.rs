//! Client registration, in the pages' priority order (2025-11-25 Client Registration
//! Approaches; 2026-07-28 client-registration): the host's pre-registered client, its
//! Client ID Metadata Document URL when the server accepts those, dynamic registration
//! (RFC 7591) when the server offers it. A registration belongs to the issuer that made it,
//! and a pre-registered client bound to an issuer is used at that issuer only.
//!
//! Each registration also fixes how the client authenticates at the token endpoint
//! ([`ClientAuth`]): a client with a secret must use a method the authorization server
//! accepts, or its token request is refused.

use super::OAuthConfig;
use super::discovery::ServerMetadata;
use super::error::AuthError;
use super::http::OAuthHttp;
use serde_json::{Value, json};

/// How the client authenticates at the token endpoint (OAuth 2.1 §2.4.1; the names of
/// RFC 7591 §2 `token_endpoint_auth_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// `client_secret_basic`: `Authorization: Basic` with the form-encoded id and secret.
    Basic,
    /// `client_secret_post`: `client_id` and `client_secret` in the form body.
    Post,
    /// `none`: a public client, `client_id` in the body and no secret.
    None,
}

impl ClientAuth {
    /// The method's registered name.
    pub fn name(self) -> &'static str {
        match self {
            ClientAuth::Basic => "client_secret_basic",
            ClientAuth::Post => "client_secret_post",
            ClientAuth::None => "none",
        }
    }

    fn named(name: &str) -> Option<Self> {
        [ClientAuth::Basic, ClientAuth::Post, ClientAuth::None].into_iter().find(|m| m.name() == name)
    }

    /// The method for a client that has a secret (`has_secret`), given the method its
    /// registration answer names (RFC 7591 §3.2.1: what the server registered wins) and the
    /// server's `token_endpoint_auth_methods_supported` (`None` when absent: RFC 8414 §2's
    /// default, `client_secret_basic`). Without a secret the client is public (`none`). With
    /// one, `client_secret_basic` is preferred ("The authorization server MUST support the
    /// HTTP Basic authentication scheme", OAuth 2.1 §2.4.1), then `client_secret_post`, then
    /// `none` when that is all the server takes (the secret is then not sent).
    pub fn choose(has_secret: bool, registered: Option<&str>, supported: Option<&[String]>) -> Result<Self, AuthError> {
        if !has_secret {
            return Ok(ClientAuth::None);
        }
        if let Some(method) = registered.and_then(ClientAuth::named) {
            return Ok(method);
        }
        let Some(supported) = supported else { return Ok(ClientAuth::Basic) };
        [ClientAuth::Basic, ClientAuth::Post, ClientAuth::None]
            .into_iter()
            .find(|m| supported.iter().any(|s| s == m.name()))
            .ok_or_else(|| AuthError::NoClientAuthMethod { supported: supported.to_vec() })
    }

    /// The method a dynamic registration asks for: `none` (this client is a native, public
    /// one) unless the server lists methods without it; then the first secret-based one it
    /// lists, so the request does not ask for what the server refuses.
    pub fn to_register(supported: Option<&[String]>) -> Self {
        match supported {
            Some(listed) if !listed.iter().any(|s| s == "none") => [ClientAuth::Basic, ClientAuth::Post]
                .into_iter()
                .find(|m| listed.iter().any(|s| s == m.name()))
                .unwrap_or(ClientAuth::None),
            _ => ClientAuth::None,
        }
    }
}

/// The client's identity at one authorization server.
#[derive(Clone)]
pub struct Registration {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, for a confidential client.
    pub client_secret: Option<String>,
    /// How it authenticates at the token endpoint.
    pub auth: ClientAuth,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("client_id", &self.client_id)
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

/// Whether the host's pre-registered client may be used at `server`: it has one, and it
/// is bound to no issuer or to this one ("MUST associate those credentials with the
/// specific authorization server that issued them", 2026-07-28 client-registration,
/// Authorization Server Binding).
fn pre_registered_here(config: &OAuthConfig, server: &ServerMetadata) -> bool {
    config.identity.client_id.is_some()
        && config.identity.client_issuer.as_deref().is_none_or(|issuer| issuer == server.issuer)
}

/// The client id to use at `server`, registering when that is the way.
pub async fn register(
    http: &OAuthHttp,
    config: &OAuthConfig,
    server: &ServerMetadata,
) -> Result<Registration, AuthError> {
    let supported = server.token_endpoint_auth_methods.as_deref();
    if let (Some(id), true) = (&config.identity.client_id, pre_registered_here(config, server)) {
        let auth = ClientAuth::choose(config.identity.client_secret.is_some(), None, supported)?;
        return Ok(Registration { client_id: id.clone(), client_secret: config.identity.client_secret.clone(), auth });
    }
    if let Some(url) = config.identity.client_metadata_url.as_ref().filter(|_| server.client_id_metadata_documents) {
        return Ok(Registration { client_id: url.clone(), client_secret: None, auth: ClientAuth::None });
    }
    let Some(endpoint) = &server.registration_endpoint else {
        let why = match &config.identity.client_issuer {
            Some(bound) if config.identity.client_id.is_some() => {
                AuthError::ClientBoundElsewhere { bound: bound.clone(), issuer: server.issuer.clone() }
            }
            _ => AuthError::NoClientId,
        };
        return Err(why);
    };
    let body = json!({
        "client_name": config.client_name,
        "redirect_uris": [config.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": ClientAuth::to_register(supported).name(),
        "application_type": "native",
    });
    let answer = http.post_json(endpoint, &body).await.map_err(|e| AuthError::RegistrationUnreachable(Box::new(e)))?;
    if !(200..300).contains(&answer.status) {
        return Err(AuthError::RegistrationRefused(answer.refusal()));
    }
    let field = |k: &str| answer.json.as_ref().and_then(|j| j.get(k)).and_then(Value::as_str).map(str::to_string);
    let client_id = field("client_id").ok_or(AuthError::RegistrationWithoutClientId)?;
    let client_secret = field("client_secret");
    let registered = field("token_endpoint_auth_method");
    let auth = ClientAuth::choose(client_secret.is_some(), registered.as_deref(), supported)?;
    Ok(Registration { client_id, client_secret, auth })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_secret_is_sent_the_way_the_server_takes_it() {
        let choose = |secret, registered, supported: Option<&[&str]>| {
            ClientAuth::choose(secret, registered, supported.map(list).as_deref())
        };
        let chosen = |secret, registered, supported| choose(secret, registered, supported).ok();
        assert_eq!(chosen(false, Some("client_secret_basic"), Some(&["client_secret_basic"])), Some(ClientAuth::None));
        assert_eq!(chosen(true, None, None), Some(ClientAuth::Basic));
        assert_eq!(chosen(true, None, Some(&["client_secret_post"])), Some(ClientAuth::Post));
        assert_eq!(chosen(true, None, Some(&["client_secret_post", "client_secret_basic"])), Some(ClientAuth::Basic));
        assert_eq!(chosen(true, None, Some(&["none"])), Some(ClientAuth::None));
        assert_eq!(chosen(true, Some("client_secret_post"), Some(&["client_secret_basic"])), Some(ClientAuth::Post));
        assert_eq!(chosen(true, Some("private_key_jwt"), Some(&["client_secret_post"])), Some(ClientAuth::Post));
        let refused = choose(true, None, Some(&["private_key_jwt"])).expect_err("no usable method");
        assert!(matches!(&refused, AuthError::NoClientAuthMethod { supported } if supported == &["private_key_jwt"]));
        assert!(refused.to_string().contains("private_key_jwt"), "{refused}");
    }

    #[test]
    fn registration_asks_for_a_method_the_server_lists() {
        assert_eq!(ClientAuth::to_register(None), ClientAuth::None);
        assert_eq!(ClientAuth::to_register(Some(&list(&["client_secret_basic", "none"]))), ClientAuth::None);
        assert_eq!(ClientAuth::to_register(Some(&list(&["client_secret_post"]))), ClientAuth::Post);
        assert_eq!(
            ClientAuth::to_register(Some(&list(&["client_secret_post", "client_secret_basic"]))),
            ClientAuth::Basic
        );
    }

    #[test]
    fn a_pre_registered_client_bound_to_an_issuer_is_used_there_only() {
        let server = |issuer: &str| ServerMetadata {
            issuer: issuer.into(),
            authorization_endpoint: url::Url::parse("http://127.0.0.1:1/authorize").expect("url"),
            token_endpoint: url::Url::parse("http://127.0.0.1:1/token").expect("url"),
            registration_endpoint: None,
            client_id_metadata_documents: false,
            iss_parameter: false,
            token_endpoint_auth_methods: None,
            scopes_supported: Vec::new(),
        };
        let mut config = OAuthConfig::new(super::super::follow_redirect(None));
        assert!(!pre_registered_here(&config, &server("http://a")));
        config.identity.client_id = Some("c".into());
        assert!(pre_registered_here(&config, &server("http://a")));
        config.identity.client_issuer = Some("http://a".into());
        assert!(pre_registered_here(&config, &server("http://a")));
        assert!(!pre_registered_here(&config, &server("http://b")));
    }
}
