//! `raw_response` (HTTP): answer the expected request with raw bytes on the socket instead
//! of a well-formed response, written in chunks, then close, reset or stall the connection.

use super::op::{About, Fault, Op, answers_to};
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::body::MockBody;
use crate::http::raw::RawPlan;
use crate::http::run::HttpRun;
use crate::placeholder;
use bytes::Bytes;
use futures::future::BoxFuture;
use mcp_scenario::script::{SocketEnd, step};
use mcp_scenario::wire::{Recorded, WireEvent};
use std::collections::VecDeque;
use std::time::Duration;

impl Op for step::RawResponse {
    fn about(&self) -> About {
        let then = match self.then {
            mcp_scenario::script::SocketEnd::Close => "closes the socket",
            mcp_scenario::script::SocketEnd::Reset => "resets the connection",
            mcp_scenario::script::SocketEnd::Stall => "goes silent",
        };
        let explain = format!("answers {} with raw bytes instead of a well-formed HTTP response, then {then}", super::op::to_words(self.to.as_deref()));
        About::new(Transports::HTTP, Fault::Here, explain)
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.expected(self.to.as_deref())?;
        let payload = self.payload()?;
        payload.bytes()?;
        cx.placeholders(placeholder::field_of(payload), placeholder::in_payload(payload))
    }

    fn answers(&self, label: Option<&str>) -> bool {
        answers_to(self.to.as_deref(), label)
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some((i, tx)) = run.take_reply("raw_response", self.to.as_deref()) else { return };
            let request = &run.held[i].inbound.message;
            let bytes = match self.payload() {
                Ok(p) => placeholder::bytes(p, Some(request)).unwrap_or_else(|e| {
                    run.note(format!("raw_response: {e}; written without it"));
                    p.bytes().unwrap_or_default()
                }),
                Err(_) => Vec::new(),
            };
            let (pieces, rest) = self.chunking().split(&bytes);
            let mut pieces: VecDeque<Bytes> = pieces.into_iter().map(Bytes::copy_from_slice).collect();
            if !rest.is_empty() {
                pieces.push_back(Bytes::copy_from_slice(rest));
            }
            let exchange = run.held[i].inbound.exchange;
            let t_us = run.shared.journal.now_us();
            run.record(&WireEvent::StreamWrite {
                t_us,
                exchange,
                bytes: Recorded::of(&bytes),
                why: "raw_response".into(),
            });
            let how = match self.then {
                SocketEnd::Close => "raw: close",
                SocketEnd::Reset => "raw: reset",
                SocketEnd::Stall => "raw: stall",
            };
            run.record(&WireEvent::StreamEnd { t_us: run.shared.journal.now_us(), exchange, how: how.into() });
            let delay = Duration::from_millis(self.chunk_delay_ms);
            run.held[i].inbound.socket.arm(RawPlan { pieces, delay, then: self.then });
            // Hyper writes this placeholder; the socket wrapper swallows it.
            tx.send(http::Response::new(MockBody::empty()));
        })
    }
}
