//! The MCP client-transport conformance harness: runs scenario files against a client,
//! records what crossed the wire, checks it and snapshots it.
//!
//! # Layout
//!
//! - [`target`] — which client runs: the bundled transports or an external command.
//! - [`discover`] — finding and loading scenario files.
//! - [`runner`] — one run per scenario × transport, under a deadline, in parallel.
//! - [`http_mock`] — the HTTP mock as a child process (start, `listening` line, stop).
//! - [`bundled`] — driving the bundled transports through a client plan, in-process.
//! - [`external`] — the `cmd:` target: an external client program under the contract in
//!   `clients/README.md`, with process hygiene (deadline, process group, capped pipes).
//! - [`outcome`] — shared state of the client side of a run.
//! - [`checks`] — the scenario's checks and the always-on rules.
//! - [`render`] — the normalised, redacted transcript that snapshots hold.
//! - [`snapshot`] — comparing and updating insta-format `.snap` files.
//! - [`baseline`] — expected-failures baselines, so CI fails only on change.
//! - [`matrix`] — the third-party compatibility matrix (Markdown).
//! - [`report`] — terminal summary, `results.json`, JUnit XML.
//! - [`error`] — [`HarnessError`], the crate's one error enum.

pub mod baseline;
pub mod checks;
pub mod discover;
pub mod error;
pub mod http_mock;
pub mod matrix;
pub mod outcome;
pub mod report;
pub mod runner;
pub mod scope;
pub mod snapshot;
pub mod targets;
pub mod transcript;

pub use error::HarnessError;
pub use runner::RunConfig;
pub use targets::Target;
