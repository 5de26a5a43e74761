//! `expect_delete` (HTTP): wait for the client's DELETE (session end) and answer it, or
//! leave it hanging.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{self, Problem, Validation};
use crate::http::conn::DELETE;
use crate::http::run::HttpRun;
use bytes::Bytes;
use futures::future::BoxFuture;
use mcp_scenario::script::step;

impl Op for step::ExpectDelete {
    fn about(&self) -> About {
        // A DELETE answered with anything but 200, or never answered, is the fault.
        let fault = if self.status != 200 || self.hang { Fault::InAnswer } else { Fault::None };
        let explain = if self.hang {
            "waits for the client's DELETE (session end) and never answers it".into()
        } else {
            format!("waits for the client's DELETE (session end) and answers {}", self.status)
        };
        About::new(Transports::HTTP, fault, explain)
    }

    fn validate(&self, _cx: &mut Validation<'_>) -> Result<(), Problem> {
        rules::status(self.status)
    }

    fn consumes(&self) -> Vec<&str> {
        vec![DELETE]
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let i = run.consume(DELETE, None, false).await;
            if self.hang {
                return run.note("expect_delete: the DELETE is left unanswered (hang)");
            }
            let n = run.n();
            let held = &mut run.held[i];
            if let Some(tx) = held.inbound.reply.take() {
                let exchange = held.inbound.exchange;
                let allow = run.shared.with_allow(self.status, &http::Method::DELETE, Vec::new());
                tx.send(run.shared.respond(n, exchange, self.status, &allow, Bytes::new(), "expect_delete"));
            }
            if (200..300).contains(&self.status) {
                run.shared.expire_session(&run.conn, None);
            }
        })
    }
}
