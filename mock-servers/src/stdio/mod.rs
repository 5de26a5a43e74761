//! The stdio mock server: runs one connection's script on a stdin/stdout pair and records
//! every wire event. Nothing but protocol bytes ever goes to stdout.
//!
//! Unscripted requests (a method that no remaining `expect` step names) are answered at
//! once, so no client ever waits on the mock by accident: with a `reply_always` rule's
//! answer, `ping` and `tools/list` with their [`crate::defaults`], anything else `-32601`.
//!
//! # Layout
//!
//! - [`envelope`] — what routing needs of a client line, read without building the message.
//! - [`standing`] — a `reply_always` rule's answer, serialised once.
//! - [`input`] — the mock's stdin, read in blocking reads by a thread of its own, and the
//!   interrupt `close_stdin` wakes that thread with.
//! - [`run`] — the connection's state ([`run::Mock`]) and what ops run against
//!   ([`run::StdioRun`]).
//! - this module — [`serve`]: the stdin reader thread, the shutdown watcher and the script
//!   loop, which hands each step to its op.

pub mod envelope;
pub mod input;
pub mod run;
pub mod standing;

use crate::error::MockError;
use crate::ops;
use crate::record::{Recorder, claim_connection, record_path};
use crate::shutdown::{ExitReason, Shutdown, Stop};
use input::Input;
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, ServerStep, TransportName};
use run::{Mock, StdioRun};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinSet;

/// The mock's stdin, stdout and stderr: the process's own, or any pipes (tests use
/// in-memory duplex pipes).
pub struct Pipes {
    stdin: Input,
    stdout: Box<dyn AsyncWrite + Send + Unpin>,
    stderr: Box<dyn AsyncWrite + Send + Unpin>,
    /// The process's stderr is its parent's (see [`crate::parent::stderr_shared`]).
    stderr_shared: bool,
}

impl Pipes {
    /// The process's stdin, stdout and stderr. Call it inside the runtime.
    pub fn process() -> Self {
        Pipes {
            stdin: process_stdin(),
            stdout: process_stdout(),
            stderr: Box::new(tokio::io::stderr()),
            stderr_shared: crate::parent::stderr_shared(),
        }
    }

    /// Any three pipes.
    pub fn new(
        stdin: impl AsyncRead + Send + Unpin + 'static,
        stdout: impl AsyncWrite + Send + Unpin + 'static,
        stderr: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        Pipes {
            stdin: Input::Other(Box::new(stdin)),
            stdout: Box::new(stdout),
            stderr: Box::new(stderr),
            stderr_shared: false,
        }
    }
}

/// The process's stdin in a form `close_stdin` can really close. A pipe or a socket (the
/// normal case: a client spawned the mock; Node's child processes get socket pairs) is
/// moved off fd 0, which becomes `/dev/null`, and read in blocking reads by the stdin reader
/// thread ([`input`]), so dropping it closes the client's end and its next write fails with
/// EPIPE. tokio's own `stdin()` reads on a blocking thread that keeps the pipe open (and may
/// swallow one more write), so it is only the fallback for a terminal or a file.
fn process_stdin() -> Input {
    use std::os::fd::AsFd;
    let moved = || -> std::io::Result<Input> {
        let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
        // Refuses anything but a FIFO or a socket, before fd 0 is touched.
        let reader = match descriptor(fd)? {
            Descriptor::Socket(socket) => {
                socket.set_nonblocking(false)?;
                Input::Socket(socket)
            }
            Descriptor::Fifo(file) => {
                use nix::fcntl::{FcntlArg, OFlag, fcntl};
                let flags = OFlag::from_bits_truncate(fcntl(&file, FcntlArg::F_GETFL)?);
                fcntl(&file, FcntlArg::F_SETFL(flags - OFlag::O_NONBLOCK))?;
                Input::Pipe(file)
            }
        };
        let null = std::fs::File::open("/dev/null")?;
        nix::unistd::dup2_stdin(&null).map_err(std::io::Error::from)?;
        Ok(reader)
    };
    moved().unwrap_or_else(|_| Input::Other(Box::new(tokio::io::stdin())))
}

/// The process's stdout, written through the reactor when it is a pipe or a socket (the
/// normal case): tokio's own `stdout()` hands every write and flush to a blocking thread,
/// a thread hop per reply that capped stdio round trips (`make bench`) and, since each
/// write then yields, let the stdin reader record the client's next move between two
/// replies the script writes back to back (`make soak` with the TypeScript SDK, whose
/// child processes get socket pairs). The descriptor is made non-blocking; nothing else
/// ever writes to our stdout. A terminal or a file falls back to `stdout()`.
fn process_stdout() -> Box<dyn AsyncWrite + Send + Unpin> {
    use std::os::fd::AsFd;
    let reactor = || -> std::io::Result<Box<dyn AsyncWrite + Send + Unpin>> {
        let fd = std::io::stdout().as_fd().try_clone_to_owned()?;
        Ok(match descriptor(fd)? {
            Descriptor::Socket(socket) => {
                socket.set_nonblocking(true)?;
                Box::new(tokio::net::UnixStream::from_std(socket)?)
            }
            Descriptor::Fifo(file) => Box::new(tokio::net::unix::pipe::Sender::from_file(file)?),
        })
    };
    reactor().unwrap_or_else(|_| Box::new(tokio::io::stdout()))
}

/// A standard stream the mock can read or write on its own terms.
enum Descriptor {
    Socket(std::os::unix::net::UnixStream),
    Fifo(std::fs::File),
}

/// `fd` as a Unix socket or a pipe; anything else (a terminal, a file) is refused.
fn descriptor(fd: std::os::fd::OwnedFd) -> std::io::Result<Descriptor> {
    use std::os::unix::fs::FileTypeExt;
    let file = std::fs::File::from(fd);
    let kind = file.metadata()?.file_type();
    if kind.is_socket() {
        Ok(Descriptor::Socket(std::os::unix::net::UnixStream::from(std::os::fd::OwnedFd::from(file))))
    } else if kind.is_fifo() {
        Ok(Descriptor::Fifo(file))
    } else {
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "neither a pipe nor a socket"))
    }
}

/// Serves the scenario's script for the next connection in `run_dir` (a respawned mock
/// serves the next `new_connection` part) on `pipes`, until stdin EOF, a [`Stop`] from
/// `shutdown` (recorded; SIGTERM is ignored after `ignore_sigterm`) or an `exit` step.
/// Everything is recorded before this returns; the process edge acts on the reason.
pub async fn serve(
    scenario: &Scenario,
    run_dir: &Path,
    pipes: Pipes,
    shutdown: Shutdown,
) -> Result<ExitReason, MockError> {
    // A client may probe with a throwaway copy first (see `run::Unbound`): where every
    // connection's script waits for the client before it acts, the script is bound to this
    // process by the client's first message that is not a `server/discover` request.
    let (steps, path, bind) = if may_be_probed(scenario) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let pending = crate::record::pending_path(run_dir);
        let unbound = run::Unbound {
            run_dir: run_dir.to_path_buf(),
            pending: pending.clone(),
            server: scenario.server.clone(),
            script: tx,
            budget: ops::budget,
            probed: false,
        };
        (Vec::new(), pending, Some((unbound, rx)))
    } else {
        let connection = claim_connection(run_dir)?;
        (mcp_scenario::script::connection_script(&scenario.server, connection), record_path(run_dir, connection), None)
    };
    let recorder = Recorder::create(&path)?;
    recorder.record(&WireEvent::Started {
        pid: std::process::id(),
        stderr_shared: pipes.stderr_shared,
        origin_unix_us: Some(recorder.origin_unix_us()),
    });
    let budget = ops::budget(&steps, TransportName::Stdio);
    let mut mock = Mock::new(
        recorder,
        scenario.revision.as_str().to_string(),
        tokio::sync::Mutex::new(pipes.stdout),
        tokio::sync::Mutex::new(pipes.stderr),
        budget,
        steps.len(),
    );
    mock.defaults = crate::defaults::Defaults::for_scenario(scenario);
    let script = match bind {
        Some((unbound, rx)) => {
            // A probe's `server/discover` is answered by the checks the script starts with.
            let leading = mcp_scenario::script::connection_parts(&scenario.server).next().unwrap_or_default();
            for step in leading.iter().take_while(|s| ops::op(s).about().transports.standing) {
                if let (ServerStep::Stateless(step), Some(rules)) = (step, crate::sync::lock(&mock.stateless).as_mut())
                {
                    rules.apply(step);
                }
            }
            mock.unbound(unbound);
            Script::Unbound(rx)
        }
        None => Script::Bound(steps),
    };
    let mock = Arc::new(mock);
    // Dropped (and so aborted) when `serve` returns.
    let mut tasks = JoinSet::new();
    tasks.spawn(read_stdin(mock.clone(), pipes.stdin));
    tasks.spawn(watch_shutdown(mock.clone(), shutdown));
    tokio::select! {
        reason = mock.ending().wait() => Ok(reason),
        () = async {
            let steps = match script {
                Script::Bound(steps) => steps,
                // Dropped unbound: the process ended as a probe, and `ending` resolves.
                Script::Unbound(rx) => rx.await.unwrap_or_default(),
            };
            run_script(&mock, &steps).await;
            std::future::pending::<()>().await
        } => unreachable!("the script parks when it ends"),
    }
}

/// A connection's script: known at start, or bound by the client's first message.
enum Script {
    Bound(Vec<ServerStep>),
    Unbound(tokio::sync::oneshot::Receiver<Vec<ServerStep>>),
}

/// Whether a process of this scenario may be a client's probe copy: no step expects a
/// `server/discover` (the scenario's own subject then), and every connection's script waits
/// for a client message before it acts on the protocol (a script that speaks first runs at
/// once, as ever).
fn may_be_probed(scenario: &Scenario) -> bool {
    let expects_discover =
        scenario.server.iter().any(|s| matches!(s, ServerStep::Expect(e) if e.method == "server/discover"));
    // Leading output (`stderr`, raw `send` bytes) is written once the client has spoken
    // rather than at spawn: the client reads it all the same before its first answer.
    let waits_first = |part: &[ServerStep]| {
        part.iter()
            .filter(|s| !matches!(s, ServerStep::Stderr(_) | ServerStep::Send(_)))
            .map(ops::op)
            .map(|op| (op, op.about().transports))
            .find(|(_, t)| t.stdio && !t.standing)
            .is_some_and(|(op, _)| !op.consumes().is_empty())
    };
    !expects_discover && mcp_scenario::script::connection_parts(&scenario.server).all(waits_first)
}

/// Runs the steps in order, each by its op (steps of other transports are skipped).
async fn run_script(mock: &Mock, steps: &[ServerStep]) {
    let mut run = StdioRun::new(mock, steps.len());
    for (i, step) in steps.iter().enumerate() {
        let op = ops::op(step);
        run.index = i;
        // A last output step ends the script as it is reached (the client may leave at once);
        // so does one followed only by `stall`, which finishes the script when it runs.
        let last = steps[i + 1..].iter().all(|s| matches!(s, ServerStep::Stall(_)));
        mock.reach(i + 1, op.ends_in_output() && last);
        if op.about().transports.stdio {
            op.run_stdio(&mut run).await;
        }
    }
    mock.finish();
}

/// Reads the client's lines on a thread of its own ([`input`]: blocking reads, each line
/// handled there, answered at once where no script step is needed), and acts on the end of
/// stdin: a `close_stdin` interrupts the thread, EOF lets the script serve what arrived and
/// then ends the mock (unless `ignore_stdin_eof`).
async fn read_stdin(mock: Arc<Mock>, stdin: Input) {
    let runtime = tokio::runtime::Handle::current();
    let (reader, interrupt) = stdin.into_reader(runtime.clone());
    let (ended_tx, mut ended_rx) = tokio::sync::oneshot::channel();
    let reading = mock.clone();
    let spawned = std::thread::Builder::new().name("stdin".into()).spawn(move || {
        let _ = ended_tx.send(read_lines(&reading, reader, &runtime));
    });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the stdin reader");
        return mock.exit(1, None, "cannot start the stdin reader");
    }
    let ended = tokio::select! {
        biased;
        () = mock.close_requested() => {
            interrupt.interrupt();
            ended_rx.await
        }
        ended = &mut ended_rx => ended,
    };
    match ended {
        Ok(StdinEnded::Eof) => {}
        // `close_stdin`: the client's pipe is closed; no EOF will ever be seen.
        Ok(StdinEnded::Closed) => {
            mock.stdin_gone();
            return std::future::pending::<()>().await;
        }
        // The reader thread panicked: stdin is left as it is, as a panicked reader task left it.
        Err(_) => return std::future::pending::<()>().await,
    }
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
        // A client that lives on after closing stdin may signal or kill at once rather than
        // wait for the exit (the shutdown SHOULD): lingering lets that be recorded whichever
        // of the EOF and the signal the kernel delivered first.
        if !mock.parent_exiting() {
            tokio::time::sleep(EOF_LINGER).await;
            // A signal delivered while the mock was starved of CPU is recorded before the
            // exit: a yield lets the runtime poll its driver, where the signal waits.
            for _ in 0..2 {
                tokio::task::yield_now().await;
            }
        }
        mock.exit(0, None, "stdin EOF");
    }
}

/// How long a stdio mock whose stdin was closed by a living client stays before it exits: a
/// signal (or a kill) within it is a client that did not wait for the server to exit
/// (`always: stdio shutdown closes stdin first`). Long enough that two calls the client makes
/// back to back (close, then signal) land within it on a loaded machine; short beside any
/// wait a client means (the SDKs wait a second or more).
pub const EOF_LINGER: Duration = Duration::from_millis(100);

/// Where `chunk`'s first line ends (the index of its `\n`). Found by std's word-at-a-time
/// search (`BufRead::skip_until` on a slice reads nothing and copies nothing): a loop over
/// the bytes was 7 % of the mock's instructions per round trip (callgrind).
fn line_end(chunk: &[u8]) -> Option<usize> {
    let mut rest = chunk;
    let through = std::io::BufRead::skip_until(&mut rest, b'\n').unwrap_or(0);
    through.checked_sub(1).filter(|&end| chunk[end] == b'\n')
}

/// How the stdin reader thread stopped.
enum StdinEnded {
    /// The client closed its end (recorded, with any last unterminated line).
    Eof,
    /// `close_stdin`: the thread dropped stdin.
    Closed,
}

/// The stdin reader thread: reads, splits lines and hands each to [`Mock::on_line`] (run to
/// completion on this thread, `runtime` driving its writes) before reading again.
fn read_lines(mock: &Mock, mut reader: input::LineReader, runtime: &tokio::runtime::Handle) -> StdinEnded {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    loop {
        if !mock.reading.load(Ordering::SeqCst) {
            return leave_unread(mock, reader, &mut buf);
        }
        let n = match reader.read(&mut buf) {
            input::Read::Data(_) | input::Read::Eof if !mock.reading.load(Ordering::SeqCst) => {
                // `stop_reading` came while this read waited: what it returned came after
                // it, so it stays unread (handled, it would depend on which thread ran first).
                mock.saw_unread_write();
                park()
            }
            input::Read::Data(n) => n,
            input::Read::Eof => break,
            input::Read::Closing => return StdinEnded::Closed,
        };
        let mut chunk = &buf[..n];
        while let Some(pos) = line_end(chunk) {
            if line.is_empty() {
                // The whole line came in this read: handled where it lies.
                runtime.block_on(mock.on_line(&chunk[..pos], true));
            } else {
                line.extend_from_slice(&chunk[..pos]);
                runtime.block_on(mock.on_line(&line, true));
                line.clear();
            }
            chunk = &chunk[pos + 1..];
        }
        line.extend_from_slice(chunk);
    }
    if !line.is_empty() {
        runtime.block_on(mock.on_line(&line, false));
    }
    mock.stdin_gone();
    mock.saw_eof();
    StdinEnded::Eof
}

/// After `stop_reading`: one read, to learn that the client wrote (or closed stdin) for
/// `expect_write`; what it returned stays unread and nothing more is read, so the client's
/// writes block once the pipe is full.
fn leave_unread(mock: &Mock, mut reader: input::LineReader, buf: &mut [u8]) -> StdinEnded {
    match reader.read(buf) {
        input::Read::Closing => StdinEnded::Closed,
        input::Read::Data(_) | input::Read::Eof => {
            mock.saw_unread_write();
            park()
        }
    }
}

/// The reader thread, done reading for good, waits for the process to end.
fn park() -> ! {
    loop {
        std::thread::park();
    }
}

async fn watch_shutdown(mock: Arc<Mock>, mut shutdown: Shutdown) {
    loop {
        match shutdown.next().await {
            Stop::Deadline => return mock.exit(124, None, "deadline"),
            Stop::Signal(sig) => {
                let ignored = sig == nix::sys::signal::Signal::SIGTERM && mock.ignore_sigterm.load(Ordering::SeqCst);
                mock.recorder.record(&WireEvent::Signal {
                    t_us: mock.recorder.now_us(),
                    name: sig.as_str().into(),
                    ignored,
                });
                if !ignored {
                    return mock.exit(128 + sig as i32, None, sig.as_str());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::line_end;

    #[test]
    fn a_line_ends_at_its_first_newline_or_not_in_this_chunk() {
        let chunks: [&[u8]; 7] = [b"", b"\n", b"abc", b"abc\n", b"a\nb\n", b"\r\n\n", &[b'x'; 100]];
        for chunk in chunks {
            assert_eq!(line_end(chunk), chunk.iter().position(|b| *b == b'\n'), "{chunk:?}");
        }
    }
}
