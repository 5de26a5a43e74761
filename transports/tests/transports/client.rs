//! The client layer (SPEC §6) end to end: the handshake against a scripted stdio server,
//! and transport selection by config.

use crate::support::temp_log;
use mcp_transports::client::{ClientOptions, LATEST_PROTOCOL_VERSION, create_transport, handshake};
use mcp_transports::config::TransportKind;
use mcp_transports::{Handlers, RequestOptions, TransportConfig, TransportError};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::time::timeout;

const BOUND: Duration = Duration::from_secs(10);

/// A scripted stdio server in Python: logs every line it reads to `log` and runs
/// `script` (which sees the parsed `msg`) for each request.
fn server(log: &std::path::Path, script: &str) -> TransportConfig {
    let program = format!(
        r#"
import json, sys
log = open({log:?}, "w")
for line in sys.stdin:
    log.write(line); log.flush()
    msg = json.loads(line)
    if "id" not in msg:
        continue
{script}
"#,
        log = log.display().to_string()
    );
    TransportConfig {
        command: "python3".into(),
        args: vec!["-c".into(), program],
        timeout_ms: Some(5_000),
        timeout_env_override: Some(None),
        ..TransportConfig::default()
    }
}

fn reply(result: &str) -> String {
    format!("    print(json.dumps({{'jsonrpc': '2.0', 'id': msg['id'], 'result': {result}}}), flush=True)")
}

fn sent(log: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("client sent JSON"))
        .collect()
}

#[tokio::test]
async fn handshake_negotiates_and_lists_every_tool_page() {
    let (_dir, log) = temp_log("in");
    let script = format!(
        "    if msg['method'] == 'initialize':\n    {}\n    elif msg['params'].get('cursor') is None:\n    {}\n    else:\n    {}",
        reply("{'protocolVersion': '2025-06-18', 'capabilities': {'tools': {}}, 'serverInfo': {'name': 's'}}"),
        reply("{'tools': [{'name': 'a'}], 'nextCursor': 'p2'}"),
        reply("{'tools': [{'name': 'b'}]}"),
    );
    let config = server(&log, &script);
    let t = create_transport(&config, Handlers::default()).await.expect("spawn");
    let options = ClientOptions::default();
    let result = timeout(BOUND, handshake(t.as_ref(), &options)).await.expect("hung").expect("handshake");
    assert_eq!(result.protocol_version, "2025-06-18");
    assert_eq!(result.server_info, json!({"name": "s"}));
    assert_eq!(result.tools, vec![json!({"name": "a"}), json!({"name": "b"})]);
    t.close().await;

    let sent = sent(&log);
    let methods: Vec<&str> = sent.iter().map(|m| m["method"].as_str().unwrap_or("")).collect();
    assert_eq!(methods, ["initialize", "notifications/initialized", "tools/list", "tools/list"]);
    assert_eq!(sent[0]["params"]["protocolVersion"], json!(LATEST_PROTOCOL_VERSION));
    assert_eq!(sent[0]["params"]["capabilities"], json!({"roots": {"listChanged": false}}));
    assert_eq!(sent[0]["params"]["clientInfo"]["name"], json!(options.client_name));
    assert_eq!(sent[1]["params"], json!({}));
    assert_eq!(sent[3]["params"], json!({"cursor": "p2"}));
}

#[tokio::test]
async fn no_tools_capability_means_no_tools_list() {
    let (_dir, log) = temp_log("in");
    let config = server(&log, &reply("{'protocolVersion': '2024-11-05', 'capabilities': {}}"));
    let t = create_transport(&config, Handlers::default()).await.expect("spawn");
    let result = timeout(BOUND, handshake(t.as_ref(), &ClientOptions::default())).await.expect("hung").expect("ok");
    assert!(result.tools.is_empty());
    t.close().await;
    assert_eq!(sent(&log).len(), 2);
}

#[tokio::test]
async fn unsupported_version_closes_the_transport() {
    let (_dir, log) = temp_log("in");
    let config = server(&log, &reply("{'protocolVersion': '1999-01-01', 'capabilities': {}}"));
    let t = create_transport(&config, Handlers::default()).await.expect("spawn");
    let err =
        timeout(BOUND, handshake(t.as_ref(), &ClientOptions::default())).await.expect("hung").expect_err("refused");
    assert!(matches!(err, TransportError::UnsupportedProtocolVersion(_)), "{err}");
    assert!(err.to_string().contains("1999-01-01"), "{err}");
    assert!(!t.is_connected());
    // The server never got `initialized`.
    assert_eq!(sent(&log).len(), 1);
}

#[tokio::test]
async fn initialize_error_closes_the_transport() {
    let (_dir, log) = temp_log("in");
    let script = "    print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'error': {'code': -32602, 'message': 'bad', 'data': 1}}), flush=True)";
    let t = create_transport(&server(&log, script), Handlers::default()).await.expect("spawn");
    let err = timeout(BOUND, handshake(t.as_ref(), &ClientOptions::default())).await.expect("hung").expect_err("rpc");
    assert_eq!(err.to_string(), "MCP error -32602: bad");
    assert_eq!(err.rpc_data(), Some(&json!(1)));
    assert!(!t.is_connected());
}

#[tokio::test]
async fn http_kinds_report_a_connect_failure_not_a_panic() {
    for kind in [TransportKind::Http, TransportKind::Sse] {
        let config = TransportConfig {
            kind,
            url: "http://127.0.0.1:1/mcp".into(),
            timeout_ms: Some(500),
            ..TransportConfig::default()
        };
        // Streamable HTTP connects lazily (its first POST is initialize); legacy SSE
        // opens its GET stream at once. Either way nobody listens on port 1.
        let failed = match create_transport(&config, Handlers::default()).await {
            Err(_) => true,
            Ok(t) => t.request("initialize", None, RequestOptions::default()).await.is_err(),
        };
        assert!(failed, "{kind:?}");
    }
}
