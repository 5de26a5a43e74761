//! `bandwidth`: the body is forwarded at no more than `bytes_per_second`, in writes of a
//! twentieth of a second's worth, each followed by the time it takes at that rate.

use super::FaultOp;
use crate::piece::{Input, Output, Piece, next_data};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;

pub(super) struct Bandwidth {
    pub bytes_per_second: u64,
}

impl FaultOp for Bandwidth {
    fn body(self: Arc<Self>, mut input: Input, output: Output, _sse: bool) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let slice = (self.bytes_per_second / 20).max(1) as usize;
            while let Some(bytes) = next_data(&mut input, &output).await {
                for start in (0..bytes.len()).step_by(slice) {
                    let part = bytes.slice(start..(start + slice).min(bytes.len()));
                    let took = Duration::from_secs_f64(part.len() as f64 / self.bytes_per_second as f64);
                    if output.send(Piece::Data(part)).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(took).await;
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{data, run_body};

    #[tokio::test]
    async fn splits_into_a_twentieth_of_a_second() {
        let got =
            run_body(r#"{"fault": "bandwidth", "bytes_per_second": 2000}"#, vec![data(&"x".repeat(250))], false).await;
        assert_eq!(got, vec![data(&"x".repeat(100)), data(&"x".repeat(100)), data(&"x".repeat(50))]);
    }
}
