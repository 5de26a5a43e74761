//! The [`Op`] trait every server op implements.

use super::rules::{Problem, Validation};
use super::transports::Transports;
use crate::http::run::HttpRun;
use crate::stdio::run::StdioRun;
use futures::future::BoxFuture;

/// [`Op::answers`] for a step with a `to` field: it answers the message labelled `to`, or
/// with no `to` the latest one, whatever its label.
pub fn answers_to(to: Option<&str>, label: Option<&str>) -> bool {
    to.is_none() || to == label
}

/// Which request a `to:` field answers, in words.
pub(crate) fn to_words(to: Option<&str>) -> String {
    match to {
        Some(label) => format!("the request labelled `{label}`"),
        None => "the latest expected request".into(),
    }
}

/// A JSON value for a sentence, shortened (`{"tools": []}`).
pub(crate) fn short(v: &serde_json::Value) -> String {
    shorten(&v.to_string())
}

/// Text for a sentence: at most 60 characters, `…` marking a cut.
pub(crate) fn shorten(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// What a step does to the client that meets it: the harness tells from it whether a run's
/// client met the scenario's fault (a client that never did is *not exercised*, neither
/// passed nor failed; scenarios/README.md, "The fault and earned verdicts").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// What a conformant server does: wait for a message, answer it well-formed, notify.
    None,
    /// The step's own effect is the fault (raw bytes, a delay, an HTTP status, an exit…):
    /// met once the script reaches the step.
    Here,
    /// The step waits for a client message and answers it with the fault (a GET answered
    /// 405): met once the script is past the step.
    InAnswer,
    /// A standing change the client meets with its next message (a required token, an
    /// expired session, an ignored SIGTERM): met once the client sends anything after the
    /// script reached the step.
    FromNextMessage,
}

/// The facts every op states about a step, in one place ([`Op::about`]): read by load-time
/// validation and the engines (`transports`), and by the harness (`fault`, `explain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct About {
    /// The transports the op applies to, and whether it is a standing rule
    /// ([`Transports::standing`]).
    pub transports: Transports,
    /// Whether, and how, the step makes a fault a client must meet; [`Fault::None`] for a
    /// conformant server's step.
    pub fault: Fault,
    /// The step in words, for `mcp-harness explain`: what the mock does, as a clause after
    /// "the mock …" (`waits for the client's `tools/list``).
    pub explain: String,
}

impl About {
    /// An op's facts: the transports it applies to, its fault ([`Fault::None`] for a
    /// conformant server's step) and its words.
    pub fn new(transports: Transports, fault: Fault, explain: impl Into<String>) -> About {
        About { transports, fault, explain: explain.into() }
    }
}

/// One server op: everything the mock knows about it, in one place. The serde enum
/// [`mcp_scenario::ServerStep`] only says which op a step is; [`super::op`] turns a step into
/// its `&dyn Op`.
///
/// An engine only calls an op's `run_*` method for a transport in [`About::transports`]; an op
/// a scenario cannot run anywhere is refused at load time, so it never gets there.
pub trait Op: Sync {
    /// What the op is: the transports it applies to, the fault it makes and the step in
    /// words. No default, so a new op cannot forget any of them.
    fn about(&self) -> About;

    /// Load-time rules for the op's fields, beyond what serde checks. `cx` knows the
    /// scenario's transports and the labels and streams earlier steps defined; an op that
    /// defines one records it there. Default: no rules.
    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        let _ = cx;
        Ok(())
    }

    /// The client messages the op consumes (JSON-RPC methods, or [`crate::http::conn::GET`] /
    /// [`crate::http::conn::DELETE`]): the engines count them up front, and a message no
    /// step will consume is answered at once (`-32601`, `202`, `405`…). Default: none.
    fn consumes(&self) -> Vec<&str> {
        Vec::new()
    }

    /// How messages name the step, given its op name (`expect tools/list`). Default: the name.
    fn describe(&self, name: &'static str) -> String {
        name.to_string()
    }

    /// stdio: the step's last effect is output, so when it is the script's last step the
    /// script counts as finished before the bytes leave (a client that reacts at once
    /// cannot outrun the record). Default: false.
    fn ends_in_output(&self) -> bool {
        false
    }

    /// HTTP: the step answers the message the step before it consumed (labelled `label`),
    /// so that message must not be accepted with `202` first. Default: false.
    fn answers(&self, label: Option<&str>) -> bool {
        let _ = label;
        false
    }

    /// Runs the step on the stdio engine. Default: nothing (for an op that does not apply
    /// to stdio, or means nothing there).
    fn run_stdio<'a>(&'a self, run: &'a mut StdioRun<'_>) -> BoxFuture<'a, ()> {
        let _ = run;
        Box::pin(async {})
    }

    /// Runs the step on the HTTP engine (both flavours); `next` is the step after it.
    /// Default: nothing (for an op that does not apply to HTTP, or means nothing there).
    fn run_http<'a>(&'a self, run: &'a mut HttpRun, next: Option<&'a dyn Op>) -> BoxFuture<'a, ()> {
        let _ = (run, next);
        Box::pin(async {})
    }
}
