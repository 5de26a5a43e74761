//! The OAuth client end to end against a wiremock resource and authorization server: a
//! 401 runs discovery, registration, the host's authorization step and the token request,
//! and the request is re-sent once with the token; a 401 with a token held refreshes it;
//! metadata for another resource stops the flow before any authorization step.

use mcp_transports::config::TransportKind;
use mcp_transports::http::HttpTransport;
use mcp_transports::oauth::{AuthorizeCallback, OAuthConfig};
use mcp_transports::{Handlers, RequestOptions, Transport};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use url::Url;
use wiremock::matchers::{body_string_contains, header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// A host step that approves at once: it answers the redirect with a code and the state
/// the authorization URL carries, after checking what that URL asks for.
fn approve(seen: Arc<AtomicUsize>) -> AuthorizeCallback {
    Arc::new(move |url: Url| {
        let seen = seen.clone();
        Box::pin(async move {
            seen.fetch_add(1, Ordering::SeqCst);
            let q: std::collections::BTreeMap<String, String> = url.query_pairs().into_owned().collect();
            assert_eq!(q.get("code_challenge_method").map(String::as_str), Some("S256"));
            assert_eq!(q.get("code_challenge").map(String::len), Some(43));
            assert!(q["resource"].ends_with("/mcp"), "{q:?}");
            let state = q.get("state").cloned().unwrap_or_default();
            Ok(Url::parse(&format!("http://127.0.0.1/callback?code=c-1&state={state}")).expect("url"))
        })
    })
}

async fn server_with_metadata(resource: &str) -> MockServer {
    let s = MockServer::start().await;
    let o = s.uri();
    let resource = resource.replace("{origin}", &o);
    let protected_resource = json!({"resource": resource, "authorization_servers": [o]});
    serve_document(&s, "/.well-known/oauth-protected-resource/mcp", protected_resource).await;
    let authorization_server = json!({
        "issuer": o, "authorization_endpoint": format!("{o}/authorize"), "token_endpoint": format!("{o}/token"),
        "registration_endpoint": format!("{o}/register"), "code_challenge_methods_supported": ["S256"]});
    serve_document(&s, "/.well-known/oauth-authorization-server", authorization_server).await;
    Mock::given(method("POST"))
        .and(path("/register"))
        .and(body_string_contains("\"application_type\":\"native\""))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"client_id": "client-9"})))
        .mount(&s)
        .await;
    s
}

/// Answers every GET of `at` on `s` with the JSON `document` (a metadata document).
async fn serve_document(s: &MockServer, at: &str, document: Value) {
    Mock::given(method("GET"))
        .and(path(at))
        .respond_with(ResponseTemplate::new(200).set_body_json(document))
        .mount(s)
        .await;
}

/// A token endpoint's answer: `access` of `token_type`, with the `refresh` token.
fn tokens(access: &str, token_type: &str, refresh: &str) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .set_body_json(json!({"access_token": access, "token_type": token_type, "refresh_token": refresh}))
}

/// A transport to `<origin>/mcp` with OAuth on, and how many authorization steps it asked for.
async fn connect_counting(origin: &str) -> (Arc<HttpTransport>, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let t = HttpTransport::connect(
        &config(&format!("{origin}/mcp"), OAuthConfig::new(approve(seen.clone()))),
        Handlers::default(),
    )
    .await
    .expect("connect");
    (t, seen)
}

fn config(url: &str, oauth: OAuthConfig) -> mcp_transports::TransportConfig {
    mcp_transports::TransportConfig {
        kind: TransportKind::Http,
        url: url.into(),
        timeout_ms: Some(3000),
        protocol_version: "2025-11-25".into(),
        timeout_env_override: Some(None),
        oauth: Some(oauth),
        ..Default::default()
    }
}

/// Answers POSTs to `/mcp` that carry the bearer `token` (`times` at most, ahead of every other
/// answer, when given) with a result.
async fn answered_with(s: &MockServer, token: &str, times: Option<u64>) {
    let answered = Mock::given(method("POST"))
        .and(path("/mcp"))
        .and(header("authorization", format!("Bearer {token}")))
        .respond_with(ok);
    match times {
        Some(n) => answered.up_to_n_times(n).with_priority(1).mount(s).await,
        None => answered.mount(s).await,
    }
}

fn ok(r: &Request) -> ResponseTemplate {
    let id = serde_json::from_slice::<Value>(&r.body).map(|v| v["id"].clone()).unwrap_or(Value::Null);
    ResponseTemplate::new(200).set_body_json(json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}}))
}

#[tokio::test]
async fn a_401_authorizes_and_resends_and_a_later_401_refreshes() {
    let s = server_with_metadata("{origin}/mcp").await;
    let o = s.uri();
    let challenge = format!("Bearer resource_metadata=\"{o}/.well-known/oauth-protected-resource/mcp\"");
    Mock::given(method("POST"))
        .and(path("/token"))
        .and(body_string_contains("grant_type=authorization_code"))
        .and(body_string_contains("code=c-1"))
        .and(body_string_contains("code_verifier="))
        .and(body_string_contains(format!("resource={}", url_encode(&format!("{o}/mcp")))))
        .respond_with(tokens("at-1", "bearer", "rt-1"))
        .mount(&s)
        .await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .and(body_string_contains("grant_type=refresh_token"))
        .and(body_string_contains("refresh_token=rt-1"))
        .respond_with(tokens("at-2", "Bearer", "rt-2"))
        .mount(&s)
        .await;
    answered_with(&s, "at-2", None).await;
    // at-1 works once, then it has expired.
    answered_with(&s, "at-1", Some(1)).await;
    Mock::given(method("POST"))
        .and(path("/mcp"))
        .respond_with(ResponseTemplate::new(401).insert_header("www-authenticate", challenge.as_str()))
        .with_priority(10)
        .mount(&s)
        .await;
    let (t, seen) = connect_counting(&o).await;
    assert_eq!(t.request("a", None, RequestOptions::default()).await.expect("authorized"), json!({"ok": true}));
    assert_eq!(t.request("b", None, RequestOptions::default()).await.expect("refreshed"), json!({"ok": true}));
    assert_eq!(seen.load(Ordering::SeqCst), 1, "a refresh needs no new authorization step");
    let token_requests =
        s.received_requests().await.unwrap_or_default().iter().filter(|r| r.url.path() == "/token").count();
    assert_eq!(token_requests, 2);
    // No OAuth request carried the access token.
    for r in s.received_requests().await.unwrap_or_default() {
        if r.url.path() != "/mcp" {
            assert!(!r.headers.contains_key("authorization"), "{} carried a token", r.url);
        }
    }
}

#[tokio::test]
async fn metadata_for_another_resource_stops_the_flow_before_any_authorization_step() {
    let s = server_with_metadata("http://localhost:1/mcp").await;
    let o = s.uri();
    Mock::given(method("POST"))
        .and(path("/mcp"))
        .respond_with(ResponseTemplate::new(401).insert_header("www-authenticate", "Bearer"))
        .mount(&s)
        .await;
    let (t, seen) = connect_counting(&o).await;
    let e = t.request("a", None, RequestOptions::default()).await.expect_err("refused");
    assert_eq!(
        e.to_string(),
        format!(
            "Authorization failed: the protected resource metadata names resource \"http://localhost:1/mcp\", not {o}/mcp"
        )
    );
    assert_eq!(seen.load(Ordering::SeqCst), 0, "no authorization step for metadata that is not ours");
}

fn url_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
