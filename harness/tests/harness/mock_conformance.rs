//! The mock is a conformant server except where a scenario says otherwise (scenarios/README.md,
//! "A conformant mock"): the whole library runs against the bundled client and the reference
//! client, and every JSON-RPC message the mock sent is validated against the official JSON
//! Schema of the scenario's revision (`../shared/mcp-spec/<revision>/schema.json`). A message
//! from the scenario's fault step or from a step under `deviations:` is the scenario's point
//! and is not held to it; anything else that fails is an undeclared deviation, named with its
//! scenario, step and the schema's complaint.
//!
//! What a message is validated against: a response's `result` against the schema's result for
//! the method of the client request with that id (`tools/list` → `ListToolsResult`, by the
//! request definition whose `method` is that constant; `InputRequiredResult` for a 2026
//! `input_required` one); a request or notification against the definition whose `method` is
//! its method; every message against the revision's JSON-RPC envelope. A method the revision
//! does not define is held to the envelope only.
//!
//! The capabilities too (issue: a conformant mock): on a stateful run, every request the
//! plan had the client send that needs a server capability (`tools/*` needs `tools`, …) and
//! every notification the mock sent that rests on one (`notifications/message` on `logging`,
//! a list change on `listChanged`) must be covered by what the mock's `initialize` result
//! advertised, unless that handshake step is the fault or declared.

use super::reference::{collect_yaml, config, launcher, root};
use futures::StreamExt;
use mcp_harness::Target;
use mcp_harness::runner::{self, Job};
use mcp_harness::transcript::Transcript;
use mcp_results::RunResult;
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, ServerStep};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

/// The revisions' schemas, each compiled per definition on first use.
struct Schemas {
    roots: HashMap<String, Value>,
    compiled: HashMap<(String, String), jsonschema::Validator>,
}

impl Schemas {
    fn load(revisions: &BTreeSet<String>) -> Self {
        let dir = root().join("../shared/mcp-spec");
        let roots = revisions
            .iter()
            .map(|rev| {
                let path = dir.join(rev).join("schema.json");
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                    panic!(
                        "the official MCP schema for {rev} is read from {} (shared/ beside the project, as on every developer machine and in CI): {e}",
                        path.display()
                    )
                });
                (rev.clone(), serde_json::from_str(&text).expect("schema.json is JSON"))
            })
            .collect();
        Schemas { roots, compiled: HashMap::new() }
    }

    fn definitions<'a>(&'a self, rev: &str) -> &'a serde_json::Map<String, Value> {
        let root = &self.roots[rev];
        root.get("$defs").or_else(|| root.get("definitions")).and_then(Value::as_object).expect("definitions")
    }

    /// The definition named `name`, if the revision has it.
    fn has(&self, rev: &str, name: &str) -> bool {
        self.definitions(rev).contains_key(name)
    }

    /// The definition (a name ending in `suffix`) whose `method` is the constant `method`.
    fn by_method(&self, rev: &str, method: &str, suffix: &str) -> Option<String> {
        self.definitions(rev)
            .iter()
            .find(|(name, def)| {
                name.ends_with(suffix)
                    && !name.starts_with("JSONRPC")
                    && def.pointer("/properties/method/const").and_then(Value::as_str) == Some(method)
            })
            .map(|(name, _)| name.clone())
    }

    /// The schema's complaints about `value` as the definition `name` (empty: valid).
    fn errors(&mut self, rev: &str, name: &str, value: &Value) -> Vec<String> {
        let key = (rev.to_string(), name.to_string());
        if !self.compiled.contains_key(&key) {
            let root = &self.roots[rev];
            let defs = if root.get("$defs").is_some() { "$defs" } else { "definitions" };
            let mut schema = root.clone();
            schema["$ref"] = json!(format!("#/{defs}/{name}"));
            let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{rev} {name}: {e}"));
            self.compiled.insert(key.clone(), validator);
        }
        self.compiled[&key].iter_errors(value).map(|e| format!("{name}: {e} at `{}`", e.instance_path)).collect()
    }
}

/// One message the mock sent, with the server step that wrote it (scenario numbering), if one
/// did (a default or automatic answer has none).
struct Sent {
    connection: usize,
    step: Option<usize>,
    why: String,
    message: Value,
}

/// The JSON-RPC messages in one message the mock wrote, as the transcript views the wire
/// (`Connection::events`: stdio lines, and 2xx JSON bodies and SSE `data:` as `ToClient`):
/// the whole text (one event's data lines join with newlines), else each line; none from
/// the authorization server. The view
/// stands a made-up `ToClient` ("refused") in for a non-2xx answer to a request; the body
/// the mock really sent is read from the recorded response instead.
fn messages_in(event: &WireEvent) -> Option<(&str, Vec<Value>)> {
    let (text, why) = match event {
        WireEvent::ToClient { why, .. } if why == "refused" => return None,
        WireEvent::ToClient { bytes, why, .. } => (bytes.text.as_deref()?, why),
        // The authorization server's answers (`authorization_server`) are OAuth documents
        // and errors (RFC 6749 §5.2), not JSON-RPC.
        WireEvent::HttpResponse { why, .. } if why.starts_with(mcp_mock::oauth::WHY) => return None,
        WireEvent::HttpResponse { status, body: Some(body), why, .. } if !(200..300).contains(status) => {
            (body.text.as_deref()?, why)
        }
        _ => return None,
    };
    Some((why.as_str(), mcp_harness::transcript::messages_in(text)))
}

/// Where each connection's script starts in `server:` (0-based), so that a connection's step
/// k is scenario step `offset + k`.
fn offsets(scenario: &Scenario) -> Vec<usize> {
    let mut starts = vec![0];
    for (i, step) in scenario.server.iter().enumerate() {
        if matches!(step, ServerStep::NewConnection(_)) {
            starts.push(i + 1);
        }
    }
    starts
}

/// Answers no script step writes: defaults, automatic refusals, standing rules.
fn automatic(why: &str) -> bool {
    ["auto", "default", "unscripted", "reply_always", "session expired", "auth required", "accepted", "stateless"]
        .iter()
        .any(|p| why.starts_with(p))
}

/// Every message the mock sent on the run's wire, with the step that wrote it.
fn sent(scenario: &Scenario, transcript: &Transcript) -> Vec<Sent> {
    let starts = offsets(scenario);
    let mut out = Vec::new();
    for c in transcript.connections() {
        let offset = starts.get(c.number() - 1).copied().unwrap_or(0);
        let events = c.events();
        // The step that wrote an event: the last progress mark before it by the mock's clock
        // (an HTTP journal may write a mark after the output of its step).
        let marks: Vec<(u64, usize)> = events
            .iter()
            .filter_map(|e| match e {
                WireEvent::Script { t_us, reached, .. } => Some((*t_us, *reached)),
                _ => None,
            })
            .collect();
        for event in events {
            let Some((why, messages)) = messages_in(event) else { continue };
            let at = event.t_us().unwrap_or(0);
            let reached = marks.iter().rev().find(|(t, _)| *t <= at).map(|(_, r)| *r);
            let step = if automatic(why) { None } else { reached.filter(|r| *r > 0).map(|r| offset + r) };
            out.extend(messages.into_iter().map(|message| Sent {
                connection: c.number(),
                step,
                why: why.to_string(),
                message,
            }));
        }
    }
    out
}

/// The method of the client request with `id` on connection `connection` (ids repeat across
/// connections).
fn request_method<'a>(transcript: &'a Transcript, connection: usize, id: &Value) -> Option<&'a str> {
    transcript.connection(connection)?.client_messages().find_map(|json| {
        let items: Vec<&Value> = match json {
            Value::Array(a) => a.iter().collect(),
            one => vec![one],
        };
        items.into_iter().find(|m| m.get("id") == Some(id) && m.get("method").is_some())?.get("method")?.as_str()
    })
}

/// The schema's complaints about one message of a run at revision `rev`.
fn judge(schemas: &mut Schemas, rev: &str, transcript: &Transcript, connection: usize, message: &Value) -> Vec<String> {
    if let Value::Array(batch) = message {
        return batch.iter().flat_map(|m| judge(schemas, rev, transcript, connection, m)).collect();
    }
    let mut errors = schemas.errors(rev, "JSONRPCMessage", message);
    let method = message.get("method").and_then(Value::as_str);
    let kind = if message.get("id").is_some() { "Request" } else { "Notification" };
    match (method, message.get("result")) {
        (Some(m), _) => {
            if let Some(def) = schemas.by_method(rev, m, kind) {
                errors.extend(schemas.errors(rev, &def, message));
            }
        }
        (None, Some(r)) => {
            let asked = message.get("id").and_then(|id| request_method(transcript, connection, id));
            let def = if r.get("resultType").and_then(Value::as_str) == Some("input_required")
                && schemas.has(rev, "InputRequiredResult")
            {
                Some("InputRequiredResult".to_string())
            } else {
                asked
                    .and_then(|m| schemas.by_method(rev, m, "Request"))
                    .map(|req| req.trim_end_matches("Request").to_string() + "Result")
                    .filter(|res| schemas.has(rev, res))
            };
            if let Some(def) = def {
                errors.extend(schemas.errors(rev, &def, r));
            }
        }
        _ => {}
    }
    errors
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_message_the_mock_sends_is_valid_for_its_revision_unless_declared() {
    let mut paths = Vec::new();
    collect_yaml(&root().join("scenarios"), &mut paths);
    paths.sort();
    let scenarios: HashMap<PathBuf, Scenario> =
        paths.iter().map(|p| (p.clone(), mcp_harness::load(p).unwrap_or_else(|e| panic!("{e}")))).collect();
    let revisions: BTreeSet<String> = scenarios.values().map(|s| s.revision.as_str().to_string()).collect();
    let mut schemas = Schemas::load(&revisions);
    let targets = [Target::bundled(None), launcher(None)];
    let mut jobs: Vec<(Job, std::sync::Arc<runner::RunConfig>)> = Vec::new();
    for target in &targets {
        let loaded = scenarios.iter().map(|(p, s)| (p.clone(), s.clone())).collect();
        let cfg = config(target.clone());
        jobs.extend(
            runner::jobs(loaded, target)
                .into_iter()
                .filter(|j| j.scenario.deadline_ms < 30_000)
                .map(|j| (j, cfg.clone())),
        );
    }
    let results: Vec<(Job, RunResult)> = futures::stream::iter(jobs)
        .map(|(job, cfg)| async move {
            let result = runner::run_one(&job, &cfg).await;
            (job, result)
        })
        .buffer_unordered(8)
        .collect()
        .await;
    let mut found: BTreeSet<String> = BTreeSet::new();
    let mut checked = 0usize;
    for (job, result) in &results {
        let scenario = &job.scenario;
        let rev = scenario.revision.as_str();
        let fault = mcp_harness::exercise::site(scenario).filter(|s| s.deviates).map(|s| s.index);
        let transcript = Transcript::new(result.wire.clone());
        let sent = sent(scenario, &transcript);
        let name = job.path.strip_prefix(root()).unwrap_or(&job.path).display().to_string();
        for gap in unadvertised(scenario, &transcript, &sent) {
            found.insert(format!("{name} [{}] {gap}", job.transport.as_str()));
        }
        for sent in sent {
            if sent.step.is_some_and(|s| Some(s) == fault || scenario.deviations.contains_key(&s)) {
                continue;
            }
            checked += 1;
            let errors = judge(&mut schemas, rev, &transcript, sent.connection, &sent.message);
            if let Some(first) = errors.first() {
                let step = sent.step.map_or_else(
                    || format!("an automatic answer ({})", sent.why),
                    |s| format!("server step {s} ({})", sent.why),
                );
                found.insert(format!(
                    "{} [{}] connection {}, {step}: {first}\n    {}",
                    job.path.strip_prefix(root()).unwrap_or(&job.path).display(),
                    job.transport.as_str(),
                    sent.connection,
                    truncate(&sent.message.to_string(), 200)
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "{} message(s) the mock sent break their revision's schema or capability rules and are neither the scenario's fault nor under its `deviations:`:\n{}",
        found.len(),
        found.into_iter().collect::<Vec<_>>().join("\n")
    );
    eprintln!("{checked} messages the mock sent were validated");
    // The whole library ran and its messages were read (a broken reader would find none).
    assert!(checked > 1000, "the library's runs sent only {checked} messages to validate");
}

/// The server capability (a path in `capabilities`) that a client request with `method`
/// needs at `rev`, if any (each revision's server feature pages: "Servers that support …
/// MUST declare the … capability").
fn needed_for_request(rev: &str, method: &str) -> Option<&'static [&'static str]> {
    Some(match method {
        "resources/subscribe" | "resources/unsubscribe" => &["resources", "subscribe"],
        "logging/setLevel" => &["logging"],
        // 2024-11-05 has no completions capability.
        "completion/complete" if rev != "2024-11-05" => &["completions"],
        m if m.starts_with("tools/") => &["tools"],
        m if m.starts_with("resources/") => &["resources"],
        m if m.starts_with("prompts/") => &["prompts"],
        _ => return None,
    })
}

/// The server capability a notification the server sends with `method` rests on.
fn needed_for_notification(method: &str) -> Option<&'static [&'static str]> {
    Some(match method {
        "notifications/message" => &["logging"],
        "notifications/tools/list_changed" => &["tools", "listChanged"],
        "notifications/resources/list_changed" => &["resources", "listChanged"],
        "notifications/prompts/list_changed" => &["prompts", "listChanged"],
        "notifications/resources/updated" => &["resources", "subscribe"],
        _ => return None,
    })
}

fn advertises(capabilities: &Value, path: &[&str]) -> bool {
    let mut at = capabilities;
    for key in path {
        match at.get(key) {
            Some(v) if !v.is_null() && v != &Value::Bool(false) => at = v,
            _ => return false,
        }
    }
    true
}

/// Where a stateful run's mock used or invited a feature it never advertised: a client
/// request the plan made that needs a server capability the `initialize` result left out, or
/// a notification the mock sent that rests on one. The handshake step that answered is
/// exempt when it is the scenario's fault or under `deviations:` (a scenario testing a
/// client against a missing capability says so).
fn unadvertised(scenario: &Scenario, transcript: &Transcript, sent: &[Sent]) -> Vec<String> {
    let rev = scenario.revision.as_str();
    let fault = mcp_harness::exercise::site(scenario).filter(|s| s.deviates).map(|s| s.index);
    let mut out = Vec::new();
    for c in transcript.connections() {
        let n = c.number();
        let Some(init) = sent.iter().find(|s| {
            s.connection == n
                && s.message.pointer("/result/capabilities").is_some()
                && s.message.get("id").and_then(|id| request_method(transcript, n, id)) == Some("initialize")
        }) else {
            continue;
        };
        if init.step.is_some_and(|s| Some(s) == fault || scenario.deviations.contains_key(&s)) {
            continue;
        }
        let caps = &init.message["result"]["capabilities"];
        let asked = c.client_messages().flat_map(|m| match m {
            Value::Array(a) => a.clone(),
            one => vec![one.clone()],
        });
        for m in asked.filter(|m| m.get("id").is_some()) {
            let method = m.get("method").and_then(Value::as_str).unwrap_or_default();
            if let Some(path) = needed_for_request(rev, method).filter(|p| !advertises(caps, p)) {
                out.push(format!("connection {n}: the client was asked to send {method}, but the mock's capabilities {caps} have no {}", path.join(".")));
            }
        }
        for s in sent.iter().filter(|s| s.connection == n && s.message.get("id").is_none()) {
            let method = s.message.get("method").and_then(Value::as_str).unwrap_or_default();
            if let Some(path) = needed_for_notification(method).filter(|p| !advertises(caps, p)) {
                out.push(format!(
                    "connection {n}: the mock sent {method} without {} in its capabilities {caps}",
                    path.join(".")
                ));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}
