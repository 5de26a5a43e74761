//! Peak RSS of the bundled transports when the server sends one message far over the cap
//! (default 1 GiB; the transports' default cap is 16 MiB), and whether the connection
//! still delivers the next message. `hostile-input stdio|http` is the client: it spawns
//! this program as the server (`serve-stdio` / `serve-http`, so the server's memory is not
//! counted), sends one `tools/call`, and the server first sends the huge message (a
//! notification padded to `--mib` MiB: one line, or one SSE event on the POST's stream)
//! and then the reply. Prints `peak_rss_mib=… delivered=yes|no oversize_dropped=… s=…`.

use bytes::Bytes;
use clap::{Parser, Subcommand};
use futures::stream;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use mcp_bench::{reply_to, rss_kib, tools_call_params};
use mcp_transports::client::create_transport;
use mcp_transports::config::TransportKind;
use mcp_transports::{Handlers, RequestOptions, TransportConfig};
use std::io::{BufRead, Write};
use std::time::Instant;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
    /// The size of the hostile message in MiB.
    #[arg(long, global = true, default_value_t = 1024)]
    mib: usize,
}

#[derive(Subcommand)]
enum Cmd {
    /// The bundled stdio transport against `serve-stdio`.
    Stdio,
    /// The bundled Streamable HTTP transport against `serve-http`.
    Http,
    /// The stdio server: the huge line, then the reply, for every request line.
    ServeStdio,
    /// The HTTP server: each POST gets an SSE stream of the huge event, then the reply.
    ServeHttp,
}

/// The huge message is written in pieces of this size, so the server stays small too.
const CHUNK: usize = 1 << 20;

fn main() {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Cmd::Stdio => client(TransportKind::Stdio, cli.mib),
        Cmd::Http => client(TransportKind::Http, cli.mib),
        Cmd::ServeStdio => serve_stdio(cli.mib).map_err(|e| e.to_string()),
        Cmd::ServeHttp => serve_http(cli.mib).map_err(|e| e.to_string()),
    };
    if let Err(e) = outcome {
        eprintln!("hostile-input: {e}");
        std::process::exit(1);
    }
}

/// The head and tail of a notification whose string is padded with `x` to `mib` MiB.
fn huge_parts(mib: usize) -> (&'static [u8], usize, &'static [u8]) {
    let head: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""#;
    let tail: &[u8] = br#""}}"#;
    (head, mib * CHUNK, tail)
}

fn client(kind: TransportKind, mib: usize) -> Result<(), String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?.to_string_lossy().into_owned();
    let mib_arg = mib.to_string();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let mut server = None;
    let mut config = TransportConfig { kind, protocol_version: "2025-11-25".into(), ..Default::default() };
    match kind {
        TransportKind::Http => {
            let mut child = std::process::Command::new(&me)
                .args(["serve-http", "--mib", &mib_arg])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| e.to_string())?;
            let mut line = String::new();
            let out = child.stdout.take().ok_or("no stdout")?;
            std::io::BufReader::new(out).read_line(&mut line).map_err(|e| e.to_string())?;
            config.url = line.trim().strip_prefix("listening ").ok_or("the server did not start")?.to_string();
            server = Some(child);
        }
        _ => {
            config.command = me;
            config.args = vec!["serve-stdio".into(), "--mib".into(), mib_arg];
        }
    }
    let before = rss_kib("VmRSS");
    let started = Instant::now();
    let (delivered, dropped) = runtime.block_on(async {
        let transport = create_transport(&config, Handlers::default()).await.map_err(|e| e.to_string())?;
        let reply = transport.request("tools/call", Some(tools_call_params()), RequestOptions::default()).await;
        if let Err(e) = &reply {
            eprintln!("hostile-input: the reply after the huge message: {e}");
        }
        let dropped = transport.diagnostics().oversize_dropped;
        transport.close().await;
        Ok::<_, String>((reply.is_ok(), dropped))
    })?;
    let seconds = started.elapsed().as_secs_f64();
    if let Some(mut child) = server {
        let _ = child.kill();
        let _ = child.wait();
    }
    println!(
        "peak_rss_mib={:.1} rss_before_mib={:.1} delivered={} oversize_dropped={dropped} s={seconds:.1}",
        rss_kib("VmHWM") as f64 / 1024.0,
        before as f64 / 1024.0,
        if delivered { "yes" } else { "no" },
    );
    Ok(())
}

fn serve_stdio(mib: usize) -> std::io::Result<()> {
    let (head, size, tail) = huge_parts(mib);
    let filler = vec![b'x'; CHUNK];
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in std::io::stdin().lock().split(b'\n') {
        let line = line?;
        out.write_all(head)?;
        for _ in 0..size / CHUNK {
            out.write_all(&filler)?;
        }
        out.write_all(tail)?;
        out.write_all(b"\n")?;
        out.write_all(&reply_to(&line))?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}

fn serve_http(mib: usize) -> std::io::Result<()> {
    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    mcp_bench::runtime()?.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        mcp_bench::listening(&format!("http://{}/mcp", listener.local_addr()?));
        loop {
            let (stream, _) = listener.accept().await?;
            tokio::spawn(async move {
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| async move {
                    let body = request.into_body().collect().await.map_err(std::io::Error::other)?.to_bytes();
                    let (head, size, tail) = huge_parts(mib);
                    let filler = Bytes::from(vec![b'x'; CHUNK]);
                    let mut first = b"data: ".to_vec();
                    first.extend_from_slice(head);
                    let mut last = tail.to_vec();
                    last.extend_from_slice(b"\n\ndata: ");
                    last.extend_from_slice(&reply_to(&body));
                    last.extend_from_slice(b"\n\n");
                    let pieces = std::iter::once(Bytes::from(first))
                        .chain(std::iter::repeat_n(filler, size / CHUNK))
                        .chain(std::iter::once(Bytes::from(last)))
                        .map(|b| Ok::<_, std::io::Error>(Frame::data(b)));
                    hyper::Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(StreamBody::new(stream::iter(pieces)))
                        .map_err(std::io::Error::other)
                });
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    })
}
