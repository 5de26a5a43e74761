//! Discovery: the protected resource metadata (RFC 9728) that names the authorization
//! server, and that server's metadata (RFC 8414; OpenID Connect Discovery 1.0), each from
//! the URLs the revision's authorization page lists, in its order, and each validated
//! before use (`docs/authorization.md`, steps 2 and 3).

use super::Revision;
use super::error::AuthError;
use super::http::OAuthHttp;
use serde_json::Value;
use url::Url;

/// Protected resource metadata, validated.
#[derive(Debug, Clone)]
pub struct ResourceMetadata {
    /// `resource`, as published (one of the identifiers [`protected_resource`] accepts):
    /// the `resource` parameter of the authorization and token requests.
    pub resource: String,
    /// The authorization server chosen (the first listed, RFC 9728 §7.6).
    pub issuer: String,
    /// `scopes_supported`.
    pub scopes_supported: Vec<String>,
}

/// Authorization server metadata, validated.
#[derive(Debug, Clone)]
pub struct ServerMetadata {
    /// `issuer`, identical to the one the URL was built from.
    pub issuer: String,
    /// `authorization_endpoint`.
    pub authorization_endpoint: Url,
    /// `token_endpoint`.
    pub token_endpoint: Url,
    /// `registration_endpoint`, when the server offers dynamic registration.
    pub registration_endpoint: Option<Url>,
    /// `client_id_metadata_document_supported`.
    pub client_id_metadata_documents: bool,
    /// `authorization_response_iss_parameter_supported` (RFC 9207 §3).
    pub iss_parameter: bool,
    /// `token_endpoint_auth_methods_supported` (RFC 8414 §2); `None` when absent, which
    /// means `client_secret_basic` alone.
    pub token_endpoint_auth_methods: Option<Vec<String>>,
    /// The authorization server's `scopes_supported` (RFC 8414 §2): where `offline_access`
    /// is offered (step 5 of `docs/authorization.md`).
    pub scopes_supported: Vec<String>,
}

/// The canonical URI of the MCP server (RFC 8707 §2; the pages' Canonical Server URI):
/// lowercase scheme and host (the URL parser's form), no fragment, no trailing slash
/// when the path is only `/`.
pub fn canonical(endpoint: &Url) -> String {
    let mut u = endpoint.clone();
    u.set_fragment(None);
    let s = u.to_string();
    if u.path() == "/" && u.query().is_none() { s.trim_end_matches('/').to_string() } else { s }
}

/// The well-known URLs of the protected resource metadata, in the order the pages give:
/// at the endpoint's path, then at the root (the first is left out for an endpoint at the
/// root).
pub fn resource_metadata_urls(endpoint: &Url) -> Vec<Url> {
    let path = endpoint.path().trim_end_matches('/');
    let mut urls = Vec::new();
    let base = origin(endpoint);
    if !path.is_empty() {
        urls.extend(Url::parse(&format!("{base}/.well-known/oauth-protected-resource{path}")));
    }
    urls.extend(Url::parse(&format!("{base}/.well-known/oauth-protected-resource")));
    urls
}

/// The well-known URLs of an issuer's metadata for `revision`, in the page's order.
pub fn server_metadata_urls(issuer: &Url, revision: Revision) -> Vec<Url> {
    let base = origin(issuer);
    let path = issuer.path().trim_end_matches('/');
    let candidates: Vec<String> = match revision {
        Revision::Base2025_03 => vec![format!("{base}/.well-known/oauth-authorization-server")],
        Revision::Rfc8414Only => vec![format!("{base}/.well-known/oauth-authorization-server{path}")],
        Revision::Current if path.is_empty() => vec![
            format!("{base}/.well-known/oauth-authorization-server"),
            format!("{base}/.well-known/openid-configuration"),
        ],
        Revision::Current => vec![
            format!("{base}/.well-known/oauth-authorization-server{path}"),
            format!("{base}/.well-known/openid-configuration{path}"),
            format!("{base}{path}/.well-known/openid-configuration"),
        ],
    };
    candidates.iter().filter_map(|c| Url::parse(c).ok()).collect()
}

fn origin(u: &Url) -> String {
    u.origin().ascii_serialization()
}

/// Finds and validates the protected resource metadata for `endpoint`: the challenge's
/// `resource_metadata` URL when given, else the well-known URLs in order.
pub async fn protected_resource(
    http: &OAuthHttp,
    endpoint: &Url,
    from_challenge: Option<&str>,
) -> Result<ResourceMetadata, AuthError> {
    let urls = match from_challenge {
        Some(u) => vec![Url::parse(u).map_err(|_| AuthError::ResourceMetadataNotAUrl { given: u.to_string() })?],
        None => resource_metadata_urls(endpoint),
    };
    let mut tried = Vec::new();
    for url in urls {
        tried.push(url.to_string());
        let Some(doc) = http.get_json(&url, None).await? else { continue };
        return validate_resource(&doc, endpoint, &url);
    }
    Err(AuthError::NoResourceMetadata { tried })
}

/// RFC 9728 §3.3: the document's `resource` must be the resource identifier its URL was
/// built from, else it is not used. That is this endpoint (the pages' MCP server), and for
/// the root well-known URL also the origin alone: the identifier "into which the
/// well-known URI path suffix was inserted" to make that URL.
fn validate_resource(doc: &Value, endpoint: &Url, fetched_from: &Url) -> Result<ResourceMetadata, AuthError> {
    let resource = doc.get("resource").and_then(Value::as_str).unwrap_or_default();
    let here = canonical(endpoint);
    let at_root = fetched_from.origin() == endpoint.origin()
        && fetched_from.path() == "/.well-known/oauth-protected-resource"
        && fetched_from.query().is_none();
    let root_identifier = at_root && resource == origin(endpoint);
    if resource != here && resource != endpoint.as_str() && !root_identifier {
        return Err(AuthError::ForeignResource { named: resource.to_string(), endpoint: here });
    }
    let issuer = doc
        .get("authorization_servers")
        .and_then(Value::as_array)
        .and_then(|a| a.iter().find_map(Value::as_str))
        .ok_or(AuthError::NoAuthorizationServers)?
        .to_string();
    let scopes_supported = strings(doc.get("scopes_supported"));
    Ok(ResourceMetadata { resource: resource.to_string(), issuer, scopes_supported })
}

/// Finds and validates the authorization server's metadata. `None` on 2025-03-26 when
/// every URL is missing: the page's default endpoints apply.
pub async fn authorization_server(
    http: &OAuthHttp,
    issuer: &str,
    revision: Revision,
) -> Result<Option<ServerMetadata>, AuthError> {
    let issuer_url = Url::parse(issuer).map_err(|_| AuthError::IssuerNotAUrl { issuer: issuer.to_string() })?;
    let version = (revision == Revision::Base2025_03).then_some("2025-03-26");
    let mut tried = Vec::new();
    for url in server_metadata_urls(&issuer_url, revision) {
        tried.push(url.to_string());
        let Some(doc) = http.get_json(&url, version).await? else { continue };
        return validate_server(&doc, issuer, revision).map(Some);
    }
    if revision == Revision::Base2025_03 {
        return Ok(None);
    }
    Err(AuthError::NoServerMetadata { tried })
}

/// RFC 8414 §3.3 (issuer), the PKCE rule of the revision, and the endpoints' scheme.
fn validate_server(doc: &Value, issuer: &str, revision: Revision) -> Result<ServerMetadata, AuthError> {
    let claimed = doc.get("issuer").and_then(Value::as_str).unwrap_or_default();
    if claimed != issuer {
        return Err(AuthError::IssuerMismatch { claimed: claimed.to_string(), issuer: issuer.to_string() });
    }
    let methods = doc.get("code_challenge_methods_supported").map(|m| strings(Some(m)));
    match (&methods, revision) {
        (None, Revision::Current) => return Err(AuthError::PkceUnadvertised),
        (Some(m), _) if !m.iter().any(|m| m == "S256") => return Err(AuthError::NoS256 { methods: m.clone() }),
        _ => {}
    }
    let endpoint = |name: &str| -> Result<Option<Url>, AuthError> {
        match doc.get(name).and_then(Value::as_str) {
            None => Ok(None),
            Some(s) => secure(s)
                .map(Some)
                .map_err(|why| AuthError::BadEndpoint { field: name.to_string(), problem: Box::new(why) }),
        }
    };
    Ok(ServerMetadata {
        issuer: claimed.to_string(),
        authorization_endpoint: endpoint("authorization_endpoint")?
            .ok_or(AuthError::MissingEndpoint { field: "authorization_endpoint" })?,
        token_endpoint: endpoint("token_endpoint")?.ok_or(AuthError::MissingEndpoint { field: "token_endpoint" })?,
        registration_endpoint: endpoint("registration_endpoint")?,
        client_id_metadata_documents: doc.get("client_id_metadata_document_supported") == Some(&Value::Bool(true)),
        iss_parameter: doc.get("authorization_response_iss_parameter_supported") == Some(&Value::Bool(true)),
        token_endpoint_auth_methods: doc.get("token_endpoint_auth_methods_supported").map(|m| strings(Some(m))),
        scopes_supported: strings(doc.get("scopes_supported")),
    })
}

/// The page's default endpoints at the authorization base URL (2025-03-26, Fallbacks for
/// Servers without Metadata Discovery).
pub fn default_endpoints(base: &Url) -> Result<ServerMetadata, AuthError> {
    let at = |p: &str| secure(&format!("{}{p}", origin(base)));
    Ok(ServerMetadata {
        issuer: origin(base),
        authorization_endpoint: at("/authorize")?,
        token_endpoint: at("/token")?,
        registration_endpoint: Some(at("/register")?),
        client_id_metadata_documents: false,
        iss_parameter: false,
        token_endpoint_auth_methods: None,
        scopes_supported: Vec::new(),
    })
}

/// An authorization server URL: `https`, or `http` on a loopback host (this project's
/// mocks; "All authorization server endpoints MUST be served over HTTPS").
pub fn secure(raw: &str) -> Result<Url, AuthError> {
    let url = Url::parse(raw).map_err(|_| AuthError::NotAUrl { raw: raw.to_string() })?;
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        _ => Err(AuthError::NotHttps { origin: url.origin().ascii_serialization() }),
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("url")
    }

    fn strs(urls: Vec<Url>) -> Vec<String> {
        urls.into_iter().map(|u| u.to_string()).collect()
    }

    #[test]
    fn well_known_urls_in_each_pages_order() {
        assert_eq!(
            strs(resource_metadata_urls(&url("https://h.test/public/mcp"))),
            [
                "https://h.test/.well-known/oauth-protected-resource/public/mcp",
                "https://h.test/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            strs(resource_metadata_urls(&url("https://h.test/"))),
            ["https://h.test/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            strs(server_metadata_urls(&url("https://a.test/tenant1"), Revision::Current)),
            [
                "https://a.test/.well-known/oauth-authorization-server/tenant1",
                "https://a.test/.well-known/openid-configuration/tenant1",
                "https://a.test/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            strs(server_metadata_urls(&url("https://a.test"), Revision::Current)),
            [
                "https://a.test/.well-known/oauth-authorization-server",
                "https://a.test/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            strs(server_metadata_urls(&url("https://a.test/t"), Revision::Rfc8414Only)),
            ["https://a.test/.well-known/oauth-authorization-server/t"]
        );
        assert_eq!(canonical(&url("HTTPS://H.test/")), "https://h.test");
        assert_eq!(canonical(&url("https://h.test/mcp#x")), "https://h.test/mcp");
    }

    #[test]
    fn metadata_is_validated_before_use() {
        let here = url("http://127.0.0.1:9/mcp");
        let at_path = url("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp");
        let at_root = url("http://127.0.0.1:9/.well-known/oauth-protected-resource");
        let prm = json!({"resource": "http://127.0.0.1:9/mcp", "authorization_servers": ["http://127.0.0.1:9"]});
        assert_eq!(validate_resource(&prm, &here, &at_path).expect("valid").issuer, "http://127.0.0.1:9");
        assert!(validate_resource(&prm, &here, &at_root).is_ok());
        let other = json!({"resource": "http://localhost:9/mcp", "authorization_servers": ["http://127.0.0.1:9"]});
        assert!(
            validate_resource(&other, &here, &at_path)
                .expect_err("other resource")
                .to_string()
                .contains("not http://127.0.0.1:9/mcp")
        );
        // The origin is the identifier of the root well-known URL only (RFC 9728 §3.3).
        let origin_wide = json!({"resource": "http://127.0.0.1:9", "authorization_servers": ["http://127.0.0.1:9"]});
        let read = validate_resource(&origin_wide, &here, &at_root).expect("the root identifier");
        assert_eq!(read.resource, "http://127.0.0.1:9");
        assert!(validate_resource(&origin_wide, &here, &at_path).is_err());
        let elsewhere = url("http://127.0.0.1:8/.well-known/oauth-protected-resource");
        assert!(validate_resource(&origin_wide, &here, &elsewhere).is_err());
        let meta = json!({"issuer": "http://127.0.0.1:9", "authorization_endpoint": "http://127.0.0.1:9/authorize",
            "token_endpoint": "http://127.0.0.1:9/token", "code_challenge_methods_supported": ["S256"]});
        assert!(validate_server(&meta, "http://127.0.0.1:9", Revision::Current).is_ok());
        assert!(
            validate_server(&meta, "http://127.0.0.1:9/t", Revision::Current)
                .expect_err("issuer")
                .to_string()
                .contains("claims issuer")
        );
        let mut no_pkce = meta.clone();
        no_pkce.as_object_mut().expect("object").remove("code_challenge_methods_supported");
        assert!(
            validate_server(&no_pkce, "http://127.0.0.1:9", Revision::Current)
                .expect_err("pkce")
                .to_string()
                .contains("refuses to proceed")
        );
        assert!(validate_server(&no_pkce, "http://127.0.0.1:9", Revision::Rfc8414Only).is_ok());
        let mut plain = meta.clone();
        plain["code_challenge_methods_supported"] = json!(["plain"]);
        assert!(validate_server(&plain, "http://127.0.0.1:9", Revision::Rfc8414Only).is_err());
        let read = validate_server(&meta, "http://127.0.0.1:9", Revision::Current).expect("valid");
        assert_eq!((read.token_endpoint_auth_methods, read.scopes_supported), (None, vec![]));
        let mut listed = meta.clone();
        listed["token_endpoint_auth_methods_supported"] = json!(["client_secret_post"]);
        listed["scopes_supported"] = json!(["mcp", "offline_access"]);
        let read = validate_server(&listed, "http://127.0.0.1:9", Revision::Current).expect("valid");
        assert_eq!(read.token_endpoint_auth_methods, Some(vec!["client_secret_post".to_string()]));
        assert_eq!(read.scopes_supported, ["mcp", "offline_access"]);
        assert!(secure("http://auth.test/token").is_err());
        assert!(secure("https://auth.test/token").is_ok() && secure("http://localhost:1/t").is_ok());
    }
}
