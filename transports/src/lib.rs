//! The bundled MCP client transports and the client handshake.
//!
//! Behaviour contract: `SPEC.md` (§2 trait, §3 stdio, §4 Streamable HTTP, §5 legacy SSE,
//! §6 client, §7 manager). The harness checks every rule of it through scenarios.
//!
//! # Layout
//!
//! - [`message`] — JSON-RPC 2.0 shapes and request ids; classifying an inbound value.
//! - [`error`] — [`TransportError`], the one error enum; its `Display` is SPEC's exact text.
//!   Inner layers raise small typed errors beside their code that convert into it.
//! - [`config`] — per-connection settings and timeout resolution (`MCP_TIMEOUT_MS`).
//! - [`transport`] — the [`Transport`] trait, [`Handlers`], [`RequestOptions`], [`Reply`].
//! - [`pending`] — id allocation, the pending-request map and inbound dispatch, shared by
//!   every transport so they all correlate and report alike.
//! - [`stdio`] — newline-delimited JSON over a child process.
//! - [`sse`] — a byte-level WHATWG server-sent-events parser.
//! - `http_common` (private) — the HTTP plumbing both HTTP transports share, written once:
//!   the client and its redirect policy, auth headers and refresh, status errors, capped
//!   body reads, the request / notification / cancellation flows, and the one
//!   [`Transport`] impl of both.
//! - [`http`] — Streamable HTTP: the transport, and beside it its session, reply, stream
//!   (resumption), listener (stateful 2025-x) and mirror (2026-07-28 headers) pieces.
//! - [`legacy_sse`] — the 2024-11-05 HTTP+SSE transport.
//! - [`param_headers`] — `x-mcp-header` tool annotations (2026-07-28): validation and the
//!   `Mcp-Param-*` values of a call.
//! - [`stateless`] — the modern revisions (2026-07-28): `_meta` on every request, version
//!   negotiation, `resultType` and multi round-trip requests, over stdio or Streamable HTTP.
//! - [`subscriptions`] — 2026-07-28 `subscriptions/listen`: notifications correlated by
//!   subscription id, re-listening after a drop.
//! - [`oauth`] — the OAuth client of the HTTP transports: discovery, registration, PKCE,
//!   tokens, refresh and step-up (`docs/authorization.md`).
//! - [`client`] — the MCP handshake and answering server-to-client requests.
//! - [`manager`] — named connections that reconnect with backoff and retry safely (§7).
//!
//! Tests: unit tests of private pieces sit beside the code; `tests/transports/` is the one
//! integration test binary, which drives every transport through this public API against a
//! hand-written HTTP server, wiremock or a child process.
//!
//! This crate never depends on the mock servers, so a mock can never share a bug with the
//! client it tests.
//!
//! # Serde style
//!
//! Only the JSON-RPC shapes in [`message`] derive serde, and their member names are the
//! wire's (JSON-RPC 2.0 and the MCP schema fix them: no `rename_all`); [`RequestId`] is
//! `untagged` because an id is a bare number or string on the wire, and an absent optional
//! member is not written (`skip_serializing_if = "Option::is_none"`). Every other MCP shape
//! is built and read as `serde_json::Value`, since the schema's objects are open and the
//! transports pass them through.

pub mod client;
pub mod config;
pub mod error;
pub mod http;
mod http_common;
pub mod legacy_sse;
pub mod manager;
pub mod message;
pub mod oauth;
pub mod param_headers;
pub mod pending;
pub mod sse;
pub mod stateless;
pub mod stdio;
pub mod subscriptions;
pub mod transport;

pub use config::{TransportConfig, resolve_timeout};
pub use error::{Acceptance, ErrorKind, TransportError};
pub use message::{Inbound, RequestId, RpcError};
pub use transport::{Diagnostics, Handlers, Reply, RequestOptions, SentId, Transport};
