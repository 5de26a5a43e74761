//! The MCP client layer (SPEC §6): the handshake, answering server-to-client requests and
//! choosing a transport. It knows message shapes and order, never bytes, so it works over
//! any [`Transport`].

use crate::config::{TransportConfig, TransportKind};
use crate::error::TransportError;
use crate::http::{AuthRefresh, HttpTransport};
use crate::legacy_sse::LegacySseTransport;
use crate::message::RpcError;
use crate::stateless::{self, Stateless};
use crate::stdio::StdioTransport;
use crate::subscriptions::Subscriptions;
use crate::transport::{Handlers, RequestHandler, RequestOptions, Transport};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// The protocol revisions this client can speak after a stateful handshake.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The revision offered when the caller does not choose one.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";
/// `tools/list` pages followed at most, so a server that always returns a cursor cannot keep
/// the handshake busy forever.
pub const MAX_TOOL_PAGES: usize = 100;

/// What the client tells the server about itself in `initialize`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientOptions {
    /// The revision offered in `initialize` (`2024-11-05` on legacy SSE).
    pub protocol_version: String,
    /// `clientInfo.name`.
    pub client_name: String,
    /// `clientInfo.version`.
    pub client_version: String,
    /// The answer to `roots/list`, each a `{"uri", "name"?}` object.
    pub roots: Vec<Value>,
    /// The bound on the whole handshake (SPEC §6), normally the connection's resolved
    /// timeout; `None`: each step is bounded by the request timeout only.
    pub timeout: Option<Duration>,
    /// Whether the handshake ends with `tools/list` when the server advertises tools
    /// (SPEC §6; on by default). A host that lists later, or a test harness whose mock
    /// advertises tools only so strict clients may call them, turns it off.
    pub list_tools: bool,
    /// Whether a 2026-07-28 transport falls back to the initialize handshake when the
    /// server shows it is legacy (a dual-era client, the default), or returns that error to
    /// the caller (a modern-only client: the Modern / Legacy row of the versioning page's
    /// compatibility matrix, which fails).
    pub legacy_fallback: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            protocol_version: LATEST_PROTOCOL_VERSION.into(),
            client_name: env!("CARGO_PKG_NAME").into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            roots: Vec::new(),
            timeout: None,
            list_tools: true,
            legacy_fallback: true,
        }
    }
}

/// What the handshake learned about the server.
#[derive(Debug, Clone, PartialEq)]
pub struct InitializeResult {
    /// The revision the server chose; one of [`SUPPORTED_PROTOCOL_VERSIONS`].
    pub protocol_version: String,
    /// The server's `capabilities` object (`{}` when absent).
    pub capabilities: Value,
    /// The server's `serverInfo` object (`null` when absent).
    pub server_info: Value,
    /// Every tool from `tools/list`, in order; empty when the server has no tools capability.
    pub tools: Vec<Value>,
}

/// The answers SPEC §6 requires to server-to-client requests: `ping` → `{}`,
/// `roots/list` → the configured roots, anything else → `-32601`.
pub fn default_request_handler(roots: Vec<Value>) -> RequestHandler {
    let roots = Arc::new(roots);
    Arc::new(move |method: String, _params: Value| {
        let roots = roots.clone();
        Box::pin(async move {
            match method.as_str() {
                "ping" => Ok(json!({})),
                "roots/list" => Ok(json!({ "roots": *roots })),
                _ => Err(RpcError::method_not_found(&method)),
            }
        })
    })
}

/// Runs the stateful handshake (none on a modern revision): `initialize` → version check → `notifications/initialized`
/// → [`Transport::on_initialized`] → `tools/list` (all pages) when tools are advertised
/// and [`ClientOptions::list_tools`] is on.
/// Any failure closes the transport, so a failed handshake leaves nothing open; each step
/// is bounded by the transport's request timeout and the whole by `options.timeout`.
pub async fn handshake(transport: &dyn Transport, options: &ClientOptions) -> Result<InitializeResult, TransportError> {
    if stateless::is_modern(&options.protocol_version) {
        // 2026-07-28 has no handshake (SPEC §6): every request carries its own `_meta`.
        return Ok(InitializeResult {
            protocol_version: options.protocol_version.clone(),
            capabilities: json!({}),
            server_info: Value::Null,
            tools: Vec::new(),
        });
    }
    let outcome = match options.timeout {
        None => run_handshake(transport, options).await,
        Some(t) => tokio::time::timeout(t, run_handshake(transport, options)).await.unwrap_or_else(|_| {
            Err(TransportError::Timeout { ms: u64::try_from(t.as_millis()).unwrap_or(u64::MAX), sent: true })
        }),
    };
    match outcome {
        Ok(result) => Ok(result),
        Err(e) => {
            transport.close().await;
            Err(e)
        }
    }
}

async fn run_handshake(transport: &dyn Transport, options: &ClientOptions) -> Result<InitializeResult, TransportError> {
    let params = json!({
        "protocolVersion": options.protocol_version,
        "capabilities": {"roots": {"listChanged": false}},
        "clientInfo": {"name": options.client_name, "version": options.client_version},
    });
    let init = transport.request("initialize", Some(params), RequestOptions::default()).await?;
    let Some(version) = init.get("protocolVersion").and_then(Value::as_str) else {
        return Err(TransportError::Protocol("initialize result has no protocolVersion".into()));
    };
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&version) {
        return Err(TransportError::UnsupportedProtocolVersion(format!(
            "server chose {version}; this client speaks {}",
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        )));
    }
    transport.set_protocol_version(version);
    transport.notify("notifications/initialized", None).await?;
    transport.on_initialized().await;

    let capabilities = init.get("capabilities").cloned().unwrap_or_else(|| json!({}));
    let tools = match capabilities.get("tools") {
        Some(v) if !v.is_null() && options.list_tools => list_tools(transport).await?,
        _ => Vec::new(),
    };
    Ok(InitializeResult {
        protocol_version: version.into(),
        capabilities,
        server_info: init.get("serverInfo").cloned().unwrap_or(Value::Null),
        tools,
    })
}

/// Follows `nextCursor` until it is absent, repeats, or [`MAX_TOOL_PAGES`] pages were read.
async fn list_tools(transport: &dyn Transport) -> Result<Vec<Value>, TransportError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_TOOL_PAGES {
        let params = cursor.as_ref().map(|c| json!({"cursor": c}));
        let page = transport.request("tools/list", params, RequestOptions::default()).await?;
        match page.get("tools") {
            Some(Value::Array(list)) => tools.extend(list.iter().cloned()),
            _ => return Err(TransportError::Protocol("tools/list result has no tools array".into())),
        }
        let next = page.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
        if next.is_none() || next == cursor {
            return Ok(tools);
        }
        cursor = next;
    }
    tracing::warn!(pages = MAX_TOOL_PAGES, "tools/list kept returning a cursor; keeping the tools read so far");
    Ok(tools)
}

/// Connects the transport the configuration selects (SPEC §6): stdio, Streamable HTTP or
/// legacy HTTP+SSE; on a modern revision (2026-07-28) stdio and Streamable HTTP are wrapped
/// in [`Stateless`], which adds the per-request `_meta`.
pub async fn create_transport(
    config: &TransportConfig,
    handlers: Handlers,
) -> Result<Arc<dyn Transport>, TransportError> {
    create_client_transport(config, handlers, None, &ClientOptions::default()).await
}

/// Like [`create_transport`], with the auth refresh hook the HTTP transports ask once on a
/// 401/403 (SPEC §4; stdio ignores it) and the client options a 2026-07-28 transport that
/// falls back to a legacy server runs the stateful handshake with (at
/// [`LATEST_PROTOCOL_VERSION`]), so the caller's choices (e.g. [`ClientOptions::list_tools`])
/// hold after a fallback too.
pub async fn create_client_transport(
    config: &TransportConfig,
    handlers: Handlers,
    auth: Option<AuthRefresh>,
    client: &ClientOptions,
) -> Result<Arc<dyn Transport>, TransportError> {
    let modern = stateless::is_modern(&config.protocol_version) && config.kind != TransportKind::Sse;
    let caller_handlers = handlers.clone();
    let gate = Subscriptions::new(handlers.on_notification.clone(), handlers.on_error.clone());
    let handlers = if modern { Handlers { on_notification: Some(gate.handler()), ..handlers } } else { handlers };
    let transport: Arc<dyn Transport> = match config.kind {
        TransportKind::Stdio => StdioTransport::connect(config, handlers).await?,
        TransportKind::Http => HttpTransport::connect_with_auth(config, handlers, auth).await?,
        TransportKind::Sse => return Ok(LegacySseTransport::connect_with_auth(config, handlers, auth).await?),
    };
    if modern {
        let options = Arc::new(ClientOptions { protocol_version: LATEST_PROTOCOL_VERSION.into(), ..client.clone() });
        let legacy: stateless::LegacyHandshake = Arc::new(move |t: Arc<dyn Transport>| {
            let options = options.clone();
            Box::pin(async move { handshake(t.as_ref(), &options).await.map(|_| ()) })
        });
        let modern = Stateless::new(transport, &config.protocol_version, &caller_handlers, gate);
        if !client.legacy_fallback {
            return Ok(Arc::new(modern));
        }
        return Ok(Arc::new(modern.with_legacy_fallback(legacy)));
    }
    Ok(transport)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Diagnostics;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A transport that answers each method from a table after a per-method delay, and
    /// records what was sent and whether it was closed.
    #[derive(Default)]
    struct Scripted {
        answers: Vec<(&'static str, u64, Result<Value, TransportError>)>,
        sent: Mutex<Vec<String>>,
        closed: AtomicBool,
    }

    #[async_trait::async_trait]
    impl Transport for Scripted {
        async fn request(&self, method: &str, _params: Option<Value>, _options: RequestOptions) -> crate::Reply {
            self.sent.lock().expect("lock").push(method.to_owned());
            let (_, delay, answer) = self.answers.iter().find(|(m, ..)| *m == method).expect("scripted method");
            tokio::time::sleep(Duration::from_millis(*delay)).await;
            answer.clone()
        }
        async fn notify(&self, method: &str, _params: Option<Value>) -> Result<(), TransportError> {
            self.sent.lock().expect("lock").push(method.to_owned());
            Ok(())
        }
        async fn close(&self) {
            self.closed.store(true, Ordering::SeqCst);
        }
        fn is_connected(&self) -> bool {
            !self.closed.load(Ordering::SeqCst)
        }
        fn diagnostics(&self) -> Diagnostics {
            Diagnostics::default()
        }
    }

    fn init(version: &str) -> Result<Value, TransportError> {
        Ok(json!({"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "s"}}))
    }

    fn sent(t: &Scripted) -> Vec<String> {
        t.sent.lock().expect("lock").clone()
    }

    #[tokio::test]
    async fn an_unsupported_protocol_version_closes_before_initialized() {
        let t = Scripted { answers: vec![("initialize", 0, init("2099-01-01"))], ..Scripted::default() };
        let err = handshake(&t, &ClientOptions::default()).await.expect_err("refused");
        assert!(err.to_string().starts_with("Unsupported protocol version: server chose 2099-01-01"), "{err}");
        assert!(t.closed.load(Ordering::SeqCst));
        assert_eq!(sent(&t), ["initialize"]);
    }

    #[tokio::test]
    async fn an_initialize_failure_closes_the_transport() {
        let rpc = TransportError::Rpc(RpcError { code: -32603, message: "boom".into(), data: None });
        let t = Scripted { answers: vec![("initialize", 0, Err(rpc))], ..Scripted::default() };
        let err = handshake(&t, &ClientOptions::default()).await.expect_err("failed");
        assert_eq!(err.to_string(), "MCP error -32603: boom");
        assert!(t.closed.load(Ordering::SeqCst));
    }

    #[tokio::test(start_paused = true)]
    async fn the_whole_handshake_is_bounded_by_the_timeout() {
        // Each step is well inside the bound; together they are not.
        let t = Scripted {
            answers: vec![("initialize", 60, init("2025-11-25")), ("tools/list", 60, Ok(json!({"tools": []})))],
            ..Scripted::default()
        };
        let options = ClientOptions { timeout: Some(Duration::from_millis(100)), ..ClientOptions::default() };
        let err = handshake(&t, &options).await.expect_err("bounded");
        assert_eq!(err.to_string(), "Request timeout after 100ms");
        assert!(t.closed.load(Ordering::SeqCst));
        assert_eq!(sent(&t), ["initialize", "notifications/initialized", "tools/list"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_handshake_inside_the_bound_lists_tools() {
        let t = Scripted {
            answers: vec![
                ("initialize", 40, init("2025-06-18")),
                ("tools/list", 40, Ok(json!({"tools": [{"name": "a"}]}))),
            ],
            ..Scripted::default()
        };
        let options = ClientOptions { timeout: Some(Duration::from_millis(100)), ..ClientOptions::default() };
        let result = handshake(&t, &options).await.expect("ok");
        assert_eq!((result.protocol_version.as_str(), result.tools.len()), ("2025-06-18", 1));
        assert!(!t.closed.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn default_handler_answers_ping_roots_and_nothing_else() {
        let roots = vec![json!({"uri": "file:///w", "name": "w"})];
        let h = default_request_handler(roots.clone());
        assert_eq!(h("ping".into(), json!({})).await, Ok(json!({})));
        assert_eq!(h("roots/list".into(), json!({})).await, Ok(json!({"roots": roots})));
        assert_eq!(h("sampling/createMessage".into(), json!({})).await.map_err(|e| e.code), Err(-32601));
    }
}
