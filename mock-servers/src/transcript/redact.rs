//! [`Redactor`]: everything that makes a run's text stable across runs and machines and free
//! of secrets, in one place (nextest's `Redactor` is the model).
//!
//! What it replaces, and where the rule comes from:
//! - the mock's port → `<port>` (`127.0.0.1:<port>`, `localhost:<port>`);
//! - the session ids the mock issued → `<session-N>`, N by first appearance;
//! - the OAuth `state` and `code_challenge` a client sends to `/authorize` (fresh random
//!   values each run, not secrets: the challenge is a hash, the state a nonce the redirect
//!   echoes) → `<state-N>`, `<code-challenge-N>`;
//! - the run's temp dir → `<run-dir>`;
//! - client request ids → `1, 2, …` (numbers) and `id-1, id-2, …` (strings) by first
//!   appearance, in responses and in `notifications/cancelled`'s `requestId` too;
//! - HTTP exchange numbers → `#1, #2, …` by first appearance;
//! - the client's own version in `clientInfo` → `<version>`;
//! - secrets → `<redacted>`, by the project's one secret policy ([`crate::secrets`]), in the
//!   transcript and in reports (`results.json`, JUnit, HTML, Markdown); plus, for one run,
//!   every secret value the policy found in that run's wire wherever else it shows up (a
//!   server that echoes an API key in a sentence). The mock itself already records
//!   Authorization values as `<redacted:N>`.

use crate::secrets::{Found, Plain, Policy, is_secret_member, looks_like_credential};
use mcp_scenario::payload::META_SUBSCRIPTION_ID;
use mcp_scenario::wire::{Field, WireEvent};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

/// A port's replacements: `127.0.0.1:<port>` and `localhost:<port>`, and percent-encoded, as
/// in an OAuth `resource` or `redirect_uri`.
fn port_replacements(port: u16) -> Vec<(String, String)> {
    ["127.0.0.1", "localhost"]
        .iter()
        .flat_map(|host| {
            [
                (format!("{host}:{port}"), format!("{host}:<port>")),
                (format!("{host}%3A{port}"), format!("{host}%3A<port>")),
            ]
        })
        .collect()
}

/// Replaces what varies between runs with stable placeholders and secrets with `<redacted>`.
/// Ids and exchange numbers are learnt in the order the text is rendered, so one redactor
/// serves one transcript.
#[derive(Debug, Default)]
pub struct Redactor {
    /// Literal replacements, applied in order by [`Redactor::text`].
    replacements: Vec<(String, String)>,
    /// The policy ([`crate::secrets`]).
    policy: Policy,
    /// Client request ids (as JSON text) and their normal form.
    ids: HashMap<String, Value>,
    numbers: i64,
    strings: i64,
    /// HTTP exchange numbers, renumbered by first appearance.
    exchanges: HashMap<u64, usize>,
}

impl Redactor {
    /// A redactor that only removes secrets (for reports).
    pub fn secrets_only() -> Self {
        Redactor::default()
    }

    /// The redactor for one run: learns the mock's ports and session ids from what the mock
    /// recorded (every connection's events; not the `Transcript` itself, which re-exports
    /// this module: no import circle), and the run's temp dir.
    pub fn for_run<'a>(recorded: impl IntoIterator<Item = &'a WireEvent>, run_dir: &Path) -> Self {
        crate::tally::redactor_built();
        let mut replacements = Vec::new();
        let mut sessions: Vec<String> = Vec::new();
        let mut nonces: Vec<(String, String)> = Vec::new();
        let mut known = KnownSecrets::default();
        for e in recorded {
            known.learn(e);
            match e {
                WireEvent::Listening { port } => replacements.extend(port_replacements(*port)),
                WireEvent::HttpRequest { path, .. } if path.starts_with("/authorize?") => {
                    let query = path.split_once('?').map(|(_, q)| q).unwrap_or_default();
                    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
                        let kind = match name.as_ref() {
                            "state" => "state",
                            "code_challenge" => "code-challenge",
                            _ => continue,
                        };
                        let n = nonces.iter().filter(|(_, k)| k.starts_with(&format!("<{kind}-"))).count() + 1;
                        if !value.is_empty() && !nonces.iter().any(|(v, _)| v == value.as_ref()) {
                            nonces.push((value.into_owned(), format!("<{kind}-{n}>")));
                        }
                    }
                }
                _ => {
                    if let Some(id) = e.issued_session_id()
                        && !id.is_empty()
                        && !sessions.iter().any(|s| s == id)
                    {
                        sessions.push(id.to_string());
                    }
                }
            }
        }
        replacements.extend(nonces);
        for (i, id) in sessions.into_iter().enumerate() {
            replacements.push((id, format!("<session-{}>", i + 1)));
        }
        let run_dir = run_dir.display().to_string();
        if !run_dir.is_empty() {
            replacements.push((run_dir, "<run-dir>".into()));
        }
        // Longest first, so a secret that holds another is replaced whole.
        known.0.sort_by_key(|s| std::cmp::Reverse(s.len()));
        replacements.extend(known.0.into_iter().map(|s| (s, "<redacted>".to_string())));
        Redactor { replacements, ..Redactor::default() }
    }

    /// Learns one more port the client was given, which no mock recorded: a proxy's between
    /// it and the mock (nginx), which a client's error text may quote in a URL.
    pub fn learn_port(&mut self, port: u16) {
        self.replacements.splice(0..0, port_replacements(port));
    }

    /// Applies the literal replacements (ports, session ids, the run dir, the run's known
    /// secrets), then the secret policy.
    pub fn text(&self, s: &str) -> String {
        self.policy.text(&self.replaced(s), &mut Plain)
    }

    /// A header's value: the literal replacements, then the policy's rule for headers.
    pub fn header(&self, name: &str, value: &str) -> String {
        self.policy.header(name, &self.replaced(value), &mut Plain)
    }

    /// `s` with the literal replacements made; borrowed when none applies (most strings
    /// of a run hold no port, session id, run dir or secret: no copy for them).
    fn replaced<'s>(&self, s: &'s str) -> Cow<'s, str> {
        let mut out = Cow::Borrowed(s);
        for (from, to) in &self.replacements {
            if from.len() <= out.len() && out.contains(from.as_str()) {
                out = Cow::Owned(out.replace(from.as_str(), to));
            }
        }
        out
    }

    /// A recorded event with [`Redactor::value`] applied (its header map and JSON are
    /// members like any other: a credential header's value, a secret member's text go):
    /// what reports that show the wire itself (the HTML report, `results.json`) carry. Ids
    /// and exchange numbers stay as the wire had them.
    ///
    /// Edited in place ([`WireEvent::edit_fields`]), exactly as printing the event as JSON,
    /// redacting every string and reading it back would (that round trip was a quarter of
    /// judging a long run): a header's value is a member named after the header, a `null`
    /// JSON reads back absent, and an event whose name the replacements would change could
    /// not be read back.
    pub fn event(&self, e: &WireEvent) -> WireEvent {
        self.redacted(e.clone())
    }

    /// [`Redactor::event`], editing the event it is given rather than a copy
    /// ([`super::Transcript::into_redacted_wire`]).
    pub fn redacted(&self, mut e: WireEvent) -> WireEvent {
        let kind = e.kind();
        if self.policy.masked(&self.replaced(kind), &mut Plain) != kind {
            // Never reached for events the mock writes; if it were, nothing unredacted leaks.
            return WireEvent::Note { t_us: 0, text: "(an event that could not be redacted is left out)".into() };
        }
        e.edit_fields(|field| match field {
            Field::Text(s) => *s = self.text(s),
            Field::Header { name, value } => *value = self.header(name, value),
            Field::Json(v) => self.value(v),
        });
        e.read_back()
    }

    /// Redacts a JSON document in place: the literal replacements on every string, then the
    /// policy on the document, members by name and strings by shape (text patterns alone
    /// miss a token in a parsed value, or in JSON printed with spaces).
    pub fn value(&self, v: &mut Value) {
        self.replace_in(v);
        self.policy.json(v, &mut Plain);
    }

    fn replace_in(&self, v: &mut Value) {
        match v {
            Value::String(s) => {
                if let Cow::Owned(replaced) = self.replaced(s) {
                    *s = replaced;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.replace_in(i)),
            Value::Object(map) => map.values_mut().for_each(|i| self.replace_in(i)),
            _ => {}
        }
    }

    /// The normal form of an HTTP exchange number.
    pub fn exchange(&mut self, x: u64) -> usize {
        let next = self.exchanges.len() + 1;
        *self.exchanges.entry(x).or_insert(next)
    }

    /// Learns the ids of the client's requests in `v` (a message with both `method` and
    /// `id`, or a batch of them); the first appearance of an id fixes its normal form.
    pub fn learn_request_ids(&mut self, v: &Value) {
        if let (Some(_), Some(id)) = (v.get("method"), v.get("id")) {
            self.learn(id);
        }
        if let Value::Array(items) = v {
            for item in items {
                self.learn_request_ids(item);
            }
        }
    }

    /// A JSON-RPC message with its request ids (`id`, `params.requestId`, a subscription id
    /// in `_meta`) in normal form, the client's version masked and secrets redacted
    /// ([`Redactor::value`]).
    pub fn json(&self, v: &Value) -> Value {
        let mut v = v.clone();
        if let Some(obj) = v.as_object_mut() {
            if let Some(id) = obj.get("id").cloned() {
                obj.insert("id".into(), self.id(&id));
            }
            if let Some(rid) = obj.get("params").and_then(|p| p.get("requestId")).cloned()
                && let Some(p) = obj.get_mut("params").and_then(Value::as_object_mut)
            {
                p.insert("requestId".into(), self.id(&rid));
            }
            for part in ["params", "result"] {
                if let Some(part) = obj.get_mut(part) {
                    self.subscription_id(part);
                }
            }
            if let Some(version) =
                obj.get_mut("params").and_then(|p| p.get_mut("clientInfo")).and_then(|c| c.get_mut("version"))
            {
                *version = Value::from("<version>");
            }
        }
        self.value(&mut v);
        v
    }

    /// [`Redactor::json`] printed as compact JSON (what a transcript line shows), written
    /// straight from `v`: the same text, without the copy of the message that `json` edits
    /// and without printing that copy through `Display` (together a third of rendering a
    /// long run). Each value goes the way `json` takes it: in normal form where `json` puts
    /// one ([`Place`]), the literal replacements, then the policy (a secret member's text
    /// masked, any other text searched for shapes).
    pub fn json_text(&self, v: &Value) -> String {
        let mut out = Vec::with_capacity(128);
        let place = if v.is_object() { Place::Message } else { Place::Elsewhere };
        self.print(v, place, &mut out);
        // serde_json writes UTF-8 only: the lossy branch is never taken.
        String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Writes `v`, at `place` in a message, as [`Redactor::json`] leaves it.
    fn print(&self, v: &Value, place: Place, out: &mut Vec<u8>) {
        match v {
            Value::String(s) => put(out, self.policy.masked(&self.replaced(s), &mut Plain).as_ref()),
            Value::Array(items) => put_items(out, items, |item, out| self.print(item, Place::Elsewhere, out)),
            Value::Object(map) => {
                out.push(b'{');
                for (i, (key, value)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    put(out, key.as_str());
                    out.push(b':');
                    let normal = self.normal_form(place, key, value);
                    let value = normal.as_ref().unwrap_or(value);
                    if is_secret_member(key) {
                        self.print_member(key, value, place.of_member(key), out);
                    } else {
                        self.print(value, place.of_member(key), out);
                    }
                }
                out.push(b'}');
            }
            other => put(out, other),
        }
    }

    /// Writes the value of secret member `key` as the policy leaves it.
    fn print_member(&self, key: &str, v: &Value, place: Place, out: &mut Vec<u8>) {
        match v {
            Value::String(s) => put(out, self.policy.member_text(key, &self.replaced(s), &mut Plain).as_ref()),
            Value::Array(items) => {
                put_items(out, items, |item, out| self.print_member(key, item, Place::Elsewhere, out))
            }
            Value::Object(_) => self.print(v, place, out),
            other => put(out, other),
        }
    }

    /// What [`Redactor::json`] puts in place of member `key` of an object at `place`, if
    /// anything: a request id's normal form, the client's version masked.
    fn normal_form(&self, place: Place, key: &str, value: &Value) -> Option<Value> {
        match (place, key) {
            (Place::Message, "id") | (Place::Params, "requestId") | (Place::Meta, META_SUBSCRIPTION_ID) => {
                Some(self.id(value))
            }
            (Place::ClientInfo, "version") => Some(Value::from("<version>")),
            _ => None,
        }
    }

    /// A notification's or a result's `_meta` subscription id in normal form (it is the
    /// id of the listen request that opened the subscription, 2026-07-28); returns it.
    pub fn subscription_id(&self, params: &mut Value) -> Option<Value> {
        let sid = params.get_mut("_meta").and_then(|m| m.get_mut(META_SUBSCRIPTION_ID))?;
        *sid = self.id(sid);
        Some(sid.clone())
    }

    /// Learns a client request id (first appearance wins) and returns its normal form,
    /// keeping its JSON type.
    fn learn(&mut self, id: &Value) -> Value {
        let key = id.to_string();
        if let Some(v) = self.ids.get(&key) {
            return v.clone();
        }
        let v = match id {
            Value::Number(_) => {
                self.numbers += 1;
                Value::from(self.numbers)
            }
            Value::String(_) => {
                self.strings += 1;
                Value::from(format!("id-{}", self.strings))
            }
            other => other.clone(),
        };
        self.ids.insert(key, v.clone());
        v
    }

    /// The normal form of an id already learnt; an unknown id is shown as it is.
    fn id(&self, id: &Value) -> Value {
        self.ids.get(&id.to_string()).cloned().unwrap_or_else(|| id.clone())
    }
}

/// Where a value sits in a JSON-RPC message, as far as [`Redactor::json`] puts a member of
/// it in normal form: the message, its `params` or `result`, their `_meta`, the client's
/// `clientInfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Message,
    Params,
    Result,
    Meta,
    ClientInfo,
    Elsewhere,
}

impl Place {
    /// The place of member `key` of an object at `self`.
    fn of_member(self, key: &str) -> Place {
        match (self, key) {
            (Place::Message, "params") => Place::Params,
            (Place::Message, "result") => Place::Result,
            (Place::Params | Place::Result, "_meta") => Place::Meta,
            (Place::Params, "clientInfo") => Place::ClientInfo,
            _ => Place::Elsewhere,
        }
    }
}

/// Appends `v` as compact JSON, as `Value`'s `Display` prints it (writing to a `Vec` cannot
/// fail).
fn put(out: &mut Vec<u8>, v: &(impl serde::Serialize + ?Sized)) {
    let _ = serde_json::to_writer(out, v);
}

/// Appends `items` as a JSON array, each written by `item`.
fn put_items(out: &mut Vec<u8>, items: &[Value], mut item: impl FnMut(&Value, &mut Vec<u8>)) {
    out.push(b'[');
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        item(v, out);
    }
    out.push(b']');
}

/// The secret values the policy finds in a run's wire (headers, JSON members, text), so that
/// the same value is redacted wherever else the run shows it, shape or not.
#[derive(Debug, Default)]
struct KnownSecrets(Vec<String>);

impl KnownSecrets {
    /// Shorter values, and words (`"credentials": "include"`), are not learnt: replacing
    /// them everywhere would garble the transcript, and the policy still catches them where
    /// they have a name or a shape.
    const MIN_LEN: usize = 6;

    /// What the policy finds in every field of `e`, as in the event's JSON record (a
    /// header's value as a member named after the header), in the record's order.
    fn learn(&mut self, e: &WireEvent) {
        let policy = Policy::default();
        let mut learn = |_: &Found, secret: &str| {
            let learnt = secret.len() >= Self::MIN_LEN && looks_like_credential(secret);
            if learnt && !self.0.iter().any(|s| s == secret) {
                self.0.push(secret.to_owned());
            }
            secret.to_owned()
        };
        // The policy edits what it searches; the mask gives every secret back as it was.
        e.clone().edit_fields(|field| match field {
            Field::Text(s) => {
                policy.text(s, &mut learn);
            }
            Field::Header { name, value } => {
                policy.header(name, value, &mut learn);
            }
            Field::Json(v) => policy.json(v, &mut learn),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_scenario::wire::Recorded;
    use serde_json::json;

    #[test]
    fn redacts_bearer_tokens() {
        let r = Redactor::secrets_only();
        assert_eq!(r.text("authorization: Bearer abc.def-123 next"), "authorization: Bearer <redacted> next");
        assert_eq!(r.text("{\"access_token\":\"s3cr3t\"}"), "{\"access_token\":\"<redacted>\"}");
        assert_eq!(r.text("Bearer <redacted>"), "Bearer <redacted>");
        // Challenges keep their parameters; token68 padding is still a token.
        assert_eq!(r.text(r#"www-authenticate: Bearer realm="mcp""#), r#"www-authenticate: Bearer realm="mcp""#);
        assert_eq!(r.text("Bearer error=invalid_token"), "Bearer error=invalid_token");
        assert_eq!(r.text("Bearer abc123== next"), "Bearer <redacted> next");
    }

    #[test]
    fn events_lose_ports_tokens_and_authorization_values() {
        let mut headers = std::collections::BTreeMap::new();
        headers.insert("authorization".to_string(), "Basic dXNlcjpwYXNz".to_string());
        headers.insert("host".to_string(), "127.0.0.1:4242".to_string());
        let body = r#"{"access_token":"tok-123","note":"Bearer abc.def"}"#;
        let request = WireEvent::HttpRequest {
            t_us: 1,
            exchange: 1,
            http_method: "POST".into(),
            path: "/mcp".into(),
            headers,
            body: Some(mcp_scenario::wire::Recorded::of(body.as_bytes())),
            json: serde_json::from_str(body).ok(),
        };
        let recorded = [WireEvent::Listening { port: 4242 }];
        let out =
            serde_json::to_string(&Redactor::for_run(&recorded, Path::new("/nowhere")).event(&request)).expect("json");
        for secret in ["dXNlcjpwYXNz", "tok-123", "abc.def", "4242"] {
            assert!(!out.contains(secret), "{secret} left in {out}");
        }
        assert!(out.contains("127.0.0.1:<port>") && out.contains("<redacted>"), "{out}");
    }

    #[test]
    fn a_secret_the_wire_carried_is_redacted_wherever_the_run_shows_it() {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"apiKey":"SECRETKEY42","password":"SECRETPW42"}}}"#;
        let message: Value = serde_json::from_str(body).expect("json");
        let from = WireEvent::FromClient {
            t_us: 1,
            bytes: mcp_scenario::wire::Recorded::of(body.as_bytes()),
            json: Some(message.clone()),
            terminated: true,
        };
        let r = Redactor::for_run(std::slice::from_ref(&from), Path::new("/nowhere"));
        let event = serde_json::to_string(&r.event(&from)).expect("json");
        assert!(!event.contains("SECRETKEY42") && !event.contains("SECRETPW42"), "{event}");
        assert_eq!(r.json(&message)["params"]["arguments"]["password"], "<redacted>");
        // Known to this run, so redacted where it has neither name nor shape.
        assert_eq!(r.text("the server said: key SECRETKEY42 accepted"), "the server said: key <redacted> accepted");
        assert_eq!(Redactor::secrets_only().text("key SECRETKEY42"), "key SECRETKEY42");
    }

    /// Events with something for every rule of the redactor: ports, a session id, the run
    /// dir, secrets in headers, members and text, a `null` message, an unparsed body.
    fn varied_events() -> Vec<WireEvent> {
        let headers = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let json = |s: &str| serde_json::from_str::<Value>(s).expect("json");
        let call = r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"arguments":{"apiKey":"KEYKEY77","note":"via http://127.0.0.1:4242/x Bearer Tok.Tok-99","list":["s3ss10n-A"],"n":null}}}"#;
        vec![
            WireEvent::Listening { port: 4242 },
            WireEvent::Started { pid: 1, stderr_shared: false, origin_unix_us: None },
            WireEvent::FromClient {
                t_us: 1,
                bytes: Recorded::of(call.as_bytes()),
                json: Some(json(call)),
                terminated: true,
            },
            WireEvent::FromClient { t_us: 2, bytes: Recorded::of(b"null"), json: Some(Value::Null), terminated: false },
            WireEvent::HttpRequest {
                t_us: 3,
                exchange: 1,
                http_method: "POST".into(),
                path: "/authorize?state=St4te-1&code_challenge=Ch4ll&api_key=k9".into(),
                headers: headers(&[
                    ("authorization", "Bearer <redacted:1>"),
                    ("proxy-authorization", "Basic dXNlcjpwYXNz"),
                    ("x-api-key", "PLAIN"),
                    ("host", "127.0.0.1:4242"),
                    ("mcp-session-id", "s3ss10n-A"),
                ]),
                body: Some(Recorded::of(b"\xff not json, KEYKEY77 again")),
                json: None,
            },
            WireEvent::HttpResponse {
                t_us: 4,
                exchange: 1,
                status: 200,
                headers: headers(&[
                    ("mcp-session-id", "s3ss10n-A"),
                    ("set-cookie", "sid=1"),
                    ("location", "/cb?code=c9"),
                ]),
                body: Some(Recorded { text: None, hex: Some("ff00".into()), len: 2 }),
                json: Some(json(r#"{"access_token":"AT-12345678","token_type":"Bearer"}"#)),
                why: "reply".into(),
            },
            WireEvent::Labelled { label: "call".into(), id: Value::from("s3ss10n-A"), method: "tools/call".into() },
            WireEvent::Labelled { label: "null".into(), id: Value::Null, method: "m".into() },
            WireEvent::Exit { t_us: 5, code: None, signal: Some("SIGTERM".into()), why: "/tmp/run-x/conn-1".into() },
            WireEvent::Stderr { t_us: 6, bytes: Recorded::of(b"password=hunter2HUNTER in /tmp/run-x") },
            WireEvent::StreamWrite {
                t_us: 7,
                exchange: 1,
                bytes: Recorded::of(b"data: {\"refresh_token\":\"R1\"}\n"),
                why: "reply".into(),
            },
            WireEvent::StreamEnd { t_us: 8, exchange: 1, how: "clean".into() },
            WireEvent::Note { t_us: 9, text: "key KEYKEY77 echoed".into() },
            WireEvent::Signal { t_us: 10, name: "SIGINT".into(), ignored: true },
        ]
    }

    /// The redaction as it was done before the in-place edit: the event as JSON, every
    /// string redacted, read back.
    fn through_json(r: &Redactor, e: &WireEvent) -> WireEvent {
        let mut v = serde_json::to_value(e).expect("json");
        r.value(&mut v);
        serde_json::from_value(v).unwrap_or_else(|_| WireEvent::Note {
            t_us: 0,
            text: "(an event that could not be redacted is left out)".into(),
        })
    }

    #[test]
    fn events_redact_in_place_exactly_as_through_their_json() {
        let events = varied_events();
        // A session id that is part of every event's name, too: no event reads back.
        let mut clobbering = events.clone();
        clobbering.push(WireEvent::HttpResponse {
            t_us: 0,
            exchange: 2,
            status: 200,
            headers: [("mcp-session-id".to_string(), "e".to_string())].into(),
            body: None,
            json: None,
            why: "x".into(),
        });
        for recorded in [&events, &clobbering] {
            let r = Redactor::for_run(recorded.iter(), Path::new("/tmp/run-x"));
            for e in recorded.iter() {
                assert_eq!(r.event(e), through_json(&r, e), "{e:?}");
            }
        }
        let r = Redactor::for_run(events.iter(), Path::new("/tmp/run-x"));
        assert!(
            r.replacements.iter().any(|(from, to)| from == "KEYKEY77" && to == "<redacted>"),
            "{:?}",
            r.replacements
        );
        for e in &events {
            assert_eq!(Redactor::secrets_only().event(e), through_json(&Redactor::secrets_only(), e), "{e:?}");
        }
    }

    #[test]
    fn the_secrets_learnt_are_those_the_events_json_holds_in_its_order() {
        let mut from_json = Vec::new();
        for e in varied_events() {
            let mut v = serde_json::to_value(&e).expect("json");
            Policy::default().json(&mut v, &mut |_: &Found, secret: &str| {
                if secret.len() >= KnownSecrets::MIN_LEN
                    && looks_like_credential(secret)
                    && !from_json.iter().any(|s| s == secret)
                {
                    from_json.push(secret.to_owned());
                }
                secret.to_owned()
            });
        }
        let mut known = KnownSecrets::default();
        varied_events().iter().for_each(|e| known.learn(e));
        assert_eq!(known.0, from_json);
        assert!(known.0.len() >= 4, "{:?}", known.0);
    }

    /// Messages that meet every rule of [`Redactor::json`]: request ids in every place it
    /// renumbers them (and the same names where it does not), the client's version, secret
    /// members holding text, arrays, objects, masks and numbers, an Authorization member,
    /// ports and session ids, escapes, text beyond ASCII, roots that are no object.
    #[test]
    fn json_text_prints_what_json_makes() {
        let mut r = Redactor::for_run(varied_events().iter(), Path::new("/tmp/run-x"));
        let sid = META_SUBSCRIPTION_ID;
        let messages = [
            json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": {}}),
            json!({"jsonrpc": "2.0", "id": "s3ss10n-A", "method": "tools/call", "params": {"name": "x"}}),
            json!({"id": 7, "result": {"_meta": {sid: 7, "other": 7}, "id": 7}}),
            json!({"method": "notifications/cancelled", "params": {"requestId": "s3ss10n-A", "reason": "Bearer Tok.Tok-99"}}),
            json!({"method": "m", "params": {"_meta": {sid: "s3ss10n-A"}, "requestId": 99, "id": 7}}),
            json!({"method": "m", "params": [{"requestId": 7, "_meta": {sid: 7}}], "result": "x"}),
            json!({"method": "initialize", "params": {"clientInfo": {"name": "c", "version": {"deep": 1}}, "version": "9"}}),
            json!({"params": {"clientInfo": "v"}, "result": {"clientInfo": {"version": "1"}, "_meta": [1]}}),
            json!({"params": {"arguments": {"apiKey": ["KEYKEY77", {"note": "x", "token": 5}, null, "<redacted:3>"],
                "Authorization": "Basic dXNlcjpwYXNz", "password": {"inner": "pw", "client_secret": ["s"]},
                "access_token": "<redacted>", "n": -1.5e300, "t": true, "z": null,
                "url": "http://127.0.0.1:4242/x?api_key=k9 /tmp/run-x/conn-1",
                "esc": "quote \" back \\ nl \n tab \t \u{1} \u{e9}\u{1f600}"}}}),
            json!({"id": {"nested": 7}, "params": null}),
            json!({"\u{e9}k\"ey": "v", "": ""}),
            json!([{"id": 7, "method": "m"}, {"id": "s3ss10n-A"}]),
            json!("Bearer abc.def-123 KEYKEY77"),
            json!(12345678901234567890u64),
            json!(null),
            json!({}),
            json!([]),
        ];
        for m in &messages {
            r.learn_request_ids(m);
        }
        for m in &messages {
            assert_eq!(r.json_text(m), r.json(m).to_string(), "{m}");
        }
        // And they do differ from the message: the rules were met.
        assert!(messages.iter().filter(|m| r.json_text(m) != m.to_string()).count() >= 8);
    }

    #[test]
    fn ids_renumber_by_first_appearance_keeping_type() {
        let mut r = Redactor::default();
        assert_eq!(r.learn(&Value::from(7)), Value::from(1));
        assert_eq!(r.learn(&Value::from("x")), Value::from("id-1"));
        assert_eq!(r.learn(&Value::from(7)), Value::from(1));
        assert_eq!(r.id(&Value::from(99)), Value::from(99));
    }

    #[test]
    fn a_subscription_id_is_renumbered_like_its_listen_request() {
        let mut r = Redactor::default();
        r.learn_request_ids(&serde_json::json!({"id": "listen-7", "method": "subscriptions/listen"}));
        let note = serde_json::json!({"method": "m", "params": {"_meta": {META_SUBSCRIPTION_ID: "listen-7"}}});
        let end = serde_json::json!({"id": "listen-7", "result": {"_meta": {META_SUBSCRIPTION_ID: "listen-7"}}});
        let stranger = serde_json::json!({"method": "m", "params": {"_meta": {META_SUBSCRIPTION_ID: "other"}}});
        assert_eq!(r.json(&note)["params"]["_meta"][META_SUBSCRIPTION_ID], "id-1");
        assert_eq!(r.json(&end)["result"]["_meta"][META_SUBSCRIPTION_ID], "id-1");
        assert_eq!(r.json(&stranger)["params"]["_meta"][META_SUBSCRIPTION_ID], "other");
    }

    #[test]
    fn ports_sessions_and_the_run_dir_become_placeholders() {
        let mut headers = std::collections::BTreeMap::new();
        headers.insert("mcp-session-id".to_string(), "abc123".to_string());
        let response = WireEvent::HttpResponse {
            t_us: 0,
            exchange: 1,
            status: 200,
            headers,
            body: None,
            json: None,
            why: "x".into(),
        };
        let recorded = [WireEvent::Listening { port: 4242 }, response];
        let r = Redactor::for_run(&recorded, Path::new("/tmp/mcp-run-x"));
        assert_eq!(
            r.text("http://127.0.0.1:4242/mcp abc123 /tmp/mcp-run-x/conn-1.jsonl"),
            "http://127.0.0.1:<port>/mcp <session-1> <run-dir>/conn-1.jsonl"
        );
    }

    #[test]
    fn a_port_learnt_after_the_record_is_replaced_like_the_mocks() {
        let mut r = Redactor::for_run(&[WireEvent::Listening { port: 4242 }], Path::new("/nowhere"));
        let text = "for url 'http://127.0.0.1:43895/mcp' (the mock: 127.0.0.1:4242)";
        assert_eq!(r.text(text), "for url 'http://127.0.0.1:43895/mcp' (the mock: 127.0.0.1:<port>)");
        r.learn_port(43895);
        assert_eq!(r.text(text), "for url 'http://127.0.0.1:<port>/mcp' (the mock: 127.0.0.1:<port>)");
    }
}
