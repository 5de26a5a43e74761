//! `slow_close`: when the upstream ends the response cleanly, its end reaches the client
//! `ms` later (the last bytes are there; the stream is still open).

use super::FaultOp;
use crate::piece::{Input, Output, Piece};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;

pub(super) struct SlowClose {
    pub ms: u64,
}

impl FaultOp for SlowClose {
    fn body(self: Arc<Self>, mut input: Input, output: Output, _sse: bool) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            while let Some(p) = input.recv().await {
                let last = !matches!(p, Piece::Data(_));
                if output.send(p).await.is_err() || last {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(self.ms)).await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{data, run_body};

    #[tokio::test]
    async fn the_end_comes_later() {
        // A lower bound only: the end cannot come before the hold.
        let start = std::time::Instant::now();
        let got = run_body(r#"{"fault": "slow_close", "ms": 30}"#, vec![data("a")], false).await;
        assert_eq!(got, vec![data("a")]);
        assert!(start.elapsed() >= std::time::Duration::from_millis(30));
    }
}
