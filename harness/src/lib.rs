//! The MCP client-transport conformance harness: runs scenario files against a client,
//! records what crossed the wire, checks it and snapshots it.
//!
//! # Layout
//!
//! Each module imports only modules listed above it, so there are no import circles
//! (`tests/harness/layout.rs` checks both).
//!
//! - [`process_group`] — a child started as the leader of its own process group: who is
//!   still in the group, and killing it all (external clients, the HTTP mock).
//! - [`http_mock`] — the HTTP mock as a child process (start, `listening` line, stop).
//! - [`error`] — [`HarnessError`], the crate's one error enum (the CLI's messages).
//! - [`scope`] — what a run is judged as: target kind, transport, revision.
//! - [`outcome`] — the client side of a run: step descriptions, steps never run.
//! - [`transcript`] — the wire transcript: per-connection view ([`transcript::Transcript`]),
//!   the snapshot text ([`transcript::render`]), the one [`transcript::Redactor`], whose
//!   secrets are the one secret policy's ([`mcp_mock::secrets`], which `record`, the reports
//!   and the log lines use too).
//! - [`run_record`] — the record of one run, read once: followed while the client runs
//!   (`wait_sent`), then built into the run's one transcript and redactor
//!   ([`run_record::RunWire`]) that checks, rendering and reports share.
//! - [`checks`] — the scenario's checks, one module per kind behind
//!   [`checks::CheckKind`], and the always-on rules ([`checks::always`]).
//! - [`exercise`] — whether a run earned its verdict: where the scenario's fault is, whether
//!   the client met it, whether a third-party pass rests on evidence.
//! - [`load`](mod@load) — loading a scenario: the mock's loader plus the checks' validation.
//! - [`select`] — choosing scenarios (`--filter`, `--transport`, `--revision`, `--tag`),
//!   their derived tags and `list`'s one line each.
//! - [`partition`] — `run --partition k/n`: the shard a scenario belongs to, stable by its
//!   path inside the library.
//! - [`explain`](mod@explain) — a scenario in words (`mcp-harness explain`).
//! - [`discover`] — finding the scenario files under the paths given, loading them all.
//! - [`library`] — the scenario library embedded in the binary: written out for runs that
//!   give no path, and by `scenarios export`.
//! - [`targets`] — the client under test behind [`targets::Client`]: the bundled
//!   transports in-process ([`targets::bundled`]) or an external program
//!   ([`targets::cmd`], with process hygiene), one driver process per run or, with
//!   [`targets::persistent`], one serving many plans.
//! - [`record`] — `mcp-harness record`: a real session captured (stdio pass-through, HTTP
//!   reverse proxy), secrets redacted by the policy, written as a scenario that replays it.
//! - [`via`] — a run's proxies (`via:`): the fault proxy, nginx, nginx's second upstream.
//! - [`snapshot`] — comparing and updating insta-format `.snap` files.
//! - [`starvation`] — runs the machine starved: the scheduling lag measured during each, a
//!   scenario's timing margin, the re-runs and the `flaky_under_load` verdict.
//! - [`runner`] — one run per scenario × transport, under a deadline, in parallel.
//! - [`recording`] — judging a host's recording made by `mcp-mock … --record`
//!   (`check-record`).
//! - [`terminal`] — colour for diffs, the progress bar or plain progress lines.
//! - [`report`] — terminal summary, `results.json`, JUnit XML, the HTML report with its
//!   sequence diagrams ([`report::html`]) and `summary.md` for CI job summaries
//!   ([`report::markdown`]); a reports folder read back ([`report::read`]).
//! - [`merge`] — `mcp-harness merge`: the shards' reports folders joined into one run.
//! - [`baseline`] — expected-failures baselines, so CI fails only on change.
//! - [`findings`] — a ready-to-file report per third-party cell that breaks an MCP MUST.
//! - [`matrix`] — the third-party compatibility matrix (Markdown), from `results.json`.
//! - [`commands`] — what each subcommand does, from parsed arguments to exit code (the
//!   binary parses arguments and calls these).
//!
//! `report`, `baseline`, `findings` and `matrix` read run results as `mcp_results` only.
//!
//! # Serde style
//!
//! The scenario and results formats are `mcp-scenario`'s and `mcp-results`'s, with their
//! rules. The harness's own files: a baseline ([`baseline`]) is written by people, so it
//! denies unknown fields and every member may be left out (`#[serde(default)]` on the
//! struct); the run dir's `wire.json` and a recording's captures are written and read back
//! by the harness alone (plain field names, `snake_case` tags, absent options not written);
//! the HTML report's view types only serialize, into the page's embedded data.

pub mod baseline;
pub mod checks;
pub mod commands;
pub mod discover;
pub mod error;
pub mod exercise;
pub mod explain;
pub mod findings;
pub mod http_mock;
pub mod library;
pub mod load;
pub mod matrix;
pub mod merge;
pub mod outcome;
pub mod partition;
pub mod process_group;
pub mod record;
pub mod recording;
pub mod report;
pub mod run_record;
pub mod runner;
pub mod scope;
pub mod select;
pub mod snapshot;
pub mod starvation;
pub mod targets;
pub mod terminal;
pub mod transcript;
pub mod via;

pub use error::HarnessError;
pub use load::load;
pub use runner::RunConfig;
pub use targets::Target;
