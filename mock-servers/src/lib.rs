//! Scriptable mock MCP servers that replay scenario files against a client and record
//! everything that crossed the wire. The servers are libraries: [`stdio::serve`] and
//! [`http::serve`] take a scenario, their I/O (pipes, a bound listener) and a
//! [`shutdown::Shutdown`], and return a [`shutdown::ExitReason`]; only the binary edge
//! ([`cli::run`]) turns that into a signal or an exit code.
//!
//! # Layout
//!
//! - [`mod@load`] — the loader: `mcp-scenario`'s, plus each op's own rules.
//! - [`ops`] — one module per server op, each implementing the one [`ops::Op`] trait.
//! - [`stdio`] — the stdio mock server and its engine.
//! - [`http`] — the Streamable HTTP and legacy HTTP+SSE mock servers and their engine.
//! - [`placeholder`] — `{id}` and `{progressToken}` in raw payloads: the request being
//!   answered.
//! - [`stateless`] — the checks a 2026-07-28 server makes on every request.
//! - [`defaults`] — the default answers to unscripted requests a client may send at any
//!   time (`ping`, `tools/list`), shared by the engines.
//! - [`budget`] — how many client messages of each kind a script will still consume.
//! - [`inbox`] — what a script waits on: scripted messages, answers to its requests.
//! - [`record`] — writing the wire transcript, one JSON event per line; reading it back.
//! - [`transcript`] — the record as checks and snapshots read it, and its snapshot
//!   rendering: here, not in the harness, because `--record` renders it too.
//! - [`secrets`] — the one secret policy: what counts as a credential, for every output the
//!   project writes (the harness's too).
//! - [`oauth`] — the authorization server the `authorization_server` op serves beside the
//!   MCP endpoint, and the endpoint's OAuth challenges.
//! - [`live`] — a mock run by a person (a host's server command, `serve`): its record dir,
//!   the live `--record` rendering, the note when a script is over.
//! - [`shutdown`] — what stops a mock ([`shutdown::Shutdown`]) and how it ended
//!   ([`shutdown::ExitReason`]).
//! - [`parent`] — whether the stdio mock's parent (the client) lived when its stdin ended.
//! - [`sync`] — small synchronisation helpers.
//! - [`tally`] — how often a run's record was read and its transcript and redactor built
//!   (one each per run; a test holds the harness to it).
//! - [`cli`] — the `mcp-mock` command line, the only place an exit becomes the process's.
//! - [`error`] — [`MockError`], the crate's one error enum.
//!
//! Dependencies run one way: `cli` → `stdio`, `http` → `ops` → the engines' run contexts
//! (`stdio::run`, `http::run`) → state and data (`http::shared`, `http::conn`, `record`,
//! `shutdown`, `sync`). The scenario format, payload encoding and the recorded event types
//! live in `mcp-scenario`.
//!
//! This crate never depends on the bundled transports, so the mock cannot share a bug with
//! the client it tests.
//!
//! # Serde style
//!
//! The scenario format's types are `mcp-scenario`'s, with its rules. The mock's own
//! serialized type is the record dir's `recording.json` ([`live::About`]): plain field
//! names, no attributes (`mcp-harness check-record` reads it back). What the mock answers
//! on the wire is built as `serde_json::Value`, in the order the script wrote it
//! (`preserve_order`).

pub mod budget;
pub mod cli;
pub mod defaults;
pub mod error;
pub mod http;
pub mod inbox;
pub mod live;
pub mod load;
pub mod oauth;
pub mod ops;
pub mod parent;
pub mod placeholder;
pub mod record;
pub mod secrets;
pub mod shutdown;
pub mod stateless;
pub mod stdio;
pub mod sync;
pub mod tally;
pub mod transcript;

pub use error::MockError;
pub use load::load;
pub use mcp_scenario::Scenario;
pub use shutdown::{ExitReason, Shutdown};
