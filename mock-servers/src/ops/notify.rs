//! `notify`: send a notification (on stdout, or on the current stream over HTTP).

use super::op::{About, Fault, Op};
use super::rules::{Problem, Validation};
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::placeholder::{self, Missing};
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;
use mcp_scenario::payload;
use mcp_scenario::script::{LineEnd, step};
use serde_json::Value;

/// The notification, placeholders in its params replaced for `request`.
fn message(step: &step::Notify, request: Option<&Value>) -> Result<Value, Missing> {
    let params = step.params.as_ref().map(|p| placeholder::json(p, request)).transpose()?;
    Ok(payload::notification(&step.method, params.as_ref()))
}

impl Op for step::Notify {
    fn about(&self) -> About {
        About::new(Transports::ALL, Fault::None, format!("sends the notification `{}`", self.method))
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.placeholders("params", self.params.as_ref().is_some_and(placeholder::in_json))
    }

    fn ends_in_output(&self) -> bool {
        true
    }

    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            match message(self, run.latest.as_ref()) {
                Ok(message) => run.mock.write(&payload::line(&message, LineEnd::Lf), "notify").await,
                Err(e) => run.note(&format!("notify {}: {e}; nothing sent", self.method)),
            }
        })
    }

    fn run_http<'a>(&'a self, run: &'a mut HttpRun, _next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            match message(self, run.latest_request()) {
                Ok(message) => run.send_message(None, &message, "notify"),
                Err(e) => run.note(format!("notify {}: {e}; nothing sent", self.method)),
            }
        })
    }
}
