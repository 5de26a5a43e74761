//! The raw-socket path: what hyper cannot produce. Every accepted TCP stream is wrapped in
//! [`FaultIo`], which passes bytes through untouched until the script asks for a fault:
//!
//! - **reset**: when the connection closes, SO_LINGER 0 turns the close into a TCP RST;
//! - **raw response**: the next response hyper writes is swallowed and replaced by scripted
//!   bytes (bad status line, broken chunking, wrong Content-Length…), written in chunks with
//!   delays, after which the connection is closed, reset or left stalled.
//!
//! Hyper stays in charge of parsing requests; the wrapper only ever replaces output.

use bytes::{Buf, Bytes};
use mcp_scenario::script::SocketEnd;
use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

/// Bytes to write instead of the next response, and what to do afterwards.
pub struct RawPlan {
    /// The pieces, written in order.
    pub pieces: VecDeque<Bytes>,
    /// The pause between pieces.
    pub delay: Duration,
    /// What happens to the connection after the last piece.
    pub then: SocketEnd,
}

/// The script's handle on one TCP connection.
#[derive(Default)]
pub struct SocketControl {
    reset: AtomicBool,
    armed: AtomicBool,
    raw: Mutex<Option<RawPlan>>,
}

impl SocketControl {
    /// When the connection closes, send a TCP RST instead of a FIN.
    pub fn reset_on_close(&self) {
        self.reset.store(true, Ordering::SeqCst);
    }

    /// Replace the next response hyper writes with `plan`.
    pub fn arm(&self, plan: RawPlan) {
        *self.raw.lock().unwrap_or_else(|e| e.into_inner()) = Some(plan);
        self.armed.store(true, Ordering::SeqCst);
    }

    fn take(&self) -> Option<RawPlan> {
        self.armed.store(false, Ordering::SeqCst);
        self.raw.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

struct RawState {
    plan: RawPlan,
    sleep: Option<Pin<Box<Sleep>>>,
}

/// A TCP stream that can be told to misbehave (see the module docs).
pub struct FaultIo {
    inner: TcpStream,
    control: std::sync::Arc<SocketControl>,
    raw: Option<RawState>,
}

impl FaultIo {
    /// Wraps an accepted stream.
    pub fn new(inner: TcpStream, control: std::sync::Arc<SocketControl>) -> Self {
        FaultIo { inner, control, raw: None }
    }
}

impl Drop for FaultIo {
    fn drop(&mut self) {
        if self.control.reset.load(Ordering::SeqCst) {
            // SO_LINGER 0: the kernel answers the close with RST and drops unsent data.
            if let Err(e) = self.inner.set_zero_linger() {
                tracing::warn!(error = %e, "cannot set SO_LINGER 0; the connection closes with FIN");
            }
        }
    }
}

impl AsyncRead for FaultIo {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for FaultIo {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.raw.is_none() && this.control.armed.load(Ordering::Acquire) {
            this.raw = this.control.take().map(|plan| RawState { plan, sleep: None });
        }
        let Some(raw) = this.raw.as_mut() else {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        };
        loop {
            if let Some(sleep) = raw.sleep.as_mut() {
                ready!(sleep.as_mut().poll(cx));
                raw.sleep = None;
            }
            let Some(front) = raw.plan.pieces.front_mut() else { break };
            let n = ready!(Pin::new(&mut this.inner).poll_write(cx, front))?;
            front.advance(n);
            if front.is_empty() {
                raw.plan.pieces.pop_front();
                if !raw.plan.pieces.is_empty() && !raw.plan.delay.is_zero() {
                    raw.sleep = Some(Box::pin(tokio::time::sleep(raw.plan.delay)));
                }
            }
        }
        match raw.plan.then {
            // An error makes hyper drop the connection: FIN, or RST when reset is set.
            SocketEnd::Close => Poll::Ready(Err(io::Error::other("raw response written; closing"))),
            SocketEnd::Reset => {
                this.control.reset_on_close();
                Poll::Ready(Err(io::Error::other("raw response written; resetting")))
            }
            // Never complete: hyper waits forever, the socket stays open and silent.
            SocketEnd::Stall => Poll::Pending,
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.raw.is_some() {
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
