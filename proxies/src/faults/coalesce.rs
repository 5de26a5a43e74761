//! `coalesce`: the pieces that arrive within `window_ms` of the first are merged into one
//! write (a proxy that batches small writes; several SSE events then share one read).

use super::FaultOp;
use crate::piece::{Input, Output, Piece, next_data};
use bytes::{Bytes, BytesMut};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;

pub(super) struct Coalesce {
    pub window_ms: u64,
}

impl FaultOp for Coalesce {
    fn body(self: Arc<Self>, mut input: Input, output: Output, _sse: bool) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            while let Some(first) = next_data(&mut input, &output).await {
                let mut merged = BytesMut::from(&first[..]);
                let until = tokio::time::Instant::now() + Duration::from_millis(self.window_ms);
                let mut after = None;
                loop {
                    match tokio::time::timeout_at(until, input.recv()).await {
                        Ok(Some(Piece::Data(more))) => merged.extend_from_slice(&more),
                        Ok(Some(end)) => {
                            after = Some(Some(end));
                            break;
                        }
                        Ok(None) => {
                            after = Some(None);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                if output.send(Piece::Data(Bytes::from(merged))).await.is_err() {
                    return;
                }
                match after {
                    Some(Some(end)) => {
                        let _ = output.send(end).await;
                        return;
                    }
                    Some(None) => return,
                    None => {}
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{data, run_body};

    #[tokio::test]
    async fn pieces_in_one_window_become_one_write() {
        let got =
            run_body(r#"{"fault": "coalesce", "window_ms": 100}"#, vec![data("a"), data("b"), data("c")], true).await;
        assert_eq!(got, vec![data("abc")]);
    }
}
