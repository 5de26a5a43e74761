//! The HTTP step engine: runs one connection's part of the server script, in order, against
//! what the request handlers deliver. Requests the script expects are held open until a
//! step answers them (`reply`, `respond`, `raw_response`, `open_stream`, `expect_get`…);
//! everything else was already answered by the handlers' defaults.

use super::Flavour;
use super::raw::RawPlan;
use super::shared::{AuthRule, Conn, DELETE, GET, Inbound, Shared, StreamHandle, lock};
use super::sse::{self, SseEvent};
use bytes::Bytes;
use mcp_scenario::Revision;
use mcp_scenario::payload;
use mcp_scenario::script::{LineEnd, ServerStep, SocketEnd, StreamEnd};
use mcp_scenario::wire::{Recorded, WireEvent};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// A message the script consumed, and whether/how it has been answered.
struct Held {
    label: Option<String>,
    inbound: Inbound,
    /// The stream opened in answer to it, if any.
    stream: Option<String>,
    /// Keep that stream open after the reply.
    keep_open: bool,
}

struct Run {
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    held: Vec<Held>,
    /// Open streams, oldest first; the last is the current one.
    streams: Vec<StreamHandle>,
    server_ids: HashMap<String, Value>,
}

/// Runs connection `conn`'s steps, then parks (holding unanswered requests and open GET
/// streams) until the process ends.
pub async fn run(shared: Arc<Shared>, conn: Arc<Conn>, steps: Vec<ServerStep>) {
    let mut run = Run { shared, conn, held: Vec::new(), streams: Vec::new(), server_ids: HashMap::new() };
    let total = steps.len();
    for (i, step) in steps.iter().enumerate() {
        run.progress(i + 1, total, false);
        if let ServerStep::Stall = step {
            run.progress(i + 1, total, true);
            std::future::pending::<()>().await;
        }
        run.step(step, steps.get(i + 1)).await;
    }
    run.progress(total, total, true);
    // Reply streams end with the script; the GET listener stays (it is long-lived).
    for s in std::mem::take(&mut run.streams) {
        if s.is_get {
            run.streams.push(s);
        } else {
            run.shared.end_stream(run.conn.index, &s, StreamEnd::Clean, None);
        }
    }
    std::future::pending::<()>().await;
}

impl Run {
    fn n(&self) -> usize {
        self.conn.index
    }

    fn progress(&self, reached: usize, total: usize, finished: bool) {
        self.shared.record(self.n(), &WireEvent::Script { reached, total, finished });
    }

    fn legacy(&self) -> bool {
        self.shared.flavour == Flavour::LegacySse
    }

    /// Waits for a message with `key`, answering it at once with 202 when it needs no
    /// scripted answer: notifications and responses, and every legacy POST, unless the
    /// next step (`respond` / `raw_response`) answers it.
    async fn consume(&mut self, key: &str, label: Option<String>, next: Option<&ServerStep>) -> usize {
        let mut inbound = self.conn.next(key).await;
        let is_request =
            inbound.message.get("id").is_some_and(|id| !id.is_null()) && inbound.message.get("method").is_some();
        let answered_next = match next {
            Some(ServerStep::Respond { to, .. }) | Some(ServerStep::RawResponse { to, .. }) => {
                to.is_none() || *to == label
            }
            _ => false,
        };
        let http_message = key != GET && key != DELETE;
        if http_message
            && (self.legacy() || !is_request)
            && !answered_next
            && let Some(tx) = inbound.reply.take()
        {
            let _ = tx.send(self.shared.respond(self.n(), inbound.exchange, 202, &[], Bytes::new(), "accepted"));
        }
        if let (Some(l), Some(id)) = (&label, inbound.message.get("id")) {
            self.shared
                .record(self.n(), &WireEvent::Labelled { label: l.clone(), id: id.clone(), method: key.to_string() });
        }
        self.held.push(Held { label, inbound, stream: None, keep_open: false });
        self.held.len() - 1
    }

    fn target(&self, to: &Option<String>) -> Option<usize> {
        match to {
            Some(l) => self.held.iter().rposition(|h| h.label.as_deref() == Some(l.as_str())),
            None => self.held.iter().rposition(|h| h.inbound.key != GET && h.inbound.key != DELETE),
        }
    }

    fn stream(&self, name: &Option<String>) -> Option<StreamHandle> {
        match name {
            Some(l) => self.streams.iter().rev().find(|s| s.label == *l).cloned(),
            None => self.streams.last().cloned(),
        }
    }

    fn add_stream(&mut self, s: StreamHandle) {
        *lock(&self.conn.current_stream) = Some(s.clone());
        self.streams.push(s);
    }

    fn drop_stream(&mut self, exchange: u64) {
        self.streams.retain(|s| s.exchange != exchange);
        *lock(&self.conn.current_stream) = self.streams.last().cloned();
    }

    /// Writes a JSON-RPC message on `stream` (or the current stream) as an SSE event.
    fn send_message(&self, stream: Option<StreamHandle>, message: &Value, why: &str) {
        let Some(s) = stream.or_else(|| self.stream(&None)) else {
            self.shared.note(self.n(), format!("{why}: no open stream to write on; nothing sent"));
            return;
        };
        let name = lock(&self.conn.message_event).clone();
        self.shared.write(self.n(), &s, sse::message(&name, message), why);
    }

    /// Answers a held request with a JSON-RPC message: on its own stream when one is open,
    /// as the POST's JSON body when the POST is still waiting, else on the current stream.
    fn answer(&mut self, index: usize, message: &Value, extra: &[(String, String)], why: &str) {
        let n = self.n();
        let own = self.held[index].stream.clone().and_then(|l| self.stream(&Some(l)));
        if let Some(s) = own {
            self.send_message(Some(s.clone()), message, why);
            if !self.held[index].keep_open {
                self.shared.end_stream(n, &s, StreamEnd::Clean, None);
                self.drop_stream(s.exchange);
            }
            return;
        }
        let held = &mut self.held[index];
        if let Some(tx) = held.inbound.reply.take() {
            let _ = tx.send(self.shared.respond_json(n, held.inbound.exchange, 200, message, extra, why));
            return;
        }
        self.send_message(None, message, why);
    }

    async fn step(&mut self, step: &ServerStep, next: Option<&ServerStep>) {
        let n = self.n();
        match step {
            ServerStep::Handshake { protocol_version, capabilities, session, session_id } => {
                let i = self.consume("initialize", None, None).await;
                let version = protocol_version.clone().unwrap_or_else(|| self.shared.revision.as_str().to_string());
                let result = payload::initialize_result(&version, capabilities.as_ref());
                let id = self.held[i].inbound.message.get("id").cloned().unwrap_or(Value::Null);
                let stateful = matches!(
                    self.shared.revision,
                    Revision::R2025_03_26 | Revision::R2025_06_18 | Revision::R2025_11_25
                );
                let mut extra = Vec::new();
                if *session && stateful && !self.legacy() {
                    let sid = session_id.clone().unwrap_or_else(fresh_session_id);
                    self.shared.issue_session(&self.conn, &sid);
                    extra.push(("mcp-session-id".to_string(), sid));
                }
                self.answer(i, &json!({"jsonrpc": "2.0", "id": id, "result": result}), &extra, "reply initialize");
                self.consume("notifications/initialized", None, None).await;
            }
            ServerStep::Expect { method, label } => {
                self.consume(method, label.clone(), next).await;
            }
            ServerStep::Reply { to, result, error, wrong_id, pad_to, .. } => {
                let Some(i) = self.target(to) else {
                    return self.shared.note(n, "reply: no expected request to answer; nothing sent");
                };
                let id = self.held[i].inbound.message.get("id").cloned().unwrap_or(Value::Null);
                let line = payload::reply_line(
                    payload::reply_id(&id, *wrong_id),
                    result.as_ref(),
                    error.as_ref(),
                    *pad_to,
                    LineEnd::Lf,
                );
                let message: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
                self.answer(i, &message, &[], "reply");
            }
            ServerStep::Respond { to, status, headers, content_type, json, text, generate } => {
                let Some(i) = self.target(to) else {
                    return self.shared.note(n, "respond: no expected request to answer; nothing sent");
                };
                let mut hs: Vec<(String, String)> = Vec::new();
                let (body, default_type) = match (json, text, generate) {
                    (Some(j), _, _) => (serde_json::to_vec(j).unwrap_or_default(), Some("application/json")),
                    (None, Some(t), _) => (self.shared.expand(t, n).into_bytes(), Some("text/plain")),
                    (None, None, Some(g)) => (payload::generated(g).unwrap_or_default(), Some("text/plain")),
                    (None, None, None) => (Vec::new(), None),
                };
                if let Some(ct) = content_type.as_deref().or(default_type) {
                    hs.push(("content-type".into(), ct.into()));
                }
                hs.extend(headers.iter().map(|(k, v)| (k.clone(), self.shared.expand(v, n))));
                let held = &mut self.held[i];
                match held.inbound.reply.take() {
                    Some(tx) => {
                        let _ = tx.send(self.shared.respond(
                            n,
                            held.inbound.exchange,
                            *status,
                            &hs,
                            Bytes::from(body),
                            "respond",
                        ));
                    }
                    None => self.shared.note(n, "respond: that request was already answered; nothing sent"),
                }
            }
            ServerStep::RawResponse { to, chunks, chunk_delay_ms, then, .. } => {
                let Some(i) = self.target(to) else {
                    return self.shared.note(n, "raw_response: no expected request to answer; nothing sent");
                };
                let bytes = raw_bytes(step);
                let mut pieces = VecDeque::new();
                let mut rest: &[u8] = &bytes;
                for size in chunks {
                    let (head, tail) = rest.split_at((*size).min(rest.len()));
                    pieces.push_back(Bytes::copy_from_slice(head));
                    rest = tail;
                }
                if !rest.is_empty() {
                    pieces.push_back(Bytes::copy_from_slice(rest));
                }
                let held = &mut self.held[i];
                let Some(tx) = held.inbound.reply.take() else {
                    return self.shared.note(n, "raw_response: that request was already answered; nothing sent");
                };
                let exchange = held.inbound.exchange;
                self.shared.record(
                    n,
                    &WireEvent::StreamWrite {
                        t_us: self.shared.journal.now_us(),
                        exchange,
                        bytes: Recorded::of(&bytes),
                        why: "raw_response".into(),
                    },
                );
                let how = match then {
                    SocketEnd::Close => "raw: close",
                    SocketEnd::Reset => "raw: reset",
                    SocketEnd::Stall => "raw: stall",
                };
                self.shared
                    .record(n, &WireEvent::StreamEnd { t_us: self.shared.journal.now_us(), exchange, how: how.into() });
                held.inbound.socket.arm(RawPlan { pieces, delay: Duration::from_millis(*chunk_delay_ms), then: *then });
                // Hyper writes this placeholder; the socket wrapper swallows it.
                let _ = tx.send(http::Response::new(super::body::MockBody::empty()));
            }
            ServerStep::OpenStream { to, label, status, headers, content_type, keep_open } => {
                let Some(i) = self.target(to) else {
                    return self.shared.note(n, "open_stream: no expected request to answer; nothing sent");
                };
                let name = label.clone().or_else(|| self.held[i].label.clone()).unwrap_or_else(|| "post".into());
                let mut hs = vec![(
                    "content-type".to_string(),
                    content_type.clone().unwrap_or_else(|| "text/event-stream".into()),
                )];
                hs.push(("cache-control".into(), "no-cache".into()));
                hs.extend(headers.iter().map(|(k, v)| (k.clone(), self.shared.expand(v, n))));
                let held = &mut self.held[i];
                let Some(tx) = held.inbound.reply.take() else {
                    return self.shared.note(n, "open_stream: that request was already answered; nothing sent");
                };
                let (response, handle) = self.shared.open_stream(
                    n,
                    held.inbound.exchange,
                    held.inbound.socket.clone(),
                    *status,
                    &hs,
                    name.clone(),
                    false,
                    "open_stream",
                );
                held.stream = Some(name);
                held.keep_open = *keep_open;
                let _ = tx.send(response);
                self.add_stream(handle);
            }
            ServerStep::Event { stream, comment, event, id, retry, data, json, line_end } => {
                let Some(s) = self.stream(stream) else {
                    return self.shared.note(n, "event: no open stream to write on; nothing sent");
                };
                let json_text = json.as_ref().map(|j| serde_json::to_string(j).unwrap_or_default());
                let e = SseEvent {
                    comment: comment.as_deref(),
                    event: event.as_deref(),
                    id: id.as_deref(),
                    retry: *retry,
                    data: data.as_deref().or(json_text.as_deref()),
                };
                self.shared.write(n, &s, sse::event(&e, *line_end), "event");
            }
            ServerStep::Send { chunks, chunk_delay_ms, .. } => {
                let Some(s) = self.stream(&None) else {
                    return self.shared.note(n, "send: no open stream to write on; nothing sent");
                };
                let bytes = payload::send_bytes(step).unwrap_or_default();
                let mut rest: &[u8] = &bytes;
                for size in chunks {
                    let (head, tail) = rest.split_at((*size).min(rest.len()));
                    self.shared.write(n, &s, head.to_vec(), "send");
                    rest = tail;
                    if *chunk_delay_ms > 0 {
                        tokio::time::sleep(Duration::from_millis(*chunk_delay_ms)).await;
                    }
                }
                if !rest.is_empty() {
                    self.shared.write(n, &s, rest.to_vec(), "send");
                }
            }
            ServerStep::EndStream { stream, how, partial } => {
                let Some(s) = self.stream(stream) else {
                    return self.shared.note(n, "end_stream: no open stream; nothing to end");
                };
                let partial = partial.clone().unwrap_or_else(|| "data: {\"jsonrpc\":\"2.0\",".into());
                self.shared.end_stream(n, &s, *how, Some(&partial));
                self.drop_stream(s.exchange);
            }
            ServerStep::Notify { method, params } => {
                let mut m = json!({"jsonrpc": "2.0", "method": method});
                if let Some(p) = params {
                    m["params"] = p.clone();
                }
                self.send_message(None, &m, "notify");
            }
            ServerStep::Request { method, params, label } => {
                let id = json!(format!("srv-{}", self.server_ids.len() + 1));
                self.server_ids.insert(label.clone(), id.clone());
                self.shared
                    .record(n, &WireEvent::Labelled { label: label.clone(), id: id.clone(), method: method.clone() });
                let mut m = json!({"jsonrpc": "2.0", "id": id, "method": method});
                if let Some(p) = params {
                    m["params"] = p.clone();
                }
                self.send_message(None, &m, "request");
            }
            ServerStep::ExpectResponse { to } => {
                let id = self.server_ids.get(to).cloned().unwrap_or(Value::Null);
                self.conn.answered(&id).await;
            }
            ServerStep::ExpectGet { label, status, headers, content_type, text, close } => {
                let i = self.consume(GET, None, None).await;
                let ct = content_type.clone().unwrap_or_else(|| "text/event-stream".into());
                let is_sse = ct.starts_with("text/event-stream");
                let mut hs = Vec::new();
                if (200..300).contains(status) && (is_sse || content_type.is_some()) {
                    hs.push(("content-type".to_string(), ct));
                }
                if is_sse && (200..300).contains(status) {
                    hs.push(("cache-control".into(), "no-cache".into()));
                }
                hs.extend(headers.iter().map(|(k, v)| (k.clone(), self.shared.expand(v, n))));
                let held = &mut self.held[i];
                let Some(tx) = held.inbound.reply.take() else { return };
                let exchange = held.inbound.exchange;
                if (200..300).contains(status) && is_sse && !close {
                    let name = label.clone().unwrap_or_else(|| "get".into());
                    let (response, handle) = self.shared.open_stream(
                        n,
                        exchange,
                        held.inbound.socket.clone(),
                        *status,
                        &hs,
                        name,
                        true,
                        "expect_get",
                    );
                    let _ = tx.send(response);
                    self.add_stream(handle);
                } else {
                    let body = text.as_deref().map(|t| self.shared.expand(t, n)).unwrap_or_default();
                    let _ = tx.send(self.shared.respond(n, exchange, *status, &hs, Bytes::from(body), "expect_get"));
                    if *close && is_sse {
                        self.shared.record(
                            n,
                            &WireEvent::StreamEnd { t_us: self.shared.journal.now_us(), exchange, how: "clean".into() },
                        );
                    }
                }
            }
            ServerStep::ExpectDelete { status, hang } => {
                let i = self.consume(DELETE, None, None).await;
                if *hang {
                    return self.shared.note(n, "expect_delete: the DELETE is left unanswered (hang)");
                }
                let held = &mut self.held[i];
                if let Some(tx) = held.inbound.reply.take() {
                    let _ = tx.send(self.shared.respond(
                        n,
                        held.inbound.exchange,
                        *status,
                        &[],
                        Bytes::new(),
                        "expect_delete",
                    ));
                }
                if (200..300).contains(status) {
                    self.shared.expire_session(&self.conn);
                }
            }
            ServerStep::ExpireSession => self.shared.expire_session(&self.conn),
            ServerStep::RequireAuth { token, status, www_authenticate, text } => self.shared.require_auth(AuthRule {
                token: token.clone(),
                status: *status,
                www_authenticate: www_authenticate.clone().unwrap_or_else(|| "Bearer error=\"invalid_token\"".into()),
                text: text.clone().unwrap_or_default(),
            }),
            ServerStep::ReplyAlways { method, result, error } => {
                let answer = match error {
                    Some(e) => json!({"error": e}),
                    None => json!({"result": result.clone().unwrap_or_else(|| json!({}))}),
                };
                self.shared.add_rule(method, &answer);
            }
            ServerStep::MessageEvent { name } => *lock(&self.conn.message_event) = name.clone(),
            ServerStep::Endpoint { uri } => {
                let uri = self.shared.expand(uri.as_deref().unwrap_or("/message?session_id={connection}"), n);
                let Some(s) = self.stream(&None) else {
                    return self.shared.note(n, "endpoint: no open stream to write on; nothing sent");
                };
                let e = SseEvent { event: Some("endpoint"), data: Some(&uri), ..SseEvent::default() };
                self.shared.write(n, &s, sse::event(&e, mcp_scenario::script::SseLineEnd::Lf), "endpoint");
            }
            ServerStep::Delay { ms } => tokio::time::sleep(Duration::from_millis(*ms)).await,
            ServerStep::Exit { code, signal } => {
                self.shared.record(
                    n,
                    &WireEvent::Exit {
                        t_us: self.shared.journal.now_us(),
                        code: *code,
                        signal: signal.clone(),
                        why: "script".into(),
                    },
                );
                self.shared.journal.flush(Duration::from_secs(2));
                match signal.as_deref().and_then(mcp_scenario::signals::by_name) {
                    Some(sig) => {
                        let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), sig);
                        std::process::exit(128 + sig as i32)
                    }
                    None => std::process::exit(code.unwrap_or(0)),
                }
            }
            ServerStep::Stall | ServerStep::NewConnection => {}
            ServerStep::Stderr { .. }
            | ServerStep::StopReading
            | ServerStep::IgnoreSigterm
            | ServerStep::IgnoreStdinEof
            | ServerStep::ExpectEof => {
                self.shared.note(n, format!("{}: a stdio-only step; does nothing over HTTP", op_name(step)));
            }
        }
    }
}

fn op_name(step: &ServerStep) -> String {
    serde_json::to_value(step)
        .ok()
        .and_then(|v| v.get("op").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default()
}

/// The bytes of a `raw_response` step.
fn raw_bytes(step: &ServerStep) -> Vec<u8> {
    let ServerStep::RawResponse { text, hex, base64, .. } = step else { return Vec::new() };
    let as_send = ServerStep::Send {
        text: text.clone(),
        hex: hex.clone(),
        base64: base64.clone(),
        json: None,
        generate: None,
        chunks: Vec::new(),
        chunk_delay_ms: 0,
    };
    payload::send_bytes(&as_send).unwrap_or_default()
}

/// A session id in the shape real servers use (clients must not assume any shape).
fn fresh_session_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    let a = h.finish();
    h.write_u64(a);
    format!("{:016x}{:016x}", a, h.finish())
}
