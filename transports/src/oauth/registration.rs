//! Client registration, in the pages' priority order (2025-11-25 Client Registration
//! Approaches; 2026-07-28 client-registration): the host's pre-registered client, its
//! Client ID Metadata Document URL when the server accepts those, dynamic registration
//! (RFC 7591) when the server offers it. A registration belongs to the issuer that made it.

use super::OAuthConfig;
use super::discovery::ServerMetadata;
use super::http::OAuthHttp;
use serde_json::{Value, json};

/// The client's identity at one authorization server.
#[derive(Clone)]
pub struct Registration {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, for a confidential client.
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration").field("client_id", &self.client_id).finish_non_exhaustive()
    }
}

/// The client id to use at `server`, registering when that is the way.
pub async fn register(http: &OAuthHttp, config: &OAuthConfig, server: &ServerMetadata) -> Result<Registration, String> {
    if let Some(id) = &config.client_id {
        return Ok(Registration { client_id: id.clone(), client_secret: config.client_secret.clone() });
    }
    if let Some(url) = config.client_metadata_url.as_ref().filter(|_| server.client_id_metadata_documents) {
        return Ok(Registration { client_id: url.clone(), client_secret: None });
    }
    let Some(endpoint) = &server.registration_endpoint else {
        return Err("no client id: the authorization server offers no registration and none is configured".into());
    };
    let body = json!({
        "client_name": config.client_name,
        "redirect_uris": [config.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    });
    let answer =
        http.post_json(endpoint, &body).await.map_err(|e| format!("dynamic client registration failed: {e}"))?;
    if !(200..300).contains(&answer.status) {
        return Err(format!("dynamic client registration refused: {}", answer.describe()));
    }
    let field = |k: &str| answer.json.as_ref().and_then(|j| j.get(k)).and_then(Value::as_str).map(str::to_string);
    let client_id = field("client_id").ok_or("dynamic client registration answered no client_id")?;
    Ok(Registration { client_id, client_secret: field("client_secret") })
}
