//! The wire transcript of one run as the checks and the snapshot read it.
//!
//! It lives in the mock crate, beside the recorder, rather than in the harness: a mock run
//! by a person (`--record FILE`, [`crate::live`]) writes the same rendering a `.snap`
//! holds, and the mock cannot depend on the harness. The harness re-exports it as
//! `mcp_harness::transcript`.
//!
//! - [`Transcript`], [`Connection`] (this file) — what the mock recorded, per connection,
//!   plus a JSON-RPC view of HTTP records, so checks read every transport alike.
//! - [`render`] — the readable, normalised text that snapshots hold; `lanes` — how a
//!   connection's events split into lanes, and which are left out as timing.
//! - [`redact`] — [`Redactor`], the one place that makes text stable across runs and
//!   machines (ports, session ids, the run's temp dir, request ids, exchange numbers,
//!   client versions) and free of secrets (by the one policy, [`crate::secrets`]).

mod lanes;
pub mod redact;
pub mod render;

pub use redact::Redactor;

use mcp_scenario::wire::WireEvent;
use serde_json::Value;
use std::collections::HashMap;

/// The `method` of a JSON-RPC message, when it has one.
pub fn method_of(v: &Value) -> Option<&str> {
    v.get("method").and_then(Value::as_str)
}

/// The JSON-RPC messages one write of the mock carries, as the client reads them: the whole
/// text (a JSON body, one SSE event's data), else each line, a line read past a BOM and a
/// `data:` field name (a raw write may frame a message so), lines ending in LF, CRLF or CR.
pub fn messages_in(text: &str) -> Vec<Value> {
    let parse = |t: &str| serde_json::from_str::<Value>(t.trim()).ok();
    match parse(text) {
        Some(m) => vec![m],
        None => text
            .split(['\n', '\r'])
            .map(|l| l.trim_start_matches('\u{feff}'))
            .filter_map(|l| parse(l.strip_prefix("data:").unwrap_or(l)))
            .collect(),
    }
}

/// How many of the client messages among `events` (what the mock recorded) match `method` (JSON-RPC) and
/// `http_method` (then HTTP requests only), either of which may be absent: what a plan's
/// `wait_sent` step waits for. The drivers count the same way (`clients/README.md`).
pub fn count_sent<'a>(
    events: impl IntoIterator<Item = &'a WireEvent>,
    method: Option<&str>,
    http_method: Option<&str>,
) -> usize {
    let matches = |json: Option<&Value>| method.is_none() || json.and_then(method_of) == method;
    events
        .into_iter()
        .filter(|e| {
            let sent = match e.http_method() {
                Some(m) => http_method.is_none_or(|want| want == m),
                None => http_method.is_none() && matches!(e, WireEvent::FromClient { .. }),
            };
            sent && matches(e.json())
        })
        .count()
}

/// What the mock recorded on one connection (one stdio child, one HTTP mock process).
#[derive(Debug, Clone)]
pub struct Connection {
    number: usize,
    recorded: Vec<WireEvent>,
    /// The JSON-RPC view of HTTP records, with, for each of its events, the index of the
    /// record it comes from; `None` when the view is the record itself (a record of no HTTP
    /// exchange, every stdio one: no copy of each event).
    view: Option<(Vec<WireEvent>, Vec<usize>)>,
    upstream: usize,
}

impl Connection {
    /// A connection's records, numbered from 1.
    pub fn new(number: usize, recorded: Vec<WireEvent>) -> Self {
        let view = message_view(&recorded);
        Connection { number, recorded, view, upstream: 1 }
    }

    /// Which mock served it: 1, or 2 for nginx's second upstream (`via: nginx:
    /// second_upstream`).
    pub fn upstream(&self) -> usize {
        self.upstream
    }

    /// The connection's number (1-based).
    pub fn number(&self) -> usize {
        self.number
    }

    /// Whether a stdio client's probe copy made it: a process that sent nothing but
    /// `server/discover` and ran no script (see `stdio::run::Unbound`); listed after the
    /// scripted connections.
    pub fn is_probe(&self) -> bool {
        self.events()
            .iter()
            .any(|e| matches!(e, WireEvent::Note { text, .. } if text.starts_with(crate::stdio::run::PROBE_NOTE)))
    }

    /// The events exactly as the mock recorded them (what the snapshot renders).
    pub fn recorded(&self) -> &[WireEvent] {
        &self.recorded
    }

    /// The recorded events plus, for HTTP records, the JSON-RPC messages they carry as
    /// `FromClient` (POST bodies) and `ToClient` (JSON bodies, SSE `data:` lines, refusals)
    /// events, in wire order. What checks read.
    pub fn events(&self) -> &[WireEvent] {
        self.view.as_ref().map_or(&self.recorded, |(view, _)| view)
    }

    /// The index in [`Connection::recorded`] of the record that [`Connection::events`]'
    /// `view_index`-th event comes from (an HTTP request for the message its body carries):
    /// how a verdict points at the event a report draws.
    pub fn recorded_index(&self, view_index: usize) -> Option<usize> {
        match &self.view {
            Some((_, origin)) => origin.get(view_index).copied(),
            None => (view_index < self.recorded.len()).then_some(view_index),
        }
    }

    /// The client's JSON messages on this connection, in wire order.
    pub fn client_messages(&self) -> impl Iterator<Item = &Value> {
        self.events().iter().filter_map(WireEvent::client_message)
    }

    /// The session id the mock issued on this connection (its first response carrying
    /// `Mcp-Session-Id`), or empty.
    pub fn session_id(&self) -> String {
        self.recorded.iter().find_map(WireEvent::issued_session_id).map(str::to_string).unwrap_or_default()
    }

    /// The pid the mock recorded when it started serving this connection.
    pub fn mock_pid(&self) -> Option<u32> {
        self.recorded.iter().find_map(WireEvent::started_pid)
    }

    /// Whether the mock recorded its own exit.
    pub fn mock_exited(&self) -> bool {
        self.recorded.iter().any(WireEvent::is_exit)
    }
}

/// Every connection of one run, in order.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    connections: Vec<Connection>,
    client_hop: Vec<WireEvent>,
}

impl Transcript {
    /// The transcript of the records read back from a run dir (one list per connection).
    pub fn new(recorded: Vec<Vec<WireEvent>>) -> Self {
        crate::tally::transcript_built();
        Transcript {
            connections: recorded.into_iter().enumerate().map(|(i, c)| Connection::new(i + 1, c)).collect(),
            client_hop: Vec::new(),
        }
    }

    /// Adds the connections nginx's second upstream recorded, numbered after the first's.
    /// Checks read them like the first's (its script must run to its end too).
    pub fn with_second_upstream(mut self, recorded: Vec<Vec<WireEvent>>) -> Self {
        for events in recorded {
            let mut c = Connection::new(self.connections.len() + 1, events);
            c.upstream = 2;
            self.connections.push(c);
        }
        self
    }

    /// Adds the client's hop as the fault proxy recorded it (`via:`): what the client sent
    /// and got, before the proxies changed it. The snapshot shows it; checks read the
    /// mock's side.
    pub fn with_client_hop(mut self, events: Vec<WireEvent>) -> Self {
        self.client_hop = events;
        self
    }

    /// The client's hop (empty without `via:`).
    pub fn client_hop(&self) -> &[WireEvent] {
        &self.client_hop
    }

    /// The connections, in order.
    pub fn connections(&self) -> &[Connection] {
        &self.connections
    }

    /// Connection `n` (1-based), if it started.
    pub fn connection(&self, n: usize) -> Option<&Connection> {
        n.checked_sub(1).and_then(|i| self.connections.get(i))
    }

    /// Every viewed event of every connection, in connection order.
    pub fn events(&self) -> impl Iterator<Item = &WireEvent> {
        self.connections.iter().flat_map(Connection::events)
    }

    /// The client's JSON messages on every connection, in connection then wire order.
    pub fn client_messages(&self) -> impl Iterator<Item = &Value> {
        self.connections.iter().flat_map(Connection::client_messages)
    }

    /// The client's JSON messages on every connection in the order the client sent them:
    /// by wall-clock time where every connection's record says when its clock started (a
    /// stdio client's probe copy, listed after the scripted connections, usually came
    /// first), else as [`Transcript::client_messages`].
    pub fn client_messages_in_time(&self) -> Vec<&Value> {
        let mut timed = Vec::new();
        for (c, connection) in self.connections.iter().enumerate() {
            let origin = connection.recorded.iter().find_map(WireEvent::origin_unix_us);
            let Some(origin) = origin else { return self.client_messages().collect() };
            for (i, e) in connection.events().iter().enumerate() {
                if let (Some(t_us), Some(v)) = (e.t_us(), e.client_message()) {
                    timed.push((origin + t_us, c, i, v));
                }
            }
        }
        timed.sort_by_key(|(t, c, i, _)| (*t, *c, *i));
        timed.into_iter().map(|(_, _, _, v)| v).collect()
    }

    /// The wire id a script label stands for (a client request the script expected with
    /// `as:`, or a server-to-client request it sent), on any connection.
    pub fn labelled_id(&self, label: &str) -> Option<&Value> {
        self.events().find_map(|e| match e {
            WireEvent::Labelled { label: l, id, .. } if l == label => Some(id),
            _ => None,
        })
    }

    /// The run's one redactor, learnt from what the mock recorded on every connection and
    /// the run's directory: what the rendering and every report of the run go through.
    pub fn redactor(&self, run_dir: &std::path::Path) -> Redactor {
        Redactor::for_run(self.connections.iter().flat_map(Connection::recorded), run_dir)
    }

    /// Every connection's record, in connection order, as the reports carry it
    /// ([`Redactor::event`] on each event), made of the transcript's own events rather than
    /// copies: the last use of a run's transcript.
    pub fn into_redacted_wire(self, redactor: &Redactor) -> Vec<Vec<WireEvent>> {
        self.connections.into_iter().map(|c| c.recorded.into_iter().map(|e| redactor.redacted(e)).collect()).collect()
    }

    /// The pids the mock recorded as it started serving each connection.
    pub fn mock_pids(&self) -> impl Iterator<Item = u32> {
        self.connections.iter().flat_map(|c| c.recorded()).filter_map(WireEvent::started_pid)
    }
}

/// A connection's events plus, for HTTP records, the JSON-RPC they carry
/// ([`WireEvent::carried_message`]).
///
/// Exchanges with the authorization server carry no MCP message: they stay out of the
/// JSON-RPC view (their records are rendered as they are). A POST refused with a non-2xx
/// status ends its request's life on the wire (the client may re-send it with the same id,
/// e.g. after an auth refresh), so the refusal is viewed as a `ToClient` error for that id
/// (and a body it came with is not viewed). `None` when the view would be the events
/// themselves: a record of no HTTP exchange.
fn message_view(events: &[WireEvent]) -> Option<(Vec<WireEvent>, Vec<usize>)> {
    // Only an HTTP exchange's events carry messages or refusals to add.
    if !events.iter().any(|e| e.exchange().is_some()) {
        return None;
    }
    let mut out = Vec::with_capacity(events.len());
    let mut origin = Vec::with_capacity(events.len());
    let mut request_ids: HashMap<u64, Value> = HashMap::new();
    let mut oauth: std::collections::HashSet<u64> = std::collections::HashSet::new();
    for (i, e) in events.iter().enumerate() {
        out.push(e.clone());
        match e {
            WireEvent::HttpRequest { exchange, path, .. } if crate::oauth::is_oauth_path(path) => {
                oauth.insert(*exchange);
            }
            WireEvent::HttpResponse { exchange, .. } if oauth.contains(exchange) => {}
            WireEvent::HttpResponse { t_us, exchange, status, .. } if !(200..300).contains(status) => {
                if let Some(id) = request_ids.remove(exchange) {
                    let refusal = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": 0, "message": format!("HTTP {status}")}});
                    out.push(WireEvent::written_to_client(*t_us, &refusal.to_string(), "refused"));
                }
            }
            _ => {
                let request_id = e.json().filter(|v| v.get("method").is_some()).and_then(|v| v.get("id"));
                if let (Some("POST"), Some(x), Some(id)) = (e.http_method(), e.exchange(), request_id) {
                    request_ids.insert(x, id.clone());
                }
                out.extend(e.carried_message());
            }
        }
        origin.resize(out.len(), i);
    }
    Some((out, origin))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::Path;

    /// A POST to `/mcp` carrying `json`, as the HTTP mock records it.
    fn post(headers: BTreeMap<String, String>, json: Value) -> WireEvent {
        WireEvent::HttpRequest {
            t_us: 1,
            exchange: 1,
            http_method: "POST".into(),
            path: "/mcp".into(),
            headers,
            body: None,
            json: Some(json),
        }
    }

    #[test]
    fn messages_across_processes_are_ordered_by_the_mocks_clocks() {
        let from = |t_us: u64, method: &str| WireEvent::FromClient {
            t_us,
            bytes: mcp_scenario::wire::Recorded::of(method.as_bytes()),
            json: Some(serde_json::json!({"jsonrpc": "2.0", "id": t_us, "method": method})),
            terminated: true,
        };
        let started = |origin: Option<u64>| WireEvent::Started { pid: 1, stderr_shared: false, origin_unix_us: origin };
        let methods = |t: &Transcript| -> Vec<String> {
            t.client_messages_in_time().iter().filter_map(|v| v["method"].as_str().map(String::from)).collect()
        };
        // The session (connection 1) started after the probe copy (connection 2) had asked.
        let session = vec![started(Some(5_000)), from(10, "initialize")];
        let probe = vec![started(Some(1_000)), from(10, "server/discover")];
        assert_eq!(methods(&Transcript::new(vec![session.clone(), probe])), ["server/discover", "initialize"]);
        // Old records without the clock: connection order.
        let old = vec![started(None), from(10, "server/discover")];
        assert_eq!(methods(&Transcript::new(vec![session, old])), ["initialize", "server/discover"]);
    }

    #[test]
    fn messages_in_a_write_are_read_as_a_client_reads_them() {
        let m = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(messages_in(&m.to_string()), std::slice::from_ref(&m));
        assert_eq!(messages_in(&format!("{m}\r\n{m}\r")), [m.clone(), m.clone()]);
        assert_eq!(messages_in(&format!("\u{feff}data: {m}\n\n")), [m]);
        assert!(messages_in("junk\n").is_empty());
    }

    #[test]
    fn http_records_are_viewed_as_messages() {
        let json = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
        let request = post(BTreeMap::new(), json.clone());
        let refused = WireEvent::HttpResponse {
            t_us: 2,
            exchange: 1,
            status: 401,
            headers: BTreeMap::new(),
            body: None,
            json: None,
            why: "require_auth".into(),
        };
        let t = Transcript::new(vec![vec![request, refused]]);
        let c = t.connection(1).expect("one connection");
        assert_eq!(c.client_messages().collect::<Vec<_>>(), [&json]);
        assert!(matches!(c.events().last(), Some(WireEvent::ToClient { why, .. }) if why == "refused"));
        assert_eq!(c.recorded().len(), 2);
        assert_eq!((c.events().len(), c.recorded_index(1), c.recorded_index(3)), (4, Some(0), Some(1)));
        assert!(t.connection(0).is_none() && t.connection(2).is_none());
    }

    #[test]
    fn the_redacted_wire_is_each_recorded_event_redacted() {
        let mut headers = BTreeMap::new();
        headers.insert("authorization".to_string(), "Bearer tok-SECRET-42".to_string());
        let json = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"apiKey": "k-SECRET-42"}});
        let request = post(headers, json);
        let stdio = vec![
            WireEvent::Listening { port: 4242 },
            WireEvent::written_to_client(2, r#"{"note":"127.0.0.1:4242 k-SECRET-42"}"#, "reply"),
        ];
        let t = Transcript::new(vec![vec![request], stdio]);
        let redactor = t.redactor(Path::new("/nowhere"));
        let each: Vec<Vec<WireEvent>> =
            t.connections().iter().map(|c| c.recorded().iter().map(|e| redactor.event(e)).collect()).collect();
        let wire = t.into_redacted_wire(&redactor);
        assert_eq!(wire, each);
        let shown = format!("{wire:?}");
        assert!(!shown.contains("SECRET") && !shown.contains("127.0.0.1:4242"), "{shown}");
    }

    #[test]
    fn a_record_of_no_http_exchange_is_its_own_view() {
        let line = |t_us: u64| WireEvent::FromClient {
            t_us,
            bytes: mcp_scenario::wire::Recorded::of(b"{}"),
            json: Some(serde_json::json!({})),
            terminated: true,
        };
        let recorded = vec![line(1), WireEvent::written_to_client(2, "{}", "reply"), line(3)];
        let t = Transcript::new(vec![recorded.clone()]);
        let c = t.connection(1).expect("one connection");
        assert_eq!((c.events(), c.recorded()), (recorded.as_slice(), recorded.as_slice()));
        assert_eq!((c.recorded_index(2), c.recorded_index(3)), (Some(2), None));
    }
}
