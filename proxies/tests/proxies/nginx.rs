//! A real nginx (the Debian package; `make test` installs it when missing) between a client
//! and a tiny upstream: it starts from the generated config, strips the header it is told
//! to, and leaves no process behind.

use super::support::{exchange, post, upstream};
use mcp_proxies::nginx::NginxProcess;
use mcp_scenario::via::Nginx;
use std::time::Duration;

#[tokio::test]
async fn nginx_proxies_strips_and_is_gone_after_stop() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (up, mut seen) = upstream(vec!["HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"]).await;
    let settings: Nginx =
        serde_json::from_str(r#"{"buffering": false, "strip_request_headers": ["MCP-Protocol-Version"]}"#)
            .expect("settings");
    let nginx =
        NginxProcess::start(&settings, &[up], dir.path()).await.expect("nginx starts (apt-get install -y nginx)");
    let addr = nginx.addr;
    let got = tokio::time::timeout(
        Duration::from_secs(5),
        exchange(addr, &post("{}", "MCP-Protocol-Version: 2025-11-25\r\n")),
    )
    .await
    .expect("in time")
    .expect("exchange");
    assert!(String::from_utf8_lossy(&got).ends_with("ok"));
    let request = seen.recv().await.expect("the upstream got it");
    assert!(!request.to_ascii_lowercase().contains("mcp-protocol-version"), "{request}");
    let pid: i32 =
        std::fs::read_to_string(dir.path().join("nginx.pid")).expect("pid file").trim().parse().expect("pid");
    nginx.stop().await;
    // The master is reaped and its group killed: signal 0 finds no such process.
    let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
    assert!(!alive, "nginx {pid} outlived stop()");
    assert!(exchange(addr, "GET / HTTP/1.1\r\n\r\n").await.is_err(), "nothing listens any more");
}

#[tokio::test]
async fn a_config_nginx_refuses_says_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings: Nginx = serde_json::from_str(r#"{"hide_response_headers": ["bad;header"]}"#).expect("settings");
    let up = std::net::SocketAddr::from(([127, 0, 0, 1], 9));
    let e = NginxProcess::start(&settings, &[up], dir.path()).await.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        e.starts_with("nginx did not start: it refused its config or its socket; its stderr: ")
            && e.contains("[emerg]"),
        "{e}"
    );
}
