//! The client's OAuth identity: what the bundled transports' authorization client
//! (`mcp_transports::oauth`, rules in `docs/authorization.md`) is configured with, from the
//! command line by hand or from `MCP_CONFORMANCE_CONTEXT` in a conformance run.
//!
//! The user-interaction step is [`follow_redirect`]: the client GETs the authorization URL
//! itself and takes the redirect the authorization server answers at once. That suits the
//! suite's scenario servers and other headless authorization servers; one that shows a
//! login page to a person is out of this client's reach (it says so: the authorization
//! endpoint "answered HTTP 200 instead of redirecting").

use crate::error::ClientError;
use mcp_transports::oauth::{ClientIdentity, OAuthConfig, follow_redirect};
use serde_json::Value;
use std::time::Duration;

/// The Client ID Metadata Document URL a conformance run identifies with when the context
/// names none: the suite's test client identity, the same for every scenario (its example
/// clients use it, and a scenario server that accepts metadata documents expects it as the
/// `client_id`). The URL is never fetched by the client.
pub const CONFORMANCE_CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The context members this client reads; others are named in a warning, never dropped
/// silently.
const CONTEXT_MEMBERS: &[&str] = &["name", "toolCalls", "client_id", "client_secret", "issuer", "client_metadata_url"];

/// Who the client is to an authorization server: the transports' own type, so the client
/// hands the authorization client exactly what it was given.
pub type Identity = ClientIdentity;

/// The identity a conformance run's context gives (`client_id`, `client_secret`, `issuer`
/// for pre-registration; `client_metadata_url`), with [`CONFORMANCE_CLIENT_METADATA_URL`]
/// when the context names no metadata document. The second value names the context members
/// this client does not read.
pub fn from_context(context: Option<&Value>) -> Result<(Identity, Vec<String>), ClientError> {
    let empty = serde_json::Map::new();
    let members = match context {
        None => &empty,
        Some(Value::Object(members)) => members,
        Some(_) => return Err(ClientError::BadContext("must be a JSON object".into())),
    };
    let text = |name: &str| -> Result<Option<String>, ClientError> {
        match members.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ClientError::BadContext(format!("{name} must be a string"))),
        }
    };
    let identity = Identity {
        client_id: text("client_id")?,
        client_secret: text("client_secret")?,
        client_issuer: text("issuer")?,
        client_metadata_url: Some(
            text("client_metadata_url")?.unwrap_or_else(|| CONFORMANCE_CLIENT_METADATA_URL.to_owned()),
        ),
        scopes: Vec::new(),
    };
    if identity.client_secret.is_some() && identity.client_id.is_none() {
        return Err(ClientError::BadContext("client_secret without client_id".into()));
    }
    let unread = members.keys().filter(|k| !CONTEXT_MEMBERS.contains(&k.as_str())).cloned().collect();
    Ok((identity, unread))
}

/// The transports' authorization client for `identity`, with [`follow_redirect`] (bounded
/// by `timeout`) as its user-interaction step.
pub fn oauth_config(identity: &Identity, timeout: Option<Duration>) -> OAuthConfig {
    let mut config = OAuthConfig::new(follow_redirect(timeout));
    config.identity = identity.clone();
    config.client_name = env!("CARGO_PKG_NAME").into();
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_context_gives_pre_registered_credentials_bound_to_their_issuer() {
        let context = json!({"name": "s", "client_id": "c", "client_secret": "s3", "issuer": "http://as", "extra": 1});
        let (identity, unread) = from_context(Some(&context)).expect("valid context");
        assert_eq!(identity.client_id.as_deref(), Some("c"));
        assert_eq!(identity.client_secret.as_deref(), Some("s3"));
        assert_eq!(identity.client_issuer.as_deref(), Some("http://as"));
        assert_eq!(identity.client_metadata_url.as_deref(), Some(CONFORMANCE_CLIENT_METADATA_URL));
        assert_eq!(unread, ["extra"]);
        assert!(!format!("{identity:?}").contains("s3"));
        let config = oauth_config(&identity, None);
        assert_eq!(config.identity, identity);
    }

    #[test]
    fn a_context_without_credentials_still_names_the_metadata_document() {
        let (identity, unread) = from_context(None).expect("no context");
        assert_eq!((identity.client_id, unread.len()), (None, 0));
        assert_eq!(identity.client_metadata_url.as_deref(), Some(CONFORMANCE_CLIENT_METADATA_URL));
        let own = json!({"client_metadata_url": "https://c.test/m.json"});
        let (identity, _) = from_context(Some(&own)).expect("valid");
        assert_eq!(identity.client_metadata_url.as_deref(), Some("https://c.test/m.json"));
    }

    #[test]
    fn a_context_of_the_wrong_shape_is_refused_with_its_member_named() {
        let bad = from_context(Some(&json!({"client_id": 7}))).expect_err("not a string");
        assert!(bad.to_string().contains("client_id must be a string"), "{bad}");
        let bad = from_context(Some(&json!({"client_secret": "s"}))).expect_err("no id");
        assert!(bad.to_string().contains("without client_id"), "{bad}");
        assert!(from_context(Some(&json!([]))).is_err());
    }
}
