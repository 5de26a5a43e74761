//! [`Input`]: the mock's stdin, read by a thread of its own in blocking reads
//! ([`LineReader`]), and how `close_stdin` gets that thread out of a read it is blocked in
//! ([`Interrupt`]).
//!
//! Why a thread and blocking reads: read through the reactor, a line the client has not
//! written yet when the mock looks costs an empty `read`, then an `epoll_wait`, then the
//! `read` that finds it, and every line goes through tokio's task and I/O machinery; a
//! blocking server waits in the one `read` that returns the line. Between a client and its
//! server that was what kept the mock below the recording floor (`make bench`, "recording
//! floor"; BENCHMARKS.md). The thread answers what it can at once itself (`Mock::on_line`).
//!
//! Why the interrupt is not a signal: a handler that makes a blocked `read` return `EINTR`
//! needs `sigaction` without `SA_RESTART`, which is `unsafe` (the workspace denies it), and
//! the process's signal handlers (tokio's) restart reads. Instead a pipe is woken by a byte
//! written through a write end of its own (`/proc/self/fd/N` reopened for writing), a socket
//! by shutting its reading half, an in-memory pipe by a [`Notify`]; the thread sees the close
//! requested before it looks at what its read returned, and drops stdin.

use std::fs::File;
use std::io::{self, Read as _};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::runtime::Handle;
use tokio::sync::Notify;

/// Where the stdio mock reads its client from.
pub enum Input {
    /// A pipe, blocking (the usual case).
    Pipe(File),
    /// A Unix socket, blocking (Node's child processes get socket pairs).
    Socket(UnixStream),
    /// Anything else: a terminal or a file (tokio's own stdin), an in-memory pipe in tests;
    /// read through the runtime from the reader thread.
    Other(Box<dyn AsyncRead + Send + Unpin>),
}

/// What a read from the client gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// This many bytes.
    Data(usize),
    /// The client closed its end (or the read failed: nothing more will come).
    Eof,
    /// `close_stdin` asked for stdin to be dropped: whatever the read returned is left
    /// unread, as it would have been in the pipe.
    Closing,
}

/// The reading side of [`Input`], for the reader thread.
pub struct LineReader {
    source: Input,
    closing: Arc<AtomicBool>,
    woken: Arc<Notify>,
    runtime: Handle,
}

/// Gets the reader thread out of its read for good (see the module docs).
pub struct Interrupt {
    closing: Arc<AtomicBool>,
    wake: Wake,
}

enum Wake {
    /// A descriptor of the pipe's read end, kept open until the wake-up is written so that
    /// its number names the pipe (and nothing else) when it is reopened for writing.
    Pipe(Option<OwnedFd>),
    /// The socket itself (another descriptor of it).
    Socket(Option<UnixStream>),
    /// An in-memory pipe's read waits on this too.
    Other(Arc<Notify>),
}

impl Input {
    /// Splits stdin into the reader thread's side and the interrupt `close_stdin` uses;
    /// `runtime` runs what the thread cannot do blocking (an in-memory pipe's reads).
    pub fn into_reader(self, runtime: Handle) -> (LineReader, Interrupt) {
        let closing = Arc::new(AtomicBool::new(false));
        let woken = Arc::new(Notify::new());
        // Without a second descriptor the interrupt cannot wake a blocked read: `close_stdin`
        // then completes when the client next writes or closes.
        let wake = match &self {
            Input::Pipe(file) => Wake::Pipe(file.try_clone().ok().map(OwnedFd::from)),
            Input::Socket(socket) => Wake::Socket(socket.try_clone().ok()),
            Input::Other(_) => Wake::Other(woken.clone()),
        };
        let reader = LineReader { source: self, closing: closing.clone(), woken, runtime };
        (reader, Interrupt { closing, wake })
    }
}

impl LineReader {
    /// Reads what is there into `buf`, blocking until something is; retried when a signal
    /// interrupts it.
    pub fn read(&mut self, buf: &mut [u8]) -> Read {
        loop {
            let read = match &mut self.source {
                Input::Pipe(pipe) => pipe.read(buf),
                Input::Socket(socket) => socket.read(buf),
                Input::Other(other) => {
                    let woken = &self.woken;
                    self.runtime.block_on(async {
                        tokio::select! {
                            biased;
                            () = woken.notified() => Err(io::ErrorKind::Interrupted.into()),
                            read = other.read(buf) => read,
                        }
                    })
                }
            };
            if self.closing.load(Ordering::SeqCst) {
                return Read::Closing;
            }
            match read {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(0) | Err(_) => return Read::Eof,
                Ok(n) => return Read::Data(n),
            }
        }
    }
}

impl Interrupt {
    /// Asks the reader thread to drop stdin and wakes it if it is blocked in a read. The
    /// client's pipe closes once the thread has dropped its descriptor and this is dropped.
    pub fn interrupt(self) {
        self.closing.store(true, Ordering::SeqCst);
        match self.wake {
            Wake::Pipe(Some(read_end)) => {
                // Non-blocking: a full pipe needs no wake-up, the thread is not waiting.
                use std::io::Write;
                use std::os::unix::fs::OpenOptionsExt;
                let path = format!("/proc/self/fd/{}", read_end.as_raw_fd());
                let opened = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
                    .open(&path);
                match opened {
                    Ok(mut write_end) => {
                        let _ = write_end.write(&[0]);
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot wake the stdin reader; it stops at its next read"),
                }
            }
            Wake::Socket(Some(socket)) => {
                let _ = socket.shutdown(std::net::Shutdown::Read);
            }
            Wake::Other(woken) => woken.notify_one(),
            Wake::Pipe(None) | Wake::Socket(None) => {}
        }
    }
}
