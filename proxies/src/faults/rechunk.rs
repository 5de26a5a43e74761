//! `rechunk`: every body piece is split into writes of at most `bytes`, `delay_ms` apart
//! (1 byte: the worst framing a client's SSE and JSON readers can meet).

use super::FaultOp;
use crate::piece::{Input, Output, Piece, next_data};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;

pub(super) struct Rechunk {
    pub bytes: usize,
    pub delay_ms: u64,
}

impl FaultOp for Rechunk {
    fn body(self: Arc<Self>, mut input: Input, output: Output, _sse: bool) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            while let Some(bytes) = next_data(&mut input, &output).await {
                for start in (0..bytes.len()).step_by(self.bytes.max(1)) {
                    let part = bytes.slice(start..(start + self.bytes).min(bytes.len()));
                    if output.send(Piece::Data(part)).await.is_err() {
                        return;
                    }
                    if self.delay_ms > 0 {
                        tokio::time::sleep(Duration::from_millis(self.delay_ms)).await;
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{data, run_body};
    use crate::piece::Piece;

    #[tokio::test]
    async fn one_byte_writes_then_the_cut_passes() {
        let got = run_body(r#"{"fault": "rechunk", "bytes": 1}"#, vec![data("ab"), data("c"), Piece::Cut], true).await;
        assert_eq!(got, vec![data("a"), data("b"), data("c"), Piece::Cut]);
    }
}
