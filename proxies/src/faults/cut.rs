//! `cut`: the response ends abruptly after `after_bytes` body bytes, or right after the
//! `after_events`-th complete SSE event (the bytes of the event after it never leave).

use super::FaultOp;
use crate::piece::{EventEnds, Input, Output, Piece, bytes_then, next_data};
use futures::future::BoxFuture;
use std::sync::Arc;

pub(super) struct Cut {
    pub after_bytes: Option<usize>,
    pub after_events: Option<usize>,
}

impl FaultOp for Cut {
    fn body(self: Arc<Self>, input: Input, output: Output, _sse: bool) -> BoxFuture<'static, ()> {
        match (self.after_bytes, self.after_events) {
            (Some(n), _) => Box::pin(bytes_then(input, output, n, Piece::Cut)),
            (None, Some(k)) => Box::pin(events_then_cut(input, output, k)),
            (None, None) => Box::pin(crate::piece::forward(input, output)),
        }
    }
}

/// Passes on the body up to the end of its `k`-th SSE event, then cuts.
async fn events_then_cut(mut input: Input, output: Output, k: usize) {
    if k == 0 {
        let _ = output.send(Piece::Cut).await;
        return;
    }
    let mut events = 0usize;
    let mut ends = EventEnds::default();
    while let Some(bytes) = next_data(&mut input, &output).await {
        let found = ends.feed(&bytes);
        if events + found.len() >= k {
            let at = found[k - events - 1];
            if at > 0 && output.send(Piece::Data(bytes.slice(..at))).await.is_err() {
                return;
            }
            let _ = output.send(Piece::Cut).await;
            return;
        }
        events += found.len();
        if output.send(Piece::Data(bytes)).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{data, run_body};
    use crate::piece::Piece;

    #[tokio::test]
    async fn cuts_after_bytes() {
        let got =
            run_body(r#"{"fault": "cut", "after_bytes": 3}"#, vec![data("ab"), data("cde"), data("f")], false).await;
        assert_eq!(got, vec![data("ab"), data("c"), Piece::Cut]);
    }

    #[tokio::test]
    async fn cuts_after_the_kth_event() {
        let stream = vec![data(": ka\n\ndata: 1\n"), data("\ndata: 2\n\n")];
        let got = run_body(r#"{"fault": "cut", "after_events": 2}"#, stream, true).await;
        assert_eq!(got, vec![data(": ka\n\ndata: 1\n"), data("\n"), Piece::Cut]);
    }
}
