//! The client side of the modern, stateless revisions (2026-07-28, SPEC §4 / §6): no
//! handshake; every request carries its own `_meta` (protocol version, client capabilities,
//! client info). [`Stateless`] wraps a stdio or Streamable HTTP transport and adds, per
//! request:
//!
//! - the `_meta` members (the HTTP transport mirrors them into headers from the body);
//! - version negotiation: a `-32022 UnsupportedProtocolVersion` error whose
//!   `data.supported` lists a modern version this client speaks is retried with it (a new
//!   JSON-RPC id, as every attempt is a new request); the chosen version sticks;
//! - `resultType`: absent or `complete` is the result; `input_required` (on `tools/call`,
//!   `resources/read`, `prompts/get`) is a multi round-trip request: the input requests are
//!   answered through the request handler, and the request re-sent with `inputResponses`
//!   and the `requestState` echoed byte for byte — only on that retry; any other value is
//!   a protocol error;
//! - `subscriptions/listen`: re-established after its stream drops (see [`subscriptions`]);
//! - the era: a first request whose failure shows a legacy server (see
//!   [`Stateless::with_legacy_fallback`]) makes it run the stateful handshake and speak the
//!   legacy revision from then on; any modern answer makes the era modern for good;
//! - `tools/list` over Streamable HTTP: tools with an invalid `x-mcp-header` annotation are
//!   left out and reported; the rest are handed to the transport for `Mcp-Param-*`;
//! - a `tools/call` refused with `HeaderMismatch` (-32020) over Streamable HTTP: the tools are
//!   listed again (every page, at most [`MAX_RELIST_PAGES`]) and the call re-sent once with
//!   the headers that listing gives (`basic/transports/streamable-http.mdx`, Custom Headers
//!   from Tool Parameters: the client SHOULD call `tools/list`, then retry); a second refusal,
//!   or a listing that fails, returns the refusal.

use crate::error::TransportError;
use crate::message::RpcError;
use crate::param_headers;
use crate::pending::lock;
use crate::subscriptions::{self, Subscriptions};
use crate::transport::{Diagnostics, ErrorHandler, Handlers, Reply, RequestHandler, RequestOptions, Transport};
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};

/// The first modern revision; later dates are modern too (dates compare as strings).
pub const FIRST_MODERN_REVISION: &str = "2026-07-28";
/// The modern revisions this client speaks, preferred first.
pub const MODERN_PROTOCOL_VERSIONS: &[&str] = &["2026-07-28"];
/// The `_meta` keys of the per-request protocol fields.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// See [`META_PROTOCOL_VERSION`].
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// See [`META_PROTOCOL_VERSION`].
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `UnsupportedProtocolVersionError`.
pub const UNSUPPORTED_VERSION: i64 = -32022;
/// `HeaderMismatch`: a mirrored header is missing or differs from the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// Pages of `tools/list` the re-listing after a `HeaderMismatch` walks at most, so a server
/// whose cursor never ends cannot keep the call busy.
pub const MAX_RELIST_PAGES: usize = 100;
/// Rounds of `InputRequiredResult` one call may take before it fails, so a server that
/// always asks for more cannot keep a caller busy forever.
pub const MAX_INPUT_ROUNDS: usize = 8;
/// The long-lived subscription request.
const LISTEN: &str = "subscriptions/listen";
/// The methods on which a server may answer `InputRequiredResult`.
const MRTR_METHODS: &[&str] = &["tools/call", "resources/read", "prompts/get"];

/// The stateful handshake the client layer runs when a server turns out legacy.
pub type LegacyHandshake =
    Arc<dyn Fn(Arc<dyn Transport>) -> futures::future::BoxFuture<'static, Result<(), TransportError>> + Send + Sync>;

/// Whether a JSON-RPC error (on HTTP, with its status) is one only a modern server sends:
/// HeaderMismatch, MissingRequiredClientCapability, UnsupportedProtocolVersion, the
/// `_meta` -32602 (400 on HTTP), and -32601 with 404 on HTTP. `status` is `None` on stdio.
pub fn is_modern_error(code: i64, status: Option<u16>) -> bool {
    matches!((code, status), (-32022..=-32020 | -32602, None | Some(400)) | (-32601, Some(404)))
}

/// What the client knows of the server's era (versioning.mdx: cached per connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    /// No request has been answered yet.
    Unknown,
    /// The server answered a modern request (or a modern error).
    Modern,
    /// The server was legacy: the stateful handshake ran; requests go as they are.
    Legacy,
}

/// Whether `version` is a modern (per-request metadata) revision.
pub fn is_modern(version: &str) -> bool {
    version >= FIRST_MODERN_REVISION
}

/// A stdio or Streamable HTTP transport speaking a modern revision (see the module docs).
pub struct Stateless {
    inner: Arc<dyn Transport>,
    /// The version sent in `_meta`: the configured one until negotiation picks another.
    version: Mutex<String>,
    client_info: Value,
    capabilities: Value,
    /// Answers the input requests of an `InputRequiredResult`.
    on_input: Option<RequestHandler>,
    /// Where tools refused for invalid `x-mcp-header` annotations are reported.
    on_error: Option<ErrorHandler>,
    /// The gate in front of the caller's notification handler (see [`subscriptions`]).
    subscriptions: Arc<Subscriptions>,
    era: Mutex<Era>,
    /// Runs `initialize` … when the first request shows a legacy server.
    legacy_handshake: Option<LegacyHandshake>,
}

impl Stateless {
    /// Wraps `inner`, sending `version` until a server's `-32022` says otherwise.
    /// `handlers` are the inner transport's: `on_request` answers input requests,
    /// `on_error` hears about refused tools.
    /// `subscriptions` must be the gate the inner transport delivers notifications through.
    pub fn new(
        inner: Arc<dyn Transport>,
        version: &str,
        handlers: &Handlers,
        subscriptions: Arc<Subscriptions>,
    ) -> Self {
        Stateless {
            inner,
            version: Mutex::new(version.to_owned()),
            client_info: json!({"name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION")}),
            capabilities: json!({"roots": {}}),
            on_input: handlers.on_request.clone(),
            on_error: handlers.on_error.clone(),
            subscriptions,
            era: Mutex::new(Era::Unknown),
            legacy_handshake: None,
        }
    }

    /// Falls back to `handshake` (the stateful one) when the first request shows a legacy
    /// server: on Streamable HTTP a 400 / 404 / 405 whose body is not a recognized modern
    /// error; on stdio a `server/discover` probe answered with a non-modern error
    /// (`basic/transports/*.mdx` Backward Compatibility). Without it the error is returned.
    pub fn with_legacy_fallback(mut self, handshake: LegacyHandshake) -> Self {
        self.legacy_handshake = Some(handshake);
        self
    }

    /// Whether `err`, on the first request, identifies a legacy server.
    fn shows_legacy(&self, method: &str, err: &TransportError) -> bool {
        match err {
            // HTTP: the modern-error bodies were already turned into `Rpc`.
            TransportError::Http { status: 400 | 404 | 405, .. } => self.inner.mirrors_param_headers(),
            // stdio: only the discover probe decides.
            TransportError::Rpc(e) => {
                method == "server/discover" && !self.inner.mirrors_param_headers() && !is_modern_error(e.code, None)
            }
            _ => false,
        }
    }

    /// The first request failed in a way that shows a legacy server: switch the transport
    /// to the stateful shape and run the handshake. Returns whether it did.
    async fn fall_back(&self) -> Result<bool, TransportError> {
        let Some(handshake) = &self.legacy_handshake else { return Ok(false) };
        if !self.inner.fall_back_to_stateful() {
            return Ok(false);
        }
        tracing::info!("the server is legacy: falling back to the initialize handshake");
        handshake(self.inner.clone()).await?;
        *lock(&self.era) = Era::Legacy;
        Ok(true)
    }

    /// `subscriptions/listen`: re-sent with the same filter (a new request) after its
    /// stream drops, each time reported as a possibly-missed window; a response (the
    /// server's graceful end) or any other failure is the caller's.
    async fn listen(&self, params: Option<Value>, options: RequestOptions) -> Reply {
        let mut attempt = 0;
        loop {
            let sent = options.sent_id.clone().unwrap_or_default();
            self.subscriptions.listen_started(&sent);
            let this_attempt = RequestOptions { sent_id: Some(sent.clone()), ..options.clone() };
            let outcome = self.call(LISTEN, params.clone(), this_attempt).await;
            if self.subscriptions.acknowledged(&sent) {
                attempt = 0;
            }
            self.subscriptions.listen_ended(&sent);
            let err = match outcome {
                Err(e) if subscriptions::dropped(&e) => e,
                other => return other,
            };
            attempt += 1;
            let Some(wait) = subscriptions::backoff(attempt) else { return Err(err) };
            let max = subscriptions::RELISTEN_BACKOFF_MS.len();
            self.subscriptions.report(&TransportError::SubscriptionDropped { cause: err.to_string(), attempt, max });
            let cancel = options.cancel.clone().unwrap_or_default();
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = cancel.cancelled() => return Err(TransportError::Cancelled { reason: None }),
            }
        }
    }

    /// `tools/list` over a transport that mirrors `x-mcp-header` parameters: tools with an
    /// invalid annotation are left out (and reported), the others' annotations are handed
    /// to the transport for `Mcp-Param-*` on later calls.
    fn learn_tools(&self, mut result: Value) -> Value {
        let Some(Value::Array(tools)) = result.get_mut("tools") else { return result };
        let mut learnt = Vec::new();
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
            match param_headers::annotations(schema) {
                Ok(annotations) => {
                    learnt.push((name, annotations));
                    true
                }
                Err(why) => {
                    tracing::warn!(tool = %name, %why, "leaving out a tool with an invalid x-mcp-header");
                    if let Some(report) = &self.on_error {
                        report(&TransportError::Protocol(format!("tool {name:?} left out of tools/list: {why}")));
                    }
                    false
                }
            }
        });
        self.inner.set_tool_param_headers(learnt);
        result
    }

    /// The version requests are sent with now.
    pub fn protocol_version(&self) -> String {
        lock(&self.version).clone()
    }

    /// `params` with the `_meta` members added (members the caller set are kept).
    fn with_meta(&self, params: Option<Value>, version: &str) -> Value {
        let mut params = match params {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.insert(META_PROTOCOL_VERSION.into(), json!(version));
            meta.entry(META_CLIENT_CAPABILITIES).or_insert_with(|| self.capabilities.clone());
            meta.entry(META_CLIENT_INFO).or_insert_with(|| self.client_info.clone());
        }
        Value::Object(params)
    }

    /// Lists the tools again, page by page, so the transport learns their current
    /// `x-mcp-header` annotations (the recovery after a `HeaderMismatch`).
    async fn relist_tools(&self, options: &RequestOptions) -> Result<(), TransportError> {
        let options =
            RequestOptions { timeout_ms: options.timeout_ms, cancel: options.cancel.clone(), ..Default::default() };
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_RELIST_PAGES {
            let params = cursor.take().map(|c| json!({"cursor": c}));
            let page = self.call("tools/list", params, options.clone()).await?;
            match page.get("nextCursor").filter(|c| !c.is_null()) {
                Some(next) => cursor = Some(next.clone()),
                None => return Ok(()),
            }
        }
        Ok(())
    }

    /// The version to retry with after `-32022`: the first modern version this client
    /// speaks that the server lists and that was not just refused.
    fn negotiate(&self, error: &TransportError, refused: &str) -> Option<String> {
        let TransportError::Rpc(RpcError { code: UNSUPPORTED_VERSION, data: Some(data), .. }) = error else {
            return None;
        };
        let supported: Vec<&str> = data.get("supported")?.as_array()?.iter().filter_map(Value::as_str).collect();
        MODERN_PROTOCOL_VERSIONS.iter().find(|v| **v != refused && supported.contains(v)).map(|v| (*v).to_owned())
    }

    /// Answers every input request of an `InputRequiredResult` (`{key: {method, params}}`).
    async fn answer_inputs(&self, requests: &Map<String, Value>) -> Result<Value, TransportError> {
        let mut responses = Map::new();
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
            let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            let answer = match &self.on_input {
                Some(handler) => handler(method.clone(), params).await,
                None => Err(RpcError::method_not_found(&method)),
            };
            match answer {
                Ok(result) => responses.insert(key.clone(), result),
                Err(e) => {
                    return Err(TransportError::Protocol(format!(
                        "cannot answer input request {key:?} ({method}): {}",
                        e.message
                    )));
                }
            };
        }
        Ok(Value::Object(responses))
    }
}

/// What a result's `resultType` says.
enum ResultKind {
    Complete,
    InputRequired,
}

fn result_kind(method: &str, result: &Value) -> Result<ResultKind, TransportError> {
    match result.get("resultType") {
        None => Ok(ResultKind::Complete),
        Some(Value::String(t)) if t == "complete" => Ok(ResultKind::Complete),
        Some(Value::String(t)) if t == "input_required" && MRTR_METHODS.contains(&method) => {
            Ok(ResultKind::InputRequired)
        }
        Some(Value::String(t)) if t == "input_required" => {
            Err(TransportError::Protocol(format!("resultType \"input_required\" is not allowed on {method}")))
        }
        Some(other) => Err(TransportError::Protocol(format!("unknown resultType {other} in the result of {method}"))),
    }
}

#[async_trait::async_trait]
impl Transport for Stateless {
    async fn request(&self, method: &str, params: Option<Value>, options: RequestOptions) -> Reply {
        let era = *lock(&self.era);
        if era == Era::Legacy {
            return self.inner.request(method, params, options).await;
        }
        let outcome = if method == LISTEN {
            self.listen(params.clone(), options.clone()).await
        } else {
            self.call(method, params.clone(), options.clone()).await
        };
        if era != Era::Unknown {
            return outcome;
        }
        match outcome {
            Err(e) if self.shows_legacy(method, &e) => match self.fall_back().await {
                // The probe's answer was the error; any other request is re-sent as it was.
                Ok(true) if method == "server/discover" => Err(e),
                Ok(true) => self.inner.request(method, params, options).await,
                Ok(false) => Err(e),
                Err(handshake) => Err(handshake),
            },
            other => {
                *lock(&self.era) = Era::Modern;
                other
            }
        }
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), TransportError> {
        self.inner.notify(method, params).await
    }

    async fn close(&self) {
        self.inner.close().await;
    }

    fn is_connected(&self) -> bool {
        self.inner.is_connected()
    }

    fn diagnostics(&self) -> Diagnostics {
        self.inner.diagnostics()
    }

    fn mirrors_param_headers(&self) -> bool {
        self.inner.mirrors_param_headers()
    }

    fn set_tool_param_headers(&self, tools: Vec<(String, Vec<param_headers::Annotation>)>) {
        self.inner.set_tool_param_headers(tools);
    }
}

impl Stateless {
    /// One call with `_meta`, version negotiation, `resultType` and input rounds.
    async fn call(&self, method: &str, params: Option<Value>, options: RequestOptions) -> Reply {
        let mut version = self.protocol_version();
        let mut params = params;
        let mut rounds = 0;
        let mut negotiated = false;
        let mut relisted = false;
        loop {
            let sent = self.with_meta(params.clone(), &version);
            let result = match self.inner.request(method, Some(sent.clone()), options.clone()).await {
                Ok(r) => r,
                Err(e) => {
                    if !negotiated && let Some(next) = self.negotiate(&e, &version) {
                        tracing::debug!(refused = %version, retry = %next, "server refused the protocol version");
                        *lock(&self.version) = next.clone();
                        version = next;
                        negotiated = true;
                        continue;
                    }
                    let mismatch = matches!(&e, TransportError::Rpc(RpcError { code: HEADER_MISMATCH, .. }));
                    if mismatch && !relisted && method == "tools/call" && self.inner.mirrors_param_headers() {
                        relisted = true;
                        tracing::debug!(
                            "tools/call refused with HeaderMismatch: listing tools again, then retrying once"
                        );
                        match Box::pin(self.relist_tools(&options)).await {
                            Ok(()) => continue,
                            // The caller gave up, or the call's time ran out, while re-listing:
                            // that ends the call, as it would have during the call itself.
                            Err(
                                err @ (TransportError::Cancelled { .. }
                                | TransportError::Timeout { .. }
                                | TransportError::TotalTimeout { .. }),
                            ) => return Err(err),
                            // The listing itself failed: the retry cannot be made.
                            Err(_) => {}
                        }
                    }
                    return Err(e);
                }
            };
            match result_kind(method, &result)? {
                ResultKind::Complete if method == "tools/list" && self.inner.mirrors_param_headers() => {
                    return Ok(self.learn_tools(result));
                }
                ResultKind::Complete => return Ok(result),
                ResultKind::InputRequired => {
                    rounds += 1;
                    if rounds > MAX_INPUT_ROUNDS {
                        return Err(TransportError::Protocol(format!(
                            "{method}: still input_required after {MAX_INPUT_ROUNDS} rounds"
                        )));
                    }
                    // The retry is the original request plus this round's answers only.
                    let mut next = match sent {
                        Value::Object(m) => m,
                        _ => Map::new(),
                    };
                    next.remove("_meta");
                    next.remove("inputResponses");
                    next.remove("requestState");
                    if let Some(Value::Object(requests)) = result.get("inputRequests") {
                        next.insert("inputResponses".into(), self.answer_inputs(requests).await?);
                    }
                    if let Some(state) = result.get("requestState") {
                        next.insert("requestState".into(), state.clone());
                    }
                    params = Some(Value::Object(next));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_types() {
        assert!(matches!(result_kind("tools/list", &json!({})), Ok(ResultKind::Complete)));
        assert!(matches!(result_kind("tools/list", &json!({"resultType": "complete"})), Ok(ResultKind::Complete)));
        assert!(matches!(
            result_kind("tools/call", &json!({"resultType": "input_required"})),
            Ok(ResultKind::InputRequired)
        ));
        let err = result_kind("tools/list", &json!({"resultType": "partial"})).err().map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("Protocol error: unknown resultType \"partial\" in the result of tools/list"));
        assert!(result_kind("tools/list", &json!({"resultType": "input_required"})).is_err());
    }

    #[test]
    fn modern_is_by_date() {
        assert!(is_modern("2026-07-28") && is_modern("2027-01-01"));
        assert!(!is_modern("2025-11-25"));
    }
}
