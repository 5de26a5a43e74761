//! The token endpoint (OAuth 2.1 §3.2): the `authorization_code` grant with the PKCE
//! verifier, the `refresh_token` grant, both with `resource` (RFC 8707), and reading the
//! answer: a `Bearer` access token, perhaps a (rotated) refresh token.

use super::error::{AuthError, TokenRequest};
use super::http::OAuthHttp;
use super::registration::{ClientAuth, Registration};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use url::Url;

/// Tokens from one answer of the token endpoint.
#[derive(Clone)]
pub struct Tokens {
    /// The access token.
    pub access: String,
    /// The refresh token, when the server issued one.
    pub refresh: Option<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens").field("refresh", &self.refresh.is_some()).finish_non_exhaustive()
    }
}

/// What a grant sends besides the client's identity and `resource`.
pub enum Grant<'a> {
    /// The authorization code, its redirect URI and the PKCE verifier.
    Code {
        /// The code from the redirect.
        code: &'a str,
        /// The redirect URI of the authorization request.
        redirect_uri: &'a str,
        /// The PKCE verifier.
        verifier: &'a str,
    },
    /// A refresh token.
    Refresh {
        /// The refresh token.
        token: &'a str,
        /// The scopes asked for before, when any.
        scope: Option<&'a str>,
    },
}

/// The form a grant posts and the `Authorization` header that authenticates the client,
/// by its [`ClientAuth`](super::registration::ClientAuth) (OAuth 2.1 §2.4.1):
/// `client_secret_basic` puts the form-encoded id and secret in `Basic` (RFC 6749 §2.3.1)
/// and the body carries no client credentials; `client_secret_post` sends `client_id` and
/// `client_secret` in the body; `none` sends `client_id` alone. One method per request
/// ("MUST NOT use more than one authentication method", RFC 6749 §2.3).
pub fn form(client: &Registration, resource: &str, grant: &Grant<'_>) -> (Vec<(&'static str, String)>, Option<String>) {
    let mut pairs: Vec<(&'static str, String)> = Vec::new();
    match grant {
        Grant::Code { code, redirect_uri, verifier } => {
            pairs.extend([
                ("grant_type", "authorization_code".to_string()),
                ("code", code.to_string()),
                ("redirect_uri", redirect_uri.to_string()),
                ("code_verifier", verifier.to_string()),
            ]);
        }
        Grant::Refresh { token, scope } => {
            pairs.extend([("grant_type", "refresh_token".to_string()), ("refresh_token", token.to_string())]);
            if let Some(s) = scope {
                pairs.push(("scope", s.to_string()));
            }
        }
    }
    let mut authorization = None;
    match (client.auth, &client.client_secret) {
        (ClientAuth::Basic, Some(secret)) => {
            let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", encode(&client.client_id), encode(secret));
            authorization = Some(format!("Basic {}", STANDARD.encode(pair)));
        }
        (ClientAuth::Post, Some(secret)) => {
            pairs.push(("client_id", client.client_id.clone()));
            pairs.push(("client_secret", secret.clone()));
        }
        _ => pairs.push(("client_id", client.client_id.clone())),
    }
    pairs.push(("resource", resource.to_string()));
    (pairs, authorization)
}

/// Requests tokens; the error names the status and the OAuth `error`.
pub async fn request(
    http: &OAuthHttp,
    endpoint: &Url,
    client: &Registration,
    resource: &str,
    grant: Grant<'_>,
) -> Result<Tokens, AuthError> {
    let (pairs, authorization) = form(client, resource, &grant);
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let request = match grant {
        Grant::Code { .. } => TokenRequest::Code,
        Grant::Refresh { .. } => TokenRequest::Refresh,
    };
    let answer = http
        .post_form(endpoint, &pairs, authorization.as_deref())
        .await
        .map_err(|e| AuthError::TokenUnreachable { request, cause: Box::new(e) })?;
    if !(200..300).contains(&answer.status) {
        return Err(AuthError::TokenRefused { request, refusal: answer.refusal() });
    }
    let doc = answer.json.ok_or(AuthError::TokenNotJson { request })?;
    let field = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    let token_type = field("token_type").unwrap_or_default();
    if !token_type.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::NotBearer { request, token_type });
    }
    let access = field("access_token").filter(|t| !t.is_empty()).ok_or(AuthError::NoAccessToken { request })?;
    Ok(Tokens { access, refresh: field("refresh_token") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(auth: ClientAuth, secret: Option<&str>) -> Registration {
        Registration { client_id: "id:1 é".into(), client_secret: secret.map(str::to_string), auth }
    }

    fn names(pairs: &[(&'static str, String)]) -> Vec<&'static str> {
        pairs.iter().map(|(k, _)| *k).collect()
    }

    #[test]
    fn each_client_authentication_method_sends_its_credentials_one_way() {
        let grant = Grant::Code { code: "c", redirect_uri: "http://127.0.0.1/cb", verifier: "v" };
        let (pairs, header) = form(&client(ClientAuth::Basic, Some("s p+")), "http://r", &grant);
        assert_eq!(names(&pairs), ["grant_type", "code", "redirect_uri", "code_verifier", "resource"]);
        // base64("id%3A1+%C3%A9:s+p%2B"), computed apart: printf 'id%%3A1+%%C3%%A9:s+p%%2B' | base64
        assert_eq!(header.as_deref(), Some("Basic aWQlM0ExKyVDMyVBOTpzK3AlMkI="));
        let (pairs, header) = form(&client(ClientAuth::Post, Some("s")), "http://r", &grant);
        assert_eq!(header, None);
        assert!(pairs.contains(&("client_id", "id:1 é".into())) && pairs.contains(&("client_secret", "s".into())));
        let (pairs, header) = form(&client(ClientAuth::None, Some("s")), "http://r", &grant);
        assert_eq!((header, names(&pairs).contains(&"client_secret")), (None, false));
        assert!(pairs.contains(&("client_id", "id:1 é".into())));
        let refresh = Grant::Refresh { token: "r", scope: Some("a b") };
        let (pairs, _) = form(&client(ClientAuth::None, None), "http://r", &refresh);
        assert_eq!(names(&pairs), ["grant_type", "refresh_token", "scope", "client_id", "resource"]);
    }
}
