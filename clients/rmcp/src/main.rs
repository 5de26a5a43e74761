//! mcp-harness driver for rmcp (the Rust MCP SDK, pinned to =3.11.0 in Cargo.toml).
//!
//! Runs the client plan from `MCP_HARNESS_PLAN` and prints one JSON line per step on stdout,
//! as clients/README.md specifies. The driver translates plan ops into what an application
//! would call with rmcp and reports the SDK's own error text (`Display` of `ServiceError`,
//! `ClientInitializeError`, `std::io::Error`). It never works around the SDK: an op (or an
//! op's option) rmcp cannot express is reported `unsupported` with the reason, and the plan
//! stops there.
//!
//! Mapping (details and the reasons for each choice in clients/README.md, "rmcp"):
//! - `connect`: `TokioChildProcess` (stdio) or `StreamableHttpClientTransport::from_config`
//!   (http), then `ServiceExt::serve_with_ct` (handshake) or `serve_directly` (no handshake).
//!   The client is a `ClientHandler` (roots/list answers the plan's roots; everything else is
//!   rmcp's default) wrapped in a `Service` that records every notification.
//! - `request`: plain foreground requests of methods with a convenience method
//!   (`Peer::list_tools`, `call_tool`, …) use it; requests with a timeout, background requests
//!   and other methods go through `Peer::send_cancellable_request` with `PeerRequestOptions`
//!   (typed `ClientRequest` when the plan's JSON round-trips through it unchanged, otherwise a
//!   raw `CustomRequest` carrying exactly the plan's method and params).
//! - `cancel`: `Peer::notify_cancelled` for the handle's id (what `RequestHandle::cancel`
//!   sends, without consuming the handle); `await`: `RequestHandle::await_response`.
//! - `notify`: a typed `ClientNotification` when lossless, else a raw `CustomNotification`.
//! - `wait_closed`: `Peer::is_transport_closed` (true once the service loop has ended).
//! - `wait_sent`: polls the mock's records in `MCP_HARNESS_RUN_DIR` (no SDK call).
//! - `close`: `RunningService::close`.
//!
//! Revisions from 2026-07-28 on: `connect` runs rmcp's `ClientLifecycleMode::Discover`
//! (a `server/discover` probe proposing the revision, then per-request `_meta`), and
//! `subscriptions/listen` goes through `Peer::listen` / `Subscription::next`.
#![allow(deprecated)] // roots/list and logging are deprecated by SEP-2577 but still in the protocol

use std::{
    collections::HashMap,
    io::Write,
    path::Path,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use mcp_scenario::ClientStep;
use mcp_scenario::plan::Connect;
use rmcp::{
    ClientHandler, ErrorData as McpError, Peer, RoleClient, Service, ServiceExt,
    model::{
        ClientCapabilities, ClientConfig, ClientNotification, ClientRequest, CustomNotification, CustomRequest,
        GetMeta, Implementation, ListRootsResult, NotificationMetaObject, ProtocolVersion, Root, ServerNotification,
        ServerResult, SubscriptionFilter,
    },
    service::{
        ClientLifecycleMode, NotificationContext, PeerRequestOptions, RequestContext, RequestHandle, RunningService,
        SubscriptionEnd, serve_client_with_lifecycle_and_ct, serve_directly,
    },
    transport::{
        StreamableHttpClientTransport, TokioChildProcess, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

const SDK_VERSION: &str = "3.11.0";
/// Strings in results longer than this are shortened, so a large reply cannot flood stdout.
const MAX_STRING: usize = 4096;
const CANCEL_REASON: &str = "cancelled by the plan";

// ---------------------------------------------------------------------------------------------
// The plan: `mcp_scenario::ClientStep`, the harness's own type, so every op and option the
// harness can send is one this driver handles (or reports unsupported below).

/// How many client messages the mock has recorded that match a `wait_sent` step: its
/// records (`conn-<n>.jsonl` in MCP_HARNESS_RUN_DIR, one wire event per line) are the only
/// place the client's own background traffic is visible.
fn count_sent(dir: &Path, method: Option<&str>, http_method: Option<&str>) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut count = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("conn-") && name.ends_with(".jsonl")) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for e in text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
            let event = e.get("event").and_then(Value::as_str);
            if !matches!(event, Some("from_client" | "http_request")) {
                continue;
            }
            if http_method.is_some() && e.get("http_method").and_then(Value::as_str) != http_method {
                continue;
            }
            if method.is_some() && e.pointer("/json/method").and_then(Value::as_str) != method {
                continue;
            }
            count += 1;
        }
    }
    count
}

// ---------------------------------------------------------------------------------------------
// Output

static STDOUT: Mutex<()> = Mutex::new(());

fn emit(line: Value) {
    let _guard = STDOUT.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn shorten(value: Value) -> Value {
    match value {
        Value::String(s) if s.chars().count() > MAX_STRING => {
            let head: String = s.chars().take(MAX_STRING).collect();
            Value::String(format!("{head}…({} chars)", s.chars().count()))
        }
        Value::Array(items) => Value::Array(items.into_iter().map(shorten).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, shorten(v))).collect()),
        other => other,
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

// ---------------------------------------------------------------------------------------------
// The client: a ClientHandler (the application's callbacks) inside a Service wrapper that
// reports every notification the SDK delivers.

#[derive(Default)]
struct Seen {
    methods: Vec<String>,
}

struct Shared {
    seen: Mutex<Seen>,
    changed: tokio::sync::Notify,
    /// How many `Recorder`s are alive. rmcp runs each notification handler in a task of its
    /// own that holds the service, so the count reaches 0 only once every notification the
    /// SDK received has been reported (see `Shared::settle`).
    recorders: tokio::sync::watch::Sender<usize>,
}

struct Handler {
    roots: Vec<Root>,
    info: ClientConfig,
}

impl ClientHandler for Handler {
    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, McpError> {
        Ok(ListRootsResult::new(self.roots.clone()))
    }

    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }
}

struct Recorder {
    handler: Handler,
    shared: Arc<Shared>,
}

impl Recorder {
    fn new(handler: Handler, shared: Arc<Shared>) -> Self {
        shared.recorders.send_modify(|n| *n += 1);
        Recorder { handler, shared }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.shared.recorders.send_modify(|n| *n -= 1);
    }
}

impl Service<RoleClient> for Recorder {
    fn handle_request(
        &self,
        request: rmcp::model::ServerRequest,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<rmcp::model::ClientResult, McpError>> + Send + '_ {
        Service::handle_request(&self.handler, request, context)
    }

    fn handle_notification(
        &self,
        notification: ServerNotification,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = Result<(), McpError>> + Send + '_ {
        self.record(&notification, &context);
        Service::handle_notification(&self.handler, notification, context)
    }

    fn get_info(&self) -> ClientConfig {
        self.handler.info.clone()
    }
}

impl Recorder {
    fn record(&self, notification: &ServerNotification, context: &NotificationContext<RoleClient>) {
        let (method, mut params) = method_and_params(notification);
        // The serve loop moves `_meta` out of the notification into the context (typed
        // notifications: `context.meta`; custom ones: still inside `context.extensions`).
        let meta = if !context.meta.is_empty() {
            Some(&context.meta)
        } else {
            context.extensions.get::<NotificationMetaObject>().filter(|m| !m.is_empty())
        };
        if let Some(meta) = meta.and_then(|m| serde_json::to_value(m).ok()) {
            params.insert("_meta".to_owned(), meta);
        }
        self.shared.report(method, Value::Object(params));
    }
}

impl Shared {
    fn new() -> Self {
        Shared {
            seen: Mutex::new(Seen::default()),
            changed: tokio::sync::Notify::new(),
            recorders: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Waits until no `Recorder` is alive, i.e. every notification task rmcp spawned has run
    /// (seen in `make soak`: a notification that arrived just before the reply ending the plan
    /// was reported after the driver had exited, so never). Bounded: a handler that never
    /// ends is reported, not waited for.
    async fn settle(&self) {
        let mut alive = self.recorders.subscribe();
        let bound = Duration::from_secs(2);
        if tokio::time::timeout(bound, alive.wait_for(|n| *n == 0)).await.is_err() {
            let n = *alive.borrow();
            emit(
                json!({"report": format!("{n} rmcp service(s) still held by handler tasks {}ms after close", ms(bound))}),
            );
        }
    }

    /// Prints a notification line and wakes `wait_notification`.
    fn report(&self, method: String, params: Value) {
        emit(json!({"notification": {"method": method, "params": params}}));
        self.seen.lock().unwrap().methods.push(method);
        self.changed.notify_waiters();
    }

    /// A notification a `Subscription` delivered (rmcp routes those to the subscription, not
    /// to the `ClientHandler`), with its `_meta` (the subscription id).
    fn report_subscribed(&self, notification: &ServerNotification) {
        let (method, mut params) = method_and_params(notification);
        let meta = notification.get_meta();
        if !params.contains_key("_meta")
            && !meta.is_empty()
            && let Ok(meta) = serde_json::to_value(meta)
        {
            params.insert("_meta".to_owned(), meta);
        }
        self.report(method, Value::Object(params));
    }
}

/// A notification's method and params as the driver reports them: params that are not an
/// object go under `_params`, and an empty `_meta` (the serve loop may leave one behind when it
/// moves `_meta` into the context) is dropped.
fn method_and_params(notification: &ServerNotification) -> (String, Map<String, Value>) {
    let mut value = serde_json::to_value(notification)
        .unwrap_or_else(|e| json!({"method": "?", "params": {"_driver_error": e.to_string()}}));
    let method = value.get("method").and_then(Value::as_str).unwrap_or("?").to_owned();
    let mut params = match value.get_mut("params").map(Value::take) {
        Some(Value::Object(map)) => map,
        Some(Value::Null) | None => Map::new(),
        Some(other) => Map::from_iter([("_params".to_owned(), other)]),
    };
    if params.get("_meta").is_some_and(|m| m.as_object().is_some_and(Map::is_empty)) {
        params.remove("_meta");
    }
    (method, params)
}

type Client = RunningService<RoleClient, Recorder>;

// ---------------------------------------------------------------------------------------------
// Driver state

enum Outcome {
    /// The step succeeded; the result (if any) and the elapsed time override.
    Ok(Option<Value>, Option<u64>),
    /// The step failed with this (SDK) error text.
    Err(String, Option<u64>),
    /// The driver ended the step itself (the plan has no connection): `"by": "driver"`.
    DriverErr(String),
    /// The SDK cannot do this; stop the plan.
    Unsupported(String),
}

enum Background {
    /// A request: its handle.
    Request { handle: RequestHandle<RoleClient>, started: Instant },
    /// A `subscriptions/listen` (`Peer::listen`) running in its own task until the stream
    /// ends; `cancel` asks it to `Subscription::cancel_with_reason`.
    Listen { task: tokio::task::JoinHandle<Outcome>, cancel: CancellationToken, started: Instant },
    /// A request the plan cancelled with `RequestHandle::cancel`, which consumed its handle.
    Cancelled,
}

struct Driver {
    transport: String,
    server_command: Vec<String>,
    url: Option<String>,
    shared: Arc<Shared>,
    client: Option<Client>,
    /// The connection's default request timeout (`connect.timeout_ms`; `0` disables).
    timeout: Option<Duration>,
    background: HashMap<String, Background>,
    closed: bool,
    /// The connection speaks a stateless revision (2026-07-28 on).
    modern: bool,
    /// The last connect attempt failed (nothing is left open).
    connect_failed: bool,
    /// `--default-lifecycle`: plain `serve()` (the initialize handshake) on every revision.
    default_lifecycle: bool,
}

/// The flag that runs rmcp's default lifecycle on every revision.
const DEFAULT_LIFECYCLE_FLAG: &str = "--default-lifecycle";

/// A protocol version string as rmcp's type (its `Deserialize` keeps unknown versions too).
fn protocol_version_of(version: &str) -> ProtocolVersion {
    serde_json::from_value(Value::String(version.to_owned())).unwrap_or_default()
}

fn timeout_of(ms: u64) -> Option<Duration> {
    (ms > 0).then(|| Duration::from_millis(ms))
}

/// Builds a typed request/notification from the plan's method and params when serde
/// round-trips it unchanged; otherwise `None` (the caller then sends the raw custom variant).
fn lossless<T: serde::de::DeserializeOwned + serde::Serialize>(wire: &Value) -> Option<T> {
    let typed: T = serde_json::from_value(wire.clone()).ok()?;
    (serde_json::to_value(&typed).ok()? == *wire).then_some(typed)
}

fn wire(method: &str, params: &Option<Value>) -> Value {
    match params {
        Some(p) => json!({"method": method, "params": p}),
        None => json!({"method": method}),
    }
}

fn client_request(method: &str, params: &Option<Value>) -> ClientRequest {
    match lossless::<ClientRequest>(&wire(method, params)) {
        Some(ClientRequest::CustomRequest(_)) | None => {
            ClientRequest::CustomRequest(CustomRequest::new(method, params.clone()))
        }
        Some(typed) => typed,
    }
}

fn result_value<T: serde::Serialize>(result: &T) -> Value {
    serde_json::to_value(result).unwrap_or_else(|e| json!({"_driver_error": format!("result not serialisable: {e}")}))
}

impl Driver {
    fn client(&self) -> Result<&Client, String> {
        self.client
            .as_ref()
            .ok_or_else(|| "not connected (the plan has no successful connect before this step)".to_owned())
    }

    async fn run_step(&mut self, step: ClientStep) -> Outcome {
        match step {
            ClientStep::Connect(connect) => self.connect(connect).await,
            ClientStep::Request {
                method,
                params,
                timeout_ms,
                background,
                label,
                pad_params,
                reset_timeout_on_progress,
                max_total_timeout_ms,
                // rmcp re-initializes a session that met a 404 by itself (its streamable HTTP
                // client's transparent re-initialization): the request is sent as any other.
                new_session: _,
            } => {
                let params = match padded(params, pad_params) {
                    Ok(p) => p,
                    Err(why) => return why,
                };
                let timeout = match timeout_ms {
                    Some(t) => timeout_of(t),
                    None => self.timeout,
                };
                let mut options = match timeout {
                    Some(t) => PeerRequestOptions::with_timeout(t),
                    None => PeerRequestOptions::no_options(),
                };
                // rmcp's own progress options: `reset_timeout_on_progress` restarts the
                // timeout on each notifications/progress for the request's progress token
                // (rmcp stamps its own token on every request), `with_max_total_timeout` bounds
                // the whole request whatever progress arrives.
                if reset_timeout_on_progress {
                    options = options.reset_timeout_on_progress();
                }
                if let Some(total) = max_total_timeout_ms.and_then(timeout_of) {
                    options = options.with_max_total_timeout(total);
                }
                let timed = timeout_ms.is_some() || self.timeout.is_some() || options.max_total_timeout.is_some();
                if self.modern && method == "subscriptions/listen" {
                    if reset_timeout_on_progress || max_total_timeout_ms.is_some() {
                        return Outcome::Unsupported(
                            "Peer::listen takes no request options (no progress reset, no total bound)".to_owned(),
                        );
                    }
                    return self.listen(params, timeout_ms, background, label.unwrap_or_default()).await;
                }
                let request = client_request(&method, &params);
                if background {
                    self.background_request(request, options, label.unwrap_or_default()).await
                } else {
                    self.request(request, options, timed).await
                }
            }
            ClientStep::Await { request } => match self.background.remove(&request) {
                Some(Background::Request { handle, started }) => {
                    let result = handle.await_response().await;
                    let elapsed = Some(ms(started.elapsed()));
                    match result {
                        Ok(r) => Outcome::Ok(Some(result_value(&r)), elapsed),
                        Err(e) => Outcome::Err(e.to_string(), elapsed),
                    }
                }
                Some(Background::Listen { task, started, .. }) => {
                    let outcome = task.await;
                    let elapsed = Some(ms(started.elapsed()));
                    match outcome {
                        Ok(Outcome::Ok(result, _)) => Outcome::Ok(result, elapsed),
                        Ok(Outcome::Err(error, _)) => Outcome::Err(error, elapsed),
                        Ok(unsupported) => unsupported,
                        Err(e) => Outcome::Err(format!("the listen task failed: {e}"), elapsed),
                    }
                }
                Some(Background::Cancelled) => Outcome::DriverErr(format!(
                    "{CANCEL_REASON}: rmcp's RequestHandle::cancel consumed the request's handle, so an application has no outcome to await"
                )),
                None => Outcome::Err(format!("no background request labelled {request:?}"), None),
            },
            // rmcp's cancellation is `RequestHandle::cancel`: it sends `notifications/cancelled`
            // for the request id (and drops the request's progress and subscription state), and
            // consumes the handle, so a later `await` has nothing to read: the driver says so
            // (`"by": "driver"`). The notification on the wire is rmcp's own.
            ClientStep::Cancel { request } => match self.background.remove(&request) {
                None => Outcome::Ok(None, None),
                Some(Background::Listen { task, cancel, started }) => {
                    cancel.cancel();
                    self.background.insert(request, Background::Listen { task, cancel, started });
                    Outcome::Ok(None, None)
                }
                Some(Background::Cancelled) => {
                    self.background.insert(request, Background::Cancelled);
                    Outcome::Ok(None, None)
                }
                Some(Background::Request { handle, .. }) => {
                    self.background.insert(request, Background::Cancelled);
                    match handle.cancel(Some(CANCEL_REASON.to_owned())).await {
                        Ok(()) => Outcome::Ok(None, None),
                        Err(e) => Outcome::Err(e.to_string(), None),
                    }
                }
            },
            // A Rust caller that stops waiting without cancelling drops what it holds (its own
            // timeout or `select!` drops the future): here rmcp's `RequestHandle` (rmcp gives it
            // no `Drop` of its own, so whatever goes on the wire is rmcp's doing), or for a listen
            // the task that owns the `Subscription`. Nothing is left to `await`.
            ClientStep::Abandon { request } => match self.background.remove(&request) {
                Some(Background::Request { handle, .. }) => {
                    drop(handle);
                    Outcome::Ok(None, None)
                }
                Some(Background::Listen { task, .. }) => {
                    task.abort();
                    Outcome::Ok(None, None)
                }
                Some(Background::Cancelled) | None => Outcome::Ok(None, None),
            },
            ClientStep::Notify { method, params, pad_params } => {
                let params = match padded(params, pad_params) {
                    Ok(p) => p,
                    Err(why) => return why,
                };
                let client = match self.client() {
                    Ok(c) => c,
                    Err(e) => return Outcome::DriverErr(e),
                };
                let result = if method == "notifications/roots/list_changed" && params.is_none() {
                    client.notify_roots_list_changed().await
                } else {
                    let notification = match lossless::<ClientNotification>(&wire(&method, &params)) {
                        Some(ClientNotification::CustomNotification(_)) | None => {
                            ClientNotification::CustomNotification(CustomNotification::new(method, params))
                        }
                        Some(typed) => typed,
                    };
                    client.send_notification(notification).await
                };
                match result {
                    Ok(()) => Outcome::Ok(None, None),
                    Err(e) => Outcome::Err(e.to_string(), None),
                }
            }
            ClientStep::Wait { ms } => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Outcome::Ok(None, None)
            }
            ClientStep::WaitNotification { method, timeout_ms } => {
                let shared = self.shared.clone();
                let seen = async {
                    loop {
                        let notified = shared.changed.notified();
                        tokio::pin!(notified);
                        notified.as_mut().enable();
                        if shared.seen.lock().unwrap().methods.contains(&method) {
                            return;
                        }
                        notified.await;
                    }
                };
                match tokio::time::timeout(Duration::from_millis(timeout_ms), seen).await {
                    Ok(()) => Outcome::Ok(None, None),
                    Err(_) => Outcome::Err(format!("no {method} notification within {timeout_ms}ms"), None),
                }
            }
            ClientStep::WaitSent { method, http_method, count, timeout_ms } => {
                let Some(dir) = std::env::var_os("MCP_HARNESS_RUN_DIR") else {
                    return Outcome::Unsupported("MCP_HARNESS_RUN_DIR is not set (an older harness?)".into());
                };
                let deadline = Instant::now() + Duration::from_millis(timeout_ms);
                // Another process writes the records: there is no in-process event to wait on.
                while count_sent(Path::new(&dir), method.as_deref(), http_method.as_deref()) < count {
                    if Instant::now() >= deadline {
                        return Outcome::Err(
                            format!("the mock saw fewer than {count} such message(s) within {timeout_ms}ms"),
                            None,
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Outcome::Ok(None, None)
            }
            ClientStep::WaitClosed { timeout_ms } => {
                let peer: Peer<RoleClient> = match self.client() {
                    Ok(c) => c.peer().clone(),
                    // A failed serve()/serve_with_ct() drops (and so closes) its transport.
                    Err(_) if self.connect_failed => return Outcome::Ok(None, None),
                    Err(e) => return Outcome::DriverErr(e),
                };
                let deadline = Instant::now() + Duration::from_millis(timeout_ms);
                while !peer.is_transport_closed() {
                    if Instant::now() >= deadline {
                        return Outcome::Err(format!("still connected after {timeout_ms}ms"), None);
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Outcome::Ok(None, None)
            }
            ClientStep::WaitManager { .. } | ClientStep::ManagerTools => Outcome::Unsupported(
                "rmcp has no connection manager whose events or tools could be observed".to_owned(),
            ),
            ClientStep::Close => match self.close().await {
                Ok(()) => Outcome::Ok(None, None),
                Err(e) => Outcome::Err(e, None),
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn connect(&mut self, connect: Connect) -> Outcome {
        let Connect {
            handshake,
            timeout_ms,
            env,
            max_message_bytes,
            string_ids,
            roots,
            headers,
            auth_refresh,
            managed,
            protocol_version,
            legacy_fallback,
            oauth,
        } = connect;
        // Until serve succeeds: any failure below leaves no transport open.
        self.connect_failed = true;
        if oauth.is_some() {
            // Not declared (contract 2026-12-05.2's `connect.oauth`), so the harness skips such
            // plans first; this answers a plan run by hand.
            return Outcome::Unsupported("this driver maps no OAuth client yet (connect.oauth)".into());
        }
        if !env.is_empty() {
            let names: Vec<&str> = env.keys().map(String::as_str).collect();
            return Outcome::Unsupported(format!(
                "rmcp reads no client or transport settings from the environment (plan sets {})",
                names.join(", ")
            ));
        }
        if string_ids {
            return Outcome::Unsupported(
                "rmcp always uses numeric request ids: serve_client hard-wires AtomicU32RequestIdProvider and exposes no way to supply another RequestIdProvider".to_owned(),
            );
        }
        if self.transport == "legacy-sse" {
            return Outcome::Unsupported(
                "rmcp 3.11.0 has no legacy HTTP+SSE (2024-11-05) client transport; its only HTTP client transport is Streamable HTTP".to_owned(),
            );
        }
        if self.transport != "stdio" && self.transport != "http" {
            return Outcome::Unsupported(format!("unknown transport {:?}", self.transport));
        }
        if self.transport == "stdio" && max_message_bytes.is_some() {
            return Outcome::Unsupported(
                "TokioChildProcess has no inbound message size setting (its line reader keeps rmcp's fixed 16 MiB DEFAULT_MAX_LINE_LENGTH; AsyncRwTransport::with_max_line_length is not reachable through TokioChildProcess)".to_owned(),
            );
        }
        if self.transport == "stdio" && !headers.is_empty() {
            return Outcome::Unsupported("HTTP headers on a stdio connection".to_owned());
        }
        let revision = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
        let modern = !revision.is_empty() && !protocol_version_of(&revision).has_initialize();
        let offered_modern = protocol_version.as_deref().is_some_and(|v| !protocol_version_of(v).has_initialize());
        // 2026-07-28 on (the revision, or the plan's preferred version): rmcp's Discover
        // lifecycle (modern only) proposing the plan's preferred version first (default: the
        // scenario's revision), then the revision itself; with `legacy_fallback: true` its
        // Auto lifecycle, which falls back to initialize at the scenario's revision when the
        // server shows it is legacy.
        let lifecycle = if self.default_lifecycle {
            // Judged as what it is, a client of the initialize handshake: never by the rules
            // of a revision it does not speak (the versioning page's Legacy / Modern row).
            if modern {
                return Outcome::Unsupported(format!(
                    "plain serve() (--default-lifecycle, rmcp's default) runs the initialize handshake only; {revision} needs ClientLifecycleMode::Discover or Auto"
                ));
            }
            if offered_modern {
                return Outcome::Unsupported(format!(
                    "plain serve() (--default-lifecycle) runs the initialize handshake only: it never offers {} through a server/discover probe",
                    protocol_version.as_deref().unwrap_or_default()
                ));
            }
            if legacy_fallback.is_some() {
                return Outcome::Unsupported(
                    "plain serve() (--default-lifecycle) runs the initialize handshake only: no modern version to fall back from".to_owned(),
                );
            }
            None
        } else if modern || offered_modern {
            if !handshake {
                return Outcome::Unsupported(
                    "without its discover/initialize startup rmcp sends no per-request _meta: serve_directly leaves the client request metadata unset (Peer::set_client_request_metadata is pub(crate))".to_owned(),
                );
            }
            let mut preferred = vec![protocol_version_of(protocol_version.as_deref().unwrap_or(&revision))];
            let own = protocol_version_of(&revision);
            if modern && !preferred.contains(&own) {
                preferred.push(own.clone());
            }
            match legacy_fallback {
                Some(true) => Some(ClientLifecycleMode::Auto {
                    preferred_versions: preferred,
                    legacy_version: (!modern).then_some(own),
                }),
                Some(false) => Some(ClientLifecycleMode::Discover { preferred_versions: preferred }),
                // A modern offer to a legacy revision without saying which client: rmcp's own
                // default (`serve`) never offers a modern version at all.
                None if !modern => {
                    return Outcome::Unsupported(format!(
                        "the plan offers {} to a {revision} server without `legacy_fallback`: rmcp's default lifecycle offers its own initialize version",
                        protocol_version.as_deref().unwrap_or_default()
                    ));
                }
                None => Some(ClientLifecycleMode::Discover { preferred_versions: preferred }),
            }
        } else {
            if legacy_fallback.is_some() {
                return Outcome::Unsupported(
                    "legacy_fallback applies to a modern protocol_version; this plan offers the initialize handshake"
                        .to_owned(),
                );
            }
            None
        };
        if managed.is_some() {
            return Outcome::Unsupported(
                "rmcp has no reconnecting connection manager (no reconnect with backoff after a close, no storm breaker, no tool-call replay rule): a closed RunningService stays closed. (It does start a new session after a 404 by itself: session-expired-404-new-session.)".to_owned(),
            );
        }
        if auth_refresh.is_some() {
            return Outcome::Unsupported(
                "rmcp has no auth refresh hook returning headers on 401/403; its only re-authorisation path is the OAuth AuthClient/AuthorizationManager flow (feature `auth`)".to_owned(),
            );
        }
        let roots: Vec<Root> = match roots.into_iter().map(serde_json::from_value).collect() {
            Ok(r) => r,
            Err(e) => return Outcome::Unsupported(format!("the plan's roots do not fit rmcp's model::Root ({e})")),
        };

        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("mcp-harness-driver-rmcp", SDK_VERSION);
        // The initialize handshake offers the `protocol_version` of the ClientHandler's
        // `get_info()` (rmcp's default: its latest handshake version); an application that
        // prefers another version sets it there. A modern preference goes to the discover
        // lifecycle above instead.
        if let Some(version) = protocol_version.as_deref().filter(|_| !offered_modern) {
            info.protocol_version = protocol_version_of(version);
        }
        if !roots.is_empty() {
            info.capabilities = serde_json::from_value::<ClientCapabilities>(json!({"roots": {"listChanged": true}}))
                .expect("roots capability");
        }
        let service = Recorder::new(Handler { roots, info }, self.shared.clone());
        self.timeout = timeout_ms.and_then(timeout_of);

        let result = if self.transport == "stdio" {
            let Some((program, args)) = self.server_command.split_first() else {
                return Outcome::Err("MCP_HARNESS_SERVER_COMMAND is missing or empty".to_owned(), None);
            };
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            let transport = match TokioChildProcess::new(command) {
                Ok(t) => t,
                Err(e) => return Outcome::Err(e.to_string(), None),
            };
            Self::serve(service, transport, handshake, lifecycle, self.timeout).await
        } else {
            let Some(url) = self.url.clone() else {
                return Outcome::Err("no server URL: the harness appends it as the last argument".to_owned(), None);
            };
            let mut config = StreamableHttpClientTransportConfig::with_uri(url);
            if !headers.is_empty() {
                let mut custom = HashMap::new();
                for (name, value) in &headers {
                    let name = match http::HeaderName::from_bytes(name.as_bytes()) {
                        Ok(n) => n,
                        Err(e) => return Outcome::Err(format!("header name {name:?}: {e}"), None),
                    };
                    let value = match http::HeaderValue::from_str(value) {
                        Ok(v) => v,
                        Err(e) => return Outcome::Err(format!("header value for {name}: {e}"), None),
                    };
                    custom.insert(name, value);
                }
                config = config.custom_headers(custom);
            }
            if let Some(cap) = max_message_bytes {
                config = config.max_sse_event_size(cap).max_json_response_size(cap);
            }
            let transport = StreamableHttpClientTransport::from_config(config);
            Self::serve(service, transport, handshake, lifecycle, self.timeout).await
        };
        match result {
            Ok(client) => {
                self.client = Some(client);
                self.modern = modern && !self.default_lifecycle;
                self.closed = false;
                self.connect_failed = false;
                Outcome::Ok(None, None)
            }
            Err(outcome) => outcome,
        }
    }

    /// `serve_with_ct` runs the initialize handshake; a connection timeout cancels it through
    /// the token (rmcp's way to interrupt initialisation). Without a handshake,
    /// `serve_directly` starts the service loop at once. A handshake the driver's own timer
    /// cancelled is [`Outcome::DriverErr`]: rmcp has no handshake timeout, so the failure is
    /// the driver's act, not the SDK's.
    async fn serve<T, E, A>(
        service: Recorder,
        transport: T,
        handshake: bool,
        lifecycle: Option<ClientLifecycleMode>,
        timeout: Option<Duration>,
    ) -> Result<Client, Outcome>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        if !handshake {
            return Ok(serve_directly(service, transport, None));
        }
        let ct = CancellationToken::new();
        let serving = async {
            match lifecycle {
                Some(mode) => serve_client_with_lifecycle_and_ct(service, transport, mode, ct.clone()).await,
                None => service.serve_with_ct(transport, ct.clone()).await,
            }
        };
        tokio::pin!(serving);
        let mut cancelled_by_driver = false;
        let result = match timeout {
            None => serving.await,
            Some(t) => tokio::select! {
                r = &mut serving => r,
                _ = tokio::time::sleep(t) => {
                    cancelled_by_driver = true;
                    ct.cancel();
                    serving.await
                }
            },
        };
        result.map_err(|e| match cancelled_by_driver {
            true => Outcome::DriverErr(format!(
                "connect timed out after {}ms: the driver cancelled rmcp's handshake ({e})",
                ms(timeout.unwrap_or_default())
            )),
            false => Outcome::Err(e.to_string(), None),
        })
    }

    async fn request(&mut self, request: ClientRequest, options: PeerRequestOptions, timed: bool) -> Outcome {
        let client = match self.client() {
            Ok(c) => c,
            Err(e) => return Outcome::DriverErr(e),
        };
        // Plain foreground calls use the convenience method an application would call.
        // Those take no timeout, so any timeout (per request or per connection) goes through
        // send_cancellable_request with PeerRequestOptions instead.
        if !timed {
            let convenience = match request.clone() {
                ClientRequest::ListToolsRequest(r) => Some(to_outcome(client.list_tools(r.params).await)),
                ClientRequest::CallToolRequest(r) => Some(to_outcome(client.call_tool(r.params).await)),
                ClientRequest::ListResourcesRequest(r) => Some(to_outcome(client.list_resources(r.params).await)),
                ClientRequest::ListResourceTemplatesRequest(r) => {
                    Some(to_outcome(client.list_resource_templates(r.params).await))
                }
                ClientRequest::ReadResourceRequest(r) => Some(to_outcome(client.read_resource(r.params).await)),
                ClientRequest::ListPromptsRequest(r) => Some(to_outcome(client.list_prompts(r.params).await)),
                ClientRequest::GetPromptRequest(r) => Some(to_outcome(client.get_prompt(r.params).await)),
                ClientRequest::CompleteRequest(r) => Some(to_outcome(client.complete(r.params).await)),
                _ => None,
            };
            if let Some(outcome) = convenience {
                return outcome;
            }
        }
        match client.send_cancellable_request(request, options).await {
            Ok(handle) => to_outcome(handle.await_response().await),
            Err(e) => Outcome::Err(e.to_string(), None),
        }
    }

    async fn background_request(
        &mut self,
        request: ClientRequest,
        options: PeerRequestOptions,
        label: String,
    ) -> Outcome {
        let client = match self.client() {
            Ok(c) => c,
            Err(e) => return Outcome::DriverErr(e),
        };
        let started = Instant::now();
        match client.send_cancellable_request(request, options).await {
            Ok(handle) => {
                self.background.insert(label, Background::Request { handle, started });
                Outcome::Ok(None, None)
            }
            Err(e) => Outcome::Err(e.to_string(), None),
        }
    }

    /// `subscriptions/listen` through `Peer::listen`: it returns once the server acknowledged
    /// (rmcp consumes the `notifications/subscriptions/acknowledged` itself, so the driver
    /// reports it with the acknowledged filter), then `Subscription::next` yields the
    /// notifications correlated to it until the stream ends. The step's outcome is how it
    /// ended (`Subscription::end`): the final result when graceful, else an error naming the end.
    async fn listen(
        &mut self,
        params: Option<Value>,
        timeout_ms: Option<u64>,
        background: bool,
        label: String,
    ) -> Outcome {
        if timeout_ms.is_some() {
            return Outcome::Unsupported("Peer::listen takes no request options (no timeout)".to_owned());
        }
        let params = params.unwrap_or_else(|| json!({}));
        if params.as_object().is_some_and(|p| p.keys().any(|k| k != "notifications")) {
            return Outcome::Unsupported(
                "Peer::listen takes only the notifications filter, no other params".to_owned(),
            );
        }
        let wanted = params.get("notifications").cloned().unwrap_or_else(|| json!({}));
        let Some(filter) = lossless::<SubscriptionFilter>(&wanted) else {
            return Outcome::Unsupported(format!(
                "the filter {wanted} does not fit rmcp's SubscriptionFilter unchanged"
            ));
        };
        let peer = match self.client() {
            Ok(c) => c.peer().clone(),
            Err(e) => return Outcome::DriverErr(e),
        };
        let cancel = CancellationToken::new();
        let shared = self.shared.clone();
        let token = cancel.clone();
        let run = async move {
            let mut subscription = tokio::select! {
                r = peer.listen(filter) => match r {
                    Ok(s) => s,
                    Err(e) => return Outcome::Err(e.to_string(), None),
                },
                _ = token.cancelled() => return Outcome::Err("cancelled before the acknowledgment (Peer::listen dropped)".to_owned(), None),
            };
            let ack = json!({
                "notifications": serde_json::to_value(subscription.acknowledged()).unwrap_or_default(),
                "_meta": {"io.modelcontextprotocol/subscriptionId": serde_json::to_value(subscription.id()).unwrap_or_default()},
            });
            shared.report("notifications/subscriptions/acknowledged".to_owned(), ack);
            loop {
                tokio::select! {
                    next = subscription.next() => match next {
                        Ok(Some(notification)) => shared.report_subscribed(&notification),
                        Ok(None) => break,
                        Err(e) => return Outcome::Err(e.to_string(), None),
                    },
                    _ = token.cancelled() => {
                        if let Err(e) = subscription.cancel_with_reason(Some(CANCEL_REASON.to_owned())).await {
                            return Outcome::Err(e.to_string(), None);
                        }
                        break;
                    }
                }
            }
            match subscription.end() {
                Some(SubscriptionEnd::Graceful(result)) => Outcome::Ok(Some(result_value(result)), None),
                Some(end) => Outcome::Err(format!("subscription ended: {end:?}"), None),
                None => Outcome::Err("subscription ended without an end state".to_owned(), None),
            }
        };
        if !background {
            return run.await;
        }
        let started = Instant::now();
        self.background.insert(label, Background::Listen { task: tokio::spawn(run), cancel, started });
        Outcome::Ok(None, None)
    }

    async fn close(&mut self) -> Result<(), String> {
        self.closed = true;
        match self.client.as_mut() {
            Some(client) => client.close().await.map(|_reason| ()).map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
}

/// SDK results as JSON for the step line.
trait IntoValue {
    fn into_value(self) -> Value;
}

impl IntoValue for ServerResult {
    fn into_value(self) -> Value {
        result_value(&self)
    }
}

macro_rules! into_value {
    ($($t:ty),*) => {$(
        impl IntoValue for $t {
            fn into_value(self) -> Value {
                result_value(&self)
            }
        }
    )*};
}

into_value!(
    rmcp::model::ListToolsResult,
    rmcp::model::CallToolResult,
    rmcp::model::ListResourcesResult,
    rmcp::model::ListResourceTemplatesResult,
    rmcp::model::ReadResourceResult,
    rmcp::model::ListPromptsResult,
    rmcp::model::GetPromptResult,
    rmcp::model::CompleteResult
);

fn to_outcome<T: IntoValue>(result: Result<T, rmcp::ServiceError>) -> Outcome {
    match result {
        Ok(r) => Outcome::Ok(Some(r.into_value()), None),
        Err(e) => Outcome::Err(e.to_string(), None),
    }
}

/// `params` with a `_pad` string of `pad` bytes (`pad_params`); unsupported for params that
/// are no object.
fn padded(params: Option<Value>, pad: Option<usize>) -> Result<Option<Value>, Outcome> {
    let Some(n) = pad else { return Ok(params) };
    let mut map = match params {
        Some(Value::Object(map)) => map,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(Outcome::Unsupported("pad_params with non-object params".to_owned())),
    };
    map.insert("_pad".to_owned(), Value::String("x".repeat(n)));
    Ok(Some(Value::Object(map)))
}

fn fail(message: &str) -> ! {
    eprintln!("mcp-driver-rmcp: {message}");
    std::process::exit(2);
}

fn main() {
    // The declaration: every op and field of the plan model this driver is compiled against.
    // Each is destructured in full below (only ops reported unsupported as a whole use `..`),
    // so a field the model gains cannot reach this driver unhandled.
    if std::env::var("MCP_HARNESS_DECLARE").as_deref() == Ok("1") {
        let performs: serde_json::Map<String, Value> = mcp_scenario::contract::model()
            .into_iter()
            .map(|op| (op.name, Value::from(op.fields.into_iter().map(|f| f.name).collect::<Vec<_>>())))
            .collect();
        println!("{}", json!({"contract": mcp_scenario::contract::VERSION, "performs": performs}));
        return;
    }
    // The plan file is always written; the inline variable only for small plans.
    let raw = match std::env::var("MCP_HARNESS_PLAN_FILE") {
        Ok(path) => std::fs::read_to_string(&path)
            .unwrap_or_else(|e| fail(&format!("MCP_HARNESS_PLAN_FILE {path} cannot be read ({e})"))),
        Err(_) => std::env::var("MCP_HARNESS_PLAN").unwrap_or_else(|_| {
            fail("MCP_HARNESS_PLAN_FILE / MCP_HARNESS_PLAN is missing; run me through mcp-harness --target cmd:…")
        }),
    };
    let plan: Vec<Value> = serde_json::from_str(&raw).unwrap_or_else(|e| {
        fail(&format!("the plan is not a JSON array ({e}); run me through mcp-harness --target cmd:…"))
    });
    let server_command: Vec<String> = match std::env::var("MCP_HARNESS_SERVER_COMMAND") {
        Ok(raw) => serde_json::from_str(&raw)
            .unwrap_or_else(|e| fail(&format!("MCP_HARNESS_SERVER_COMMAND is not a JSON array of strings ({e})"))),
        Err(_) => Vec::new(),
    };
    // `--default-lifecycle`: plain `serve()` on every revision, the startup most rmcp users
    // get (its own matrix column); otherwise Discover / Auto on 2026-07-28.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let default_lifecycle = args.iter().any(|a| a == DEFAULT_LIFECYCLE_FLAG);
    let url = args.iter().rfind(|a| *a != DEFAULT_LIFECYCLE_FLAG).cloned();
    emit(json!({"sdk": {"name": "rmcp", "version": SDK_VERSION}}));
    let transport = std::env::var("MCP_HARNESS_TRANSPORT").unwrap_or_else(|_| "stdio".to_owned());

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&format!("cannot start the tokio runtime: {e}")));
    runtime.block_on(async move {
        let mut driver = Driver {
            transport,
            server_command,
            url,
            shared: Arc::new(Shared::new()),
            client: None,
            timeout: None,
            background: HashMap::new(),
            closed: false,
            modern: false,
            connect_failed: false,
            default_lifecycle,
        };
        for (i, raw) in plan.into_iter().enumerate() {
            let n = i + 1;
            let op = raw.get("op").and_then(Value::as_str).unwrap_or("?").to_owned();
            let step: ClientStep = match serde_json::from_value(raw) {
                Ok(s) => s,
                Err(e) => {
                    emit(json!({"step": n, "unsupported": format!("plan op {op:?} is unknown to this driver or malformed ({e})")}));
                    break;
                }
            };
            let started = Instant::now();
            match driver.run_step(step).await {
                Outcome::Ok(result, elapsed) => {
                    let mut line = json!({"step": n, "ok": true});
                    if let Some(r) = result {
                        line["result"] = shorten(r);
                    }
                    line["elapsed_ms"] = json!(elapsed.unwrap_or_else(|| ms(started.elapsed())));
                    emit(line);
                }
                Outcome::Err(error, elapsed) => {
                    emit(json!({"step": n, "ok": false, "error": error, "elapsed_ms": elapsed.unwrap_or_else(|| ms(started.elapsed()))}));
                }
                Outcome::DriverErr(error) => {
                    emit(json!({"step": n, "ok": false, "error": error, "by": "driver", "elapsed_ms": ms(started.elapsed())}));
                }
                Outcome::Unsupported(reason) => {
                    emit(json!({"step": n, "unsupported": reason}));
                    break;
                }
            }
        }
        // Like the bundled target, a plan that does not close ends with an implicit close.
        if driver.client.is_some()
            && !driver.closed
            && let Err(e) = driver.close().await
        {
            emit(json!({"report": format!("close after the plan failed: {e}")}));
        }
        // The closed client still holds its service; dropping it leaves the service to the
        // notification tasks still to run, which `settle` waits for.
        driver.client = None;
        driver.shared.settle().await;
    });
    // rmcp runs each notification handler in a task of its own, which may still be writing
    // its line: the exit waits for it (seen in `make soak`: a line cut at `{"notification`,
    // and the notification reported as never seen).
    let _writing = STDOUT.lock().unwrap_or_else(|e| e.into_inner());
    let _ = std::io::stdout().flush();
    std::process::exit(0);
}
