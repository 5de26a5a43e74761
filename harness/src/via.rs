//! A run's proxies (scenario `via:`): the fault proxy the client talks to, the nginx behind
//! it when the scenario asks for one, and nginx's second upstream (another mock process,
//! its own script, sharing nothing with the first). Started after the mock, stopped before
//! it; everything they write stays in the run's temp dir. The second upstream records into
//! [`second_upstream_dir`], which the run's record reads with the rest
//! ([`crate::run_record::RunRecord::into_wire`]).

use crate::error::HarnessError;
use crate::http_mock::HttpMock;
use crate::run_record::second_upstream_dir;
use mcp_proxies::nginx::NginxProcess;
use mcp_proxies::server::{self, FaultProxy};
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, TransportName};
use std::net::SocketAddr;
use std::path::Path;

/// The proxies of one run.
pub struct Proxies {
    proxy: FaultProxy,
    nginx: Option<NginxProcess>,
    second: Option<HttpMock>,
    /// The URL the client is given (the fault proxy's, with the mock's path).
    pub url: String,
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
    ) -> Result<Option<Self>, HarnessError> {
        let Some(via) = &scenario.via else { return Ok(None) };
        let (mock_addr, path) = mock_address(mock_url, "the mock's")?;
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
            create_dir(&dir)?;
            let n = NginxProcess::start(settings, &peers, &dir).await?;
            upstream = n.addr;
            nginx = Some(n);
        }
        let proxy = FaultProxy::start(&via.faults, upstream, run_dir).await?;
        let url = format!("http://{}{path}", proxy.addr);
        Ok(Some(Proxies { proxy, nginx, second, url }))
    }

    /// The second upstream mock's pid, if any.
    pub fn second_pid(&self) -> Option<u32> {
        self.second.as_ref().map(HttpMock::pid)
    }

    /// Stops the fault proxy, nginx and the second upstream, in that order; returns the
    /// client's hop as the fault proxy recorded it (the second upstream's record is the
    /// run's, read with the mock's).
    pub async fn stop(self, run_dir: &Path) -> Vec<WireEvent> {
        self.proxy.stop().await;
        if let Some(n) = self.nginx {
            n.stop().await;
        }
        let client_hop = server::read_record(run_dir);
        if let Some(m) = self.second {
            m.stop().await;
        }
        client_hop
    }
}

fn create_dir(dir: &Path) -> Result<(), HarnessError> {
    std::fs::create_dir_all(dir).map_err(|e| HarnessError::io(format!("cannot create {}", dir.display()), e))
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
) -> Result<(HttpMock, SocketAddr), HarnessError> {
    let dir = second_upstream_dir(run_dir);
    create_dir(&dir)?;
    let mut derived = scenario.clone();
    derived.server = script.to_vec();
    derived.checks = Vec::new();
    derived.via = None;
    // JSON is YAML: the mock's loader reads it as it reads any scenario file (named after
    // the scenario, as the loader requires of every scenario file).
    let file = dir.join(format!("{}.yaml", derived.name));
    let text = serde_json::to_string_pretty(&derived)
        .map_err(|e| HarnessError::io("writing the second upstream's scenario", e.into()))?;
    std::fs::write(&file, text).map_err(|e| HarnessError::io(format!("cannot write {}", file.display()), e))?;
    let mock = HttpMock::start(mock_command, TransportName::Http, &file, &dir, mock_deadline_ms)
        .await
        .map_err(HarnessError::SecondUpstream)?;
    let (addr, _) = mock_address(&mock.url, "the second upstream's")?;
    Ok((mock, addr))
}

/// A mock's `http://host:port/path` as its socket address and path; `whose` names the mock
/// in the error.
fn mock_address<'u>(url: &'u str, whose: &'static str) -> Result<(SocketAddr, &'u str), HarnessError> {
    let not_http = || HarnessError::MockUrl { whose, url: url.to_string() };
    let (authority, path) = split_url(url).ok_or_else(not_http)?;
    Ok((authority.parse().map_err(|_| not_http())?, path))
}

/// `http://host:port/path` → (`host:port`, `/path`).
fn split_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("http://")?;
    Some(match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_addresses_and_paths() {
        assert_eq!(split_url("http://127.0.0.1:9/mcp"), Some(("127.0.0.1:9", "/mcp")));
        assert_eq!(split_url("http://127.0.0.1:9"), Some(("127.0.0.1:9", "/")));
        assert_eq!(split_url("https://x/"), None);
        let (addr, path) = mock_address("http://127.0.0.1:9/mcp", "the mock's").expect("an address");
        assert_eq!((addr.port(), path), (9, "/mcp"));
        let refused = mock_address("http://localhost:9/mcp", "the mock's").expect_err("not an IP address");
        assert_eq!(refused.to_string(), "the mock's URL \"http://localhost:9/mcp\" is not http://host:port/path");
    }
}
