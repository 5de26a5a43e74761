//! A run's proxies (scenario `via:`): the fault proxy the client talks to, the nginx behind
//! it when the scenario asks for one, and nginx's second upstream (another mock process,
//! its own script, sharing nothing with the first). Started after the mock, stopped before
//! it; everything they write stays in the run's temp dir.

use crate::http_mock::HttpMock;
use mcp_mock::record;
use mcp_proxies::nginx::NginxProcess;
use mcp_proxies::server::{self, FaultProxy};
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, TransportName};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The second upstream's exchange numbers are shifted by this in the transcript, so that
/// they never meet the first mock's (both count from 1).
pub const SECOND_UPSTREAM_EXCHANGE_BASE: u64 = 500_000;

/// The proxies of one run.
pub struct Proxies {
    proxy: FaultProxy,
    nginx: Option<NginxProcess>,
    second: Option<HttpMock>,
    /// The URL the client is given (the fault proxy's, with the mock's path).
    pub url: String,
}

/// What the proxies recorded, read back once they stopped.
#[derive(Debug, Default)]
pub struct Hops {
    /// The client's hop as the fault proxy recorded it.
    pub client: Vec<WireEvent>,
    /// The second upstream's connections (nginx `second_upstream`), exchanges shifted.
    pub second_upstream: Vec<Vec<WireEvent>>,
}

impl Proxies {
    /// Starts what the scenario's `via:` asks for in front of `mock` (listening at
    /// `mock_url`). The error is the run's reason (e.g. nginx missing and how to install it).
    pub async fn start(
        scenario: &Scenario,
        mock_url: &str,
        mock_command: &[String],
        run_dir: &Path,
        mock_deadline_ms: u64,
    ) -> Result<Option<Self>, String> {
        let Some(via) = &scenario.via else { return Ok(None) };
        let (authority, path) =
            split_url(mock_url).ok_or_else(|| format!("the mock's URL {mock_url:?} is not http://host:port/path"))?;
        let mock_addr: SocketAddr = authority.parse().map_err(|e| format!("the mock's address {authority:?}: {e}"))?;
        let mut second = None;
        let mut upstream = mock_addr;
        let mut nginx = None;
        if let Some(settings) = &via.nginx {
            let mut peers = vec![mock_addr];
            if let Some(script) = &settings.second_upstream {
                let (mock, addr) = start_second(scenario, script, mock_command, run_dir, mock_deadline_ms).await?;
                peers.push(addr);
                second = Some(mock);
            } else if settings.retry_post {
                // The retry needs a next peer: the same mock again.
                peers.push(mock_addr);
            }
            let dir = run_dir.join("nginx");
            std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let n = NginxProcess::start(settings, &peers, &dir).await.map_err(|e| e.to_string())?;
            upstream = n.addr;
            nginx = Some(n);
        }
        let proxy = FaultProxy::start(&via.faults, upstream, run_dir).await.map_err(|e| e.to_string())?;
        let url = format!("http://{}{path}", proxy.addr);
        Ok(Some(Proxies { proxy, nginx, second, url }))
    }

    /// The second upstream mock's pid, if any.
    pub fn second_pid(&self) -> Option<u32> {
        self.second.as_ref().map(HttpMock::pid)
    }

    /// Stops the fault proxy, nginx and the second upstream, in that order, and reads back
    /// what they recorded.
    pub async fn stop(self, run_dir: &Path) -> Hops {
        self.proxy.stop().await;
        if let Some(n) = self.nginx {
            n.stop().await;
        }
        let mut hops = Hops { client: server::read_record(run_dir), second_upstream: Vec::new() };
        if let Some(m) = self.second {
            m.stop().await;
            hops.second_upstream = record::read_run(&second_dir(run_dir))
                .into_iter()
                .map(|c| c.into_iter().map(|e| shift_exchange(e, SECOND_UPSTREAM_EXCHANGE_BASE)).collect())
                .collect();
        }
        hops
    }
}

fn second_dir(run_dir: &Path) -> PathBuf {
    run_dir.join("upstream-2")
}

/// Starts the second upstream: the scenario with `second_upstream` as its script (no
/// checks: they are about the first), served by another mock process recording into
/// `<run-dir>/upstream-2/`.
async fn start_second(
    scenario: &Scenario,
    script: &[mcp_scenario::ServerStep],
    mock_command: &[String],
    run_dir: &Path,
    mock_deadline_ms: u64,
) -> Result<(HttpMock, SocketAddr), String> {
    let dir = second_dir(run_dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut derived = scenario.clone();
    derived.server = script.to_vec();
    derived.checks = Vec::new();
    derived.via = None;
    // JSON is YAML: the mock's loader reads it as it reads any scenario file (named after
    // the scenario, as the loader requires of every scenario file).
    let file = dir.join(format!("{}.yaml", derived.name));
    let text =
        serde_json::to_string_pretty(&derived).map_err(|e| format!("writing the second upstream's scenario: {e}"))?;
    std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let mock = HttpMock::start(mock_command, TransportName::Http, &file, &dir, mock_deadline_ms)
        .await
        .map_err(|e| format!("the second upstream: {e}"))?;
    let addr = split_url(&mock.url)
        .and_then(|(a, _)| a.parse().ok())
        .ok_or_else(|| format!("the second upstream's URL {:?} is not http://host:port/path", mock.url))?;
    Ok((mock, addr))
}

/// `http://host:port/path` → (`host:port`, `/path`).
fn split_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("http://")?;
    Some(match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    })
}

/// The event with its exchange number moved up by `base`.
fn shift_exchange(mut e: WireEvent, base: u64) -> WireEvent {
    match &mut e {
        WireEvent::HttpRequest { exchange, .. }
        | WireEvent::HttpResponse { exchange, .. }
        | WireEvent::StreamWrite { exchange, .. }
        | WireEvent::StreamEnd { exchange, .. } => *exchange += base,
        _ => {}
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_and_exchanges_shift() {
        assert_eq!(split_url("http://127.0.0.1:9/mcp"), Some(("127.0.0.1:9", "/mcp")));
        assert_eq!(split_url("http://127.0.0.1:9"), Some(("127.0.0.1:9", "/")));
        assert_eq!(split_url("https://x/"), None);
        let e = shift_exchange(WireEvent::StreamEnd { t_us: 0, exchange: 2, how: "clean".into() }, 10);
        assert_eq!(e, WireEvent::StreamEnd { t_us: 0, exchange: 12, how: "clean".into() });
    }
}
