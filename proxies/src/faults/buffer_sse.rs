//! `buffer_sse`: a `text/event-stream` body is held until the upstream ends it, then
//! forwarded in one write (a proxy that buffers responses: progress arrives with the
//! result, or after the client gave up). Other bodies pass as they come.

use super::FaultOp;
use crate::piece::{Input, Output, Piece, forward};
use bytes::{Bytes, BytesMut};
use futures::future::BoxFuture;
use std::sync::Arc;

pub(super) struct BufferSse;

impl FaultOp for BufferSse {
    fn body(self: Arc<Self>, mut input: Input, output: Output, sse: bool) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            if !sse {
                return forward(input, output).await;
            }
            let mut held = BytesMut::new();
            let mut end = None;
            while let Some(p) = input.recv().await {
                match p {
                    Piece::Data(b) => held.extend_from_slice(&b),
                    other => {
                        end = Some(other);
                        break;
                    }
                }
            }
            if !held.is_empty() && output.send(Piece::Data(Bytes::from(held))).await.is_err() {
                return;
            }
            if let Some(end) = end {
                let _ = output.send(end).await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{data, run_body};

    #[tokio::test]
    async fn sse_is_held_to_its_end_and_json_is_not() {
        let pieces = vec![data("data: 1\n\n"), data("data: 2\n\n")];
        assert_eq!(
            run_body(r#"{"fault": "buffer_sse"}"#, pieces.clone(), true).await,
            vec![data("data: 1\n\ndata: 2\n\n")]
        );
        assert_eq!(run_body(r#"{"fault": "buffer_sse"}"#, pieces.clone(), false).await, pieces);
    }
}
