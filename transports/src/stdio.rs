//! Newline-delimited JSON-RPC over a child process (SPEC §3).
//!
//! Four tasks serve one child: a *writer* that writes queued lines to stdin whole, one at a
//! time (so a caller that gives up never leaves half a line on the wire), a *reader* that
//! frames stdout into lines without ever buffering more than the size cap, a *stderr
//! capture* into a bounded ring, and a *reaper* that owns the [`Child`] and notices its
//! exit. Only [`StdioTransport::close`] (or dropping the transport unclosed) signals the
//! process group; the transport never restarts its child and never outlives it.
//!
//! A line sent while nothing is queued is written by its caller at once, without waiting
//! (the [`Lane`]'s fast path): a sequential client then pays no hand-off to the writer per
//! message. Whatever the pipe does not take at once goes to the writer, in order. Likewise,
//! right after writing a request its caller reads what the server has already answered
//! ([`read_now`]), so a server that replies at once costs no hand-off from the reader
//! either; the reader task reads everything else. Both read under one lock, through one
//! framer, so lines are dispatched whole and in order whoever reads them.

use crate::config::TransportConfig;
use crate::error::TransportError;
use crate::message::{self, RequestId};
use crate::pending::{self, Correlator, Routed};
use crate::transport::{Diagnostics, Handlers, Reply, RequestOptions, Transport};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{OnceCell, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

/// How much of the child's stderr is kept for diagnostics.
pub const STDERR_TAIL_BYTES: usize = 64 * 1024;
/// Read size for stdout and stderr; with the cap, it bounds the reader's memory.
const CHUNK: usize = 8 * 1024;
/// After the child exits, how long the reader may keep draining what it wrote before
/// pending requests are rejected (a reply written just before exit still counts).
const EXIT_DRAIN: Duration = Duration::from_millis(200);
/// How long close() waits for the kernel after SIGKILL before giving up on reaping.
const KILL_WAIT: Duration = Duration::from_secs(1);
/// How many bytes of a dropped line go into its report.
const SNIPPET: usize = 80;

/// The waits of [`StdioTransport::close`]. The defaults are SPEC §3's; tests may shorten them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloseGrace {
    /// How long to wait for the child to exit after its stdin is closed, before SIGTERM.
    pub after_stdin: Duration,
    /// How long to wait after SIGTERM before SIGKILL.
    pub after_term: Duration,
}

impl Default for CloseGrace {
    fn default() -> Self {
        CloseGrace { after_stdin: Duration::from_secs(1), after_term: Duration::from_secs(1) }
    }
}

/// A JSON Lines transport over a spawned child in its own process group (SPEC §3).
pub struct StdioTransport {
    shared: Arc<Shared>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    timeout: Option<Duration>,
    pid: u32,
    exited: watch::Receiver<bool>,
    cleanup: OnceCell<()>,
    grace: CloseGrace,
}

/// What the reader, reaper and transport share.
struct Shared {
    correlator: Correlator,
    connected: AtomicBool,
    /// Stops the writer (closing stdin) and the reader.
    stop: CancellationToken,
    /// The way to stdin.
    lane: Lane,
    /// The way from stdout.
    inbound: Mutex<Inbound>,
    /// When the next request tries [`read_now`] (see [`ReadNow`]).
    read_now: Mutex<ReadNow>,
}

/// The server's stdout and the framing of what it wrote, shared by the reader task and the
/// callers' [`read_now`]. Whoever holds the lock reads and dispatches, so the lines of one
/// read are framed and routed before anyone reads more.
struct Inbound {
    /// `None` once the reader has stopped (dropping it closes the pipe).
    stdout: Option<ChildStdout>,
    framer: Framer,
    buf: Vec<u8>,
    max: usize,
}

impl Shared {
    /// The transport is gone for good: disconnected, pending rejected with `Transport
    /// closed`, close handler fired (once), stdin closed. Idempotent.
    fn shut(&self) {
        self.connected.store(false, Ordering::SeqCst);
        self.correlator.close(TransportError::Closed { reason: None });
        self.stop.cancel();
    }
}

// Write states of one outgoing line: the caller and the writer race for it exactly once.
const QUEUED: u8 = 0;
const WRITING: u8 = 1;
const ABANDONED: u8 = 2;

/// One line for the writer, and who hears about its failure.
struct Outgoing {
    line: Vec<u8>,
    state: Arc<AtomicU8>,
    done: Done,
}

enum Done {
    /// A request: a write failure settles its pending entry.
    Request(RequestId),
    /// A notification: the caller awaits the outcome.
    Ack(oneshot::Sender<Result<(), TransportError>>),
    /// Fire and forget (answers, cancellations): failures go to the error handler.
    Report,
}

impl StdioTransport {
    /// Spawns the configured command and starts serving it; connected once spawned.
    pub async fn connect(config: &TransportConfig, handlers: Handlers) -> Result<Arc<StdioTransport>, TransportError> {
        Self::connect_with(config, handlers, CloseGrace::default()).await
    }

    /// [`Self::connect`] with explicit close waits.
    pub async fn connect_with(
        config: &TransportConfig,
        handlers: Handlers,
        grace: CloseGrace,
    ) -> Result<Arc<StdioTransport>, TransportError> {
        if config.command.trim().is_empty() {
            return Err(TransportError::Config("stdio transport needs a command to spawn".into()));
        }
        if let Some(cwd) = &config.cwd
            && !cwd.is_dir()
        {
            return Err(SpawnError::NoWorkingDirectory(cwd.clone()).for_command(config));
        }
        let mut command = Command::new(&config.command);
        command
            .args(&config.args)
            .envs(&config.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Own group: close() can signal the server and everything it started at once.
            .process_group(0)
            // Last resort if the reaper task is dropped with the runtime.
            .kill_on_drop(true);
        if let Some(cwd) = &config.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().map_err(|e| SpawnError::Os(e).for_command(config))?;
        let (Some(stdin), Some(stdout), Some(stderr), Some(pid)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take(), child.id())
        else {
            // Cannot happen with piped stdio; never leave the child behind if it does.
            let _ = child.start_kill();
            return Err(SpawnError::NoPipes.for_command(config));
        };

        let (outbox, inbox) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            correlator: Correlator::new(handlers, config.string_ids),
            connected: AtomicBool::new(true),
            stop: CancellationToken::new(),
            lane: Lane { pipe: Mutex::new(Pipe { stdin: Some(stdin), queued: 0 }), outbox },
            inbound: Mutex::new(Inbound {
                stdout: Some(stdout),
                framer: Framer::new(config.max_message_bytes()),
                buf: vec![0u8; CHUNK],
                max: config.max_message_bytes(),
            }),
            read_now: Mutex::new(ReadNow::default()),
        });
        let (exited_tx, exited) = watch::channel(false);
        let reader_done = CancellationToken::new();
        let reaped = CancellationToken::new();
        let ring = Arc::new(Mutex::new(VecDeque::new()));

        tokio::spawn(write_loop(inbox, shared.clone()));
        tokio::spawn(read_loop(shared.clone(), reader_done.clone()));
        tokio::spawn(capture_stderr(stderr, ring.clone(), reaped.clone()));
        tokio::spawn(reap(child, exited_tx, shared.clone(), reader_done, reaped));

        Ok(Arc::new(StdioTransport {
            shared,
            stderr: ring,
            timeout: config.timeout(),
            pid,
            exited,
            cleanup: OnceCell::new(),
            grace,
        }))
    }

    /// The child's pid, which is also its process-group id; `None` once the child has been
    /// reaped, because the number may then belong to another process.
    pub fn child_pid(&self) -> Option<u32> {
        (!*self.exited.borrow()).then_some(self.pid)
    }

    /// Sends one message (see [`Lane::send`]); fails only when the writer has stopped.
    fn enqueue(&self, value: &Value, done: Done) -> Result<Arc<AtomicU8>, TransportError> {
        enqueue(&self.shared, value, done).ok_or(TransportError::NotConnected)
    }

    /// Tells the server we gave up on `id` (SPEC §2); fire and forget, so a server that
    /// stopped reading cannot hold the caller's error back.
    fn send_cancelled(&self, id: &RequestId, reason: &str) {
        let _ = self.enqueue(&message::cancelled(id, reason), Done::Report);
    }

    /// After giving up a request that was `sent` (see [`withdraw`]): tells the server,
    /// never for `initialize` (SPEC §2).
    fn cancel_if_sent(&self, id: &RequestId, method: &str, sent: bool, reason: &str) {
        if sent && method != "initialize" {
            self.send_cancelled(id, reason);
        }
    }

    /// Process cleanup of close(): stdin is already closed; wait, SIGTERM the group, wait,
    /// SIGKILL, then sweep the group so nothing the server started survives it.
    async fn terminate(&self, exited_before: bool) {
        // Exited on its own before close(): no signals (SPEC §3), and its pid, hence the
        // group id, may belong to another process by now.
        let Ok(raw) = i32::try_from(self.pid) else { return };
        if exited_before {
            return;
        }
        let group = Pid::from_raw(raw);
        let mut exited = self.exited.clone();
        if !wait_exit(&mut exited, self.grace.after_stdin).await {
            signal_group(group, Signal::SIGTERM);
            if !wait_exit(&mut exited, self.grace.after_term).await {
                signal_group(group, Signal::SIGKILL);
                if !wait_exit(&mut exited, KILL_WAIT).await {
                    tracing::warn!(pid = self.pid, "stdio server did not die after SIGKILL");
                }
            }
        }
        signal_group(group, Signal::SIGKILL);
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Dropped without close(): kill the whole group rather than leave orphans.
        if self.cleanup.get().is_none()
            && !*self.exited.borrow()
            && let Ok(raw) = i32::try_from(self.pid)
        {
            signal_group(Pid::from_raw(raw), Signal::SIGKILL);
        }
        self.shared.shut();
    }
}

/// Takes back a line still queued, so the writer skips it and the server never sees it;
/// true when it was already written.
fn withdraw(state: &AtomicU8) -> bool {
    state.compare_exchange(QUEUED, ABANDONED, Ordering::SeqCst, Ordering::SeqCst).is_err()
}

/// A request whose caller stopped waiting for it: its future was dropped (the caller's own
/// timeout or `select!`), which is how a Rust caller cancels. It is given up like a cancelled
/// request (SPEC §2): a line still queued is never written, a sent one is followed by
/// `notifications/cancelled` (never for `initialize`), and a late reply counts as late.
/// Without this the pending entry stayed for the connection's life and the server kept
/// working on a request nobody waited for (the HTTP transports' `AbandonGuard` does the same).
struct Abandoned<'a> {
    transport: &'a StdioTransport,
    id: &'a RequestId,
    state: &'a AtomicU8,
    method: &'a str,
    /// Cleared once the request ended while its caller still waited.
    armed: bool,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let sent = withdraw(self.state);
        self.transport.shared.correlator.forget(self.id, true);
        self.transport.cancel_if_sent(self.id, self.method, sent, "request abandoned by the caller");
    }
}

#[async_trait::async_trait]
impl Transport for StdioTransport {
    async fn request(&self, method: &str, params: Option<Value>, options: RequestOptions) -> Reply {
        if !self.is_connected() {
            return Err(TransportError::NotConnected);
        }
        let correlator = &self.shared.correlator;
        let (id, rx) = correlator.open_request()?;
        options.announce(&id);
        let line = message::request(&id, method, params.as_ref());
        let state =
            match enqueue_line(&self.shared, line, Done::Request(id.clone())).ok_or(TransportError::NotConnected) {
                Ok(state) => state,
                Err(e) => {
                    correlator.forget(&id, false);
                    return Err(e);
                }
            };
        let mut abandoned = Abandoned { transport: self, id: &id, state: &state, method, armed: true };
        if lock(&self.shared.read_now).worth_it() {
            let found = read_now(&self.shared);
            lock(&self.shared.read_now).tried(found);
        }
        // The clock covers the write too: a server that stops reading still times out.
        let timeout = pending::effective_timeout(self.timeout, &options);
        let outcome = pending::wait_reply(correlator, &id, rx, timeout, &options).await;
        abandoned.armed = false;
        match outcome {
            Ok(reply) => reply,
            Err(gave_up) => {
                let sent = withdraw(&state);
                let err = gave_up.into_error(sent);
                self.cancel_if_sent(&id, method, sent, &err.to_string());
                Err(err)
            }
        }
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), TransportError> {
        if !self.is_connected() {
            return Err(TransportError::NotConnected);
        }
        let (tx, rx) = oneshot::channel();
        let state = self.enqueue(&message::notification(method, params), Done::Ack(tx))?;
        // A dropped ack means the writer stopped: the transport closed meanwhile.
        let written = async { rx.await.unwrap_or(Err(TransportError::Closed { reason: None })) };
        // Bounded like a request, so a server that stopped reading cannot hang the caller.
        let Some(limit) = self.timeout else { return written.await };
        match tokio::time::timeout(limit, written).await {
            Ok(result) => result,
            Err(_) => {
                let sent = withdraw(&state);
                Err(TransportError::Timeout { ms: limit.as_millis() as u64, sent })
            }
        }
    }

    async fn close(&self) {
        let exited_before = *self.exited.borrow();
        self.shared.shut();
        self.cleanup.get_or_init(|| self.terminate(exited_before)).await;
    }

    fn is_connected(&self) -> bool {
        self.shared.connected.load(Ordering::SeqCst)
    }

    fn diagnostics(&self) -> Diagnostics {
        let mut d = self.shared.correlator.diagnostics();
        let ring = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let (a, b) = ring.as_slices();
        d.stderr_tail = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        d
    }

    /// stdio has one shape for every revision: only the messages differ.
    fn fall_back_to_stateful(&self) -> bool {
        true
    }
}

/// Why the server could not be spawned; becomes [`TransportError::Spawn`] with the command.
#[derive(Debug, thiserror::Error)]
enum SpawnError {
    /// The configured `cwd` is not a directory.
    #[error("working directory {} does not exist; fix `cwd`", .0.display())]
    NoWorkingDirectory(PathBuf),
    /// The OS refused, plus what the user can do about it.
    #[error("{}; {}", .0, spawn_hint(.0))]
    Os(std::io::Error),
    /// Piped stdio without pipes: cannot happen, reported rather than unwrapped.
    #[error("the child's pipes were not available")]
    NoPipes,
}

impl SpawnError {
    fn for_command(self, config: &TransportConfig) -> TransportError {
        TransportError::Spawn { command: config.command.clone(), message: self.to_string() }
    }
}

fn spawn_hint(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::NotFound => "check that the command is installed and on PATH, or give its absolute path",
        std::io::ErrorKind::PermissionDenied => "check that the file is executable (chmod +x) and readable",
        _ => "check the command, its arguments and the working directory",
    }
}

fn enqueue(shared: &Shared, value: &Value, done: Done) -> Option<Arc<AtomicU8>> {
    // serde_json escapes control characters, so the line has no embedded newline.
    enqueue_line(shared, value.to_string().into_bytes(), done)
}

/// Sends one message's JSON text as a line (see [`Lane::send`]).
fn enqueue_line(shared: &Shared, mut line: Vec<u8>, done: Done) -> Option<Arc<AtomicU8>> {
    line.push(b'\n');
    shared.lane.send(shared, line, done)
}

/// The way to the child's stdin, shared by the callers and the writer task. Lines go out
/// whole and in the order they were sent: a caller writes its line itself only when nothing
/// is queued and the pipe takes bytes at once; otherwise the line (or what the pipe did not
/// take) is queued for the writer, which alone waits on the pipe.
struct Lane {
    pipe: Mutex<Pipe>,
    outbox: mpsc::UnboundedSender<Outgoing>,
}

/// The pipe and what is queued for it.
struct Pipe {
    /// stdin, while no write is waiting on it; the writer takes it for each queued line, and
    /// drops it (closing the pipe) when it stops.
    stdin: Option<ChildStdin>,
    /// Lines queued for the writer and not yet done with.
    queued: usize,
}

impl Lane {
    /// Sends `line`: written now when nothing is queued and the pipe takes it at once, else
    /// (or for the rest the pipe did not take) queued for the writer. `None` once the writer
    /// has stopped.
    fn send(&self, shared: &Shared, line: Vec<u8>, done: Done) -> Option<Arc<AtomicU8>> {
        let mut pipe = lock(&self.pipe);
        let (line, state) = match (pipe.queued, pipe.stdin.as_mut()) {
            (0, Some(stdin)) if !shared.stop.is_cancelled() => {
                let state = Arc::new(AtomicU8::new(WRITING));
                // One poll, never a wait: `Pending` (a full pipe, a pipe the runtime has not
                // seen writable yet, or the task's budget spent) leaves the whole line to the
                // writer, whose own poll then registers its waker. The no-op waker this poll
                // leaves behind displaces nobody's: with nothing queued the writer is not
                // waiting on the pipe (it holds stdin while it is).
                let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                match std::pin::Pin::new(stdin).poll_write(&mut cx, &line) {
                    std::task::Poll::Ready(Ok(n)) if n == line.len() => {
                        drop(pipe);
                        settle(shared, done, Ok(()));
                        return Some(state);
                    }
                    // Begun: the rest is the writer's, and can no longer be abandoned.
                    std::task::Poll::Ready(Ok(n)) => (line[n..].to_vec(), state),
                    std::task::Poll::Ready(Err(e)) => {
                        drop(pipe);
                        settle(shared, done, Err(TransportError::Write { message: e.to_string() }));
                        return Some(state);
                    }
                    std::task::Poll::Pending => (line, Arc::new(AtomicU8::new(QUEUED))),
                }
            }
            _ => (line, Arc::new(AtomicU8::new(QUEUED))),
        };
        self.outbox.send(Outgoing { line, state: state.clone(), done }).ok()?;
        pipe.queued += 1;
        Some(state)
    }

    /// The writer takes stdin for one queued line.
    fn take(&self) -> Option<ChildStdin> {
        lock(&self.pipe).stdin.take()
    }

    /// The writer is done with one queued line, and gives stdin back (`None`: it stopped).
    fn done(&self, stdin: Option<ChildStdin>) {
        let mut pipe = lock(&self.pipe);
        pipe.queued = pipe.queued.saturating_sub(1);
        pipe.stdin = stdin;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tells whoever waits on a line how its write went.
fn settle(shared: &Shared, done: Done, result: Result<(), TransportError>) {
    match (done, result) {
        (Done::Request(id), Err(err)) => shared.correlator.fail(&id, err),
        (Done::Ack(tx), result) => {
            let _ = tx.send(result);
        }
        (Done::Report, Err(err)) => shared.correlator.report(&err),
        (Done::Request(_) | Done::Report, Ok(())) => {}
    }
}

/// Writes the queued lines, whole, in queue order. Ends on stop, after writing whatever is
/// queued and writable without blocking; then stdin is dropped, and the server sees EOF.
async fn write_loop(mut inbox: mpsc::UnboundedReceiver<Outgoing>, shared: Arc<Shared>) {
    let lane = &shared.lane;
    loop {
        let item = tokio::select! {
            biased;
            item = inbox.recv() => match item {
                Some(item) => item,
                None => break,
            },
            _ = shared.stop.cancelled() => break,
        };
        // The caller gave up before a byte went out: skip it. A line the caller began
        // itself is already WRITING.
        if item.state.compare_exchange(QUEUED, WRITING, Ordering::SeqCst, Ordering::SeqCst) == Err(ABANDONED) {
            lane.done(lane.take());
            continue;
        }
        let Some(mut stdin) = lane.take() else { break };
        let (result, stopped) = tokio::select! {
            biased;
            r = stdin.write_all(&item.line) => (r.map_err(|e| TransportError::Write { message: e.to_string() }), false),
            _ = shared.stop.cancelled() => (Err(TransportError::Closed { reason: None }), true),
        };
        settle(&shared, item.done, result);
        if stopped {
            break;
        }
        lane.done(Some(stdin));
    }
    // Stopped: no caller may write any more, and dropping stdin closes the pipe.
    drop(lock(&lane.pipe).stdin.take());
}

/// Frames stdout and dispatches each message. On EOF (or a read error) the transport
/// closes, minus the signals.
async fn read_loop(shared: Arc<Shared>, done: CancellationToken) {
    loop {
        let read = tokio::select! {
            biased;
            _ = shared.stop.cancelled() => break,
            read = std::future::poll_fn(|cx| poll_inbound(&shared, cx)) => read,
        };
        match read {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let why = format!("reading the server's stdout failed: {e}");
                shared.correlator.report(&TransportError::Closed { reason: Some(why) });
                break;
            }
        }
    }
    drop(lock(&shared.inbound).stdout.take());
    shared.shut();
    done.cancel();
}

/// One read of stdout by the reader task, framed and dispatched under the lock: `true` when
/// bytes came, `false` at EOF (after the last unterminated line).
fn poll_inbound(shared: &Arc<Shared>, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<bool>> {
    let mut inbound = lock(&shared.inbound);
    let Inbound { stdout, framer, buf, max } = &mut *inbound;
    let Some(stdout) = stdout.as_mut() else { return std::task::Poll::Ready(Ok(false)) };
    let mut read = ReadBuf::new(buf);
    std::task::ready!(std::pin::Pin::new(stdout).poll_read(cx, &mut read))?;
    let n = read.filled().len();
    let mut on_frame = |frame: Frame<'_>| route_frame(shared, *max, frame);
    if n == 0 {
        framer.finish(&mut on_frame);
        return std::task::Poll::Ready(Ok(false));
    }
    framer.push(&buf[..n], &mut on_frame);
    std::task::Poll::Ready(Ok(true))
}

/// Reads and dispatches what the server has already written, without waiting, on the
/// caller's task right after its request went out: a server that answers at once (on one
/// CPU, before the caller's write even returns) is read here with no wake-up of the reader
/// task and no turn of the reactor. It reads straight from the descriptor, so a read that
/// finds nothing costs one `read` call and leaves the reactor's readiness alone; whatever
/// it leaves (EOF, an error, the rest of a long burst) is the reader task's, which the
/// reactor still wakes for it. Skipped while the reader holds the lock. Returns whether it
/// found any bytes.
fn read_now(shared: &Arc<Shared>) -> bool {
    if shared.stop.is_cancelled() {
        return false;
    }
    let Ok(mut inbound) = shared.inbound.try_lock() else { return false };
    let Inbound { stdout, framer, buf, max } = &mut *inbound;
    let Some(stdout) = stdout.as_ref() else { return false };
    let mut on_frame = |frame: Frame<'_>| route_frame(shared, *max, frame);
    let mut found = false;
    // Bounded: a server that writes without pause (a 1 GiB line) must not keep the caller
    // from its own timeout; the reader task takes the rest.
    for _ in 0..READ_NOW_CHUNKS {
        // Never blocks: tokio makes a child's pipes non-blocking for its reactor.
        match nix::unistd::read(stdout, buf) {
            Ok(n) if n > 0 => {
                found = true;
                framer.push(&buf[..n], &mut on_frame);
                if n < buf.len() {
                    break;
                }
            }
            // Nothing yet (EAGAIN), EOF or an error: the reader task's to see.
            _ => break,
        }
    }
    found
}

/// How many reads of [`CHUNK`] bytes one [`read_now`] makes at most.
const READ_NOW_CHUNKS: usize = 4;

/// When a request tries [`read_now`]: every time while it finds replies (a server that
/// answers before the caller's write returns: on one CPU, the echo of `make bench`), and
/// after it found nothing, only once in 2, 4, 8, then 16 requests (a server on another CPU,
/// or one that takes its time, found nothing ready), so such a server costs one wasted
/// `read` per 16 requests rather than one per request, while an odd miss costs a fast one
/// little.
#[derive(Debug, Default)]
struct ReadNow {
    /// Consecutive tries that found nothing (at most 4).
    misses: u32,
    /// Requests left to skip before the next try.
    skip: u32,
}

impl ReadNow {
    fn worth_it(&mut self) -> bool {
        if self.skip == 0 {
            return true;
        }
        self.skip -= 1;
        false
    }

    fn tried(&mut self, found: bool) {
        self.misses = if found { 0 } else { (self.misses + 1).min(4) };
        self.skip = if found { 0 } else { (1 << self.misses) - 1 };
    }
}

/// Hands a framed line to [`dispatch`], or counts an oversize one.
fn route_frame(shared: &Arc<Shared>, max: usize, frame: Frame<'_>) {
    match frame {
        Frame::Line(line) => dispatch(shared, line),
        Frame::Oversize => shared.correlator.oversize(max),
    }
}

/// Parses and routes one line; anything that is not a JSON-RPC message is dropped and
/// reported, never fatal.
fn dispatch(shared: &Arc<Shared>, line: &[u8]) {
    let correlator = &shared.correlator;
    let Ok(text) = std::str::from_utf8(line) else {
        correlator.violation(format!("line is not valid UTF-8: {}", snippet(line)));
        return;
    };
    let inbound: message::Inbound = match serde_json::from_str(text) {
        Ok(inbound) => inbound,
        Err(e) => {
            correlator.violation(format!("line is not JSON ({e}): {}", snippet(line)));
            return;
        }
    };
    if let Routed::ServerRequest { id, method, params } = correlator.route_inbound(inbound) {
        let shared = shared.clone();
        tokio::spawn(async move {
            // A handler that never returns must not outlive the transport.
            tokio::select! {
                answer = shared.correlator.answer(&id, method, params) => {
                    let _ = enqueue(&shared, &answer, Done::Report);
                }
                _ = shared.stop.cancelled() => {}
            }
        });
    }
}

fn snippet(line: &[u8]) -> String {
    let cut = &line[..line.len().min(SNIPPET)];
    let more = if line.len() > SNIPPET { "…" } else { "" };
    format!("{:?}{more}", String::from_utf8_lossy(cut))
}

/// Keeps the last [`STDERR_TAIL_BYTES`] of stderr. Never parsed: stderr is a log channel.
async fn capture_stderr(mut stderr: impl AsyncRead + Unpin, ring: Arc<Mutex<VecDeque<u8>>>, reaped: CancellationToken) {
    let mut buf = vec![0u8; CHUNK];
    // After the child is reaped, keep reading what is already buffered (its last words are
    // usually the crash explanation) but only briefly: a grandchild outside the group may
    // hold the pipe open forever.
    let mut drain_until: Option<tokio::time::Instant> = None;
    loop {
        let drain_deadline = async {
            match drain_until {
                Some(t) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        let n = tokio::select! {
            biased;
            read = stderr.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
            _ = reaped.cancelled(), if drain_until.is_none() => {
                drain_until = Some(tokio::time::Instant::now() + EXIT_DRAIN);
                continue;
            }
            _ = drain_deadline => break,
        };
        let mut ring = ring.lock().unwrap_or_else(|e| e.into_inner());
        ring.extend(&buf[..n]);
        let excess = ring.len().saturating_sub(STDERR_TAIL_BYTES);
        ring.drain(..excess);
    }
}

/// Owns the child: reaps it as soon as it exits (no zombie), then closes the transport.
async fn reap(
    mut child: Child,
    exited: watch::Sender<bool>,
    shared: Arc<Shared>,
    reader_done: CancellationToken,
    reaped: CancellationToken,
) {
    match child.wait().await {
        Ok(status) => tracing::debug!(%status, "stdio server exited"),
        Err(e) => tracing::warn!(error = %e, "waiting for the stdio server failed"),
    }
    let _ = exited.send(true);
    let _ = tokio::time::timeout(EXIT_DRAIN, reader_done.cancelled()).await;
    shared.shut();
    reaped.cancel();
}

/// Whether the child exited within `bound`.
async fn wait_exit(exited: &mut watch::Receiver<bool>, bound: Duration) -> bool {
    // A closed channel means the reaper is gone, which it only is after the exit.
    tokio::time::timeout(bound, exited.wait_for(|e| *e)).await.is_ok()
}

fn signal_group(group: Pid, signal: Signal) {
    match killpg(group, signal) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
        Err(e) => tracing::warn!(error = %e, ?signal, "signalling the stdio server's process group failed"),
    }
}

/// One framing result.
#[derive(Debug, PartialEq)]
pub enum Frame<'a> {
    /// A complete, non-blank line without its terminator (and without a leading BOM).
    Line(&'a [u8]),
    /// A line over the cap, being discarded up to its newline.
    Oversize,
}

/// JSON Lines framing with a size cap: holds at most `max + 1` bytes of one line, so an
/// endless line costs no more memory than a legal one. Public for the fuzz target
/// (`fuzz/fuzz_targets/jsonl_framer.rs`); the transport is its only other user.
pub struct Framer {
    max: usize,
    line: Vec<u8>,
    skipping: bool,
    at_start: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Framer {
    /// A framer for a fresh stream; lines over `max` bytes are reported as oversize.
    pub fn new(max: usize) -> Self {
        Framer { max, line: Vec::new(), skipping: false, at_start: true }
    }

    /// Frames one chunk, calling `on` for each line it completes.
    pub fn push(&mut self, mut chunk: &[u8], on: &mut impl FnMut(Frame<'_>)) {
        while !chunk.is_empty() {
            let (part, rest, complete) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (chunk, &[][..], false),
            };
            if !self.skipping {
                // +1: room for the '\r' of a CRLF ending, which is not part of the message.
                if self.line.len() + part.len() > self.max + 1 {
                    self.line = Vec::new();
                    self.skipping = true;
                    self.at_start = false;
                    on(Frame::Oversize);
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            if complete {
                if !self.skipping {
                    self.emit(on);
                }
                self.skipping = false;
            }
            chunk = rest;
        }
    }

    /// End of stream: an unterminated last line is still a message (a server that exits
    /// right after its reply may omit the final newline).
    pub fn finish(&mut self, on: &mut impl FnMut(Frame<'_>)) {
        if !self.skipping && !self.line.is_empty() {
            self.emit(on);
        }
    }

    fn emit(&mut self, on: &mut impl FnMut(Frame<'_>)) {
        let mut line = &self.line[..];
        if std::mem::take(&mut self.at_start) {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > self.max {
            on(Frame::Oversize);
        } else if !line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            on(Frame::Line(line));
        }
        self.line.clear();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn read_now_is_tried_every_time_it_finds_and_backs_off_when_it_does_not() {
        let mut policy = ReadNow::default();
        let mut pattern = |found: bool| {
            assert!(policy.worth_it());
            policy.tried(found);
            let mut skipped = 0;
            while !policy.worth_it() {
                skipped += 1;
            }
            skipped
        };
        assert_eq!([true, true].map(&mut pattern), [0, 0]);
        assert_eq!([false, false, false, false, false].map(&mut pattern), [1, 3, 7, 15, 15]);
        assert_eq!([true, false].map(&mut pattern), [0, 1]);
    }

    #[test]
    fn spawn_errors_say_what_to_do() {
        let config = TransportConfig { command: "srv".into(), ..TransportConfig::default() };
        let text = |e: SpawnError| e.for_command(&config).to_string();
        assert_eq!(
            text(SpawnError::NoWorkingDirectory("/nope".into())),
            "Failed to spawn srv: working directory /nope does not exist; fix `cwd`"
        );
        assert_eq!(
            text(SpawnError::Os(std::io::Error::from(std::io::ErrorKind::PermissionDenied))),
            "Failed to spawn srv: permission denied; check that the file is executable (chmod +x) and readable"
        );
        assert_eq!(text(SpawnError::NoPipes), "Failed to spawn srv: the child's pipes were not available");
    }

    fn frames(max: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut framer = Framer::new(max);
        let mut out = Vec::new();
        let mut on = |f: Frame<'_>| {
            out.push(match f {
                Frame::Line(l) => String::from_utf8_lossy(l).into_owned(),
                Frame::Oversize => "<oversize>".into(),
            })
        };
        for chunk in chunks {
            framer.push(chunk, &mut on);
        }
        framer.finish(&mut on);
        out
    }

    #[test]
    fn framer_handles_crlf_bom_blank_and_split_chunks() {
        assert_eq!(frames(100, &[b"\xEF\xBB", b"\xBFa\r\n\n  \r\n\t\nb", b"c\nd"]), ["a", "bc", "d"]);
        // A BOM after the start of the stream is data, not stripped.
        assert_eq!(frames(100, &[b"a\n\xEF\xBB\xBFb\n"]), ["a", "\u{feff}b"]);
    }

    #[test]
    fn framer_drops_oversize_lines_with_bounded_memory() {
        let mut framer = Framer::new(10);
        let mut seen = Vec::new();
        let big = vec![b'x'; 4096];
        for _ in 0..256 {
            framer.push(&big, &mut |f: Frame<'_>| seen.push(format!("{f:?}")));
            assert!(framer.line.capacity() <= 64, "the framer buffered an oversize line");
        }
        framer.push(b"\nok\n", &mut |f: Frame<'_>| seen.push(format!("{f:?}")));
        assert_eq!(seen, ["Oversize", "Line([111, 107])"]);
        // Exactly at the cap, with or without CR, is fine; one over is not.
        assert_eq!(frames(3, &[b"abc\r\nabc\nabcd\n"]), ["abc", "abc", "<oversize>"]);
    }

    /// The inputs under fuzz/regressions/<target>/: what the fuzzer crashed on, and nasty
    /// hand-made inputs (`make fuzz`, README.md "Fuzzing").
    pub(crate) fn fuzz_regressions(target: &str) -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions").join(target);
        let mut files: Vec<_> =
            std::fs::read_dir(&dir).expect("the regressions folder").map(|e| e.expect("entry").path()).collect();
        files.sort();
        assert!(!files.is_empty(), "no regressions in {}", dir.display());
        files.into_iter().map(|p| (p.clone(), std::fs::read(&p).expect("a regression file"))).collect()
    }

    /// Each regression frames alike whole and byte by byte, no frame is over the cap, blank
    /// or holds a line end, and each line reads as the same message (or error) parsed straight
    /// or through a `Value` (what `fuzz/fuzz_targets/jsonl_framer.rs` asserts).
    #[test]
    fn fuzz_regressions_frame_alike_in_any_chunking() {
        let frames = |max: usize, data: &[u8], size: usize| {
            let mut framer = Framer::new(max);
            let mut out = Vec::new();
            let mut on = |f: Frame<'_>| out.push(if let Frame::Line(l) = f { Some(l.to_vec()) } else { None });
            data.chunks(size).for_each(|c| framer.push(c, &mut on));
            framer.finish(&mut on);
            out
        };
        for (path, data) in fuzz_regressions("jsonl_framer") {
            for max in [8, 1 << 20] {
                let whole = frames(max, &data, data.len().max(1));
                assert_eq!(whole, frames(max, &data, 1), "{}: chunking changed the frames", path.display());
                for line in whole.iter().flatten() {
                    let blank = line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
                    assert!(line.len() <= max && !line.contains(&b'\n') && !blank, "{}: {line:?}", path.display());
                }
            }
            for line in frames(1 << 20, &data, data.len().max(1)).iter().flatten() {
                let Ok(text) = std::str::from_utf8(line) else { continue };
                let parsed = serde_json::from_str::<message::Inbound>(text).map_err(|e| e.to_string());
                let classified =
                    serde_json::from_str(text).map(message::Inbound::from_value).map_err(|e| e.to_string());
                assert_eq!(parsed, classified, "{}: {text:?}", path.display());
            }
        }
    }
}
