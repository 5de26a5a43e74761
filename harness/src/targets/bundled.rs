//! The bundled target: drives the project's own transports in-process through a client plan.

use super::{Client, ClientRun, Endpoint};
use crate::outcome::{describe_step, lock, not_run};
use crate::run_record::{RECORD_POLL, RunRecord};
use crate::scope::TargetKind;
use futures::future::BoxFuture;
use mcp_results::{ClientOutcome, DiagnosticCounters, ManagerEventRecord, StepOutcome, StepStatus};
use mcp_scenario::{ClientStep, Scenario, TransportName};
use mcp_transports::client::{self, ClientOptions};
use mcp_transports::config::TransportKind;
use mcp_transports::manager::{EventKind, ManagedConfig, ManagedConnection, ManagerEvent, ReconnectPolicy, Status};
use mcp_transports::{Handlers, RequestOptions, Transport, TransportConfig, TransportError};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The bundled transports, in-process (`bundled`, `bundled:<transport>`).
#[derive(Debug, Clone)]
pub struct Bundled {
    /// The one transport to run, or every transport a scenario names.
    only: Option<TransportName>,
}

impl Bundled {
    /// The bundled target; `only` restricts it to one transport.
    pub fn new(only: Option<TransportName>) -> Self {
        Bundled { only }
    }
}

impl Client for Bundled {
    fn spec(&self) -> String {
        match self.only {
            None => "bundled".into(),
            Some(t) => format!("bundled:{}", t.as_str()),
        }
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Bundled
    }

    fn covers(&self, transport: TransportName) -> bool {
        self.only.is_none_or(|t| t == transport)
    }

    /// In-process runs mostly wait on timers.
    fn runs_per_core(&self) -> usize {
        4
    }

    /// In-process: a client waiting out a window costs nothing.
    fn window_runs_per_core(&self) -> usize {
        4
    }

    /// The plan's `connect` waits for the stdio mock to serve before its handshake
    /// ([`super::readiness`]).
    fn waits_for_server_ready(&self) -> bool {
        true
    }

    fn run<'a>(&'a self, run: ClientRun<'a>) -> BoxFuture<'a, ClientOutcome> {
        Box::pin(async move {
            let scenario = run.scenario;
            let out = Arc::new(Mutex::new(ClientOutcome::default()));
            let plan = run_plan(scenario, run.transport, run.endpoint, run.record, out.clone());
            let hung = tokio::time::timeout(run.deadline.total(), plan).await.is_err();
            let mut outcome = std::mem::take(&mut *lock(&out));
            outcome.hung = hung;
            // A plan cut short: the steps it never reached or never finished.
            let why = hung.then(|| run.deadline.expired());
            for (i, step) in scenario.client.iter().enumerate().skip(outcome.steps.len()) {
                outcome.steps.push(not_run(i, step, why.clone()));
            }
            outcome
        })
    }
}

/// Why a plan step failed (the step outcome's error text is its Display).
#[derive(Debug, thiserror::Error)]
enum StepError {
    /// The transport reported an error (SPEC's strings).
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// `await` names a request that is not running in the background.
    #[error("no such background request")]
    NoSuchBackground,
    /// The task running a request panicked or was aborted.
    #[error("client task failed: {0}")]
    TaskFailed(tokio::task::JoinError),
    /// `wait_closed` ran out of time.
    #[error("still connected after {0}ms")]
    StillConnected(u64),
    /// `wait_closed`: the close handler fired but the transport still reports connected.
    #[error("the close handler fired but the transport still reports connected")]
    ClosedButConnected,
    /// `wait_sent` ran out of time.
    #[error("the mock saw fewer than {count} such message(s) within {ms}ms")]
    NotSent {
        /// How many were awaited.
        count: usize,
        /// The bound.
        ms: u64,
    },
    /// A manager step on a connection that is not managed.
    #[error("the connection is not managed (connect with `managed`)")]
    NotManaged,
    /// `wait_manager` ran out of time.
    #[error("the manager reported fewer than {count} {event} event(s) within {ms}ms")]
    NoManagerEvent {
        /// The awaited event.
        event: String,
        /// How many.
        count: usize,
        /// The bound.
        ms: u64,
    },
    /// `wait_notification` ran out of time.
    #[error("no {method} notification within {ms}ms")]
    NoNotification {
        /// The awaited method.
        method: String,
        /// The bound.
        ms: u64,
    },
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
async fn run_plan(
    scenario: &Scenario,
    transport: TransportName,
    endpoint: Endpoint,
    run_record: &RunRecord,
    out: Arc<Mutex<ClientOutcome>>,
) {
    let observed = Arc::new(Observed::default());
    let run_start = Instant::now();
    let mut conn: Option<Arc<dyn Transport>> = None;
    let mut managed: Option<ManagedConnection> = None;
    let mut background: HashMap<String, (Pending, CancellationToken)> = HashMap::new();
    let mut started_at: HashMap<String, Instant> = HashMap::new();

    for (i, step) in scenario.client.iter().enumerate() {
        let started = Instant::now();
        let what = describe_step(step);
        let result: Result<Option<Value>, StepError> = match step {
            ClientStep::Connect(c) => {
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
                    timeout_ms: c.timeout_ms,
                    string_ids: c.string_ids,
                    max_message_bytes: c.max_message_bytes,
                    protocol_version: c
                        .protocol_version
                        .clone()
                        .unwrap_or_else(|| scenario.revision.as_str().to_string()),
                    // In-process runs share one process environment, so the plan's env is
                    // handed to the transport instead of set globally.
                    timeout_env_override: Some(c.env.get(mcp_transports::config::TIMEOUT_ENV).cloned()),
                    headers: c.headers.clone(),
                    ..TransportConfig::default()
                };
                let config = TransportConfig { oauth: c.oauth.as_ref().map(|o| oauth_config(o, &config)), ..config };
                let handlers = handlers(&observed, c.roots.clone());
                let client_options = ClientOptions {
                    protocol_version: config.protocol_version.clone(),
                    roots: c.roots.clone(),
                    timeout: config.timeout(),
                    list_tools: lists_tools_on_connect(scenario),
                    ..ClientOptions::default()
                };
                let result = async {
                    if let Some(m) = &c.managed {
                        let config = ManagedConfig {
                            transport: config.clone(),
                            client: client_options.clone(),
                            policy: policy(m),
                            handlers: handlers.clone(),
                            auth: refresh_hook(c.auth_refresh.clone()),
                            epoch: run_start,
                        };
                        managed = Some(ManagedConnection::connect(config).await?);
                        return Ok(None);
                    }
                    let spawns = matches!(endpoint, Endpoint::Command(_));
                    let serving = if spawns { run_record.serving() } else { 0 };
                    let t = client::create_client_transport(
                        &config,
                        handlers,
                        refresh_hook(c.auth_refresh.clone()),
                        &client_options,
                    )
                    .await?;
                    if spawns {
                        super::readiness::wait_for_server(run_record, serving, || t.is_connected()).await;
                    }
                    conn = Some(t.clone());
                    if c.handshake {
                        client::handshake(t.as_ref(), &client_options).await?;
                    }
                    Ok::<_, TransportError>(None)
                }
                .await;
                result.map_err(StepError::from)
            }
            ClientStep::Request {
                method,
                params,
                timeout_ms,
                background: bg,
                label,
                pad_params,
                reset_timeout_on_progress,
                max_total_timeout_ms,
                new_session,
            } => {
                let params = pad(params.clone(), *pad_params);
                if *new_session && managed.is_none() {
                    // SPEC §4: the transport fails a request that met a 404 on its session;
                    // starting the new session is the manager's (scenarios/manager/session-404-*).
                    let why = "the bundled transport leaves a new session after a 404 to its manager (connect with `managed:`); scenarios/manager/session-404-* judge it";
                    lock(&out).steps.push(StepOutcome {
                        step: i + 1,
                        what,
                        status: StepStatus::Unsupported,
                        elapsed_ms: 0,
                        result: None,
                        error: Some(why.into()),
                    });
                    break;
                }
                let sender = match (&managed, &conn) {
                    (Some(m), _) => Some(Sender::Managed(m.clone())),
                    (None, Some(t)) => Some(Sender::Plain(t.clone())),
                    (None, None) => None,
                };
                match sender {
                    None => Err(TransportError::NotConnected.into()),
                    Some(sender) => {
                        let token = CancellationToken::new();
                        let options = RequestOptions {
                            timeout_ms: *timeout_ms,
                            cancel: Some(token.clone()),
                            reset_timeout_on_progress: *reset_timeout_on_progress,
                            max_total_timeout_ms: *max_total_timeout_ms,
                            ..RequestOptions::default()
                        }
                        .for_params(params.as_ref());
                        let method = method.clone();
                        let mut call = Box::pin(async move {
                            let r = sender.request(&method, params, options).await;
                            (r, Instant::now())
                        });
                        // Polled once here, so the request is issued (id taken, line queued)
                        // before the plan's next step: a task spawned on a loaded machine may
                        // first run after a `wait` and a `close` that follow it.
                        let task: Pending = match futures::poll!(&mut call) {
                            std::task::Poll::Ready(done) => tokio::spawn(async move { done }),
                            std::task::Poll::Pending => tokio::spawn(call),
                        };
                        if *bg {
                            let label = label.clone().unwrap_or_default();
                            started_at.insert(label.clone(), started);
                            background.insert(label, (task, token));
                            Ok(None)
                        } else {
                            join(task).await
                        }
                    }
                }
            }
            ClientStep::Await { request } => match background.remove(request) {
                Some((task, _)) => join(task).await,
                None => Err(StepError::NoSuchBackground),
            },
            ClientStep::Cancel { request } => {
                if let Some((_, token)) = background.get(request) {
                    token.cancel();
                }
                Ok(None)
            }
            // Aborting the task drops the request's future where it waits: what a Rust caller's
            // own timeout or `select!` does.
            ClientStep::Abandon { request } => {
                if let Some((task, _)) = background.remove(request) {
                    task.abort();
                }
                Ok(None)
            }
            ClientStep::Notify { method, params, pad_params } => {
                match managed.as_ref().and_then(|m| m.transport()).or(conn.clone()) {
                    None => Err(TransportError::NotConnected.into()),
                    Some(t) => {
                        t.notify(method, pad(params.clone(), *pad_params)).await.map(|_| None).map_err(StepError::from)
                    }
                }
            }
            ClientStep::Wait { ms } => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                Ok(None)
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
                // The close handler fired; the transport must now also say so itself (every
                // transport clears its connected flag before it fires the handler), so a
                // transport whose `is_connected` lies is caught here, not only by a manager.
                match waited {
                    Err(_) => Err(StepError::StillConnected(*timeout_ms)),
                    Ok(()) if conn.as_ref().is_some_and(|t| t.is_connected()) => Err(StepError::ClosedButConnected),
                    Ok(()) => Ok(None),
                }
            }
            ClientStep::WaitSent { method, http_method, count, timeout_ms } => {
                // The mock is another process that records to files: there is no in-process
                // event to wait on, so the run's record is followed, every few milliseconds
                // reading only what it gained (each event read and counted once).
                let waited = tokio::time::timeout(Duration::from_millis(*timeout_ms), async {
                    let (mut seen, mut sent) = (Vec::new(), 0);
                    loop {
                        sent += run_record.sent_since(&mut seen, method.as_deref(), http_method.as_deref());
                        if sent >= *count {
                            return;
                        }
                        tokio::time::sleep(RECORD_POLL).await;
                    }
                })
                .await;
                waited.map(|_| None).map_err(|_| StepError::NotSent { count: *count, ms: *timeout_ms })
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
                waited.map(|_| None).map_err(|_| StepError::NoNotification { method: method.clone(), ms: *timeout_ms })
            }
            ClientStep::Close => {
                if let Some(t) = &conn {
                    t.close().await;
                }
                if let Some(m) = &managed {
                    m.close().await;
                }
                Ok(None)
            }
            ClientStep::WaitManager { event, count, timeout_ms } => match &managed {
                None => Err(StepError::NotManaged),
                Some(m) => {
                    if m.wait_event(event, *count, Duration::from_millis(*timeout_ms)).await {
                        Ok(None)
                    } else {
                        Err(StepError::NoManagerEvent { event: event.clone(), count: *count, ms: *timeout_ms })
                    }
                }
            },
            ClientStep::ManagerTools => match &managed {
                None => Err(StepError::NotManaged),
                Some(m) => {
                    let names = |items: Vec<Value>| -> Vec<Value> {
                        items.iter().filter_map(|t| t.get("name").cloned()).collect()
                    };
                    let mut shown = serde_json::json!({"status": m.status().name(), "tools": names(m.tools())});
                    // Resources and prompts are listed only on their list_changed, so they are
                    // shown once the manager holds any.
                    for (list, items) in [("resources", m.resources()), ("prompts", m.prompts())] {
                        if !items.is_empty() {
                            shown[list] = Value::Array(names(items));
                        }
                    }
                    Ok(Some(shown))
                }
            },
        };
        let what = match step {
            ClientStep::Request { background: true, .. } if result.is_ok() => format!("{what} (background)"),
            _ => what,
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
            error: result.err().map(|e| e.to_string()),
        });
        o.notifications = lock(&observed.notifications).clone();
        o.reports = lock(&observed.reports).clone();
        if let Some(t) = managed.as_ref().and_then(|m| m.last_transport()).or(conn.clone()) {
            o.diagnostics = Some(counters(t.diagnostics()));
        }
    }
    // Requests still running in the background are the plan's leftovers; close releases them.
    for (_, (task, token)) in background {
        token.cancel();
        task.abort();
    }
    if let Some(m) = managed {
        if m.status() != Status::Closed {
            m.close().await;
        }
        let mut o = lock(&out);
        o.manager_events = m.events().iter().map(record).collect();
        if let Some(t) = m.last_transport() {
            o.diagnostics = Some(counters(t.diagnostics()));
        }
        o.notifications = lock(&observed.notifications).clone();
        o.reports = lock(&observed.reports).clone();
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

/// Where a plan's requests go: a plain transport, or the manager (which applies its retry
/// rules; `tools/call` goes through its replay rule).
enum Sender {
    Plain(Arc<dyn Transport>),
    Managed(ManagedConnection),
}

impl Sender {
    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, TransportError> {
        match self {
            Sender::Plain(t) => t.request(method, params, options).await,
            Sender::Managed(m) if method == "tools/call" => {
                m.call_tool(params.unwrap_or_else(|| serde_json::json!({})), options).await
            }
            Sender::Managed(m) => m.request(method, params, options).await,
        }
    }
}

/// Whether the bundled client ends its handshake with SPEC §6's `tools/list`: not where
/// every `handshake` step leaves the capabilities to the mock. Those derived capabilities
/// exist so that clients which use only negotiated capabilities call what the plan calls;
/// they do not ask for a listing the script never serves (one there would meet the fault the
/// script keeps for the plan's own request). Nor where the plan lists tools itself right
/// after connecting (a recording of a client that does, which is most SDK clients): the
/// plan's request is the listing, as it was for the client recorded. A script that sets
/// the capabilities on some connection, or answers `initialize` itself, gets the listing
/// SPEC §6 promises.
fn lists_tools_on_connect(scenario: &Scenario) -> bool {
    let plan_lists = matches!(
        scenario.client.get(1),
        Some(mcp_scenario::ClientStep::Request { method, .. }) if method == "tools/list"
    ) && matches!(scenario.client.first(), Some(mcp_scenario::ClientStep::Connect(_)));
    if plan_lists {
        return false;
    }
    let handshakes = scenario.server.iter().filter_map(|s| match s {
        mcp_scenario::ServerStep::Handshake(h) => Some(h.capabilities.is_some()),
        _ => None,
    });
    let (mut sets, mut derives) = (false, false);
    for explicit in handshakes {
        sets |= explicit;
        derives |= !explicit;
    }
    sets || !derives
}

/// The manager's policy a plan's `managed` asks for.
fn policy(m: &mcp_scenario::plan::Managed) -> ReconnectPolicy {
    ReconnectPolicy {
        base_delay: Duration::from_millis(m.base_delay_ms),
        attempts: m.attempts,
        jitter_ratio: m.jitter,
        breaker_closes: m.breaker_closes,
        breaker_window: Duration::from_millis(m.breaker_window_ms),
    }
}

/// A manager event in the reported form.
fn record(e: &ManagerEvent) -> ManagerEventRecord {
    let (planned_ms, delay_ms) = match &e.kind {
        EventKind::Attempt { planned, delay, .. } => (Some(planned.as_millis() as u64), Some(delay.as_millis() as u64)),
        _ => (None, None),
    };
    ManagerEventRecord {
        at_ms: e.at.as_millis() as u64,
        event: e.kind.name().into(),
        planned_ms,
        delay_ms,
        detail: e.kind.to_string(),
        window_ms: e.kind.window().map(|w| w.as_millis() as u64),
    }
}

/// The authorization client a plan's `oauth` asks for: its user-interaction step follows
/// the authorization server's redirect itself (the mock's `/authorize` redirects at once),
/// bounded by the connection's timeout.
fn oauth_config(plan: &mcp_scenario::plan::OAuth, config: &TransportConfig) -> mcp_transports::oauth::OAuthConfig {
    let mut o = mcp_transports::oauth::OAuthConfig::new(mcp_transports::oauth::follow_redirect(config.timeout()));
    o.identity.client_id = plan.client_id.clone();
    o.identity.client_secret = plan.client_secret.clone();
    o.identity.client_metadata_url = plan.client_metadata_url.clone();
    o.identity.scopes = plan.scopes.clone();
    if let Some(uri) = &plan.redirect_uri {
        o.redirect_uri = uri.clone();
    }
    o
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

async fn join(task: Pending) -> Result<Option<Value>, StepError> {
    match task.await {
        Ok((Ok(v), _)) => Ok(Some(v)),
        Ok((Err(e), _)) => Err(e.into()),
        Err(e) => Err(StepError::TaskFailed(e)),
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
