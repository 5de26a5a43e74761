//! The Streamable HTTP and legacy HTTP+SSE mock servers.
//!
//! One process serves one scenario on 127.0.0.1 (port 0 unless told otherwise), prints
//! `listening http://127.0.0.1:<port>/mcp` (legacy: `…/sse`) on stdout once bound, and
//! serves until it is stopped (SIGTERM / SIGINT: records what is still open, flushes the
//! record, exits 128+N), its deadline expires (exit 124) or the script says `exit`.
//!
//! The transport is chosen by the subcommand (`mcp-mock http` / `mcp-mock legacy-sse`),
//! not by the scenario, because a scenario may run over several transports; the CLI
//! refuses a scenario that does not list the transport it is asked to serve.
//!
//! Connections: the server script is split at `new_connection` steps. Over Streamable HTTP
//! each part is one session: part 1 starts with the server, and an `initialize` that part
//! n's script no longer expects starts part n+1. Over legacy SSE each part is one GET
//! stream. Each part records to its own `conn-<n>.jsonl`.
//!
//! # Layout
//!
//! - [`server`] — the listener and the request handler (routing, auth, defaults).
//! - [`engine`] — runs one connection's script against what the handler delivers.
//! - [`shared`] — state shared by both: connections, sessions, rules, response helpers.
//! - [`body`] — response bodies: whole, or a scripted stream with its faults.
//! - [`raw`] — the socket wrapper for what hyper cannot do (RST, raw bytes, stalls).
//! - [`sse`] — SSE event bytes.
//! - [`journal`] — the buffered, thread-backed record writer.

pub mod body;
pub mod engine;
pub mod journal;
pub mod raw;
pub mod server;
pub mod shared;
pub mod sse;

use crate::error::MockError;
use journal::Journal;
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, ServerStep};
use shared::Shared;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

/// How long a stopping mock waits for streams the client is closing to be seen closed.
const STOP_GRACE: Duration = Duration::from_millis(300);

/// Which HTTP transport the mock speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// Streamable HTTP (2025-03-26 … 2025-11-25): POST, optional GET listener, DELETE.
    StreamableHttp,
    /// Legacy HTTP+SSE (2024-11-05): GET stream with an `endpoint` event, POSTs to it.
    LegacySse,
}

impl Flavour {
    /// The path printed in the `listening` line.
    pub fn path(self) -> &'static str {
        match self {
            Flavour::StreamableHttp => "/mcp",
            Flavour::LegacySse => "/sse",
        }
    }
}

/// Binds 127.0.0.1:`port` (0 = any free port), prints the `listening` line and serves the
/// scenario until stopped. Returns only on a bind error.
pub async fn serve(
    scenario: &Scenario,
    run_dir: &Path,
    flavour: Flavour,
    port: u16,
    deadline: Duration,
) -> Result<(), MockError> {
    let addr = format!("127.0.0.1:{port}");
    let listener = TcpListener::bind(&addr).await.map_err(|source| MockError::Bind { addr: addr.clone(), source })?;
    let port = listener.local_addr().map_err(|e| MockError::io("reading the bound address", e))?.port();
    let parts: Vec<Vec<ServerStep>> =
        scenario.server.split(|s| matches!(s, ServerStep::NewConnection)).map(<[ServerStep]>::to_vec).collect();
    let shared = Arc::new(Shared::new(Journal::start(run_dir), flavour, scenario.revision, port, parts));
    shared.start_next();
    // Signal handlers go in before the `listening` line: whoever reads it may stop us at once.
    let signals = (signal(SignalKind::terminate()), signal(SignalKind::interrupt()), signal(SignalKind::hangup()));

    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening http://127.0.0.1:{port}{}", flavour.path())
            .map_err(|e| MockError::io("writing the listening line", e))?;
        out.flush().map_err(|e| MockError::io("writing the listening line", e))?;
    }
    tokio::spawn(server::accept_loop(listener, shared.clone()));
    stop_on_signal_or_deadline(shared, signals, deadline).await
}

type Signals = (
    std::io::Result<tokio::signal::unix::Signal>,
    std::io::Result<tokio::signal::unix::Signal>,
    std::io::Result<tokio::signal::unix::Signal>,
);

async fn stop_on_signal_or_deadline(
    shared: Arc<Shared>,
    signals: Signals,
    deadline: Duration,
) -> Result<(), MockError> {
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = signals else {
        tokio::time::sleep(deadline).await;
        stop(&shared, 124, Some("deadline")).await;
    };
    let (code, why) = tokio::select! {
        _ = term.recv() => (128 + 15, None),
        _ = int.recv() => (128 + 2, None),
        _ = hup.recv() => (128 + 1, None),
        _ = tokio::time::sleep(deadline) => (124, Some("deadline")),
    };
    stop(&shared, code, why).await
}

/// Records what is still open, flushes the record and exits. Being stopped by the harness
/// is not part of the client's behaviour, so only a deadline expiry records an `exit`.
async fn stop(shared: &Shared, code: i32, why: Option<&str>) -> ! {
    shared.streams_settled(STOP_GRACE).await;
    shared.record_open_streams();
    if let Some(why) = why {
        for c in shared.conns() {
            shared.record(
                c.index,
                &WireEvent::Exit { t_us: shared.journal.now_us(), code: Some(code), signal: None, why: why.into() },
            );
        }
    }
    shared.journal.flush(Duration::from_secs(2));
    std::process::exit(code)
}
