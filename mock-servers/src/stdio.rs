//! The stdio mock server: runs one connection's script on its own stdin/stdout and records
//! every wire event. Nothing but protocol bytes ever goes to stdout.
//!
//! Unscripted requests (a method that no remaining `expect` step names) are answered
//! `-32601` at once, so no client ever waits on the mock by accident.

use crate::error::MockError;
use crate::http::shared::lock;
use crate::record::{Recorder, claim_connection, record_path};
use mcp_scenario::Scenario;
use mcp_scenario::payload;
use mcp_scenario::script::{LineEnd, ServerStep};
use mcp_scenario::wire::{Recorded, WireEvent};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::Notify;

/// Serves the scenario's script for the next connection in `run_dir` until stdin EOF, a
/// signal, an `exit` step or `deadline`. Never returns normally: the process exits.
pub async fn serve(scenario: &Scenario, run_dir: &Path, deadline: Duration) -> Result<(), MockError> {
    let connection = claim_connection(run_dir)?;
    let steps = mcp_scenario::script::connection_script(&scenario.server, connection);
    let recorder = Recorder::create(&record_path(run_dir, connection))?;
    recorder.record(&WireEvent::Started { pid: std::process::id() });
    let mock = Arc::new(Mock::new(recorder, &steps, scenario.revision.as_str().to_string()));

    tokio::spawn(read_stdin(mock.clone()));
    tokio::spawn(watch_signals(mock.clone()));
    tokio::spawn({
        let mock = mock.clone();
        async move {
            tokio::time::sleep(deadline).await;
            mock.exit(124, "deadline");
        }
    });
    mock.run_script(&steps).await;
    std::future::pending::<()>().await;
    Ok(())
}

/// What a waiting script step needs from the client.
#[derive(Debug, Clone)]
enum Waiting {
    Method(String),
    Answer(String),
}

struct Mock {
    recorder: Recorder,
    revision: String,
    stdout: tokio::sync::Mutex<tokio::io::Stdout>,
    /// How many more messages of each method the script will consume; an arrival beyond
    /// that is unscripted.
    budget: Mutex<HashMap<String, usize>>,
    /// Scripted messages that arrived before their `expect` step.
    inbox: Mutex<VecDeque<Value>>,
    inbox_ready: Notify,
    /// The client's answers to server-to-client requests, by id.
    answers: Mutex<HashMap<String, Value>>,
    answer_ready: Notify,
    eof: AtomicBool,
    eof_seen: Notify,
    reading: AtomicBool,
    ignore_sigterm: AtomicBool,
    ignore_eof: AtomicBool,
    reached: AtomicUsize,
    total: usize,
    finished: AtomicBool,
    /// What the script is blocked on, if it is waiting for input (see [`Mock::quiescent`]).
    waiting: Mutex<Option<Waiting>>,
    progress: Notify,
    exiting: Mutex<bool>,
}

impl Mock {
    fn new(recorder: Recorder, steps: &[ServerStep], revision: String) -> Self {
        let mut budget: HashMap<String, usize> = HashMap::new();
        for step in steps {
            match step {
                ServerStep::Handshake { .. } => {
                    *budget.entry("initialize".into()).or_default() += 1;
                    *budget.entry("notifications/initialized".into()).or_default() += 1;
                }
                ServerStep::Expect { method, .. } => *budget.entry(method.clone()).or_default() += 1,
                _ => {}
            }
        }
        Mock {
            recorder,
            revision,
            stdout: tokio::sync::Mutex::new(tokio::io::stdout()),
            budget: Mutex::new(budget),
            inbox: Mutex::new(VecDeque::new()),
            inbox_ready: Notify::new(),
            answers: Mutex::new(HashMap::new()),
            answer_ready: Notify::new(),
            eof: AtomicBool::new(false),
            eof_seen: Notify::new(),
            reading: AtomicBool::new(true),
            ignore_sigterm: AtomicBool::new(false),
            ignore_eof: AtomicBool::new(false),
            reached: AtomicUsize::new(0),
            total: steps.len(),
            finished: AtomicBool::new(false),
            waiting: Mutex::new(None),
            progress: Notify::new(),
            exiting: Mutex::new(false),
        }
    }

    async fn write(&self, bytes: &[u8], why: &str) {
        let mut out = self.stdout.lock().await;
        self.recorder.record(&WireEvent::ToClient {
            t_us: self.recorder.now_us(),
            bytes: Recorded::of(bytes),
            why: why.into(),
        });
        // A client that closed our stdout is itself the finding; the record shows it.
        if out.write_all(bytes).await.is_ok() {
            let _ = out.flush().await;
        }
    }

    /// Writes `bytes` in pieces of the given sizes (the rest last), pausing between them.
    async fn write_split(&self, bytes: &[u8], chunks: &[usize], delay_ms: u64, why: &str) {
        let mut rest = bytes;
        for size in chunks {
            let (head, tail) = rest.split_at((*size).min(rest.len()));
            self.write(head, why).await;
            rest = tail;
            if delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            }
        }
        if !rest.is_empty() || chunks.is_empty() {
            self.write(rest, why).await;
        }
    }

    /// Records the script's progress and the exit, then exits the process.
    fn exit(&self, code: i32, why: &str) {
        self.exit_with(Some(code), None, why);
    }

    fn exit_with(&self, code: Option<i32>, signal: Option<nix::sys::signal::Signal>, why: &str) {
        let mut exiting = lock(&self.exiting);
        if *exiting {
            return;
        }
        *exiting = true;
        self.record_progress();
        self.recorder.record(&WireEvent::Exit {
            t_us: self.recorder.now_us(),
            code,
            signal: signal.map(|s| s.as_str().to_string()),
            why: why.into(),
        });
        if let Some(sig) = signal {
            // Restore the default action first, so the signal really kills us.
            let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), sig);
            std::thread::sleep(Duration::from_millis(100));
        }
        std::process::exit(code.unwrap_or(1));
    }

    /// Handles one complete inbound line.
    async fn on_line(&self, line: &[u8], terminated: bool) {
        let trimmed = line.strip_suffix(b"\r").unwrap_or(line);
        let json: Option<Value> = serde_json::from_slice(trimmed).ok();
        self.recorder.record(&WireEvent::FromClient {
            t_us: self.recorder.now_us(),
            bytes: Recorded::of(line),
            json: json.clone(),
            terminated,
        });
        let Some(Value::Object(obj)) = &json else { return };
        match (obj.get("method").and_then(Value::as_str), obj.get("id")) {
            (Some(method), id) => {
                let scripted = {
                    let mut budget = lock(&self.budget);
                    match budget.get_mut(method) {
                        Some(n) if *n > 0 => {
                            *n -= 1;
                            true
                        }
                        _ => false,
                    }
                };
                if scripted {
                    lock(&self.inbox).push_back(Value::Object(obj.clone()));
                    self.inbox_ready.notify_waiters();
                } else if let Some(id) = id.filter(|id| !id.is_null()) {
                    let error = json!({"code": -32601, "message": format!("Method not found: {method} (unscripted)")});
                    let bytes = payload::reply_line(id.clone(), None, Some(&error), None, LineEnd::Lf);
                    self.write(&bytes, "auto -32601").await;
                }
            }
            (None, Some(id)) => {
                lock(&self.answers).insert(id.to_string(), Value::Object(obj.clone()));
                self.answer_ready.notify_waiters();
            }
            (None, None) => {}
        }
    }

    /// Waits for the next scripted message with `method`.
    async fn expect(&self, method: &str) -> Value {
        loop {
            let notified = self.inbox_ready.notified();
            {
                let mut inbox = lock(&self.inbox);
                if let Some(pos) = inbox.iter().position(|m| m.get("method").and_then(Value::as_str) == Some(method))
                    && let Some(m) = inbox.remove(pos)
                {
                    *lock(&self.waiting) = None;
                    return m;
                }
            }
            self.wait_for(Waiting::Method(method.into()));
            notified.await;
        }
    }

    fn wait_for(&self, what: Waiting) {
        *lock(&self.waiting) = Some(what);
        self.progress.notify_waiters();
    }

    /// Whether the script can make no more progress on what the client already sent: it
    /// has finished, or it waits for input that has not arrived. On stdin EOF the mock
    /// exits only once quiescent, so a client that writes and closes at once is still
    /// served in full, like a real server draining its input.
    fn quiescent(&self) -> bool {
        if self.finished.load(Ordering::SeqCst) {
            return true;
        }
        match lock(&self.waiting).clone() {
            None => false,
            Some(Waiting::Method(m)) => {
                !lock(&self.inbox).iter().any(|v| v.get("method").and_then(Value::as_str) == Some(m.as_str()))
            }
            Some(Waiting::Answer(key)) => !lock(&self.answers).contains_key(&key),
        }
    }

    async fn run_script(&self, steps: &[ServerStep]) {
        let mut requests: HashMap<String, Value> = HashMap::new();
        let mut latest: Option<Value> = None;
        let mut server_ids: HashMap<String, Value> = HashMap::new();
        for (i, step) in steps.iter().enumerate() {
            self.reached.store(i + 1, Ordering::SeqCst);
            // A step whose last effect is output counts as done before the bytes leave, so a
            // client that reacts at once (e.g. closes) cannot outrun the record.
            let output_last = matches!(
                step,
                ServerStep::Reply { .. }
                    | ServerStep::Send { .. }
                    | ServerStep::Notify { .. }
                    | ServerStep::Request { .. }
                    | ServerStep::Stderr { .. }
            );
            if output_last && i + 1 == steps.len() {
                self.finished.store(true, Ordering::SeqCst);
            }
            self.record_progress();
            match step {
                ServerStep::Handshake { protocol_version, capabilities, .. } => {
                    let init = self.expect("initialize").await;
                    let version = protocol_version.clone().unwrap_or_else(|| self.revision.clone());
                    let result = payload::initialize_result(&version, capabilities.as_ref());
                    let id = init.get("id").cloned().unwrap_or(Value::Null);
                    self.write(&payload::reply_line(id, Some(&result), None, None, LineEnd::Lf), "reply initialize")
                        .await;
                    self.expect("notifications/initialized").await;
                }
                ServerStep::Expect { method, label } => {
                    let message = self.expect(method).await;
                    if let Some(id) = message.get("id") {
                        if let Some(l) = label {
                            self.recorder.record(&WireEvent::Labelled {
                                label: l.clone(),
                                id: id.clone(),
                                method: method.clone(),
                            });
                            requests.insert(l.clone(), message.clone());
                        }
                        latest = Some(message);
                    }
                }
                ServerStep::Reply { to, result, error, wrong_id, pad_to, line_end, chunks, chunk_delay_ms } => {
                    let target = match to {
                        Some(l) => requests.get(l).cloned(),
                        None => latest.clone(),
                    };
                    let id = target.as_ref().and_then(|m| m.get("id")).cloned().unwrap_or(Value::Null);
                    let bytes = payload::reply_line(
                        payload::reply_id(&id, *wrong_id),
                        result.as_ref(),
                        error.as_ref(),
                        *pad_to,
                        *line_end,
                    );
                    self.write_split(&bytes, chunks, *chunk_delay_ms, "reply").await;
                }
                ServerStep::Send { chunks, chunk_delay_ms, .. } => {
                    let bytes = payload::send_bytes(step).unwrap_or_default();
                    self.write_split(&bytes, chunks, *chunk_delay_ms, "send").await;
                }
                ServerStep::Notify { method, params } => {
                    let mut m = json!({"jsonrpc": "2.0", "method": method});
                    if let Some(p) = params {
                        m["params"] = p.clone();
                    }
                    self.write(&payload::line(&m, LineEnd::Lf), "notify").await;
                }
                ServerStep::Request { method, params, label } => {
                    let id = json!(format!("srv-{}", server_ids.len() + 1));
                    server_ids.insert(label.clone(), id.clone());
                    self.recorder.record(&WireEvent::Labelled {
                        label: label.clone(),
                        id: id.clone(),
                        method: method.clone(),
                    });
                    let mut m = json!({"jsonrpc": "2.0", "id": id, "method": method});
                    if let Some(p) = params {
                        m["params"] = p.clone();
                    }
                    self.write(&payload::line(&m, LineEnd::Lf), "request").await;
                }
                ServerStep::ExpectResponse { to } => {
                    let key = server_ids.get(to).map(Value::to_string).unwrap_or_default();
                    loop {
                        let notified = self.answer_ready.notified();
                        if lock(&self.answers).contains_key(&key) {
                            *lock(&self.waiting) = None;
                            break;
                        }
                        self.wait_for(Waiting::Answer(key.clone()));
                        notified.await;
                    }
                }
                ServerStep::Stderr { text, generate } => {
                    let bytes = match (text, generate) {
                        (Some(t), _) => t.as_bytes().to_vec(),
                        (None, Some(g)) => payload::generated(g).unwrap_or_default(),
                        (None, None) => Vec::new(),
                    };
                    self.recorder
                        .record(&WireEvent::Stderr { t_us: self.recorder.now_us(), bytes: Recorded::of(&bytes) });
                    let mut err = tokio::io::stderr();
                    let _ = err.write_all(&bytes).await;
                    let _ = err.flush().await;
                }
                ServerStep::Delay { ms } => tokio::time::sleep(Duration::from_millis(*ms)).await,
                ServerStep::Stall => {
                    self.finished.store(true, Ordering::SeqCst);
                    self.record_progress();
                    self.progress.notify_waiters();
                    std::future::pending::<()>().await;
                }
                ServerStep::StopReading => self.reading.store(false, Ordering::SeqCst),
                ServerStep::IgnoreSigterm => self.ignore_sigterm.store(true, Ordering::SeqCst),
                ServerStep::IgnoreStdinEof => self.ignore_eof.store(true, Ordering::SeqCst),
                ServerStep::ExpectEof => loop {
                    let notified = self.eof_seen.notified();
                    if self.eof.load(Ordering::SeqCst) {
                        break;
                    }
                    notified.await;
                },
                ServerStep::Exit { code, signal } => {
                    self.finished.store(i + 1 == steps.len(), Ordering::SeqCst);
                    match signal.as_deref().and_then(mcp_scenario::signals::by_name) {
                        Some(sig) => self.exit_with(None, Some(sig), "script"),
                        None => self.exit(code.unwrap_or(0), "script"),
                    }
                }
                ServerStep::NewConnection => {}
                // HTTP-only steps mean nothing on a pipe (the loader rejects them in
                // stdio-only scenarios; multi-transport ones skip them here).
                ServerStep::Respond { .. }
                | ServerStep::RawResponse { .. }
                | ServerStep::OpenStream { .. }
                | ServerStep::Event { .. }
                | ServerStep::EndStream { .. }
                | ServerStep::ExpectGet { .. }
                | ServerStep::ExpectDelete { .. }
                | ServerStep::ExpireSession
                | ServerStep::RequireAuth { .. }
                | ServerStep::ReplyAlways { .. }
                | ServerStep::MessageEvent { .. }
                | ServerStep::Endpoint { .. } => {}
            }
        }
        self.finished.store(true, Ordering::SeqCst);
        self.record_progress();
        self.progress.notify_waiters();
    }

    /// Records how far the script got. Written at every step, not only at exit, so that a
    /// mock killed by SIGKILL still tells whether the client reached the scripted steps.
    fn record_progress(&self) {
        self.recorder.record(&WireEvent::Script {
            reached: self.reached.load(Ordering::SeqCst),
            total: self.total,
            finished: self.finished.load(Ordering::SeqCst),
        });
    }
}

async fn read_stdin(mock: Arc<Mock>) {
    let mut stdin = tokio::io::stdin();
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    loop {
        if !mock.reading.load(Ordering::SeqCst) {
            // `stop_reading`: leave the pipe full so the client's writes block.
            std::future::pending::<()>().await;
        }
        let n = match stdin.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &buf[..n];
        while let Some(pos) = chunk.iter().position(|b| *b == b'\n') {
            line.extend_from_slice(&chunk[..pos]);
            mock.on_line(&line, true).await;
            line.clear();
            chunk = &chunk[pos + 1..];
        }
        line.extend_from_slice(chunk);
    }
    if !line.is_empty() {
        mock.on_line(&line, false).await;
    }
    mock.recorder.record(&WireEvent::StdinEof { t_us: mock.recorder.now_us() });
    mock.eof.store(true, Ordering::SeqCst);
    mock.eof_seen.notify_waiters();
    // Let the script serve what already arrived, bounded so a busy script cannot keep a
    // closed mock alive for long.
    let drain = async {
        loop {
            let progressed = mock.progress.notified();
            if mock.quiescent() {
                return;
            }
            progressed.await;
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
    if !mock.ignore_eof.load(Ordering::SeqCst) {
        mock.exit(0, "stdin EOF");
    }
}

async fn watch_signals(mock: Arc<Mock>) {
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) =
        (signal(SignalKind::terminate()), signal(SignalKind::interrupt()), signal(SignalKind::hangup()))
    else {
        return;
    };
    loop {
        let (name, number) = tokio::select! {
            _ = term.recv() => ("SIGTERM", 15),
            _ = int.recv() => ("SIGINT", 2),
            _ = hup.recv() => ("SIGHUP", 1),
        };
        let ignored = name == "SIGTERM" && mock.ignore_sigterm.load(Ordering::SeqCst);
        mock.recorder.record(&WireEvent::Signal { t_us: mock.recorder.now_us(), name: name.into(), ignored });
        if !ignored {
            mock.exit(128 + number, name);
        }
    }
}
