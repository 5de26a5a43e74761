//! `reply_always`: a standing rule (for benchmarks and noise): every later request with the
//! method that no `expect` consumes is answered at once, on every transport (before the
//! defaults of `ping` and `tools/list`, and instead of `-32601`).

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{self, Problem, Validation};
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::script::step;
use serde_json::json;

impl Op for step::ReplyAlways {
    fn about(&self) -> About {
        let explain = match &self.error {
            Some(e) => format!("from now on answers every unscripted `{}` with the error {}", self.method, super::op::short(e)),
            None => format!("from now on answers every unscripted `{}` at once", self.method),
        };
        About::new(Transports::ALL.standing_rule(), Fault::None, explain)
    }

    fn validate(&self, _cx: &mut Validation<'_>) -> Result<(), Problem> {
        rules::one_of(("result", &self.result), ("error", &self.error))
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        run.mock.add_rule(&self.method, answer(self));
        Box::pin(async {})
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        run.shared.add_rule(&self.method, &answer(self));
        Box::pin(async {})
    }
}

/// The standing answer: `{"error": …}`, else `{"result": …}` (default `{}`).
fn answer(rule: &step::ReplyAlways) -> serde_json::Value {
    match &rule.error {
        Some(e) => json!({"error": e}),
        None => json!({"result": rule.result.clone().unwrap_or_else(|| json!({}))}),
    }
}
