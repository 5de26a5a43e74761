//! `reset`: the client's connection is reset (TCP RST) after `after_bytes` body bytes, or
//! instead of the response head when `after_bytes` is 0.

use super::FaultOp;
use crate::piece::{Input, Output, Piece, bytes_then};
use futures::future::BoxFuture;
use std::sync::Arc;

pub(super) struct Reset {
    pub after_bytes: usize,
}

impl FaultOp for Reset {
    fn resets_before_head(&self) -> bool {
        self.after_bytes == 0
    }

    fn body(self: Arc<Self>, input: Input, output: Output, _sse: bool) -> BoxFuture<'static, ()> {
        Box::pin(bytes_then(input, output, self.after_bytes, Piece::Reset))
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
