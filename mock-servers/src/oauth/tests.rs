//! The authorization server end to end, as a client meets it, without a socket.

use super::token::pkce_matches;
use super::*;
use mcp_scenario::script::step::{AuthorizationServer, Registration, TokenFault, WellKnown};
use serde_json::{Value, json};

const ORIGIN: &str = "http://127.0.0.1:4000";
/// A verifier and its S256 challenge computed apart from this code
/// (`printf %s VERIFIER | openssl dgst -sha256 -binary | base64 | tr +/ -_ | tr -d =`).
const VERIFIER: &str = "dBjftJeZ4CVP-mJ0kz5FauWOVHoaYGlGHBO8K5i2sHo";
const CHALLENGE: &str = "c7vg9dpkn8SbdXMYnhzgjUNH3yAe_eAt3ZjgTQ-XF8Q";

fn conformant() -> AuthorizationServer {
    serde_json::from_value(json!({})).expect("defaults")
}

fn body(a: &Answer) -> Value {
    serde_json::from_slice(&a.body).expect("json")
}

fn header<'a>(a: &'a Answer, name: &str) -> &'a str {
    a.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or_default()
}

/// Registers, authorizes and exchanges the code; returns the token answer.
fn flow(s: &AuthServer, resource: Option<&str>) -> Answer {
    let reg = s.handle("POST", "/register", br#"{"redirect_uris":["http://127.0.0.1/cb"]}"#).expect("register");
    assert_eq!(reg.status, 201);
    let client = body(&reg)["client_id"].as_str().expect("client_id").to_string();
    let mut q = format!(
        "/authorize?response_type=code&client_id={client}&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_challenge={CHALLENGE}&code_challenge_method=S256&state=s1&scope=a"
    );
    if let Some(r) = resource {
        q.push_str(&format!("&resource={}", url::form_urlencoded::byte_serialize(r.as_bytes()).collect::<String>()));
    }
    let auth = s.handle("GET", &q, b"").expect("authorize");
    assert_eq!(auth.status, 302, "{auth:?}");
    let location = url::Url::parse(header(&auth, "location")).expect("location");
    assert_eq!(location.path(), "/cb");
    let pairs: std::collections::BTreeMap<_, _> = location.query_pairs().into_owned().collect();
    assert_eq!(pairs.get("state").map(String::as_str), Some("s1"));
    let code = pairs.get("code").expect("code");
    let form = format!(
        "grant_type=authorization_code&code={code}&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&client_id={client}&code_verifier={VERIFIER}"
    );
    s.handle("POST", "/token", form.as_bytes()).expect("token")
}

#[test]
fn pkce_s256_matches_an_independently_computed_challenge() {
    assert!(pkce_matches(VERIFIER, CHALLENGE));
    assert!(!pkce_matches(VERIFIER, "c7vg9dpkn8SbdXMYnhzgjUNH3yAe_eAt3ZjgTQ-XF8R"));
    assert!(!pkce_matches("short", CHALLENGE));
}

#[test]
fn metadata_at_every_location_and_404_where_missing() {
    let mut c = conformant();
    c.issuer_path = Some("/tenant1".into());
    c.missing = vec![WellKnown::Oauth];
    let s = AuthServer::new(c, ORIGIN);
    let prm = s.handle("GET", "/.well-known/oauth-protected-resource/mcp", b"").expect("prm");
    assert_eq!(body(&prm)["resource"], json!("http://127.0.0.1:4000/mcp"));
    assert_eq!(body(&prm)["authorization_servers"], json!(["http://127.0.0.1:4000/tenant1"]));
    assert_eq!(s.handle("GET", "/.well-known/oauth-protected-resource", b"").map(|a| a.status), Some(200));
    assert_eq!(s.handle("GET", "/.well-known/oauth-authorization-server/tenant1", b"").map(|a| a.status), Some(404));
    let oidc = s.handle("GET", "/.well-known/openid-configuration/tenant1", b"").expect("oidc");
    assert_eq!(body(&oidc)["issuer"], json!("http://127.0.0.1:4000/tenant1"));
    assert_eq!(body(&oidc)["code_challenge_methods_supported"], json!(["S256"]));
    // OpenID Connect Discovery 1.0 §3's REQUIRED members, which OAuth metadata lacks.
    assert_eq!(body(&oidc)["jwks_uri"], json!("http://127.0.0.1:4000/jwks"));
    assert_eq!(body(&oidc)["subject_types_supported"], json!(["public"]));
    assert_eq!(body(&oidc)["id_token_signing_alg_values_supported"], json!(["RS256"]));
    let appended = s.handle("GET", "/tenant1/.well-known/openid-configuration", b"").expect("oidc appended");
    assert_eq!(body(&appended)["subject_types_supported"], json!(["public"]));
    assert_eq!(s.handle("GET", "/.well-known/oauth-authorization-server", b"").map(|a| a.status), Some(404));
    assert!(s.handle("POST", "/mcp", b"{}").is_none());
}

#[test]
fn a_conformant_flow_yields_a_token_the_endpoint_takes_only_for_its_resource() {
    let s = AuthServer::new(conformant(), ORIGIN);
    let refused = s.guard(None, Some("initialize")).expect("401");
    assert_eq!(refused.status, 401);
    assert_eq!(
        header(&refused, "www-authenticate"),
        "Bearer resource_metadata=\"http://127.0.0.1:4000/.well-known/oauth-protected-resource/mcp\""
    );
    let token = flow(&s, Some("http://127.0.0.1:4000/mcp"));
    assert_eq!(token.status, 200, "{token:?}");
    let t = body(&token);
    assert_eq!((t["token_type"].as_str(), t["scope"].as_str()), (Some("Bearer"), Some("a")));
    let bearer = format!("Bearer {}", t["access_token"].as_str().expect("token"));
    assert_eq!(s.guard(Some(&bearer), Some("tools/list")), None);
    // Without `resource` the token is for no one in particular: the endpoint refuses it.
    let other = flow(&s, None);
    let bearer = format!("Bearer {}", body(&other)["access_token"].as_str().expect("token"));
    let refused = s.guard(Some(&bearer), Some("tools/list")).expect("401");
    assert!(header(&refused, "www-authenticate").starts_with("Bearer error=\"invalid_token\""));
}

#[test]
fn a_wrong_verifier_or_a_reused_code_is_invalid_grant() {
    let s = AuthServer::new(conformant(), ORIGIN);
    let reg = s.handle("POST", "/register", br#"{"redirect_uris":["http://127.0.0.1/cb"]}"#).expect("register");
    let client = body(&reg)["client_id"].as_str().expect("id").to_string();
    let q = format!(
        "/authorize?response_type=code&client_id={client}&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_challenge={CHALLENGE}&code_challenge_method=S256"
    );
    let loc = header(&s.handle("GET", &q, b"").expect("authorize"), "location").to_string();
    let code =
        url::Url::parse(&loc).expect("url").query_pairs().find(|(k, _)| k == "code").expect("code").1.to_string();
    let wrong = "x".repeat(43);
    let form = |v: &str| {
        format!(
            "grant_type=authorization_code&code={code}&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&client_id={client}&code_verifier={v}"
        )
    };
    let a = s.handle("POST", "/token", form(&wrong).as_bytes()).expect("token");
    assert_eq!((a.status, body(&a)["error"].as_str()), (400, Some("invalid_grant")));
    // The code was spent by the failed attempt (one-time), so the right verifier is late.
    let a = s.handle("POST", "/token", form(VERIFIER).as_bytes()).expect("token");
    assert_eq!(body(&a)["error_description"], json!("unknown or used code"));
    // Without S256 the authorize request is refused in the redirect.
    let plain = q.replace("S256", "plain");
    let loc = header(&s.handle("GET", &plain, b"").expect("authorize"), "location").to_string();
    assert!(loc.contains("error=invalid_request"), "{loc}");
}

#[test]
fn refresh_tokens_rotate_and_a_used_one_is_refused() {
    let s = AuthServer::new(conformant(), ORIGIN);
    let t = body(&flow(&s, Some("http://127.0.0.1:4000/mcp")));
    let (access, refresh) = (t["access_token"].as_str().expect("a"), t["refresh_token"].as_str().expect("r"));
    s.expire_tokens();
    let refused = s.guard(Some(&format!("Bearer {access}")), None).expect("expired");
    assert_eq!(refused.why, "auth required (token expired)");
    let form = |r: &str| format!("grant_type=refresh_token&refresh_token={r}&client_id=client-1");
    let fresh = body(&s.handle("POST", "/token", form(refresh).as_bytes()).expect("refresh"));
    assert_ne!(fresh["refresh_token"].as_str(), Some(refresh));
    assert_eq!(s.guard(Some(&format!("Bearer {}", fresh["access_token"].as_str().expect("a"))), None), None);
    let again = s.handle("POST", "/token", form(refresh).as_bytes()).expect("reuse");
    assert_eq!(body(&again)["error_description"], json!("refresh token already used (rotated)"));
}

#[test]
fn step_up_scopes_and_grants() {
    let mut c = conformant();
    c.method_scopes.insert("tools/call".into(), "files:write".into());
    c.grants = Some(vec!["a".into()]);
    let s = AuthServer::new(c, ORIGIN);
    let t = body(&flow(&s, Some("http://127.0.0.1:4000/mcp")));
    let bearer = format!("Bearer {}", t["access_token"].as_str().expect("a"));
    assert_eq!(s.guard(Some(&bearer), Some("tools/list")), None);
    let refused = s.guard(Some(&bearer), Some("tools/call")).expect("403");
    assert_eq!(refused.status, 403);
    assert!(
        header(&refused, "www-authenticate").starts_with("Bearer error=\"insufficient_scope\", scope=\"files:write\"")
    );
}

#[test]
fn registration_and_token_faults() {
    let mut c = conformant();
    c.registration = Registration::Refused;
    c.token_fault = Some(TokenFault { status: Some(500), delay_ms: Some(5), times: Some(1), grant_type: None });
    c.resource_metadata = false;
    c.challenge_scope = Some("mcp".into());
    let s = AuthServer::new(c, ORIGIN);
    assert_eq!(s.handle("POST", "/register", b"{}").map(|a| a.status), Some(400));
    let a = s.handle("POST", "/token", b"grant_type=refresh_token&refresh_token=x").expect("token");
    assert_eq!((a.status, a.delay), (500, Some(std::time::Duration::from_millis(5))));
    let a = s.handle("POST", "/token", b"grant_type=refresh_token&refresh_token=x").expect("token");
    assert_eq!((a.status, a.delay), (400, None));
    assert_eq!(header(&s.guard(None, None).expect("401"), "www-authenticate"), "Bearer scope=\"mcp\"");
    assert!(
        is_oauth_path("/token?x") && is_oauth_path("/t/.well-known/openid-configuration") && !is_oauth_path("/mcp")
    );
}

#[test]
fn the_redirect_can_carry_another_state_or_none() {
    use mcp_scenario::script::step::ReturnedState;
    let returned = |returned_state: ReturnedState| {
        let s = AuthServer::new(AuthorizationServer { returned_state, ..conformant() }, ORIGIN);
        let reg = s.handle("POST", "/register", br#"{"redirect_uris":["http://127.0.0.1/cb"]}"#).expect("register");
        let client = body(&reg)["client_id"].as_str().expect("client_id").to_string();
        let q = format!(
            "/authorize?response_type=code&client_id={client}&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_challenge={CHALLENGE}&code_challenge_method=S256&state=s1"
        );
        let auth = s.handle("GET", &q, b"").expect("authorize");
        let location = url::Url::parse(header(&auth, "location")).expect("location");
        let pairs: std::collections::BTreeMap<_, _> = location.query_pairs().into_owned().collect();
        assert!(pairs.contains_key("code"), "{pairs:?}");
        pairs.get("state").cloned()
    };
    assert_eq!(returned(ReturnedState::Echo).as_deref(), Some("s1"));
    assert_eq!(returned(ReturnedState::Altered).as_deref(), Some("not-s1"));
    assert_eq!(returned(ReturnedState::Omitted), None);
}
