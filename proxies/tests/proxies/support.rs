//! A one-shot HTTP upstream: accepts connections, reads each request head (and a
//! Content-Length body), hands it to the test, and answers with fixed bytes.

use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// The upstream's address and the requests it received (head and body as text).
pub async fn upstream(responses: Vec<&'static str>) -> (SocketAddr, mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        for response in responses {
            let Ok((mut s, _)) = listener.accept().await else { return };
            let request = read_request(&mut s).await;
            let _ = tx.send(request);
            let _ = s.write_all(response.as_bytes()).await;
            let _ = s.shutdown().await;
        }
    });
    (addr, rx)
}

/// Reads one request: the head up to the blank line, then Content-Length bytes.
pub async fn read_request(s: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).await.unwrap_or(0) == 0 {
            break;
        }
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    let length = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0usize);
    let mut body = vec![0u8; length];
    let _ = s.read_exact(&mut body).await;
    head + &String::from_utf8_lossy(&body)
}

/// Sends `request` to `addr` and reads until the server closes.
pub async fn exchange(addr: SocketAddr, request: &str) -> std::io::Result<Vec<u8>> {
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(request.as_bytes()).await?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).await?;
    Ok(out)
}

/// A POST of `json` with `Connection: close`, plus extra header lines.
pub fn post(json: &str, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n{extra}Content-Length: {}\r\n\r\n{json}",
        json.len()
    )
}
