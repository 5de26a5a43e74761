//! Scriptable mock MCP servers that replay scenario files against a client and record
//! everything that crossed the wire.
//!
//! # Layout
//!
//! - [`scenario`] — the scenario format v1 (client plan, server script, checks).
//! - [`load`] — strict loading and validation; errors name file:line:column and the field.
//! - [`schema`] — the JSON Schema generated from the format's types.
//! - [`payload`] — script steps to bytes (raw payloads, replies, corrupted ids, padding).
//! - [`record`] — the wire transcript the mock writes, one JSON event per line.
//! - [`stdio`] — the stdio mock server and its step engine.
//! - [`http`] — the Streamable HTTP and legacy HTTP+SSE mock servers.
//! - [`cli`] — the `mcp-mock` command line.
//! - [`error`] — [`MockError`], the crate's one error enum.
//!
//! This crate never depends on the bundled transports, so the mock cannot share a bug with
//! the client it tests.

pub mod cli;
pub mod error;
pub mod http;
pub mod load;
pub mod payload;
pub mod record;
pub mod scenario;
pub mod schema;
pub mod signals;
pub mod stdio;

pub use error::MockError;
pub use load::load;
pub use scenario::Scenario;
