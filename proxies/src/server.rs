//! The fault proxy: an HTTP/1.1 server on 127.0.0.1 that forwards each request to one
//! upstream (the mock, or nginx in front of it) over a connection of its own, applies the
//! scenario's faults ([`crate::faults`]) on the way, and records the client's hop — the
//! request as the client sent it, the response head and every body write as the client
//! got them — in `<run-dir>/proxy.jsonl`, as the mock records its own side.
//!
//! Written on hyper rather than as a TCP relay because the faults are about HTTP, SSE and
//! JSON-RPC framing (which request, which header, which event); a byte-level proxy such as
//! toxiproxy sees none of that.

use crate::error::ProxyError;
use crate::faults::{self, Active};
use crate::piece::{self, Input, Piece};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use mcp_mock::record::Recorder;
use mcp_scenario::via::{Fault, Side};
use mcp_scenario::wire::{Recorded, WireEvent, is_recorded_header};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// The client hop's exchange numbers start above this, so that they never meet the mock's
/// (which count from 1) when a transcript renumbers both.
pub const EXCHANGE_BASE: u64 = 1_000_000;

/// Response headers the record leaves out: they vary by run and machine (`date`, the
/// proxy's `server` version) or only frame the hop (`connection`, `transfer-encoding`).
const UNRECORDED_RESPONSE_HEADERS: &[&str] =
    &["date", "server", "connection", "keep-alive", "transfer-encoding", "content-length"];

/// Hop-by-hop request headers that are not forwarded (RFC 9110 §7.6.1).
const HOP_BY_HOP: &[&str] = &["connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"];

/// The record file of the client's hop in a run directory.
pub fn record_path(run_dir: &Path) -> PathBuf {
    run_dir.join("proxy.jsonl")
}

/// Reads the client hop's records back (empty when there was no proxy).
pub fn read_record(run_dir: &Path) -> Vec<WireEvent> {
    std::fs::read_to_string(record_path(run_dir))
        .map(|t| t.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
        .unwrap_or_default()
}

type Body = BoxBody<Bytes, ProxyError>;

struct Shared {
    upstream: SocketAddr,
    faults: Vec<Active>,
    recorder: Recorder,
    exchanges: AtomicU64,
    stopping: AtomicBool,
}

/// A running fault proxy.
pub struct FaultProxy {
    /// The address the client connects to.
    pub addr: SocketAddr,
    tasks: JoinSet<()>,
    shared: Arc<Shared>,
}

impl FaultProxy {
    /// Binds 127.0.0.1 (port 0) and serves until [`FaultProxy::stop`], forwarding to
    /// `upstream` and recording into `run_dir`.
    pub async fn start(faults: &[Fault], upstream: SocketAddr, run_dir: &Path) -> Result<Self, ProxyError> {
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| ProxyError::io("binding the proxy", e))?;
        let addr = listener.local_addr().map_err(|e| ProxyError::io("the proxy's address", e))?;
        let recorder = Recorder::create(&record_path(run_dir)).map_err(|e| ProxyError::Record(e.to_string()))?;
        let shared = Arc::new(Shared {
            upstream,
            faults: faults.iter().map(faults::build).collect(),
            recorder,
            exchanges: AtomicU64::new(EXCHANGE_BASE),
            stopping: AtomicBool::new(false),
        });
        let mut tasks = JoinSet::new();
        let accept_shared = shared.clone();
        tasks.spawn(async move {
            let mut connections = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                connections.spawn(serve_connection(stream, accept_shared.clone()));
                while connections.try_join_next().is_some() {}
            }
        });
        Ok(FaultProxy { addr, tasks, shared })
    }

    /// Stops serving: every connection is dropped (a stream still open is recorded so) and
    /// the record is sealed.
    pub async fn stop(mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.tasks.shutdown().await;
        self.shared.recorder.seal();
    }
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    // A second handle on the same socket, so a `reset` can set SO_LINGER 0 on it after
    // hyper has taken the stream.
    let socket = stream.as_fd().try_clone_to_owned().ok().map(socket2::Socket::from).map(Arc::new);
    let service = hyper::service::service_fn(move |req| {
        let (shared, socket) = (shared.clone(), socket.clone());
        async move { handle(req, shared, socket).await }
    });
    let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
}

/// Makes the connection's close a reset (TCP RST).
fn arm_reset(socket: &Option<Arc<socket2::Socket>>) {
    if let Some(s) = socket {
        let _ = s.set_linger(Some(std::time::Duration::ZERO));
    }
}

async fn handle(
    req: Request<Incoming>,
    shared: Arc<Shared>,
    socket: Option<Arc<socket2::Socket>>,
) -> Result<Response<Body>, ProxyError> {
    let exchange = shared.exchanges.fetch_add(1, Ordering::SeqCst) + 1;
    let (mut parts, body) = req.into_parts();
    let body = body.collect().await.map_err(|e| ProxyError::Upstream(format!("reading the request: {e}")))?.to_bytes();
    let json: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
    let method = json.as_ref().and_then(|v| v.get("method")).and_then(|m| m.as_str()).map(str::to_string);
    let rec = &shared.recorder;
    rec.record(&WireEvent::HttpRequest {
        t_us: rec.now_us(),
        exchange,
        http_method: parts.method.to_string(),
        path: parts.uri.path_and_query().map(|p| p.to_string()).unwrap_or_default(),
        headers: recorded_request_headers(&parts.headers),
        body: (!body.is_empty()).then(|| Recorded::of(&body)),
        json: json.clone(),
    });
    let active: Vec<Active> =
        shared.faults.iter().filter(|f| f.applies(parts.method.as_str(), method.as_deref())).cloned().collect();
    for f in &active {
        f.op.headers(Side::Request, &mut parts.headers);
    }
    for h in HOP_BY_HOP {
        parts.headers.remove(*h);
    }
    if let Ok(host) = HeaderValue::try_from(shared.upstream.to_string()) {
        parts.headers.insert(header::HOST, host);
    }
    let tries = active.iter().map(|f| f.op.tries_on_502()).max().unwrap_or(1).max(1);
    let mut attempt = 1;
    let response = loop {
        let sent = send(shared.upstream, &parts, body.clone()).await;
        match sent {
            Ok(r) if r.status() == StatusCode::BAD_GATEWAY && attempt < tries => {
                rec.record(&WireEvent::Note {
                    t_us: rec.now_us(),
                    text: format!(
                        "proxy: the upstream answered #{exchange} 502; sending it again (try {})",
                        attempt + 1
                    ),
                });
                let _ = r.into_body().collect().await;
                attempt += 1;
            }
            Ok(r) => break r,
            Err(e) => {
                let text = format!("proxy: {e}");
                rec.record(&WireEvent::HttpResponse {
                    t_us: rec.now_us(),
                    exchange,
                    status: 502,
                    headers: BTreeMap::new(),
                    body: Some(Recorded::of(text.as_bytes())),
                    json: None,
                    why: "proxy: upstream unreachable".into(),
                });
                let mut resp = Response::new(Full::new(Bytes::from(text)).map_err(|never| match never {}).boxed());
                *resp.status_mut() = StatusCode::BAD_GATEWAY;
                return Ok(resp);
            }
        }
    };
    if active.iter().any(|f| f.op.stalls()) {
        rec.record(&WireEvent::Note {
            t_us: rec.now_us(),
            text: format!("proxy: #{exchange} stalled (the upstream answered {}; never forwarded)", response.status()),
        });
        // Held until the client goes away or the proxy stops; the upstream's answer with it.
        let _held = response;
        return std::future::pending().await;
    }
    if active.iter().any(|f| f.op.resets_before_head()) {
        rec.record(&WireEvent::StreamEnd { t_us: rec.now_us(), exchange, how: "reset".into() });
        arm_reset(&socket);
        return Err(ProxyError::Cut);
    }
    let delay: std::time::Duration = active.iter().map(|f| f.op.head_delay()).sum();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let (mut head, upstream_body) = response.into_parts();
    for f in &active {
        f.op.headers(Side::Response, &mut head.headers);
    }
    let sse = head
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    rec.record(&WireEvent::HttpResponse {
        t_us: rec.now_us(),
        exchange,
        status: head.status.as_u16(),
        headers: recorded_response_headers(&head.headers),
        body: None,
        json: None,
        why: if attempt > 1 { format!("upstream, try {attempt}") } else { "upstream".into() },
    });
    for h in ["connection", "keep-alive", "transfer-encoding"] {
        head.headers.remove(h);
    }
    // The body's path: the upstream → each fault's stage → the recorder → the client.
    let (tx, mut input) = piece::link();
    tokio::spawn(pump(upstream_body, tx));
    for f in &active {
        let (tx, next) = piece::link();
        tokio::spawn(f.op.clone().body(input, tx, sse));
        input = next;
    }
    let length = head.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    let first = if !sse && active.is_empty() { first_piece(&mut input).await } else { None };
    Ok(Response::from_parts(head, client_body(input, first, shared.clone(), exchange, length, socket)))
}

/// How long a plain (non-stream) response's head waits for its body's first piece.
const HEAD_WAITS_FOR_BODY: std::time::Duration = std::time::Duration::from_millis(200);

/// The body's first piece, if it comes soon, so the client gets the head and the body
/// together, as from the upstream and from the mock (whose plain bodies are written with
/// their head). Sent apart, the head of an error reached a client that then exited before
/// the body was written, and the client's hop lacked its body line now and then (`make
/// soak`). Streams, and responses a fault shapes, are never held.
async fn first_piece(input: &mut piece::Input) -> Option<Option<Piece>> {
    tokio::time::timeout(HEAD_WAITS_FOR_BODY, input.recv()).await.ok()
}

/// Sends one attempt of the request to the upstream over a connection of its own.
async fn send(
    upstream: SocketAddr,
    parts: &http::request::Parts,
    body: Bytes,
) -> Result<Response<Incoming>, ProxyError> {
    let stream = TcpStream::connect(upstream)
        .await
        .map_err(|e| ProxyError::Upstream(format!("connecting to {upstream}: {e}")))?;
    let _ = stream.set_nodelay(true);
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| ProxyError::Upstream(format!("handshake with {upstream}: {e}")))?;
    tokio::spawn(conn);
    let mut req = Request::builder().method(parts.method.clone()).uri(parts.uri.clone());
    if let Some(h) = req.headers_mut() {
        *h = parts.headers.clone();
    }
    let req = req.body(Full::new(body)).map_err(|e| ProxyError::Upstream(e.to_string()))?;
    sender.send_request(req).await.map_err(|e| ProxyError::Upstream(format!("sending to {upstream}: {e}")))
}

/// Reads the upstream's body into pieces, one per frame as it came; a broken upstream
/// stream becomes a cut.
async fn pump(mut body: Incoming, tx: piece::Output) {
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(f) => {
                if let Ok(data) = f.into_data()
                    && !data.is_empty()
                    && tx.send(Piece::Data(data)).await.is_err()
                {
                    return;
                }
            }
            Err(_) => {
                let _ = tx.send(Piece::Cut).await;
                return;
            }
        }
    }
}

/// The last stage: records each write as the client gets it and how the stream ended, and
/// turns cuts and resets into a body error (hyper then drops the connection).
fn client_body(
    input: Input,
    first: Option<Option<Piece>>,
    shared: Arc<Shared>,
    exchange: u64,
    length: Option<usize>,
    socket: Option<Arc<socket2::Socket>>,
) -> Body {
    struct End {
        shared: Arc<Shared>,
        exchange: u64,
        how: Option<&'static str>,
        sent: usize,
    }
    impl Drop for End {
        fn drop(&mut self) {
            let gone = if self.shared.stopping.load(Ordering::SeqCst) {
                "open when the proxy stopped"
            } else {
                "client went away"
            };
            let how = self.how.unwrap_or(gone);
            let rec = &self.shared.recorder;
            rec.record(&WireEvent::StreamEnd { t_us: rec.now_us(), exchange: self.exchange, how: how.into() });
        }
    }
    let end = End { shared, exchange, how: None, sent: 0 };
    let stream = futures::stream::unfold(Some((input, first, end)), move |state| {
        let socket = socket.clone();
        async move {
            let (mut input, first, mut end) = state?;
            let rec = &end.shared.recorder;
            let piece = match first {
                Some(piece) => piece,
                None => input.recv().await,
            };
            match piece {
                Some(Piece::Data(b)) => {
                    rec.record(&WireEvent::StreamWrite {
                        t_us: rec.now_us(),
                        exchange: end.exchange,
                        bytes: Recorded::of(&b),
                        why: "proxy".into(),
                    });
                    // hyper stops reading a body once it has its Content-Length.
                    end.sent += b.len();
                    if length == Some(end.sent) {
                        end.how = Some("clean");
                    }
                    Some((Ok(Frame::data(b)), Some((input, None, end))))
                }
                Some(Piece::Cut) => {
                    // Pending once, so hyper flushes what it holds before the error drops
                    // the connection.
                    tokio::task::yield_now().await;
                    end.how = Some("cut by the proxy");
                    Some((Err(ProxyError::Cut), None))
                }
                Some(Piece::Reset) => {
                    tokio::task::yield_now().await;
                    end.how = Some("reset by the proxy");
                    arm_reset(&socket);
                    Some((Err(ProxyError::Cut), None))
                }
                None => {
                    end.how = Some("clean");
                    None
                }
            }
        }
    });
    BodyExt::boxed(StreamBody::new(stream))
}

fn recorded_request_headers(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .filter(|(k, _)| is_recorded_header(k.as_str()))
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .map(|(k, v)| if k == "authorization" { (k, redact_credential(&v)) } else { (k, v) })
        .collect()
}

fn recorded_response_headers(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .filter(|(k, _)| !UNRECORDED_RESPONSE_HEADERS.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect()
}

/// An Authorization value with its credential replaced: the scheme stays, the token never
/// reaches the record.
fn redact_credential(value: &str) -> String {
    match value.split_once(' ') {
        Some((scheme, _)) => format!("{scheme} <redacted>"),
        None => "<redacted>".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_never_reach_the_record() {
        for (credential, recorded) in [("Bearer abc.def", "Bearer <redacted>"), ("abc", "<redacted>")] {
            assert_eq!(redact_credential(credential), recorded, "{credential}");
        }
    }
}
