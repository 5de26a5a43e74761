//! The token endpoint (OAuth 2.1 §3.2): the `authorization_code` grant with the PKCE
//! verifier, the `refresh_token` grant, both with `resource` (RFC 8707), and reading the
//! answer: a `Bearer` access token, perhaps a (rotated) refresh token.

use super::http::OAuthHttp;
use super::registration::Registration;
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

/// Requests tokens; the error names the status and the OAuth `error`.
pub async fn request(
    http: &OAuthHttp,
    endpoint: &Url,
    client: &Registration,
    resource: &str,
    grant: Grant<'_>,
) -> Result<Tokens, String> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    match &grant {
        Grant::Code { code, redirect_uri, verifier } => {
            pairs.extend([
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", redirect_uri),
                ("code_verifier", verifier),
            ]);
        }
        Grant::Refresh { token, scope } => {
            pairs.extend([("grant_type", "refresh_token"), ("refresh_token", token)]);
            if let Some(s) = scope {
                pairs.push(("scope", s));
            }
        }
    }
    pairs.push(("client_id", &client.client_id));
    if let Some(secret) = &client.client_secret {
        pairs.push(("client_secret", secret));
    }
    pairs.push(("resource", resource));
    let what = match grant {
        Grant::Code { .. } => "the token request",
        Grant::Refresh { .. } => "the refresh request",
    };
    let answer = http.post_form(endpoint, &pairs).await.map_err(|e| format!("{what} failed: {e}"))?;
    if !(200..300).contains(&answer.status) {
        return Err(format!("{what} was refused: {}", answer.describe()));
    }
    let doc = answer.json.ok_or_else(|| format!("{what} answered a body that is not JSON"))?;
    let field = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    let kind = field("token_type").unwrap_or_default();
    if !kind.eq_ignore_ascii_case("bearer") {
        return Err(format!("{what} answered token_type {kind:?}, not Bearer"));
    }
    let access =
        field("access_token").filter(|t| !t.is_empty()).ok_or_else(|| format!("{what} answered no access_token"))?;
    Ok(Tokens { access, refresh: field("refresh_token") })
}
