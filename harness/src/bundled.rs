//! The bundled target: drives the project's own transports in-process through a client plan.

use crate::outcome::lock;
use mcp_scenario::results::{ClientOutcome, DiagnosticCounters, StepOutcome, StepStatus};
use mcp_scenario::{ClientStep, Scenario, TransportName};
use mcp_transports::client::{self, ClientOptions};
use mcp_transports::config::TransportKind;
use mcp_transports::{Handlers, RequestOptions, Transport, TransportConfig, TransportError};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Where the client finds the mock server for this run.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// stdio: the command line that starts the mock (the transport spawns it).
    Command(Vec<String>),
    /// HTTP kinds: the mock's URL.
    Url(String),
}

/// What the plan shares with the transport's handlers.
#[derive(Default)]
struct Observed {
    notifications: Mutex<Vec<(String, Value)>>,
    reports: Mutex<Vec<String>>,
    notified: Notify,
    closed: Notify,
    closed_flag: std::sync::atomic::AtomicBool,
}

type Pending = JoinHandle<(Result<Value, TransportError>, Instant)>;

/// Runs the client plan, pushing each step's outcome into `out` as it completes, so a run
/// cut short by its deadline still reports the steps that finished.
pub async fn run_plan(
    scenario: &Scenario,
    transport: TransportName,
    endpoint: Endpoint,
    out: Arc<Mutex<ClientOutcome>>,
) {
    let observed = Arc::new(Observed::default());
    let mut conn: Option<Arc<dyn Transport>> = None;
    let mut background: HashMap<String, (Pending, CancellationToken)> = HashMap::new();
    let mut started_at: HashMap<String, Instant> = HashMap::new();

    for (i, step) in scenario.client.iter().enumerate() {
        let started = Instant::now();
        let (what, result): (String, Result<Option<Value>, String>) = match step {
            ClientStep::Connect {
                handshake,
                timeout_ms,
                env,
                max_message_bytes,
                string_ids,
                roots,
                headers,
                auth_refresh,
            } => {
                let config = TransportConfig {
                    kind: match transport {
                        TransportName::Stdio => TransportKind::Stdio,
                        TransportName::Http => TransportKind::Http,
                        TransportName::LegacySse => TransportKind::Sse,
                    },
                    command: match &endpoint {
                        Endpoint::Command(c) => c.first().cloned().unwrap_or_default(),
                        Endpoint::Url(_) => String::new(),
                    },
                    args: match &endpoint {
                        Endpoint::Command(c) => c.iter().skip(1).cloned().collect(),
                        Endpoint::Url(_) => Vec::new(),
                    },
                    url: match &endpoint {
                        Endpoint::Url(u) => u.clone(),
                        Endpoint::Command(_) => String::new(),
                    },
                    timeout_ms: *timeout_ms,
                    string_ids: *string_ids,
                    max_message_bytes: *max_message_bytes,
                    protocol_version: scenario.revision.as_str().to_string(),
                    // In-process runs share one process environment, so the plan's env is
                    // handed to the transport instead of set globally.
                    timeout_env_override: Some(env.get(mcp_transports::config::TIMEOUT_ENV).cloned()),
                    headers: headers.clone(),
                    ..TransportConfig::default()
                };
                let handlers = handlers(&observed, roots.clone());
                let result = async {
                    let t = client::create_transport_with_auth(&config, handlers, refresh_hook(auth_refresh.clone()))
                        .await?;
                    conn = Some(t.clone());
                    if *handshake {
                        let options = ClientOptions {
                            protocol_version: scenario.revision.as_str().to_string(),
                            roots: roots.clone(),
                            ..ClientOptions::default()
                        };
                        client::handshake(t.as_ref(), &options).await?;
                    }
                    Ok::<_, TransportError>(None)
                }
                .await;
                ("connect".to_string(), result.map_err(|e| e.to_string()))
            }
            ClientStep::Request { method, params, timeout_ms, background: bg, label, pad_params } => {
                let params = pad(params.clone(), *pad_params);
                let what = format!("request {method}");
                match &conn {
                    None => (what, Err(TransportError::NotConnected.to_string())),
                    Some(t) => {
                        let token = CancellationToken::new();
                        let options = RequestOptions { timeout_ms: *timeout_ms, cancel: Some(token.clone()) };
                        let (t, method) = (t.clone(), method.clone());
                        let task: Pending = tokio::spawn(async move {
                            let r = t.request(&method, params, options).await;
                            (r, Instant::now())
                        });
                        if *bg {
                            let label = label.clone().unwrap_or_default();
                            started_at.insert(label.clone(), started);
                            background.insert(label, (task, token));
                            (format!("{what} (background)"), Ok(None))
                        } else {
                            (what, join(task).await)
                        }
                    }
                }
            }
            ClientStep::Await { request } => {
                let what = format!("await {request}");
                match background.remove(request) {
                    Some((task, _)) => (what, join(task).await),
                    None => (what, Err("no such background request".into())),
                }
            }
            ClientStep::Cancel { request } => {
                if let Some((_, token)) = background.get(request) {
                    token.cancel();
                }
                (format!("cancel {request}"), Ok(None))
            }
            ClientStep::Notify { method, params } => {
                let what = format!("notify {method}");
                match &conn {
                    None => (what, Err(TransportError::NotConnected.to_string())),
                    Some(t) => (what, t.notify(method, params.clone()).await.map(|_| None).map_err(|e| e.to_string())),
                }
            }
            ClientStep::Wait { ms } => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                (format!("wait {ms}ms"), Ok(None))
            }
            ClientStep::WaitClosed { timeout_ms } => {
                let waited = tokio::time::timeout(Duration::from_millis(*timeout_ms), async {
                    loop {
                        let notified = observed.closed.notified();
                        if observed.closed_flag.load(std::sync::atomic::Ordering::SeqCst) {
                            return;
                        }
                        notified.await;
                    }
                })
                .await;
                (
                    "wait_closed".to_string(),
                    waited.map(|_| None).map_err(|_| format!("still connected after {timeout_ms}ms")),
                )
            }
            ClientStep::WaitNotification { method, timeout_ms } => {
                let waited = tokio::time::timeout(Duration::from_millis(*timeout_ms), async {
                    loop {
                        let notified = observed.notified.notified();
                        if lock(&observed.notifications).iter().any(|(m, _)| m == method) {
                            return;
                        }
                        notified.await;
                    }
                })
                .await;
                (
                    format!("wait_notification {method}"),
                    waited.map(|_| None).map_err(|_| format!("no {method} notification within {timeout_ms}ms")),
                )
            }
            ClientStep::Close => {
                if let Some(t) = &conn {
                    t.close().await;
                }
                ("close".to_string(), Ok(None))
            }
        };
        // An awaited background request's time counts from when it was sent.
        let since = match step {
            ClientStep::Await { request } => started_at.get(request).copied().unwrap_or(started),
            _ => started,
        };
        let mut o = lock(&out);
        o.steps.push(StepOutcome {
            step: i + 1,
            what,
            status: if result.is_ok() { StepStatus::Ok } else { StepStatus::Error },
            elapsed_ms: since.elapsed().as_millis() as u64,
            result: result.as_ref().ok().cloned().flatten(),
            error: result.err(),
        });
        o.notifications = lock(&observed.notifications).clone();
        o.reports = lock(&observed.reports).clone();
        if let Some(t) = &conn {
            o.diagnostics = Some(counters(t.diagnostics()));
        }
    }
    // Requests still running in the background are the plan's leftovers; close releases them.
    for (_, (task, token)) in background {
        token.cancel();
        task.abort();
    }
    if let Some(t) = conn {
        // A plan that does not close ends with an implicit close, so the mock sees the
        // client's normal shutdown (stdin EOF) rather than being killed.
        if t.is_connected() {
            t.close().await;
        }
        let mut o = lock(&out);
        o.diagnostics = Some(counters(t.diagnostics()));
        o.notifications = lock(&observed.notifications).clone();
        o.reports = lock(&observed.reports).clone();
    }
}

/// The auth refresh hook a plan asks for: it returns the given headers, or nothing for `{}`.
fn refresh_hook(
    headers: Option<std::collections::BTreeMap<String, String>>,
) -> Option<mcp_transports::http::AuthRefresh> {
    let headers = headers?;
    Some(Arc::new(move || {
        let headers = headers.clone();
        Box::pin(async move { if headers.is_empty() { None } else { Some(headers) } })
    }))
}

/// Adds a `_pad` member of `size` bytes to the params.
fn pad(params: Option<Value>, size: Option<usize>) -> Option<Value> {
    let Some(size) = size else { return params };
    let mut p = params.unwrap_or_else(|| serde_json::json!({}));
    if let Some(obj) = p.as_object_mut() {
        obj.insert("_pad".into(), Value::from("x".repeat(size)));
    }
    Some(p)
}

async fn join(task: Pending) -> Result<Option<Value>, String> {
    match task.await {
        Ok((Ok(v), _)) => Ok(Some(v)),
        Ok((Err(e), _)) => Err(e.to_string()),
        Err(e) => Err(format!("client task failed: {e}")),
    }
}

fn handlers(observed: &Arc<Observed>, roots: Vec<Value>) -> Handlers {
    let (n, r, c) = (observed.clone(), observed.clone(), observed.clone());
    Handlers {
        on_notification: Some(Arc::new(move |method: &str, params: &Value| {
            lock(&n.notifications).push((method.to_string(), params.clone()));
            n.notified.notify_waiters();
        })),
        on_error: Some(Arc::new(move |e: &TransportError| lock(&r.reports).push(e.to_string()))),
        on_close: Some(Arc::new(move || {
            c.closed_flag.store(true, std::sync::atomic::Ordering::SeqCst);
            c.closed.notify_waiters();
        })),
        on_request: Some(client::default_request_handler(roots)),
    }
}

/// The bundled client's counters in the reported form.
fn counters(d: mcp_transports::Diagnostics) -> DiagnosticCounters {
    DiagnosticCounters {
        late_responses: d.late_responses,
        unknown_responses: d.unknown_responses,
        protocol_violations: d.protocol_violations,
        oversize_dropped: d.oversize_dropped,
        stderr_tail: d.stderr_tail,
    }
}
