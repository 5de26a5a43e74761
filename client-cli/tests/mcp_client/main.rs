//! The `mcp-client` binary against wiremock servers: by hand, and in conformance mode as the
//! official suite's runner starts it (URL last, scenario in the environment).

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, method};
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
    for var in
        ["MCP_CONFORMANCE_SCENARIO", "MCP_CONFORMANCE_PROTOCOL_VERSION", "MCP_CONFORMANCE_CONTEXT", "MCP_TIMEOUT_MS"]
    {
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
        .stdout(predicate::str::contains("MCP_CONFORMANCE_SCENARIO"));
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
