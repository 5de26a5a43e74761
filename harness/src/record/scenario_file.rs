//! From a capture to a scenario file: the server's side becomes the script (what the
//! server sent, when), the client's side becomes the plan (what the client did, as the
//! bundled client's plan ops) and checks (what it sent: every message in order, counts,
//! cancellations, how it closed; each step's outcome).
//!
//! The text is written by hand rather than serialised from `mcp_scenario::Scenario`: a
//! recorded file is meant to be read (the lead quotes one), so each step carries a comment
//! saying which captured line it came from and when, and payloads stay one-line JSON flow
//! mappings as in the rest of the library.
//!
//! stdio rules (scenarios/README.md "From a field bug to a scenario"):
//! - a server line that is a clean JSON-RPC message becomes `reply` (to the request it
//!   answers), `notify` or `request`; anything else (not JSON, another id, extra members, a
//!   line left without `\n`) is written as it was with `send` (`text`, or `hex` for bytes
//!   that are not plain text);
//! - a gap of at least [`MIN_DELAY_MS`] (after `--speed`) before a server line is a `delay`;
//! - client requests and notifications are `expect`ed (`notifications/cancelled` is pinned
//!   by a `cancelled` check instead, so the script never waits on a SHOULD); answers to
//!   server requests are `expect_response`;
//! - a server that exited on its own ends with `exit`; a spawn after the first is a
//!   `new_connection` (recorded with `--append`).

use super::capture::{Captured, ConnectionCapture};
use mcp_scenario::wire::{Recorded, WireEvent};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// Gaps shorter than this (after `--speed`) are not written as delays: they are the
/// server's ordinary processing time, not behaviour worth replaying.
pub const MIN_DELAY_MS: u64 = 10;

/// How to write the scenario.
#[derive(Debug, Clone)]
pub struct Options {
    /// The scenario's name (the file stem).
    pub name: String,
    /// Delays (and the plan's timeouts) are divided by this.
    pub speed: f64,
}

/// JSON text of a string: a YAML double-quoted scalar with the same meaning.
fn q(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// One-line JSON: a YAML flow mapping.
fn j(v: &Value) -> String {
    v.to_string()
}

fn ms(t_us: u64) -> u64 {
    t_us / 1000
}

/// The JSON-RPC shape of a captured line.
enum Shape<'a> {
    Request { id: &'a Value, method: &'a str, params: Option<&'a Value> },
    Notification { method: &'a str, params: Option<&'a Value> },
    Response { id: &'a Value, result: Option<&'a Value>, error: Option<&'a Value> },
}

/// The shape of `v` when it is a clean JSON-RPC 2.0 message: only the members its kind
/// has, `jsonrpc: "2.0"`.
fn shape(v: &Value) -> Option<Shape<'_>> {
    let o = v.as_object()?;
    if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return None;
    }
    let only = |allowed: &[&str]| o.keys().all(|k| allowed.contains(&k.as_str()));
    match (o.get("method").and_then(Value::as_str), o.get("id")) {
        (Some(method), Some(id)) if only(&["jsonrpc", "id", "method", "params"]) => {
            Some(Shape::Request { id, method, params: o.get("params") })
        }
        (Some(method), None) if only(&["jsonrpc", "method", "params"]) => {
            Some(Shape::Notification { method, params: o.get("params") })
        }
        (None, Some(id)) if only(&["jsonrpc", "id", "result", "error"]) => {
            let (result, error) = (o.get("result"), o.get("error"));
            (result.is_some() != error.is_some()).then_some(Shape::Response { id, result, error })
        }
        _ => None,
    }
}

/// A line's JSON, when it is JSON.
fn json_of(bytes: &Recorded) -> Option<Value> {
    let text = bytes.text.as_deref()?;
    serde_json::from_str(text.strip_suffix('\r').unwrap_or(text)).ok()
}

/// A client request as the plan and checks need it.
#[derive(Debug, Clone)]
struct Req {
    method: String,
    params: Option<Value>,
    t_us: u64,
    label: Option<String>,
    /// `Some(true)` answered with a result, `Some(false)` with an error.
    answered: Option<bool>,
    cancelled_at: Option<u64>,
    background: bool,
    timeout_ms: Option<u64>,
    /// Settled before the plan moved on (a reply, a cancellation, the end).
    settled: bool,
}

/// Writes the scenario for `connections` (stdio only for now; HTTP in [`super::http`]).
pub fn stdio(connections: &[ConnectionCapture], opts: &Options) -> String {
    let mut w = Writer { opts, out: String::new() };
    w.stdio(connections);
    w.out
}

struct Writer<'a> {
    opts: &'a Options,
    out: String,
}

/// What the first pass learns of one connection.
#[derive(Default)]
struct Facts {
    /// Client requests by the JSON text of their id, in order.
    reqs: Vec<Req>,
    by_id: HashMap<String, usize>,
    /// Server requests' labels by id text.
    server_reqs: HashMap<String, String>,
    /// The initialize result, when the server answered one.
    init_result: Option<Value>,
    /// The client's initialize params.
    init_params: Option<Value>,
    eof_us: Option<u64>,
    exit: Option<(u64, Option<i32>, Option<String>)>,
    signals: Vec<String>,
}

fn facts(c: &ConnectionCapture, server_label_base: usize) -> Facts {
    let mut f = Facts::default();
    let mut latest: Option<usize> = None;
    for e in &c.events {
        match e {
            Captured::ClientLine { t_us, json: Some(v), .. } => match shape(v) {
                Some(Shape::Request { id, method, params }) => {
                    let i = f.reqs.len();
                    f.by_id.insert(id.to_string(), i);
                    if method == "initialize" {
                        f.init_params = params.cloned();
                    }
                    f.reqs.push(Req {
                        method: method.into(),
                        params: params.cloned(),
                        t_us: *t_us,
                        label: None,
                        answered: None,
                        cancelled_at: None,
                        background: false,
                        timeout_ms: None,
                        settled: false,
                    });
                    latest = Some(i);
                }
                Some(Shape::Notification { method: "notifications/cancelled", params }) => {
                    let id = params.and_then(|p| p.get("requestId")).map(Value::to_string);
                    if let Some(&i) = id.as_ref().and_then(|id| f.by_id.get(id)) {
                        f.reqs[i].cancelled_at.get_or_insert(*t_us);
                        f.reqs[i].label.get_or_insert_with(|| format!("req-{}", i + 1));
                    }
                }
                _ => {}
            },
            Captured::ServerLine { bytes, terminated: true, .. } => {
                let Some(v) = json_of(bytes) else { continue };
                match shape(&v) {
                    Some(Shape::Response { id, result, .. }) => {
                        if let Some(&i) = f.by_id.get(&id.to_string())
                            && f.reqs[i].answered.is_none()
                        {
                            f.reqs[i].answered = Some(result.is_some());
                            if f.reqs[i].method == "initialize" {
                                f.init_result = result.cloned();
                            }
                            // `reply` answers the latest expected request unless told `to`.
                            if latest != Some(i) {
                                f.reqs[i].label.get_or_insert_with(|| format!("req-{}", i + 1));
                            }
                        }
                    }
                    Some(Shape::Request { id, .. }) => {
                        let n = server_label_base + f.server_reqs.len() + 1;
                        f.server_reqs.entry(id.to_string()).or_insert_with(|| format!("srv-req-{n}"));
                    }
                    _ => {}
                }
            }
            Captured::StdinEof { t_us } => f.eof_us = Some(*t_us),
            Captured::Exit { t_us, code, signal } => f.exit = Some((*t_us, *code, signal.clone())),
            Captured::Signal { name, .. } => f.signals.push(name.clone()),
            _ => {}
        }
    }
    f
}

impl Writer<'_> {
    fn line(&mut self, s: impl AsRef<str>) {
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    /// `transport`, `revision`, `refs` and (for a long recording) `deadline_ms`.
    fn preamble(&mut self, transport: &str, revision: &str, duration_us: u64) {
        self.line(format!("transport: {transport}"));
        self.line(format!("revision: {revision}"));
        self.line(format!(
            "refs: [{}]",
            q("recorded with mcp-harness record (scenarios/README.md \"From a field bug to a scenario\")")
        ));
        let deadline = 3000.max(self.scaled_ms(duration_us) * 2 + 2000);
        if deadline > 3000 {
            self.line(format!("deadline_ms: {deadline}"));
        }
    }

    fn scaled_ms(&self, us: u64) -> u64 {
        (us as f64 / 1000.0 / self.opts.speed).round() as u64
    }

    fn stdio(&mut self, connections: &[ConnectionCapture]) {
        let mut all_facts = Vec::new();
        for c in connections {
            let base = all_facts.iter().map(|f: &Facts| f.server_reqs.len()).sum();
            all_facts.push(facts(c, base));
        }
        let first = &all_facts[0];
        let revision = first
            .init_result
            .as_ref()
            .and_then(|r| r.get("protocolVersion"))
            .or_else(|| first.init_params.as_ref().and_then(|p| p.get("protocolVersion")))
            .and_then(Value::as_str)
            .filter(|v| ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"].contains(v))
            .unwrap_or("2025-11-25")
            .to_owned();
        let mut plan = Plan::default();
        plan.build(&connections[0], &mut all_facts[0], self.opts.speed);
        let duration_us = connections.iter().flat_map(|c| c.events.last()).map(Captured::t_us).max().unwrap_or(0);

        self.header(connections, duration_us);
        self.line(format!("name: {}", self.opts.name));
        self.line(format!(
            "summary: {}",
            q(&format!(
                "A recorded stdio session with `{}`: the server's side replayed, the client's side pinned.",
                connections[0].source
            ))
        ));
        self.preamble("stdio", &revision, duration_us);
        self.line("client:");
        if connections.len() > 1 {
            self.line("  # The plan replays connection 1; the client's later spawns are in the script after");
            self.line(
                "  # `new_connection` (give `connect` a `managed:` policy to replay them with the bundled client).",
            );
        }
        let steps = plan.render(&all_facts[0]);
        for s in &steps {
            self.out.push_str(s);
        }
        self.line("server:");
        for (n, (c, f)) in connections.iter().zip(&all_facts).enumerate() {
            if n > 0 {
                self.line(format!("  # Connection {}: the client spawned the server again.", n + 1));
                self.line("  - op: new_connection");
            }
            self.script(c, f);
        }
        self.line("checks:");
        self.checks(connections, &all_facts, &plan);
    }

    fn header(&mut self, connections: &[ConnectionCapture], duration_us: u64) {
        self.line("# Recorded by `mcp-harness record` (scenarios/README.md \"From a field bug to a scenario\").");
        for (n, c) in connections.iter().enumerate() {
            let count = |f: fn(&Captured) -> bool| c.events.iter().filter(|e| f(e)).count();
            let what = if c.transport == "stdio" {
                let client = count(|e| matches!(e, Captured::ClientLine { .. }));
                let server = count(|e| matches!(e, Captured::ServerLine { .. }));
                format!("{client} client lines, {server} server lines")
            } else {
                let exchanges = count(|e| matches!(e, Captured::HttpRequest(_)));
                let events = count(|e| matches!(e, Captured::SseEvent { .. }));
                format!("{exchanges} HTTP exchanges, {events} SSE events")
            };
            self.line(format!(
                "# Connection {}: {} over {}: {what}, {} ms.",
                n + 1,
                c.source,
                c.transport,
                ms(c.events.last().map(Captured::t_us).unwrap_or(0))
            ));
        }
        if self.opts.speed != 1.0 {
            self.line(format!(
                "# Delays and timeouts divided by --speed {} ({} ms recorded in all).",
                self.opts.speed,
                ms(duration_us)
            ));
        }
        let mut redacted: BTreeMap<&str, usize> = BTreeMap::new();
        for c in connections {
            for (what, n) in &c.redacted {
                *redacted.entry(what).or_default() += n;
            }
        }
        if redacted.is_empty() {
            self.line("# Redacted at capture: nothing matched (Authorization, cookies, token members, bearer tokens).");
        } else {
            self.line(
                "# Redacted at capture (the values never reached this file; `<redacted:N>` numbers distinct values):",
            );
            for (what, n) in redacted {
                self.line(format!("#   {what}: {n}"));
            }
        }
    }

    fn delay(&mut self, last_us: &mut u64, t_us: u64) {
        let gap = self.scaled_ms(t_us.saturating_sub(*last_us));
        if gap >= MIN_DELAY_MS {
            self.line(format!("  - op: delay\n    ms: {gap}"));
        }
        *last_us = t_us;
    }

    fn script(&mut self, c: &ConnectionCapture, f: &Facts) {
        let exit_after_eof = matches!((f.eof_us, &f.exit), (Some(eof), Some((t, code, sig))) if *t >= eof && (*code != Some(0) || sig.is_some()) && f.signals.is_empty());
        if exit_after_eof {
            self.line("  # The server kept running after stdin EOF (it exited with the status below).");
            self.line("  - op: ignore_stdin_eof");
        }
        let mut last_us = 0;
        let mut latest: Option<usize> = None;
        let mut answered: Vec<bool> = vec![false; f.reqs.len()];
        let (mut client_no, mut server_no) = (0, 0);
        let mut client_reqs = 0;
        for e in &c.events {
            match e {
                Captured::ClientLine { t_us, json, bytes } => {
                    client_no += 1;
                    let at = format!("  # +{} ms, client line {client_no}", ms(*t_us));
                    match json.as_ref().and_then(shape) {
                        Some(Shape::Request { method, .. }) => {
                            let i = client_reqs;
                            client_reqs += 1;
                            latest = Some(i);
                            self.line(format!("{at}: {method} request"));
                            self.line(format!("  - op: expect\n    method: {}", q(method)));
                            if let Some(l) = &f.reqs[i].label {
                                self.line(format!("    as: {l}"));
                            }
                        }
                        Some(Shape::Notification { method: "notifications/cancelled", params }) => {
                            let id = params.and_then(|p| p.get("requestId")).map(|v| v.to_string()).unwrap_or_default();
                            self.line(format!("{at}: notifications/cancelled for request id {id} (pinned by a `cancelled` check, not awaited)"));
                        }
                        Some(Shape::Notification { method, .. }) => {
                            self.line(format!("{at}: {method}"));
                            self.line(format!("  - op: expect\n    method: {}", q(method)));
                        }
                        Some(Shape::Response { id, .. }) => match f.server_reqs.get(&id.to_string()) {
                            Some(label) => {
                                self.line(format!("{at}: the answer to {label}"));
                                self.line(format!("  - op: expect_response\n    to: {label}"));
                            }
                            None => self.line(format!("{at}: a response to no server request (id {id}); not awaited")),
                        },
                        None => {
                            let what =
                                bytes.text.as_deref().map(|t| q(&cut(t))).unwrap_or_else(|| "(not UTF-8)".into());
                            self.line(format!("{at}: not a JSON-RPC message, not awaited: {what}"));
                        }
                    }
                    last_us = *t_us;
                }
                Captured::ServerLine { t_us, bytes, terminated } => {
                    server_no += 1;
                    self.delay(&mut last_us, *t_us);
                    let at = format!("  # +{} ms, server line {server_no}", ms(*t_us));
                    let v = terminated.then(|| json_of(bytes)).flatten();
                    let crlf = bytes.text.as_deref().is_some_and(|t| t.ends_with('\r'));
                    match v.as_ref().and_then(shape) {
                        Some(Shape::Response { id, result, error })
                            if f.by_id.get(&id.to_string()).is_some_and(|&i| !answered[i]) =>
                        {
                            let i = f.by_id[&id.to_string()];
                            answered[i] = true;
                            self.line(format!("{at}: the answer to {}", f.reqs[i].method));
                            self.line("  - op: reply");
                            if latest != Some(i)
                                && let Some(l) = &f.reqs[i].label
                            {
                                self.line(format!("    to: {l}"));
                            }
                            match (result, error) {
                                (Some(r), _) => self.line(format!("    result: {}", j(r))),
                                (_, Some(e)) => self.line(format!("    error: {}", j(e))),
                                _ => {}
                            }
                            if crlf {
                                self.line("    line_end: crlf");
                            }
                        }
                        Some(Shape::Notification { method, params }) if !crlf => {
                            self.line(format!("{at}: {method}"));
                            self.line(format!("  - op: notify\n    method: {}", q(method)));
                            if let Some(p) = params {
                                self.line(format!("    params: {}", j(p)));
                            }
                        }
                        Some(Shape::Request { id, method, params }) if !crlf => {
                            let label = f.server_reqs.get(&id.to_string()).cloned().unwrap_or_default();
                            self.line(format!("{at}: a {method} request to the client"));
                            self.line(format!("  - op: request\n    method: {}", q(method)));
                            if let Some(p) = params {
                                self.line(format!("    params: {}", j(p)));
                            }
                            self.line(format!("    as: {label}\n    id: {}", j(id)));
                        }
                        _ => {
                            let why = if !terminated {
                                "left without a final newline"
                            } else if v.is_none() {
                                "not JSON"
                            } else {
                                "not a clean JSON-RPC message for this session"
                            };
                            self.line(format!("{at}: {why}, sent as it was"));
                            self.raw("send", bytes, *terminated);
                        }
                    }
                }
                Captured::Stderr { t_us, bytes } => {
                    self.delay(&mut last_us, *t_us);
                    self.line(format!("  # +{} ms, stderr", ms(*t_us)));
                    let text = bytes.text.clone().unwrap_or_default();
                    self.line(format!("  - op: stderr\n    text: {}", q(&text)));
                }
                Captured::StdinEof { t_us } => {
                    self.line(format!("  # +{} ms: the client closed the server's stdin", ms(*t_us)));
                    if exit_after_eof {
                        self.line("  - op: expect_eof");
                    }
                    last_us = *t_us;
                }
                Captured::Signal { t_us, name } => {
                    self.line(format!("  # +{} ms: the client sent {name} (passed to the server)", ms(*t_us)));
                }
                Captured::Exit { t_us, code, signal } => {
                    let by_client = !f.signals.is_empty();
                    let before_eof = f.eof_us.is_none_or(|eof| *t_us < eof);
                    let what = match (code, signal) {
                        (Some(c), _) => format!("exited with code {c}"),
                        (_, Some(s)) => format!("was killed by {s}"),
                        _ => "exited".into(),
                    };
                    if by_client || !(before_eof || exit_after_eof) {
                        self.line(format!(
                            "  # +{} ms: the server {what} (the mock does the same by itself)",
                            ms(*t_us)
                        ));
                        continue;
                    }
                    self.delay(&mut last_us, *t_us);
                    self.line(format!("  # +{} ms: the server {what}", ms(*t_us)));
                    match (code, signal) {
                        (Some(c), _) => self.line(format!("  - op: exit\n    code: {c}")),
                        (_, Some(s)) => self.line(format!("  - op: exit\n    signal: {s}")),
                        _ => self.line("  - op: exit\n    code: 0"),
                    }
                }
                _ => {}
            }
        }
    }

    /// A `send` of captured bytes: text when it is plain text, else hex.
    fn raw(&mut self, op: &str, bytes: &Recorded, terminated: bool) {
        let plain = bytes
            .text
            .as_deref()
            .filter(|t| !t.chars().any(|c| c == '\u{feff}' || (c.is_control() && c != '\t' && c != '\r')));
        let nl = if terminated { "\n" } else { "" };
        match plain {
            Some(t) if !t.contains("{id}") && !t.contains("{progressToken}") => {
                self.line(format!("  - op: {op}\n    text: {}", q(&format!("{t}{nl}"))))
            }
            _ => {
                let mut h = bytes.hex.clone().unwrap_or_else(|| hex::encode(bytes.text.as_deref().unwrap_or("")));
                if terminated {
                    h.push_str("0a");
                }
                let spaced: Vec<&str> = (0..h.len()).step_by(2).map(|i| &h[i..(i + 2).min(h.len())]).collect();
                self.line(format!("  - op: {op}\n    hex: {}", q(&spaced.join(" "))));
            }
        }
    }

    fn checks(&mut self, connections: &[ConnectionCapture], facts: &[Facts], plan: &Plan) {
        for (n, (c, f)) in connections.iter().zip(facts).enumerate() {
            self.line(format!("  # Connection {}: every client message in order, as recorded (a replay reports the first that differs).", n + 1));
            let pinned = c.events.iter().filter(|e| matches!(e, Captured::ClientLine { json: Some(_), .. })).count();
            let empty = if pinned == 0 { " []" } else { "" };
            self.line(format!("  - replays:\n      connection: {}\n      messages:{empty}", n + 1));
            let mut counts: Vec<(String, usize)> = Vec::new();
            for e in &c.events {
                let Captured::ClientLine { json: Some(v), .. } = e else { continue };
                let entry = match shape(v) {
                    Some(Shape::Request { method, params, .. }) | Some(Shape::Notification { method, params }) => {
                        match counts.iter_mut().find(|(m, _)| m == method) {
                            Some((_, k)) => *k += 1,
                            None => counts.push((method.to_owned(), 1)),
                        }
                        match pinned_params(method, params) {
                            Some(p) => format!("{{method: {}, params: {}}}", q(method), j(&p)),
                            None => format!("{{method: {}}}", q(method)),
                        }
                    }
                    Some(Shape::Response { id, .. }) => match f.server_reqs.get(&id.to_string()) {
                        Some(label) => format!("{{answer: {label}}}"),
                        None => continue,
                    },
                    None => continue,
                };
                self.line(format!("        - {entry}"));
            }
            let conn = if connections.len() > 1 { format!(", connection: {}", n + 1) } else { String::new() };
            self.line("  # How many of each the client sent.");
            for (method, k) in counts {
                self.line(format!("  - sent: {{method: {}, count: {k}{conn}}}", q(&method)));
            }
            for r in f.reqs.iter().filter(|r| r.cancelled_at.is_some()) {
                if let Some(l) = &r.label {
                    self.line(format!("  # The client cancelled {l} ({}).", r.method));
                    self.line(format!("  - cancelled: {{request: {l}}}"));
                }
            }
            let closed_stdin = match (f.eof_us, &f.exit) {
                (Some(eof), Some((t, ..))) => eof <= *t,
                (Some(_), None) => true,
                _ => false,
            };
            if closed_stdin {
                self.line("  # How it closed: the client closed the server's stdin.");
                self.line(format!("  - stdin_closed: {{connection: {}}}", n + 1));
            }
            for s in &f.signals {
                self.line(format!("  # How it closed: the client sent {s}."));
                self.line(format!("  - signal: {{name: {s}}}"));
            }
        }
        self.line("  # Each plan step ended as it did in the recording.");
        for (step, ok) in &plan.outcomes {
            self.line(format!("  - outcome: {{step: {step}, ok: {ok}}}"));
        }
    }
}

/// The params a `replays` entry pins: what the client chose, without what differs between
/// runs of one client (ids, `_meta`) or between clients (initialize's clientInfo and
/// capabilities: only the protocol version is kept).
fn pinned_params(method: &str, params: Option<&Value>) -> Option<Value> {
    let p = params?.as_object()?;
    let kept: Map<String, Value> = match method {
        "initialize" => {
            p.iter().filter(|(k, _)| *k == "protocolVersion").map(|(k, v)| (k.clone(), v.clone())).collect()
        }
        "notifications/cancelled" => Map::new(),
        _ => p.iter().filter(|(k, _)| *k != "_meta").map(|(k, v)| (k.clone(), v.clone())).collect(),
    };
    (!kept.is_empty()).then_some(Value::Object(kept))
}

/// A request's params as the plan gives them: without the `_meta` members a 2026-07-28
/// client stamps on every request itself (`io.modelcontextprotocol/…`), which the replaying
/// client adds again; what the caller chose (`progressToken`, …) stays.
fn without_client_stamps(params: &Value) -> Value {
    let mut p = params.clone();
    if let Some(meta) = p.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.retain(|k, _| !k.starts_with("io.modelcontextprotocol/"));
        if meta.is_empty()
            && let Some(o) = p.as_object_mut()
        {
            o.remove("_meta");
        }
    }
    p
}

fn cut(text: &str) -> String {
    if text.chars().count() <= 120 { text.to_owned() } else { text.chars().take(120).collect::<String>() + "…" }
}

/// One step of the inferred plan.
#[derive(Debug)]
enum PlanStep {
    Connect { protocol_version: Option<String> },
    Request(usize),
    Await(usize),
    Cancel(usize),
    Notify { method: String, params: Option<Value> },
    Close,
}

/// The client plan inferred from connection 1: what the client did, as plan ops.
#[derive(Debug, Default)]
struct Plan {
    steps: Vec<PlanStep>,
    /// (plan step, ok) for each step whose outcome the recording shows.
    outcomes: Vec<(usize, bool)>,
}

impl Plan {
    /// `connect` covers initialize and notifications/initialized, nothing more: the plan is
    /// what the recorded client did, whichever client it was, so each request after them —
    /// a tools/list right after connecting too — is a `request` step (the bundled client,
    /// which lists tools as it connects, leaves that to a plan that lists them itself, so
    /// the recording replays unedited on it and on the client that made it); each request is
    /// a `request` step (`background` when the
    /// client sent another before its answer; `timeout_ms` when it cancelled it); each other
    /// notification a `notify`; the client's close is `close`.
    fn build(&mut self, c: &ConnectionCapture, f: &mut Facts, speed: f64) {
        let client_version = f.init_params.as_ref().and_then(|p| p.get("protocolVersion")).and_then(Value::as_str);
        let server_version = f.init_result.as_ref().and_then(|r| r.get("protocolVersion")).and_then(Value::as_str);
        let protocol_version = match (client_version, server_version) {
            (Some(c), Some(s)) if c != s => Some(c.to_owned()),
            _ => None,
        };
        self.steps.push(PlanStep::Connect { protocol_version });
        let mut outstanding: Vec<usize> = Vec::new();
        let mut index = 0;
        let mut closed = false;
        for e in &c.events {
            match e {
                Captured::ClientLine { json: Some(v), t_us, .. } => match shape(v) {
                    Some(Shape::Request { method, .. }) => {
                        let i = index;
                        index += 1;
                        if method == "initialize" {
                            f.reqs[i].settled = true;
                            continue;
                        }
                        for &o in &outstanding {
                            f.reqs[o].background = true;
                            f.reqs[o].label.get_or_insert_with(|| format!("req-{}", o + 1));
                        }
                        self.steps.push(PlanStep::Request(i));
                        outstanding.push(i);
                    }
                    Some(Shape::Notification { method: "notifications/initialized", .. }) => {}
                    Some(Shape::Notification { method: "notifications/cancelled", params }) => {
                        let id = params.and_then(|p| p.get("requestId")).map(Value::to_string).unwrap_or_default();
                        if let Some(&i) = f.by_id.get(&id)
                            && let Some(pos) = outstanding.iter().position(|&o| o == i)
                        {
                            outstanding.remove(pos);
                            if f.reqs[i].background {
                                self.steps.push(PlanStep::Cancel(i));
                                self.steps.push(PlanStep::Await(i));
                            } else {
                                let waited = t_us.saturating_sub(f.reqs[i].t_us) as f64 / 1000.0 / speed;
                                f.reqs[i].timeout_ms = Some((waited.ceil() as u64).max(1));
                            }
                            f.reqs[i].settled = true;
                        }
                    }
                    Some(Shape::Notification { method, params }) => {
                        self.steps.push(PlanStep::Notify { method: method.into(), params: params.cloned() })
                    }
                    _ => {}
                },
                Captured::ServerLine { bytes, terminated: true, .. } => {
                    let Some(v) = json_of(bytes) else { continue };
                    if let Some(Shape::Response { id, .. }) = shape(&v)
                        && let Some(&i) = f.by_id.get(&id.to_string())
                        && let Some(pos) = outstanding.iter().position(|&o| o == i)
                    {
                        outstanding.remove(pos);
                        if f.reqs[i].background {
                            self.steps.push(PlanStep::Await(i));
                        }
                        f.reqs[i].settled = true;
                    }
                }
                Captured::StdinEof { .. } if !closed => {
                    // The client closed with requests in flight: they wait in the background,
                    // and `close` settles them.
                    for &o in &outstanding {
                        f.reqs[o].background = true;
                        f.reqs[o].label.get_or_insert_with(|| format!("req-{}", o + 1));
                    }
                    self.steps.push(PlanStep::Close);
                    for o in outstanding.drain(..) {
                        self.steps.push(PlanStep::Await(o));
                    }
                    closed = true;
                }
                _ => {}
            }
        }
        for o in outstanding.drain(..) {
            if f.reqs[o].background {
                self.steps.push(PlanStep::Await(o));
            }
        }
        if !closed {
            self.steps.push(PlanStep::Close);
        }
        // No initialize at all (2026-07-28): connecting put nothing on the wire and succeeded.
        let init_ok = f.reqs.iter().find(|r| r.method == "initialize").is_none_or(|r| r.answered == Some(true));
        self.outcomes.push((1, init_ok));
        for (n, s) in self.steps.iter().enumerate() {
            match s {
                PlanStep::Request(i) if !f.reqs[*i].background => {
                    self.outcomes.push((n + 1, f.reqs[*i].answered == Some(true) && f.reqs[*i].timeout_ms.is_none()))
                }
                PlanStep::Await(i) => {
                    self.outcomes.push((n + 1, f.reqs[*i].answered == Some(true) && f.reqs[*i].cancelled_at.is_none()))
                }
                _ => {}
            }
        }
    }

    fn render(&self, f: &Facts) -> Vec<String> {
        let mut out = Vec::new();
        for (n, s) in self.steps.iter().enumerate() {
            let mut t = String::new();
            let _ = match s {
                PlanStep::Connect { protocol_version } => {
                    let _ = writeln!(t, "  # 1: initialize and notifications/initialized");
                    let _ = writeln!(t, "  - op: connect");
                    match protocol_version {
                        Some(v) => writeln!(t, "    protocol_version: {}", q(v)),
                        None => Ok(()),
                    }
                }
                PlanStep::Request(i) => {
                    let r = &f.reqs[*i];
                    let _ = writeln!(t, "  # {}: client request {} at +{} ms", n + 1, i + 1, ms(r.t_us));
                    let _ = writeln!(t, "  - op: request\n    method: {}", q(&r.method));
                    if let Some(p) = r.params.as_ref().map(without_client_stamps) {
                        let _ = writeln!(t, "    params: {}", j(&p));
                    }
                    if let Some(ms) = r.timeout_ms {
                        let _ = writeln!(t, "    timeout_ms: {ms}");
                    }
                    match (&r.label, r.background) {
                        (Some(l), true) => writeln!(t, "    background: true\n    as: {l}"),
                        _ => Ok(()),
                    }
                }
                PlanStep::Await(i) => {
                    writeln!(t, "  - op: await\n    request: {}", f.reqs[*i].label.as_deref().unwrap_or(""))
                }
                PlanStep::Cancel(i) => {
                    writeln!(t, "  - op: cancel\n    request: {}", f.reqs[*i].label.as_deref().unwrap_or(""))
                }
                PlanStep::Notify { method, params } => {
                    let _ = writeln!(t, "  - op: notify\n    method: {}", q(method));
                    match params {
                        Some(p) => writeln!(t, "    params: {}", j(p)),
                        None => Ok(()),
                    }
                }
                PlanStep::Close => writeln!(t, "  - op: close"),
            };
            out.push(t);
        }
        out
    }
}

/// Writes the scenario for an HTTP recording (Streamable HTTP or legacy SSE; one
/// connection). The script answers each request as the upstream did: `expect` (labelled
/// when a stream follows), then `respond` with the status, session header and JSON body,
/// or `open_stream` + one `event` per SSE event (ids, retry, comments, delays) + `end_stream`
/// with how it ended; a GET is `expect_get`, a DELETE `expect_delete`; legacy SSE's
/// `endpoint` event is `endpoint`. The plan and the client-side checks are the stdio ones,
/// read from the JSON-RPC messages the bodies and events carried.
pub fn http(c: &ConnectionCapture, opts: &Options) -> String {
    let mut w = Writer { opts, out: String::new() };
    // The JSON-RPC view: POST bodies as client lines, JSON bodies and SSE data as server lines.
    let mut view = ConnectionCapture { transport: c.transport.clone(), source: c.source.clone(), ..Default::default() };
    let line = |v: &Value| Recorded::whole(v.to_string().as_bytes());
    for e in &c.events {
        match e {
            Captured::HttpRequest(WireEvent::HttpRequest { t_us, json: Some(v), .. }) => {
                for m in v.as_array().cloned().unwrap_or_else(|| vec![v.clone()]) {
                    view.events.push(Captured::ClientLine { t_us: *t_us, bytes: line(&m), json: Some(m.clone()) });
                }
            }
            Captured::HttpBody { t_us, json: Some(v), .. } => {
                view.events.push(Captured::ServerLine { t_us: *t_us, bytes: line(v), terminated: true })
            }
            Captured::SseEvent { t_us, data: Some(d), event, .. } if event.as_deref() != Some("endpoint") => {
                if let Ok(v) = serde_json::from_str::<Value>(d) {
                    view.events.push(Captured::ServerLine { t_us: *t_us, bytes: line(&v), terminated: true });
                }
            }
            _ => {}
        }
    }
    let mut f = facts(&view, 0);
    let mut plan = Plan::default();
    plan.build(&view, &mut f, opts.speed);
    let legacy = c.transport == "legacy-sse";
    // 2026-07-28 has no initialize: the revision is the first request's MCP-Protocol-Version.
    let stateless = c.events.iter().find_map(|e| match e {
        Captured::HttpRequest(r) => r.headers().and_then(|h| h.get("mcp-protocol-version")).map(String::as_str),
        _ => None,
    });
    let revision = f
        .init_result
        .as_ref()
        .and_then(|r| r.get("protocolVersion"))
        .and_then(Value::as_str)
        .or(stateless.filter(|v| *v == "2026-07-28" && f.init_params.is_none()))
        .unwrap_or(if legacy { "2024-11-05" } else { "2025-11-25" })
        .to_owned();
    let duration_us = c.events.last().map(Captured::t_us).unwrap_or(0);
    w.header(std::slice::from_ref(c), duration_us);
    w.line(format!("name: {}", opts.name));
    w.line(format!(
        "summary: {}",
        q(&format!(
            "A recorded {} session with {}: the server's side replayed, the client's side pinned.",
            c.transport, c.source
        ))
    ));
    w.preamble(&c.transport, &revision, duration_us);
    w.line("client:");
    for s in plan.render(&f) {
        w.out.push_str(&s);
    }
    w.line("server:");
    w.http_script(c);
    w.line("checks:");
    let facts_list = vec![f];
    w.checks(std::slice::from_ref(&view), &facts_list, &plan);
    if c.events.iter().any(|e| matches!(e, Captured::HttpRequest(r) if r.http_method() == Some("DELETE"))) {
        w.line("  # How it closed: the client ended its session with DELETE.");
        w.line("  - http: {http_method: DELETE}");
    }
    w.out
}

impl Writer<'_> {
    fn http_script(&mut self, c: &ConnectionCapture) {
        // Which exchange each event belongs to, and what kind of request opened it.
        let mut kind: HashMap<usize, (String, Option<String>)> = HashMap::new();
        let mut sse: Vec<usize> = Vec::new();
        for e in &c.events {
            match e {
                Captured::HttpRequest(WireEvent::HttpRequest { exchange, http_method, json, .. }) => {
                    let rpc = json.as_ref().and_then(|v| v.get("method")).and_then(Value::as_str).map(str::to_owned);
                    kind.insert(*exchange as usize, (http_method.clone(), rpc));
                }
                Captured::HttpResponse { exchange, headers, .. }
                    if headers.get("content-type").is_some_and(|t| t.starts_with("text/event-stream")) =>
                {
                    sse.push(*exchange)
                }
                _ => {}
            }
        }
        let stream_name = |x: usize, kind: &HashMap<usize, (String, Option<String>)>| match kind.get(&x) {
            Some((m, _)) if m == "GET" => format!("get-{x}"),
            _ => format!("stream-{x}"),
        };
        let last_get = kind.iter().filter(|(_, (m, _))| m == "GET").map(|(x, _)| *x).max();
        let mut last_us = 0;
        let mut pending_status: HashMap<usize, (u16, BTreeMap<String, String>)> = HashMap::new();
        for e in &c.events {
            match e {
                Captured::HttpRequest(WireEvent::HttpRequest { t_us, exchange, http_method: method, path, .. }) => {
                    let exchange = &(*exchange as usize);
                    self.line(format!("  # +{} ms, exchange {exchange}: {method} {path}", ms(*t_us)));
                    match (method.as_str(), kind.get(exchange).and_then(|k| k.1.clone())) {
                        ("GET", _) => {}
                        ("DELETE", _) => {}
                        (_, Some(rpc)) => {
                            self.line(format!("  - op: expect\n    method: {}", q(&rpc)));
                            if sse.contains(exchange) {
                                self.line(format!("    as: {}", stream_name(*exchange, &kind)));
                            }
                        }
                        (_, None) => self.line("  # (a body that is no JSON-RPC message: not awaited)"),
                    }
                    last_us = *t_us;
                }
                Captured::HttpResponse { t_us, exchange, status, headers } => {
                    let (m, _) = kind.get(exchange).cloned().unwrap_or_default();
                    let keep: BTreeMap<String, String> = headers
                        .iter()
                        .filter(|(k, _)| matches!(k.as_str(), "mcp-session-id" | "www-authenticate" | "location"))
                        .map(|(k, v)| (canonical_header(k), v.clone()))
                        .collect();
                    let hdrs = if keep.is_empty() {
                        String::new()
                    } else {
                        format!("\n    headers: {}", j(&serde_json::to_value(&keep).unwrap_or_default()))
                    };
                    self.delay(&mut last_us, *t_us);
                    if m == "GET" {
                        self.line(format!("  # +{} ms: the upstream answered the GET {status}", ms(*t_us)));
                        self.line(format!("  - op: expect_get\n    as: {}", stream_name(*exchange, &kind)));
                        if *status != 200 {
                            self.line(format!("    status: {status}"));
                        }
                        if !sse.contains(exchange) {
                            if let Some(ct) = headers.get("content-type") {
                                self.line(format!("    content_type: {}", q(ct)));
                            }
                            self.line("    close: true");
                            // The listener is a MAY: a replaying client need not send it.
                            if Some(*exchange) == last_get {
                                self.line("    optional: true");
                            }
                        }
                        if !hdrs.is_empty() {
                            self.line(hdrs.trim_start_matches('\n'));
                        }
                    } else if m == "DELETE" {
                        self.line(format!("  - op: expect_delete\n    status: {status}"));
                    } else if sse.contains(exchange) {
                        self.line(format!("  # +{} ms: the upstream opened a stream ({status})", ms(*t_us)));
                        self.line(format!("  - op: open_stream\n    to: {}", stream_name(*exchange, &kind)));
                        if *status != 200 {
                            self.line(format!("    status: {status}"));
                        }
                        if !hdrs.is_empty() {
                            self.line(hdrs.trim_start_matches('\n'));
                        }
                    } else {
                        pending_status.insert(*exchange, (*status, keep));
                        let bodyless = !c
                            .events
                            .iter()
                            .any(|b| matches!(b, Captured::HttpBody { exchange: x, .. } if x == exchange));
                        if bodyless && *status != 202 {
                            self.line(format!("  # +{} ms: the upstream answered {status} with no body", ms(*t_us)));
                            self.line(format!("  - op: respond\n    status: {status}{hdrs}"));
                        }
                    }
                }
                Captured::HttpBody { t_us, exchange, body, json } => {
                    let (status, keep) = pending_status.remove(exchange).unwrap_or((200, BTreeMap::new()));
                    let hdrs = if keep.is_empty() {
                        String::new()
                    } else {
                        format!("\n    headers: {}", j(&serde_json::to_value(&keep).unwrap_or_default()))
                    };
                    self.line(format!("  # +{} ms: the upstream's {status} body", ms(*t_us)));
                    self.line(format!("  - op: respond\n    status: {status}{hdrs}"));
                    match json {
                        Some(v) => self.line(format!("    json: {}", j(&with_id_placeholder(v)))),
                        None => self.line(format!("    text: {}", q(body.text.as_deref().unwrap_or("")))),
                    }
                }
                Captured::SseEvent { t_us, exchange, event, id, retry, data, comment } => {
                    self.delay(&mut last_us, *t_us);
                    self.line(format!("  # +{} ms, an SSE event on exchange {exchange}", ms(*t_us)));
                    if event.as_deref() == Some("endpoint") {
                        let uri = data.as_deref().unwrap_or("").to_owned();
                        let path = uri
                            .find("://")
                            .and_then(|i| uri[i + 3..].find('/').map(|p| uri[i + 3 + p..].to_owned()))
                            .unwrap_or(uri);
                        self.line(format!("  - op: endpoint\n    uri: {}", q(&path)));
                        continue;
                    }
                    self.line(format!("  - op: event\n    stream: {}", stream_name(*exchange, &kind)));
                    if let Some(c) = comment {
                        self.line(format!("    comment: {}", q(c)));
                    }
                    if let Some(ev) = event {
                        self.line(format!("    event: {}", q(ev)));
                    }
                    if let Some(i) = id {
                        self.line(format!("    id: {}", q(i)));
                    }
                    if let Some(r) = retry {
                        self.line(format!("    retry: {r}"));
                    }
                    match data.as_deref().map(|d| (d, serde_json::from_str::<Value>(d))) {
                        Some((_, Ok(v))) => self.line(format!("    json: {}", j(&with_id_placeholder(&v)))),
                        Some((d, Err(_))) => self.line(format!("    data: {}", q(d))),
                        None => {}
                    }
                }
                Captured::StreamEnd { t_us, exchange, how } if sse.contains(exchange) => {
                    self.delay(&mut last_us, *t_us);
                    if how == "client" {
                        self.line(format!("  # +{} ms: the client went away from stream {exchange}", ms(*t_us)));
                        continue;
                    }
                    self.line(format!("  # +{} ms: stream {exchange} ended: {how}", ms(*t_us)));
                    self.line(format!(
                        "  - op: end_stream\n    stream: {}\n    how: {how}",
                        stream_name(*exchange, &kind)
                    ));
                }
                _ => {}
            }
        }
    }
}

/// `Mcp-Session-Id` for `mcp-session-id`: headers as people write them.
fn canonical_header(lower: &str) -> String {
    lower
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// A response's `id` as the mock's `{id}` placeholder (the request being answered).
fn with_id_placeholder(v: &Value) -> Value {
    let mut v = v.clone();
    if v.get("method").is_none()
        && (v.get("result").is_some() || v.get("error").is_some())
        && let Some(id) = v.get_mut("id")
    {
        *id = Value::String("{id}".into());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(t_us: u64, exchange: usize, body: Value) -> Captured {
        let headers = [("mcp-protocol-version".to_string(), "2026-07-28".to_string())].into();
        let text = Recorded::whole(body.to_string().as_bytes());
        Captured::HttpRequest(WireEvent::HttpRequest {
            t_us,
            exchange: exchange as u64,
            http_method: "POST".into(),
            path: "/mcp".into(),
            headers,
            body: Some(text),
            json: Some(body),
        })
    }

    #[test]
    fn a_stateless_recording_speaks_2026_07_28_and_leaves_the_clients_stamps_to_it() {
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": "p1"});
        let call =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet", "_meta": meta}});
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}});
        let c = ConnectionCapture {
            transport: "http".into(),
            source: "http://127.0.0.1:1/mcp".into(),
            events: vec![
                request(1000, 1, call),
                Captured::HttpResponse { t_us: 2000, exchange: 1, status: 200, headers: BTreeMap::new() },
                Captured::HttpBody {
                    t_us: 2000,
                    exchange: 1,
                    body: Recorded::whole(answer.to_string().as_bytes()),
                    json: Some(answer),
                },
            ],
            redacted: BTreeMap::new(),
        };
        let text = http(&c, &Options { name: "stateless-session".into(), speed: 1.0 });
        for part in [
            "revision: 2026-07-28\n",
            "    params: {\"name\":\"greet\",\"_meta\":{\"progressToken\":\"p1\"}}\n",
            "  - {method: \"tools/call\", params: {\"name\":\"greet\"}}\n",
            "json: {\"jsonrpc\":\"2.0\",\"id\":\"{id}\",\"result\":{\"resultType\":\"complete\"}}",
            "  - outcome: {step: 1, ok: true}\n  - outcome: {step: 2, ok: true}\n",
        ] {
            assert!(text.contains(part), "{part:?} in {text}");
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("stateless-session.yaml");
        std::fs::write(&path, &text).expect("write");
        crate::load(&path).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
}
