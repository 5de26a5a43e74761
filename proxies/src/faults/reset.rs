//! `reset`: the client's connection is reset (TCP RST) after `after_bytes` body bytes, or
//! instead of the response head when `after_bytes` is 0.

use super::FaultOp;
use crate::piece::{Input, Output, Piece};
use futures::future::BoxFuture;
use std::sync::Arc;

pub(super) struct Reset {
    pub after_bytes: usize,
}

impl FaultOp for Reset {
    fn resets_before_head(&self) -> bool {
        self.after_bytes == 0
    }

    fn body(self: Arc<Self>, mut input: Input, output: Output, _sse: bool) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut sent = 0usize;
            while let Some(p) = input.recv().await {
                let Piece::Data(bytes) = p else {
                    let _ = output.send(p).await;
                    return;
                };
                if sent + bytes.len() >= self.after_bytes {
                    let keep = self.after_bytes - sent;
                    if keep > 0 && output.send(Piece::Data(bytes.slice(..keep))).await.is_err() {
                        return;
                    }
                    let _ = output.send(Piece::Reset).await;
                    return;
                }
                sent += bytes.len();
                if output.send(Piece::Data(bytes)).await.is_err() {
                    return;
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
    async fn resets_after_bytes() {
        let got = run_body(r#"{"fault": "reset", "after_bytes": 2}"#, vec![data("abc")], false).await;
        assert_eq!(got, vec![data("ab"), Piece::Reset]);
    }
}
