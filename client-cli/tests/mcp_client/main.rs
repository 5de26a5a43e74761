//! The `mcp-client` binary against wiremock servers: by hand, and in conformance mode as the
//! official suite's runner starts it (URL last, scenario in the environment).

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers each JSON-RPC request with `result` under the request's own id.
struct Answer(Value);

impl Respond for Answer {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let id = serde_json::from_slice::<Value>(&request.body).ok().and_then(|b| b.get("id").cloned());
        ResponseTemplate::new(200).set_body_json(json!({"jsonrpc": "2.0", "id": id, "result": self.0}))
    }
}

/// A stateful Streamable HTTP server with one tool, `add(a: number, b: number)`.
async fn server_with_add_tool() -> MockServer {
    let server = MockServer::start().await;
    let rpc = |m: &str| Mock::given(method("POST")).and(body_partial_json(json!({"method": m})));
    rpc("initialize")
        .respond_with(Answer(json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "wiremock", "version": "1"}})))
        .mount(&server)
        .await;
    rpc("notifications/initialized").respond_with(ResponseTemplate::new(202)).mount(&server).await;
    rpc("tools/list")
        .respond_with(Answer(json!({"tools": [{"name": "add", "inputSchema": {"type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}]})))
        .mount(&server)
        .await;
    rpc("tools/call").respond_with(Answer(json!({"content": [{"type": "text", "text": "2"}]}))).mount(&server).await;
    Mock::given(method("GET")).respond_with(ResponseTemplate::new(405)).mount(&server).await;
    Mock::given(method("DELETE")).respond_with(ResponseTemplate::new(200)).mount(&server).await;
    server
}

/// The params of every `tools/call` the server received.
async fn tool_calls(server: &MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests
        .iter()
        .filter_map(|r| serde_json::from_slice::<Value>(&r.body).ok())
        .filter(|b| b["method"] == "tools/call")
        .map(|b| b["params"].clone())
        .collect()
}

fn client() -> Command {
    let mut cmd = Command::cargo_bin("mcp-client").expect("the mcp-client binary is built by cargo test");
    for var in [
        "MCP_CONFORMANCE_SCENARIO",
        "MCP_CONFORMANCE_PROTOCOL_VERSION",
        "MCP_CONFORMANCE_CONTEXT",
        "MCP_TIMEOUT_MS",
        "MCP_CLIENT_SECRET",
    ] {
        cmd.env_remove(var);
    }
    cmd.timeout(std::time::Duration::from_secs(20));
    cmd
}

/// Runs a prepared command off the async runtime (wiremock answers on it meanwhile).
async fn run(mut cmd: Command) -> assert_cmd::assert::Assert {
    tokio::task::spawn_blocking(move || cmd.assert()).await.expect("the client run did not panic")
}

#[test]
fn help_documents_both_uses() {
    client()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("--url <URL>"))
        .stdout(predicate::str::contains("MCP_CONFORMANCE_SCENARIO"))
        .stdout(predicate::str::contains("--client-id <ID>"))
        .stdout(predicate::str::contains("--client-metadata-url <URL>"))
        .stdout(predicate::str::contains("MCP_CLIENT_SECRET"));
}

#[test]
fn bad_usage_exits_2_with_what_to_write() {
    client()
        .arg("tools/list")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("give --url URL, or a command after `--`"));
    client()
        .args(["--url", "http://127.0.0.1:9/mcp", "tools/call", "[1]"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("params for tools/call must be a JSON object"));
    client().args(["--url", "http://127.0.0.1:9/mcp", "tools/list", "--", "server"]).assert().code(2);
    client()
        .args(["--client-id", "c", "tools/list", "--", "server"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("OAuth is for HTTP servers"));
    client().args(["--url", "http://127.0.0.1:9/mcp", "--client-secret", "s", "tools/list"]).assert().code(2);
    client()
        .env("MCP_CLIENT_SECRET", "s")
        .args(["--url", "http://127.0.0.1:9/mcp", "tools/list"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("MCP_CLIENT_SECRET is set but --client-id is not"));
}

/// Redirects an authorization request to its `redirect_uri` with a code and its `state`.
struct Authorize;

impl Respond for Authorize {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let query = |name: &str| request.url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
        // The state is base64url: nothing in it needs escaping.
        let to = format!(
            "{}?code=code-1&state={}",
            query("redirect_uri").unwrap_or_default(),
            query("state").unwrap_or_default()
        );
        ResponseTemplate::new(302).insert_header("location", to.as_str())
    }
}

/// An MCP server whose every request needs the token `t-1`, with the authorization server
/// on the same origin taking only `client_secret_basic` from the pre-registered client
/// `id-1` / `secret-1` (no dynamic registration).
async fn server_behind_oauth() -> MockServer {
    let server = server_with_add_tool().await;
    let uri = server.uri();
    // Outranks the MCP answers of `server_with_add_tool` for every request without the token.
    let without_token = |r: &Request| r.headers.get("authorization").is_none_or(|v| v != "Bearer t-1");
    Mock::given(method("POST"))
        .and(path("/mcp"))
        .and(without_token)
        .respond_with(ResponseTemplate::new(401).insert_header(
            "www-authenticate",
            format!(r#"Bearer resource_metadata="{uri}/.well-known/oauth-protected-resource/mcp""#).as_str(),
        ))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/.well-known/oauth-protected-resource/mcp"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"resource": format!("{uri}/mcp"), "authorization_servers": [uri]})),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/.well-known/oauth-authorization-server"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": uri, "authorization_endpoint": format!("{uri}/authorize"), "token_endpoint": format!("{uri}/token"),
            "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["client_secret_basic"]})))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET")).and(path("/authorize")).respond_with(Authorize).with_priority(1).mount(&server).await;
    // base64("id-1:secret-1")
    Mock::given(method("POST"))
        .and(path("/token"))
        .and(header("authorization", "Basic aWQtMTpzZWNyZXQtMQ=="))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"access_token": "t-1", "token_type": "Bearer"})))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({"error": "invalid_client"})))
        .with_priority(10)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn oauth_options_authorize_with_the_pre_registered_client_the_way_the_server_takes_it() {
    let server = server_behind_oauth().await;
    // `tools/list` by the pre-registered client `id-1`, bound to `issuer`.
    let pre_registered = |issuer: &str| {
        let mut cmd = client();
        cmd.env("MCP_CLIENT_SECRET", "secret-1").args([
            "--url",
            &format!("{}/mcp", server.uri()),
            "--client-id",
            "id-1",
            "--client-issuer",
            issuer,
            "tools/list",
        ]);
        cmd
    };
    let out = run(pre_registered(&server.uri())).await.success();
    let printed: Value = serde_json::from_slice(&out.get_output().stdout).expect("stdout is the result as JSON");
    assert_eq!(printed["tools"][0]["name"], "add");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(!stderr.contains("secret-1") && !stderr.contains("t-1"), "{stderr}");

    // Without OAuth options the same server's 401 is the answer.
    let mut cmd = client();
    cmd.args(["--url", &format!("{}/mcp", server.uri()), "tools/list"]);
    run(cmd).await.code(1).stderr(predicate::str::contains("401"));
    // Bound to another issuer, the pre-registered client is not used there.
    run(pre_registered("https://other.test"))
        .await
        .code(1)
        .stderr(predicate::str::contains("belongs to https://other.test"));
}

#[tokio::test]
async fn by_hand_prints_the_result_of_one_method() {
    let server = server_with_add_tool().await;
    let mut cmd = client();
    cmd.args([
        "--url",
        &format!("{}/mcp", server.uri()),
        "tools/call",
        r#"{"name": "add", "arguments": {"a": 1, "b": 1}}"#,
    ]);
    let out = run(cmd).await.success();
    let printed: Value = serde_json::from_slice(&out.get_output().stdout).expect("stdout is the result as JSON");
    assert_eq!(printed, json!({"content": [{"type": "text", "text": "2"}]}));
    assert_eq!(tool_calls(&server).await, vec![json!({"name": "add", "arguments": {"a": 1, "b": 1}})]);
}

#[tokio::test]
async fn a_failed_connection_exits_1_with_the_transport_error() {
    let mut cmd = client();
    // Port 9 (discard) on loopback: nothing listens there on a test machine.
    cmd.args(["--url", "http://127.0.0.1:9/mcp", "--timeout-ms", "2000", "tools/list"]);
    run(cmd).await.code(1).stderr(predicate::str::starts_with("mcp-client: initialize:"));
}

#[tokio::test]
async fn conformance_tools_call_calls_each_listed_tool_with_schema_arguments() {
    let server = server_with_add_tool().await;
    let mut cmd = client();
    cmd.env("MCP_CONFORMANCE_SCENARIO", "tools_call").env("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25");
    cmd.arg(format!("{}/mcp", server.uri()));
    run(cmd).await.success();
    assert_eq!(tool_calls(&server).await, vec![json!({"name": "add", "arguments": {"a": 1, "b": 1}})]);
}

#[tokio::test]
async fn conformance_custom_headers_calls_the_context_tools_with_their_arguments_verbatim() {
    let server = server_with_add_tool().await;
    let context = json!({"name": "http-custom-headers", "toolCalls": [
        {"name": "add", "arguments": {"a": 2, "b": 3, "note": " padded ", "none": null}},
        {"name": "add", "arguments": {"a": -1}}]});
    let mut cmd = client();
    cmd.env("MCP_CONFORMANCE_SCENARIO", "http-custom-headers")
        .env("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
        .env("MCP_CONFORMANCE_CONTEXT", context.to_string())
        .arg(format!("{}/mcp", server.uri()));
    run(cmd).await.success();
    assert_eq!(
        tool_calls(&server).await,
        vec![
            json!({"name": "add", "arguments": {"a": 2, "b": 3, "note": " padded ", "none": null}}),
            json!({"name": "add", "arguments": {"a": -1}})
        ]
    );
}

#[tokio::test]
async fn conformance_mode_without_the_context_a_scenario_needs_exits_1() {
    let server = server_with_add_tool().await;
    let mut cmd = client();
    cmd.env("MCP_CONFORMANCE_SCENARIO", "http-custom-headers").arg(format!("{}/mcp", server.uri()));
    run(cmd)
        .await
        .code(1)
        .stderr(predicate::str::contains("MCP_CONFORMANCE_CONTEXT: this scenario needs a toolCalls list"));
    assert!(tool_calls(&server).await.is_empty());
}
