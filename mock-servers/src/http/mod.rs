//! The Streamable HTTP and legacy HTTP+SSE mock servers.
//!
//! [`serve`] serves one scenario on a bound listener until it is stopped (a signal from its
//! [`Shutdown`]: it records what is still open, flushes the record, and ends with 128+N),
//! its deadline expires (124) or the script says `exit`. The binary binds 127.0.0.1 (port
//! 0 unless told otherwise) and prints `listening http://127.0.0.1:<port>/mcp` (legacy:
//! `…/sse`) once bound.
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
//! - [`flavour`] — which of the two HTTP transports.
//! - [`conn`] — one connection's data: script part, budget, inbox, streams, sessions.
//! - [`shared`] — the state handlers and engines share, and the response helpers.
//! - [`server`] — the accept loop and the request handler (routing, auth, defaults).
//! - [`request`] — what the handler reads from a request (headers, credential, body, path).
//! - [`run`] — what an op's `run_http` works with: a connection's script state.
//! - [`engine`] — runs one connection's script, each step by its op.
//! - [`outbox`] — the engine's sends, held until it yields, so a burst of steps is recorded
//!   before the client sees any of it.
//! - [`standing`] — the answers a connection keeps for GETs and requests no step consumes (`repeat`).
//! - [`body`] — response bodies: whole, or a scripted stream with its faults.
//! - [`raw`] — the socket wrapper for what hyper cannot do (RST, raw bytes, stalls).
//! - [`sse`] — SSE event bytes.
//! - [`journal`] — the buffered, thread-backed record writer.

pub mod body;
pub mod conn;
pub mod engine;
pub mod flavour;
pub mod journal;
pub mod outbox;
pub mod raw;
pub mod request;
pub mod run;
pub mod server;
pub mod shared;
pub mod sse;
pub mod standing;

use crate::error::MockError;
use crate::ops;
use crate::shutdown::{ExitReason, Shutdown, Stop};
use conn::Part;
pub use flavour::Flavour;
use journal::Journal;
use mcp_scenario::Scenario;
use mcp_scenario::script::connection_parts;
use mcp_scenario::wire::WireEvent;
use shared::Shared;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// How long a stopping mock waits for streams the client is closing to be seen closed.
const STOP_GRACE: Duration = Duration::from_millis(300);

/// Serves the scenario as `flavour` on `listener`, recording into `run_dir`, until it is
/// stopped (see the module docs). Everything is recorded and flushed before this returns;
/// the tasks it spawned end with it.
pub async fn serve(
    scenario: &Scenario,
    run_dir: &Path,
    flavour: Flavour,
    listener: TcpListener,
    shutdown: Shutdown,
) -> Result<ExitReason, MockError> {
    Server::start(scenario, run_dir, flavour, listener)?.serve(shutdown).await
}

/// An HTTP mock on a bound listener whose first connection's script is already running,
/// before it accepts anything: a binary announces it (`listening …`) between
/// [`Server::start`] and [`Server::serve`], so whoever reads the line finds the script's
/// first steps (`require_auth`…) in force.
pub struct Server {
    shared: Arc<Shared>,
    listener: TcpListener,
}

impl Server {
    /// Starts connection 1's script. Call inside a Tokio runtime.
    pub fn start(
        scenario: &Scenario,
        run_dir: &Path,
        flavour: Flavour,
        listener: TcpListener,
    ) -> Result<Self, MockError> {
        let port = listener.local_addr().map_err(|e| MockError::io("reading the bound address", e))?.port();
        let parts = connection_parts(&scenario.server)
            .map(|steps| Part { budget: ops::budget(steps, flavour.transport()), steps: steps.to_vec() })
            .collect();
        let journal = Journal::start(run_dir);
        let mut shared = Shared::new(journal, flavour, scenario.revision, port, parts, engine::start);
        shared.defaults = crate::defaults::Defaults::for_scenario(scenario);
        shared.refuse_before_session = flavour == Flavour::StreamableHttp
            && connection_parts(&scenario.server).next().is_some_and(|part| {
                part.iter().any(|s| matches!(s, mcp_scenario::ServerStep::Handshake(h) if h.refuse_before))
            });
        let shared = Arc::new(shared);
        shared.start_next();
        Ok(Server { shared, listener })
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.shared.port
    }

    /// Accepts and serves until the mock is stopped or its script exits.
    pub async fn serve(self, mut shutdown: Shutdown) -> Result<ExitReason, MockError> {
        let Server { shared, listener } = self;
        shared.spawn(server::accept_loop(listener, shared.clone()));
        tokio::select! {
            stop = shutdown.next() => stop_now(&shared, stop).await,
            _ = shared.ended() => {}
        }
        Ok(shared.ended().await)
    }
}

/// Records what is still open and flushes the record. Being stopped by the harness is not
/// part of the client's behaviour, so only a deadline expiry records an `exit`.
async fn stop_now(shared: &Shared, stop: Stop) {
    let (code, why) = match stop {
        Stop::Signal(sig) => (128 + sig as i32, sig.as_str()),
        Stop::Deadline => (124, "deadline"),
    };
    shared.streams_settled(STOP_GRACE).await;
    shared.scripts_settled(STOP_GRACE).await;
    shared.record_open_streams();
    if stop == Stop::Deadline {
        for c in shared.conns() {
            shared.record(
                c.index,
                &WireEvent::Exit { t_us: shared.journal.now_us(), code: Some(code), signal: None, why: why.into() },
            );
        }
    }
    shared.end(ExitReason::code(code, why));
}
