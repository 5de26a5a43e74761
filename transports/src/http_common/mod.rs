//! The HTTP plumbing Streamable HTTP ([`crate::http`]) and legacy SSE
//! ([`crate::legacy_sse`]) share, written once so that both behave alike. Each transport
//! implements [`HttpKind`] (how a request is delivered, how a message is POSTed); the rest
//! is here:
//!
//! - `client` — URL checks, the reqwest client with its same-origin redirect policy, and
//!   mapping reqwest failures without their URL; `ConfigError`.
//! - `auth` — configured headers, the refresh hook, one re-send after a 401/403.
//! - `response` — status errors with auth hints, the content type, capped body reads and
//!   streamed chunks.
//! - `exchange` — the shared state ([`HttpCore`]) and the flows: a request under its one
//!   timeout budget, notifications, answers to server requests, cancellation.
//! - `front` — the one [`Transport`](crate::Transport) impl of both public types
//!   ([`HttpFront`]).

mod auth;
mod client;
mod exchange;
mod front;
mod response;

pub use auth::AuthRefresh;
pub(crate) use auth::send_with_auth;
pub(crate) use client::parse_url;
pub(crate) use exchange::{HttpCore, HttpKind, event_message, route, with_timeout};
pub(crate) use front::HttpFront;
pub use response::ERROR_BODY_LIMIT;
pub(crate) use response::{BodyError, StreamStop, mime, next_chunk, read_capped, status_error};
