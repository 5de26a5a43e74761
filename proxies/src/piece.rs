//! The response body as the fault proxy moves it: [`Piece`]s through a chain of stages,
//! each a task between two channels. A closed channel is a clean end; [`Piece::Cut`] and
//! [`Piece::Reset`] end it abruptly.

use bytes::Bytes;
use tokio::sync::mpsc::{Receiver, Sender, channel};

/// One thing a body stage passes on.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Bytes, as one write.
    Data(Bytes),
    /// End the response abruptly: the connection closes without the final chunk.
    Cut,
    /// Reset the client's connection (TCP RST).
    Reset,
}

/// How many pieces a stage may queue ahead of the next one.
pub const DEPTH: usize = 64;

/// A stage's input.
pub type Input = Receiver<Piece>;
/// A stage's output.
pub type Output = Sender<Piece>;

/// A new link between two stages.
pub fn link() -> (Output, Input) {
    channel(DEPTH)
}

/// Passes everything on unchanged until the input ends (a stage with nothing to do).
pub async fn forward(mut input: Input, output: Output) {
    while let Some(p) = input.recv().await {
        let last = !matches!(p, Piece::Data(_));
        if output.send(p).await.is_err() || last {
            return;
        }
    }
}

/// The next body bytes a stage reads, or `None` once the body has ended: cleanly (the input
/// closed) or abruptly (a [`Piece::Cut`] or [`Piece::Reset`], which this passes on first), so
/// a stage that works on bytes stops where the body does.
pub async fn next_data(input: &mut Input, output: &Output) -> Option<Bytes> {
    match input.recv().await? {
        Piece::Data(bytes) => Some(bytes),
        end => {
            let _ = output.send(end).await;
            None
        }
    }
}

/// Passes on the first `limit` body bytes, then `end` (a cut or a reset) and stops.
pub async fn bytes_then(mut input: Input, output: Output, limit: usize, end: Piece) {
    let mut sent = 0usize;
    while let Some(bytes) = next_data(&mut input, &output).await {
        if sent + bytes.len() >= limit {
            let keep = limit - sent;
            if keep > 0 && output.send(Piece::Data(bytes.slice(..keep))).await.is_err() {
                return;
            }
            let _ = output.send(end).await;
            return;
        }
        sent += bytes.len();
        if output.send(Piece::Data(bytes)).await.is_err() {
            return;
        }
    }
}

/// Counts SSE event ends (a blank line after LF, CRLF or CR line ends) across pieces, so a
/// fault can stop right after the K-th event.
#[derive(Debug, Clone)]
pub struct EventEnds {
    at_line_start: bool,
    after_cr: bool,
}

impl Default for EventEnds {
    fn default() -> Self {
        EventEnds { at_line_start: true, after_cr: false }
    }
}

impl EventEnds {
    /// Feeds `bytes`; returns the offsets just past each event end they contain.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<usize> {
        let mut ends = Vec::new();
        for (i, &b) in bytes.iter().enumerate() {
            if self.after_cr && b == b'\n' {
                self.after_cr = false;
                // The LF of a CRLF whose CR ended the event belongs to that event.
                if let Some(last) = ends.last_mut().filter(|e| **e == i) {
                    *last = i + 1;
                }
                continue;
            }
            self.after_cr = b == b'\r';
            if b == b'\n' || b == b'\r' {
                if self.at_line_start {
                    ends.push(i + 1);
                }
                self.at_line_start = true;
            } else {
                self.at_line_start = false;
            }
        }
        ends
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ends_across_pieces_and_line_endings() {
        let mut e = EventEnds::default();
        assert_eq!(e.feed(b": keep-alive\n\ndata: {}\n"), vec![14]);
        assert_eq!(e.feed(b"\n"), vec![1]);
        let mut crlf = EventEnds::default();
        assert_eq!(crlf.feed(b"data: x\r\n\r\n"), vec![11]);
        let mut cr = EventEnds::default();
        assert_eq!(cr.feed(b"data: x\r\rdata: y\r\r"), vec![9, 18]);
    }
}
