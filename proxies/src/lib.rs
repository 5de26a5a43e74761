//! What sits between an MCP client and the mock (scenario `via:`): the fault proxy, which
//! knows HTTP, SSE and JSON-RPC framing, and a real nginx. The harness wires them into a
//! run as `client → fault proxy → nginx → mock`; the fault proxy records the client's hop,
//! the mock records its own, so a transcript shows what the proxies changed.
//!
//! A crate of its own so that the layering stays as DESIGN draws it: it reads the scenario
//! model's data (`mcp_scenario::via`) and writes the mock's record format with the mock's
//! recorder (`mcp_mock::record`), and knows nothing of the client under test
//! (`mcp_transports`), so a proxy can never share a bug with the client it stands in front of.
//!
//! # Layout
//!
//! - [`error`] — [`ProxyError`], the crate's one error enum.
//! - [`piece`] — the response body as pieces through a chain of stages; SSE event ends.
//! - [`faults`] — one module per fault behind [`faults::FaultOp`].
//! - [`server`] — the fault proxy ([`server::FaultProxy`]): forwards, applies the faults,
//!   records the client's hop.
//! - [`nginx`] — a real nginx ([`nginx::NginxProcess`]): generated config, start, stop.
//!
//! # Serde style
//!
//! The proxies derive no serde types: a fault's settings are `mcp-scenario`'s (`via`) and
//! the hop's records are its `WireEvent`s. A request body is parsed as `serde_json::Value`
//! only to learn its method (for a fault's `only` and the record); the bytes forwarded are
//! the bytes that arrived.

pub mod error;
pub mod faults;
pub mod nginx;
pub mod piece;
pub mod server;

pub use error::ProxyError;
