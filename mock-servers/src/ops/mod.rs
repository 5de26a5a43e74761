//! The server ops, one module each. Every op implements the one trait [`Op`]: how it is
//! validated at load time, which transports it applies to, which client messages it
//! consumes, how messages describe it, and how it runs on the stdio and HTTP engines. The
//! serde enum [`ServerStep`] only says which op a step is; [`op`] is the only dispatch list.
//!
//! # Adding an op
//!
//! 1. `scenario-model/src/script.rs`: one variant line in [`ServerStep`] (its doc comment is
//!    the schema's description) and its data struct in `script::step` (fields, serde
//!    attributes, field docs; an op without fields also gets a line in `no_fields!` there,
//!    so it refuses unknown fields by name).
//! 2. `mock-servers/src/ops/<op>.rs`: `impl Op for step::<Op>` — at least [`Op::about`]
//!    (its transports, its fault and its words, in one [`About`]) and the `run_*` methods
//!    of the transports it applies to; the other methods have defaults.
//! 3. One line `<Variant> => <op>,` in the `ops!` list below (the module name is the `op:`
//!    name, which a test checks against serde's).
//! 4. `scenarios/README.md` (the op tables), and `scenarios/schema.json` regenerated
//!    (`cargo run -p mcp-harness -- schema > scenarios/schema.json`).
//!
//! Nothing else: validation, the engines, the message budgets and the harness's
//! descriptions all go through the trait. If an op needs more, the trait is missing a
//! method: add it in [`op`](self::op::Op), once.
//!
//! # Layout
//!
//! - `op` — the [`Op`] trait.
//! - `transports` — [`Transports`], the transports an op applies to.
//! - `rules` — the load-time [`Validation`] context and [`Problem`].
//! - one module per op, named as scenarios write it (`handshake`, `expect`, …).

mod op;
mod rules;
mod transports;

pub use op::{About, Fault, Op, answers_to};
pub use rules::{Problem, Validation};
pub use transports::Transports;

use crate::budget::Budget;
use mcp_scenario::load::Locator;
use mcp_scenario::{Scenario, ScenarioError, ServerStep, TransportName};

/// Declares the op modules and the one dispatch list: a step's `&dyn Op` and its name.
macro_rules! ops {
    ($($variant:ident => $module:ident,)*) => {
        $(mod $module;)*

        /// The op behind a step.
        pub fn op(step: &ServerStep) -> &dyn Op {
            match step {
                $(ServerStep::$variant(s) => s,)*
            }
        }

        /// The step's `op:` name, as scenarios write it.
        pub fn name(step: &ServerStep) -> &'static str {
            match step {
                $(ServerStep::$variant(_) => stringify!($module),)*
            }
        }
    };
}

ops! {
    Handshake => handshake,
    Expect => expect,
    Reply => reply,
    Send => send,
    Notify => notify,
    Request => request,
    ExpectResponse => expect_response,
    Stderr => stderr,
    Delay => delay,
    Stall => stall,
    StopReading => stop_reading,
    ExpectWrite => expect_write,
    CloseStdin => close_stdin,
    IgnoreSigterm => ignore_sigterm,
    IgnoreStdinEof => ignore_stdin_eof,
    ExpectEof => expect_eof,
    Exit => exit,
    NewConnection => new_connection,
    Respond => respond,
    RawResponse => raw_response,
    OpenStream => open_stream,
    Event => event,
    EndStream => end_stream,
    ExpectGet => expect_get,
    ExpectDelete => expect_delete,
    ExpireSession => expire_session,
    RequireAuth => require_auth,
    ReplyAlways => reply_always,
    MessageEvent => message_event,
    Endpoint => endpoint,
    Stateless => stateless,
    SubscriptionNotify => subscription_notify,
    AuthorizationServer => authorization_server,
    ExpireTokens => expire_tokens,
}

/// A short description of a server step, for messages (`expect tools/list`, `handshake`).
pub fn describe(step: &ServerStep) -> String {
    op(step).describe(name(step))
}

/// A server step in words, for `mcp-harness explain` (`waits for the client's `ping``).
pub fn explain(step: &ServerStep) -> String {
    op(step).about().explain
}

/// The server script's op rules, in step order, each problem placed at its step: the
/// scenario must run over a transport the op applies to, then the op's own rules.
pub fn validate_script(scenario: &Scenario, at: &Locator<'_>) -> Result<(), ScenarioError> {
    let transports = scenario.transport.to_vec();
    let mut cx = Validation::new(&transports);
    for (i, step) in scenario.server.iter().enumerate() {
        let op = op(step);
        cx.applies(name(step), op.about().transports)
            .and_then(|()| op.validate(&mut cx))
            .map_err(|problem| at.server_step(i, problem))?;
    }
    Ok(())
}

/// How many messages of each key (method, GET, DELETE) a connection's steps consume over
/// `transport`: an arrival beyond that is unscripted.
pub fn budget(steps: &[ServerStep], transport: TransportName) -> Budget {
    let mut budget = Budget::default();
    for op in steps.iter().map(op).filter(|op| op.about().transports.contains(transport)) {
        for key in op.consumes() {
            budget.add(key);
        }
    }
    budget
}

#[cfg(test)]
mod tests;
