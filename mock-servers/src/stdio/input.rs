//! [`Input`]: the mock's stdin, read until it is drained before the reactor is asked again.
//!
//! Why not `AsyncRead`: tokio's `poll_read` on a pipe or a socket forgets the descriptor's
//! readiness after any short read, so every next read first waits in the reactor
//! (`epoll_wait`), one system call more per line than a blocking server makes. Between a
//! client and its server that is a round trip's worth: by the time the mock's answer is
//! written, a client sharing the CPU has usually written its next line (it ran as soon as
//! the answer woke it), so that line is read at once. Readiness is forgotten only when a
//! read finds the pipe empty, the usual edge-triggered discipline; a client that has not
//! written yet costs one empty read before the wait. (`make bench`: "recording floor".)

use std::io;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Where the stdio mock reads its client from.
pub enum Input {
    /// A pipe, read through the reactor (the usual case).
    Pipe(tokio::net::unix::pipe::Receiver),
    /// A Unix socket, read through the reactor (Node's child processes get socket pairs).
    Socket(tokio::net::UnixStream),
    /// Anything else: a terminal or a file (tokio's own stdin), an in-memory pipe in tests.
    Other(Box<dyn AsyncRead + Send + Unpin>),
}

impl Input {
    /// Reads what is there into `buf` (waiting until something is); `Ok(0)` at EOF.
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Pipe(pipe) => loop {
                match pipe.try_read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => pipe.readable().await?,
                    read => return read,
                }
            },
            Input::Socket(socket) => loop {
                match socket.try_read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => socket.readable().await?,
                    read => return read,
                }
            },
            Input::Other(other) => other.read(buf).await,
        }
    }
}
