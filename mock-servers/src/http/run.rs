//! What an op's `run_http` works with ([`HttpRun`]): one connection's script state —
//! the messages it consumed and how they were answered, its open streams, its
//! server-to-client request ids — and the moves ops are made of: consume a message, find
//! the one to answer, answer it, write on a stream.

use super::conn::{Conn, Inbound, ReplyTx, StreamHandle, is_http_only};
use super::flavour::Flavour;
use super::shared::Shared;
use super::sse;
use crate::sync::lock;
use bytes::Bytes;
use mcp_scenario::script::StreamEnd;
use mcp_scenario::wire::WireEvent;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// A message the script consumed, and whether/how it has been answered.
pub struct Held {
    /// Its label (`expect … as:`).
    pub label: Option<String>,
    /// The message and the way to answer it.
    pub inbound: Inbound,
    /// The stream opened in answer to it, if any.
    pub stream: Option<String>,
    /// Keep that stream open after the reply.
    pub keep_open: bool,
}

/// One connection's script state.
pub struct HttpRun {
    /// The mock.
    pub shared: Arc<Shared>,
    /// The connection.
    pub conn: Arc<Conn>,
    /// Consumed messages, oldest first.
    pub held: Vec<Held>,
    /// Open streams, oldest first; the last is the current one.
    pub streams: Vec<StreamHandle>,
    /// The ids of server-to-client requests, by label.
    pub server_ids: HashMap<String, Value>,
    /// The latest request an `expect` consumed (its index in [`HttpRun::held`]): what
    /// `{id}` and `{progressToken}` stand for in payloads that name no `to`.
    pub latest: Option<usize>,
    /// The step running (0-based).
    pub index: usize,
    /// The number of steps.
    pub total: usize,
}

impl HttpRun {
    /// The state for `conn`'s script of `total` steps.
    pub fn new(shared: Arc<Shared>, conn: Arc<Conn>, total: usize) -> Self {
        HttpRun {
            shared,
            conn,
            held: Vec::new(),
            streams: Vec::new(),
            server_ids: HashMap::new(),
            latest: None,
            index: 0,
            total,
        }
    }

    /// The connection's number.
    pub fn n(&self) -> usize {
        self.conn.index
    }

    /// Records the script's progress.
    pub fn progress(&self, reached: usize, finished: bool) {
        self.shared.record(
            self.n(),
            &WireEvent::Script {
                t_us: self.shared.now_us(),
                reached,
                total: self.total,
                finished,
                output_follows: false,
            },
        );
    }

    /// Records a note.
    pub fn note(&self, text: impl Into<String>) {
        self.shared.note(self.n(), text);
    }

    /// Records an event.
    pub fn record(&self, event: &WireEvent) {
        self.shared.record(self.n(), event);
    }

    /// Expands `{origin}`, `{port}` and `{connection}`.
    pub fn expand(&self, text: &str) -> String {
        self.shared.expand(text, self.n())
    }

    /// Whether the mock speaks legacy HTTP+SSE.
    pub fn legacy(&self) -> bool {
        self.shared.flavour == Flavour::LegacySse
    }

    /// Waits for a message with `key`, answering it at once with 202 when it needs no
    /// scripted answer: notifications and responses, and every legacy POST, unless
    /// `answered_next` (the next step answers it). Returns its index in [`HttpRun::held`].
    pub async fn consume(&mut self, key: &str, label: Option<String>, answered_next: bool) -> usize {
        let mut inbound = self.conn.next(key).await;
        let is_request =
            inbound.message.get("id").is_some_and(|id| !id.is_null()) && inbound.message.get("method").is_some();
        let http_message = !is_http_only(key);
        if http_message
            && (self.legacy() || !is_request)
            && !answered_next
            && let Some(tx) = inbound.reply.take()
        {
            tx.send(self.shared.respond(self.n(), inbound.exchange, 202, &[], Bytes::new(), "accepted"));
        }
        if let (Some(l), Some(id)) = (&label, inbound.message.get("id")) {
            self.record(&WireEvent::Labelled { label: l.clone(), id: id.clone(), method: key.to_string() });
        }
        self.held.push(Held { label, inbound, stream: None, keep_open: false });
        self.held.len() - 1
    }

    /// The held message a step answers: the one labelled `to`, else the latest message
    /// (not a GET or DELETE).
    pub fn target(&self, to: Option<&str>) -> Option<usize> {
        match to {
            Some(l) => self.held.iter().rposition(|h| h.label.as_deref() == Some(l)),
            None => self.held.iter().rposition(|h| !is_http_only(&h.inbound.key)),
        }
    }

    /// The held message a step answers, with the way to answer it; `None` (noted, naming
    /// `op`) when there is none or it was already answered.
    pub fn take_reply(&mut self, op: &str, to: Option<&str>) -> Option<(usize, ReplyTx)> {
        let Some(i) = self.target(to) else {
            self.note(format!("{op}: no expected request to answer; nothing sent"));
            return None;
        };
        match self.held[i].inbound.reply.take() {
            Some(tx) => Some((i, tx)),
            None => {
                self.note(format!("{op}: that request was already answered; nothing sent"));
                None
            }
        }
    }

    /// The latest request an `expect` consumed, if any.
    pub fn latest_request(&self) -> Option<&Value> {
        self.latest.map(|i| &self.held[i].inbound.message)
    }

    /// The stream named `name` (a stream label), else the current one.
    pub fn stream(&self, name: Option<&str>) -> Option<StreamHandle> {
        match name {
            Some(l) => self.streams.iter().rev().find(|s| s.label == l).cloned(),
            None => self.streams.last().cloned(),
        }
    }

    /// The stream named `name` (else the current one); `None` (noted, naming `op`) when
    /// there is none.
    pub fn stream_for(&self, op: &str, name: Option<&str>) -> Option<StreamHandle> {
        let s = self.stream(name);
        if s.is_none() {
            self.note(format!("{op}: no open stream to write on; nothing sent"));
        }
        s
    }

    /// Makes `s` the current stream.
    pub fn add_stream(&mut self, s: StreamHandle) {
        *lock(&self.conn.current_stream) = Some(s.clone());
        self.streams.push(s);
    }

    /// Forgets the stream answering `exchange`.
    pub fn drop_stream(&mut self, exchange: u64) {
        self.streams.retain(|s| s.exchange != exchange);
        *lock(&self.conn.current_stream) = self.streams.last().cloned();
    }

    /// Writes a JSON-RPC message on `stream` (or the current stream) as an SSE event.
    pub fn send_message(&self, stream: Option<StreamHandle>, message: &Value, why: &str) {
        let Some(s) = stream.or_else(|| self.stream(None)) else {
            self.note(format!("{why}: no open stream to write on; nothing sent"));
            return;
        };
        let name = lock(&self.conn.message_event).clone();
        self.shared.write(self.n(), &s, sse::message(&name, message), why);
    }

    /// Answers a held request with a JSON-RPC message: on its own stream when one is open,
    /// as the POST's JSON body when the POST is still waiting, else on the current stream.
    pub fn answer(&mut self, index: usize, message: &Value, extra: &[(String, String)], why: &str) {
        let n = self.n();
        let own = self.held[index].stream.clone().and_then(|l| self.stream(Some(&l)));
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
            tx.send(self.shared.respond_json(n, held.inbound.exchange, 200, message, extra, why));
            return;
        }
        self.send_message(None, message, why);
    }

    /// Extra response headers from a step, values expanded.
    pub fn headers(&self, headers: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
        headers.iter().map(|(k, v)| (k.clone(), self.expand(v))).collect()
    }
}
