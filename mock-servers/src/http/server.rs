//! The listener and the request handler: accepts TCP connections on 127.0.0.1, serves them
//! with hyper (HTTP/1.1) over the fault-injecting socket wrapper, records every request,
//! routes it to its connection (session / legacy stream), applies the standing rules, and
//! either hands it to the script or answers it at once with a default that never makes a
//! client wait: an unscripted request gets `200` with its [`crate::defaults`] answer
//! (`ping`, `tools/list`) or JSON-RPC `-32601`, a notification or response `202`, a GET
//! `405` (unless the script keeps a standing GET answer; before the authorization server's
//! guard, which only GETs the script takes meet), a DELETE `200`.

use super::body::MockBody;
use super::conn::{Conn, DELETE, GetKind, Inbound, ReplyTx, Route};
use super::flavour::Flavour;
use super::raw::{FaultIo, SocketControl};
use super::shared::Shared;
use super::sse;
use crate::stateless;
use crate::sync::lock;
use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_scenario::wire::{Recorded, WireEvent};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

thread_local! {
    static JSON_HEADERS: Vec<(String, String)> = vec![("content-type".to_string(), "application/json".to_string())];
}

/// Request bodies larger than this are refused with 413 (the mock keeps memory bounded).
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// Accepts connections until the mock ends (each is served by a task that ends with it).
pub async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                // EMFILE and friends: back off briefly instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let socket = Arc::new(SocketControl::default());
        let io = TokioIo::new(FaultIo::new(stream, socket.clone()));
        let state = shared.clone();
        shared.spawn(async move {
            let service = service_fn(move |req| {
                let (shared, socket) = (state.clone(), socket.clone());
                async move { Ok::<_, Infallible>(handle(shared, socket, req).await) }
            });
            // Errors here are the faults we inject or clients leaving; the record says which.
            let _ = http1::Builder::new().keep_alive(true).serve_connection(io, service).await;
        });
    }
}

/// A request whose body never ended: the client closed the connection mid-body (a send it
/// cancelled). No message arrived, so none is recorded as one, routed or judged; a note
/// keeps the attempt in the transcript. The answer goes unrecorded: nobody is there to read it.
fn cut_off(
    shared: &Arc<Shared>,
    exchange: u64,
    parts: &http::request::Parts,
    e: &dyn std::fmt::Display,
) -> Response<MockBody> {
    let n = shared.latest().index;
    shared.note(
        n,
        format!(
            "#{exchange} {} {}: the client closed the connection before the body ended ({e}); not read as a message",
            parts.method,
            parts.uri.path()
        ),
    );
    let mut r = Response::new(MockBody::empty());
    *r.status_mut() = http::StatusCode::BAD_REQUEST;
    r
}

/// A parsed request, ready to record and route.
struct Incoming_ {
    exchange: u64,
    method: Method,
    headers: BTreeMap<String, String>,
    session: Option<String>,
    authorization: Option<String>,
    json: Option<Value>,
    body: Bytes,
    path: String,
}

async fn handle(shared: Arc<Shared>, socket: Arc<SocketControl>, req: Request<Incoming>) -> Response<MockBody> {
    let exchange = shared.next_exchange();
    let (parts, body) = req.into_parts();
    let (body, too_big) = match Limited::new(body, MAX_REQUEST_BYTES).collect().await {
        Ok(c) => (c.to_bytes(), false),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => (Bytes::new(), true),
        Err(e) => return cut_off(&shared, exchange, &parts, &e),
    };
    let read = super::request::read(&parts, &body, |credential| shared.redact_credential(credential));
    let super::request::ReadRequest { headers, authorization, session, json, path } = read;
    let mut req = Incoming_ { exchange, method: parts.method, headers, session, authorization, json, body, path };
    if let Some(server) = shared.oauth()
        && crate::oauth::is_oauth_path(&req.path)
    {
        return oauth(&shared, &server, req).await;
    }

    let route = match shared.flavour {
        Flavour::StreamableHttp => {
            let is_init = req.method == Method::POST
                && req.json.as_ref().and_then(|j| j.get("method")).and_then(Value::as_str) == Some("initialize");
            shared.route_streamable(req.session.as_deref(), is_init, req.method.as_str())
        }
        Flavour::LegacySse => Route::Conn(route_legacy(&shared, &req)),
    };
    let conn = match &route {
        Route::Conn(c) | Route::Refuse(c, ..) => c.clone(),
    };
    let n = conn.index;
    // Recorded by moving the parts in and back out: no copies on the hot path.
    let event = WireEvent::HttpRequest {
        t_us: shared.journal.now_us(),
        exchange,
        http_method: req.method.to_string(),
        path: std::mem::take(&mut req.path),
        headers: std::mem::take(&mut req.headers),
        body: (req.json.is_none() && !req.body.is_empty()).then(|| Recorded::of(&req.body)),
        json: req.json.take(),
    };
    shared.record(n, &event);
    if let WireEvent::HttpRequest { path, headers, json, .. } = event {
        (req.path, req.headers, req.json) = (path, headers, json);
    }
    conn.ready().await;
    if too_big {
        return shared.respond(n, exchange, 413, &[], Bytes::new(), "request body over the mock's cap");
    }
    if let Some(rule) = shared.auth_refusal(req.method.as_str(), req.authorization.as_deref()) {
        let mut hs = vec![("www-authenticate".to_string(), rule.www_authenticate.clone())];
        if !rule.text.is_empty() {
            hs.push(("content-type".into(), "text/plain".into()));
        }
        return shared.respond(n, exchange, rule.status, &hs, Bytes::from(rule.text.clone()), "auth required");
    }
    if matches!(route, Route::Conn(_)) && never_served_get(&shared, &conn, &req) {
        // Before the authorization server's guard: the endpoint serves no stream whoever asks,
        // so a client's listener meets the 405 whenever it comes, never a 401 whose refresh
        // races the client's own requests (when it came after `expire_tokens` is its timing).
        return unscripted_get(&shared, n, exchange);
    }
    if let Some(server) = shared.oauth()
        && let Some(refusal) = server.guard(
            req.authorization.as_deref(),
            req.json.as_ref().and_then(|j| j.get("method")).and_then(Value::as_str),
        )
    {
        return shared.respond(n, exchange, refusal.status, &refusal.headers, refusal.body, &refusal.why);
    }
    if shared.flavour == Flavour::LegacySse && req.method == Method::POST && !shared.is_endpoint(&req.path) {
        return refuse_json(
            &shared,
            n,
            exchange,
            &req,
            404,
            "not the announced endpoint",
            "Not found: POST messages to the endpoint this server's `endpoint` event named, with its query",
        );
    }
    if let Route::Refuse(_, status, why, message) = route {
        return refuse_json(&shared, n, exchange, &req, status, why, message);
    }
    match req.method {
        Method::POST => post(&shared, &conn, socket, req).await,
        Method::GET => {
            let arrived = GetKind::arrived(&req.headers);
            if let Some(key) = conn.take_get(arrived) {
                return hand_over(&conn, key, Value::Null, exchange, socket).await;
            }
            if let Some(answer) = super::standing::answer(&shared, &conn, arrived, exchange, socket) {
                return answer;
            }
            unscripted_get(&shared, n, exchange)
        }
        Method::DELETE => {
            if shared.stateless_rules().is_some() && !conn.take(DELETE) {
                // 2026-07-28 has no sessions to end (streamable-http.mdx, Backward Compatibility).
                let allow = [("allow".to_string(), shared.allow_besides(&Method::DELETE))];
                return shared.respond(n, exchange, 405, &allow, Bytes::new(), "no DELETE on 2026-07-28");
            }
            if conn.take(DELETE) {
                return hand_over(&conn, DELETE, Value::Null, exchange, socket).await;
            }
            shared.expire_session(&conn, None);
            shared.respond(n, exchange, 200, &[], Bytes::new(), "unscripted DELETE")
        }
        _ => shared.respond(
            n,
            exchange,
            405,
            &[("allow".into(), "GET, POST, DELETE".into())],
            Bytes::new(),
            "method not allowed",
        ),
    }
}

/// Whether `req` is a Streamable HTTP GET that neither the script nor a standing answer
/// will take: the one the handler answers [`unscripted_get`].
fn never_served_get(shared: &Shared, conn: &Conn, req: &Incoming_) -> bool {
    let arrived = GetKind::arrived(&req.headers);
    req.method == Method::GET
        && shared.flavour == Flavour::StreamableHttp
        && conn.get_key(arrived).is_none()
        && lock(&conn.standing_gets).admitting(arrived).is_none()
}

/// `405` with `Allow`: the endpoint offers no stream on this GET.
fn unscripted_get(shared: &Shared, n: usize, exchange: u64) -> Response<MockBody> {
    let allow = [("allow".to_string(), shared.allow_besides(&Method::GET))];
    shared.respond(n, exchange, 405, &allow, Bytes::new(), "unscripted GET")
}

/// A request to the authorization server ([`crate::oauth`]): recorded on the latest
/// connection (it belongs to no session: a client refreshing mid-session sends no session
/// id to the token endpoint) and answered by the server, after its scripted delay.
async fn oauth(shared: &Arc<Shared>, server: &crate::oauth::AuthServer, req: Incoming_) -> Response<MockBody> {
    let n = shared.latest().index;
    let event = WireEvent::HttpRequest {
        t_us: shared.journal.now_us(),
        exchange: req.exchange,
        http_method: req.method.to_string(),
        path: req.path.clone(),
        headers: req.headers,
        body: (req.json.is_none() && !req.body.is_empty()).then(|| Recorded::of(&req.body)),
        json: req.json,
    };
    shared.record(n, &event);
    let Some(answer) = server.handle(req.method.as_str(), &req.path, &req.body) else {
        return shared.respond(n, req.exchange, 404, &[], Bytes::new(), "authorization server: not found");
    };
    if let Some(delay) = answer.delay {
        tokio::time::sleep(delay).await;
    }
    shared.respond(n, req.exchange, answer.status, &answer.headers, answer.body, &answer.why)
}

/// A JSON-RPC error refusing `req` with `status`. The refused request's id; a GET or a
/// notification has none, and the schema allows no `null` id, so the error then carries no
/// `id` at all.
fn refuse_json(
    shared: &Shared,
    n: usize,
    exchange: u64,
    req: &Incoming_,
    status: u16,
    why: &str,
    message: &str,
) -> Response<MockBody> {
    let mut body = serde_json::Map::new();
    body.insert("jsonrpc".into(), json!("2.0"));
    if let Some(id) = req.json.as_ref().and_then(|j| j.get("id")).filter(|id| !id.is_null()) {
        body.insert("id".into(), id.clone());
    }
    body.insert("error".into(), json!({"code": -32001, "message": message}));
    shared.respond_json(n, exchange, status, &Value::Object(body), &[], why)
}

/// Legacy SSE: a GET opens the next connection's stream; a POST goes to the connection its
/// `session_id` query names, else to the latest.
fn route_legacy(shared: &Arc<Shared>, req: &Incoming_) -> Arc<Conn> {
    if req.method == Method::GET {
        let arrived = GetKind::arrived(&req.headers);
        return shared.conn_for_new(|conn| conn.get_key(arrived).is_some());
    }
    super::request::legacy_session(&req.path).and_then(|n| shared.conn(n)).unwrap_or_else(|| shared.latest())
}

async fn post(
    shared: &Arc<Shared>,
    conn: &Arc<Conn>,
    socket: Arc<SocketControl>,
    req: Incoming_,
) -> Response<MockBody> {
    let (n, exchange) = (conn.index, req.exchange);
    let Some(message) = req.json else {
        let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error: the body is not JSON"}});
        return shared.respond_json(n, exchange, 400, &body, &[], "parse error");
    };
    if let Value::Array(items) = &message {
        return batch(shared, conn, exchange, items);
    }
    let method = message.get("method").and_then(Value::as_str).map(str::to_string);
    let id = message.get("id").filter(|id| !id.is_null()).cloned();
    if let (Some(rules), Some(_), Some(id)) = (shared.stateless_rules(), &method, &id)
        && let Some(refusal) =
            stateless::check_headers(&rules, &req.headers, &message).or_else(|| stateless::check_body(&rules, &message))
    {
        let body = json!({"jsonrpc": "2.0", "id": id, "error": refusal.error});
        return shared.respond_json(n, exchange, refusal.status, &body, &[], refusal.why);
    }
    match (method, id) {
        (Some(method), id) if conn.take(&method) => {
            let _ = id;
            hand_over(conn, &method, message, exchange, socket).await
        }
        (Some(method), Some(_)) if let Some(r) = super::standing::respond_again(shared, conn, &method, exchange) => r,
        (Some(method), Some(id)) if shared.flavour == Flavour::StreamableHttp && shared.rule(&method).is_some() => {
            let body = rule_body(shared, &method, &id).unwrap_or_default();
            shared.respond(n, exchange, 200, JSON_HEADERS.with(|h| h.clone()).as_slice(), body, "reply_always")
        }
        (Some(method), Some(id)) => {
            let answer = auto_answer(shared, &method, id);
            if shared.flavour == Flavour::LegacySse {
                // Legacy answers travel on the SSE stream; the POST is only accepted.
                let stream = lock(&conn.current_stream).clone();
                match stream {
                    Some(s) => shared.write(n, &s, sse::message(&lock(&conn.message_event), &answer.0), answer.1),
                    None => shared.note(n, format!("{}: no open stream for the answer", answer.1)),
                }
                return shared.respond(n, exchange, 202, &[], Bytes::new(), "accepted");
            }
            // 2026-07-28: a method the server does not implement is 404 + -32601.
            let status = if shared.stateless_rules().is_some() && answer.1 == "auto -32601" { 404 } else { 200 };
            shared.respond_json(n, exchange, status, &answer.0, &[], answer.1)
        }
        (Some(_), None) => shared.respond(n, exchange, 202, &[], Bytes::new(), "accepted"),
        (None, Some(id)) => {
            conn.answer(&id, message.clone());
            shared.respond(n, exchange, 202, &[], Bytes::new(), "accepted")
        }
        (None, None) => {
            let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}});
            shared.respond_json(n, exchange, 400, &body, &[], "invalid request")
        }
    }
}

/// A batch (2025-03-26): never scripted; requests get their standing or `-32601` answers.
fn batch(shared: &Arc<Shared>, conn: &Conn, exchange: u64, items: &[Value]) -> Response<MockBody> {
    let mut answers = Vec::new();
    for item in items {
        match (item.get("method").and_then(Value::as_str), item.get("id").filter(|id| !id.is_null())) {
            (Some(method), Some(id)) => answers.push(auto_answer(shared, method, id.clone()).0),
            (None, Some(id)) => conn.answer(id, item.clone()),
            _ => {}
        }
    }
    if answers.is_empty() {
        return shared.respond(conn.index, exchange, 202, &[], Bytes::new(), "accepted batch");
    }
    shared.respond_json(conn.index, exchange, 200, &Value::Array(answers), &[], "auto batch")
}

/// The answer to an unscripted request: a `reply_always` rule, else its default (`ping`,
/// `tools/list`), else (2026-07-28) `server/discover`'s default result, else `-32601`.
fn auto_answer(shared: &Shared, method: &str, id: Value) -> (Value, &'static str) {
    match shared.rule(method) {
        Some(fragment) => {
            let text = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{fragment}}}");
            (serde_json::from_str(&text).unwrap_or(Value::Null), "reply_always")
        }
        None if let Some(answer) = shared.defaults.answer(method) => {
            (json!({"jsonrpc": "2.0", "id": id, "result": answer.result}), answer.why)
        }
        None if let Some(rules) = shared.stateless_rules().filter(|_| method == "server/discover") => (
            json!({"jsonrpc": "2.0", "id": id, "result": stateless::discover_result(&rules, shared.defaults.capabilities())}),
            "auto server/discover",
        ),
        None => (
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("Method not found: {method} (unscripted)")}}),
            "auto -32601",
        ),
    }
}

/// The fast path of a `reply_always` answer over Streamable HTTP: the body is spliced from
/// the serialised rule, never built as a JSON tree.
fn rule_body(shared: &Shared, method: &str, id: &Value) -> Option<Bytes> {
    let fragment = shared.rule(method)?;
    Some(Bytes::from(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{fragment}}}")))
}

/// Gives a scripted message to the script and waits for the script's answer. If the script
/// never answers (it stalled, or expects without replying), the request stays open: that is
/// what the scenario asked for.
async fn hand_over(
    conn: &Arc<Conn>,
    key: &str,
    message: Value,
    exchange: u64,
    socket: Arc<SocketControl>,
) -> Response<MockBody> {
    let (tx, rx) = oneshot::channel();
    conn.deliver(Inbound { key: key.to_string(), message, exchange, socket, reply: Some(ReplyTx::new(tx)) });
    match rx.await {
        Ok(r) => r,
        Err(_) => std::future::pending().await,
    }
}
