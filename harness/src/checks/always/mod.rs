//! The always-on rules: what every run must satisfy whatever its checks say (DESIGN
//! "Checks: what applies to whom"), one module per rule behind [`Rule`]. Failures are named
//! `always: <rule>` and listed in run order: the run's deadline, then each connection (its
//! script, then its messages in wire order), then the client process.

mod deadline;
mod ids;
mod jsonrpc;
mod meta;
mod params;
mod process;
mod reported;
mod script;
mod shutdown;

pub use meta::unmarked;
pub use script::claimed_without_server;

use super::Run;
use crate::scope::Scope;
use crate::transcript::Connection;
use mcp_results::{CheckResult, WireAt};
use mcp_scenario::Revision;
use mcp_scenario::basis::Level;
use serde_json::Value;
use std::fmt;

/// One always-on rule (the sibling of [`super::CheckKind`] for rules without data).
pub trait Rule {
    /// The rule's name in messages: `always: <NAME>`.
    const NAME: &'static str;

    /// One way the run broke the rule; its Display is the failure message.
    type Violation: fmt::Display;

    /// What a violation in this run rests on, as a check's basis ([`Level::Unclassified`]
    /// with no reference: not yet read against the spec). No default, so a new rule says it.
    fn basis(&self, run: &Run<'_>) -> (Level, Option<String>);

    /// Whether the rule is judged for a run of this scope.
    fn applies(&self, _scope: &Scope) -> bool {
        true
    }

    /// Every violation, each with where in the run it happened; by default those on each
    /// connection, in order.
    fn judge(&self, run: &Run<'_>) -> Vec<(At, Self::Violation)> {
        run.transcript.connections().iter().flat_map(|c| self.judge_connection(run, c)).collect()
    }

    /// Every violation on one connection (for rules that judge connection by connection).
    fn judge_connection(&self, _run: &Run<'_>, _connection: &Connection) -> Vec<(At, Self::Violation)> {
        Vec::new()
    }
}

/// Where in a run a violation happened. Reports list violations in this order; violations
/// at one place keep the order of the rules in [`judge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum At {
    /// The run as a whole, before anything on the wire (its deadline).
    Start,
    /// Connection `n` (1-based): as a whole (`None`), or at its `event`-th viewed event,
    /// `item`-th message of a batch (`Some((event, item))`).
    Connection(usize, Option<(usize, usize)>),
    /// After the wire: the client process.
    End,
}

impl At {
    /// The recorded event this place is, when it is one.
    fn wire(self, run: &Run<'_>) -> Option<WireAt> {
        let At::Connection(connection, Some((event, _))) = self else { return None };
        let event = run.transcript.connection(connection)?.recorded_index(event)?;
        Some(WireAt { connection, event })
    }
}

/// Judges every rule that applies; the violations in run order.
pub fn judge(run: &Run<'_>) -> Vec<CheckResult> {
    fn collect<R: Rule>(rule: &R, run: &Run<'_>, found: &mut Vec<(At, CheckResult)>) {
        if rule.applies(&run.scope) {
            let violations = rule.judge(run);
            if violations.is_empty() {
                return;
            }
            let (level, reference) = rule.basis(run);
            found.extend(violations.into_iter().map(|(at, v)| {
                let check = format!("always: {}", R::NAME);
                let about = at.wire(run).into_iter().collect();
                (at, CheckResult { check, message: v.to_string(), level, reference: reference.clone(), about })
            }));
        }
    }
    let mut found = Vec::new();
    collect(&deadline::FinishesBeforeDeadline, run, &mut found);
    collect(&script::ScriptCompletes, run, &mut found);
    collect(&jsonrpc::ValidJsonRpc, run, &mut found);
    collect(&params::ParamsPresent, run, &mut found);
    collect(&meta::RequestMetadata, run, &mut found);
    collect(&ids::UniqueInFlightIds, run, &mut found);
    collect(&shutdown::ShutdownClosesStdinFirst, run, &mut found);
    collect(&process::ProcessEndsCleanly, run, &mut found);
    collect(&reported::ResultsFromTheServer, run, &mut found);
    // Stable: at one place, the rules' order above.
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, r)| r).collect()
}

/// The always-on rules' names, in [`judge`]'s order (for `mcp-harness explain`).
pub fn names() -> [&'static str; 9] {
    fn name<R: Rule>(_: &R) -> &'static str {
        R::NAME
    }
    [
        name(&deadline::FinishesBeforeDeadline),
        name(&script::ScriptCompletes),
        name(&jsonrpc::ValidJsonRpc),
        name(&params::ParamsPresent),
        name(&meta::RequestMetadata),
        name(&ids::UniqueInFlightIds),
        name(&shutdown::ShutdownClosesStdinFirst),
        name(&process::ProcessEndsCleanly),
        name(&reported::ResultsFromTheServer),
    ]
}

/// The strongest basis among `entries`, its reference prefixed by what they are.
fn strongest<'a>(
    entries: impl Iterator<Item = &'a mcp_scenario::basis::CheckEntry>,
    what: &str,
) -> Option<(Level, Option<String>)> {
    let rank = |l: Level| match l {
        Level::Must | Level::Driver => 0,
        Level::Unclassified => 1,
        Level::Should | Level::Robustness => 2,
        Level::Project => 3,
        Level::Promise => 4,
    };
    let entry = entries.min_by_key(|c| rank(c.level()))?;
    Some(match &entry.basis {
        // A promise binds some targets only; the rule it lends its basis to judges every
        // client, so it weighs as a rule of our own.
        Some(b) if b.level == Level::Promise => {
            (Level::Project, Some(format!("{what}, left unjudged: {}", b.reference)))
        }
        Some(b) => (b.level, Some(format!("{what}, left unjudged: {}", b.reference))),
        None => (Level::Unclassified, None),
    })
}

/// The messages in one JSON value the client sent, as the revision frames them: a
/// non-empty batch is its items on 2025-03-26 (the one revision with batches); anything
/// else is one message.
fn framed(v: &Value, revision: Revision) -> Vec<&Value> {
    match v {
        Value::Array(items) if revision == Revision::R2025_03_26 && !items.is_empty() => items.iter().collect(),
        _ => vec![v],
    }
}

/// One thing the client wrote: a message, or a line that is not JSON (its text, or
/// `<binary>` when not UTF-8).
enum Written<'a> {
    Message(&'a Value),
    NotJson(String),
}

/// What the client wrote on a connection with where each is, in wire order: each JSON
/// value framed by the revision ([`framed`]).
fn written<'a>(run: &Run<'_>, c: &'a Connection) -> Vec<(At, Written<'a>)> {
    let mut out = Vec::new();
    for (e, event) in c.events().iter().enumerate() {
        let Some(bytes) = event.client_line() else { continue };
        let at = |k| At::Connection(c.number(), Some((e, k)));
        match event.client_message() {
            Some(v) => out.extend(
                framed(v, run.scope.revision).into_iter().enumerate().map(|(k, m)| (at(k), Written::Message(m))),
            ),
            None => out.push((at(0), Written::NotJson(bytes.text.clone().unwrap_or_else(|| "<binary>".into())))),
        }
    }
    out
}

/// The well-formed client messages on a connection ([`jsonrpc::shape`]), with where each is.
fn well_formed<'a>(run: &Run<'_>, c: &'a Connection) -> Vec<(At, &'a Value)> {
    written(run, c)
        .into_iter()
        .filter_map(|(at, w)| match w {
            Written::Message(m) if jsonrpc::shape(m, run.scope.revision).is_ok() => Some((at, m)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::TargetKind;
    use crate::transcript::Transcript;
    use mcp_results::ClientOutcome;
    use mcp_scenario::wire::{Recorded, WireEvent};
    use serde_json::json;

    const SCENARIO: &str = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-03-26\nclient:\n  - op: connect\nserver:\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {}\n";

    fn from_client(v: Option<Value>, text: &str) -> WireEvent {
        WireEvent::FromClient { t_us: 0, bytes: Recorded::of(text.as_bytes()), json: v, terminated: true }
    }

    fn failures(target: TargetKind) -> Vec<String> {
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), SCENARIO).expect("loads");
        let events = vec![
            WireEvent::Script { t_us: 0, reached: 1, total: 2, finished: false, output_follows: false },
            from_client(None, "garbage"),
            from_client(Some(json!([{"id": 5, "method": "x"}, {"jsonrpc": "2.0", "id": 1, "method": "a"}])), ""),
            from_client(Some(json!({"jsonrpc": "2.0", "id": 1, "method": "b"})), ""),
            WireEvent::ToClient {
                t_us: 0,
                bytes: Recorded::of(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"),
                why: "reply".into(),
            },
            from_client(Some(json!({"jsonrpc": "2.0", "id": 1, "method": "c", "params": {}})), ""),
        ];
        let transcript = Transcript::new(vec![events]);
        let outcome = ClientOutcome { hung: true, ..ClientOutcome::default() };
        let scope = Scope {
            target,
            transport: scenario.transport.to_vec()[0],
            revision: scenario.revision,
            deadline: crate::scope::Deadline { scenario_ms: scenario.deadline_ms, startup_ms: 0 },
        };
        judge(&Run { scenario: &scenario, scope, outcome: &outcome, transcript: &transcript })
            .into_iter()
            .map(|f| format!("{}: {}", f.check, f.message))
            .collect()
    }

    #[test]
    fn violations_come_in_run_order() {
        assert_eq!(
            failures(TargetKind::Bundled),
            [
                "always: finishes before the deadline: the client plan did not finish within the run deadline of 3000ms (the scenario's `deadline_ms`, default 3000)",
                "always: server script completes: connection 1: the mock's script stopped at step 1 of 2 (expect tools/list): the client never got that far",
                "always: valid JSON-RPC: connection 1: client sent a line that is not JSON: \"garbage\"",
                "always: valid JSON-RPC: connection 1: missing or wrong \"jsonrpc\": {\"id\":5,\"method\":\"x\"}",
                "always: params always present (SPEC §2): connection 1: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}",
                "always: params always present (SPEC §2): connection 1: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"b\"}",
                "always: unique in-flight ids: connection 1: id 1 reused while still in flight",
            ]
        );
        // SPEC.md's `params` rule is the bundled transports' own, and a third-party client
        // the deadline killed stopped the script by hanging (the deadline rule's finding).
        let external = failures(TargetKind::External);
        assert_eq!(external.len(), 4, "{external:?}");
        assert!(!external.iter().any(|f| f.contains("server script completes")), "{external:?}");
    }

    /// A client that stops early is judged by what the scenario's own checks rest on: a
    /// scenario of SPEC.md rules only gets a note, one with a MUST fails with its sentence;
    /// a hang is the timeouts SHOULD.
    #[test]
    fn a_stop_rests_on_the_checks_of_what_the_script_waited_for() {
        let levels = |checks: &str, hung: bool| {
            let yaml = format!("{SCENARIO}checks:\n{checks}");
            let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &yaml).expect("loads");
            let transcript = Transcript::new(vec![vec![WireEvent::Script {
                t_us: 0,
                reached: 1,
                total: 2,
                finished: false,
                output_follows: false,
            }]]);
            let outcome = ClientOutcome { hung, ..ClientOutcome::default() };
            let scope = Scope {
                target: TargetKind::External,
                transport: scenario.transport.to_vec()[0],
                revision: scenario.revision,
                deadline: crate::scope::Deadline { scenario_ms: scenario.deadline_ms, startup_ms: 0 },
            };
            judge(&Run { scenario: &scenario, scope, outcome: &outcome, transcript: &transcript })
                .into_iter()
                .map(|f| (f.level, f.reference.unwrap_or_default()))
                .collect::<Vec<_>>()
        };
        let project = "  - sent: {method: tools/list}\n    project: \"SPEC §6 x\"\n";
        let must = "  - sent: {method: tools/list}\n    must: \"2025-03-26 basic/lifecycle: the client MUST y\"\n";
        assert_eq!(levels(project, false).iter().map(|(l, _)| *l).collect::<Vec<_>>(), [Level::Project]);
        let mixed = levels(&format!("{project}{must}"), false);
        assert!(mixed.iter().all(|(l, r)| *l == Level::Must && r.ends_with("the client MUST y")), "{mixed:?}");
        // A hang rests on what the plan waited for, whatever the scenario checks: here a
        // connect that sent nothing (deadline.rs has the other cases).
        let hung = levels(&format!("{project}{must}"), true);
        assert_eq!(hung[0].0, Level::Robustness, "{hung:?}");
        assert!(hung[0].1.contains("no JSON-RPC request was waiting"), "{hung:?}");
    }

    #[test]
    fn a_script_stuck_at_its_last_wait_rests_on_the_checks_of_that_message() {
        let server = "server:\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {}\n  - op: expect\n    method: notifications/roots/list_changed\n";
        let checks = "checks:\n  - sent: {method: tools/list}\n    must: \"2025-03-26 basic/lifecycle: the client MUST y\"\n  - sent: {method: notifications/roots/list_changed}\n    project: \"SPEC §2 z\"\n";
        let head = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-03-26\nclient:\n  - op: connect\n";
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &format!("{head}{server}{checks}"))
            .expect("loads");
        let basis = |reached: usize| {
            let transcript = Transcript::new(vec![vec![WireEvent::Script {
                t_us: 0,
                reached,
                total: 3,
                finished: false,
                output_follows: false,
            }]]);
            let outcome = ClientOutcome::default();
            let scope = Scope {
                target: TargetKind::External,
                transport: scenario.transport.to_vec()[0],
                revision: scenario.revision,
                deadline: crate::scope::Deadline { scenario_ms: scenario.deadline_ms, startup_ms: 0 },
            };
            script::ScriptCompletes.basis(&Run {
                scenario: &scenario,
                scope,
                outcome: &outcome,
                transcript: &transcript,
            })
        };
        // Stuck at the last expect: only the roots/list_changed checks were left unjudged.
        let (level, reference) = basis(3);
        assert_eq!(level, Level::Project);
        assert_eq!(
            reference.as_deref(),
            Some("the checks on notifications/roots/list_changed, left unjudged: SPEC §2 z")
        );
        // Stuck earlier: the rest of the script went unjudged too.
        assert_eq!(basis(1).0, Level::Must);
    }
}
