//! `exit`: end the mock now, with a code or by a signal. The mock records its exit and
//! flushes; the process edge (`cli::run`) raises the signal or exits with the code.

use super::op::{About, Fault, Op};
use super::transports::Transports;
use super::rules::{Problem, Validation};
use crate::http::run::HttpRun;
use crate::shutdown::ExitReason;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::WireEvent;
use mcp_scenario::script::step;
use mcp_scenario::signals;

impl Op for step::Exit {
    fn about(&self) -> About {
        let explain = match (&self.signal, self.code) {
            (Some(sig), _) => format!("kills itself with {sig}"),
            (None, Some(code)) => format!("exits with code {code}"),
            (None, None) => "exits".into(),
        };
        About::new(Transports::ALL, Fault::Here, explain)
    }

    fn validate(&self, _cx: &mut Validation<'_>) -> Result<(), Problem> {
        let Some(sig) = &self.signal else { return Ok(()) };
        if self.code.is_some() {
            return Err(Problem::Both("code", "signal"));
        }
        if signals::by_name(sig).is_none() {
            return Err(Problem::field("signal", format!("unknown signal {sig:?} (e.g. SIGKILL, SIGTERM, SIGSEGV)")));
        }
        Ok(())
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            run.mock.set_finished(run.is_last());
            match self.signal.as_deref().and_then(signals::by_name) {
                // Exits 1 should the signal not end the process.
                Some(sig) => run.mock.exit(1, Some(sig), "script"),
                None => run.mock.exit(self.code.unwrap_or(0), None, "script"),
            }
            std::future::pending::<()>().await;
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            run.record(&WireEvent::Exit {
                t_us: run.shared.journal.now_us(),
                code: self.code,
                signal: self.signal.clone(),
                why: "script".into(),
            });
            let reason = match self.signal.as_deref().and_then(signals::by_name) {
                Some(sig) => ExitReason { code: 128 + sig as i32, signal: Some(sig), why: "script".into() },
                None => ExitReason::code(self.code.unwrap_or(0), "script"),
            };
            run.shared.end(reason);
            std::future::pending::<()>().await;
        })
    }
}
