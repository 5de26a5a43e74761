//! Scriptable mock MCP servers that replay scenario files against a client and record
//! everything that crossed the wire.
//!
//! # Layout
//!
//! - [`record`] — writing the wire transcript, one JSON event per line; reading it back.
//! - [`stdio`] — the stdio mock server and its step engine.
//! - [`http`] — the Streamable HTTP and legacy HTTP+SSE mock servers.
//! - [`cli`] — the `mcp-mock` command line.
//! - [`error`] — [`MockError`], the crate's one error enum.
//!
//! The scenario format, payload encoding and the recorded event types live in
//! `mcp-scenario`; [`load`] is its loader plus the checks only a server can make.
//!
//! This crate never depends on the bundled transports, so the mock cannot share a bug with
//! the client it tests.

pub mod cli;
pub mod error;
pub mod http;
pub mod record;
pub mod stdio;

pub use error::MockError;
pub use mcp_scenario::Scenario;

/// Loads and validates a scenario file (see [`mcp_scenario::load`]).
pub fn load(path: &std::path::Path) -> Result<Scenario, MockError> {
    Ok(mcp_scenario::load(path)?)
}
