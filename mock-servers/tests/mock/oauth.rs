//! The mock's authorization server over a real socket: a client walks the whole flow
//! (401 → metadata → registration → authorize → token → MCP with the token), and the
//! rendered transcript shows every exchange with each secret redacted by the one policy
//! and the per-run nonces (`state`, `code_challenge`) normalised.

use crate::support::{Http, init};
use mcp_mock::transcript::{Transcript, render};
use mcp_results::ClientOutcome;
use serde_json::{Value, json};

const VERIFIER: &str = "dBjftJeZ4CVP-mJ0kz5FauWOVHoaYGlGHBO8K5i2sHo";
const CHALLENGE: &str = "c7vg9dpkn8SbdXMYnhzgjUNH3yAe_eAt3ZjgTQ-XF8Q";

#[tokio::test]
async fn a_whole_flow_is_recorded_with_its_secrets_redacted() {
    let mock = Http::streamable("  - op: authorization_server\n  - op: handshake\n  - op: stall\n").await;
    let origin = format!("http://{}", mock.addr);
    let c = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");

    let r = mock.post(None, init()).await;
    assert_eq!(r.status(), 401);
    let challenge = r.headers()["www-authenticate"].to_str().expect("ascii").to_string();
    assert_eq!(challenge, format!("Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\""));
    let prm = answer_json(c.get(format!("{origin}/.well-known/oauth-protected-resource/mcp"))).await;
    assert_eq!(prm["resource"], json!(format!("{origin}/mcp")));
    let meta = answer_json(c.get(format!("{origin}/.well-known/oauth-authorization-server"))).await;
    assert_eq!(meta["issuer"], json!(origin));
    let registration = json!({"redirect_uris": ["http://127.0.0.1/cb"], "client_name": "t"});
    let reg = answer_json(c.post(format!("{origin}/register")).json(&registration)).await;
    let client_id = reg["client_id"].as_str().expect("client_id").to_string();
    let resource = format!("{origin}/mcp");
    let authorize = c
        .get(format!("{origin}/authorize"))
        .query(&[
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", "http://127.0.0.1/cb"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("state", "st8-random-nonce"),
            ("resource", &resource),
        ])
        .send()
        .await
        .expect("authorize");
    assert_eq!(authorize.status(), 302);
    let location = url::Url::parse(authorize.headers()["location"].to_str().expect("ascii")).expect("url");
    let code = location.query_pairs().find(|(k, _)| k == "code").expect("code").1.to_string();
    let token = answer_json(c.post(format!("{origin}/token")).form(&[
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", "http://127.0.0.1/cb"),
        ("client_id", &client_id),
        ("code_verifier", VERIFIER),
        ("resource", &resource),
    ]))
    .await;
    let access = token["access_token"].as_str().expect("access_token").to_string();
    let r = c
        .post(&mock.url)
        .header("authorization", format!("Bearer {access}"))
        .header("accept", "application/json, text/event-stream")
        .json(&init())
        .send()
        .await
        .expect("initialize");
    assert_eq!(r.status(), 200);

    let run = mock.stop().await;
    let scenario = crate::support::scenario(
        &(crate::support::head("2025-11-25", "http") + "server:\n  - op: authorization_server\n  - op: handshake\n"),
    );
    let transcript = Transcript::new(run);
    let text = render::transcript(
        &scenario,
        mcp_scenario::TransportName::Http,
        render::Client::HOST,
        &ClientOutcome::default(),
        &transcript,
        &mut transcript.redactor(std::path::Path::new("/nonexistent")),
    );
    for secret in [code.as_str(), access.as_str(), VERIFIER, token["refresh_token"].as_str().expect("refresh")] {
        assert!(!text.contains(secret), "{secret} leaked into:\n{text}");
    }
    assert!(text.contains("state=<state-1>") && text.contains("code_challenge=<code-challenge-1>"), "{text}");
    assert!(text.contains("code_verifier=<redacted>") && text.contains("\"access_token\":\"<redacted>\""), "{text}");
    assert!(text.contains("authorization: Bearer <redacted:1>"), "{text}");
    // The OAuth exchanges carry no MCP message: the JSON-RPC view holds initialize alone.
    let methods: Vec<_> = transcript.connections()[0]
        .client_messages()
        .filter_map(|m| m["method"].as_str().map(str::to_string))
        .collect();
    assert_eq!(methods, ["initialize", "initialize"]);
}

/// The JSON body of the answer to `request` (a metadata document, a registration, tokens).
async fn answer_json(request: reqwest::RequestBuilder) -> Value {
    let response = request.send().await.expect("an answer");
    let url = response.url().clone();
    response.json().await.unwrap_or_else(|e| panic!("{url}: not JSON: {e}"))
}

/// A GET the script never takes is answered 405 before its credential is looked at, so a
/// client's listener meets the same answer whether it came before or after `expire_tokens`;
/// a GET the script takes is guarded like any request.
#[tokio::test]
async fn only_a_get_the_script_takes_meets_the_guard() {
    let statuses = |server: &'static str| async move {
        let mock = Http::streamable(server).await;
        let get = |token: Option<&'static str>| {
            let mut r = mock.client.get(&mock.url).header("accept", "text/event-stream");
            if let Some(t) = token {
                r = r.header("authorization", format!("Bearer {t}"));
            }
            async move { r.send().await.expect("GET").status().as_u16() }
        };
        let answers = [get(None).await, get(Some("expired-or-unknown")).await];
        mock.stop().await;
        answers
    };
    assert_eq!(statuses("  - op: authorization_server\n  - op: stall\n").await, [405, 405]);
    let scripted = "  - op: authorization_server\n  - op: expect_get\n    repeat: true\n  - op: stall\n";
    assert_eq!(statuses(scripted).await, [401, 401]);
}
