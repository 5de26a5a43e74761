//! The HTTP capture: `mcp-harness record --out F --upstream URL --listen 127.0.0.1:PORT` is a
//! reverse proxy for Streamable HTTP (stateful and 2026-07-28) and legacy HTTP+SSE. Each
//! request is forwarded to the upstream's origin with the same path and query; the
//! response's status and headers come back as they are, a JSON body whole, an SSE stream
//! chunk by chunk as it arrives (never buffered: a client waiting on an event gets it when
//! the server sends it). The recorder keeps each request (method, path, the headers that
//! matter, JSON body), each response head, each body or SSE event (ids, retry, comments, with
//! their time) and how each stream ended: `clean`, `reset` (the upstream broke it), `client`
//! (the client went away), `stall` (still open when the recording stopped). A legacy
//! `endpoint` event naming the upstream's origin is rewritten to the proxy's, so the client's
//! POSTs come through the proxy too. The recording stops on Ctrl-C / SIGTERM.

use super::capture::{Captured, ConnectionCapture};
use super::secrets::Secrets;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use mcp_scenario::wire::{Recorded, WireEvent};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The headers a capture keeps (the rest are transport noise: Date, Connection, …).
const KEPT_HEADERS: &[&str] = &[
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "authorization",
    "cookie",
    "set-cookie",
    "www-authenticate",
    "location",
    "mcp-method",
    "mcp-name",
];

type Body = BoxBody<Bytes, std::io::Error>;

/// The capture being built, shared by every exchange.
#[derive(Clone)]
struct Log {
    start: Instant,
    inner: Arc<Mutex<State>>,
}

struct State {
    events: Vec<Captured>,
    secrets: Secrets,
    exchanges: usize,
    /// Exchanges whose stream is still open.
    open: Vec<usize>,
}

impl Log {
    fn with<R>(&self, f: impl FnOnce(u64, &mut State) -> R) -> R {
        let t = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(t, &mut g)
    }
}

fn kept_headers(headers: &http::HeaderMap, secrets: &mut Secrets) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, value) in headers {
        let n = name.as_str().to_ascii_lowercase();
        if KEPT_HEADERS.contains(&n.as_str()) || n.starts_with("mcp-param-") || mcp_mock::secrets::is_secret_header(&n)
        {
            let v = String::from_utf8_lossy(value.as_bytes()).into_owned();
            out.insert(n.clone(), secrets.header(&n, &v));
        }
    }
    out
}

/// Incremental SSE parsing for the record (the bytes themselves pass through untouched).
#[derive(Default)]
struct Sse {
    line: Vec<u8>,
    event: Option<String>,
    id: Option<String>,
    retry: Option<u64>,
    data: Option<String>,
}

/// One parsed SSE item: an event or a comment.
struct SseItem {
    event: Option<String>,
    id: Option<String>,
    retry: Option<u64>,
    data: Option<String>,
    comment: Option<String>,
}

impl Sse {
    fn feed(&mut self, chunk: &[u8]) -> Vec<SseItem> {
        let mut out = Vec::new();
        for &b in chunk {
            if b != b'\n' {
                self.line.push(b);
                continue;
            }
            let raw = std::mem::take(&mut self.line);
            let line = String::from_utf8_lossy(raw.strip_suffix(b"\r").unwrap_or(&raw)).into_owned();
            if line.is_empty() {
                if self.event.is_some() || self.id.is_some() || self.retry.is_some() || self.data.is_some() {
                    out.push(SseItem {
                        event: self.event.take(),
                        id: self.id.take(),
                        retry: self.retry.take(),
                        data: self.data.take(),
                        comment: None,
                    });
                }
                continue;
            }
            if let Some(c) = line.strip_prefix(':') {
                out.push(SseItem {
                    event: None,
                    id: None,
                    retry: None,
                    data: None,
                    comment: Some(c.trim_start().into()),
                });
                continue;
            }
            let (field, value) =
                line.split_once(':').map_or((line.as_str(), ""), |(f, v)| (f, v.strip_prefix(' ').unwrap_or(v)));
            match field {
                "event" => self.event = Some(value.into()),
                "id" => self.id = Some(value.into()),
                "retry" => self.retry = value.parse().ok(),
                "data" => {
                    let d = self.data.get_or_insert_with(String::new);
                    if !d.is_empty() {
                        d.push('\n');
                    }
                    d.push_str(value);
                }
                _ => {}
            }
        }
        out
    }
}

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).map_err(|never: Infallible| match never {}).boxed()
}

/// Forwards one request upstream and streams the answer back, recording both.
async fn exchange(req: Request<Incoming>, upstream: Arc<Upstream>, log: Log) -> Result<Response<Body>, Infallible> {
    let exchange = log.with(|_, s| {
        s.exchanges += 1;
        s.exchanges
    });
    let method = req.method().clone();
    let path = req.uri().path_and_query().map(|p| p.as_str().to_owned()).unwrap_or_else(|| "/".into());
    let headers = req.headers().clone();
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return Ok(bad_gateway(format!("reading the client's request body: {e}"))),
    };
    log.with(|t_us, s| {
        let json = serde_json::from_slice(&body).ok().map(|v| s.secrets.json(&v));
        let kept_body = (!body.is_empty()).then(|| match &json {
            Some(v) => Recorded::whole(v.to_string().as_bytes()),
            None => Recorded::whole(s.secrets.text(&String::from_utf8_lossy(&body)).as_bytes()),
        });
        let headers = kept_headers(&headers, &mut s.secrets);
        // A query may carry a credential (`?api_key=…`, an OAuth `code`).
        let kept_path = s.secrets.text(&path);
        s.events.push(Captured::HttpRequest(WireEvent::HttpRequest {
            t_us,
            exchange: exchange as u64,
            http_method: method.to_string(),
            path: kept_path,
            headers,
            body: kept_body,
            json,
        }));
    });

    let mut forward = upstream.client.request(method.clone(), format!("{}{path}", upstream.origin)).body(body.to_vec());
    for (name, value) in &headers {
        if !matches!(name.as_str(), "host" | "content-length" | "connection" | "transfer-encoding") {
            forward = forward.header(name, value);
        }
    }
    let answer = match forward.send().await {
        Ok(a) => a,
        Err(e) => {
            log.with(|t_us, s| s.events.push(Captured::StreamEnd { t_us, exchange, how: "reset".into() }));
            return Ok(bad_gateway(format!("the upstream did not answer: {e}")));
        }
    };
    let status = answer.status();
    let resp_headers = answer.headers().clone();
    log.with(|t_us, s| {
        let headers = kept_headers(&resp_headers, &mut s.secrets);
        s.events.push(Captured::HttpResponse { t_us, exchange, status: status.as_u16(), headers });
    });
    let mut builder = Response::builder().status(status);
    for (name, value) in &resp_headers {
        if !matches!(name.as_str(), "content-length" | "connection" | "transfer-encoding") {
            builder = builder.header(name, value);
        }
    }
    let is_sse = resp_headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
    if !is_sse {
        let bytes = match answer.bytes().await {
            Ok(b) => b,
            Err(_) => {
                log.with(|t_us, s| s.events.push(Captured::StreamEnd { t_us, exchange, how: "reset".into() }));
                Bytes::new()
            }
        };
        log.with(|t_us, s| {
            let json = serde_json::from_slice(&bytes).ok().map(|v| s.secrets.json(&v));
            let body = match &json {
                Some(v) => Recorded::whole(v.to_string().as_bytes()),
                None => Recorded::whole(s.secrets.text(&String::from_utf8_lossy(&bytes)).as_bytes()),
            };
            if !bytes.is_empty() {
                s.events.push(Captured::HttpBody { t_us, exchange, body, json });
            }
        });
        return Ok(builder.body(full(bytes)).unwrap_or_else(|e| bad_gateway(e.to_string())));
    }
    // A stream: relayed chunk by chunk through a channel, parsed on the way for the record.
    log.with(|_, s| s.open.push(exchange));
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(16);
    let origin = upstream.origin.clone();
    let proxy_origin = upstream.proxy_origin.clone();
    tokio::spawn(async move {
        use futures::StreamExt;
        let mut stream = answer.bytes_stream();
        let mut sse = Sse::default();
        let how = loop {
            let next = tokio::select! {
                next = stream.next() => next,
                // The client closed its end: nothing more reaches it, and the record says so.
                _ = tx.closed() => break "client",
            };
            match next {
                None => break "clean",
                Some(Err(_)) => break "reset",
                Some(Ok(chunk)) => {
                    // A legacy endpoint naming the upstream's origin points at the proxy instead.
                    let chunk = if chunk.windows(origin.len()).any(|w| w == origin.as_bytes()) {
                        Bytes::from(String::from_utf8_lossy(&chunk).replace(&origin, &proxy_origin))
                    } else {
                        chunk
                    };
                    for item in sse.feed(&chunk) {
                        log.with(|t_us, s| {
                            let data = item.data.map(|d| match serde_json::from_str::<serde_json::Value>(&d) {
                                Ok(v) => s.secrets.json(&v).to_string(),
                                Err(_) => s.secrets.text(&d),
                            });
                            s.events.push(Captured::SseEvent {
                                t_us,
                                exchange,
                                event: item.event,
                                id: item.id,
                                retry: item.retry,
                                data,
                                comment: item.comment.map(|c| s.secrets.text(&c)),
                            })
                        });
                    }
                    if tx.send(Ok(Frame::data(chunk))).await.is_err() {
                        break "client";
                    }
                }
            }
        };
        log.with(|t_us, s| {
            s.open.retain(|&e| e != exchange);
            s.events.push(Captured::StreamEnd { t_us, exchange, how: how.into() });
        });
    });
    let body = StreamBody::new(futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|f| (f, rx)) }));
    Ok(builder.body(BodyExt::boxed(body)).unwrap_or_else(|e| bad_gateway(e.to_string())))
}

fn bad_gateway(why: String) -> Response<Body> {
    let mut r = Response::new(full(format!("mcp-harness record: {why}\n")));
    *r.status_mut() = http::StatusCode::BAD_GATEWAY;
    r
}

struct Upstream {
    client: reqwest::Client,
    /// `http://host:port` of the real server.
    origin: String,
    /// `http://host:port` of the proxy.
    proxy_origin: String,
}

/// Serves the proxy on `listen` until SIGINT / SIGTERM; returns the capture. `ready` gets
/// the bound address once the proxy accepts connections.
pub async fn record(
    upstream: &str,
    listen: &str,
    secrets: Secrets,
    ready: impl FnOnce(std::net::SocketAddr),
) -> std::io::Result<ConnectionCapture> {
    use tokio::signal::unix::{SignalKind, signal};
    let url = url::Url::parse(upstream)
        .map_err(|e| std::io::Error::other(format!("--upstream {upstream:?} is not a URL: {e}")))?;
    let origin = url.origin().ascii_serialization();
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| std::io::Error::new(e.kind(), format!("--listen {listen}: {e}")))?;
    let addr = listener.local_addr()?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .map_err(std::io::Error::other)?;
    let up = Arc::new(Upstream { client, origin, proxy_origin: format!("http://{addr}") });
    let log = Log {
        start: Instant::now(),
        inner: Arc::new(Mutex::new(State { events: Vec::new(), secrets, exchanges: 0, open: Vec::new() })),
    };
    ready(addr);
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted { Ok((s, _)) => s, Err(_) => continue },
            _ = term.recv() => break,
            _ = int.recv() => break,
        };
        let (up, log) = (up.clone(), log.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| exchange(req, up.clone(), log.clone()));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
    let (events, redacted) = log.with(|t_us, s| {
        for exchange in std::mem::take(&mut s.open) {
            s.events.push(Captured::StreamEnd { t_us, exchange, how: "stall".into() });
        }
        (std::mem::take(&mut s.events), s.secrets.take_redacted())
    });
    let transport = if events.iter().any(|e| matches!(e, Captured::SseEvent { event: Some(n), .. } if n == "endpoint"))
    {
        "legacy-sse"
    } else {
        "http"
    };
    Ok(ConnectionCapture { transport: transport.into(), source: upstream.to_owned(), events, redacted })
}

#[cfg(test)]
mod tests {
    use super::Sse;

    #[test]
    fn sse_events_and_comments_split_across_chunks() {
        let mut p = Sse::default();
        assert!(p.feed(b": keep-alive\nid: 7\nretry: 50").len() == 1);
        let items = p.feed(b"0\ndata: {\"a\":1}\ndata: x\n\n");
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].id.as_deref(), Some("7"));
        assert_eq!(items[0].retry, Some(500));
        assert_eq!(items[0].data.as_deref(), Some("{\"a\":1}\nx"));
    }
}
