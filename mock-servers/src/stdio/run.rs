//! The stdio engine's state: [`Mock`], shared by the stdin reader, the shutdown watcher and
//! the script, and [`StdioRun`], what an op's `run_stdio` gets: the mock plus the script's
//! own bookkeeping (labelled requests, server-to-client request ids, where it is).

use crate::budget::Budget;
use crate::inbox::{Answers, Inbox};
use crate::record::{Crossing, Recorder};
use crate::shutdown::{Ending, ExitReason};
use crate::stdio::envelope::Envelope;
use crate::stdio::standing::StandingAnswer;
use crate::sync::lock;
use mcp_scenario::payload::{self, Chunking};
use mcp_scenario::script::LineEnd;
use mcp_scenario::wire::{Recorded, WireEvent};
use nix::sys::signal::Signal;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

fn method_of(message: &Value) -> Option<&str> {
    message.get("method").and_then(Value::as_str)
}

/// Waits until `flag` is set; whoever sets it then wakes `set`'s waiters.
async fn until_set(flag: &AtomicBool, set: &Notify) {
    loop {
        let notified = set.notified();
        if flag.load(Ordering::SeqCst) {
            return;
        }
        notified.await;
    }
}

/// An output pipe (stdout or stderr).
pub type Output = tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>;

/// What a waiting script step needs from the client.
#[derive(Debug, Clone)]
enum Waiting {
    Method(String),
    Answer(String),
}

/// A mock whose client may be probing: a process that sends nothing but `server/discover`
/// requests before it leaves is a probe copy (a client's version probe, SPEC-neutral and
/// common), answered by the defaults and recorded apart (`probe-<n>.jsonl`), so the
/// scenario's script goes to the client's next process. The first other message binds the
/// connection's script (`conn-<n>.jsonl`). The record is written from the start to a
/// pending file named by the pid, renamed when the process turns out to be one or the other.
pub struct Unbound {
    /// The run directory.
    pub run_dir: std::path::PathBuf,
    /// The pending record file.
    pub pending: std::path::PathBuf,
    /// The scenario's whole script.
    pub server: Vec<mcp_scenario::ServerStep>,
    /// Where the bound connection's steps go (the script loop waits on it).
    pub script: tokio::sync::oneshot::Sender<Vec<mcp_scenario::ServerStep>>,
    /// The message budget of a script (`ops::budget`, handed in: ops sit above this module).
    pub budget: fn(&[mcp_scenario::ServerStep], mcp_scenario::TransportName) -> Budget,
    /// A `server/discover` request came: if nothing else does, this process is a probe.
    pub probed: bool,
}

impl Unbound {
    /// Claims the next connection for this process: its record takes the connection's name
    /// and its script is that connection's part.
    fn bind(&self, recorder: &Recorder) -> Vec<mcp_scenario::ServerStep> {
        let n = crate::record::claim_connection(&self.run_dir).unwrap_or_else(|e| {
            tracing::error!(error = %e, "cannot claim a connection: no script runs here");
            usize::MAX
        });
        if let Err(e) = std::fs::rename(&self.pending, crate::record::record_path(&self.run_dir, n)) {
            tracing::error!(error = %e, "cannot name the record of connection {n}");
        }
        recorder.flush();
        mcp_scenario::script::connection_script(&self.server, n)
    }

    /// Files this process's record as a probe's.
    fn probe(self, recorder: &Recorder) {
        let n = crate::record::claim_probe(&self.run_dir).unwrap_or_else(|e| {
            tracing::error!(error = %e, "cannot claim a probe number");
            usize::MAX
        });
        recorder.record(&WireEvent::Note { t_us: recorder.now_us(), text: format!("{PROBE_NOTE} {n}") });
        if let Err(e) = std::fs::rename(&self.pending, crate::record::probe_path(&self.run_dir, n)) {
            tracing::error!(error = %e, "cannot name the record of probe {n}");
        }
    }
}

/// The note a probe's record ends with (then its number): the transcript labels the
/// connection by it.
pub const PROBE_NOTE: &str =
    "a probe process: the client left before any message but server/discover, so no script ran here; probe";

impl Mock {
    /// Leaves the script unbound until the client's first message that is not a
    /// `server/discover` request (see [`Unbound`]).
    pub fn unbound(&self, unbound: Unbound) {
        *lock(&self.unbound) = Some(unbound);
    }

    /// Binds the next connection's script to this process; returns its steps.
    fn bind(&self, unbound: &Unbound) -> Vec<mcp_scenario::ServerStep> {
        let steps = unbound.bind(&self.recorder);
        *lock(&self.budget) = (unbound.budget)(&steps, mcp_scenario::TransportName::Stdio);
        self.total.store(steps.len(), Ordering::SeqCst);
        steps
    }
}

/// The state of one stdio connection.
pub struct Mock {
    /// The connection's record.
    pub recorder: Recorder,
    /// The protocol revision the mock speaks.
    pub revision: String,
    /// The answers to unscripted requests a client may send at any time.
    pub defaults: crate::defaults::Defaults,
    /// `reply_always` rules: method → `{"result": …}` or `{"error": …}`; they come before
    /// the defaults, as over HTTP.
    rules: Mutex<HashMap<String, StandingAnswer>>,
    /// The 2026-07-28 request checks (`None` on stateful revisions; the `stateless` op
    /// changes them).
    pub stateless: Mutex<Option<crate::stateless::Rules>>,
    stdout: Output,
    stderr: Output,
    /// How many more messages of each method the script will consume; an arrival beyond
    /// that is unscripted.
    budget: Mutex<Budget>,
    /// Scripted messages that arrived before their `expect` step.
    inbox: Inbox<Value>,
    /// The client's answers to server-to-client requests.
    answers: Answers,
    eof: AtomicBool,
    eof_seen: Notify,
    /// The client that started this mock, to tell its close of stdin from its exit.
    parent: crate::parent::Parent,
    /// False after `stop_reading`.
    pub reading: AtomicBool,
    /// After `stop_reading`, the client wrote (or closed stdin): bytes the mock left unread.
    written: AtomicBool,
    written_seen: Notify,
    /// `close_stdin` asks the stdin reader to drop stdin.
    close_stdin: Notify,
    /// Stdin is gone: closed by `close_stdin`, or at EOF.
    stdin_gone: AtomicBool,
    stdin_gone_changed: Notify,
    /// True after `ignore_sigterm`.
    pub ignore_sigterm: AtomicBool,
    /// True after `ignore_stdin_eof`.
    pub ignore_eof: AtomicBool,
    reached: AtomicUsize,
    total: AtomicUsize,
    finished: AtomicBool,
    /// Until a script is bound (see [`Unbound`]): where to bind it from.
    unbound: Mutex<Option<Unbound>>,
    /// What the script is blocked on, if it is waiting for input (see [`Mock::quiescent`]).
    waiting: Mutex<Option<Waiting>>,
    /// Woken whenever the script waits or finishes.
    pub progress: Notify,
    ending: Ending,
}

impl Mock {
    /// The state for a script of `total` steps that consumes `budget` messages.
    pub fn new(
        recorder: Recorder,
        revision: String,
        stdout: Output,
        stderr: Output,
        budget: Budget,
        total: usize,
    ) -> Self {
        Mock {
            recorder,
            defaults: crate::defaults::Defaults::default(),
            rules: Mutex::default(),
            stateless: Mutex::new(
                (revision.as_str() >= "2026-07-28").then(|| crate::stateless::Rules::for_revision(&revision)),
            ),
            revision,
            stdout,
            stderr,
            budget: Mutex::new(budget),
            inbox: Inbox::default(),
            answers: Answers::default(),
            eof: AtomicBool::new(false),
            eof_seen: Notify::new(),
            parent: crate::parent::Parent::now(),
            reading: AtomicBool::new(true),
            written: AtomicBool::new(false),
            written_seen: Notify::new(),
            close_stdin: Notify::new(),
            stdin_gone: AtomicBool::new(false),
            stdin_gone_changed: Notify::new(),
            ignore_sigterm: AtomicBool::new(false),
            ignore_eof: AtomicBool::new(false),
            reached: AtomicUsize::new(0),
            total: AtomicUsize::new(total),
            finished: AtomicBool::new(false),
            unbound: Mutex::new(None),
            waiting: Mutex::new(None),
            progress: Notify::new(),
            ending: Ending::default(),
        }
    }

    /// `close_stdin`: has the stdin reader drop stdin, and returns once it has (at once
    /// when stdin already ended).
    pub async fn close_stdin(&self) {
        self.close_stdin.notify_one();
        loop {
            let changed = self.stdin_gone_changed.notified();
            if self.stdin_gone.load(Ordering::SeqCst) {
                return;
            }
            changed.await;
        }
    }

    /// Resolves when a script step asked for stdin to be closed.
    pub async fn close_requested(&self) {
        self.close_stdin.notified().await;
    }

    /// The stdin reader is done with stdin (closed it, or saw EOF).
    pub fn stdin_gone(&self) {
        self.stdin_gone.store(true, Ordering::SeqCst);
        self.stdin_gone_changed.notify_waiters();
    }

    /// How the mock ended, once it has.
    pub fn ending(&self) -> &Ending {
        &self.ending
    }

    /// Writes bytes to stdout, recorded first. Nothing is written once the mock is ending.
    pub async fn write(&self, bytes: &[u8], why: &str) {
        // An inbound line held for this write's record (`on_line`) is written before waiting.
        let mut out = match self.stdout.try_lock() {
            Ok(out) => out,
            Err(_) => {
                self.recorder.flush();
                self.stdout.lock().await
            }
        };
        if self.ending.is_set() {
            return;
        }
        // Not recorded (the mock ended on another thread meanwhile): not written either.
        if !self.recorder.record(&Crossing::ToClient { t_us: self.recorder.now_us(), bytes, why }) {
            return;
        }
        // A client that closed our stdout is itself the finding; the record shows it.
        if out.write_all(bytes).await.is_ok() {
            let _ = out.flush().await;
        }
    }

    /// Writes bytes to stderr, recorded first.
    pub async fn write_stderr(&self, bytes: &[u8]) {
        let mut err = self.stderr.lock().await;
        if self.ending.is_set() {
            return;
        }
        if !self.recorder.record(&WireEvent::Stderr { t_us: self.recorder.now_us(), bytes: Recorded::of(bytes) }) {
            return;
        }
        let _ = err.write_all(bytes).await;
        let _ = err.flush().await;
    }

    /// Ends the mock: records the script's progress and the exit, seals the record and
    /// hands `serve` its [`ExitReason`]. Only the first call counts.
    pub fn exit(&self, code: i32, signal: Option<Signal>, why: &str) {
        self.ending.end(|| {
            match lock(&self.unbound).take() {
                Some(unbound) if unbound.probed => unbound.probe(&self.recorder),
                // The client never spoke: the connection's script was waiting at its start.
                Some(unbound) => {
                    let steps = self.bind(&unbound);
                    self.reached.store(usize::from(!steps.is_empty()), Ordering::SeqCst);
                    self.record_progress();
                }
                None => self.record_progress(),
            }
            self.recorder.record_last(&WireEvent::Exit {
                t_us: self.recorder.now_us(),
                code: signal.is_none().then_some(code),
                signal: signal.map(|s| s.as_str().to_string()),
                why: why.into(),
            });
            ExitReason { code, signal, why: why.into() }
        });
    }

    /// Handles one complete inbound line: records it, then hands a scripted message to the
    /// script, answers an unscripted request (its default, else `-32601`), or stores a
    /// client answer. An answer made at once shares the line's `write` to the record
    /// ([`Recorder::hold`]); nothing here waits before that.
    pub async fn on_line(&self, line: &[u8], terminated: bool) {
        let trimmed = line.strip_suffix(b"\r").unwrap_or(line);
        // Routed by its envelope alone: the whole message is built only where it is kept
        // (a scripted message, an answer, a stateless check), not for a line answered at once.
        let envelope = Envelope::read(trimmed);
        let json = envelope.is_some().then_some(trimmed);
        let _held = self.recorder.hold(&Crossing::FromClient { t_us: self.recorder.now_us(), line, json, terminated });
        let Some(Envelope { object: true, id, method }) = envelope else { return };
        let probing = method.as_deref() == Some("server/discover") && id.is_some();
        let unbound = {
            let mut slot = lock(&self.unbound);
            match slot.as_mut() {
                Some(u) if probing => {
                    u.probed = true;
                    None
                }
                _ => slot.take(),
            }
        };
        if let Some(unbound) = unbound {
            let steps = self.bind(&unbound);
            let _ = unbound.script.send(steps);
        }
        let request_id = id.as_ref().filter(|id| !id.is_null());
        match (method.as_deref(), &id) {
            (Some(method), _) => {
                let rules = lock(&self.stateless).clone();
                if let (Some(rules), Some(id)) = (rules.as_ref(), request_id)
                    && let Some(refusal) = crate::stateless::check_body(rules, &Envelope::message(trimmed))
                {
                    let bytes = payload::reply_line(id.clone(), None, Some(&refusal.error), None, LineEnd::Lf);
                    self.write(&bytes, refusal.why).await;
                    return;
                }
                if lock(&self.budget).take(method) {
                    self.inbox.deliver(Envelope::message(trimmed));
                } else if let (Some(rules), Some(id), "server/discover") = (rules.as_ref(), request_id, method) {
                    let result = crate::stateless::discover_result(rules, self.defaults.capabilities());
                    let bytes = payload::reply_line(id.clone(), Some(&result), None, None, LineEnd::Lf);
                    self.write(&bytes, "auto server/discover").await;
                } else if let Some(id) = request_id {
                    let rule = lock(&self.rules).get(method).map(|answer| answer.line(id));
                    if let Some(bytes) = rule {
                        self.write(&bytes, "reply_always").await;
                        return;
                    }
                    if let Some(answer) = self.defaults.answer(method) {
                        let bytes = payload::reply_line(id.clone(), Some(&answer.result), None, None, LineEnd::Lf);
                        self.write(&bytes, answer.why).await;
                        return;
                    }
                    let error = json!({"code": -32601, "message": format!("Method not found: {method} (unscripted)")});
                    let bytes = payload::reply_line(id.clone(), None, Some(&error), None, LineEnd::Lf);
                    self.write(&bytes, "auto -32601").await;
                }
            }
            (None, Some(id)) => {
                self.answers.insert(id, Envelope::message(trimmed));
            }
            (None, None) => {}
        }
    }

    /// Adds a `reply_always` rule: from now on an unscripted request with `method` gets
    /// `answer` (`{"result": …}` or `{"error": …}`).
    pub fn add_rule(&self, method: &str, answer: Value) {
        lock(&self.rules).insert(method.to_string(), StandingAnswer::new(&answer));
    }

    /// Whether the process that started the mock (the client) is exiting or gone.
    pub fn parent_exiting(&self) -> bool {
        self.parent.exiting()
    }

    /// Records that stdin reached EOF.
    pub fn saw_eof(&self) {
        let parent_exiting = self.parent.exiting();
        self.recorder.record(&WireEvent::StdinEof { t_us: self.recorder.now_us(), parent_exiting });
        self.eof.store(true, Ordering::SeqCst);
        self.eof_seen.notify_waiters();
    }

    /// The stdin reader, no longer reading, found the client's bytes (or its close) there:
    /// what `expect_write` waits for.
    pub fn saw_unread_write(&self) {
        self.written.store(true, Ordering::SeqCst);
        self.written_seen.notify_waiters();
    }

    fn wait_for(&self, what: Waiting) {
        *lock(&self.waiting) = Some(what);
        self.progress.notify_waiters();
    }

    /// Whether the script can make no more progress on what the client already sent: it
    /// has finished, or it waits for input that has not arrived. On stdin EOF the mock
    /// exits only once quiescent, so a client that writes and closes at once is still
    /// served in full, like a real server draining its input.
    pub fn quiescent(&self) -> bool {
        if self.finished.load(Ordering::SeqCst) || lock(&self.unbound).is_some() {
            return true;
        }
        match lock(&self.waiting).clone() {
            None => false,
            Some(Waiting::Method(m)) => !self.inbox.contains(|v| method_of(v) == Some(m.as_str())),
            Some(Waiting::Answer(key)) => !self.answers.contains(&key),
        }
    }

    /// Marks the script as at step `reached` (1-based) and records it. `output_follows`: a
    /// last step that writes, which finishes the script as it starts (its output is recorded
    /// after the mark; see [`WireEvent::Script`]).
    pub fn reach(&self, reached: usize, output_follows: bool) {
        self.reached.store(reached, Ordering::SeqCst);
        if output_follows {
            self.finished.store(true, Ordering::SeqCst);
        }
        self.record_script(output_follows);
    }

    /// Marks the script finished or not, without recording it.
    pub fn set_finished(&self, finished: bool) {
        self.finished.store(finished, Ordering::SeqCst);
    }

    /// Marks the script finished, records it and wakes whoever waits for progress.
    pub fn finish(&self) {
        self.set_finished(true);
        self.record_progress();
        self.progress.notify_waiters();
    }

    /// Records how far the script got. Written at every step, not only at exit, so that a
    /// mock killed by SIGKILL still tells whether the client reached the scripted steps.
    pub fn record_progress(&self) {
        self.record_script(false);
    }

    fn record_script(&self, output_follows: bool) {
        self.recorder.record(&WireEvent::Script {
            t_us: self.recorder.now_us(),
            reached: self.reached.load(Ordering::SeqCst),
            total: self.total.load(Ordering::SeqCst),
            finished: self.finished.load(Ordering::SeqCst),
            output_follows,
        });
    }
}

/// What an op's `run_stdio` works with: the connection's [`Mock`] and the script's own
/// bookkeeping.
pub struct StdioRun<'a> {
    /// The connection.
    pub mock: &'a Mock,
    /// Expected requests by label.
    pub requests: HashMap<String, Value>,
    /// The latest expected request.
    pub latest: Option<Value>,
    /// The ids of server-to-client requests, by label.
    pub server_ids: HashMap<String, Value>,
    /// The step running (0-based).
    pub index: usize,
    /// The number of steps.
    pub total: usize,
}

impl<'a> StdioRun<'a> {
    /// The script state for `mock`'s `total` steps.
    pub fn new(mock: &'a Mock, total: usize) -> Self {
        StdioRun { mock, requests: HashMap::new(), latest: None, server_ids: HashMap::new(), index: 0, total }
    }

    /// Records something the mock did that the transcript should explain.
    pub fn note(&self, text: &str) {
        let recorder = &self.mock.recorder;
        recorder.record(&WireEvent::Note { t_us: recorder.now_us(), text: text.into() });
    }

    /// Whether the running step is the script's last.
    pub fn is_last(&self) -> bool {
        self.index + 1 == self.total
    }

    /// Waits for the next scripted message with `method`.
    pub async fn expect(&self, method: &str) -> Value {
        let mock = self.mock;
        let message =
            mock.inbox.take(|m| method_of(m) == Some(method), || mock.wait_for(Waiting::Method(method.into()))).await;
        *lock(&mock.waiting) = None;
        message
    }

    /// Waits for the client's answer to the server-to-client request whose id is `key`
    /// (its JSON text).
    pub async fn answered(&self, key: &str) {
        let mock = self.mock;
        mock.answers.wait(key, || mock.wait_for(Waiting::Answer(key.into()))).await;
        *lock(&mock.waiting) = None;
    }

    /// Waits until stdin reaches EOF.
    pub async fn eof(&self) {
        until_set(&self.mock.eof, &self.mock.eof_seen).await;
    }

    /// Waits until the client writes to stdin (or closes it) after `stop_reading`.
    pub async fn unread_write(&self) {
        until_set(&self.mock.written, &self.mock.written_seen).await;
    }

    /// Writes `bytes` split as `chunking` says (the rest last), pausing between pieces.
    pub async fn write_split(&self, bytes: &[u8], chunking: Chunking<'_>, why: &str) {
        let (pieces, rest) = chunking.split(bytes);
        for piece in pieces {
            self.mock.write(piece, why).await;
            if let Some(d) = chunking.delay() {
                tokio::time::sleep(d).await;
            }
        }
        if !rest.is_empty() || chunking.sizes.is_empty() {
            self.mock.write(rest, why).await;
        }
    }

    /// Records a label given to a message (an expected request, or a server request).
    pub fn labelled(&self, label: &str, id: &Value, method: &str) {
        self.mock.recorder.record(&WireEvent::Labelled {
            label: label.to_string(),
            id: id.clone(),
            method: method.to_string(),
        });
    }
}
