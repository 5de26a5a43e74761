//! Response bodies: a whole body at once, or a stream the script writes to piece by piece
//! and ends cleanly, mid-event, by TCP reset or by stalling.

use super::raw::SocketControl;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use mcp_scenario::script::StreamEnd;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use tokio::sync::{Notify, mpsc};

/// What the script sends down a stream.
pub enum Piece {
    /// Bytes to write.
    Data(Bytes),
    /// The end of the stream.
    End(StreamEnd),
}

/// Shared between a stream's body and the script's handle: whether the script ended it, and
/// what to record when the body goes away first (the client left).
pub struct StreamWatch {
    /// Set once the stream's end is claimed (by the script, the client leaving, or the stop).
    pub ended: AtomicBool,
    /// Set once that end is also recorded, so a stopping mock never flushes its record
    /// between the claim and the record (which lost "client went away" lines).
    settled: AtomicBool,
    settle: Notify,
    /// Records the client going away; called at most once.
    on_gone: Box<dyn Fn() + Send + Sync>,
}

impl StreamWatch {
    /// A watch that calls `on_gone` if the body is dropped before the script ends it.
    pub fn new(on_gone: impl Fn() + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(StreamWatch {
            ended: AtomicBool::new(false),
            settled: AtomicBool::new(false),
            settle: Notify::new(),
            on_gone: Box::new(on_gone),
        })
    }

    /// Marks the stream ended by the script (which records it); false when it had already
    /// ended.
    pub fn end(&self) -> bool {
        let first = !self.ended.swap(true, Ordering::SeqCst);
        if first {
            self.mark_settled();
        }
        first
    }

    fn mark_settled(&self) {
        self.settled.store(true, Ordering::SeqCst);
        self.settle.notify_waiters();
    }

    /// Waits until the stream's end has been claimed and recorded.
    pub async fn settled(&self) {
        loop {
            let notified = self.settle.notified();
            if self.settled.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

/// A response body.
pub enum MockBody {
    /// A complete body (sent with Content-Length); `None` once sent.
    Full(Option<Bytes>),
    /// A streamed body (chunked).
    Stream(StreamBody),
}

impl MockBody {
    /// A complete body.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        MockBody::Full(Some(bytes.into()))
    }

    /// An empty body.
    pub fn empty() -> Self {
        MockBody::Full(None)
    }
}

/// The receiving end of a scripted stream.
pub struct StreamBody {
    rx: mpsc::UnboundedReceiver<Piece>,
    socket: Arc<SocketControl>,
    watch: Arc<StreamWatch>,
    /// A fault held back one poll so hyper flushes the bytes before it (see `poll_frame`).
    pending: Option<StreamEnd>,
    wrote: bool,
    stalled: bool,
}

impl StreamBody {
    /// A stream body and the sender the script writes to.
    pub fn channel(socket: Arc<SocketControl>, watch: Arc<StreamWatch>) -> (mpsc::UnboundedSender<Piece>, Self) {
        let (tx, rx) = mpsc::unbounded_channel();
        (tx, StreamBody { rx, socket, watch, pending: None, wrote: false, stalled: false })
    }

    fn finish(&mut self, end: StreamEnd) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match end {
            StreamEnd::Clean => Poll::Ready(None),
            StreamEnd::MidEvent => Poll::Ready(Some(Err(io::Error::other("stream aborted mid-event")))),
            StreamEnd::Reset => {
                self.socket.reset_on_close();
                Poll::Ready(Some(Err(io::Error::other("stream reset"))))
            }
            StreamEnd::Stall => {
                self.stalled = true;
                Poll::Pending
            }
        }
    }
}

impl Drop for StreamBody {
    fn drop(&mut self) {
        if !self.watch.ended.swap(true, Ordering::SeqCst) {
            (self.watch.on_gone)();
            self.watch.mark_settled();
        }
    }
}

impl Body for MockBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let s = match self.get_mut() {
            MockBody::Full(bytes) => return Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            MockBody::Stream(s) => s,
        };
        if s.stalled {
            return Poll::Pending;
        }
        if let Some(end) = s.pending.take() {
            return s.finish(end);
        }
        match ready!(s.rx.poll_recv(cx)) {
            Some(Piece::Data(b)) => {
                s.wrote = true;
                Poll::Ready(Some(Ok(Frame::data(b))))
            }
            Some(Piece::End(end)) if s.wrote && end != StreamEnd::Clean => {
                // Hyper polls the body again before flushing; a fault returned now would
                // discard the bytes just written. Yield once so they reach the socket first.
                s.wrote = false;
                s.pending = Some(end);
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Some(Piece::End(end)) => s.finish(end),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, MockBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            MockBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            MockBody::Full(None) => SizeHint::with_exact(0),
            MockBody::Stream(_) => SizeHint::default(),
        }
    }
}
