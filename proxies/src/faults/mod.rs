//! The faults, one module per `fault:` kind, each behind [`FaultOp`]. The proxy asks every
//! fault whose `only:` matches a request what it does at each point of the exchange: the
//! request head, how often a 502 is retried, whether the answer is withheld, the delay
//! before the response head, the response head, and a body stage between two channels.
//! A fault that does nothing at a point keeps the trait's default.

mod bandwidth;
mod buffer_sse;
mod coalesce;
mod cut;
mod latency;
mod rechunk;
mod reset;
mod retry_on_502;
mod set_header;
mod slow_close;
mod stall;
mod strip_header;

use crate::piece::{Input, Output, forward};
use futures::future::BoxFuture;
use http::HeaderMap;
use mcp_scenario::via::{Fault, Only, Side};
use std::sync::Arc;
use std::time::Duration;

/// What one fault does to an exchange.
pub trait FaultOp: Send + Sync {
    /// Edits the headers of one side of the exchange before they go on: the request's
    /// before they are forwarded, the response's before the client sees them.
    fn headers(&self, side: Side, headers: &mut HeaderMap) {
        let _ = (side, headers);
    }

    /// How many times in all the request is sent while the upstream answers 502 (1: once).
    fn tries_on_502(&self) -> u32 {
        1
    }

    /// Forward the request but never answer it.
    fn stalls(&self) -> bool {
        false
    }

    /// Reset the client's connection instead of sending the response head.
    fn resets_before_head(&self) -> bool {
        false
    }

    /// How long the response head is held.
    fn head_delay(&self) -> Duration {
        Duration::ZERO
    }

    /// The body stage: reads the pieces the stage before wrote, writes its own. `sse`: the
    /// response is `text/event-stream`. Default: pass everything on.
    fn body(self: Arc<Self>, input: Input, output: Output, sse: bool) -> BoxFuture<'static, ()> {
        let _ = sse;
        Box::pin(forward(input, output))
    }
}

/// A fault ready to run: what it does, and which requests it applies to.
#[derive(Clone)]
pub struct Active {
    /// The filter.
    pub only: Only,
    /// The behaviour.
    pub op: Arc<dyn FaultOp>,
}

impl Active {
    /// Whether the fault applies to a request with this HTTP method and JSON-RPC method.
    pub fn applies(&self, http_method: &str, method: Option<&str>) -> bool {
        self.only.http_method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(http_method))
            && self.only.method.as_deref().is_none_or(|m| Some(m) == method)
    }
}

/// The behaviour of a scenario's fault.
pub fn build(fault: &Fault) -> Active {
    let op: Arc<dyn FaultOp> = match fault.clone() {
        Fault::Latency { ms, jitter_ms, .. } => Arc::new(latency::Latency { ms, jitter_ms }),
        Fault::Bandwidth { bytes_per_second, .. } => Arc::new(bandwidth::Bandwidth { bytes_per_second }),
        Fault::Rechunk { bytes, delay_ms, .. } => Arc::new(rechunk::Rechunk { bytes, delay_ms }),
        Fault::Coalesce { window_ms, .. } => Arc::new(coalesce::Coalesce { window_ms }),
        Fault::Cut { after_bytes, after_events, .. } => Arc::new(cut::Cut { after_bytes, after_events }),
        Fault::Reset { after_bytes, .. } => Arc::new(reset::Reset { after_bytes }),
        Fault::SlowClose { ms, .. } => Arc::new(slow_close::SlowClose { ms }),
        Fault::Stall { .. } => Arc::new(stall::Stall),
        Fault::StripHeader { header, side, .. } => Arc::new(strip_header::StripHeader { header, side }),
        Fault::SetHeader { header, value, side, .. } => Arc::new(set_header::SetHeader { header, value, side }),
        Fault::RetryOn502 { tries, .. } => Arc::new(retry_on_502::RetryOn502 { tries }),
        Fault::BufferSse { .. } => Arc::new(buffer_sse::BufferSse),
    };
    Active { only: fault.only().clone(), op }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::piece::{Piece, link};
    use bytes::Bytes;

    /// Runs `fault`'s body stage over `pieces`; returns what it wrote.
    pub(super) async fn run_body(fault: &str, pieces: Vec<Piece>, sse: bool) -> Vec<Piece> {
        let fault: Fault = serde_json::from_str(fault).expect("a fault");
        let active = build(&fault);
        let (tx, rx) = link();
        let (out_tx, mut out_rx) = link();
        let stage = tokio::spawn(active.op.body(rx, out_tx, sse));
        for p in pieces {
            tx.send(p).await.expect("stage reads");
        }
        drop(tx);
        let mut got = Vec::new();
        while let Some(p) = out_rx.recv().await {
            got.push(p);
        }
        stage.await.expect("stage ends");
        got
    }

    pub(super) fn data(s: &str) -> Piece {
        Piece::Data(Bytes::copy_from_slice(s.as_bytes()))
    }

    #[test]
    fn only_filters_by_both_methods() {
        let fault: Fault =
            serde_json::from_str(r#"{"fault": "stall", "only": {"method": "tools/call", "http_method": "post"}}"#)
                .expect("a fault");
        let a = build(&fault);
        assert!(a.applies("POST", Some("tools/call")));
        assert!(!a.applies("POST", Some("tools/list")));
        assert!(!a.applies("GET", Some("tools/call")));
    }
}
