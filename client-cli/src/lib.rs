//! `mcp-client`: a small MCP client over the bundled transports (`mcp-transports`).
//!
//! Two uses, one library: send one method to a server by hand (`mcp-client --url URL
//! tools/list`, `mcp-client tools/call '{…}' -- <server command>`), and play the official
//! MCP conformance suite's client role (the suite starts a scenario server, runs
//! `mcp-client <url>` with `MCP_CONFORMANCE_SCENARIO` and `MCP_CONFORMANCE_PROTOCOL_VERSION`
//! set, and judges what crossed the wire). Everything on the wire is the bundled transports'
//! doing; this crate only decides which messages to send.
//!
//! # Layout
//!
//! - [`error`] — [`ClientError`], the one error enum.
//! - [`authorization`] — the client's OAuth identity (pre-registered, metadata document or
//!   dynamic registration) and the transports' authorization client built from it.
//! - [`server`] — where the server is ([`Server`]: a URL or a command) and the
//!   [`ConnectOptions`] a session is opened with.
//! - [`revision`] — which protocol revisions are stateless, and picking a version from an
//!   `UnsupportedProtocolVersionError`.
//! - [`answers`] — answering server-to-client requests (`ping`, `roots/list`,
//!   `elicitation/create` accepted with the schema's defaults).
//! - [`session`] — [`Session`]: a connected transport after the handshake (stateful
//!   revisions) or none (2026-07-28), listings that follow `nextCursor`, the version retry.
//! - [`arguments`] — sample tool arguments built from a tool's `inputSchema`.
//! - [`conformance`] — the suite's client contract: its environment, and one [`Plan`] of
//!   [`Step`]s per scenario.
//! - [`exercise`] — runs a plan's steps over a session.
//!
//! Tests: unit tests beside the code; `tests/mcp_client/` drives the binary against
//! wiremock servers, by hand and in conformance mode.
//!
//! [`Server`]: server::Server
//! [`ConnectOptions`]: server::ConnectOptions
//! [`Session`]: session::Session
//! [`Plan`]: conformance::Plan
//! [`Step`]: conformance::Step
//!
//! # Serde style
//!
//! The client derives no serde types: the requests it sends and the results it prints are
//! `serde_json::Value`s, in the order the server wrote them (`preserve_order`), so what it
//! prints is what it received.

pub mod answers;
pub mod arguments;
pub mod authorization;
pub mod conformance;
pub mod error;
pub mod exercise;
pub mod revision;
pub mod server;
pub mod session;

pub use error::ClientError;
