//! The bare hyper peer: HTTP/1.1 on 127.0.0.1 (a free port), every request answered with
//! a JSON `tools/call` result carrying the request's id ([`mcp_bench::reply_to`]); nothing
//! recorded. Prints `listening <url>` and serves until killed. What the HTTP mock is held
//! against (target: >= 0.5x its throughput).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

fn main() -> std::io::Result<()> {
    mcp_bench::runtime()?.block_on(serve())
}

async fn serve() -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    mcp_bench::listening(&format!("http://{}/mcp", listener.local_addr()?));
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service = service_fn(|request: Request<hyper::body::Incoming>| async move {
                let body = request.into_body().collect().await.map_err(std::io::Error::other)?.to_bytes();
                Response::builder()
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(mcp_bench::reply_to(&body))))
                    .map_err(std::io::Error::other)
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
